//===- CudaGemm.h - row-major GEMMs through cuBLASLt ------------*- C++ -*-===//
//
// Every product of the backend (Matmul, BatchMatmul, the two products inside
// Attention) goes through one GemmRunner per device: cuBLASLt with
// CUBLAS_COMPUTE_32F (f32 accumulation, no TF32 for f32 inputs), a heuristic
// algorithm chosen once per shape, layout and alignment and then cached, and
// the legacy cuBLAS GEMM as the fallback for shapes the heuristic finds no
// algorithm for.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_CUDAGEMM_H
#define PARTITION_RUNTIME_CUDA_CUDAGEMM_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Status.h"

#include <cstdint>
#include <cuda_runtime_api.h>
#include <memory>

namespace partition::runtime::cuda {

/// A strided batch of row-major products C[b] = alpha * op(A[b]) * op(B[b]),
/// where op(A) is [m, k] and op(B) is [k, n]. A is stored [m, k] ([k, m]
/// with transposeA) and B [k, n] ([n, k] with transposeB), each row-major
/// and contiguous; C is [m, n] row-major.
struct RowMajorGemm {
  DType abType = DType::F32; ///< f32, f16 or bf16
  DType cType = DType::F32;  ///< abType, or f32 for a wider result
  bool transposeA = false;
  bool transposeB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  /// Elements between consecutive matrices of the batch.
  int64_t strideA = 0, strideB = 0, strideC = 0;
  float alpha = 1.0f;
};

/// Runs GEMMs on one device. Thread-safe.
class GemmRunner {
public:
  virtual ~GemmRunner() = default;
  /// Creates the library handles on the current device.
  static StatusOr<std::unique_ptr<GemmRunner>> create();
  /// Enqueues `gemm` on `stream` using `workspace` (`workspaceBytes` bytes,
  /// owned by that stream). Never waits for the device.
  virtual Status run(const RowMajorGemm &gemm, const void *a, const void *b,
                     void *c, cudaStream_t stream, void *workspace,
                     size_t workspaceBytes) = 0;
};

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDAGEMM_H
