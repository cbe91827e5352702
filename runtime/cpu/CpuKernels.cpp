//===- CpuKernels.cpp - the CPU backend's compute kernels -----------------===//
//
// Every plan::OpKind on contiguous row-major tensors in host memory.
//
// f16 and bf16 are stored as such and computed in f32: a kernel converts a
// whole row (or chunk) into f32 scratch, computes on plain float arrays and
// converts the result back, so no inner loop switches on a dtype or calls
// through a pointer and the compiler can vectorize them. f32 tensors are read
// and written in place, without the copy. GEMMs (Matmul, BatchMatmul and the
// two products inside Attention) go to OpenBLAS's cblas_sgemm.
//
// Sums that feed a result (softmax denominators, norms, reductions, losses)
// accumulate in double; softmax and cross-entropy subtract the row maximum.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "partition/runtime/DType.h"
#include "partition/runtime/Status.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <numeric>
#include <type_traits>

using namespace partition::runtime;
namespace plan = partition::plan;

namespace {

using Shape = std::vector<int64_t>;

/// Elements per chunk of elementwise work: long enough to amortise the loop
/// set-up, short enough that the f32 scratch stays in the L1/L2 cache.
constexpr int64_t kChunk = 4096;

/// Loops bound by arithmetic rather than memory traffic (the exponential and
/// tanh ones) are compiled twice, for AVX2 (8 floats per instruction) and for
/// the x86-64 baseline (SSE2, 4), and the CPU picks one when the program
/// loads. AVX2 without FMA: no product is fused into a sum, so both clones
/// give the same bits. GELU over 1.5M floats: 3.7 ms, 1.6 ms with AVX2.
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define PARTITION_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef PARTITION_SIMD_CLONES
#define PARTITION_SIMD_CLONES
#endif

/// The loop templates the cloned functions call: inlined, so that each
/// clone compiles them for its own instruction set.
#define PARTITION_ALWAYS_INLINE inline __attribute__((always_inline))

/// exp(x) within 2 ulp (and correctly rounded down to subnormal results),
/// written without branches or library calls so that loops using it
/// vectorize (libm's expf does not). Overflow gives inf, NaN stays NaN. Used
/// by softmax, cross-entropy, sigmoid, SiLU, GELU and tanh; the Exp op itself
/// keeps std::exp.
inline float expVec(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f; // 1.5 * 2^23: adds round to nearest
  constexpr float kMax = 88.7228391f, kMin = -104.0f; // e^kMin < 2^-149
  // Below kMin the result is 0 whatever is computed: compute e^0 there
  // rather than e^kMin, whose subnormal product costs a microcode assist per
  // element (a causal mask's -inf scores made softmax 3.5x slower).
  float xc = x < kMin ? 0.0f : x;
  xc = xc > kMax ? kMax : xc;
  // NaN passes both clamps; converting it to an integer below is undefined
  // (UBSan), so it takes any finite value here and is returned at the end.
  xc = x != x ? 0.0f : xc;
  float n = (xc * kLog2e + kRound) - kRound;
  float r = xc - n * kLn2Hi - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n with n in [-150, 128] as two normal factors 2^a * 2^b; the second
  // product rounds once into the subnormal range when the result lies there.
  int32_t ni = static_cast<int32_t>(n);
  int32_t a = ni >> 1, b = ni - a;
  int32_t ea = (a + 127) << 23, eb = (b + 127) << 23;
  float sa, sb;
  std::memcpy(&sa, &ea, 4);
  std::memcpy(&sb, &eb, 4);
  float y = (p * sa) * sb;
  y = x > kMax ? std::numeric_limits<float>::infinity() : y;
  y = x < kMin ? 0.0f : y;
  return x != x ? x : y;
}

/// tanh(x) within 1.4 ulp (every f32 checked against tanh in double),
/// written without branches or library calls so that loops using it
/// vectorize (libm's tanhf does not: on GELU's backward, Tanh took 5x the
/// time of the GELU itself). Cephes' tanhf: x + x^3 P(x^2) below |x| =
/// 0.625, where 1 - 2 / (e^2|x| + 1) would cancel, that expression with
/// expVec above, the sign put back. +-inf gives +-1, NaN stays NaN.
inline float tanhVec(float x) {
  float ax = std::fabs(x);
  float e = expVec(ax + ax); // inf above |x| ~ 44: the quotient is then 0
  float large = 1.0f - 2.0f / (e + 1.0f);
  float z = ax * ax;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = p * z * ax + ax;
  // NaN fails the test and takes `large`, which is NaN; the sign goes back
  // on last so that -0 stays -0.
  return std::copysign(ax < 0.625f ? small : large, x);
}

/// Floats of attention scores computed at once (4 MiB): long sequences are
/// processed in blocks of query rows instead of one [Sq, Sk] matrix per head.
constexpr int64_t kScoreBlock = int64_t(1) << 20;

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

/// Element strides of a contiguous row-major tensor of `shape`.
Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// "[1, 2]": the multi-index of flat position `flat` in `shape`, for error
/// messages.
std::string formatIndex(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return formatShape(index);
}

//===----------------------------------------------------------------------===//
// Conversions to and from f32
//===----------------------------------------------------------------------===//

/// Float to integer, truncating toward zero; NaN gives 0 and values outside
/// the integer's range saturate (C++ leaves both undefined).
template <typename I>
I floatToInt(float x) {
  constexpr float lo = static_cast<float>(std::numeric_limits<I>::min());
  // 2^31 or 2^63: the first float above the largest integer.
  constexpr float hi = -lo;
  if (x != x)
    return 0;
  if (x <= lo)
    return std::numeric_limits<I>::min();
  if (x >= hi)
    return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

/// Converts `n` elements of `t` starting at element `offset` to f32.
void toF32(const TensorRef &t, int64_t offset, int64_t n, float *dst) {
  switch (t.dtype) {
  case DType::F32:
    std::memcpy(dst, static_cast<const float *>(t.data) + offset,
                n * sizeof(float));
    return;
  case DType::F16: {
    const uint16_t *src = static_cast<const uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = halfToFloat(src[i]);
    return;
  }
  case DType::BF16: {
    const uint16_t *src = static_cast<const uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16ToFloat(src[i]);
    return;
  }
  case DType::I32: {
    const int32_t *src = static_cast<const int32_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(src[i]);
    return;
  }
  case DType::I64: {
    const int64_t *src = static_cast<const int64_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = static_cast<float>(src[i]);
    return;
  }
  }
}

/// Stores `n` f32 values into `t` starting at element `offset`, rounding to
/// nearest even for f16/bf16 and truncating (saturated) for integers.
void fromF32(const float *src, int64_t n, const TensorRef &t, int64_t offset) {
  switch (t.dtype) {
  case DType::F32:
    std::memcpy(static_cast<float *>(t.data) + offset, src, n * sizeof(float));
    return;
  case DType::F16: {
    uint16_t *dst = static_cast<uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = floatToHalf(src[i]);
    return;
  }
  case DType::BF16: {
    uint16_t *dst = static_cast<uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = floatToBf16(src[i]);
    return;
  }
  case DType::I32: {
    int32_t *dst = static_cast<int32_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = floatToInt<int32_t>(src[i]);
    return;
  }
  case DType::I64: {
    int64_t *dst = static_cast<int64_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = floatToInt<int64_t>(src[i]);
    return;
  }
  }
}

/// Reads stretches of a tensor as f32: the tensor's own memory for f32, a
/// converted copy in scratch otherwise. A pointer stays valid until the next
/// read.
class F32Reader {
public:
  explicit F32Reader(const TensorRef &t) : t(t) {}
  const float *read(int64_t offset, int64_t n) {
    if (t.dtype == DType::F32)
      return static_cast<const float *>(t.data) + offset;
    if (static_cast<int64_t>(scratch.size()) < n)
      scratch.resize(n);
    toF32(t, offset, n, scratch.data());
    return scratch.data();
  }

private:
  const TensorRef &t;
  std::vector<float> scratch;
};

/// Writes stretches of a tensor from f32: begin() hands out the tensor's own
/// memory for f32, scratch that commit() converts and stores otherwise.
class F32Writer {
public:
  explicit F32Writer(const TensorRef &t) : t(t) {}
  float *begin(int64_t offset, int64_t n) {
    offset_ = offset;
    n_ = n;
    if (t.dtype == DType::F32)
      return static_cast<float *>(t.data) + offset;
    if (static_cast<int64_t>(scratch.size()) < n)
      scratch.resize(n);
    return scratch.data();
  }
  void commit() {
    if (t.dtype != DType::F32)
      fromF32(scratch.data(), n_, t, offset_);
  }

private:
  const TensorRef &t;
  std::vector<float> scratch;
  int64_t offset_ = 0, n_ = 0;
};

/// Reads an i32 or i64 tensor (labels, indices) as int64.
std::vector<int64_t> readIndices(const TensorRef &t) {
  int64_t n = t.numElements();
  std::vector<int64_t> result(n);
  if (t.dtype == DType::I64) {
    // An empty tensor may have no data: memcpy from null is undefined even
    // for 0 bytes.
    if (n > 0)
      std::memcpy(result.data(), t.data, n * sizeof(int64_t));
  } else {
    const int32_t *src = static_cast<const int32_t *>(t.data);
    for (int64_t i = 0; i < n; ++i)
      result[i] = src[i];
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Row primitives
//===----------------------------------------------------------------------===//

/// Sum of x[0, n) in double, with four independent accumulators so the loop
/// pipelines (and vectorizes) without reassociating a single chain.
double sumRow(const float *x, int64_t n) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j)
      acc[j] += x[i + j];
  for (; i < n; ++i)
    acc[0] += x[i];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/// Largest of x[0, n); -inf for n == 0, NaN if any element is NaN.
float maxRow(const float *x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

/// y = softmax(x) over [0, n); y may be x.
PARTITION_SIMD_CLONES void softmaxRow(const float *x, float *y, int64_t n) {
  float m = maxRow(x, n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = expVec(x[i] - m);
  float inv = static_cast<float>(1.0 / sumRow(y, n));
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
}

/// softmaxRow that also gives the row's maximum `max` and the sum `sum` of
/// exp(x - max) it normalised by (softmaxRow's arithmetic, unchanged).
PARTITION_SIMD_CLONES void softmaxRowStats(const float *x, float *y, int64_t n,
                                           float &max, double &sum) {
  float m = maxRow(x, n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = expVec(x[i] - m);
  sum = sumRow(y, n);
  float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i)
    y[i] *= inv;
  max = m;
}

/// y = softmax(x) over [0, n) (y may be x); where `lse` is given, the row's
/// log-sum-exp max + log(sum exp(x - max)) goes to *lse (-inf for n == 0).
void softmaxRowInto(const float *x, float *y, int64_t n, float *lse) {
  if (!lse)
    return softmaxRow(x, y, n);
  float max;
  double sum;
  softmaxRowStats(x, y, n, max, sum);
  *lse = n == 0 ? -std::numeric_limits<float>::infinity()
                : max + static_cast<float>(std::log(sum));
}

/// C[m, n] = alpha * op(A) op(B) with row-major A ([m, k] or [k, m] with
/// `ta`) and B ([k, n] or [n, k] with `tb`), through OpenBLAS.
/// c = alpha a b + beta c (row-major; beta 0 or 1).
Status gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
            const float *a, const float *b, float *c, float beta = 0.0f) {
  if (m == 0 || n == 0)
    return Status::ok();
  if (k == 0) { // an empty sum; BLAS rejects the leading dimensions
    if (beta == 0.0f)
      std::fill(c, c + m * n, 0.0f);
    return Status::ok();
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return PARTITION_ERROR(Unimplemented, "GEMM of size ", m, "x", n, "x", k,
                           " exceeds OpenBLAS's 32-bit dimensions");
  int im = static_cast<int>(m), in = static_cast<int>(n),
      ik = static_cast<int>(k);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, im, in, ik, alpha, a,
              ta ? im : ik, b, tb ? ik : in, beta, c, in);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Strided iteration (broadcast, transpose, slice)
//===----------------------------------------------------------------------===//

/// An iteration space over a contiguous result: its dimensions and, per
/// operand, the element stride of each result dimension (0 where the operand
/// is broadcast). Size-1 dimensions are dropped and adjacent dimensions merged
/// where every operand allows it, so the innermost loop is as long as
/// possible.
struct StridedLayout {
  Shape shape;
  std::vector<Shape> strides;

  int64_t inner() const { return shape.back(); }
  int64_t rows() const { return product(shape, 0, shape.size() - 1); }
};

StridedLayout makeLayout(const Shape &shape,
                         const std::vector<Shape> &strides) {
  StridedLayout l;
  l.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool merge = !l.shape.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k)
      merge = l.strides[k].back() == strides[k][d] * shape[d];
    if (merge) {
      l.shape.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k)
        l.strides[k].back() = strides[k][d];
    } else {
      l.shape.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k)
        l.strides[k].push_back(strides[k][d]);
    }
  }
  if (l.shape.empty()) {
    l.shape.push_back(1);
    for (Shape &s : l.strides)
      s.push_back(0);
  }
  return l;
}

/// Strides of an operand of `shape` read as `result` under numpy
/// broadcasting: aligned at the last dimension, 0 where it stretches.
Shape broadcastStrides(const Shape &shape, const Shape &result) {
  Shape own = contiguousStrides(shape);
  Shape strides(result.size(), 0);
  size_t lead = result.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    strides[lead + d] = shape[d] == 1 ? 0 : own[d];
  return strides;
}

/// Calls body(resultOffset, offsets) for each innermost row of `l`, where
/// offsets[k] is operand k's element offset of the row's first element,
/// starting from `offsets` for the first row.
template <typename Body>
void forEachRow(const StridedLayout &l, Shape offsets, Body &&body) {
  size_t outer = l.shape.size() - 1;
  int64_t n = l.inner(), rows = l.rows();
  Shape index(outer, 0);
  for (int64_t row = 0; row < rows; ++row) {
    body(row * n, static_cast<const Shape &>(offsets));
    for (size_t d = outer; d-- > 0;) {
      ++index[d];
      for (size_t k = 0; k < offsets.size(); ++k)
        offsets[k] += l.strides[k][d];
      if (index[d] < l.shape[d])
        break;
      for (size_t k = 0; k < offsets.size(); ++k)
        offsets[k] -= l.strides[k][d] * l.shape[d];
      index[d] = 0;
    }
  }
}

/// dst[i] = src[i * stride] for i < n, by element bits.
template <typename T>
void copyRow(const T *src, int64_t stride, T *dst, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, n * sizeof(T));
  } else if (stride == 0) {
    std::fill(dst, dst + n, *src);
  } else {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i * stride];
  }
}

/// Side of the square tiles of a transposing copy. Small tiles keep the few
/// cache lines a tile touches from colliding in one L1 set when the matrix
/// side is a power of two (measured on 2048x2048 f32: 31 ms untiled, 8 ms
/// with 8x8 tiles; 16 and 32 were no faster).
constexpr int64_t kTile = 8;

template <typename T>
void stridedCopyAs(const void *in, void *out, const StridedLayout &l,
                   int64_t base) {
  const T *src = static_cast<const T *>(in);
  T *dst = static_cast<T *>(out);
  const Shape &strides = l.strides[0];
  int64_t stride = strides.back(), n = l.inner();
  size_t rank = l.shape.size(), unit = rank;
  if (stride != 0 && stride != 1)
    for (size_t d = 0; d + 1 < rank; ++d)
      if (strides[d] == 1)
        unit = d;
  if (unit == rank) {
    forEachRow(l, {base}, [&](int64_t o, const Shape &off) {
      copyRow(src + off[0], stride, dst + o, n);
    });
    return;
  }
  // A transpose that moves the operand's contiguous dimension (`unit`) away
  // from the innermost one: row by row, every read would touch a new cache
  // line. Copy [unit x inner] tiles instead, for each index of the other
  // dimensions.
  Shape outStrides = contiguousStrides(l.shape);
  std::vector<size_t> others;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (d != unit)
      others.push_back(d);
  Shape index(others.size(), 0);
  int64_t rows = l.shape[unit], rowStride = outStrides[unit];
  int64_t count = 1;
  for (size_t d : others)
    count *= l.shape[d];
  int64_t inOffset = base, outOffset = 0;
  for (int64_t it = 0; it < count; ++it) {
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < n; c0 += kTile) {
        int64_t c1 = std::min(n, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          const T *s = src + inOffset + r;
          T *o = dst + outOffset + r * rowStride;
          for (int64_t c = c0; c < c1; ++c)
            o[c] = s[c * stride];
        }
      }
    }
    for (size_t k = others.size(); k-- > 0;) {
      size_t d = others[k];
      ++index[k];
      inOffset += strides[d];
      outOffset += outStrides[d];
      if (index[k] < l.shape[d])
        break;
      inOffset -= strides[d] * l.shape[d];
      outOffset -= outStrides[d] * l.shape[d];
      index[k] = 0;
    }
  }
}

/// Copies a strided view of `in` (operand 0 of `l`, first element at `base`)
/// into the contiguous `out`. Works on element bits, so on every dtype.
void stridedCopy(const TensorRef &in, const TensorRef &out,
                 const StridedLayout &l, int64_t base) {
  switch (dtypeSize(in.dtype)) {
  case 2:
    return stridedCopyAs<uint16_t>(in.data, out.data, l, base);
  case 4:
    return stridedCopyAs<uint32_t>(in.data, out.data, l, base);
  default:
    return stridedCopyAs<uint64_t>(in.data, out.data, l, base);
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// o[i] = f(a[i or 0], b[i or 0]): a separate loop per broadcast pattern so
/// each one is a plain contiguous loop.
template <typename T, typename F>
PARTITION_ALWAYS_INLINE void binaryRow(const T *a, bool aStep, const T *b,
                                       bool bStep, T *o, int64_t n, F f) {
  if (aStep && bStep) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(a[i], b[i]);
  } else if (aStep) {
    T y = b[0];
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(a[i], y);
  } else if (bStep) {
    T x = a[0];
    for (int64_t i = 0; i < n; ++i)
      o[i] = f(x, b[i]);
  } else {
    std::fill(o, o + n, f(a[0], b[0]));
  }
}

StridedLayout binaryLayout(const TensorRef &a, const TensorRef &b,
                           const TensorRef &out) {
  return makeLayout(out.shape, {broadcastStrides(a.shape, out.shape),
                                broadcastStrides(b.shape, out.shape)});
}

/// Max and min propagate NaN (as numpy's maximum and minimum).
template <typename T>
T maxOf(T a, T b) {
  return (a > b || a != a) ? a : b;
}
template <typename T>
T minOf(T a, T b) {
  return (a < b || a != a) ? a : b;
}

/// o[i] = op(a[i or 0], b[i or 0]) over one contiguous stretch: the loop of
/// every binary float op, shared by the op's own kernel and Fused steps (so
/// that both give the same bits). False for an op that is not binary.
PARTITION_SIMD_CLONES bool binaryRowLoops(OpKind op, const float *a,
                                          bool aStep, const float *b,
                                          bool bStep, float *o, int64_t n) {
  switch (op) {
  case OpKind::Add:
    binaryRow(a, aStep, b, bStep, o, n, [](float x, float y) { return x + y; });
    break;
  case OpKind::Sub:
    binaryRow(a, aStep, b, bStep, o, n, [](float x, float y) { return x - y; });
    break;
  case OpKind::Mul:
    binaryRow(a, aStep, b, bStep, o, n, [](float x, float y) { return x * y; });
    break;
  case OpKind::Div:
    binaryRow(a, aStep, b, bStep, o, n, [](float x, float y) { return x / y; });
    break;
  case OpKind::Max:
    binaryRow(a, aStep, b, bStep, o, n,
              [](float x, float y) { return maxOf(x, y); });
    break;
  case OpKind::Min:
    binaryRow(a, aStep, b, bStep, o, n,
              [](float x, float y) { return minOf(x, y); });
    break;
  case OpKind::Pow:
    binaryRow(a, aStep, b, bStep, o, n,
              [](float x, float y) { return std::pow(x, y); });
    break;
  default:
    return false;
  }
  return true;
}

Status binaryRowF32(OpKind op, const float *a, bool aStep, const float *b,
                    bool bStep, float *o, int64_t n) {
  if (!binaryRowLoops(op, a, aStep, b, bStep, o, n))
    return PARTITION_ERROR(Internal, opKindName(op), " is not a binary op");
  return Status::ok();
}

Status binaryFloatOp(OpKind op, const TensorRef &a, const TensorRef &b,
                     const TensorRef &out) {
  StridedLayout l = binaryLayout(a, b, out);
  bool aStep = l.strides[0].back() != 0, bStep = l.strides[1].back() != 0;
  int64_t n = l.inner();
  F32Reader ra(a), rb(b);
  F32Writer w(out);
  Status status = Status::ok();
  forEachRow(l, {0, 0}, [&](int64_t o, const Shape &off) {
    if (!status.isOk())
      return;
    const float *x = ra.read(off[0], aStep ? n : 1);
    const float *y = rb.read(off[1], bStep ? n : 1);
    status = binaryRowF32(op, x, aStep, y, bStep, w.begin(o, n), n);
    w.commit();
  });
  return status;
}

template <typename T, typename F>
void binaryInt(const TensorRef &a, const TensorRef &b, const TensorRef &out,
               F f) {
  StridedLayout l = binaryLayout(a, b, out);
  bool aStep = l.strides[0].back() != 0, bStep = l.strides[1].back() != 0;
  int64_t n = l.inner();
  const T *x = static_cast<const T *>(a.data);
  const T *y = static_cast<const T *>(b.data);
  T *z = static_cast<T *>(out.data);
  forEachRow(l, {0, 0}, [&](int64_t o, const Shape &off) {
    binaryRow(x + off[0], aStep, y + off[1], bStep, z + o, n, f);
  });
}

/// Integer ops wrap on overflow (computed on the unsigned type, where C++
/// defines it) and Div truncates toward zero.
template <typename T>
Status binaryIntOp(OpKind op, const TensorRef &a, const TensorRef &b,
                   const TensorRef &out) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
  case OpKind::Add:
    binaryInt<T>(a, b, out, [](T x, T y) { return T(U(x) + U(y)); });
    break;
  case OpKind::Sub:
    binaryInt<T>(a, b, out, [](T x, T y) { return T(U(x) - U(y)); });
    break;
  case OpKind::Mul:
    binaryInt<T>(a, b, out, [](T x, T y) { return T(U(x) * U(y)); });
    break;
  case OpKind::Div: {
    // A zero divisor would trap (SIGFPE): reject it before dividing.
    const T *divisor = static_cast<const T *>(b.data);
    for (int64_t i = 0, n = b.numElements(); i < n; ++i)
      if (divisor[i] == 0)
        return PARTITION_ERROR(InvalidArgument,
                               "Div: integer division by zero: divisor at "
                               "position ",
                               i, " ", formatIndex(i, b.shape), " is 0");
    // MIN / -1 overflows (and traps on x86): wrap it like the other ops.
    binaryInt<T>(a, b, out,
                 [](T x, T y) { return y == -1 ? T(U(0) - U(x)) : T(x / y); });
    break;
  }
  case OpKind::Max:
    binaryInt<T>(a, b, out, [](T x, T y) { return maxOf(x, y); });
    break;
  case OpKind::Min:
    binaryInt<T>(a, b, out, [](T x, T y) { return minOf(x, y); });
    break;
  default:
    return PARTITION_ERROR(InvalidArgument, opKindName(op),
                           " is not defined on ", dtypeName(a.dtype));
  }
  return Status::ok();
}

Status binary(OpKind op, const TensorRef &a, const TensorRef &b,
              const TensorRef &out) {
  switch (a.dtype) {
  case DType::I32:
    return binaryIntOp<int32_t>(op, a, b, out);
  case DType::I64:
    return binaryIntOp<int64_t>(op, a, b, out);
  default:
    return binaryFloatOp(op, a, b, out);
  }
}

template <typename F>
PARTITION_ALWAYS_INLINE void unaryLoop(const float *x, float *y, int64_t n,
                                       F f) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

PARTITION_SIMD_CLONES void tanhRow(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = tanhVec(x[i]);
}

PARTITION_SIMD_CLONES void sigmoidRow(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = 1.0f / (1.0f + expVec(-x[i]));
}

PARTITION_SIMD_CLONES void siluRow(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] / (1.0f + expVec(-x[i]));
}

/// 0.5 x (1 + tanh(u)) = x sigmoid(2u) = x / (1 + exp(-2u)): one
/// exponential and no cancellation where tanh(u) nears -1.
PARTITION_SIMD_CLONES void geluTanhRow(const float *x, float *y, int64_t n) {
  constexpr float kTwoSqrt2OverPi = 2 * 0.79788456080286536f;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    float twoU = kTwoSqrt2OverPi * (v + 0.044715f * v * v * v);
    y[i] = v / (1.0f + expVec(-twoU));
  }
}

/// y[i] = op(x[i]) over one contiguous stretch: the loop of every unary
/// float op, shared by the op's own kernel and Fused steps (so that both
/// give the same bits). False for an op that is not unary.
PARTITION_SIMD_CLONES bool unaryRowLoops(OpKind op,
                                         plan::GeluApproximation gelu,
                                         const float *x, float *y, int64_t n) {
  switch (op) {
  case OpKind::Neg:
    unaryLoop(x, y, n, [](float v) { return -v; });
    break;
  case OpKind::Exp:
    unaryLoop(x, y, n, [](float v) { return std::exp(v); });
    break;
  case OpKind::Log:
    unaryLoop(x, y, n, [](float v) { return std::log(v); });
    break;
  case OpKind::Sqrt:
    unaryLoop(x, y, n, [](float v) { return std::sqrt(v); });
    break;
  case OpKind::Rsqrt:
    unaryLoop(x, y, n, [](float v) { return 1.0f / std::sqrt(v); });
    break;
  case OpKind::Tanh:
    tanhRow(x, y, n);
    break;
  case OpKind::Erf:
    unaryLoop(x, y, n, [](float v) { return std::erf(v); });
    break;
  case OpKind::Cos:
    unaryLoop(x, y, n, [](float v) { return std::cos(v); });
    break;
  case OpKind::Sin:
    unaryLoop(x, y, n, [](float v) { return std::sin(v); });
    break;
  case OpKind::Sigmoid:
    sigmoidRow(x, y, n);
    break;
  case OpKind::Relu:
    // Written so that NaN stays NaN.
    unaryLoop(x, y, n, [](float v) { return v < 0.0f ? 0.0f : v; });
    break;
  case OpKind::Silu:
    siluRow(x, y, n);
    break;
  case OpKind::Gelu:
    if (gelu == plan::GeluApproximation::Erf) {
      constexpr float kInvSqrt2 = 0.70710678118654752f;
      unaryLoop(x, y, n, [](float v) {
        return 0.5f * v * (1.0f + std::erf(v * kInvSqrt2));
      });
    } else {
      geluTanhRow(x, y, n);
    }
    break;
  case OpKind::Cast:
    // Within a Fused kernel: the rounding to the target dtype follows.
    std::copy(x, x + n, y);
    break;
  default:
    return false;
  }
  return true;
}

Status unaryRowF32(OpKind op, plan::GeluApproximation gelu, const float *x,
                   float *y, int64_t n) {
  if (!unaryRowLoops(op, gelu, x, y, n))
    return PARTITION_ERROR(Internal, opKindName(op), " is not a unary op");
  return Status::ok();
}

Status unary(OpKind op, const KernelAttrs &attrs, const TensorRef &in,
             const TensorRef &out) {
  plan::GeluApproximation gelu = op == OpKind::Gelu
                                     ? attrs.AsGeluAttrs()->approximation
                                     : plan::GeluApproximation::Erf;
  F32Reader r(in);
  F32Writer w(out);
  int64_t n = in.numElements();
  for (int64_t start = 0; start < n; start += kChunk) {
    int64_t len = std::min(kChunk, n - start);
    PARTITION_RETURN_IF_ERROR(
        unaryRowF32(op, gelu, r.read(start, len), w.begin(start, len), len));
    w.commit();
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Fused elementwise chains
//===----------------------------------------------------------------------===//

/// Rounds x[0..n) to `type` and back (f32: nothing): what storing the values
/// in that dtype and reading them again does.
void roundTo(plan::DType type, float *x, int64_t n) {
  if (type == plan::DType::BF16)
    for (int64_t i = 0; i < n; ++i)
      x[i] = bf16ToFloat(floatToBf16(x[i]));
  else if (type == plan::DType::F16)
    for (int64_t i = 0; i < n; ++i)
      x[i] = halfToFloat(floatToHalf(x[i]));
}

/// A Fused kernel: the steps run one after another over a chunk of the
/// elements at a time, each step's chunk in a buffer of scratch that stays
/// in the second-level cache, with the same row loops as the unfused ops.
/// A step's buffer is free again after the last step or result that reads
/// it, so a chain needs few (AdamW's 15 steps: 6); the scratch is the
/// thread's own and kept between calls. Chunks of 4096 elements: with 512
/// the per-step calls cost as much as the arithmetic (AdamW's update of 2.4M
/// elements: about 7 ms a step against 10 ms with 512 and 12-14 ms unfused
/// on the machine of docs/benchmarks.md). A step whose operands are single
/// values is computed once. A result may share an operand's buffer: a chunk
/// is written after every step has read it.
Status fused(const KernelAttrs &attrs, const std::vector<TensorRef> &in,
             const std::vector<TensorRef> &out) {
  const plan::FusedAttrsT &f = *attrs.AsFusedAttrs();
  constexpr int64_t kFusedChunk = 4096;
  // Buffers 64 bytes further apart than a chunk: buffers a multiple of 4 KiB
  // apart make a step's loads wait on the previous step's stores to the
  // same address bits (4K aliasing), which cost more than the arithmetic.
  constexpr int64_t kStride = kFusedChunk + 16;
  size_t operands = in.size(), slots = operands + f.steps.size();
  int64_t n = out[0].numElements();
  std::vector<char> varies(slots);
  for (size_t k = 0; k < operands; ++k)
    varies[k] = in[k].numElements() != 1;
  // The last step that reads each slot (results: past the last step).
  std::vector<size_t> lastRead(slots, 0);
  for (size_t k = 0; k < f.steps.size(); ++k) {
    const plan::FusedStep &s = f.steps[k];
    bool binary = isBinaryFusedStep(s.op());
    varies[operands + k] = varies[s.a()] || (binary && varies[s.b()]);
    lastRead[s.a()] = k;
    if (binary)
      lastRead[s.b()] = k;
  }
  for (uint16_t slot : f.outputs)
    lastRead[slot] = f.steps.size();
  // Buffers: one per operand not read in place (converted, repeating or a
  // single value), then the steps' buffers, each reused once its value is
  // dead.
  std::vector<int64_t> buffer(slots, -1);
  int64_t buffers = 0;
  for (size_t k = 0; k < operands; ++k)
    if (!varies[k] || in[k].numElements() != n || in[k].dtype != DType::F32)
      buffer[k] = buffers++;
  std::vector<int64_t> free;
  for (size_t k = 0; k < f.steps.size(); ++k) {
    size_t slot = operands + k;
    // A single value is computed with the first chunk and read in every
    // later one: its buffer is its own for the whole kernel, never one an
    // earlier step (which runs again for each chunk) writes.
    if (free.empty() || !varies[slot]) {
      buffer[slot] = buffers++;
    } else {
      buffer[slot] = free.back();
      free.pop_back();
    }
    // A step's operands that no later step or result reads free their
    // buffers (single values keep theirs).
    const plan::FusedStep &s = f.steps[k];
    for (uint16_t read : {s.a(), isBinaryFusedStep(s.op()) ? s.b() : s.a()})
      if (read >= operands && varies[read] && lastRead[read] == k &&
          std::find(free.begin(), free.end(), buffer[read]) == free.end())
        free.push_back(buffer[read]);
  }
  thread_local std::unique_ptr<float[]> scratch;
  thread_local int64_t scratchFloats = 0;
  if (scratchFloats < buffers * kStride) {
    scratch.reset(new float[buffers * kStride]);
    scratchFloats = buffers * kStride;
  }
  auto at = [&](size_t slot) { return scratch.get() + buffer[slot] * kStride; };
  std::vector<const float *> value(slots);
  for (size_t k = 0; k < operands; ++k)
    if (!varies[k]) {
      toF32(in[k], 0, 1, at(k));
      value[k] = at(k);
    }
  std::vector<F32Writer> writers;
  writers.reserve(out.size());
  for (const TensorRef &t : out)
    writers.emplace_back(t);
  for (int64_t start = 0; start < n; start += kFusedChunk) {
    int64_t len = std::min(kFusedChunk, n - start);
    for (size_t k = 0; k < operands; ++k) {
      if (!varies[k])
        continue;
      int64_t m = in[k].numElements();
      if (buffer[k] < 0) {
        value[k] = static_cast<const float *>(in[k].data) + start;
        continue;
      }
      // Element i reads element i mod m (m == n: a plain stretch).
      float *dst = at(k);
      for (int64_t i = 0, j = start % m; i < len; j = 0) {
        int64_t run = std::min(len - i, m - j);
        toF32(in[k], j, run, dst + i);
        i += run;
      }
      value[k] = dst;
    }
    for (size_t k = 0; k < f.steps.size(); ++k) {
      size_t slot = operands + k;
      if (!varies[slot] && start > 0)
        continue; // one value, computed with the first chunk
      const plan::FusedStep &s = f.steps[k];
      float *y = at(slot);
      int64_t count = varies[slot] ? len : 1;
      if (isBinaryFusedStep(s.op()))
        PARTITION_RETURN_IF_ERROR(binaryRowF32(s.op(), value[s.a()],
                                               varies[s.a()], value[s.b()],
                                               varies[s.b()], y, count));
      else
        PARTITION_RETURN_IF_ERROR(
            unaryRowF32(s.op(), s.gelu(), value[s.a()], y, count));
      roundTo(s.round(), y, count);
      value[slot] = y;
    }
    for (size_t k = 0; k < out.size(); ++k) {
      uint16_t slot = f.outputs[k];
      float *dst = writers[k].begin(start, len);
      if (varies[slot])
        std::copy(value[slot], value[slot] + len, dst);
      else
        std::fill(dst, dst + len, value[slot][0]);
      writers[k].commit();
    }
  }
  return Status::ok();
}

/// out = cond != 0 ? a : b under numpy broadcasting, moving element bits (so
/// on every dtype); C is the condition's type, T an unsigned integer of the
/// values' element size.
template <typename C, typename T>
void selectAs(const TensorRef &cond, const TensorRef &a, const TensorRef &b,
              const TensorRef &out) {
  StridedLayout l =
      makeLayout(out.shape, {broadcastStrides(cond.shape, out.shape),
                             broadcastStrides(a.shape, out.shape),
                             broadcastStrides(b.shape, out.shape)});
  // The innermost stride of each operand is 1, or 0 where it broadcasts.
  int64_t sc = l.strides[0].back(), sa = l.strides[1].back(),
          sb = l.strides[2].back(), n = l.inner();
  const C *c = static_cast<const C *>(cond.data);
  const T *x = static_cast<const T *>(a.data);
  const T *y = static_cast<const T *>(b.data);
  T *z = static_cast<T *>(out.data);
  forEachRow(l, {0, 0, 0}, [&](int64_t o, const Shape &off) {
    const C *cr = c + off[0];
    const T *xr = x + off[1], *yr = y + off[2];
    T *zr = z + o;
    for (int64_t i = 0; i < n; ++i)
      zr[i] = cr[i * sc] != 0 ? xr[i * sa] : yr[i * sb];
  });
}

template <typename C>
void selectWithCondition(const TensorRef &cond, const TensorRef &a,
                         const TensorRef &b, const TensorRef &out) {
  switch (dtypeSize(a.dtype)) {
  case 2:
    return selectAs<C, uint16_t>(cond, a, b, out);
  case 4:
    return selectAs<C, uint32_t>(cond, a, b, out);
  default:
    return selectAs<C, uint64_t>(cond, a, b, out);
  }
}

Status select(const TensorRef &cond, const TensorRef &a, const TensorRef &b,
              const TensorRef &out) {
  if (cond.dtype == DType::I64)
    selectWithCondition<int64_t>(cond, a, b, out);
  else
    selectWithCondition<int32_t>(cond, a, b, out);
  return Status::ok();
}

/// out = f(a, b) ? 1 : 0 (i32) under numpy broadcasting. T is float for the
/// float dtypes (f16 and bf16 widen to f32 exactly, so comparisons are
/// exact) and the integer type otherwise.
template <typename T, typename F>
void compareWith(const TensorRef &a, const TensorRef &b, const TensorRef &out,
                 F f) {
  StridedLayout l = binaryLayout(a, b, out);
  bool aStep = l.strides[0].back() != 0, bStep = l.strides[1].back() != 0;
  int64_t n = l.inner();
  int32_t *z = static_cast<int32_t *>(out.data);
  F32Reader ra(a), rb(b);
  forEachRow(l, {0, 0}, [&](int64_t o, const Shape &off) {
    const T *x, *y;
    if constexpr (std::is_same_v<T, float>) {
      x = ra.read(off[0], aStep ? n : 1);
      y = rb.read(off[1], bStep ? n : 1);
    } else {
      x = static_cast<const T *>(a.data) + off[0];
      y = static_cast<const T *>(b.data) + off[1];
    }
    int32_t *zr = z + o;
    for (int64_t i = 0; i < n; ++i)
      zr[i] = f(x[aStep ? i : 0], y[bStep ? i : 0]) ? 1 : 0;
  });
}

template <typename T>
Status compareAs(plan::CompareDirection direction, const TensorRef &a,
                 const TensorRef &b, const TensorRef &out) {
  using D = plan::CompareDirection;
  switch (direction) {
  case D::Eq:
    compareWith<T>(a, b, out, [](T x, T y) { return x == y; });
    break;
  case D::Ne:
    compareWith<T>(a, b, out, [](T x, T y) { return x != y; });
    break;
  case D::Lt:
    compareWith<T>(a, b, out, [](T x, T y) { return x < y; });
    break;
  case D::Le:
    compareWith<T>(a, b, out, [](T x, T y) { return x <= y; });
    break;
  case D::Gt:
    compareWith<T>(a, b, out, [](T x, T y) { return x > y; });
    break;
  default: // Ge
    compareWith<T>(a, b, out, [](T x, T y) { return x >= y; });
    break;
  }
  return Status::ok();
}

/// Compare: lhs <direction> rhs.
Status compare(const KernelAttrs &attrs, const TensorRef &a, const TensorRef &b,
               const TensorRef &out) {
  plan::CompareDirection direction = attrs.AsCompareAttrs()->direction;
  switch (a.dtype) {
  case DType::I32:
    return compareAs<int32_t>(direction, a, b, out);
  case DType::I64:
    return compareAs<int64_t>(direction, a, b, out);
  default:
    return compareAs<float>(direction, a, b, out);
  }
}

//===----------------------------------------------------------------------===//
// Casts, copies, fills
//===----------------------------------------------------------------------===//

/// Integer to integer without going through f32 (which would lose bits):
/// widening is exact, narrowing keeps the low bits.
template <typename From, typename To>
void castInt(const TensorRef &in, const TensorRef &out) {
  const From *src = static_cast<const From *>(in.data);
  To *dst = static_cast<To *>(out.data);
  for (int64_t i = 0, n = in.numElements(); i < n; ++i)
    dst[i] = static_cast<To>(src[i]);
}

Status cast(const TensorRef &in, const TensorRef &out) {
  if (in.dtype == out.dtype) {
    std::memcpy(out.data, in.data, in.numBytes());
    return Status::ok();
  }
  if (in.dtype == DType::I32 && out.dtype == DType::I64) {
    castInt<int32_t, int64_t>(in, out);
    return Status::ok();
  }
  if (in.dtype == DType::I64 && out.dtype == DType::I32) {
    castInt<int64_t, int32_t>(in, out);
    return Status::ok();
  }
  // Every other pair has a float side, and every value of it is exact in f32
  // except large integers, which f32 rounds to nearest (as the cast does).
  std::vector<float> buf(std::min(kChunk, in.numElements()));
  for (int64_t start = 0, n = in.numElements(); start < n; start += kChunk) {
    int64_t len = std::min(kChunk, n - start);
    toF32(in, start, len, buf.data());
    fromF32(buf.data(), len, out, start);
  }
  return Status::ok();
}

template <typename T>
void fillAs(const TensorRef &out, T value) {
  T *dst = static_cast<T *>(out.data);
  std::fill(dst, dst + out.numElements(), value);
}

Status fill(const KernelAttrs &attrs, const TensorRef &out) {
  float value = attrs.AsFillAttrs()->value;
  switch (out.dtype) {
  case DType::F32:
    fillAs<float>(out, value);
    break;
  case DType::F16:
    fillAs<uint16_t>(out, floatToHalf(value));
    break;
  case DType::BF16:
    fillAs<uint16_t>(out, floatToBf16(value));
    break;
  case DType::I32:
    fillAs<int32_t>(out, floatToInt<int32_t>(value));
    break;
  case DType::I64:
    fillAs<int64_t>(out, floatToInt<int64_t>(value));
    break;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// The whole of a float tensor as f32: its own memory, or a converted copy.
class F32Tensor {
public:
  explicit F32Tensor(const TensorRef &t) {
    if (t.dtype == DType::F32) {
      data_ = static_cast<const float *>(t.data);
      return;
    }
    copy.resize(t.numElements());
    toF32(t, 0, t.numElements(), copy.data());
    data_ = copy.data();
  }
  const float *data() const { return data_; }

private:
  std::vector<float> copy;
  const float *data_ = nullptr;
};

/// Runs `body(c)` on an f32 view of the whole of `out`, then stores it.
template <typename Body>
Status withF32Result(const TensorRef &out, Body &&body) {
  F32Writer w(out);
  float *c = w.begin(0, out.numElements());
  PARTITION_RETURN_IF_ERROR(body(c));
  w.commit();
  return Status::ok();
}

/// lhs [..., M, K] (transpose_a: [..., K, M]) times rhs [K, N] (transpose_b:
/// [N, K]). Without transpose_a the leading dimensions are just more rows: one
/// GEMM of (batch * M) rows; with it, each leading index is its own matrix.
Status matmul(const KernelAttrs &attrs, const TensorRef &lhs,
              const TensorRef &rhs, const TensorRef &out) {
  bool ta = attrs.AsMatmulAttrs()->transpose_a;
  bool tb = attrs.AsMatmulAttrs()->transpose_b;
  int64_t r = lhs.rank();
  int64_t m = lhs.shape[ta ? r - 1 : r - 2], k = lhs.shape[ta ? r - 2 : r - 1];
  int64_t n = rhs.shape[tb ? 0 : 1];
  int64_t batch = product(lhs.shape, 0, r - 2);
  F32Tensor a(lhs), b(rhs);
  return withF32Result(out, [&](float *c) -> Status {
    if (!ta)
      return gemm(false, tb, batch * m, n, k, 1.0f, a.data(), b.data(), c);
    for (int64_t i = 0; i < batch; ++i)
      PARTITION_RETURN_IF_ERROR(gemm(true, tb, m, n, k, 1.0f,
                                     a.data() + i * k * m, b.data(),
                                     c + i * m * n));
    return Status::ok();
  });
}

/// [B..., M, K] times [B..., K, N], one GEMM per batch index.
Status batchMatmul(const KernelAttrs &attrs, const TensorRef &lhs,
                   const TensorRef &rhs, const TensorRef &out) {
  bool ta = attrs.AsMatmulAttrs()->transpose_a;
  bool tb = attrs.AsMatmulAttrs()->transpose_b;
  int64_t r = lhs.rank();
  int64_t m = lhs.shape[ta ? r - 1 : r - 2], k = lhs.shape[ta ? r - 2 : r - 1];
  int64_t n = rhs.shape[tb ? r - 2 : r - 1];
  int64_t batch = product(lhs.shape, 0, r - 2);
  F32Tensor a(lhs), b(rhs);
  return withF32Result(out, [&](float *c) -> Status {
    for (int64_t i = 0; i < batch; ++i)
      PARTITION_RETURN_IF_ERROR(gemm(ta, tb, m, n, k, 1.0f,
                                     a.data() + i * m * k, b.data() + i * k * n,
                                     c + i * m * n));
    return Status::ok();
  });
}

/// The probabilities of `rows` rows of scores [rows, sk] in place: row i is
/// the query at position `position(i)`; causal, it sees keys 0..p, or with
/// a window p + 1 - window..p, and the keys it does not see get
/// probability exactly 0. Where `lse` is given, row i's log-sum-exp over
/// the keys it sees goes to lse[i].
template <typename Position>
void maskedSoftmaxRows(float *scores, int64_t rows, int64_t sk, bool causal,
                       int64_t window, Position position, float *lse) {
  for (int64_t i = 0; i < rows; ++i) {
    float *row = scores + i * sk;
    int64_t seen = causal ? position(i) + 1 : sk;
    int64_t first = window > 0 ? std::max<int64_t>(0, seen - window) : 0;
    softmaxRowInto(row + first, row + first, seen - first,
                   lse ? lse + i : nullptr);
    std::fill(row, row + first, 0.0f);
    std::fill(row + seen, row + sk, 0.0f);
  }
}

/// Attention's optional global positions: the operands query_positions
/// [Sq] and key_positions [Sk] after the others. Read only for causal
/// attention, the one mask they change; `given` false otherwise.
struct AttentionPositions {
  bool given = false;
  std::vector<int64_t> query, key;
};

/// The positions operands of Attention or AttentionGrad from operand
/// `first` on, where the kernel has them.
AttentionPositions attentionPositions(const KernelAttrs &attrs,
                                      const std::vector<TensorRef> &in,
                                      size_t first) {
  AttentionPositions p;
  if (!attrs.AsAttentionAttrs()->causal || in.size() < first + 2)
    return p;
  p.given = true;
  p.query = readIndices(in[first]);
  p.key = readIndices(in[first + 1]);
  return p;
}

/// Whether a causal query at position `query` sees the key at position
/// `key`: the key is not after it and, with a window, less than `window`
/// positions before it. The distance is taken in uint64_t, where it is
/// exact (and defined) for every key <= query.
inline bool seesKey(int64_t query, int64_t key, int64_t window) {
  return key <= query && (window <= 0 || uint64_t(query) - uint64_t(key) <
                                             static_cast<uint64_t>(window));
}

/// maskedSoftmaxRows by global positions: row i is the query at position
/// p.query[queryIndex(i)] and key j at p.key[j], in any order, so the keys a
/// row sees (seesKey) need not be one range. The others get probability
/// exactly 0; a row that sees no key gets 0 everywhere (and lse -inf).
template <typename QueryIndex>
void softmaxRowsByPositions(float *scores, int64_t rows, int64_t sk,
                            int64_t window, const AttentionPositions &p,
                            QueryIndex queryIndex, float *lse) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < rows; ++i) {
    float *row = scores + i * sk;
    int64_t position = p.query[queryIndex(i)];
    int64_t seen = 0;
    for (int64_t j = 0; j < sk; ++j) {
      bool sees = seesKey(position, p.key[j], window);
      seen += sees;
      row[j] = sees ? row[j] : kMasked; // expVec(-inf - max) is exactly 0
    }
    if (seen == 0) {
      std::fill(row, row + sk, 0.0f);
      if (lse)
        lse[i] = kMasked;
    } else {
      softmaxRowInto(row, row, sk, lse ? lse + i : nullptr);
    }
  }
}

/// The probabilities of attention's score rows in place: row i is query
/// queryIndex(i), masked by `positions` where given, else by its index.
/// Where `lse` is given (the block form), row i's log-sum-exp over the keys
/// it sees goes to lse[i]: -inf for a row that sees none.
template <typename QueryIndex>
void attentionSoftmaxRows(float *scores, int64_t rows, int64_t sk, bool causal,
                          int64_t window, const AttentionPositions &positions,
                          QueryIndex queryIndex, float *lse = nullptr) {
  if (positions.given)
    softmaxRowsByPositions(scores, rows, sk, window, positions, queryIndex,
                           lse);
  else
    maskedSoftmaxRows(scores, rows, sk, causal, window, queryIndex, lse);
}

/// The block form's probabilities of AttentionGrad's score rows in place:
/// p = exp(s - lse[i]) for the keys row i (query queryIndex(i)) sees, as
/// attentionSoftmaxRows masks them, and 0 for the others and everywhere in
/// a row whose lse is -inf. lse is the caller's log-sum-exp over every
/// block of keys, so the rows are not renormalised over this block.
template <typename QueryIndex>
void blockProbabilityRows(float *scores, int64_t rows, int64_t sk, bool causal,
                          int64_t window, const AttentionPositions &positions,
                          QueryIndex queryIndex, const float *lse) {
  for (int64_t i = 0; i < rows; ++i) {
    float *row = scores + i * sk;
    float l = lse[i];
    if (l == -std::numeric_limits<float>::infinity()) {
      std::fill(row, row + sk, 0.0f);
      continue;
    }
    int64_t query = queryIndex(i);
    int64_t position = positions.given ? positions.query[query] : query;
    for (int64_t j = 0; j < sk; ++j) {
      bool sees = positions.given ? seesKey(position, positions.key[j], window)
                                  : !causal || seesKey(query, j, window);
      row[j] = sees ? expVec(row[j] - l) : 0.0f;
    }
  }
}

/// Softmax's gradient over rows of probabilities `p` [rows, sk], in place
/// of dp: ds = scale * p * (dp - delta_i), where delta_i is rowsum(dp * p)
/// (in double) or, where `delta` is given (the block form), delta[i].
void scoreGradRows(float *dp, const float *p, int64_t rows, int64_t sk,
                   float scale, const float *delta) {
  for (int64_t i = 0; i < rows; ++i) {
    const float *pi = p + i * sk;
    float *di = dp + i * sk;
    float rowDelta;
    if (delta) {
      rowDelta = delta[i];
    } else {
      double dot = 0;
      for (int64_t j = 0; j < sk; ++j)
        dot += double(di[j]) * double(pi[j]);
      rowDelta = float(dot);
    }
    for (int64_t j = 0; j < sk; ++j)
      di[j] = scale * pi[j] * (di[j] - rowDelta);
  }
}

/// softmax(scale * Q K^T + mask) V per (batch, head). The query heads that
/// share a kv head (h / (H / Hkv)) are adjacent in memory, so their rows form
/// one [group * Sq, D] matrix and take one GEMM against that kv head. A
/// causal row at position p keeps the keys [p + 1 - window, p] (from 0
/// without a window); with positions operands, the keys at positions in
/// that range, wherever they are. The block form's second result (f32 [B,
/// H, Sq], rows in the order of the first's) takes each row's log-sum-exp.
Status attention(const KernelAttrs &attrs, const std::vector<TensorRef> &in,
                 const std::vector<TensorRef> &results) {
  const TensorRef &q = in[0], &k = in[1], &v = in[2], &out = results[0];
  float *lse =
      results.size() > 1 ? static_cast<float *>(results[1].data) : nullptr;
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2],
          d = q.shape[3];
  int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  int64_t group = heads / kvHeads, rows = group * sq;
  bool causal = attrs.AsAttentionAttrs()->causal;
  float scale = attrs.AsAttentionAttrs()->scale;
  int64_t window = attrs.AsAttentionAttrs()->window;
  AttentionPositions positions = attentionPositions(attrs, in, 3);
  int64_t blockRows = std::max<int64_t>(
      1, std::min(rows, kScoreBlock / std::max<int64_t>(sk, 1)));
  F32Reader rq(q), rk(k), rv(v);
  F32Writer w(out);
  std::vector<float> scores(blockRows * sk);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t kvh = 0; kvh < kvHeads; ++kvh) {
      int64_t kv = b * kvHeads + kvh;
      const float *keys = rk.read(kv * sk * d, sk * d);
      const float *values = rv.read(kv * sk * dv, sk * dv);
      int64_t firstRow = (b * heads + kvh * group) * sq;
      for (int64_t r0 = 0; r0 < rows; r0 += blockRows) {
        int64_t nr = std::min(blockRows, rows - r0);
        const float *queries = rq.read((firstRow + r0) * d, nr * d);
        PARTITION_RETURN_IF_ERROR(
            gemm(false, true, nr, sk, d, scale, queries, keys, scores.data()));
        attentionSoftmaxRows(
            scores.data(), nr, sk, causal, window, positions,
            [&](int64_t i) { return (r0 + i) % sq; },
            lse ? lse + firstRow + r0 : nullptr);
        float *o = w.begin((firstRow + r0) * dv, nr * dv);
        PARTITION_RETURN_IF_ERROR(
            gemm(false, false, nr, dv, sk, 1.0f, scores.data(), values, o));
        w.commit();
      }
    }
  }
  return Status::ok();
}

/// Attention's gradients per (batch, query head), in blocks of query rows
/// (at most kScoreBlock scores at once): the probabilities recomputed,
///   dv += p^T do, dp = do v^T, ds = scale * p * (dp - rowsum(dp * p)),
///   dq = ds k, dk += ds^T q,
/// the key's and value's gradients per query head ([B, H, Sk, D / Dv]),
/// summed over the blocks in f32. A key a row does not see (by index or by
/// the positions operands) has p = 0, hence ds = 0: only the softmax masks.
/// The block form (operands 6 and 7: lse and delta, f32 [B, H, Sq]) takes
/// p = exp(s - lse) and delta instead of rowsum(dp * p).
Status attentionGrad(const KernelAttrs &attrs, const std::vector<TensorRef> &in,
                     const std::vector<TensorRef> &out) {
  const TensorRef &q = in[0], &k = in[1], &v = in[2], &dy = in[3];
  bool block = in.size() == 8;
  const float *lse = block ? static_cast<const float *>(in[6].data) : nullptr;
  const float *delta = block ? static_cast<const float *>(in[7].data) : nullptr;
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2],
          d = q.shape[3];
  int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  int64_t group = heads / kvHeads;
  bool causal = attrs.AsAttentionAttrs()->causal;
  float scale = attrs.AsAttentionAttrs()->scale;
  int64_t window = attrs.AsAttentionAttrs()->window;
  AttentionPositions positions = attentionPositions(attrs, in, 4);
  int64_t blockRows = std::max<int64_t>(
      1, std::min(sq, kScoreBlock / std::max<int64_t>(sk, 1)));
  F32Reader rq(q), rk(k), rv(v), rdy(dy);
  F32Writer wq(out[0]), wk(out[1]), wv(out[2]);
  std::vector<float> p(blockRows * sk), dp(blockRows * sk);
  std::vector<float> dk(sk * d), dvalue(sk * dv);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kv = b * kvHeads + h / group, head = b * heads + h;
      const float *keys = rk.read(kv * sk * d, sk * d);
      const float *values = rv.read(kv * sk * dv, sk * dv);
      std::fill(dk.begin(), dk.end(), 0.0f);
      std::fill(dvalue.begin(), dvalue.end(), 0.0f);
      for (int64_t r0 = 0; r0 < sq; r0 += blockRows) {
        int64_t nr = std::min(blockRows, sq - r0);
        const float *queries = rq.read((head * sq + r0) * d, nr * d);
        const float *grad = rdy.read((head * sq + r0) * dv, nr * dv);
        PARTITION_RETURN_IF_ERROR(
            gemm(false, true, nr, sk, d, scale, queries, keys, p.data()));
        auto query = [&](int64_t i) { return r0 + i; };
        if (block)
          blockProbabilityRows(p.data(), nr, sk, causal, window, positions,
                               query, lse + head * sq + r0);
        else
          attentionSoftmaxRows(p.data(), nr, sk, causal, window, positions,
                               query);
        PARTITION_RETURN_IF_ERROR(
            gemm(true, false, sk, dv, nr, 1.0f, p.data(), grad,
                 dvalue.data(), 1.0f));
        PARTITION_RETURN_IF_ERROR(
            gemm(false, true, nr, sk, dv, 1.0f, grad, values, dp.data()));
        scoreGradRows(dp.data(), p.data(), nr, sk, scale,
                      block ? delta + head * sq + r0 : nullptr);
        float *dq = wq.begin((head * sq + r0) * d, nr * d);
        PARTITION_RETURN_IF_ERROR(
            gemm(false, false, nr, d, sk, 1.0f, dp.data(), keys, dq));
        wq.commit();
        PARTITION_RETURN_IF_ERROR(gemm(true, false, sk, d, nr, 1.0f,
                                       dp.data(), queries, dk.data(), 1.0f));
      }
      std::copy(dk.begin(), dk.end(), wk.begin(head * sk * d, sk * d));
      wk.commit();
      std::copy(dvalue.begin(), dvalue.end(),
                wv.begin(head * sk * dv, sk * dv));
      wv.commit();
    }
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Softmax, normalisation, rotary embedding, loss
//===----------------------------------------------------------------------===//

/// softmaxColumns' loops, on scratch it is given: `m` (inner floats, -inf),
/// `sum` (inner doubles, 0) and `inv` (inner floats). A cloned function
/// allocates nothing itself: clang's multiversioning leaves the library
/// calls of a clone (std::vector's) unresolved at -O1, as sanitizer builds
/// compile.
PARTITION_SIMD_CLONES void softmaxColumnsLoops(const float *x, float *y,
                                               int64_t dimSize, int64_t inner,
                                               float *m, double *sum,
                                               float *inv) {
  for (int64_t i = 0; i < dimSize; ++i) {
    const float *row = x + i * inner;
    for (int64_t j = 0; j < inner; ++j)
      m[j] = row[j] > m[j] ? row[j] : m[j];
  }
  for (int64_t i = 0; i < dimSize; ++i) {
    const float *row = x + i * inner;
    float *dst = y + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      dst[j] = expVec(row[j] - m[j]);
      sum[j] += dst[j];
    }
  }
  for (int64_t j = 0; j < inner; ++j)
    inv[j] = static_cast<float>(1.0 / sum[j]);
  for (int64_t i = 0; i < dimSize; ++i) {
    float *dst = y + i * inner;
    for (int64_t j = 0; j < inner; ++j)
      dst[j] *= inv[j];
  }
}

/// Softmax over dim d of x viewed as [D, inner] (inner > 1): every pass runs
/// along the contiguous inner dimension.
void softmaxColumns(const float *x, float *y, int64_t dimSize,
                    int64_t inner) {
  std::vector<float> m(inner, -std::numeric_limits<float>::infinity());
  std::vector<double> sum(inner, 0.0);
  std::vector<float> inv(inner);
  softmaxColumnsLoops(x, y, dimSize, inner, m.data(), sum.data(), inv.data());
}

Status softmax(const KernelAttrs &attrs, const TensorRef &in,
               const TensorRef &out) {
  size_t dim = attrs.AsSoftmaxAttrs()->dim;
  int64_t outer = product(in.shape, 0, dim), dimSize = in.shape[dim],
          inner = product(in.shape, dim + 1, in.shape.size());
  int64_t slab = dimSize * inner;
  F32Reader r(in);
  F32Writer w(out);
  for (int64_t o = 0; o < outer; ++o) {
    const float *x = r.read(o * slab, slab);
    float *y = w.begin(o * slab, slab);
    if (inner == 1)
      softmaxRow(x, y, dimSize);
    else
      softmaxColumns(x, y, dimSize, inner);
    w.commit();
  }
  return Status::ok();
}

/// Layer norm (two passes over each row in double: mean, then the biased
/// variance of x - mean, which keeps precision when |mean| >> std) and RMS
/// norm, both over the last dimension.
Status normalize(bool layerNorm, const KernelAttrs &attrs,
                 const std::vector<TensorRef> &inputs, const TensorRef &out) {
  const TensorRef &in = inputs[0];
  int64_t d = in.shape.back(), rows = d ? in.numElements() / d : 0;
  double eps = attrs.AsNormAttrs()->epsilon;
  F32Tensor scale(inputs[1]);
  bool hasBias = inputs.size() == 3;
  std::vector<float> bias(d, 0.0f);
  if (hasBias)
    toF32(inputs[2], 0, d, bias.data());
  F32Reader r(in);
  F32Writer w(out);
  for (int64_t row = 0; row < rows; ++row) {
    const float *x = r.read(row * d, d);
    float *y = w.begin(row * d, d);
    const float *g = scale.data();
    if (layerNorm) {
      double mean = sumRow(x, d) / d;
      double var = 0;
      for (int64_t i = 0; i < d; ++i) {
        double c = x[i] - mean;
        var += c * c;
      }
      var /= d;
      float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
      const float *b = bias.data();
      // Centred in double, so x - mean is one rounding from exact even when
      // |mean| >> std.
      for (int64_t i = 0; i < d; ++i)
        y[i] = static_cast<float>(x[i] - mean) * rstd * g[i] + b[i];
    } else {
      double sq = 0;
      for (int64_t i = 0; i < d; ++i)
        sq += static_cast<double>(x[i]) * x[i];
      float rrms = static_cast<float>(1.0 / std::sqrt(sq / d + eps));
      for (int64_t i = 0; i < d; ++i)
        y[i] = x[i] * rrms * g[i];
    }
    w.commit();
  }
  return Status::ok();
}

/// x * cos + rotate_half(x) * sin with rotate_half(x) = [-x2, x1] for
/// x = [x1, x2] (GPT-NeoX / Llama), over rows of [..., S, D].
Status rotaryEmbedding(const std::vector<TensorRef> &inputs,
                       const TensorRef &out) {
  const TensorRef &in = inputs[0];
  int64_t r = in.rank(), s = in.shape[r - 2], d = in.shape[r - 1], h = d / 2;
  int64_t rows = d ? in.numElements() / d : 0;
  F32Tensor cosTable(inputs[1]), sinTable(inputs[2]);
  F32Reader reader(in);
  F32Writer w(out);
  for (int64_t row = 0; row < rows; ++row) {
    const float *x = reader.read(row * d, d);
    float *y = w.begin(row * d, d);
    const float *c = cosTable.data() + (row % s) * d;
    const float *sn = sinTable.data() + (row % s) * d;
    for (int64_t i = 0; i < h; ++i)
      y[i] = x[i] * c[i] - x[i + h] * sn[i];
    for (int64_t i = h; i < d; ++i)
      y[i] = x[i] * c[i] + x[i - h] * sn[i];
    w.commit();
  }
  return Status::ok();
}

/// y[i] = e^(x[i] - m) over [0, n).
PARTITION_SIMD_CLONES void expShiftedRow(const float *x, float m, float *y,
                                         int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = expVec(x[i] - m);
}

/// logsumexp(logits) - logits[label] per position; mean, sum or none.
Status softmaxCrossEntropy(const KernelAttrs &attrs, const TensorRef &logits,
                           const TensorRef &labels, const TensorRef &out) {
  int64_t classes = logits.shape.back(), positions = labels.numElements();
  std::vector<int64_t> label = readIndices(labels);
  // Check every label before reading any logit: a bad one must not index
  // outside its row.
  for (int64_t p = 0; p < positions; ++p)
    if (label[p] < 0 || label[p] >= classes)
      return PARTITION_ERROR(InvalidArgument, "SoftmaxCrossEntropy: label ",
                             label[p], " at position ", p, " ",
                             formatIndex(p, labels.shape), " is outside [0, ",
                             classes, ")");
  plan::LossReduction reduction = attrs.AsCrossEntropyAttrs()->reduction;
  bool perPosition = reduction == plan::LossReduction::None;
  std::vector<float> losses(perPosition ? positions : 0);
  std::vector<float> shifted(classes);
  double total = 0;
  F32Reader r(logits);
  for (int64_t p = 0; p < positions; ++p) {
    const float *x = r.read(p * classes, classes);
    float m = maxRow(x, classes);
    expShiftedRow(x, m, shifted.data(), classes);
    double loss = m + std::log(sumRow(shifted.data(), classes)) - x[label[p]];
    if (perPosition)
      losses[p] = static_cast<float>(loss);
    else
      total += loss;
  }
  F32Writer w(out);
  if (perPosition) {
    std::copy(losses.begin(), losses.end(), w.begin(0, positions));
  } else {
    // The mean over no positions is 0/0 = NaN, as in PyTorch.
    *w.begin(0, 1) =
        static_cast<float>(reduction == plan::LossReduction::Mean
                               ? total / static_cast<double>(positions)
                               : total);
  }
  w.commit();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Sum, mean or max over the dims of ReduceAttrs (the result shape, kept or
/// dropped dims, has the same element order either way). Input rows run along
/// the innermost merged dimension: a reduced one collapses into one
/// accumulator, a kept one adds elementwise into a row of accumulators. Sums
/// accumulate in double.
Status reduce(OpKind op, const KernelAttrs &attrs, const TensorRef &in,
              const TensorRef &out) {
  std::vector<bool> reduced(in.rank(), false);
  int64_t count = 1;
  for (int64_t d : attrs.AsReduceAttrs()->dims) {
    reduced[d] = true;
    count *= in.shape[d];
  }
  bool isMax = op == OpKind::ReduceMax;
  double init = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> acc(out.numElements(), init);
  if (in.numElements() > 0) {
    // Merged dimensions, each all reduced or all kept; size-1 ones dropped.
    Shape shape, outStride;
    std::vector<bool> isReduced;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (in.shape[d] == 1)
        continue;
      if (!shape.empty() && isReduced.back() == reduced[d]) {
        shape.back() *= in.shape[d];
      } else {
        shape.push_back(in.shape[d]);
        isReduced.push_back(reduced[d]);
      }
    }
    if (shape.empty()) {
      shape.push_back(1);
      isReduced.push_back(false);
    }
    outStride.assign(shape.size(), 0);
    for (int64_t d = shape.size(), stride = 1; d-- > 0;) {
      if (!isReduced[d]) {
        outStride[d] = stride;
        stride *= shape[d];
      }
    }
    StridedLayout l;
    l.shape = shape;
    l.strides = {outStride};
    int64_t n = l.inner();
    bool innerReduced = isReduced.back();
    F32Reader r(in);
    forEachRow(l, {0}, [&](int64_t inOffset, const Shape &off) {
      const float *x = r.read(inOffset, n);
      double *a = acc.data() + off[0];
      if (innerReduced) {
        if (isMax)
          a[0] = maxOf<double>(a[0], maxRow(x, n));
        else
          a[0] += sumRow(x, n);
      } else if (isMax) {
        for (int64_t i = 0; i < n; ++i)
          a[i] = (x[i] > a[i] || x[i] != x[i]) ? x[i] : a[i];
      } else {
        for (int64_t i = 0; i < n; ++i)
          a[i] += x[i];
      }
    });
  }
  F32Writer w(out);
  float *y = w.begin(0, out.numElements());
  // Mean over an empty dimension is 0/0 = NaN.
  double divisor = op == OpKind::ReduceMean ? static_cast<double>(count) : 1.0;
  for (size_t i = 0; i < acc.size(); ++i)
    y[i] = static_cast<float>(acc[i] / divisor);
  w.commit();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

Status transpose(const KernelAttrs &attrs, const TensorRef &in,
                 const TensorRef &out) {
  Shape inStrides = contiguousStrides(in.shape), strides;
  for (int64_t p : attrs.AsTransposeAttrs()->permutation)
    strides.push_back(inStrides[p]);
  stridedCopy(in, out, makeLayout(out.shape, {strides}), 0);
  return Status::ok();
}

Status broadcast(const TensorRef &in, const TensorRef &out) {
  stridedCopy(in, out,
              makeLayout(out.shape, {broadcastStrides(in.shape, out.shape)}),
              0);
  return Status::ok();
}

Status slice(const KernelAttrs &attrs, const TensorRef &in,
             const TensorRef &out) {
  int64_t r = in.rank(), base = 0;
  Shape inStrides = contiguousStrides(in.shape), strides(r);
  const plan::SliceAttrsT &window = *attrs.AsSliceAttrs();
  for (int64_t d = 0; d < r; ++d) {
    base += window.offsets[d] * inStrides[d];
    strides[d] = window.strides[d] * inStrides[d];
  }
  stridedCopy(in, out, makeLayout(out.shape, {strides}), base);
  return Status::ok();
}

Status concat(const KernelAttrs &attrs, const std::vector<TensorRef> &inputs,
              const TensorRef &out) {
  size_t dim = attrs.AsAxisAttrs()->axis;
  int64_t elem = dtypeSize(out.dtype);
  int64_t outer = product(out.shape, 0, dim);
  int64_t innerBytes = product(out.shape, dim + 1, out.shape.size()) * elem;
  char *dst = static_cast<char *>(out.data);
  for (int64_t o = 0; o < outer; ++o) {
    for (const TensorRef &in : inputs) {
      int64_t bytes = in.shape[dim] * innerBytes;
      if (bytes == 0)
        continue;
      std::memcpy(dst, static_cast<const char *>(in.data) + o * bytes, bytes);
      dst += bytes;
    }
  }
  return Status::ok();
}

Status gather(const KernelAttrs &attrs, const TensorRef &data,
              const TensorRef &indices, const TensorRef &out) {
  size_t axis = attrs.AsAxisAttrs()->axis;
  int64_t outer = product(data.shape, 0, axis), limit = data.shape[axis];
  int64_t innerBytes =
      product(data.shape, axis + 1, data.shape.size()) * dtypeSize(data.dtype);
  std::vector<int64_t> index = readIndices(indices);
  int64_t count = static_cast<int64_t>(index.size());
  // Check every index before copying: a bad one must not read outside data.
  for (int64_t p = 0; p < count; ++p)
    if (index[p] < 0 || index[p] >= limit)
      return PARTITION_ERROR(
          InvalidArgument, "Gather: index ", index[p], " at position ", p, " ",
          formatIndex(p, indices.shape), " is outside [0, ", limit,
          ") of data axis ", axis, " ", formatShape(data.shape));
  const char *src = static_cast<const char *>(data.data);
  char *dst = static_cast<char *>(out.data);
  for (int64_t o = 0; o < outer; ++o) {
    const char *block = src + o * limit * innerBytes;
    for (int64_t p = 0; p < count; ++p, dst += innerBytes)
      std::memcpy(dst, block + index[p] * innerBytes, innerBytes);
  }
  return Status::ok();
}

/// dst[i * stride] = src[i] for i < n, by element bits.
template <typename T>
void scatterRow(const T *src, T *dst, int64_t stride, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, n * sizeof(T));
  } else {
    for (int64_t i = 0; i < n; ++i)
      dst[i * stride] = src[i];
  }
}

template <typename T>
void padAs(const TensorRef &in, const TensorRef &out, const StridedLayout &l,
           int64_t base) {
  const T *src = static_cast<const T *>(in.data);
  T *dst = static_cast<T *>(out.data);
  int64_t stride = l.strides[0].back(), n = l.inner();
  forEachRow(l, {base}, [&](int64_t o, const Shape &off) {
    scatterRow(src + o, dst + off[0], stride, n);
  });
}

/// Zeros, with the operand written at offsets + i * strides: a slice with
/// the roles of source and destination swapped (the operand is walked in
/// order, the result at the strides).
Status pad(const KernelAttrs &attrs, const TensorRef &in,
           const TensorRef &out) {
  std::memset(out.data, 0, out.numBytes());
  if (in.numElements() == 0)
    return Status::ok();
  int64_t r = in.rank(), base = 0;
  Shape outStrides = contiguousStrides(out.shape), strides(r);
  const plan::SliceAttrsT &window = *attrs.AsSliceAttrs();
  for (int64_t d = 0; d < r; ++d) {
    base += window.offsets[d] * outStrides[d];
    strides[d] = window.strides[d] * outStrides[d];
  }
  StridedLayout l = makeLayout(in.shape, {strides});
  switch (dtypeSize(in.dtype)) {
  case 2:
    padAs<uint16_t>(in, out, l, base);
    break;
  case 4:
    padAs<uint32_t>(in, out, l, base);
    break;
  default:
    padAs<uint64_t>(in, out, l, base);
    break;
  }
  return Status::ok();
}

/// Zeros of the result's shape [outer, limit, inner], plus each update row
/// [outer, count, inner] at its index. Sums accumulate in double, in index
/// order, so duplicates give the same bits on every run. Only the rows that
/// some index hits are summed, one at a time in a row of doubles: an
/// embedding's gradient (a few hundred token rows of a vocabulary of
/// thousands) neither allocates nor touches a double for every element.
Status scatterAdd(const KernelAttrs &attrs, const TensorRef &updates,
                  const TensorRef &indices, const TensorRef &out) {
  size_t axis = attrs.AsAxisAttrs()->axis;
  int64_t outer = product(out.shape, 0, axis), limit = out.shape[axis];
  int64_t inner = product(out.shape, axis + 1, out.shape.size());
  std::vector<int64_t> index = readIndices(indices);
  int64_t count = static_cast<int64_t>(index.size());
  // Check every index before adding: a bad one must not write outside out.
  for (int64_t p = 0; p < count; ++p)
    if (index[p] < 0 || index[p] >= limit)
      return PARTITION_ERROR(
          InvalidArgument, "ScatterAdd: index ", index[p], " at position ", p,
          " ", formatIndex(p, indices.shape), " is outside [0, ", limit,
          ") of result axis ", axis, " ", formatShape(out.shape));
  // The positions that hit each result row, in increasing order: a list
  // per row through `next`, from `first` to `last` (-1: none).
  std::vector<int64_t> first(limit, -1), last(limit, -1), next(count, -1);
  for (int64_t p = 0; p < count; ++p) {
    int64_t t = index[p];
    (last[t] < 0 ? first[t] : next[last[t]]) = p;
    last[t] = p;
  }
  std::vector<double> acc(inner);
  F32Reader r(updates);
  F32Writer w(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t t = 0; t < limit; ++t) {
      float *y = w.begin((o * limit + t) * inner, inner);
      if (first[t] < 0) {
        std::fill(y, y + inner, 0.0f);
      } else {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t p = first[t]; p >= 0; p = next[p]) {
          const float *u = r.read((o * count + p) * inner, inner);
          for (int64_t q = 0; q < inner; ++q)
            acc[q] += u[q];
        }
        for (int64_t q = 0; q < inner; ++q)
          y[q] = static_cast<float>(acc[q]);
      }
      w.commit();
    }
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Mixture-of-experts routing (docs/design/2026-12-07-experts.md)
//===----------------------------------------------------------------------===//

/// The K largest of each row of the last dimension, descending; NaN first,
/// equal values in index order. Values are copied bit for bit.
Status topK(const TensorRef &in, const TensorRef &values,
            const TensorRef &indices) {
  int64_t n = in.shape.back(), k = values.shape.back();
  int64_t rows = n ? in.numElements() / n : 0, elem = dtypeSize(in.dtype);
  F32Reader r(in);
  std::vector<int64_t> order(n);
  const char *src = static_cast<const char *>(in.data);
  char *dst = static_cast<char *>(values.data);
  int64_t *idx = static_cast<int64_t *>(indices.data);
  for (int64_t row = 0; row < rows; ++row) {
    const float *x = r.read(row * n, n);
    std::iota(order.begin(), order.end(), int64_t(0));
    auto before = [&](int64_t a, int64_t b) {
      bool nanA = x[a] != x[a], nanB = x[b] != x[b];
      if (nanA != nanB)
        return nanA;
      if (!nanA && x[a] != x[b])
        return x[a] > x[b];
      return a < b;
    };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (int64_t j = 0; j < k; ++j) {
      idx[row * k + j] = order[j];
      std::memcpy(dst + (row * k + j) * elem, src + (row * n + order[j]) * elem,
                  elem);
    }
  }
  return Status::ok();
}

/// Where expert_dispatch puts each slot [G, S, K] of `indices` in a buffer
/// of `experts` x `capacity` per group: the row (e * G + g) * C + p, or -1
/// for a dropped slot. Slots are placed k-major within a group.
StatusOr<std::vector<int64_t>> slotRows(const TensorRef &indices,
                                        int64_t experts, int64_t capacity) {
  int64_t groups = indices.shape[0], s = indices.shape[1],
          k = indices.shape[2];
  std::vector<int64_t> index = readIndices(indices), rows(index.size(), -1);
  std::vector<int64_t> filled(experts);
  for (int64_t g = 0; g < groups; ++g) {
    std::fill(filled.begin(), filled.end(), 0);
    for (int64_t j = 0; j < k; ++j)
      for (int64_t t = 0; t < s; ++t) {
        int64_t slot = (g * s + t) * k + j, e = index[slot];
        if (e < 0 || e >= experts)
          return PARTITION_ERROR(InvalidArgument, "expert index ", e,
                                 " at position ", slot, " ",
                                 formatIndex(slot, indices.shape),
                                 " is outside [0, ", experts, ")");
        if (filled[e] < capacity)
          rows[slot] = (e * groups + g) * capacity + filled[e]++;
      }
  }
  return rows;
}

/// ExpertDispatch (slots -> buffer) and ExpertCombine (buffer -> slots):
/// row copies by element bits, zeros where nothing lands.
Status route(OpKind op, const TensorRef &in, const TensorRef &indices,
             const TensorRef &out) {
  bool dispatch = op == OpKind::ExpertDispatch;
  const TensorRef &buffer = dispatch ? out : in;
  const TensorRef &slots = dispatch ? in : out;
  StatusOr<std::vector<int64_t>> rows =
      slotRows(indices, buffer.shape[0], buffer.shape[2]);
  if (!rows.isOk())
    return rows.status().withContext(opKindName(op));
  int64_t rowBytes = buffer.shape[3] * dtypeSize(buffer.dtype);
  int64_t k = indices.shape[2];
  // The token form [G, S, H] of a dispatch reads one row per token.
  bool perToken = slots.rank() == 3;
  std::memset(out.data, 0, out.numBytes());
  char *bufferData = static_cast<char *>(buffer.data);
  char *slotData = static_cast<char *>(slots.data);
  for (size_t slot = 0; slot < rows->size(); ++slot) {
    int64_t row = (*rows)[slot];
    if (row < 0)
      continue;
    char *slotRow = slotData + (perToken ? slot / k : slot) * rowBytes;
    char *bufferRow = bufferData + row * rowBytes;
    if (dispatch)
      std::memcpy(bufferRow, slotRow, rowBytes);
    else
      std::memcpy(slotRow, bufferRow, rowBytes);
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

Status dispatch(OpKind op, const KernelAttrs &attrs,
                const std::vector<TensorRef> &in,
                const std::vector<TensorRef> &out) {
  switch (op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Pow:
    return binary(op, in[0], in[1], out[0]);
  case OpKind::Neg:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Cos:
  case OpKind::Sin:
  case OpKind::Sigmoid:
  case OpKind::Relu:
  case OpKind::Silu:
  case OpKind::Gelu:
    return unary(op, attrs, in[0], out[0]);
  case OpKind::Select:
    return select(in[0], in[1], in[2], out[0]);
  case OpKind::Cast:
    return cast(in[0], out[0]);
  case OpKind::Matmul:
    return matmul(attrs, in[0], in[1], out[0]);
  case OpKind::BatchMatmul:
    return batchMatmul(attrs, in[0], in[1], out[0]);
  case OpKind::Softmax:
    return softmax(attrs, in[0], out[0]);
  case OpKind::LayerNorm:
    return normalize(/*layerNorm=*/true, attrs, in, out[0]);
  case OpKind::RmsNorm:
    return normalize(/*layerNorm=*/false, attrs, in, out[0]);
  case OpKind::RotaryEmbedding:
    return rotaryEmbedding(in, out[0]);
  case OpKind::Attention:
    return attention(attrs, in, out);
  case OpKind::AttentionGrad:
    return attentionGrad(attrs, in, out);
  case OpKind::SoftmaxCrossEntropy:
    return softmaxCrossEntropy(attrs, in[0], in[1], out[0]);
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
    return reduce(op, attrs, in[0], out[0]);
  case OpKind::Transpose:
    return transpose(attrs, in[0], out[0]);
  case OpKind::Broadcast:
    return broadcast(in[0], out[0]);
  case OpKind::Slice:
    return slice(attrs, in[0], out[0]);
  case OpKind::Concat:
    return concat(attrs, in, out[0]);
  case OpKind::Gather:
    return gather(attrs, in[0], in[1], out[0]);
  case OpKind::Copy:
    std::memcpy(out[0].data, in[0].data, in[0].numBytes());
    return Status::ok();
  case OpKind::Fill:
    return fill(attrs, out[0]);
  case OpKind::Pad:
    return pad(attrs, in[0], out[0]);
  case OpKind::ScatterAdd:
    return scatterAdd(attrs, in[0], in[1], out[0]);
  case OpKind::Compare:
    return compare(attrs, in[0], in[1], out[0]);
  case OpKind::Fused:
    return fused(attrs, in, out);
  case OpKind::TopK:
    return topK(in[0], out[0], out[1]);
  case OpKind::ExpertDispatch:
  case OpKind::ExpertCombine:
    return route(op, in[0], in[1], out[0]);
  }
  return PARTITION_ERROR(Unimplemented, "the CPU backend has no kernel for ",
                         opKindName(op));
}

class CpuKernels final : public Kernels {
public:
  Status run(OpKind op, const KernelAttrs &attrs,
             const std::vector<TensorRef> &inputs,
             const std::vector<TensorRef> &outputs, Stream &) override {
    // Plans are validated on load, but the kernels index memory by these
    // shapes: checking again (cheap next to any kernel) turns a caller that
    // skipped validation into an error instead of a stray write.
    PARTITION_RETURN_IF_ERROR(checkKernelShapes(op, attrs, inputs, outputs));
    for (const std::vector<TensorRef> *list : {&inputs, &outputs})
      for (const TensorRef &t : *list)
        if (!t.data && t.numElements() > 0)
          return PARTITION_ERROR(InvalidArgument, opKindName(op),
                                 ": a tensor of shape ", formatShape(t.shape),
                                 " has no data");
    // Results with no elements need no work (and some loops below assume at
    // least one row).
    if (outputs[0].numElements() == 0)
      return Status::ok();
    try {
      return dispatch(op, attrs, inputs, outputs);
    } catch (const std::bad_alloc &) {
      return PARTITION_ERROR(ResourceExhausted, opKindName(op),
                             ": out of host memory for scratch buffers");
    }
  }
};

} // namespace

std::unique_ptr<Kernels> partition::runtime::cpu::createCpuKernels() {
  return std::make_unique<CpuKernels>();
}
