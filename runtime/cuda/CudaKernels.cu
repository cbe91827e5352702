//===- CudaKernels.cu - the CUDA backend's device code --------------------===//
//
// Elementwise, normalisation, softmax, loss, reduction and data-movement
// kernels. Float tensors are loaded into f32, computed in f32 and rounded to
// nearest even when stored; integer tensors are computed in their own type.
// Elementwise kernels are grid-stride loops; row kernels (softmax, norms,
// losses, row reductions) give each row one block and reduce in a fixed order,
// so results are deterministic.
//
//===----------------------------------------------------------------------===//

#include "CudaKernelLaunch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>

#include <cstdint>
#include <limits>
#include <type_traits>

using namespace partition::runtime;
using namespace partition::runtime::cuda;

namespace {

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `count` items.
int gridFor(const LaunchConfig &config, int64_t count, int threads = kThreads) {
  int64_t blocks = (count + threads - 1) / threads;
  if (blocks > config.maxBlocks)
    blocks = config.maxBlocks;
  return blocks < 1 ? 1 : static_cast<int>(blocks);
}

/// Blocks for a kernel that gives each of `rows` rows one block.
int rowGrid(const LaunchConfig &config, int64_t rows) {
  int64_t limit = static_cast<int64_t>(config.maxBlocks) * 8;
  int64_t blocks = rows < limit ? rows : limit;
  return blocks < 1 ? 1 : static_cast<int>(blocks);
}

/// Threads per block for a row of `cols` elements: a power of two in
/// [32, 512], about four elements per thread.
int rowThreads(int64_t cols) {
  int threads = 32;
  while (threads < 512 && static_cast<int64_t>(threads) * 4 < cols)
    threads *= 2;
  return threads;
}

#define PARTITION_GRID_STRIDE_LOOP(i, n)                                       \
  for (int64_t i =                                                             \
           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Loads a stored element into its compute type and stores it back.
template <typename T>
struct Elem;
template <>
struct Elem<float> {
  using C = float;
  static __device__ __forceinline__ float up(float v) { return v; }
  static __device__ __forceinline__ float down(float v) { return v; }
};
template <>
struct Elem<__half> {
  using C = float;
  static __device__ __forceinline__ float up(__half v) {
    return __half2float(v);
  }
  static __device__ __forceinline__ __half down(float v) {
    return __float2half_rn(v);
  }
};
template <>
struct Elem<__nv_bfloat16> {
  using C = float;
  static __device__ __forceinline__ float up(__nv_bfloat16 v) {
    return __bfloat162float(v);
  }
  static __device__ __forceinline__ __nv_bfloat16 down(float v) {
    return __float2bfloat16_rn(v);
  }
};
template <>
struct Elem<int32_t> {
  using C = int32_t;
  static __device__ __forceinline__ int32_t up(int32_t v) { return v; }
  static __device__ __forceinline__ int32_t down(int32_t v) { return v; }
};
template <>
struct Elem<int64_t> {
  using C = int64_t;
  static __device__ __forceinline__ int64_t up(int64_t v) { return v; }
  static __device__ __forceinline__ int64_t down(int64_t v) { return v; }
};

/// Calls fn(static_cast<T *>(nullptr)) with T the storage type of a float
/// dtype.
template <typename Fn>
cudaError_t withFloatType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return fn(static_cast<float *>(nullptr));
  case DType::F16:
    return fn(static_cast<__half *>(nullptr));
  case DType::BF16:
    return fn(static_cast<__nv_bfloat16 *>(nullptr));
  default:
    return cudaErrorInvalidValue;
  }
}

/// Like withFloatType, over every dtype.
template <typename Fn>
cudaError_t withAnyType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::I32:
    return fn(static_cast<int32_t *>(nullptr));
  case DType::I64:
    return fn(static_cast<int64_t *>(nullptr));
  default:
    return withFloatType(dtype, fn);
  }
}

/// Like withFloatType, over the index dtypes.
template <typename Fn>
cudaError_t withIndexType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::I32:
    return fn(static_cast<int32_t *>(nullptr));
  case DType::I64:
    return fn(static_cast<int64_t *>(nullptr));
  default:
    return cudaErrorInvalidValue;
  }
}

/// Calls fn(static_cast<E *>(nullptr)) with E an unsigned type of
/// `elementBytes` bytes: data movement does not look at values.
template <typename Fn>
cudaError_t withElementBytes(int elementBytes, Fn &&fn) {
  switch (elementBytes) {
  case 1:
    return fn(static_cast<uint8_t *>(nullptr));
  case 2:
    return fn(static_cast<uint16_t *>(nullptr));
  case 4:
    return fn(static_cast<uint32_t *>(nullptr));
  case 8:
    return fn(static_cast<unsigned long long *>(nullptr));
  default:
    return cudaErrorInvalidValue;
  }
}

template <typename P>
using Pointee = std::remove_pointer_t<P>;

/// max that returns NaN when either operand is NaN (numpy's maximum).
__device__ __forceinline__ float maxNan(float a, float b) {
  return (a > b || a != a) ? a : b;
}
__device__ __forceinline__ float minNan(float a, float b) {
  return (a < b || a != a) ? a : b;
}

/// Records the first error found in the data; later ones only set the flag.
__device__ __noinline__ void reportError(ErrorSink sink, int kind,
                                         long long value, long long position,
                                         long long limit) {
  if (atomicCAS(&sink.record->claimed, 0u, 1u) == 0u) {
    sink.record->kind = kind;
    sink.record->value = value;
    sink.record->position = position;
    sink.record->limit = limit;
  }
  *sink.flag = 1;
}

//===----------------------------------------------------------------------===//
// Block reductions
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float warpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = maxNan(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum (or NaN-propagating max) over the block; every thread gets the result.
/// blockDim.x is a multiple of 32 and every thread of the block calls it.
/// `shared` holds 32 floats.
template <bool IsMax>
__device__ float blockReduce(float v, float *shared) {
  v = IsMax ? warpMax(v) : warpSum(v);
  int warps = blockDim.x >> 5;
  if (warps == 1)
    return v;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); // earlier readers of `shared` are done
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : (IsMax ? -CUDART_INF_F : 0.0f);
  return IsMax ? warpMax(v) : warpSum(v);
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

/// Offset of row-major element `linear` of `view` in its source. Dimensions
/// are visited through unrolled constant indices so the view stays in
/// parameter space.
template <typename I>
__device__ __forceinline__ I stridedOffset(const StridedView &view, I linear) {
  I offset = 0;
#pragma unroll
  for (int j = 0; j < kMaxRank; ++j) {
    int d = kMaxRank - 1 - j;
    if (d < view.rank) {
      I size = static_cast<I>(view.shape[d]);
      I coord = linear % size;
      linear /= size;
      offset += coord * static_cast<I>(view.strides[d]);
    }
  }
  return offset;
}

/// True when every offset of a walk over `count` elements of `view` fits in
/// 32 bits, so that the index arithmetic can use 32-bit division.
bool fitsIn32Bits(const StridedView &view, int64_t count) {
  constexpr int64_t limit = std::numeric_limits<int32_t>::max();
  if (count > limit)
    return false;
  int64_t last = 0;
  for (int d = 0; d < view.rank; ++d)
    last += (view.shape[d] - 1) * view.strides[d];
  return last <= limit;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The type integer arithmetic is done in so that overflow wraps.
template <typename C, bool = std::is_integral_v<C>>
struct WrapType {
  using type = C;
};
template <typename C>
struct WrapType<C, true> {
  using type = std::make_unsigned_t<C>;
};

/// Integer results wrap on overflow (computed on the unsigned type);
/// division truncates toward zero, MIN / -1 wraps, and division by zero
/// gives 0 (the caller reports it).
template <BinaryKind K, typename C>
__device__ __forceinline__ C applyBinary(C a, C b) {
  using U = typename WrapType<C>::type;
  if constexpr (K == BinaryKind::Add) {
    return C(U(a) + U(b));
  } else if constexpr (K == BinaryKind::Sub) {
    return C(U(a) - U(b));
  } else if constexpr (K == BinaryKind::Mul) {
    return C(U(a) * U(b));
  } else if constexpr (K == BinaryKind::Div) {
    if constexpr (std::is_integral_v<C>)
      return b == 0 ? C(0) : b == -1 ? C(U(0) - U(a)) : a / b;
    else
      return a / b;
  } else if constexpr (K == BinaryKind::Max) {
    if constexpr (std::is_integral_v<C>)
      return a > b ? a : b;
    else
      return maxNan(a, b);
  } else if constexpr (K == BinaryKind::Min) {
    if constexpr (std::is_integral_v<C>)
      return a < b ? a : b;
    else
      return minNan(a, b);
  } else {
    if constexpr (std::is_integral_v<C>)
      return C(0); // not reached: Pow takes float dtypes only
    else
      return powf(a, b);
  }
}

/// True when `b` is an integer divisor of zero, which Div reports.
template <BinaryKind K, typename T>
__device__ __forceinline__ bool isZeroDivisor(T b) {
  if constexpr (K == BinaryKind::Div && std::is_integral_v<T>)
    return b == 0;
  else
    return false;
}

template <BinaryKind K, typename T>
__global__ void binaryContiguousKernel(T *out, const T *lhs, const T *rhs,
                                       int64_t count, ErrorSink errors) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    if (isZeroDivisor<K>(rhs[i]))
      reportError(errors, kIntegerDivisionByZero, 0, i, 0);
    out[i] =
        Elem<T>::down(applyBinary<K>(Elem<T>::up(lhs[i]), Elem<T>::up(rhs[i])));
  }
}

template <BinaryKind K, typename T, typename I>
__global__ void binaryBroadcastKernel(T *out, const T *lhs, const T *rhs,
                                      BroadcastView view, int64_t count,
                                      ErrorSink errors) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    I linear = static_cast<I>(i), a = 0, b = 0;
#pragma unroll
    for (int j = 0; j < kMaxRank; ++j) {
      int d = kMaxRank - 1 - j;
      if (d < view.rank) {
        I size = static_cast<I>(view.shape[d]);
        I coord = linear % size;
        linear /= size;
        a += coord * static_cast<I>(view.lhsStrides[d]);
        b += coord * static_cast<I>(view.rhsStrides[d]);
      }
    }
    if (isZeroDivisor<K>(rhs[b]))
      reportError(errors, kIntegerDivisionByZero, 0, b, 0);
    out[i] =
        Elem<T>::down(applyBinary<K>(Elem<T>::up(lhs[a]), Elem<T>::up(rhs[b])));
  }
}

template <BinaryKind K, typename T>
cudaError_t launchBinaryTyped(const LaunchConfig &config, T *out, const T *lhs,
                              const T *rhs, const BroadcastView &view,
                              int64_t count) {
  int grid = gridFor(config, count);
  bool contiguous =
      view.rank == 1 && view.lhsStrides[0] == 1 && view.rhsStrides[0] == 1;
  if (contiguous) {
    binaryContiguousKernel<K, T><<<grid, kThreads, 0, config.stream>>>(
        out, lhs, rhs, count, config.errors);
    return cudaGetLastError();
  }
  StridedView a, b;
  a.rank = b.rank = view.rank;
  for (int d = 0; d < view.rank; ++d) {
    a.shape[d] = b.shape[d] = view.shape[d];
    a.strides[d] = view.lhsStrides[d];
    b.strides[d] = view.rhsStrides[d];
  }
  if (fitsIn32Bits(a, count) && fitsIn32Bits(b, count))
    binaryBroadcastKernel<K, T, uint32_t><<<grid, kThreads, 0, config.stream>>>(
        out, lhs, rhs, view, count, config.errors);
  else
    binaryBroadcastKernel<K, T, int64_t><<<grid, kThreads, 0, config.stream>>>(
        out, lhs, rhs, view, count, config.errors);
  return cudaGetLastError();
}

template <UnaryKind K>
__device__ __forceinline__ float applyUnary(float x) {
  if constexpr (K == UnaryKind::Neg) {
    return -x;
  } else if constexpr (K == UnaryKind::Exp) {
    return expf(x);
  } else if constexpr (K == UnaryKind::Log) {
    return logf(x);
  } else if constexpr (K == UnaryKind::Sqrt) {
    return sqrtf(x);
  } else if constexpr (K == UnaryKind::Rsqrt) {
    return 1.0f / sqrtf(x);
  } else if constexpr (K == UnaryKind::Tanh) {
    return tanhf(x);
  } else if constexpr (K == UnaryKind::Erf) {
    return erff(x);
  } else if constexpr (K == UnaryKind::Cos) {
    return cosf(x); // full-range reduction, not the __cosf intrinsic
  } else if constexpr (K == UnaryKind::Sin) {
    return sinf(x);
  } else if constexpr (K == UnaryKind::Sigmoid) {
    return 1.0f / (1.0f + expf(-x));
  } else if constexpr (K == UnaryKind::Relu) {
    return x < 0.0f ? 0.0f : x; // NaN stays NaN
  } else if constexpr (K == UnaryKind::Silu) {
    return x / (1.0f + expf(-x));
  } else if constexpr (K == UnaryKind::GeluErf) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
  } else {
    constexpr float kSqrt2OverPi = 0.79788456080286535588f;
    return 0.5f * x *
           (1.0f + tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
}

template <UnaryKind K, typename T>
__global__ void unaryKernel(T *out, const T *in, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    out[i] = Elem<T>::down(applyUnary<K>(Elem<T>::up(in[i])));
  }
}

template <UnaryKind K>
cudaError_t launchUnaryKind(const LaunchConfig &config, DType dtype, void *out,
                            const void *in, int64_t count) {
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    unaryKernel<K, T><<<gridFor(config, count), kThreads, 0, config.stream>>>(
        static_cast<T *>(out), static_cast<const T *>(in), count);
    return cudaGetLastError();
  });
}

//===----------------------------------------------------------------------===//
// Fused elementwise chains
//===----------------------------------------------------------------------===//

__device__ __forceinline__ float loadAs(const void *p, int type, int64_t i) {
  if (type == int(DType::F16))
    return __half2float(static_cast<const __half *>(p)[i]);
  if (type == int(DType::BF16))
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  return static_cast<const float *>(p)[i];
}

__device__ __forceinline__ void storeAs(void *p, int type, int64_t i,
                                        float v) {
  if (type == int(DType::F16))
    static_cast<__half *>(p)[i] = __float2half_rn(v);
  else if (type == int(DType::BF16))
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
  else
    static_cast<float *>(p)[i] = v;
}

__device__ __forceinline__ float roundAs(int type, float v) {
  if (type == int(DType::F16))
    return __half2float(__float2half_rn(v));
  if (type == int(DType::BF16))
    return __bfloat162float(__float2bfloat16_rn(v));
  return v;
}

__device__ float applyFused(int code, float x, float y) {
  switch (code) {
  case int(BinaryKind::Add):
    return applyBinary<BinaryKind::Add>(x, y);
  case int(BinaryKind::Sub):
    return applyBinary<BinaryKind::Sub>(x, y);
  case int(BinaryKind::Mul):
    return applyBinary<BinaryKind::Mul>(x, y);
  case int(BinaryKind::Div):
    return applyBinary<BinaryKind::Div>(x, y);
  case int(BinaryKind::Max):
    return applyBinary<BinaryKind::Max>(x, y);
  case int(BinaryKind::Min):
    return applyBinary<BinaryKind::Min>(x, y);
  case int(BinaryKind::Pow):
    return applyBinary<BinaryKind::Pow>(x, y);
  case kFusedUnary + int(UnaryKind::Neg):
    return applyUnary<UnaryKind::Neg>(x);
  case kFusedUnary + int(UnaryKind::Exp):
    return applyUnary<UnaryKind::Exp>(x);
  case kFusedUnary + int(UnaryKind::Log):
    return applyUnary<UnaryKind::Log>(x);
  case kFusedUnary + int(UnaryKind::Sqrt):
    return applyUnary<UnaryKind::Sqrt>(x);
  case kFusedUnary + int(UnaryKind::Rsqrt):
    return applyUnary<UnaryKind::Rsqrt>(x);
  case kFusedUnary + int(UnaryKind::Tanh):
    return applyUnary<UnaryKind::Tanh>(x);
  case kFusedUnary + int(UnaryKind::Erf):
    return applyUnary<UnaryKind::Erf>(x);
  case kFusedUnary + int(UnaryKind::Cos):
    return applyUnary<UnaryKind::Cos>(x);
  case kFusedUnary + int(UnaryKind::Sin):
    return applyUnary<UnaryKind::Sin>(x);
  case kFusedUnary + int(UnaryKind::Sigmoid):
    return applyUnary<UnaryKind::Sigmoid>(x);
  case kFusedUnary + int(UnaryKind::Relu):
    return applyUnary<UnaryKind::Relu>(x);
  case kFusedUnary + int(UnaryKind::Silu):
    return applyUnary<UnaryKind::Silu>(x);
  case kFusedUnary + int(UnaryKind::GeluErf):
    return applyUnary<UnaryKind::GeluErf>(x);
  case kFusedUnary + int(UnaryKind::GeluTanh):
    return applyUnary<UnaryKind::GeluTanh>(x);
  default: // kFusedCast: the rounding that follows
    return x;
  }
}

/// One thread per element; the slots in local memory (the steps are few
/// and the kernel is bound by its loads and stores).
__global__ void fusedKernel(FusedProgram p, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    float slot[kMaxFusedDeviceOperands + kMaxFusedDeviceSteps];
    for (int k = 0; k < p.operands; ++k)
      slot[k] = loadAs(p.in[k], p.inType[k],
                       p.inCount[k] == count ? i : i % p.inCount[k]);
    for (int k = 0; k < p.steps; ++k) {
      const FusedDeviceStep &s = p.step[k];
      slot[p.operands + k] =
          roundAs(s.round, applyFused(s.code, slot[s.a], slot[s.b]));
    }
    for (int k = 0; k < p.results; ++k)
      storeAs(p.out[k], p.outType[k], i, slot[p.outSlot[k]]);
  }
}

/// Select on element bits (E: an unsigned type of the element size).
template <typename C, typename E, typename I>
__global__ void selectKernel(E *out, const C *cond, const E *onTrue,
                             const E *onFalse, SelectView view, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    I linear = static_cast<I>(i), c = 0, t = 0, f = 0;
#pragma unroll
    for (int j = 0; j < kMaxRank; ++j) {
      int d = kMaxRank - 1 - j;
      if (d < view.rank) {
        I size = static_cast<I>(view.shape[d]);
        I coord = linear % size;
        linear /= size;
        c += coord * static_cast<I>(view.condStrides[d]);
        t += coord * static_cast<I>(view.trueStrides[d]);
        f += coord * static_cast<I>(view.falseStrides[d]);
      }
    }
    out[i] = cond[c] != 0 ? onTrue[t] : onFalse[f];
  }
}

/// lhs <direction> rhs on computed values (f32 for float dtypes).
template <int Direction, typename C>
__device__ __forceinline__ bool applyCompare(C a, C b) {
  if constexpr (Direction == 0)
    return a == b;
  else if constexpr (Direction == 1)
    return a != b;
  else if constexpr (Direction == 2)
    return a < b;
  else if constexpr (Direction == 3)
    return a <= b;
  else if constexpr (Direction == 4)
    return a > b;
  else
    return a >= b;
}

template <int Direction, typename T, typename I>
__global__ void compareKernel(int32_t *out, const T *lhs, const T *rhs,
                              BroadcastView view, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    I linear = static_cast<I>(i), a = 0, b = 0;
#pragma unroll
    for (int j = 0; j < kMaxRank; ++j) {
      int d = kMaxRank - 1 - j;
      if (d < view.rank) {
        I size = static_cast<I>(view.shape[d]);
        I coord = linear % size;
        linear /= size;
        a += coord * static_cast<I>(view.lhsStrides[d]);
        b += coord * static_cast<I>(view.rhsStrides[d]);
      }
    }
    out[i] = applyCompare<Direction>(Elem<T>::up(lhs[a]), Elem<T>::up(rhs[b]))
                 ? 1
                 : 0;
  }
}

template <int Direction, typename T>
cudaError_t launchCompareTyped(const LaunchConfig &config, int32_t *out,
                               const T *lhs, const T *rhs,
                               const BroadcastView &view, int64_t count) {
  StridedView a, b;
  a.rank = b.rank = view.rank;
  for (int d = 0; d < view.rank; ++d) {
    a.shape[d] = b.shape[d] = view.shape[d];
    a.strides[d] = view.lhsStrides[d];
    b.strides[d] = view.rhsStrides[d];
  }
  int grid = gridFor(config, count);
  if (fitsIn32Bits(a, count) && fitsIn32Bits(b, count))
    compareKernel<Direction, T, uint32_t>
        <<<grid, kThreads, 0, config.stream>>>(out, lhs, rhs, view, count);
  else
    compareKernel<Direction, T, int64_t>
        <<<grid, kThreads, 0, config.stream>>>(out, lhs, rhs, view, count);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Cast and fill
//===----------------------------------------------------------------------===//

template <typename From, typename To>
__device__ __forceinline__ To convert(From v) {
  constexpr bool fromInt = std::is_integral_v<From>;
  constexpr bool toInt = std::is_integral_v<To>;
  if constexpr (fromInt && toInt) {
    return static_cast<To>(v); // wraps (two's complement)
  } else if constexpr (fromInt) {
    float f;
    if constexpr (sizeof(From) == 8)
      f = __ll2float_rn(static_cast<long long>(v));
    else
      f = __int2float_rn(static_cast<int>(v));
    return Elem<To>::down(f);
  } else if constexpr (toInt) {
    // Toward zero, saturating at the type's range; NaN gives 0.
    float f = Elem<From>::up(v);
    if constexpr (sizeof(To) == 8)
      return static_cast<To>(__float2ll_rz(f));
    else
      return static_cast<To>(__float2int_rz(f));
  } else {
    return Elem<To>::down(Elem<From>::up(v));
  }
}

template <typename From, typename To>
__global__ void castKernel(To *out, const From *in, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) { out[i] = convert<From, To>(in[i]); }
}

template <typename E>
__global__ void fillKernel(E *out, E value, int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) { out[i] = value; }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Element i of the dense side moves to or from the strided view's element
/// i: a gather (`Scatter` false: out[i] = in[view(i)]) or its transpose
/// (`Scatter` true: out[view(i)] = in[i]).
template <bool Scatter, typename E, typename I>
__global__ void stridedMoveKernel(E *out, const E *in, StridedView view,
                                  int64_t count) {
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    I at = stridedOffset<I>(view, static_cast<I>(i));
    if constexpr (Scatter)
      out[at] = in[i];
    else
      out[i] = in[at];
  }
}

/// One thread per (p, q) column of the updates, adding them in index order.
template <typename T, typename Index>
__global__ void scatterAddKernel(float *acc, const T *updates,
                                 const Index *indices, int64_t axisSize,
                                 int64_t numIndices, int64_t inner,
                                 int64_t columns, ErrorSink errors) {
  PARTITION_GRID_STRIDE_LOOP(c, columns) {
    int64_t q = c % inner;
    int64_t p = c / inner;
    const T *u = updates + p * numIndices * inner + q;
    float *a = acc + p * axisSize * inner + q;
    for (int64_t i = 0; i < numIndices; ++i) {
      int64_t index = static_cast<int64_t>(indices[i]);
      if (index < 0 || index >= axisSize) {
        reportError(errors, kScatterIndexOutOfRange, index, i, axisSize);
        continue;
      }
      a[index * inner] += Elem<T>::up(u[i * inner]);
    }
  }
}

template <typename E, typename Index>
__global__ void gatherKernel(E *out, const E *data, const Index *indices,
                             int64_t axisSize, int64_t numIndices,
                             int64_t inner, int64_t count, ErrorSink errors) {
  PARTITION_GRID_STRIDE_LOOP(o, count) {
    int64_t q = o % inner;
    int64_t t = o / inner;
    int64_t i = t % numIndices;
    int64_t p = t / numIndices;
    int64_t index = static_cast<int64_t>(indices[i]);
    if (index < 0 || index >= axisSize) {
      reportError(errors, kGatherIndexOutOfRange, index, i, axisSize);
      index = index < 0 ? 0 : axisSize - 1;
    }
    out[o] = data[(p * axisSize + index) * inner + q];
  }
}

//===----------------------------------------------------------------------===//
// Mixture-of-experts routing (docs/design/2026-12-07-experts.md)
//===----------------------------------------------------------------------===//

/// a before b in top-k order: NaN first, then larger, equal in index order.
__device__ __forceinline__ bool rankedBefore(float va, int64_t a, float vb,
                                             int64_t b) {
  bool nanA = va != va, nanB = vb != vb;
  if (nanA != nanB)
    return nanA;
  if (!nanA && va != vb)
    return va > vb;
  return a < b;
}

/// One thread per row: the j-th pick is the first element in top-k order
/// after the (j-1)-th, so no row state is kept (K passes over N; routing
/// rows are a few dozen experts wide).
template <typename T>
__global__ void topKKernel(T *values, int64_t *indices, const T *in,
                           int64_t rows, int64_t n, int64_t k) {
  PARTITION_GRID_STRIDE_LOOP(row, rows) {
    const T *x = in + row * n;
    int64_t prev = -1;
    float prevValue = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t best = -1;
      float bestValue = 0;
      for (int64_t i = 0; i < n; ++i) {
        float v = Elem<T>::up(x[i]);
        if (prev >= 0 && !rankedBefore(prevValue, prev, v, i))
          continue;
        if (best < 0 || rankedBefore(v, i, bestValue, best)) {
          best = i;
          bestValue = v;
        }
      }
      values[row * k + j] = x[best];
      indices[row * k + j] = best;
      prev = best;
      prevValue = bestValue;
    }
  }
}

/// One block per (expert e, group g): the block walks the group's slots in
/// dispatch order (k-major), counting those routed to e, and its threads
/// move each kept slot's row of H elements. The output was zeroed first.
/// Block (0, g) walks every slot of the group (the others stop once their
/// expert is full) and reports indices outside [0, E).
template <bool Dispatch, typename E, typename Index>
__global__ void routeKernel(E *buffer, E *slots, const Index *indices,
                            int64_t experts, int64_t groups, int64_t capacity,
                            int64_t s, int64_t k, int64_t h, bool perToken,
                            ErrorSink errors) {
  int64_t e = blockIdx.x % experts, g = blockIdx.x / experts;
  int64_t filled = 0;
  auto more = [&] { return e == 0 || filled < capacity; };
  for (int64_t j = 0; j < k && more(); ++j)
    for (int64_t t = 0; t < s && more(); ++t) {
      int64_t slot = (g * s + t) * k + j;
      int64_t index = static_cast<int64_t>(indices[slot]);
      if (index < 0 || index >= experts) {
        if (e == 0 && threadIdx.x == 0)
          reportError(errors, kExpertIndexOutOfRange, index, slot, experts);
        continue;
      }
      if (index != e || filled >= capacity)
        continue;
      E *bufferRow = buffer + ((e * groups + g) * capacity + filled++) * h;
      E *slotRow = slots + (perToken ? slot / k : slot) * h;
      for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
        if constexpr (Dispatch)
          bufferRow[i] = slotRow[i];
        else
          slotRow[i] = bufferRow[i];
      }
    }
}

//===----------------------------------------------------------------------===//
// Softmax, norms, rotary embedding, losses
//===----------------------------------------------------------------------===//

/// The log-sum-exp of a row whose kept columns have maximum `m` and sum
/// `s` of exp(x - m): -inf for a row that keeps none (m -inf, s 0).
__device__ __forceinline__ float rowLogSumExp(float m, float s) {
  return m == -CUDART_INF_F ? -CUDART_INF_F : m + logf(s);
}

/// Softmax along the last dimension: one block per row.
/// Rows are grouped as described at launchAttentionSoftmax; with
/// `causalPeriod` 0 every column is kept. `out` may be `in` when In == Out:
/// each thread reads and writes the same columns. With `lse`, lse[row] takes
/// the row's log-sum-exp over the columns it keeps.
template <typename In, typename Out>
__global__ void softmaxRowsKernel(Out *out, const In *in, int64_t rows,
                                  int64_t cols, int64_t rowsPerGroup,
                                  int64_t rowOffset, int64_t causalPeriod,
                                  int64_t window, float *lse) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const In *x = in + row * cols;
    Out *y = out + row * cols;
    int64_t first = 0, valid = cols;
    if (causalPeriod > 0) {
      int64_t position = (rowOffset + row % rowsPerGroup) % causalPeriod;
      valid = position + 1 < cols ? position + 1 : cols;
      if (window > 0 && valid > window)
        first = valid - window;
    }
    float m = -CUDART_INF_F;
    for (int64_t j = first + threadIdx.x; j < valid; j += blockDim.x)
      m = fmaxf(m, Elem<In>::up(x[j]));
    m = blockReduce<true>(m, shared);
    float s = 0.0f;
    for (int64_t j = first + threadIdx.x; j < valid; j += blockDim.x)
      s += expf(Elem<In>::up(x[j]) - m);
    s = blockReduce<false>(s, shared);
    if (lse && threadIdx.x == 0)
      lse[row] = rowLogSumExp(m, s);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y[j] = Elem<Out>::down(
          j >= first && j < valid ? expf(Elem<In>::up(x[j]) - m) / s : 0.0f);
  }
}

/// Whether a causal query at position `query` sees the key at position
/// `key`: not after it and, with a window, less than `window` positions
/// before it (the distance in unsigned arithmetic, exact for key <= query).
__device__ __forceinline__ bool seesKey(int64_t query, int64_t key,
                                        int64_t window) {
  return key <= query && (window <= 0 || static_cast<uint64_t>(query) -
                                                 static_cast<uint64_t>(key) <
                                             static_cast<uint64_t>(window));
}

/// softmaxRowsKernel's causal softmax by global positions (see
/// launchAttentionSoftmax): row r is query i = (rowOffset + r %
/// rowsPerGroup) % period at position queryPositions[i], column j the key
/// at keyPositions[j]. The columns a row keeps need not be one range, so
/// every pass tests each column; a row that keeps none gets zeros (its
/// maximum stays -inf and no column is kept). `out` may be `in` when Out is
/// float. With `lse`, lse[row] takes the row's log-sum-exp (-inf for a row
/// that keeps no column).
template <typename Out, typename Pos>
__global__ void positionsSoftmaxRowsKernel(
    Out *out, const float *in, int64_t rows, int64_t cols, int64_t rowsPerGroup,
    int64_t rowOffset, int64_t period, int64_t window,
    const Pos *queryPositions, const Pos *keyPositions, float *lse) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *x = in + row * cols;
    Out *y = out + row * cols;
    int64_t position = static_cast<int64_t>(
        queryPositions[(rowOffset + row % rowsPerGroup) % period]);
    auto sees = [&](int64_t j) {
      return seesKey(position, static_cast<int64_t>(keyPositions[j]), window);
    };
    float m = -CUDART_INF_F;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      if (sees(j))
        m = fmaxf(m, x[j]);
    m = blockReduce<true>(m, shared);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      if (sees(j))
        s += expf(x[j] - m);
    s = blockReduce<false>(s, shared);
    if (lse && threadIdx.x == 0)
      lse[row] = rowLogSumExp(m, s);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y[j] = Elem<Out>::down(sees(j) ? expf(x[j] - m) / s : 0.0f);
  }
}

/// AttentionGrad's block form (see launchAttentionBlockProbabilities), one
/// thread per score: p = exp(x - lse[row]) where the row keeps the column
/// (rows as in softmaxRowsKernel; by positions where `queryPositions` is
/// given), else 0, and 0 in a row whose lse is -inf. `out` may be `in` when
/// Out is float: each thread reads and writes one element.
template <typename Out, typename Pos>
__global__ void blockProbabilitiesKernel(
    Out *out, const float *in, int64_t rows, int64_t cols, int64_t rowsPerGroup,
    int64_t rowOffset, int64_t period, int64_t window,
    const Pos *queryPositions, const Pos *keyPositions, const float *lse) {
  PARTITION_GRID_STRIDE_LOOP(t, rows * cols) {
    int64_t row = t / cols, j = t % cols;
    float l = lse[row];
    bool keeps = l != -CUDART_INF_F;
    if (period > 0) {
      int64_t i = (rowOffset + row % rowsPerGroup) % period;
      keeps =
          keeps && (queryPositions
                        ? seesKey(static_cast<int64_t>(queryPositions[i]),
                                  static_cast<int64_t>(keyPositions[j]), window)
                        : seesKey(i, j, window));
    }
    out[t] = Elem<Out>::down(keeps ? expf(in[t] - l) : 0.0f);
  }
}

/// Attention's score gradients, one block per row: ds = scale * p * (dp -
/// delta), delta = sum_j dp_j p_j or, given `delta` (the block form),
/// delta[row], from `dp` (f32) and the probabilities `p`, written in Out
/// (`out` may be `dp` when Out is float: each thread reads and writes the
/// same columns, after the row's sum).
template <typename Out>
__global__ void
attentionGradScoresKernel(Out *out, const float *dp, const Out *p, int64_t rows,
                          int64_t cols, float scale, const float *delta) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *g = dp + row * cols;
    const Out *pr = p + row * cols;
    Out *y = out + row * cols;
    float dot = 0.0f;
    if (delta) { // the same for every thread of the block
      dot = delta[row];
    } else {
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        dot += g[j] * Elem<Out>::up(pr[j]);
      dot = blockReduce<false>(dot, shared);
    }
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      y[j] = Elem<Out>::down(scale * Elem<Out>::up(pr[j]) * (g[j] - dot));
  }
}

/// Softmax along a middle dimension of [outer, dim, inner]: one thread per
/// (outer, inner) column, coalesced along inner.
template <typename T>
__global__ void softmaxColumnsKernel(T *out, const T *in, int64_t outer,
                                     int64_t dim, int64_t inner) {
  PARTITION_GRID_STRIDE_LOOP(t, outer * inner) {
    int64_t o = t / inner, q = t % inner;
    const T *x = in + o * dim * inner + q;
    T *y = out + o * dim * inner + q;
    float m = -CUDART_INF_F;
    for (int64_t j = 0; j < dim; ++j)
      m = fmaxf(m, Elem<T>::up(x[j * inner]));
    float s = 0.0f;
    for (int64_t j = 0; j < dim; ++j)
      s += expf(Elem<T>::up(x[j * inner]) - m);
    for (int64_t j = 0; j < dim; ++j)
      y[j * inner] = Elem<T>::down(expf(Elem<T>::up(x[j * inner]) - m) / s);
  }
}

template <typename T, bool Rms>
__global__ void normRowsKernel(T *out, const T *in, const T *scale,
                               const T *bias, int64_t rows, int64_t cols,
                               float epsilon) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * cols;
    T *y = out + row * cols;
    if constexpr (Rms) {
      float ss = 0.0f;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = Elem<T>::up(x[j]);
        ss += v * v;
      }
      ss = blockReduce<false>(ss, shared);
      float inv = 1.0f / sqrtf(ss / static_cast<float>(cols) + epsilon);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        y[j] = Elem<T>::down(Elem<T>::up(x[j]) * inv * Elem<T>::up(scale[j]));
    } else {
      float sum = 0.0f;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        sum += Elem<T>::up(x[j]);
      float mean = blockReduce<false>(sum, shared) / static_cast<float>(cols);
      float sq = 0.0f;
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = Elem<T>::up(x[j]) - mean;
        sq += d * d;
      }
      float var = blockReduce<false>(sq, shared) / static_cast<float>(cols);
      float inv = 1.0f / sqrtf(var + epsilon);
      for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = (Elem<T>::up(x[j]) - mean) * inv * Elem<T>::up(scale[j]);
        if (bias)
          v += Elem<T>::up(bias[j]);
        y[j] = Elem<T>::down(v);
      }
    }
  }
}

template <typename T>
__global__ void rotaryKernel(T *out, const T *in, const T *cos, const T *sin,
                             int64_t count, int64_t seq, int64_t dim) {
  int64_t half = dim / 2;
  PARTITION_GRID_STRIDE_LOOP(i, count) {
    int64_t d = i % dim;
    int64_t s = (i / dim) % seq;
    float x = Elem<T>::up(in[i]);
    float rotated =
        d < half ? -Elem<T>::up(in[i + half]) : Elem<T>::up(in[i - half]);
    int64_t t = s * dim + d;
    out[i] =
        Elem<T>::down(x * Elem<T>::up(cos[t]) + rotated * Elem<T>::up(sin[t]));
  }
}

template <typename T, typename L, typename O>
__global__ void crossEntropyKernel(O *out, const T *logits, const L *labels,
                                   int64_t rows, int64_t classes,
                                   ErrorSink errors) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = logits + row * classes;
    float m = -CUDART_INF_F;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      m = fmaxf(m, Elem<T>::up(x[j]));
    m = blockReduce<true>(m, shared);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      s += expf(Elem<T>::up(x[j]) - m);
    s = blockReduce<false>(s, shared);
    if (threadIdx.x == 0) {
      int64_t label = static_cast<int64_t>(labels[row]);
      if (label < 0 || label >= classes) {
        reportError(errors, kLabelOutOfRange, label, row, classes);
        label = label < 0 ? 0 : classes - 1;
      }
      float loss = m + logf(s) - Elem<T>::up(x[label]);
      out[row] = Elem<O>::down(loss);
    }
  }
}

template <typename O>
__global__ void sumToScalarKernel(O *out, const float *in, int64_t count,
                                  float divisor) {
  __shared__ float shared[32];
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    s += in[i];
  s = blockReduce<false>(s, shared);
  if (threadIdx.x == 0)
    out[0] = Elem<O>::down(s / divisor);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <ReduceKind K>
struct Reducer {
  static __device__ __forceinline__ float init() {
    return K == ReduceKind::Max ? -CUDART_INF_F : 0.0f;
  }
  static __device__ __forceinline__ float combine(float a, float b) {
    return K == ReduceKind::Max ? maxNan(a, b) : a + b;
  }
  static __device__ __forceinline__ float finish(float v, int64_t count) {
    return K == ReduceKind::Mean ? v / static_cast<float>(count) : v;
  }
};

/// [rows, cols] -> [rows]: one block per row.
template <ReduceKind K, typename T>
__global__ void reduceRowsKernel(T *out, const T *in, int64_t rows,
                                 int64_t cols) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *x = in + row * cols;
    float v = Reducer<K>::init();
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      v = Reducer<K>::combine(v, Elem<T>::up(x[j]));
    v = blockReduce<K == ReduceKind::Max>(v, shared);
    if (threadIdx.x == 0)
      out[row] = Elem<T>::down(Reducer<K>::finish(v, cols));
  }
}

/// [outer, reduced, inner] -> [outer, inner]: one thread per result.
template <ReduceKind K, typename T>
__global__ void reduceColumnsKernel(T *out, const T *in, int64_t outer,
                                    int64_t reduced, int64_t inner) {
  PARTITION_GRID_STRIDE_LOOP(t, outer * inner) {
    int64_t o = t / inner, q = t % inner;
    const T *x = in + o * reduced * inner + q;
    float v = Reducer<K>::init();
    for (int64_t j = 0; j < reduced; ++j)
      v = Reducer<K>::combine(v, Elem<T>::up(x[j * inner]));
    out[t] = Elem<T>::down(Reducer<K>::finish(v, reduced));
  }
}

template <ReduceKind K, typename T>
__global__ void reduceStridedKernel(T *out, const T *in, StridedView kept,
                                    StridedView reduced, int64_t outCount,
                                    int64_t reducedCount) {
  PARTITION_GRID_STRIDE_LOOP(t, outCount) {
    const T *x = in + stridedOffset<int64_t>(kept, t);
    float v = Reducer<K>::init();
    for (int64_t j = 0; j < reducedCount; ++j)
      v = Reducer<K>::combine(
          v, Elem<T>::up(x[stridedOffset<int64_t>(reduced, j)]));
    out[t] = Elem<T>::down(Reducer<K>::finish(v, reducedCount));
  }
}

template <ReduceKind K>
cudaError_t launchReduceKind(const LaunchConfig &config, DType dtype, void *out,
                             const void *in, int64_t outer, int64_t reduced,
                             int64_t inner) {
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    T *y = static_cast<T *>(out);
    const T *x = static_cast<const T *>(in);
    if (inner == 1)
      reduceRowsKernel<K, T>
          <<<rowGrid(config, outer), rowThreads(reduced), 0, config.stream>>>(
              y, x, outer, reduced);
    else
      reduceColumnsKernel<K, T>
          <<<gridFor(config, outer * inner), kThreads, 0, config.stream>>>(
              y, x, outer, reduced, inner);
    return cudaGetLastError();
  });
}

template <ReduceKind K>
cudaError_t launchReduceStridedKind(const LaunchConfig &config, DType dtype,
                                    void *out, const void *in,
                                    const StridedView &kept,
                                    const StridedView &reduced,
                                    int64_t outCount, int64_t reducedCount) {
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    reduceStridedKernel<K, T>
        <<<gridFor(config, outCount), kThreads, 0, config.stream>>>(
            static_cast<T *>(out), static_cast<const T *>(in), kept, reduced,
            outCount, reducedCount);
    return cudaGetLastError();
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

cudaError_t cuda::launchBinary(const LaunchConfig &config, BinaryKind kind,
                               DType dtype, void *out, const void *lhs,
                               const void *rhs, const BroadcastView &view,
                               int64_t count) {
  if (count == 0)
    return cudaSuccess;
  return withAnyType(dtype, [&](auto tag) -> cudaError_t {
    using T = Pointee<decltype(tag)>;
    T *y = static_cast<T *>(out);
    const T *a = static_cast<const T *>(lhs);
    const T *b = static_cast<const T *>(rhs);
    switch (kind) {
    case BinaryKind::Add:
      return launchBinaryTyped<BinaryKind::Add>(config, y, a, b, view, count);
    case BinaryKind::Sub:
      return launchBinaryTyped<BinaryKind::Sub>(config, y, a, b, view, count);
    case BinaryKind::Mul:
      return launchBinaryTyped<BinaryKind::Mul>(config, y, a, b, view, count);
    case BinaryKind::Div:
      return launchBinaryTyped<BinaryKind::Div>(config, y, a, b, view, count);
    case BinaryKind::Max:
      return launchBinaryTyped<BinaryKind::Max>(config, y, a, b, view, count);
    case BinaryKind::Min:
      return launchBinaryTyped<BinaryKind::Min>(config, y, a, b, view, count);
    case BinaryKind::Pow:
      if constexpr (std::is_integral_v<T>)
        return cudaErrorInvalidValue;
      else
        return launchBinaryTyped<BinaryKind::Pow>(config, y, a, b, view, count);
    }
    return cudaErrorInvalidValue;
  });
}

cudaError_t cuda::launchUnary(const LaunchConfig &config, UnaryKind kind,
                              DType dtype, void *out, const void *in,
                              int64_t count) {
  if (count == 0)
    return cudaSuccess;
  switch (kind) {
  case UnaryKind::Neg:
    return launchUnaryKind<UnaryKind::Neg>(config, dtype, out, in, count);
  case UnaryKind::Exp:
    return launchUnaryKind<UnaryKind::Exp>(config, dtype, out, in, count);
  case UnaryKind::Log:
    return launchUnaryKind<UnaryKind::Log>(config, dtype, out, in, count);
  case UnaryKind::Sqrt:
    return launchUnaryKind<UnaryKind::Sqrt>(config, dtype, out, in, count);
  case UnaryKind::Rsqrt:
    return launchUnaryKind<UnaryKind::Rsqrt>(config, dtype, out, in, count);
  case UnaryKind::Tanh:
    return launchUnaryKind<UnaryKind::Tanh>(config, dtype, out, in, count);
  case UnaryKind::Erf:
    return launchUnaryKind<UnaryKind::Erf>(config, dtype, out, in, count);
  case UnaryKind::Cos:
    return launchUnaryKind<UnaryKind::Cos>(config, dtype, out, in, count);
  case UnaryKind::Sin:
    return launchUnaryKind<UnaryKind::Sin>(config, dtype, out, in, count);
  case UnaryKind::Sigmoid:
    return launchUnaryKind<UnaryKind::Sigmoid>(config, dtype, out, in, count);
  case UnaryKind::Relu:
    return launchUnaryKind<UnaryKind::Relu>(config, dtype, out, in, count);
  case UnaryKind::Silu:
    return launchUnaryKind<UnaryKind::Silu>(config, dtype, out, in, count);
  case UnaryKind::GeluErf:
    return launchUnaryKind<UnaryKind::GeluErf>(config, dtype, out, in, count);
  case UnaryKind::GeluTanh:
    return launchUnaryKind<UnaryKind::GeluTanh>(config, dtype, out, in, count);
  }
  return cudaErrorInvalidValue;
}

cudaError_t cuda::launchSelect(const LaunchConfig &config, DType condType,
                               int elementBytes, void *out, const void *cond,
                               const void *onTrue, const void *onFalse,
                               const SelectView &view, int64_t count) {
  if (count == 0)
    return cudaSuccess;
  bool small = true;
  for (const int64_t *strides :
       {view.condStrides, view.trueStrides, view.falseStrides}) {
    StridedView walk;
    walk.rank = view.rank;
    for (int d = 0; d < view.rank; ++d) {
      walk.shape[d] = view.shape[d];
      walk.strides[d] = strides[d];
    }
    small &= fitsIn32Bits(walk, count);
  }
  return withIndexType(condType, [&](auto condTag) {
    using C = Pointee<decltype(condTag)>;
    return withElementBytes(elementBytes, [&](auto tag) {
      using E = Pointee<decltype(tag)>;
      int grid = gridFor(config, count);
      auto *y = static_cast<E *>(out);
      auto *c = static_cast<const C *>(cond);
      auto *a = static_cast<const E *>(onTrue);
      auto *b = static_cast<const E *>(onFalse);
      if (small)
        selectKernel<C, E, uint32_t>
            <<<grid, kThreads, 0, config.stream>>>(y, c, a, b, view, count);
      else
        selectKernel<C, E, int64_t>
            <<<grid, kThreads, 0, config.stream>>>(y, c, a, b, view, count);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchCast(const LaunchConfig &config, DType from, DType to,
                             void *out, const void *in, int64_t count) {
  if (count == 0)
    return cudaSuccess;
  return withAnyType(from, [&](auto fromTag) {
    using From = Pointee<decltype(fromTag)>;
    return withAnyType(to, [&](auto toTag) {
      using To = Pointee<decltype(toTag)>;
      castKernel<From, To>
          <<<gridFor(config, count), kThreads, 0, config.stream>>>(
              static_cast<To *>(out), static_cast<const From *>(in), count);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchFillPattern(const LaunchConfig &config,
                                    int elementBytes, void *out,
                                    uint64_t pattern, int64_t count) {
  if (count == 0)
    return cudaSuccess;
  return withElementBytes(elementBytes, [&](auto tag) {
    using E = Pointee<decltype(tag)>;
    fillKernel<E><<<gridFor(config, count), kThreads, 0, config.stream>>>(
        static_cast<E *>(out), static_cast<E>(pattern), count);
    return cudaGetLastError();
  });
}

/// launchStridedCopy and launchStridedScatter: 32-bit index arithmetic
/// where the view fits.
template <bool Scatter>
static cudaError_t
launchStridedMove(const LaunchConfig &config, int elementBytes, void *out,
                  const void *in, const StridedView &view, int64_t count) {
  if (count == 0)
    return cudaSuccess;
  return withElementBytes(elementBytes, [&](auto tag) {
    using E = Pointee<decltype(tag)>;
    int grid = gridFor(config, count);
    if (fitsIn32Bits(view, count))
      stridedMoveKernel<Scatter, E, uint32_t>
          <<<grid, kThreads, 0, config.stream>>>(
              static_cast<E *>(out), static_cast<const E *>(in), view, count);
    else
      stridedMoveKernel<Scatter, E, int64_t>
          <<<grid, kThreads, 0, config.stream>>>(
              static_cast<E *>(out), static_cast<const E *>(in), view, count);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchStridedCopy(const LaunchConfig &config,
                                    int elementBytes, void *out, const void *in,
                                    const StridedView &view, int64_t count) {
  return launchStridedMove<false>(config, elementBytes, out, in, view, count);
}

cudaError_t cuda::launchStridedScatter(const LaunchConfig &config,
                                       int elementBytes, void *out,
                                       const void *in, const StridedView &view,
                                       int64_t count) {
  return launchStridedMove<true>(config, elementBytes, out, in, view, count);
}

cudaError_t cuda::launchScatterAdd(const LaunchConfig &config, DType dtype,
                                   DType indexType, float *acc,
                                   const void *updates, const void *indices,
                                   int64_t outer, int64_t axisSize,
                                   int64_t numIndices, int64_t inner) {
  int64_t columns = outer * inner;
  if (columns == 0 || numIndices == 0)
    return cudaSuccess;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    return withIndexType(indexType, [&](auto indexTag) {
      using Index = Pointee<decltype(indexTag)>;
      scatterAddKernel<T, Index>
          <<<gridFor(config, columns), kThreads, 0, config.stream>>>(
              acc, static_cast<const T *>(updates),
              static_cast<const Index *>(indices), axisSize, numIndices, inner,
              columns, config.errors);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchCompare(const LaunchConfig &config, int direction,
                                DType dtype, int32_t *out, const void *lhs,
                                const void *rhs, const BroadcastView &view,
                                int64_t count) {
  if (count == 0)
    return cudaSuccess;
  return withAnyType(dtype, [&](auto tag) -> cudaError_t {
    using T = Pointee<decltype(tag)>;
    auto *a = static_cast<const T *>(lhs);
    auto *b = static_cast<const T *>(rhs);
    switch (direction) {
    case 0:
      return launchCompareTyped<0>(config, out, a, b, view, count);
    case 1:
      return launchCompareTyped<1>(config, out, a, b, view, count);
    case 2:
      return launchCompareTyped<2>(config, out, a, b, view, count);
    case 3:
      return launchCompareTyped<3>(config, out, a, b, view, count);
    case 4:
      return launchCompareTyped<4>(config, out, a, b, view, count);
    case 5:
      return launchCompareTyped<5>(config, out, a, b, view, count);
    }
    return cudaErrorInvalidValue;
  });
}

cudaError_t cuda::launchGather(const LaunchConfig &config, int elementBytes,
                               DType indexType, void *out, const void *data,
                               const void *indices, int64_t outer,
                               int64_t axisSize, int64_t numIndices,
                               int64_t inner) {
  int64_t count = outer * numIndices * inner;
  if (count == 0)
    return cudaSuccess;
  if (axisSize <= 0)
    return cudaErrorInvalidValue;
  return withElementBytes(elementBytes, [&](auto tag) {
    using E = Pointee<decltype(tag)>;
    return withIndexType(indexType, [&](auto indexTag) {
      using Index = Pointee<decltype(indexTag)>;
      gatherKernel<E, Index>
          <<<gridFor(config, count), kThreads, 0, config.stream>>>(
              static_cast<E *>(out), static_cast<const E *>(data),
              static_cast<const Index *>(indices), axisSize, numIndices, inner,
              count, config.errors);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchTopK(const LaunchConfig &config, DType dtype,
                              void *values, int64_t *indices, const void *in,
                              int64_t rows, int64_t n, int64_t k) {
  if (rows == 0)
    return cudaSuccess;
  if (k < 1 || k > n)
    return cudaErrorInvalidValue;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    topKKernel<T><<<gridFor(config, rows), kThreads, 0, config.stream>>>(
        static_cast<T *>(values), indices, static_cast<const T *>(in), rows, n,
        k);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchRoute(const LaunchConfig &config, bool dispatch,
                              int elementBytes, DType indexType, void *buffer,
                              void *slots, const void *indices,
                              const RouteShape &shape) {
  int64_t blocks = shape.experts * shape.groups;
  if (blocks == 0 || shape.h == 0)
    return cudaSuccess;
  if (blocks > INT32_MAX)
    return cudaErrorInvalidValue;
  int threads = static_cast<int>(std::min<int64_t>(kThreads, shape.h));
  return withElementBytes(elementBytes, [&](auto tag) {
    using E = Pointee<decltype(tag)>;
    return withIndexType(indexType, [&](auto indexTag) {
      using Index = Pointee<decltype(indexTag)>;
      auto kernel = dispatch ? routeKernel<true, E, Index>
                             : routeKernel<false, E, Index>;
      kernel<<<static_cast<unsigned>(blocks), threads, 0, config.stream>>>(
          static_cast<E *>(buffer), static_cast<E *>(slots),
          static_cast<const Index *>(indices), shape.experts, shape.groups,
          shape.capacity, shape.s, shape.k, shape.h, shape.perToken,
          config.errors);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchSoftmax(const LaunchConfig &config, DType dtype,
                                void *out, const void *in, int64_t outer,
                                int64_t dim, int64_t inner) {
  if (outer * dim * inner == 0)
    return cudaSuccess;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    if (inner == 1)
      softmaxRowsKernel<T, T>
          <<<rowGrid(config, outer), rowThreads(dim), 0, config.stream>>>(
              static_cast<T *>(out), static_cast<const T *>(in), outer, dim, 1,
              0, 0, 0, nullptr);
    else
      softmaxColumnsKernel<T>
          <<<gridFor(config, outer * inner), kThreads, 0, config.stream>>>(
              static_cast<T *>(out), static_cast<const T *>(in), outer, dim,
              inner);
    return cudaGetLastError();
  });
}

cudaError_t
cuda::launchAttentionSoftmax(const LaunchConfig &config, DType dtype, void *out,
                             const float *scores, int64_t rows, int64_t cols,
                             int64_t rowsPerGroup, int64_t rowOffset,
                             int64_t causalPeriod, int64_t window,
                             const AttentionPositions &positions, float *lse) {
  if (rows * cols == 0)
    return cudaSuccess;
  if (rowsPerGroup <= 0)
    return cudaErrorInvalidValue;
  if (causalPeriod > 0 && positions.query) {
    if (!positions.key)
      return cudaErrorInvalidValue;
    return withFloatType(dtype, [&](auto tag) {
      using T = Pointee<decltype(tag)>;
      return withIndexType(positions.type, [&](auto positionTag) {
        using P = Pointee<decltype(positionTag)>;
        positionsSoftmaxRowsKernel<T, P>
            <<<rowGrid(config, rows), rowThreads(cols), 0, config.stream>>>(
                static_cast<T *>(out), scores, rows, cols, rowsPerGroup,
                rowOffset, causalPeriod, window,
                static_cast<const P *>(positions.query),
                static_cast<const P *>(positions.key), lse);
        return cudaGetLastError();
      });
    });
  }
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    softmaxRowsKernel<float, T>
        <<<rowGrid(config, rows), rowThreads(cols), 0, config.stream>>>(
            static_cast<T *>(out), scores, rows, cols, rowsPerGroup, rowOffset,
            causalPeriod, window, lse);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchAttentionBlockProbabilities(
    const LaunchConfig &config, DType dtype, void *out, const float *scores,
    int64_t rows, int64_t cols, int64_t rowsPerGroup, int64_t rowOffset,
    int64_t causalPeriod, int64_t window, const AttentionPositions &positions,
    const float *lse) {
  if (rows * cols == 0)
    return cudaSuccess;
  if (rowsPerGroup <= 0 || !lse)
    return cudaErrorInvalidValue;
  bool byPositions = causalPeriod > 0 && positions.query;
  if (byPositions && !positions.key)
    return cudaErrorInvalidValue;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    return withIndexType(positions.type, [&](auto positionTag) {
      using P = Pointee<decltype(positionTag)>;
      blockProbabilitiesKernel<T, P>
          <<<gridFor(config, rows * cols), kThreads, 0, config.stream>>>(
              static_cast<T *>(out), scores, rows, cols, rowsPerGroup,
              rowOffset, causalPeriod, window,
              byPositions ? static_cast<const P *>(positions.query) : nullptr,
              byPositions ? static_cast<const P *>(positions.key) : nullptr,
              lse);
      return cudaGetLastError();
    });
  });
}

cudaError_t cuda::launchAttentionGradScores(const LaunchConfig &config,
                                            DType dtype, void *out,
                                            const float *dp, const void *p,
                                            int64_t rows, int64_t cols,
                                            float scale, const float *delta) {
  if (rows * cols == 0)
    return cudaSuccess;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    attentionGradScoresKernel<T>
        <<<rowGrid(config, rows), rowThreads(cols), 0, config.stream>>>(
            static_cast<T *>(out), dp, static_cast<const T *>(p), rows, cols,
            scale, delta);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchNorm(const LaunchConfig &config, bool rms, DType dtype,
                             void *out, const void *in, const void *scale,
                             const void *bias, int64_t rows, int64_t cols,
                             float epsilon) {
  if (rows * cols == 0)
    return cudaSuccess;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    int grid = rowGrid(config, rows), threads = rowThreads(cols);
    if (rms)
      normRowsKernel<T, true><<<grid, threads, 0, config.stream>>>(
          static_cast<T *>(out), static_cast<const T *>(in),
          static_cast<const T *>(scale), nullptr, rows, cols, epsilon);
    else
      normRowsKernel<T, false><<<grid, threads, 0, config.stream>>>(
          static_cast<T *>(out), static_cast<const T *>(in),
          static_cast<const T *>(scale), static_cast<const T *>(bias), rows,
          cols, epsilon);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchRotary(const LaunchConfig &config, DType dtype,
                               void *out, const void *in, const void *cos,
                               const void *sin, int64_t count, int64_t seq,
                               int64_t dim) {
  if (count == 0)
    return cudaSuccess;
  return withFloatType(dtype, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    rotaryKernel<T><<<gridFor(config, count), kThreads, 0, config.stream>>>(
        static_cast<T *>(out), static_cast<const T *>(in),
        static_cast<const T *>(cos), static_cast<const T *>(sin), count, seq,
        dim);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchCrossEntropy(const LaunchConfig &config,
                                     DType logitsType, DType labelType,
                                     DType outType, void *out,
                                     const void *logits, const void *labels,
                                     int64_t rows, int64_t classes) {
  if (rows == 0)
    return cudaSuccess;
  if (classes <= 0)
    return cudaErrorInvalidValue;
  return withFloatType(logitsType, [&](auto tag) {
    using T = Pointee<decltype(tag)>;
    return withIndexType(labelType, [&](auto labelTag) {
      using L = Pointee<decltype(labelTag)>;
      return withFloatType(outType, [&](auto outTag) {
        using O = Pointee<decltype(outTag)>;
        crossEntropyKernel<T, L, O>
            <<<rowGrid(config, rows), rowThreads(classes), 0, config.stream>>>(
                static_cast<O *>(out), static_cast<const T *>(logits),
                static_cast<const L *>(labels), rows, classes, config.errors);
        return cudaGetLastError();
      });
    });
  });
}

cudaError_t cuda::launchSumToScalar(const LaunchConfig &config, DType outType,
                                    void *out, const float *in, int64_t count,
                                    float divisor) {
  return withFloatType(outType, [&](auto tag) {
    using O = Pointee<decltype(tag)>;
    sumToScalarKernel<O><<<1, 1024, 0, config.stream>>>(static_cast<O *>(out),
                                                        in, count, divisor);
    return cudaGetLastError();
  });
}

cudaError_t cuda::launchReduce(const LaunchConfig &config, ReduceKind kind,
                               DType dtype, void *out, const void *in,
                               int64_t outer, int64_t reduced, int64_t inner) {
  if (outer * inner == 0)
    return cudaSuccess;
  switch (kind) {
  case ReduceKind::Sum:
    return launchReduceKind<ReduceKind::Sum>(config, dtype, out, in, outer,
                                             reduced, inner);
  case ReduceKind::Mean:
    return launchReduceKind<ReduceKind::Mean>(config, dtype, out, in, outer,
                                              reduced, inner);
  case ReduceKind::Max:
    return launchReduceKind<ReduceKind::Max>(config, dtype, out, in, outer,
                                             reduced, inner);
  }
  return cudaErrorInvalidValue;
}

cudaError_t cuda::launchReduceStrided(const LaunchConfig &config,
                                      ReduceKind kind, DType dtype, void *out,
                                      const void *in, const StridedView &kept,
                                      const StridedView &reduced,
                                      int64_t outCount, int64_t reducedCount) {
  if (outCount == 0)
    return cudaSuccess;
  switch (kind) {
  case ReduceKind::Sum:
    return launchReduceStridedKind<ReduceKind::Sum>(
        config, dtype, out, in, kept, reduced, outCount, reducedCount);
  case ReduceKind::Mean:
    return launchReduceStridedKind<ReduceKind::Mean>(
        config, dtype, out, in, kept, reduced, outCount, reducedCount);
  case ReduceKind::Max:
    return launchReduceStridedKind<ReduceKind::Max>(
        config, dtype, out, in, kept, reduced, outCount, reducedCount);
  }
  return cudaErrorInvalidValue;
}

cudaError_t cuda::launchFused(const LaunchConfig &config,
                              const FusedProgram &program, int64_t count) {
  if (count == 0)
    return cudaSuccess;
  fusedKernel<<<gridFor(config, count), kThreads, 0, config.stream>>>(program,
                                                                      count);
  return cudaGetLastError();
}
