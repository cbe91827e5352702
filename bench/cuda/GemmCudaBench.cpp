//===- GemmCudaBench.cpp - the CUDA backend's Matmul against cuBLAS -------===//
//
// Achieved TFLOP/s of Kernels::run(Matmul) on the CUDA backend, and of the
// same row-major product called directly through cuBLASLt (heuristic's first
// algorithm, 32 MiB workspace) and cublasGemmEx, on the same buffers, in the
// same process. The ratio backend / best direct call is what to watch: the
// backend adds only host work (shape checks, a cached plan lookup) to the
// library call, so it should stay near 1.
//
//   GemmCudaBench [--iters N] [--warmup N] [MxNxK:dtype ...]
//
// Default shapes: 4096x4096x4096 and 8192x8192x1024 in bf16 and f32 (f32 with
// f32 accumulation and no TF32, as the backend computes it). Prints one
// "gemm-bench:" line per case and exits non-zero when a case fails or the
// backend's result differs from cuBLASLt's.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/DType.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/cuda/CudaDevice.h"
#include "partition/runtime/cuda/CudaStatus.h"

#include "CudaTiming.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace partition::runtime;
using partition::bench::timeLaunches;

namespace {

struct Case {
  int64_t m, n, k;
  DType dtype;
};

struct Result {
  double backend = 0, lt = 0, gemmEx = 0; // TFLOP/s
  double maxDifference = 0;               // backend vs cuBLASLt, relative
};

/// Prints `status` and returns true when it is an error.
bool failed(const Status &status, const char *what) {
  if (status.isOk())
    return false;
  std::fprintf(stderr, "gemm-bench: %s: %s\n", what, status.toString().c_str());
  return true;
}

cudaDataType_t cudaType(DType dtype) {
  return dtype == DType::BF16  ? CUDA_R_16BF
         : dtype == DType::F16 ? CUDA_R_16F
                               : CUDA_R_32F;
}

/// Row-major C[m, n] = A[m, k] B[k, n] through cuBLASLt directly: the
/// column-major C^T = B^T A^T, the heuristic's first algorithm.
class LtGemm {
public:
  ~LtGemm() {
    if (pref_)
      cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_, b_, c_})
      if (l)
        cublasLtMatrixLayoutDestroy(l);
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
    if (handle_)
      cublasLtDestroy(handle_);
  }

  Status init(const Case &c, size_t workspaceBytes) {
    cudaDataType_t t = cudaType(c.dtype);
    PARTITION_CUBLAS_CHECK(cublasLtCreate(&handle_));
    PARTITION_CUBLAS_CHECK(
        cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // cuBLAS's A is our B ([k, n] row-major = [n, k] column-major, ld n).
    PARTITION_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, t, c.n, c.k, c.n));
    PARTITION_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, t, c.k, c.m, c.k));
    PARTITION_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, t, c.n, c.m, c.n));
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    uint64_t ws = workspaceBytes;
    PARTITION_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    cublasLtMatmulHeuristicResult_t result;
    int count = 0;
    PARTITION_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(
        handle_, desc_, a_, b_, c_, c_, pref_, 1, &result, &count));
    if (count == 0)
      return PARTITION_ERROR(Unimplemented, "cuBLASLt has no algorithm");
    algo_ = result.algo;
    return Status::ok();
  }

  Status run(const void *a, const void *b, void *c, void *workspace,
             size_t workspaceBytes, cudaStream_t stream) {
    float alpha = 1, beta = 0;
    PARTITION_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha, b, a_, a, b_,
                                          &beta, c, c_, c, c_, &algo_,
                                          workspace, workspaceBytes, stream));
    return Status::ok();
  }

private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_;
};

std::vector<char> randomBytes(DType dtype, int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<char> bytes(count * dtypeSize(dtype));
  for (int64_t i = 0; i < count; ++i) {
    float v = dist(gen);
    if (dtype == DType::F32) {
      std::memcpy(bytes.data() + i * 4, &v, 4);
    } else {
      uint16_t h = dtype == DType::BF16 ? floatToBf16(v) : floatToHalf(v);
      std::memcpy(bytes.data() + i * 2, &h, 2);
    }
  }
  return bytes;
}

double toDouble(DType dtype, const char *p) {
  if (dtype == DType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
}

StatusOr<Result> runCase(Device &device, Stream &stream, const Case &c,
                         int warmup, int iters) {
  int64_t elt = dtypeSize(c.dtype);
  PARTITION_ASSIGN_OR_RETURN(auto a, device.allocate(c.m * c.k * elt));
  PARTITION_ASSIGN_OR_RETURN(auto b, device.allocate(c.k * c.n * elt));
  PARTITION_ASSIGN_OR_RETURN(auto out, device.allocate(c.m * c.n * elt));
  PARTITION_ASSIGN_OR_RETURN(auto ref, device.allocate(c.m * c.n * elt));
  const size_t kWorkspace = 32u << 20;
  PARTITION_ASSIGN_OR_RETURN(auto workspace, device.allocate(kWorkspace));
  std::vector<char> ha = randomBytes(c.dtype, c.m * c.k, 1);
  std::vector<char> hb = randomBytes(c.dtype, c.k * c.n, 2);
  PARTITION_RETURN_IF_ERROR(
      device.copyToDevice(a->data(), ha.data(), ha.size(), stream));
  PARTITION_RETURN_IF_ERROR(
      device.copyToDevice(b->data(), hb.data(), hb.size(), stream));
  PARTITION_RETURN_IF_ERROR(stream.synchronize());
  auto cudaStream = static_cast<cudaStream_t>(stream.native());
  double flops = 2.0 * c.m * c.n * c.k;
  Result result;

  // The backend, as the executor calls it.
  TensorRef ta{a->data(), c.dtype, {c.m, c.k}};
  TensorRef tb{b->data(), c.dtype, {c.k, c.n}};
  TensorRef tc{out->data(), c.dtype, {c.m, c.n}};
  KernelAttrs attrs = matmulAttrs(false, false);
  PARTITION_ASSIGN_OR_RETURN(
      double backend, timeLaunches(cudaStream, warmup, iters, [&] {
        return device.kernels().run(OpKind::Matmul, attrs, {ta, tb}, {tc},
                                    stream);
      }));
  result.backend = flops / backend / 1e12;

  // cuBLASLt directly.
  LtGemm lt;
  PARTITION_RETURN_IF_ERROR(lt.init(c, kWorkspace));
  PARTITION_ASSIGN_OR_RETURN(
      double direct, timeLaunches(cudaStream, warmup, iters, [&] {
        return lt.run(a->data(), b->data(), ref->data(), workspace->data(),
                      kWorkspace, cudaStream);
      }));
  result.lt = flops / direct / 1e12;

  // cublasGemmEx directly (default math: no TF32 for f32).
  cublasHandle_t handle = nullptr;
  PARTITION_CUBLAS_CHECK(cublasCreate(&handle));
  Status status = [&]() -> Status {
    PARTITION_CUBLAS_CHECK(cublasSetStream(handle, cudaStream));
    PARTITION_CUBLAS_CHECK(
        cublasSetWorkspace(handle, workspace->data(), kWorkspace));
    float alpha = 1, beta = 0;
    cudaDataType_t t = cudaType(c.dtype);
    PARTITION_ASSIGN_OR_RETURN(
        double ex, timeLaunches(cudaStream, warmup, iters, [&]() -> Status {
          PARTITION_CUBLAS_CHECK(cublasGemmEx(
              handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(c.n),
              static_cast<int>(c.m), static_cast<int>(c.k), &alpha, b->data(),
              t, static_cast<int>(c.n), a->data(), t, static_cast<int>(c.k),
              &beta, out->data(), t, static_cast<int>(c.n), CUBLAS_COMPUTE_32F,
              CUBLAS_GEMM_DEFAULT));
          return Status::ok();
        }));
    result.gemmEx = flops / ex / 1e12;
    return Status::ok();
  }();
  cublasDestroy(handle);
  PARTITION_RETURN_IF_ERROR(status);

  // The backend's result against cuBLASLt's, on a sample of elements (both
  // accumulate in f32; they may differ by summation order only).
  PARTITION_RETURN_IF_ERROR(
      device.kernels().run(OpKind::Matmul, attrs, {ta, tb}, {tc}, stream));
  std::vector<char> hc(c.m * c.n * elt), hr(c.m * c.n * elt);
  PARTITION_RETURN_IF_ERROR(
      device.copyToHost(hc.data(), out->data(), hc.size(), stream));
  PARTITION_RETURN_IF_ERROR(
      device.copyToHost(hr.data(), ref->data(), hr.size(), stream));
  PARTITION_RETURN_IF_ERROR(stream.synchronize());
  double scale = std::sqrt(static_cast<double>(c.k)) / 3; // typical |C|
  for (int64_t i = 0; i < c.m * c.n; i += 997) {
    double x = toDouble(c.dtype, hc.data() + i * elt);
    double y = toDouble(c.dtype, hr.data() + i * elt);
    result.maxDifference =
        std::max(result.maxDifference, std::fabs(x - y) / scale);
  }
  return result;
}

bool parseCase(const std::string &text, Case &c) {
  long long m, n, k;
  char type[16] = {};
  if (std::sscanf(text.c_str(), "%lldx%lldx%lld:%15s", &m, &n, &k, type) != 4)
    return false;
  c = {m, n, k, DType::F32};
  std::string t = type;
  if (t == "bf16")
    c.dtype = DType::BF16;
  else if (t == "f16")
    c.dtype = DType::F16;
  else if (t != "f32")
    return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int warmup = 10, iters = 50;
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--iters" && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--warmup" && i + 1 < argc) {
      warmup = std::max(0, std::atoi(argv[++i]));
    } else {
      Case c;
      if (!parseCase(arg, c)) {
        std::fprintf(stderr,
                     "usage: %s [--iters N] [--warmup N] [MxNxK:bf16|f16|f32 "
                     "...]\n",
                     argv[0]);
        return 2;
      }
      cases.push_back(c);
    }
  }
  if (cases.empty())
    cases = {{4096, 4096, 4096, DType::BF16},
             {8192, 8192, 1024, DType::BF16},
             {4096, 4096, 4096, DType::F32},
             {8192, 8192, 1024, DType::F32}};

  if (cuda::cudaDeviceCount() == 0) {
    std::fprintf(stderr, "gemm-bench: no CUDA device\n");
    return 1;
  }
  auto device = cuda::createCudaDevice(0);
  if (failed(device.status(), "device"))
    return 1;
  auto stream = device.value()->createStream();
  if (failed(stream.status(), "stream"))
    return 1;
  std::printf("gemm-bench: %s, %d warm-up and %d timed launches per call\n",
              device.value()->name().c_str(), warmup, iters);
  int bad = 0;
  for (const Case &c : cases) {
    char name[64];
    std::snprintf(name, sizeof(name), "%lldx%lldx%lld %s",
                  static_cast<long long>(c.m), static_cast<long long>(c.n),
                  static_cast<long long>(c.k), dtypeName(c.dtype));
    auto result = runCase(*device.value(), *stream.value(), c, warmup, iters);
    if (failed(result.status(), name)) {
      ++bad;
      continue;
    }
    double best = std::max(result->lt, result->gemmEx);
    // bf16/f16 results are rounded to 8/11 bits; f32 ones differ only by
    // summation order.
    double limit = c.dtype == DType::F32 ? 1e-4 : 2e-2;
    bool agree = result->maxDifference <= limit;
    std::printf("gemm-bench: %-22s backend %7.1f TFLOP/s | cublasLt %7.1f | "
                "cublasGemmEx %7.1f | ratio %.3f | max diff %.1e%s\n",
                name, result->backend, result->lt, result->gemmEx,
                result->backend / best, result->maxDifference,
                agree ? "" : " (MISMATCH)");
    if (!agree)
      ++bad;
  }
  return bad == 0 ? 0 : 1;
}
