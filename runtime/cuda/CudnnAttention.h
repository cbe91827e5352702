//===- CudnnAttention.h - attention on cuDNN's fused kernels ---*- C++ -*-===//
//
// part.attention and part.attention_grad on cuDNN's fused scaled-dot-product
// attention: the kernels Megatron-Core runs through Transformer Engine and
// PyTorch's SDPA runs on Hopper, which keep a block of scores on chip where
// the plain decomposition (CudaKernels.cpp) moves every score through memory
// (12 bytes per score forward, 28 backward). Built where cuDNN 9 and the
// cudnn-frontend headers are found (PARTITION_HAVE_CUDNN, see
// runtime/cuda/CMakeLists.txt); libcudnn is loaded when first used.
//
// A call the fused kernels do not take -- f32 operands, head sizes that are
// not multiples of 8 or above 128, a mask cuDNN has no kernel for, no
// libcudnn at run time -- is declined (`taken` false) and the caller runs the
// decomposition; a declined shape is remembered. PARTITION_CUDNN_ATTENTION=0
// in the environment declines every call (to compare the two). Causal
// attention with positions operands (keys in any order) never comes here:
// the caller runs it as the decomposition.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_CUDNNATTENTION_H
#define PARTITION_RUNTIME_CUDA_CUDNNATTENTION_H

#include "partition/runtime/Status.h"
#include "partition/runtime/DType.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

namespace partition::runtime::cuda {

/// One attention call: query [B, H, Sq, D], key [B, Hkv, Sk, D], value
/// [B, Hkv, Sk, Dv], row-major; query head h reads key/value head
/// h / (H / Hkv). Causal keeps keys j <= i of query i (top-left), and a
/// window w of them those with j > i - w.
struct AttentionShape {
  int64_t batch = 0, heads = 0, kvHeads = 0, sq = 0, sk = 0, d = 0, dv = 0;
  bool causal = false;
  float scale = 1;
  int64_t window = 0;
  DType dtype = DType::F32;
};

class CudnnAttention {
public:
  /// `pool`: the device's scratch pool (workspace, the forward's output and
  /// statistics backward needs, the grouped-query heads' copies).
  explicit CudnnAttention(cudaMemPool_t pool);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention &) = delete;
  CudnnAttention &operator=(const CudnnAttention &) = delete;

  /// Whether this build has the fused kernels at all.
  static bool built();

  /// out = softmax(scale q k^T + mask) v, on `stream`.
  Status forward(const AttentionShape &s, const void *q, const void *k,
                 const void *v, void *out, cudaStream_t stream, bool *taken);

  /// The gradients of `forward` for the output's gradient `dout`: dq
  /// [B, H, Sq, D], and dk, dv per query head ([B, H, Sk, D] and
  /// [B, H, Sk, Dv]: part.attention_grad's results, which the caller sums
  /// over each group of H / Hkv heads). Recomputes the forward's output and
  /// row statistics first (part.attention_grad has no operand for them).
  Status backward(const AttentionShape &s, const void *q, const void *k,
                  const void *v, const void *dout, void *dq, void *dk,
                  void *dv, cudaStream_t stream, bool *taken);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDNNATTENTION_H
