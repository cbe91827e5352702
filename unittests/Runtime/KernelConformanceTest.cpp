//===- KernelConformanceTest.cpp - every kernel against a reference -------===//
//
// Runs every plan::OpKind on every backend with a usable device ("cpu"
// always, "cuda" where a GPU is present) and compares the results with a
// straightforward reference written here: naive loops in double precision on
// the very values the kernel reads (inputs are drawn and then rounded to their
// dtype, so the reference sees no rounding the kernel does not).
//
// Memory is allocated with Device::allocate and moved with copyToDevice /
// copyToHost, so nothing here assumes host memory. Result buffers start as
// 0xff bytes (NaN, or -1 for integers) so an element a kernel never writes
// shows up.
//
// Tolerances are error bounds, derived per op next to each test, never fitted
// to what a backend happens to produce:
//  - Data movement (Copy, Transpose, Broadcast, Slice, Pad, Concat, Gather,
//    Fill, Select), Compare, Cast, Neg, Relu, Max, Min and ReduceMax are
//    exact: tolerance 0.
//  - Everything else is bounded in units of the f32 unit roundoff u = 2^-24
//    (the contract is "f16 and bf16 are computed in f32"), using the standard
//    worst-case bounds (e.g. gamma_n = n u for a sum of n terms in any order,
//    so a backend may sum in any order, with or without FMA), and libm-style
//    functions (exp, log, tanh, erf, cos, sin, pow, rsqrt) are allowed
//    kLibmUlps = 4 ulp (see there).
//  - An f16 or bf16 result is then rounded once more into its dtype: that
//    adds u(dtype) = 2^-11 or 2^-8 of the value (see stored()).
//  - Bounds are first order; the neglected O(u^2) terms are below 1e-12
//    relative.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Backends.h"
#include "partition/runtime/DType.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

using namespace partition::runtime;
namespace plan = partition::plan;

namespace {

using Shape = std::vector<int64_t>;

constexpr DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16};
constexpr DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32,
                               DType::I64};

//===----------------------------------------------------------------------===//
// Shapes and indices
//===----------------------------------------------------------------------===//

int64_t numel(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Multi-index of flat position `flat` in a row-major `shape`.
Shape unravel(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

/// Flat position of `index` in a row-major `shape`.
int64_t ravel(const Shape &index, const Shape &shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + index[i];
  return flat;
}

/// numpy broadcast of two shapes (the test cases are compatible).
Shape broadcastShape(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    result[i] = x == 1 ? y : x;
  }
  return result;
}

/// Flat position in an operand of `shape` of the element that broadcasts to
/// result index `index`.
int64_t broadcastSource(const Shape &index, const Shape &shape) {
  size_t lead = index.size() - shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + (shape[i] == 1 ? 0 : index[lead + i]);
  return flat;
}

std::string str(const Shape &shape) { return formatShape(shape); }

//===----------------------------------------------------------------------===//
// Number formats, written independently of the runtime's conversions so that
// the tests check those too
//===----------------------------------------------------------------------===//

/// Rounds `x` to nearest (ties to even) in a binary format with `precision`
/// significand bits, smallest normal exponent `minExponent` (below it,
/// subnormals keep that exponent's spacing) and largest finite `maxFinite`.
double roundToFormat(double x, int precision, int minExponent,
                     double maxFinite) {
  if (!std::isfinite(x) || x == 0)
    return x;
  int e;
  std::frexp(x, &e); // |x| = f * 2^e with f in [0.5, 1)
  int exponent = std::max(e - 1, minExponent);
  double quantum = std::ldexp(1.0, exponent - (precision - 1));
  double r = std::nearbyint(x / quantum) * quantum; // default mode: to even
  if (std::fabs(r) > maxFinite)
    return std::copysign(INFINITY, x);
  return r;
}

/// `x` rounded to the nearest value of `t` (integers: `x` itself).
double roundTo(DType t, double x) {
  switch (t) {
  case DType::F32:
    return roundToFormat(x, 24, -126, FLT_MAX);
  case DType::F16:
    return roundToFormat(x, 11, -14, 65504.0);
  case DType::BF16:
    return roundToFormat(x, 8, -126, 0x1.fep127);
  default:
    return x;
  }
}

/// IEEE binary16 bits of `v`, which must be exactly representable.
uint16_t encodeF16(double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (std::isnan(v))
    return 0x7e00;
  if (std::isinf(v))
    return sign | 0x7c00;
  if (a < 0x1p-14) // subnormal or zero: a multiple of 2^-24
    return sign | static_cast<uint16_t>(a * 0x1p24);
  int e;
  std::frexp(a, &e);
  int exponent = e - 1;
  auto mantissa = static_cast<uint16_t>((std::ldexp(a, -exponent) - 1) * 1024);
  return sign | static_cast<uint16_t>((exponent + 15) << 10) | mantissa;
}

double decodeF16(uint16_t h) {
  double sign = (h & 0x8000) ? -1 : 1;
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  if (exponent == 0x1f)
    return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

/// A tensor on the host: each value exactly representable in `dtype`.
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> values;
};

HostTensor emptyTensor(DType dtype, const Shape &shape) {
  return {dtype, shape, std::vector<double>(numel(shape), 0.0)};
}

std::vector<uint8_t> encode(const HostTensor &t) {
  size_t size = dtypeSize(t.dtype);
  std::vector<uint8_t> bytes(t.values.size() * size);
  for (size_t i = 0; i < t.values.size(); ++i) {
    uint8_t *dst = bytes.data() + i * size;
    double v = t.values[i];
    switch (t.dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(dst, &f, 4);
      break;
    }
    case DType::F16: {
      uint16_t h = encodeF16(v);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::BF16: { // the upper half of the (exact) f32 bits
      float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::I32: {
      auto x = static_cast<int32_t>(v);
      std::memcpy(dst, &x, 4);
      break;
    }
    case DType::I64: {
      auto x = static_cast<int64_t>(v);
      std::memcpy(dst, &x, 8);
      break;
    }
    }
  }
  return bytes;
}

void decode(const std::vector<uint8_t> &bytes, HostTensor &t) {
  size_t size = dtypeSize(t.dtype);
  for (size_t i = 0; i < t.values.size(); ++i) {
    const uint8_t *src = bytes.data() + i * size;
    switch (t.dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, src, 4);
      t.values[i] = f;
      break;
    }
    case DType::F16: {
      uint16_t h;
      std::memcpy(&h, src, 2);
      t.values[i] = decodeF16(h);
      break;
    }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, src, 2);
      uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      t.values[i] = f;
      break;
    }
    case DType::I32: {
      int32_t x;
      std::memcpy(&x, src, 4);
      t.values[i] = x;
      break;
    }
    case DType::I64: {
      int64_t x;
      std::memcpy(&x, src, 8);
      t.values[i] = static_cast<double>(x);
      break;
    }
    }
  }
}

/// Deterministic test data.
class Random {
public:
  explicit Random(uint64_t seed) : gen(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  int64_t integer(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(gen);
  }

private:
  std::mt19937_64 gen;
};

/// Values drawn uniformly from [lo, hi] and rounded to `dtype` (integers:
/// integers in [lo, hi]); with `awayFromZero`, |value| >= lo > 0 with a random
/// sign.
HostTensor randomTensor(Random &rng, DType dtype, const Shape &shape, double lo,
                        double hi, bool awayFromZero = false) {
  HostTensor t = emptyTensor(dtype, shape);
  for (double &v : t.values) {
    if (isFloat(dtype))
      v = roundTo(dtype, rng.uniform(lo, hi));
    else
      v = static_cast<double>(
          rng.integer(static_cast<int64_t>(lo), static_cast<int64_t>(hi)));
    if (awayFromZero && rng.integer(0, 1))
      v = -v;
  }
  return t;
}

/// Integer range for data-movement tests: i64 values beyond 32 bits catch a
/// kernel that moves 4 bytes per element.
std::pair<double, double> dataRange(DType dtype) {
  if (dtype == DType::I64)
    return {-0x1p40, 0x1p40};
  if (dtype == DType::I32)
    return {-100000, 100000};
  return {-2, 2};
}

HostTensor dataTensor(Random &rng, DType dtype, const Shape &shape) {
  auto [lo, hi] = dataRange(dtype);
  return randomTensor(rng, dtype, shape, lo, hi);
}

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

/// f32 unit roundoff: the relative error of one rounding to nearest.
constexpr double kU = 0x1p-24;
/// One f32 ulp relative to the value: ulp(r) <= 2^-23 |r| for normal r.
constexpr double kUlp = 0x1p-23;
/// The error allowed to exp, log, tanh, erf, cos, sin, pow and rsqrt in f32,
/// in ulp. CUDA's programming guide lists 1 to 2 ulp for expf, logf, tanhf,
/// erff, cosf, sinf and rsqrtf (measured, not proven, bounds) and glibc
/// documents at most 1 to 2 ulp for its float versions; 4 leaves the same
/// room for powf, whose figure is the least certain.
constexpr double kLibmUlps = 4;

double unitRoundoff(DType t) {
  switch (t) {
  case DType::F16:
    return 0x1p-11;
  case DType::BF16:
    return 0x1p-8;
  default:
    return kU;
  }
}

/// Half the spacing of the format's subnormals: the absolute error of
/// rounding a value too small for relative precision.
double tinyError(DType t) {
  switch (t) {
  case DType::F16:
    return 0x1p-25;
  case DType::BF16:
    return 0x1p-134;
  default:
    return 0x1p-150;
  }
}

/// Error bound of a result computed in f32 to within `e` of `exact` and then
/// stored in `t`: f32 results are stored as computed (their bound `e` already
/// counts the last rounding); f16 and bf16 ones are rounded once more, by at
/// most u(t) of the computed value.
double stored(DType t, double exact, double e) {
  if (t == DType::F32)
    return e + tinyError(t);
  return e + unitRoundoff(t) * (std::fabs(exact) + e) + tinyError(t);
}

std::vector<double> zeros(size_t n) { return std::vector<double>(n, 0.0); }

//===----------------------------------------------------------------------===//
// The fixture
//===----------------------------------------------------------------------===//

/// Whole-number tokens of `text` ("-77", "13"), to check that a message names
/// a value without fixing its wording.
std::set<std::string> numberTokens(const std::string &text) {
  std::set<std::string> tokens;
  std::string current;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ' ';
    bool digit = c >= '0' && c <= '9';
    if (digit || (c == '-' && current.empty() && i + 1 < text.size() &&
                  text[i + 1] >= '0' && text[i + 1] <= '9')) {
      current += c;
    } else if (!current.empty()) {
      tokens.insert(current);
      current.clear();
    }
  }
  return tokens;
}

class KernelConformanceTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Device>> created = createDevice(GetParam());
    ASSERT_TRUE(created.isOk()) << created.status().toString();
    device = std::move(created).value();
    StatusOr<std::unique_ptr<Stream>> s = device->createStream();
    ASSERT_TRUE(s.isOk()) << s.status().toString();
    stream = std::move(s).value();
  }

  /// Runs `op` on the backend: uploads `inputs`, checks the case with
  /// checkKernelShapes (a case that fails it is a broken test), runs the
  /// kernel and downloads `outputs`, which come in with dtype and shape. A
  /// backend may report a kernel's error from run() or, asynchronously, from
  /// the next synchronization: either is returned.
  Status runKernel(OpKind op, const KernelAttrs &attrs,
                   const std::vector<HostTensor> &inputs,
                   std::vector<HostTensor> &outputs) {
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<std::vector<uint8_t>> staging; // alive until synchronized
    std::vector<TensorRef> in, out;
    auto place = [&](const HostTensor &t, bool poison,
                     std::vector<TensorRef> &refs) -> Status {
      staging.push_back(poison ? std::vector<uint8_t>(
                                     numel(t.shape) * dtypeSize(t.dtype), 0xff)
                               : encode(t));
      const std::vector<uint8_t> &bytes = staging.back();
      PARTITION_ASSIGN_OR_RETURN(
          std::unique_ptr<Buffer> buffer,
          device->allocate(std::max<size_t>(bytes.size(), 1)));
      PARTITION_RETURN_IF_ERROR(device->copyToDevice(
          buffer->data(), bytes.data(), bytes.size(), *stream));
      refs.push_back(TensorRef{buffer->data(), t.dtype, t.shape});
      buffers.push_back(std::move(buffer));
      return Status::ok();
    };
    for (const HostTensor &t : inputs)
      PARTITION_RETURN_IF_ERROR(place(t, /*poison=*/false, in));
    for (const HostTensor &t : outputs)
      PARTITION_RETURN_IF_ERROR(place(t, /*poison=*/true, out));

    Status shapes = checkKernelShapes(op, attrs, in, out);
    EXPECT_TRUE(shapes.isOk())
        << "the test case fails checkKernelShapes: " << shapes.toString();
    PARTITION_RETURN_IF_ERROR(shapes);

    Status status = device->kernels().run(op, attrs, in, out, *stream);
    Status synced = stream->synchronize();
    PARTITION_RETURN_IF_ERROR(status);
    PARTITION_RETURN_IF_ERROR(synced);

    std::vector<std::vector<uint8_t>> results;
    for (size_t i = 0; i < outputs.size(); ++i) {
      results.emplace_back(out[i].numBytes());
      PARTITION_RETURN_IF_ERROR(device->copyToHost(
          results.back().data(), out[i].data, out[i].numBytes(), *stream));
    }
    PARTITION_RETURN_IF_ERROR(stream->synchronize());
    for (size_t i = 0; i < outputs.size(); ++i)
      decode(results[i], outputs[i]);
    return Status::ok();
  }

  /// runKernel, recording a failure when it returns an error.
  bool runOk(OpKind op, const KernelAttrs &attrs,
             const std::vector<HostTensor> &inputs,
             std::vector<HostTensor> &outputs) {
    Status status = runKernel(op, attrs, inputs, outputs);
    EXPECT_TRUE(status.isOk()) << status.toString();
    return status.isOk();
  }

  /// Expects an InvalidArgument error whose message names `value` and
  /// `position` (as whole numbers; the wording is the backend's).
  void expectRejected(OpKind op, const KernelAttrs &attrs,
                      const std::vector<HostTensor> &inputs,
                      std::vector<HostTensor> &outputs, int64_t value,
                      int64_t position) {
    Status status = runKernel(op, attrs, inputs, outputs);
    ASSERT_FALSE(status.isOk())
        << "value " << value << " at position " << position << " was accepted";
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
    std::set<std::string> tokens = numberTokens(status.message());
    EXPECT_TRUE(tokens.count(std::to_string(value)))
        << "the message does not name the value " << value << ": "
        << status.toString();
    EXPECT_TRUE(tokens.count(std::to_string(position)))
        << "the message does not name the position " << position << ": "
        << status.toString();
  }

  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;
};

/// Expects |actual[i] - expected[i]| <= tol[i] for every element; NaN must
/// meet NaN and an infinity the same infinity. Reports the count and the
/// first few offenders.
void expectClose(const HostTensor &actual, const std::vector<double> &expected,
                 const std::vector<double> &tol) {
  ASSERT_EQ(actual.values.size(), expected.size());
  ASSERT_EQ(tol.size(), expected.size());
  int64_t bad = 0;
  std::ostringstream details;
  details << std::setprecision(9);
  for (size_t i = 0; i < expected.size(); ++i) {
    double a = actual.values[i], e = expected[i];
    bool ok;
    if (std::isnan(e))
      ok = std::isnan(a);
    else if (std::isinf(e))
      ok = a == e;
    else
      ok = std::fabs(a - e) <= tol[i]; // false for NaN
    if (!ok && bad++ < 5)
      details << "  at " << str(unravel(i, actual.shape)) << ": got " << a
              << ", expected " << e << ", |error| " << std::fabs(a - e)
              << " > tolerance " << tol[i] << "\n";
  }
  EXPECT_EQ(bad, 0) << bad << " of " << expected.size() << " elements of "
                    << dtypeName(actual.dtype) << str(actual.shape)
                    << " are off:\n"
                    << details.str();
}

void expectExact(const HostTensor &actual,
                 const std::vector<double> &expected) {
  expectClose(actual, expected, zeros(expected.size()));
}

std::string describe(OpKind op, DType dtype, const std::string &rest) {
  return std::string(opKindName(op)) + " " + dtypeName(dtype) + " " + rest;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// Binary float ops. Add, Sub and Mul are one f32 rounding (u |r|); Div is
// allowed 2u |r| for a backend that multiplies by a reciprocal. Max and Min
// return one of their (exactly stored) operands: exact. Pow gets kLibmUlps.
TEST_P(KernelConformanceTest, BinaryFloat) {
  struct Case {
    Shape lhs, rhs;
  };
  const Case cases[] = {{{7}, {7}},
                        {{1}, {1}},
                        {{3, 17}, {17}},
                        {{17}, {3, 17}},
                        {{33, 1}, {1, 65}},
                        {{2, 3, 1, 7}, {3, 5, 1}},
                        {{}, {3, 7}},
                        {{2, 1, 33}, {2, 17, 1}},
                        {{65, 129}, {65, 129}}};
  const OpKind ops[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                        OpKind::Max, OpKind::Min, OpKind::Pow};
  Random rng(1);
  for (DType dtype : kFloatTypes) {
    for (OpKind op : ops) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(op, dtype, str(c.lhs) + " and " + str(c.rhs)));
        HostTensor lhs = op == OpKind::Pow
                             ? randomTensor(rng, dtype, c.lhs, 0.5, 2)
                             : randomTensor(rng, dtype, c.lhs, -2, 2);
        HostTensor rhs = op == OpKind::Div
                             ? randomTensor(rng, dtype, c.rhs, 0.5, 2,
                                            /*awayFromZero=*/true)
                             : randomTensor(rng, dtype, c.rhs, -2, 2);
        Shape shape = broadcastShape(c.lhs, c.rhs);
        std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
        if (!runOk(op, {}, {lhs, rhs}, out))
          continue;
        std::vector<double> expected(numel(shape)), tol(numel(shape));
        for (int64_t i = 0; i < numel(shape); ++i) {
          Shape index = unravel(i, shape);
          double x = lhs.values[broadcastSource(index, c.lhs)];
          double y = rhs.values[broadcastSource(index, c.rhs)];
          double r = 0, e = 0;
          switch (op) {
          case OpKind::Add:
            r = x + y, e = kU * std::fabs(r);
            break;
          case OpKind::Sub:
            r = x - y, e = kU * std::fabs(r);
            break;
          case OpKind::Mul:
            r = x * y, e = kU * std::fabs(r);
            break;
          case OpKind::Div:
            r = x / y, e = 2 * kU * std::fabs(r);
            break;
          case OpKind::Max:
            r = std::max(x, y);
            break;
          case OpKind::Min:
            r = std::min(x, y);
            break;
          default:
            r = std::pow(x, y), e = kLibmUlps * kUlp * std::fabs(r);
            break;
          }
          expected[i] = r;
          bool exact = op == OpKind::Max || op == OpKind::Min;
          tol[i] = exact ? 0 : stored(dtype, r, e);
        }
        expectClose(out[0], expected, tol);
      }
    }
  }
}

// A Fused kernel gives the bits of its steps run as separate kernels on the
// same backend (each step's value rounded to its dtype, as the unfused op
// would store it): tolerance 0. The chain uses every step opcode, both
// GELUs, a round trip through bf16, operands of the result's size, of one
// element and of a trailing shape that repeats, a step on single values
// that every chunk reads, and several results; the result size (3 x 1500)
// is more than one CPU chunk and no multiple of any chunk a backend might
// use.
TEST_P(KernelConformanceTest, Fused) {
  struct Step {
    OpKind op;
    int a, b; // slots; b < 0 for unary steps
    plan::GeluApproximation gelu = plan::GeluApproximation::Erf;
    bool bf16 = false; // rounds to bf16 instead of the chain's dtype
  };
  using G = plan::GeluApproximation;
  // Slots 0-3: x [3, 1500], a bias [1500], a scalar in [0.5, 2], y [3, 1500].
  const std::vector<Step> steps = {
      {OpKind::Add, 0, 1},       // 4
      {OpKind::Mul, 4, 2},       // 5
      {OpKind::Sub, 5, 3},       // 6
      {OpKind::Div, 6, 2},       // 7
      {OpKind::Max, 7, 0},       // 8
      {OpKind::Min, 8, 3},       // 9
      {OpKind::Tanh, 9, -1},     // 10
      {OpKind::Exp, 10, -1},     // 11 (in [1/e, e])
      {OpKind::Log, 11, -1},     // 12
      {OpKind::Sqrt, 11, -1},    // 13
      {OpKind::Rsqrt, 11, -1},   // 14
      {OpKind::Erf, 12, -1},     // 15
      {OpKind::Cos, 13, -1},     // 16
      {OpKind::Sin, 14, -1},     // 17
      {OpKind::Sigmoid, 15, -1}, // 18
      {OpKind::Relu, 16, -1},    // 19
      {OpKind::Silu, 17, -1},    // 20
      {OpKind::Gelu, 18, -1},    // 21
      {OpKind::Gelu, 19, -1, G::Tanh}, // 22
      {OpKind::Neg, 20, -1},     // 23
      {OpKind::Pow, 11, 2},      // 24
      {OpKind::Cast, 24, -1, G::Erf, true}, // 25
      {OpKind::Cast, 25, -1},    // 26
      {OpKind::Add, 23, 26},     // 27
      {OpKind::Mul, 2, 2},       // 28: a single value, read in every chunk
      {OpKind::Sub, 27, 28},     // 29
  };
  const std::vector<int> results = {9, 22, 29};
  const Shape shape = {3, 1500};
  Random rng(11);
  for (DType dtype : kFloatTypes) {
    SCOPED_TRACE(std::string("Fused ") + dtypeName(dtype));
    std::vector<HostTensor> slots = {
        randomTensor(rng, dtype, shape, -2, 2),
        randomTensor(rng, dtype, {1500}, -2, 2),
        randomTensor(rng, dtype, {}, 0.5, 2, /*awayFromZero=*/true),
        randomTensor(rng, dtype, shape, -2, 2)};
    std::vector<HostTensor> operands = slots;
    // The reference: one kernel per step.
    std::vector<plan::FusedStep> table;
    bool ok = true;
    for (const Step &step : steps) {
      DType round = step.bf16 ? DType::BF16 : dtype;
      const HostTensor &a = slots[step.a];
      Shape out = step.b < 0 ? a.shape : broadcastShape(a.shape, slots[step.b].shape);
      std::vector<HostTensor> result = {emptyTensor(round, out)};
      std::vector<HostTensor> in = {a};
      if (step.b >= 0)
        in.push_back(slots[step.b]);
      KernelAttrs attrs =
          step.op == OpKind::Gelu ? geluAttrs(step.gelu) : KernelAttrs();
      ok = ok && runOk(step.op, attrs, in, result);
      slots.push_back(result[0]);
      table.emplace_back(step.op, static_cast<plan::DType>(round), step.gelu,
                         static_cast<uint16_t>(step.a),
                         static_cast<uint16_t>(step.b < 0 ? step.a : step.b));
    }
    if (!ok)
      continue;
    std::vector<uint16_t> outputs(results.begin(), results.end());
    std::vector<HostTensor> fused(results.size(), emptyTensor(dtype, shape));
    if (!runOk(OpKind::Fused, fusedAttrs(table, outputs), operands, fused))
      continue;
    for (size_t k = 0; k < results.size(); ++k) {
      SCOPED_TRACE("result " + std::to_string(k) + " (slot " +
                   std::to_string(results[k]) + ")");
      expectExact(fused[k], slots[results[k]].values);
    }
  }
}

// A Fused kernel whose operands and results are all single values (the
// optimizer's step count and bias corrections form such chains): the same
// bits as its steps one kernel at a time.
TEST_P(KernelConformanceTest, FusedOnSingleValues) {
  Random rng(12);
  HostTensor x = randomTensor(rng, DType::F32, {}, 0.5, 2);
  HostTensor y = randomTensor(rng, DType::F32, {1}, 0.5, 2);
  std::vector<HostTensor> product = {emptyTensor(DType::F32, {1})};
  std::vector<HostTensor> power = {emptyTensor(DType::F32, {1})};
  if (!runOk(OpKind::Mul, {}, {x, y}, product) ||
      !runOk(OpKind::Pow, {}, {product[0], x}, power))
    return;
  auto step = [](OpKind op, uint16_t a, uint16_t b) {
    return plan::FusedStep(op, plan::DType::F32, plan::GeluApproximation::Erf,
                           a, b);
  };
  std::vector<HostTensor> fused = {emptyTensor(DType::F32, {1}),
                                   emptyTensor(DType::F32, {1})};
  if (!runOk(OpKind::Fused,
             fusedAttrs({step(OpKind::Mul, 0, 1), step(OpKind::Pow, 2, 0)},
                        {2, 3}),
             {x, y}, fused))
    return;
  expectExact(fused[0], product[0].values);
  expectExact(fused[1], power[0].values);
}

// Binary integer ops are exact; Div truncates toward zero (operands of both
// signs, so -7 / 2 = -3 is exercised). Ranges keep products within i32/i64.
TEST_P(KernelConformanceTest, BinaryInteger) {
  struct Case {
    Shape lhs, rhs;
  };
  const Case cases[] = {{{7}, {7}},
                        {{3, 17}, {17}},
                        {{33, 1}, {1, 65}},
                        {{}, {3, 7}},
                        {{2, 3, 1, 7}, {3, 5, 1}}};
  const OpKind ops[] = {OpKind::Add, OpKind::Sub, OpKind::Mul,
                        OpKind::Div, OpKind::Max, OpKind::Min};
  Random rng(2);
  for (DType dtype : {DType::I32, DType::I64}) {
    double range = dtype == DType::I32 ? 1000 : 1 << 20;
    for (OpKind op : ops) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(op, dtype, str(c.lhs) + " and " + str(c.rhs)));
        HostTensor lhs = randomTensor(rng, dtype, c.lhs, -range, range);
        HostTensor rhs = op == OpKind::Div
                             ? randomTensor(rng, dtype, c.rhs, 1, 9,
                                            /*awayFromZero=*/true)
                             : randomTensor(rng, dtype, c.rhs, -range, range);
        Shape shape = broadcastShape(c.lhs, c.rhs);
        std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
        if (!runOk(op, {}, {lhs, rhs}, out))
          continue;
        std::vector<double> expected(numel(shape));
        for (int64_t i = 0; i < numel(shape); ++i) {
          Shape index = unravel(i, shape);
          auto x =
              static_cast<int64_t>(lhs.values[broadcastSource(index, c.lhs)]);
          auto y =
              static_cast<int64_t>(rhs.values[broadcastSource(index, c.rhs)]);
          int64_t r = op == OpKind::Add   ? x + y
                      : op == OpKind::Sub ? x - y
                      : op == OpKind::Mul ? x * y
                      : op == OpKind::Div ? x / y // C++: toward zero
                      : op == OpKind::Max ? std::max(x, y)
                                          : std::min(x, y);
          expected[i] = static_cast<double>(r);
        }
        expectExact(out[0], expected);
      }
    }
  }
}

// Select moves one of its values: exact, on every dtype, with an i32 or i64
// condition whose non-zero entries include negative ones, and with each of
// the three operands broadcast (a missing or size-1 dimension) in some case.
TEST_P(KernelConformanceTest, Select) {
  struct Case {
    Shape cond, onTrue, onFalse;
  };
  const Case cases[] = {{{7}, {7}, {7}},
                        {{3, 17}, {17}, {3, 1}},
                        {{33, 1}, {1, 65}, {}},
                        {{}, {3, 7}, {3, 7}},
                        {{2, 1, 5, 1}, {3, 1, 7}, {1, 5, 7}},
                        {{4100}, {4100}, {1}}};
  Random rng(12);
  for (DType condType : {DType::I32, DType::I64}) {
    for (DType dtype : kAllTypes) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(OpKind::Select, dtype,
                              str(c.cond) + " (" + dtypeName(condType) + "), " +
                                  str(c.onTrue) + " and " + str(c.onFalse)));
        HostTensor cond = randomTensor(rng, condType, c.cond, -2, 2);
        HostTensor onTrue = dataTensor(rng, dtype, c.onTrue);
        HostTensor onFalse = dataTensor(rng, dtype, c.onFalse);
        Shape shape =
            broadcastShape(c.cond, broadcastShape(c.onTrue, c.onFalse));
        std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
        if (!runOk(OpKind::Select, {}, {cond, onTrue, onFalse}, out))
          continue;
        std::vector<double> expected(numel(shape));
        for (int64_t i = 0; i < numel(shape); ++i) {
          Shape index = unravel(i, shape);
          expected[i] = cond.values[broadcastSource(index, c.cond)] != 0
                            ? onTrue.values[broadcastSource(index, c.onTrue)]
                            : onFalse.values[broadcastSource(index, c.onFalse)];
        }
        expectExact(out[0], expected);
      }
    }
  }
}

// Compare is exact on every dtype and direction, with operands drawn from a
// few integers (so equal pairs are common and eq / le / ge are exercised),
// each operand broadcast in some case, and NaN in float operands (true only
// for ne).
TEST_P(KernelConformanceTest, Compare) {
  struct Case {
    Shape lhs, rhs;
  };
  const Case cases[] = {{{7}, {7}},   {{3, 17}, {17}},     {{33, 1}, {1, 65}},
                        {{}, {3, 7}}, {{2, 1, 5}, {3, 1}}, {{4100}, {1}}};
  const char *names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  auto holds = [](int64_t direction, double a, double b) {
    switch (direction) {
    case 0:
      return a == b;
    case 1:
      return a != b;
    case 2:
      return a < b;
    case 3:
      return a <= b;
    case 4:
      return a > b;
    default:
      return a >= b;
    }
  };
  Random rng(21);
  for (DType dtype : kAllTypes) {
    for (int64_t direction = 0; direction < 6; ++direction) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(OpKind::Compare, dtype,
                              std::string(names[direction]) + " " + str(c.lhs) +
                                  " and " + str(c.rhs)));
        HostTensor lhs = randomTensor(rng, DType::I32, c.lhs, -3, 3);
        HostTensor rhs = randomTensor(rng, DType::I32, c.rhs, -3, 3);
        lhs.dtype = rhs.dtype = dtype;
        if (isFloat(dtype) && numel(c.lhs) > 1)
          lhs.values[1] = std::nan("");
        Shape shape = broadcastShape(c.lhs, c.rhs);
        std::vector<HostTensor> out = {emptyTensor(DType::I32, shape)};
        if (!runOk(OpKind::Compare,
                   compareAttrs(plan::CompareDirection(direction)), {lhs, rhs},
                   out))
          continue;
        std::vector<double> expected(numel(shape));
        for (int64_t i = 0; i < numel(shape); ++i) {
          Shape index = unravel(i, shape);
          expected[i] =
              holds(direction, lhs.values[broadcastSource(index, c.lhs)],
                    rhs.values[broadcastSource(index, c.rhs)])
                  ? 1
                  : 0;
        }
        expectExact(out[0], expected);
      }
    }
  }
}

struct UnaryRef {
  OpKind op;
  int64_t gelu; ///< Gelu's approximation attribute
  double lo, hi;
  std::function<double(double)> f;
  /// Only the function's own error: the input is exact (no f32 operation
  /// before the libm call) and the result needs no input perturbation.
  bool ownErrorOnly = false;
};

double geluErf(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  double inner = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1 + std::tanh(inner));
}

// Unary ops. Neg and Relu are exact. The others are modelled as a function
// computed to within k ulp after its input was perturbed by k ulp, which
// bounds the error by k ulp (|f(x)| + |x f'(x)|) with k = kLibmUlps (x f'
// from a central difference in double): that covers one libm call (at most 2
// ulp on CUDA and glibc) plus the roundings of the few f32 operations around
// it (sigmoid's 1 + e and its division, silu's product). Gelu adds k ulp |x|:
// errors inside 1 + erf(.) / 1 + tanh(.) reach the result multiplied by
// 0.5 x, which |x f'(x)| misses near the zero of gelu' (x ~ -0.75).
// Cos and sin are one libm call on the exact input, so they are held to
// k ulp |f(x)| alone, over [-8, 8] and over the arguments of rotary tables
// (positions times frequencies, up to thousands of radians). A kernel that
// reduces its argument in f32 (x - k * 2 pi with f32's 2 pi, 1.7e-7 off)
// fails both ranges: by 1.6e-7 against a bound of 1.3e-7 on [-8, 8], by
// k * 1.7e-7 = 3e-5 at |x| = 1000, where the |x f'(x)| term would allow
// 4000 ulp (4.8e-4) and pass it.
TEST_P(KernelConformanceTest, Unary) {
  const UnaryRef refs[] = {
      {OpKind::Neg, 0, -4, 4, [](double x) { return -x; }},
      {OpKind::Exp, 0, -4, 4, [](double x) { return std::exp(x); }},
      {OpKind::Log, 0, 0.05, 4, [](double x) { return std::log(x); }},
      {OpKind::Sqrt, 0, 0.05, 4, [](double x) { return std::sqrt(x); }},
      {OpKind::Rsqrt, 0, 0.05, 4, [](double x) { return 1 / std::sqrt(x); }},
      {OpKind::Tanh, 0, -4, 4, [](double x) { return std::tanh(x); }},
      // Densely around |x| = 0.625, where a kernel may switch from a
      // polynomial to the exponential form, and out to where tanh rounds to
      // +-1 in f32.
      {OpKind::Tanh, 0, -0.7, 0.7, [](double x) { return std::tanh(x); }},
      {OpKind::Tanh, 0, -12, 12, [](double x) { return std::tanh(x); }},
      {OpKind::Erf, 0, -4, 4, [](double x) { return std::erf(x); }},
      {OpKind::Cos, 0, -8, 8, [](double x) { return std::cos(x); }, true},
      {OpKind::Sin, 0, -8, 8, [](double x) { return std::sin(x); }, true},
      {OpKind::Cos, 0, -4096, 4096, [](double x) { return std::cos(x); }, true},
      {OpKind::Sin, 0, -4096, 4096, [](double x) { return std::sin(x); }, true},
      {OpKind::Sigmoid, 0, -8, 8,
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {OpKind::Relu, 0, -4, 4, [](double x) { return x < 0 ? 0.0 : x; }},
      {OpKind::Silu, 0, -8, 8, [](double x) { return x / (1 + std::exp(-x)); }},
      {OpKind::Gelu, 0, -5, 5, geluErf},
      {OpKind::Gelu, 1, -5, 5, geluTanh},
  };
  // 4100 spans more than one 4096-element chunk of a blocked implementation.
  const Shape shapes[] = {{1}, {7}, {3, 17}, {33, 65}, {4100}};
  Random rng(3);
  for (DType dtype : kFloatTypes) {
    for (const UnaryRef &ref : refs) {
      KernelAttrs attrs;
      if (ref.op == OpKind::Gelu)
        attrs = geluAttrs(ref.gelu ? plan::GeluApproximation::Tanh
                                   : plan::GeluApproximation::Erf);
      for (const Shape &shape : shapes) {
        SCOPED_TRACE(describe(
            ref.op, dtype,
            str(shape) +
                (ref.op == OpKind::Gelu ? (ref.gelu ? " tanh" : " erf") : "") +
                " on [" + std::to_string(ref.lo) + ", " +
                std::to_string(ref.hi) + "]"));
        HostTensor in = randomTensor(rng, dtype, shape, ref.lo, ref.hi);
        std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
        if (!runOk(ref.op, attrs, {in}, out))
          continue;
        bool exact = ref.op == OpKind::Neg || ref.op == OpKind::Relu;
        std::vector<double> expected(in.values.size()), tol(in.values.size());
        for (size_t i = 0; i < in.values.size(); ++i) {
          double x = in.values[i], r = ref.f(x);
          const double h = 1e-6;
          double xfPrime = (ref.f(x * (1 + h)) - ref.f(x * (1 - h))) / (2 * h);
          double e =
              kLibmUlps * kUlp *
              (std::fabs(r) + (ref.ownErrorOnly ? 0 : std::fabs(xfPrime)));
          if (ref.op == OpKind::Gelu)
            e += kLibmUlps * kUlp * std::fabs(x);
          expected[i] = r;
          tol[i] = exact ? 0 : stored(dtype, r, e);
        }
        expectClose(out[0], expected, tol);
      }
    }
  }
}

// Tanh at the edges of its range, f32 only (the input exact, so the kernel's
// own kLibmUlps): signed zeros keep their sign, tiny and subnormal inputs give
// themselves, large ones and infinities +-1, NaN stays NaN; and the neighbours
// of |x| = 0.625 on both sides.
TEST_P(KernelConformanceTest, TanhEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> xs = {
      0.0f,  -0.0f,  1e-30f,     -1e-30f, 1e-40f,       -1e-40f,
      1e-4f, -3e-3f, 0.6249999f, 0.625f,  0.6250001f,   -0.625f,
      1.0f,  -2.5f,  9.0f,       20.0f,   -44.5f,       89.0f,
      1e30f, -1e30f, inf,        -inf,    std::nanf("")};
  HostTensor in{DType::F32, {int64_t(xs.size())}, {}};
  for (float x : xs)
    in.values.push_back(x);
  std::vector<HostTensor> out = {emptyTensor(DType::F32, in.shape)};
  if (!runOk(OpKind::Tanh, {}, {in}, out))
    return;
  std::vector<double> expected, tol;
  for (double x : in.values) {
    expected.push_back(std::tanh(x));
    tol.push_back(std::isfinite(x)
                      ? stored(DType::F32, std::tanh(x),
                               kLibmUlps * kUlp * std::fabs(std::tanh(x)))
                      : 0.0);
  }
  expectClose(out[0], expected, tol);
  EXPECT_TRUE(std::signbit(out[0].values[1])) << "tanh(-0) lost its sign";
}

// Cast between every pair of dtypes; exact: float to float and integer to
// float round to nearest even (the reference rounds independently of the
// runtime's conversions), float to integer truncates toward zero. The f32
// source includes f16 subnormals, values that round to the f16 maximum or
// overflow to infinity, and halves (3.5, -3.5) that truncate.
TEST_P(KernelConformanceTest, Cast) {
  const Shape shape = {3, 17};
  Random rng(4);
  for (DType from : kAllTypes) {
    for (DType to : kAllTypes) {
      SCOPED_TRACE(std::string("Cast ") + dtypeName(from) + " -> " +
                   dtypeName(to));
      HostTensor in = isFloat(from)
                          ? randomTensor(rng, from, shape, -100, 100)
                          : randomTensor(rng, from, shape, -3000, 3000);
      std::vector<double> specials;
      if (from == DType::F32)
        specials = {0.0,   -0.0, 1e-6, -3e-7, 65504, 65519,
                    65520, 1e5,  -1e5, 3.5,   -3.5,  2.5};
      else if (!isFloat(from))
        specials = {0, 1, -1, 2047, 2049, -2049, 2051};
      if (!isFloat(from) && to == DType::F32) // above 2^24: f32 rounds
        specials.insert(specials.end(), {16777217, -16777219});
      for (size_t i = 0; i < specials.size(); ++i)
        in.values[i] = roundTo(from, specials[i]);
      std::vector<HostTensor> out = {emptyTensor(to, shape)};
      if (!runOk(OpKind::Cast, {}, {in}, out))
        continue;
      std::vector<double> expected(in.values.size());
      for (size_t i = 0; i < in.values.size(); ++i)
        expected[i] =
            isFloat(to) ? roundTo(to, in.values[i]) : std::trunc(in.values[i]);
      expectExact(out[0], expected);
    }
  }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

struct GemmCase {
  Shape batch;
  int64_t m, k, n;
};

/// lhs (ta: [..., K, M]) times rhs (tb: [..., N, K]) in double, with the
/// error bound of an f32 GEMM: |C - C~| <= gamma_K (|A| |B|), gamma_K =
/// K u / (1 - K u) < (K + 1) u here. This holds for any summation order and
/// with or without FMA; it is the worst case, not the typical sqrt(K) one.
/// `rhsBatched`: rhs has the batch dimensions too (BatchMatmul).
void referenceGemm(const GemmCase &c, bool ta, bool tb, bool rhsBatched,
                   const HostTensor &lhs, const HostTensor &rhs, DType dtype,
                   std::vector<double> &expected, std::vector<double> &tol) {
  int64_t batch = numel(c.batch), m = c.m, k = c.k, n = c.n;
  expected.assign(batch * m * n, 0);
  tol.assign(batch * m * n, 0);
  for (int64_t b = 0; b < batch; ++b) {
    const double *a = lhs.values.data() + b * m * k;
    const double *bb = rhs.values.data() + (rhsBatched ? b * k * n : 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, abs = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = ta ? a[p * m + i] : a[i * k + p];
          double y = tb ? bb[j * k + p] : bb[p * n + j];
          sum += x * y;
          abs += std::fabs(x * y);
        }
        expected[(b * m + i) * n + j] = sum;
        tol[(b * m + i) * n + j] = stored(dtype, sum, (k + 1) * kU * abs);
      }
    }
  }
}

Shape withMatrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

// Matmul: lhs [..., M, K] with its leading dimensions as batch rows, rhs
// [K, N]; every transpose combination, including transpose_a with leading
// dimensions (each leading index its own [K, M] matrix). Tolerance: see
// referenceGemm.
TEST_P(KernelConformanceTest, Matmul) {
  const GemmCase cases[] = {{{}, 1, 1, 1},    {{}, 3, 7, 17},
                            {{2}, 5, 3, 7},   {{2, 3}, 7, 17, 33},
                            {{3}, 17, 33, 1}, {{}, 65, 129, 31}};
  Random rng(5);
  for (DType dtype : kFloatTypes) {
    for (const GemmCase &c : cases) {
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          std::ostringstream name;
          name << str(c.batch) << " M=" << c.m << " K=" << c.k << " N=" << c.n
               << " transpose_a=" << ta << " transpose_b=" << tb;
          SCOPED_TRACE(describe(OpKind::Matmul, dtype, name.str()));
          Shape lhsShape = ta ? withMatrix(c.batch, c.k, c.m)
                              : withMatrix(c.batch, c.m, c.k);
          Shape rhsShape = tb ? Shape{c.n, c.k} : Shape{c.k, c.n};
          HostTensor lhs = randomTensor(rng, dtype, lhsShape, -1, 1);
          HostTensor rhs = randomTensor(rng, dtype, rhsShape, -1, 1);
          std::vector<HostTensor> out = {
              emptyTensor(dtype, withMatrix(c.batch, c.m, c.n))};
          if (!runOk(OpKind::Matmul, matmulAttrs(ta, tb), {lhs, rhs}, out))
            continue;
          std::vector<double> expected, tol;
          referenceGemm(c, ta, tb, /*rhsBatched=*/false, lhs, rhs, dtype,
                        expected, tol);
          expectClose(out[0], expected, tol);
        }
      }
    }
  }
}

// BatchMatmul: [B..., M, K] x [B..., K, N] with every transpose combination.
// Tolerance: see referenceGemm.
TEST_P(KernelConformanceTest, BatchMatmul) {
  const GemmCase cases[] = {
      {{1}, 1, 1, 1}, {{2}, 3, 7, 5}, {{2, 3}, 17, 33, 9}, {{4}, 65, 31, 33}};
  Random rng(6);
  for (DType dtype : kFloatTypes) {
    for (const GemmCase &c : cases) {
      for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
          std::ostringstream name;
          name << str(c.batch) << " M=" << c.m << " K=" << c.k << " N=" << c.n
               << " transpose_a=" << ta << " transpose_b=" << tb;
          SCOPED_TRACE(describe(OpKind::BatchMatmul, dtype, name.str()));
          Shape lhsShape = ta ? withMatrix(c.batch, c.k, c.m)
                              : withMatrix(c.batch, c.m, c.k);
          Shape rhsShape = tb ? withMatrix(c.batch, c.n, c.k)
                              : withMatrix(c.batch, c.k, c.n);
          HostTensor lhs = randomTensor(rng, dtype, lhsShape, -1, 1);
          HostTensor rhs = randomTensor(rng, dtype, rhsShape, -1, 1);
          std::vector<HostTensor> out = {
              emptyTensor(dtype, withMatrix(c.batch, c.m, c.n))};
          if (!runOk(OpKind::BatchMatmul, matmulAttrs(ta, tb), {lhs, rhs}, out))
            continue;
          std::vector<double> expected, tol;
          referenceGemm(c, ta, tb, /*rhsBatched=*/true, lhs, rhs, dtype,
                        expected, tol);
          expectClose(out[0], expected, tol);
        }
      }
    }
  }
}

/// Relative error bound of softmax over `n` values whose largest distance
/// from the maximum is `maxDev`, for an element at distance `dev`: x - m is
/// one rounding (u |x - m|, which exp turns into a relative error), exp adds
/// kLibmUlps, the sum of n positive terms gamma_n plus the largest relative
/// error of its terms, and the normalisation (reciprocal and product, or a
/// division) 2u.
double softmaxRelError(double dev, double maxDev, int64_t n) {
  return kU * (dev + maxDev) + 2 * kLibmUlps * kUlp + (n + 2) * kU;
}

/// A reference result: the exact values and each one's error bound.
struct Reference {
  std::vector<double> expected, tol;
};

/// Which keys attention's query rows see: sees(i, j) for query i, key j.
using KeyMask = std::function<bool(int64_t, int64_t)>;

/// The mask of attention's attributes and positions operands: every key
/// unless causal; causal, query i at position p = queryPositions[i] sees key
/// j at k = keyPositions[j] iff k <= p and, with a window w, p - k < w.
/// Without positions, query i is at position i and key j at j.
KeyMask attentionMask(bool causal, int64_t window,
                      std::vector<int64_t> queryPositions = {},
                      std::vector<int64_t> keyPositions = {}) {
  return [=](int64_t i, int64_t j) {
    if (!causal)
      return true;
    int64_t p = queryPositions.empty() ? i : queryPositions[i];
    int64_t k = keyPositions.empty() ? j : keyPositions[j];
    return k <= p && (window == 0 || p - k < window);
  };
}

/// Attention's result for q [B, H, Sq, D], k [B, Hkv, Sk, D] and v [B, Hkv,
/// Sk, Dv] under `sees`, query head h reading kv head h / (H/Hkv), and its
/// tolerance per output element, first order:
///  - scores s = scale * q.k: GEMM bound (D + 1) u |scale| sum|q k|, plus one
///    rounding for the scaling;
///  - softmax: a score error of at most eS on a row changes each probability
///    by at most 2 eS relative, on top of softmaxRelError;
///  - out = P V: gamma_Sk sum_j p_j |v_j| plus the probabilities' relative
///    error times the same sum;
///  - f16/bf16: PartOps.td defines attention by its decomposition, in which
///    the probabilities are a tensor of the operands' element type, so a
///    backend may round them to it before the second product (CUDA does):
///    u(dtype) sum_j p_j |v_j| more. Scores stay f32 on every backend.
/// A row that sees no key is 0, and its tolerance (stored(dtype, 0, 0))
/// admits only 0.
///
/// With `lse`, also the block form's second result: each row's log-sum-exp
/// log(sum_j exp(s_j)) over the keys it sees, [B, H, Sq] (-inf, exactly,
/// for a row that sees none), within, first order:
///  - maxErr: lse is 1-Lipschitz in the scores' maximum norm (its gradient
///    is the probabilities), so the scores' errors move it by at most theirs;
///  - softmaxRelError(maxDev, maxDev, Sk): the sum of exp(s - max) is
///    within that relative error (it also counts a normalisation, which lse
///    does not have), hence its logarithm within that absolute;
///  - kLibmUlps of log(sum) for the logarithm, and u |lse| for adding the
///    maximum.
void referenceAttention(const HostTensor &q, const HostTensor &k,
                        const HostTensor &v, double scale, const KeyMask &sees,
                        std::vector<double> &expected, std::vector<double> &tol,
                        Reference *lse = nullptr) {
  DType dtype = q.dtype;
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2],
          dq = q.shape[3];
  int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  Shape outShape = {batch, heads, sq, dv};
  expected.assign(numel(outShape), 0.0);
  tol.assign(numel(outShape), 0.0);
  int64_t group = heads / kvHeads;
  double probRounding = dtype == DType::F32 ? 0 : unitRoundoff(dtype);
  if (lse) {
    lse->expected.assign(batch * heads * sq, -INFINITY);
    lse->tol.assign(batch * heads * sq, 0.0);
  }
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvh = h / group;
      for (int64_t i = 0; i < sq; ++i) {
        std::vector<double> s(sk), err(sk);
        double m = -INFINITY, maxErr = 0;
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          double dot = 0, abs = 0;
          for (int64_t d = 0; d < dq; ++d) {
            double x = q.values[ravel({b, h, i, d}, q.shape)];
            double y = k.values[ravel({b, kvh, j, d}, k.shape)];
            dot += x * y;
            abs += std::fabs(x * y);
          }
          s[j] = scale * dot;
          err[j] = (dq + 2) * kU * std::fabs(scale) * abs;
          m = std::max(m, s[j]);
          maxErr = std::max(maxErr, err[j]);
        }
        double maxDev = 0, sum = 0;
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          maxDev = std::max(maxDev, m - s[j]);
          sum += std::exp(s[j] - m);
        }
        double relP = 2 * maxErr + softmaxRelError(maxDev, maxDev, sk);
        if (lse && sum > 0) {
          int64_t row = (b * heads + h) * sq + i;
          double l = m + std::log(sum);
          lse->expected[row] = l;
          lse->tol[row] = maxErr + softmaxRelError(maxDev, maxDev, sk) +
                          kLibmUlps * kUlp * std::log(sum) + kU * std::fabs(l) +
                          tinyError(DType::F32);
        }
        for (int64_t e = 0; e < dv; ++e) {
          double o = 0, weight = 0;
          for (int64_t j = 0; j < sk; ++j) {
            if (!sees(i, j))
              continue;
            double p = std::exp(s[j] - m) / sum;
            double y = v.values[ravel({b, kvh, j, e}, v.shape)];
            o += p * y;
            weight += p * std::fabs(y);
          }
          int64_t at = ravel({b, h, i, e}, outShape);
          expected[at] = o;
          tol[at] =
              stored(dtype, o, ((sk + 1) * kU + relP + probRounding) * weight);
        }
      }
    }
  }
}

// Attention per (batch, head) with query head h reading kv head h / (H/Hkv);
// causal masks key positions after the query's, and a window w those w or
// more before it (sliding-window attention). Tolerance: see
// referenceAttention.
TEST_P(KernelConformanceTest, Attention) {
  struct Case {
    int64_t b, h, hkv, sq, sk, d, dv;
    bool causal;
    double scale; ///< 0: 1 / sqrt(D), as the compiler fills in by default
    int64_t window = 0;
  };
  const Case cases[] = {
      {1, 1, 1, 1, 1, 1, 1, false, 0},   {1, 1, 1, 1, 1, 1, 1, true, 0},
      {2, 4, 4, 7, 7, 8, 8, true, 0},    {2, 4, 2, 7, 7, 8, 8, true, 0},
      {2, 4, 2, 7, 7, 8, 8, false, 0},   {1, 8, 2, 17, 17, 16, 16, true, 0},
      {2, 4, 1, 5, 17, 8, 3, false, 0},  {1, 2, 2, 33, 33, 32, 32, false, 0.5},
      {1, 6, 3, 65, 65, 64, 64, true, 0},
      // Sliding windows: of one key (the diagonal), of 3 with grouped-query
      // heads, of 16 over 65 positions, and one longer than the sequence.
      {1, 1, 1, 5, 5, 4, 4, true, 0, 1},
      {2, 4, 2, 7, 7, 8, 8, true, 0, 3},
      {1, 6, 3, 65, 65, 64, 64, true, 0, 16},
      {1, 2, 1, 6, 6, 8, 8, true, 0.5, 9}};
  Random rng(7);
  for (DType dtype : kFloatTypes) {
    for (const Case &c : cases) {
      std::ostringstream name;
      name << "B=" << c.b << " H=" << c.h << " Hkv=" << c.hkv << " Sq=" << c.sq
           << " Sk=" << c.sk << " D=" << c.d << " Dv=" << c.dv
           << (c.causal ? " causal" : "")
           << (c.window ? " window=" + std::to_string(c.window) : "");
      SCOPED_TRACE(describe(OpKind::Attention, dtype, name.str()));
      float scale = c.scale ? static_cast<float>(c.scale)
                            : static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, c.sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, c.sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, c.sk, c.dv}, -1, 1);
      std::vector<HostTensor> out = {
          emptyTensor(dtype, {c.b, c.h, c.sq, c.dv})};
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      if (!runOk(OpKind::Attention, attrs, {q, k, v}, out))
        continue;
      std::vector<double> expected, tol;
      referenceAttention(q, k, v, scale, attentionMask(c.causal, c.window),
                         expected, tol);
      expectClose(out[0], expected, tol);
    }
  }
}

/// Row i of one (batch, query head)'s scores: s_j = scale q_i . k_j for the
/// keys j it sees (0 for the others) within err_j = (D + 2) u |scale| sum_d
/// |q k| (the GEMM bound plus the scaling's rounding), their maximum m (-inf
/// for a row that sees none) and largest error maxErr.
struct ScoreRow {
  std::vector<double> s, err;
  double m = -INFINITY, maxErr = 0;
};

ScoreRow scoreRow(const HostTensor &q, const HostTensor &k, double scale,
                  const KeyMask &sees, int64_t b, int64_t h, int64_t kvh,
                  int64_t i) {
  int64_t sk = k.shape[2], dq = q.shape[3];
  ScoreRow r;
  r.s.assign(sk, 0);
  r.err.assign(sk, 0);
  for (int64_t j = 0; j < sk; ++j) {
    if (!sees(i, j))
      continue;
    double dot = 0, abs = 0;
    for (int64_t d = 0; d < dq; ++d) {
      double x = q.values[ravel({b, h, i, d}, q.shape)];
      double y = k.values[ravel({b, kvh, j, d}, k.shape)];
      dot += x * y;
      abs += std::fabs(x * y);
    }
    r.s[j] = scale * dot;
    r.err[j] = (dq + 2) * kU * std::fabs(scale) * abs;
    r.m = std::max(r.m, r.s[j]);
    r.maxErr = std::max(r.maxErr, r.err[j]);
  }
  return r;
}

/// One (batch, query head)'s rows of the backward: per query row i and key
/// j, the probability p, its relative error bound relP, the score gradient
/// ds and its absolute error bound eDs; all 0 for a key the row does not
/// see.
struct GradRows {
  std::vector<std::vector<double>> p, relP, ds, eDs;
};

/// dp_j = do_i . v_j for every key of row i, with the magnitudes sum |do v|
/// its GEMM bound (Dv + 1) u sum |do v| is taken over.
void valueGradRow(const HostTensor &v, const HostTensor &dy, int64_t b,
                  int64_t h, int64_t kvh, int64_t i, std::vector<double> &dp,
                  std::vector<double> &absDp) {
  int64_t sk = v.shape[2], dv = v.shape[3];
  dp.assign(sk, 0);
  absDp.assign(sk, 0);
  for (int64_t j = 0; j < sk; ++j)
    for (int64_t e = 0; e < dv; ++e) {
      double x = dy.values[ravel({b, h, i, e}, dy.shape)] *
                 v.values[ravel({b, kvh, j, e}, v.shape)];
      dp[j] += x;
      absDp[j] += std::fabs(x);
    }
}

/// AttentionGrad's three results as references: dq [B, H, Sq, D], and dk
/// [B, H, Sk, D] and dv [B, H, Sk, Dv] per query head, zeroed.
void startGradients(const HostTensor &q, const HostTensor &k,
                    const HostTensor &v,
                    std::vector<std::vector<double>> &expected,
                    std::vector<std::vector<double>> &tol) {
  int64_t batch = q.shape[0], heads = q.shape[1];
  const Shape shapes[3] = {{batch, heads, q.shape[2], q.shape[3]},
                           {batch, heads, k.shape[2], k.shape[3]},
                           {batch, heads, k.shape[2], v.shape[3]}};
  expected.assign(3, {});
  tol.assign(3, {});
  for (int r = 0; r < 3; ++r) {
    expected[r].assign(numel(shapes[r]), 0.0);
    tol[r].assign(numel(shapes[r]), 0.0);
  }
}

/// dq = ds k, dk = ds^T q and dv = p^T do of query head h of batch b from
/// its rows, into startGradients' results: each within its GEMM bound over
/// its terms plus the propagated ds or p errors, and the result's rounding.
void gradientsOfRows(const HostTensor &q, const HostTensor &k,
                     const HostTensor &dy, int64_t b, int64_t h, int64_t kvh,
                     const GradRows &rows,
                     std::vector<std::vector<double>> &expected,
                     std::vector<std::vector<double>> &tol) {
  DType dtype = q.dtype;
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2],
          dq = q.shape[3];
  int64_t sk = k.shape[2], dv = dy.shape[3];
  const Shape shapes[3] = {
      {batch, heads, sq, dq}, {batch, heads, sk, dq}, {batch, heads, sk, dv}};
  auto at = [](const HostTensor &t, std::initializer_list<int64_t> i) {
    return t.values[ravel(i, t.shape)];
  };
  const auto &p = rows.p, &ds = rows.ds, &eDs = rows.eDs;
  // dq = ds k.
  for (int64_t i = 0; i < sq; ++i)
    for (int64_t d = 0; d < dq; ++d) {
      double x = 0, abs = 0, e = 0;
      for (int64_t j = 0; j < sk; ++j) {
        double kk = at(k, {b, kvh, j, d});
        x += ds[i][j] * kk;
        abs += std::fabs(ds[i][j] * kk);
        e += eDs[i][j] * std::fabs(kk);
      }
      int64_t o = ravel({b, h, i, d}, shapes[0]);
      expected[0][o] = x;
      tol[0][o] = stored(dtype, x, (sk + 1) * kU * abs + e);
    }
  // dk = ds^T q and dv = p^T do, per query head.
  for (int64_t j = 0; j < sk; ++j) {
    for (int64_t d = 0; d < dq; ++d) {
      double x = 0, abs = 0, e = 0;
      for (int64_t i = 0; i < sq; ++i) {
        double qq = at(q, {b, h, i, d});
        x += ds[i][j] * qq;
        abs += std::fabs(ds[i][j] * qq);
        e += eDs[i][j] * std::fabs(qq);
      }
      int64_t o = ravel({b, h, j, d}, shapes[1]);
      expected[1][o] = x;
      tol[1][o] = stored(dtype, x, (sq + 1) * kU * abs + e);
    }
    for (int64_t e = 0; e < dv; ++e) {
      double x = 0, weight = 0, err = 0;
      for (int64_t i = 0; i < sq; ++i) {
        double g = at(dy, {b, h, i, e});
        x += p[i][j] * g;
        weight += p[i][j] * std::fabs(g);
        err += rows.relP[i][j] * p[i][j] * std::fabs(g);
      }
      int64_t o = ravel({b, h, j, e}, shapes[2]);
      expected[2][o] = x;
      tol[2][o] = stored(dtype, x, (sq + 1) * kU * weight + err);
    }
  }
}

/// AttentionGrad's results (dq [B, H, Sq, D], and dk [B, H, Sk, D] and dv
/// [B, H, Sk, Dv] per query head) for q, k, v as in referenceAttention and
/// the result's gradient dy [B, H, Sq, Dv] under `sees`: a double reference
/// of the decomposition p = softmax(scale q k^T + mask), dv = p^T do,
/// dp = do v^T, delta = rowsum(dp * p), ds = scale p (dp - delta),
/// dq = ds k, dk = ds^T q. Tolerance, first order, from the same parts as
/// Attention's: the probabilities' relative error relP (scores and
/// softmax); dp's GEMM bound (Dv + 1) u sum|do v|; delta's (Sk + 1) u over
/// its terms' magnitudes and their errors; each ds term's error from
/// those, plus its storage rounding (a backend may hold p and ds in the
/// operands' type: CUDA does); then gradientsOfRows. A key no row sees, or
/// a row that sees no key, contributes exactly 0.
void referenceAttentionGrad(const HostTensor &q, const HostTensor &k,
                            const HostTensor &v, const HostTensor &dy,
                            double scale, const KeyMask &sees,
                            std::vector<std::vector<double>> &expected,
                            std::vector<std::vector<double>> &tol) {
  DType dtype = q.dtype;
  double store = dtype == DType::F32 ? kU : unitRoundoff(dtype);
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2];
  int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  startGradients(q, k, v, expected, tol);
  int64_t group = heads / kvHeads;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvh = h / group;
      GradRows rows;
      rows.p.assign(sq, std::vector<double>(sk, 0));
      rows.relP = rows.ds = rows.eDs = rows.p;
      for (int64_t i = 0; i < sq; ++i) {
        ScoreRow s = scoreRow(q, k, scale, sees, b, h, kvh, i);
        double maxDev = 0, sum = 0;
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          maxDev = std::max(maxDev, s.m - s.s[j]);
          sum += std::exp(s.s[j] - s.m);
        }
        double relP = 2 * s.maxErr + softmaxRelError(maxDev, maxDev, sk) +
                      (dtype == DType::F32 ? 0 : store);
        std::vector<double> &p = rows.p[i];
        std::vector<double> dp, absDp;
        valueGradRow(v, dy, b, h, kvh, i, dp, absDp);
        double delta = 0, absDelta = 0;
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          p[j] = std::exp(s.s[j] - s.m) / sum;
          rows.relP[i][j] = relP;
          delta += dp[j] * p[j];
          absDelta +=
              (std::fabs(dp[j]) + (dv + 1) * kU * absDp[j]) * p[j] * (1 + relP);
        }
        double eDelta = (sk + 1) * kU * absDelta + relP * absDelta;
        for (int64_t j = 0; j < sk; ++j)
          eDelta += p[j] * (dv + 1) * kU * absDp[j];
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          double diff = dp[j] - delta;
          rows.ds[i][j] = scale * p[j] * diff;
          rows.eDs[i][j] =
              std::fabs(scale) * p[j] *
                  (relP * std::fabs(diff) + (dv + 1) * kU * absDp[j] + eDelta +
                   kU * (std::fabs(dp[j]) + std::fabs(delta))) +
              store * std::fabs(rows.ds[i][j]);
        }
      }
      gradientsOfRows(q, k, dy, b, h, kvh, rows, expected, tol);
    }
  }
}

/// AttentionGrad's block form under `sees` (this block's keys), given the
/// exact log-sum-exp `lse` and `delta` of the whole attention per row
/// ([B, H, Sq]; the operands are them rounded to f32, within u |lse| and
/// u |delta|): p = exp(s - lse) for the keys a row sees (0 for the others
/// and in a row whose lse is -inf), ds = scale p (dp - delta), then dq, dk
/// and dv as referenceAttentionGrad. Tolerance, first order:
///  - relP = err + u |lse| + u |s - lse| + kLibmUlps ulp: the score's error,
///    lse's rounding and the subtraction's move the exponent, exp adds its
///    own; plus u(dtype) where a backend holds p in a 16-bit operand type;
///  - ds = (scale p)(dp - delta) takes dp's GEMM bound, delta's rounding,
///    the subtraction's u |dp - delta| and two products' 2u |ds| (plus
///    u(dtype) for a 16-bit ds), besides relP;
///  - then gradientsOfRows.
/// With the whole attention's keys, p is its softmax and delta its
/// rowsum(dp * p): the results are the ordinary AttentionGrad's.
void referenceBlockAttentionGrad(const HostTensor &q, const HostTensor &k,
                                 const HostTensor &v, const HostTensor &dy,
                                 double scale, const KeyMask &sees,
                                 const std::vector<double> &lse,
                                 const std::vector<double> &delta,
                                 std::vector<std::vector<double>> &expected,
                                 std::vector<std::vector<double>> &tol) {
  DType dtype = q.dtype;
  double store = dtype == DType::F32 ? 0 : unitRoundoff(dtype);
  int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2];
  int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
  startGradients(q, k, v, expected, tol);
  int64_t group = heads / kvHeads;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvh = h / group;
      GradRows rows;
      rows.p.assign(sq, std::vector<double>(sk, 0));
      rows.relP = rows.ds = rows.eDs = rows.p;
      for (int64_t i = 0; i < sq; ++i) {
        double l = lse[(b * heads + h) * sq + i];
        double rowDelta = delta[(b * heads + h) * sq + i];
        if (l == -INFINITY)
          continue;
        ScoreRow s = scoreRow(q, k, scale, sees, b, h, kvh, i);
        std::vector<double> dp, absDp;
        valueGradRow(v, dy, b, h, kvh, i, dp, absDp);
        for (int64_t j = 0; j < sk; ++j) {
          if (!sees(i, j))
            continue;
          double p = std::exp(s.s[j] - l);
          double relP = s.err[j] + kU * std::fabs(l) +
                        kU * std::fabs(s.s[j] - l) + kLibmUlps * kUlp + store;
          double diff = dp[j] - rowDelta;
          double ds = scale * p * diff;
          rows.p[i][j] = p;
          rows.relP[i][j] = relP;
          rows.ds[i][j] = ds;
          rows.eDs[i][j] =
              std::fabs(scale) * p *
                  (relP * std::fabs(diff) + (dv + 1) * kU * absDp[j] +
                   kU * std::fabs(rowDelta) + kU * std::fabs(diff)) +
              (2 * kU + store) * std::fabs(ds);
        }
      }
      gradientsOfRows(q, k, dy, b, h, kvh, rows, expected, tol);
    }
  }
}

/// The three results of AttentionGrad against `expected` within `tol`.
void expectGradientsClose(const std::vector<HostTensor> &out,
                          const std::vector<std::vector<double>> &expected,
                          const std::vector<std::vector<double>> &tol) {
  for (int r = 0; r < 3; ++r) {
    SCOPED_TRACE("gradient " + std::to_string(r));
    expectClose(out[r], expected[r], tol[r]);
  }
}

// Attention's gradients (AttentionGrad) per (batch, query head), the key's
// and value's per query head, against a double reference of the same
// decomposition. Tolerance: see referenceAttentionGrad.
TEST_P(KernelConformanceTest, AttentionGrad) {
  struct Case {
    int64_t b, h, hkv, sq, sk, d, dv;
    bool causal;
    int64_t window = 0;
  };
  const Case cases[] = {{1, 1, 1, 1, 1, 1, 1, false},
                        {1, 1, 1, 1, 1, 1, 1, true},
                        {2, 4, 4, 7, 7, 8, 8, true},
                        {2, 4, 2, 7, 7, 8, 8, false},
                        {1, 8, 2, 17, 17, 16, 16, true},
                        {2, 4, 1, 5, 17, 8, 3, false},
                        {1, 6, 3, 65, 65, 64, 64, true},
                        {2, 4, 2, 7, 7, 8, 8, true, 3},
                        {1, 6, 3, 65, 65, 64, 64, true, 16}};
  Random rng(11);
  for (DType dtype : kFloatTypes) {
    for (const Case &c : cases) {
      std::ostringstream name;
      name << "B=" << c.b << " H=" << c.h << " Hkv=" << c.hkv << " Sq=" << c.sq
           << " Sk=" << c.sk << " D=" << c.d << " Dv=" << c.dv
           << (c.causal ? " causal" : "")
           << (c.window ? " window=" + std::to_string(c.window) : "");
      SCOPED_TRACE(describe(OpKind::AttentionGrad, dtype, name.str()));
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, c.sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, c.sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, c.sk, c.dv}, -1, 1);
      HostTensor dy = randomTensor(rng, dtype, {c.b, c.h, c.sq, c.dv}, -1, 1);
      std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, c.sq, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, c.sk, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, c.sk, c.dv})};
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      if (!runOk(OpKind::AttentionGrad, attrs, {q, k, v, dy}, out))
        continue;
      std::vector<std::vector<double>> expected, tol;
      referenceAttentionGrad(q, k, v, dy, scale,
                             attentionMask(c.causal, c.window), expected, tol);
      expectGradientsClose(out, expected, tol);
    }
  }
}

/// The positions of a sequence of 2 cp chunks of `chunk` positions in
/// context parallelism's balanced order: chunks 0, 2cp-1, 1, 2cp-2, ...,
/// so that rank r's queries (positions [2r chunk, 2(r+1) chunk) of it) are
/// chunks r and 2cp-1-r.
std::vector<int64_t> balancedOrder(int64_t cp, int64_t chunk) {
  std::vector<int64_t> order;
  for (int64_t r = 0; r < cp; ++r)
    for (int64_t c : {r, 2 * cp - 1 - r})
      for (int64_t i = 0; i < chunk; ++i)
        order.push_back(c * chunk + i);
  return order;
}

/// Rank r's query positions: its 2 chunks of balancedOrder(cp, chunk).
std::vector<int64_t> balancedQueries(int64_t cp, int64_t chunk, int64_t r) {
  std::vector<int64_t> order = balancedOrder(cp, chunk);
  return std::vector<int64_t>(order.begin() + 2 * r * chunk,
                              order.begin() + 2 * (r + 1) * chunk);
}

std::vector<int64_t> iota(int64_t n, int64_t first = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

/// `v` shuffled by a fixed seed.
std::vector<int64_t> shuffled(std::vector<int64_t> v, uint64_t seed) {
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
  return v;
}

HostTensor positionsTensor(DType dtype, const std::vector<int64_t> &p) {
  HostTensor t = emptyTensor(dtype, {static_cast<int64_t>(p.size())});
  for (size_t i = 0; i < p.size(); ++i)
    t.values[i] = static_cast<double>(p[i]);
  return t;
}

/// Attention with query_positions and key_positions operands (context
/// parallelism: a rank's chunk of queries against the keys of every chunk,
/// in any order).
struct PositionsCase {
  const char *name;
  int64_t b, h, hkv, d, dv;
  std::vector<int64_t> queries, keys;
  int64_t window = 0;
  bool causal = true;
  DType positionType = DType::I64;
  bool f32Only = false; ///< large: once, not per dtype
  bool operands = true; ///< false: none (query i at i, key j at j)
};

std::vector<PositionsCase> positionsCases() {
  // Queries at 0-3 come before every key (8-15): their rows see nothing;
  // with a window of 2, neither do those at 17 and 30.
  std::vector<int64_t> early = {0, 1, 2, 3, 12, 13, 14, 15};
  std::vector<int64_t> gaps = {0, 1, 12, 3, 13, 17, 2, 30};
  return {
      {"balanced cp=2 rank 0", 1, 2, 2, 8, 8, balancedQueries(2, 4, 0),
       balancedOrder(2, 4)},
      {"balanced cp=2 rank 1, GQA, window 5", 2, 4, 2, 8, 6,
       balancedQueries(2, 4, 1), balancedOrder(2, 4), 5},
      {"balanced cp=4 rank 3, GQA, window 3, i32", 1, 6, 3, 16, 16,
       balancedQueries(4, 4, 3), balancedOrder(4, 4), 3, true, DType::I32},
      {"shuffled queries and keys, Sq = Sk", 1, 4, 1, 8, 8,
       shuffled(iota(17), 1), shuffled(iota(17), 2)},
      {"shuffled, window 4", 2, 2, 1, 8, 8, shuffled(iota(13), 3),
       shuffled(iota(13), 4), 4},
      {"rows that see no key", 1, 2, 1, 8, 8, early, shuffled(iota(8, 8), 5)},
      {"rows that see no key, window 2", 1, 2, 2, 8, 8, gaps,
       shuffled(iota(8, 8), 6), 2},
      {"not causal: positions ignored", 1, 4, 2, 8, 8, shuffled(iota(5), 7),
       shuffled(iota(11), 8), 0, false},
      // More scores than one CPU block of kScoreBlock (2^20): query blocks
      // start inside a head and in the next one.
      {"blocks of query rows", 1, 2, 1, 4, 4, balancedQueries(2, 400, 0),
       balancedOrder(2, 400), 0, true, DType::I64, true},
  };
}

std::string describe(const PositionsCase &c) {
  std::ostringstream name;
  name << c.name << ": B=" << c.b << " H=" << c.h << " Hkv=" << c.hkv
       << " Sq=" << c.queries.size() << " Sk=" << c.keys.size() << " D=" << c.d
       << " Dv=" << c.dv << " positions " << dtypeName(c.positionType);
  return name.str();
}

// Attention with positions operands against referenceAttention under the
// positions' mask (same tolerance).
TEST_P(KernelConformanceTest, AttentionWithPositions) {
  Random rng(13);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : positionsCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::Attention, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, sq, c.dv})};
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      if (!runOk(OpKind::Attention, attrs,
                 {q, k, v, positionsTensor(c.positionType, c.queries),
                  positionsTensor(c.positionType, c.keys)},
                 out))
        continue;
      std::vector<double> expected, tol;
      referenceAttention(q, k, v, scale,
                         attentionMask(c.causal, c.window, c.queries, c.keys),
                         expected, tol);
      expectClose(out[0], expected, tol);
    }
  }
}

// AttentionGrad with positions operands against referenceAttentionGrad
// under the positions' mask (same tolerance).
TEST_P(KernelConformanceTest, AttentionGradWithPositions) {
  Random rng(17);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : positionsCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::AttentionGrad, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      HostTensor dy = randomTensor(rng, dtype, {c.b, c.h, sq, c.dv}, -1, 1);
      std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, sq, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, sk, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, sk, c.dv})};
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      if (!runOk(OpKind::AttentionGrad, attrs,
                 {q, k, v, dy, positionsTensor(c.positionType, c.queries),
                  positionsTensor(c.positionType, c.keys)},
                 out))
        continue;
      std::vector<std::vector<double>> expected, tol;
      referenceAttentionGrad(
          q, k, v, dy, scale,
          attentionMask(c.causal, c.window, c.queries, c.keys), expected, tol);
      expectGradientsClose(out, expected, tol);
    }
  }
}

// Positions 0..S-1 for queries and keys are what the kernels assume
// without positions: Attention and AttentionGrad with them agree with the
// same kernels without them. Both are within the reference's tolerance of
// the exact result, so within twice it of each other.
TEST_P(KernelConformanceTest, AttentionIotaPositionsAreTheDefault) {
  struct Case {
    int64_t b, h, hkv, s, d, window;
  };
  const Case cases[] = {{1, 1, 1, 1, 4, 0},
                        {2, 4, 2, 9, 8, 0},
                        {1, 6, 3, 33, 16, 0},
                        {2, 4, 2, 9, 8, 3},
                        {1, 6, 3, 33, 16, 1}};
  Random rng(19);
  for (DType dtype : kFloatTypes) {
    for (const Case &c : cases) {
      std::ostringstream name;
      name << "B=" << c.b << " H=" << c.h << " Hkv=" << c.hkv << " S=" << c.s
           << " D=" << c.d << " causal"
           << (c.window ? " window=" + std::to_string(c.window) : "");
      SCOPED_TRACE(describe(OpKind::Attention, dtype, name.str()));
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, c.s, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, c.s, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, c.s, c.d}, -1, 1);
      HostTensor dy = randomTensor(rng, dtype, {c.b, c.h, c.s, c.d}, -1, 1);
      HostTensor positions = positionsTensor(DType::I64, iota(c.s));
      KernelAttrs attrs = attentionAttrs(true, scale, c.window);
      auto results = [&] {
        return std::vector<HostTensor>{
            emptyTensor(dtype, {c.b, c.h, c.s, c.d}),
            emptyTensor(dtype, {c.b, c.h, c.s, c.d}),
            emptyTensor(dtype, {c.b, c.h, c.s, c.d})};
      };
      std::vector<HostTensor> plain = {results()[0]}, byPositions = plain;
      std::vector<HostTensor> plainGrad = results(),
                              byPositionsGrad = results();
      if (!runOk(OpKind::Attention, attrs, {q, k, v}, plain) ||
          !runOk(OpKind::Attention, attrs, {q, k, v, positions, positions},
                 byPositions) ||
          !runOk(OpKind::AttentionGrad, attrs, {q, k, v, dy}, plainGrad) ||
          !runOk(OpKind::AttentionGrad, attrs,
                 {q, k, v, dy, positions, positions}, byPositionsGrad))
        continue;
      KeyMask mask = attentionMask(true, c.window);
      std::vector<double> expected, tol;
      referenceAttention(q, k, v, scale, mask, expected, tol);
      for (double &t : tol)
        t *= 2;
      expectClose(byPositions[0], plain[0].values, tol);
      std::vector<std::vector<double>> gradExpected, gradTol;
      referenceAttentionGrad(q, k, v, dy, scale, mask, gradExpected, gradTol);
      for (int r = 0; r < 3; ++r) {
        SCOPED_TRACE("gradient " + std::to_string(r));
        for (double &t : gradTol[r])
          t *= 2;
        expectClose(byPositionsGrad[r], plainGrad[r].values, gradTol[r]);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Attention's block form (ring attention: context parallelism)
//===----------------------------------------------------------------------===//

/// The mask of a case's attributes and positions (none without operands).
KeyMask caseMask(const PositionsCase &c, const std::vector<int64_t> &keys) {
  if (!c.operands)
    return attentionMask(c.causal, c.window);
  return attentionMask(c.causal, c.window, c.queries, keys);
}

/// Keys [begin, end) of a [B, H, S, D] tensor (its dimension 2).
HostTensor sliceKeys(const HostTensor &t, int64_t begin, int64_t end) {
  Shape shape = t.shape;
  shape[2] = end - begin;
  HostTensor result = emptyTensor(t.dtype, shape);
  for (int64_t i = 0; i < numel(shape); ++i) {
    Shape index = unravel(i, shape);
    index[2] += begin;
    result.values[i] = t.values[ravel(index, t.shape)];
  }
  return result;
}

/// Keys [begin, end) of values per key row (dk or dv) of `shape` [B, H,
/// Sk, D].
std::vector<double> sliceKeys(const std::vector<double> &values,
                              const Shape &shape, int64_t begin, int64_t end) {
  return sliceKeys(HostTensor{DType::F32, shape, values}, begin, end).values;
}

/// Ring attention's blocks of keys: the first half of the key order and the
/// rest. In the balanced order each is a set of cp chunks, not one range.
std::vector<std::pair<int64_t, int64_t>> keyBlocks(int64_t sk) {
  return {{0, sk / 2}, {sk / 2, sk}};
}

/// An f32 tensor [B, H, Sq] of per-row values (lse, delta), rounded to f32.
HostTensor rowTensor(const Shape &shape, const std::vector<double> &values) {
  HostTensor t = emptyTensor(DType::F32, shape);
  for (size_t i = 0; i < values.size(); ++i)
    t.values[i] = roundTo(DType::F32, values[i]);
  return t;
}

/// The whole attention's per-row delta = rowsum(dy * out), exactly (out
/// the reference's), as the caller of the block form computes it.
std::vector<double> rowDelta(const HostTensor &dy,
                             const std::vector<double> &out) {
  int64_t dv = dy.shape[3], rows = numel(dy.shape) / std::max<int64_t>(dv, 1);
  std::vector<double> delta(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = 0; e < dv; ++e)
      delta[r] += dy.values[r * dv + e] * out[r * dv + e];
  return delta;
}

/// Cases of the block form's forward: positionsCases, and two without
/// positions operands (query i at i, key j at j).
std::vector<PositionsCase> blockForwardCases() {
  std::vector<PositionsCase> cases = positionsCases();
  PositionsCase causal{
      "causal by index, GQA, window 3", 2, 4, 2, 8, 6, iota(9), iota(9), 3};
  PositionsCase cross{
      "not causal, Sq != Sk", 1, 4, 1, 8, 8, iota(5), iota(12), 0, false};
  for (PositionsCase c : {causal, cross}) {
    c.operands = false;
    cases.push_back(c);
  }
  return cases;
}

/// Attention's operands for a case: q, k, v and, where the case has them,
/// its positions (key positions `keys`).
std::vector<HostTensor> attentionOperands(const PositionsCase &c,
                                          const HostTensor &q,
                                          const HostTensor &k,
                                          const HostTensor &v,
                                          const std::vector<int64_t> &keys) {
  std::vector<HostTensor> in = {q, k, v};
  if (c.operands) {
    in.push_back(positionsTensor(c.positionType, c.queries));
    in.push_back(positionsTensor(c.positionType, keys));
  }
  return in;
}

// Attention's block form, results [out, lse]: out is the attention's
// result (referenceAttention's, and within twice its tolerance of the same
// kernel's without lse), lse each row's log-sum-exp of the scaled scores
// of the keys it sees (referenceAttention's lse: -inf, exactly, for a row
// that sees none), f32 whatever the operands' dtype; with positions
// operands and without.
TEST_P(KernelConformanceTest, AttentionBlockForm) {
  Random rng(23);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : blockForwardCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::Attention, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, sq, c.dv}),
                                     emptyTensor(DType::F32, {c.b, c.h, sq})};
      std::vector<HostTensor> plain = {out[0]};
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      std::vector<HostTensor> in = attentionOperands(c, q, k, v, c.keys);
      if (!runOk(OpKind::Attention, attrs, in, out) ||
          !runOk(OpKind::Attention, attrs, in, plain))
        continue;
      std::vector<double> expected, tol;
      Reference lse;
      referenceAttention(q, k, v, scale, caseMask(c, c.keys), expected, tol,
                         &lse);
      {
        SCOPED_TRACE("result");
        expectClose(out[0], expected, tol);
      }
      {
        SCOPED_TRACE("lse");
        expectClose(out[1], lse.expected, lse.tol);
      }
      SCOPED_TRACE("result against the form without lse");
      for (double &t : tol)
        t *= 2;
      expectClose(out[0], plain[0].values, tol);
    }
  }
}

// Ring attention's forward: the block form over two blocks of the keys
// (keyBlocks), merged by log-sum-exp as the compiler does it, m = max(l1,
// l2), out = (o1 e^(l1 - m) + o2 e^(l2 - m)) / (e^(l1 - m) + e^(l2 - m)),
// lse = m + log(e^(l1 - m) + e^(l2 - m)), is the attention over all the
// keys. A row that sees no key of either block (l1 = l2 = -inf) merges to
// 0 and -inf. Tolerance, first order: with the exact weights w_b =
// e^(l_b - lse) and per block a result error t_b and an lse error e_b
// (referenceAttention's on the block), the merged result is off by at most
// w1 t1 + w2 t2 + w1 w2 |o1 - o2| (e1 + e2) (the weights' derivatives in
// l_b are +-w1 w2), the merged lse by w1 e1 + w2 e2; the merge is in double.
TEST_P(KernelConformanceTest, AttentionBlocksMergeByLogSumExp) {
  Random rng(29);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : positionsCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::Attention, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      std::vector<std::vector<HostTensor>> results;
      std::vector<Reference> outRef, lseRef;
      for (auto [begin, end] : keyBlocks(sk)) {
        std::vector<int64_t> keys(c.keys.begin() + begin, c.keys.begin() + end);
        HostTensor kb = sliceKeys(k, begin, end), vb = sliceKeys(v, begin, end);
        results.push_back({emptyTensor(dtype, {c.b, c.h, sq, c.dv}),
                           emptyTensor(DType::F32, {c.b, c.h, sq})});
        if (!runOk(OpKind::Attention, attrs,
                   attentionOperands(c, q, kb, vb, keys), results.back()))
          break;
        outRef.emplace_back();
        lseRef.emplace_back();
        referenceAttention(q, kb, vb, scale, caseMask(c, keys),
                           outRef.back().expected, outRef.back().tol,
                           &lseRef.back());
      }
      if (outRef.size() != 2)
        continue;
      Reference whole, wholeLse;
      referenceAttention(q, k, v, scale, caseMask(c, c.keys), whole.expected,
                         whole.tol, &wholeLse);
      HostTensor merged = emptyTensor(dtype, {c.b, c.h, sq, c.dv});
      HostTensor mergedLse = emptyTensor(DType::F32, {c.b, c.h, sq});
      std::vector<double> tol(merged.values.size()), lseTol(sq * c.b * c.h);
      for (int64_t r = 0; r < c.b * c.h * sq; ++r) {
        double l1 = results[0][1].values[r], l2 = results[1][1].values[r];
        double m = std::max(l1, l2);
        if (m == -INFINITY) {
          mergedLse.values[r] = -INFINITY;
          continue; // merged.values and the tolerances: 0
        }
        double a1 = std::exp(l1 - m), a2 = std::exp(l2 - m);
        mergedLse.values[r] = m + std::log(a1 + a2);
        double lse = wholeLse.expected[r];
        double w1 = std::exp(lseRef[0].expected[r] - lse),
               w2 = std::exp(lseRef[1].expected[r] - lse);
        double e1 = lseRef[0].tol[r], e2 = lseRef[1].tol[r];
        lseTol[r] = w1 * e1 + w2 * e2;
        for (int64_t e = 0; e < c.dv; ++e) {
          int64_t at = r * c.dv + e;
          merged.values[at] =
              (results[0][0].values[at] * a1 + results[1][0].values[at] * a2) /
              (a1 + a2);
          double o1 = outRef[0].expected[at], o2 = outRef[1].expected[at];
          tol[at] = w1 * outRef[0].tol[at] + w2 * outRef[1].tol[at] +
                    w1 * w2 * std::fabs(o1 - o2) * (e1 + e2);
        }
      }
      {
        SCOPED_TRACE("merged result");
        expectClose(merged, whole.expected, tol);
      }
      SCOPED_TRACE("merged lse");
      expectClose(mergedLse, wholeLse.expected, lseTol);
    }
  }
}

/// The whole attention's lse and delta for AttentionGrad's block form:
/// exact (referenceAttention over every key, delta = rowsum(dy * out)).
struct WholeRows {
  std::vector<double> lse, delta;
};

WholeRows wholeRows(const HostTensor &q, const HostTensor &k,
                    const HostTensor &v, const HostTensor &dy, double scale,
                    const KeyMask &sees) {
  std::vector<double> out, tol;
  Reference lse;
  referenceAttention(q, k, v, scale, sees, out, tol, &lse);
  return {lse.expected, rowDelta(dy, out)};
}

// AttentionGrad's block form over every key, given the whole attention's
// lse and delta (rounded to f32), is the ordinary AttentionGrad: against
// referenceAttentionGrad's results, within referenceBlockAttentionGrad's
// tolerance (whose exact results are the same numbers).
TEST_P(KernelConformanceTest, AttentionGradBlockFormOverEveryKey) {
  Random rng(31);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : positionsCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::AttentionGrad, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      HostTensor dy = randomTensor(rng, dtype, {c.b, c.h, sq, c.dv}, -1, 1);
      KeyMask mask = caseMask(c, c.keys);
      WholeRows whole = wholeRows(q, k, v, dy, scale, mask);
      std::vector<HostTensor> in = attentionOperands(c, q, k, v, c.keys);
      in.insert(in.begin() + 3, dy);
      in.push_back(rowTensor({c.b, c.h, sq}, whole.lse));
      in.push_back(rowTensor({c.b, c.h, sq}, whole.delta));
      std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, sq, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, sk, c.d}),
                                     emptyTensor(dtype, {c.b, c.h, sk, c.dv})};
      if (!runOk(OpKind::AttentionGrad,
                 attentionAttrs(c.causal, scale, c.window), in, out))
        continue;
      std::vector<std::vector<double>> expected, unused, blockExpected, tol;
      referenceAttentionGrad(q, k, v, dy, scale, mask, expected, unused);
      referenceBlockAttentionGrad(q, k, v, dy, scale, mask, whole.lse,
                                  whole.delta, blockExpected, tol);
      expectGradientsClose(out, expected, tol);
    }
  }
}

// Ring attention's backward: AttentionGrad's block form per block of keys
// (keyBlocks), each given the whole attention's lse and delta, sums to the
// ordinary AttentionGrad over all of them: dq the sum of the blocks' dq,
// and each block's dk and dv the whole's rows of its keys. Tolerance:
// referenceBlockAttentionGrad's per block (summed for dq); its exact
// results are the whole's.
TEST_P(KernelConformanceTest, AttentionGradBlocksSumToTheWhole) {
  Random rng(37);
  for (DType dtype : kFloatTypes) {
    for (const PositionsCase &c : positionsCases()) {
      if (c.f32Only && dtype != DType::F32)
        continue;
      SCOPED_TRACE(describe(OpKind::AttentionGrad, dtype, describe(c)));
      int64_t sq = c.queries.size(), sk = c.keys.size();
      float scale = static_cast<float>(1 / std::sqrt(double(c.d)));
      HostTensor q = randomTensor(rng, dtype, {c.b, c.h, sq, c.d}, -2, 2);
      HostTensor k = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.d}, -2, 2);
      HostTensor v = randomTensor(rng, dtype, {c.b, c.hkv, sk, c.dv}, -1, 1);
      HostTensor dy = randomTensor(rng, dtype, {c.b, c.h, sq, c.dv}, -1, 1);
      KernelAttrs attrs = attentionAttrs(c.causal, scale, c.window);
      WholeRows whole = wholeRows(q, k, v, dy, scale, caseMask(c, c.keys));
      std::vector<std::vector<double>> expected, unused;
      referenceAttentionGrad(q, k, v, dy, scale, caseMask(c, c.keys), expected,
                             unused);
      HostTensor dqSum = emptyTensor(dtype, {c.b, c.h, sq, c.d});
      std::vector<double> dqTol(dqSum.values.size(), 0.0);
      bool ran = true;
      for (auto [begin, end] : keyBlocks(sk)) {
        SCOPED_TRACE("keys " + std::to_string(begin) + ".." +
                     std::to_string(end));
        std::vector<int64_t> keys(c.keys.begin() + begin, c.keys.begin() + end);
        HostTensor kb = sliceKeys(k, begin, end), vb = sliceKeys(v, begin, end);
        std::vector<HostTensor> in = attentionOperands(c, q, kb, vb, keys);
        in.insert(in.begin() + 3, dy);
        in.push_back(rowTensor({c.b, c.h, sq}, whole.lse));
        in.push_back(rowTensor({c.b, c.h, sq}, whole.delta));
        int64_t n = end - begin;
        std::vector<HostTensor> out = {emptyTensor(dtype, {c.b, c.h, sq, c.d}),
                                       emptyTensor(dtype, {c.b, c.h, n, c.d}),
                                       emptyTensor(dtype, {c.b, c.h, n, c.dv})};
        if (!(ran = runOk(OpKind::AttentionGrad, attrs, in, out)))
          break;
        std::vector<std::vector<double>> blockExpected, tol;
        referenceBlockAttentionGrad(q, kb, vb, dy, scale, caseMask(c, keys),
                                    whole.lse, whole.delta, blockExpected, tol);
        for (size_t i = 0; i < dqSum.values.size(); ++i) {
          dqSum.values[i] += out[0].values[i];
          dqTol[i] += tol[0][i];
        }
        for (int r = 1; r < 3; ++r) {
          SCOPED_TRACE("gradient " + std::to_string(r));
          Shape wholeShape = out[r].shape;
          wholeShape[2] = sk;
          expectClose(out[r], sliceKeys(expected[r], wholeShape, begin, end),
                      tol[r]);
        }
      }
      if (!ran)
        continue;
      SCOPED_TRACE("gradient 0, summed over the blocks");
      expectClose(dqSum, expected[0], dqTol);
    }
  }
}

//===----------------------------------------------------------------------===//
// Softmax, normalisation, rotary embedding, loss
//===----------------------------------------------------------------------===//

// Softmax along each dimension; the [-100, 100] case overflows exp in f32
// unless the maximum is subtracted. Tolerance: softmaxRelError relative,
// plus, where exp(x - m) underflows to an f32 subnormal (the [-100, 100]
// case), the absolute error there: exp's kLibmUlps and the normalising
// product's rounding, each in units of the subnormal spacing 2^-149.
TEST_P(KernelConformanceTest, Softmax) {
  struct Case {
    Shape shape;
    int64_t dim;
    double range;
  };
  const Case cases[] = {
      {{1}, 0, 4},        {{17}, 0, 4},       {{3, 17}, 0, 4},
      {{3, 17}, 1, 4},    {{2, 3, 33}, 0, 4}, {{2, 3, 33}, 1, 4},
      {{2, 3, 33}, 2, 4}, {{4, 129}, 1, 4},   {{4, 129}, 1, 100}};
  Random rng(8);
  for (DType dtype : kFloatTypes) {
    for (const Case &c : cases) {
      std::ostringstream name;
      name << str(c.shape) << " dim " << c.dim << " values in [-" << c.range
           << ", " << c.range << "]";
      SCOPED_TRACE(describe(OpKind::Softmax, dtype, name.str()));
      HostTensor in = randomTensor(rng, dtype, c.shape, -c.range, c.range);
      std::vector<HostTensor> out = {emptyTensor(dtype, c.shape)};
      if (!runOk(OpKind::Softmax, softmaxAttrs(c.dim), {in}, out))
        continue;
      std::vector<double> expected(in.values.size()), tol(in.values.size());
      int64_t n = c.shape[c.dim];
      for (size_t flat = 0; flat < in.values.size(); ++flat) {
        Shape index = unravel(flat, c.shape);
        double m = -INFINITY;
        for (index[c.dim] = 0; index[c.dim] < n; ++index[c.dim])
          m = std::max(m, in.values[ravel(index, c.shape)]);
        double sum = 0, maxDev = 0;
        for (index[c.dim] = 0; index[c.dim] < n; ++index[c.dim]) {
          double x = in.values[ravel(index, c.shape)];
          sum += std::exp(x - m);
          maxDev = std::max(maxDev, m - x);
        }
        double x = in.values[flat], y = std::exp(x - m) / sum;
        expected[flat] = y;
        tol[flat] = stored(dtype, y,
                           softmaxRelError(m - x, maxDev, n) * y +
                               (kLibmUlps + 1) * 0x1p-149);
      }
      expectClose(out[0], expected, tol);
    }
  }
}

// LayerNorm and RmsNorm over the last dimension (n elements). LayerNorm's
// bound: the mean from any f32 summation is within gamma_n mean|x|, which
// shifts x - mean; the variance, its square root and reciprocal carry
// (n + 4) u relative; centring, scaling, multiplying by the weight and adding
// the bias 4 more roundings. Together
//   (n + 8) u (|g| (|x - mean| + mean|x|) / sigma + |b|).
// The rows with mean 100 and spread 1 catch a one-pass E[x^2] - E[x]^2
// variance in f32 (a kernel changed that way missed this bound by 3x to 20x
// there). RmsNorm: the mean square, root and reciprocal carry (n + 4) u
// relative, plus 4 roundings: (n + 8) u |x g| / rms.
TEST_P(KernelConformanceTest, Normalization) {
  struct Case {
    Shape shape;
    double center;
  };
  const Case cases[] = {{{1}, 0},      {{3, 7}, 0},    {{2, 3, 33}, 0},
                        {{5, 129}, 0}, {{2, 1000}, 0}, {{4, 65}, 100}};
  Random rng(9);
  for (DType dtype : kFloatTypes) {
    for (OpKind op : {OpKind::LayerNorm, OpKind::RmsNorm}) {
      for (int bias = 0; bias < (op == OpKind::LayerNorm ? 2 : 1); ++bias) {
        for (const Case &c : cases) {
          std::ostringstream name;
          name << str(c.shape) << (bias ? " with bias" : "") << " mean "
               << c.center;
          SCOPED_TRACE(describe(op, dtype, name.str()));
          int64_t n = c.shape.back(), rows = numel(c.shape) / n;
          const float eps = 1e-5f;
          HostTensor x =
              randomTensor(rng, dtype, c.shape, c.center - 1, c.center + 1);
          HostTensor g = randomTensor(rng, dtype, {n}, 0.5, 1.5);
          HostTensor bv = randomTensor(rng, dtype, {n}, -1, 1);
          std::vector<HostTensor> inputs = {x, g};
          KernelAttrs attrs = normAttrs(eps, op == OpKind::LayerNorm && bias);
          if (op == OpKind::LayerNorm && bias)
            inputs.push_back(bv);
          std::vector<HostTensor> out = {emptyTensor(dtype, c.shape)};
          if (!runOk(op, attrs, inputs, out))
            continue;
          std::vector<double> expected(x.values.size()), tol(x.values.size());
          for (int64_t r = 0; r < rows; ++r) {
            const double *row = x.values.data() + r * n;
            double mean = 0, meanAbs = 0, var = 0, meanSquare = 0;
            for (int64_t i = 0; i < n; ++i) {
              mean += row[i] / n;
              meanAbs += std::fabs(row[i]) / n;
              meanSquare += row[i] * row[i] / n;
            }
            for (int64_t i = 0; i < n; ++i)
              var += (row[i] - mean) * (row[i] - mean) / n;
            for (int64_t i = 0; i < n; ++i) {
              double gi = g.values[i], y, e;
              if (op == OpKind::LayerNorm) {
                double sigma = std::sqrt(var + double(eps));
                double b = bias ? bv.values[i] : 0;
                y = (row[i] - mean) / sigma * gi + b;
                e = (n + 8) * kU *
                    (std::fabs(gi) * (std::fabs(row[i] - mean) + meanAbs) /
                         sigma +
                     std::fabs(b));
              } else {
                double rms = std::sqrt(meanSquare + double(eps));
                y = row[i] / rms * gi;
                e = (n + 8) * kU * std::fabs(row[i] * gi) / rms;
              }
              expected[r * n + i] = y;
              tol[r * n + i] = stored(dtype, y, e);
            }
          }
          expectClose(out[0], expected, tol);
        }
      }
    }
  }
}

// RotaryEmbedding, rotate-half convention: y = x cos + [-x2, x1] sin. Two
// products and a sum: at most 3u (|x cos| + |rotated sin|).
TEST_P(KernelConformanceTest, RotaryEmbedding) {
  const Shape shapes[] = {
      {3, 4}, {33, 2}, {2, 3, 7, 8}, {1, 2, 17, 16}, {2, 65, 64}};
  Random rng(10);
  for (DType dtype : kFloatTypes) {
    for (const Shape &shape : shapes) {
      SCOPED_TRACE(describe(OpKind::RotaryEmbedding, dtype, str(shape)));
      int64_t r = shape.size(), s = shape[r - 2], d = shape[r - 1], h = d / 2;
      HostTensor x = randomTensor(rng, dtype, shape, -2, 2);
      HostTensor cosT = randomTensor(rng, dtype, {s, d}, -1, 1);
      HostTensor sinT = randomTensor(rng, dtype, {s, d}, -1, 1);
      std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
      if (!runOk(OpKind::RotaryEmbedding, {}, {x, cosT, sinT}, out))
        continue;
      std::vector<double> expected(x.values.size()), tol(x.values.size());
      for (size_t flat = 0; flat < x.values.size(); ++flat) {
        int64_t i = flat % d, pos = (flat / d) % s;
        int64_t rowStart = flat - i;
        double rotated =
            i < h ? -x.values[rowStart + i + h] : x.values[rowStart + i - h];
        double a = x.values[flat] * cosT.values[pos * d + i];
        double b = rotated * sinT.values[pos * d + i];
        expected[flat] = a + b;
        tol[flat] =
            stored(dtype, a + b, 3 * kU * (std::fabs(a) + std::fabs(b)));
      }
      expectClose(out[0], expected, tol);
    }
  }
}

// SoftmaxCrossEntropy: loss = logsumexp(x) - x[label] per position, then
// mean, sum or none. Per position, with lse = m + log S: S carries
// softmaxRelError-like error (u maxDev + kLibmUlps + gamma_C), which log turns
// into an absolute error, log itself kLibmUlps |log S|, and the two additions
// u (|m| + |log S|) and u |loss|. Sum adds gamma_N sum |loss|; mean divides
// by N with one more rounding.
TEST_P(KernelConformanceTest, SoftmaxCrossEntropy) {
  struct Case {
    Shape logits;
    double range;
  };
  const Case cases[] = {{{1, 1}, 4},    {{7, 3}, 4},       {{2, 5, 17}, 4},
                        {{4, 129}, 20}, {{2, 3, 1000}, 4}, {{3, 33}, 100}};
  Random rng(11);
  for (DType dtype : kFloatTypes) {
    for (DType labelType : {DType::I32, DType::I64}) {
      for (int64_t reduction = 0; reduction < 3; ++reduction) {
        for (const Case &c : cases) {
          std::ostringstream name;
          name << str(c.logits) << " labels " << dtypeName(labelType) << " "
               << (reduction == 0   ? "mean"
                   : reduction == 1 ? "sum"
                                    : "none");
          SCOPED_TRACE(
              describe(OpKind::SoftmaxCrossEntropy, dtype, name.str()));
          int64_t classes = c.logits.back();
          Shape labelShape(c.logits.begin(), c.logits.end() - 1);
          HostTensor logits =
              randomTensor(rng, dtype, c.logits, -c.range, c.range);
          HostTensor labels =
              randomTensor(rng, labelType, labelShape, 0, classes - 1);
          Shape resultShape = reduction == 2 ? labelShape : Shape{};
          std::vector<HostTensor> out = {emptyTensor(dtype, resultShape)};
          if (!runOk(OpKind::SoftmaxCrossEntropy,
                     crossEntropyAttrs(plan::LossReduction(reduction)),
                     {logits, labels}, out))
            continue;
          int64_t positions = numel(labelShape);
          std::vector<double> loss(positions), err(positions);
          for (int64_t p = 0; p < positions; ++p) {
            const double *x = logits.values.data() + p * classes;
            double m = *std::max_element(x, x + classes), sum = 0, maxDev = 0;
            for (int64_t j = 0; j < classes; ++j) {
              sum += std::exp(x[j] - m);
              maxDev = std::max(maxDev, m - x[j]);
            }
            double logS = std::log(sum);
            loss[p] = m + logS - x[static_cast<int64_t>(labels.values[p])];
            err[p] = kU * maxDev + 2 * kLibmUlps * kUlp + (classes + 2) * kU +
                     kLibmUlps * kUlp * std::fabs(logS) +
                     kU * (std::fabs(m) + std::fabs(logS)) +
                     kU * std::fabs(loss[p]);
          }
          if (reduction == 2) {
            std::vector<double> tol(positions);
            for (int64_t p = 0; p < positions; ++p)
              tol[p] = stored(dtype, loss[p], err[p]);
            expectClose(out[0], loss, tol);
            continue;
          }
          double total = 0, totalErr = 0, absTotal = 0;
          for (int64_t p = 0; p < positions; ++p) {
            total += loss[p];
            totalErr += err[p];
            absTotal += std::fabs(loss[p]);
          }
          totalErr += positions * kU * absTotal;
          if (reduction == 0) {
            total /= positions;
            totalErr = totalErr / positions + kU * std::fabs(total);
          }
          expectClose(out[0], {total}, {stored(dtype, total, totalErr)});
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// ReduceSum / ReduceMean / ReduceMax over dimension sets, with the reduced
// dimensions kept (size 1) or dropped. Sum of n terms in any f32 order:
// gamma_n sum|x|; mean: that over n plus the division's u |mean|; max: exact.
TEST_P(KernelConformanceTest, Reduce) {
  struct Case {
    Shape shape;
    std::vector<int64_t> dims;
  };
  const Case cases[] = {{{17}, {0}},
                        {{3, 7}, {0}},
                        {{3, 7}, {1}},
                        {{3, 7}, {0, 1}},
                        {{2, 3, 5, 7}, {1, 3}},
                        {{2, 3, 5, 7}, {0, 2}},
                        {{2, 3, 5, 7}, {3}},
                        {{2, 3, 5, 7}, {0, 1, 2, 3}},
                        {{65, 129}, {0}},
                        {{65, 129}, {1}},
                        {{1, 33, 1}, {0, 2}},
                        {{4, 1, 5}, {1}},
                        {{3, 7}, {1, 0}}};
  Random rng(12);
  for (DType dtype : kFloatTypes) {
    for (OpKind op :
         {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax}) {
      for (const Case &c : cases) {
        for (int keep = 0; keep < 2; ++keep) {
          std::ostringstream name;
          name << str(c.shape) << " dims " << str(c.dims)
               << (keep ? " kept" : " dropped");
          SCOPED_TRACE(describe(op, dtype, name.str()));
          std::set<int64_t> reduced(c.dims.begin(), c.dims.end());
          Shape kept, dropped;
          int64_t count = 1;
          for (int64_t d = 0; d < int64_t(c.shape.size()); ++d) {
            kept.push_back(reduced.count(d) ? 1 : c.shape[d]);
            if (!reduced.count(d))
              dropped.push_back(c.shape[d]);
            else
              count *= c.shape[d];
          }
          HostTensor in = randomTensor(rng, dtype, c.shape, -1, 1);
          std::vector<HostTensor> out = {
              emptyTensor(dtype, keep ? kept : dropped)};
          if (!runOk(op, reduceAttrs(c.dims), {in}, out))
            continue;
          int64_t results = numel(kept);
          std::vector<double> sum(results, 0), abs(results, 0),
              max(results, -INFINITY);
          for (size_t flat = 0; flat < in.values.size(); ++flat) {
            Shape index = unravel(flat, c.shape);
            for (int64_t d : c.dims)
              index[d] = 0;
            int64_t at = ravel(index, kept);
            double x = in.values[flat];
            sum[at] += x;
            abs[at] += std::fabs(x);
            max[at] = std::max(max[at], x);
          }
          std::vector<double> expected(results), tol(results);
          for (int64_t i = 0; i < results; ++i) {
            if (op == OpKind::ReduceMax) {
              expected[i] = max[i];
              tol[i] = 0;
            } else if (op == OpKind::ReduceSum) {
              expected[i] = sum[i];
              tol[i] = stored(dtype, sum[i], count * kU * abs[i]);
            } else {
              double mean = sum[i] / count;
              expected[i] = mean;
              tol[i] = stored(dtype, mean, kU * abs[i] + kU * std::fabs(mean));
            }
          }
          expectClose(out[0], expected, tol);
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Data movement: exact on every dtype
//===----------------------------------------------------------------------===//

TEST_P(KernelConformanceTest, Transpose) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{7}, {0}},
                        {{3, 17}, {1, 0}},
                        {{2, 3, 5}, {2, 0, 1}},
                        {{2, 3, 5}, {0, 2, 1}},
                        {{2, 3, 5, 7}, {0, 2, 1, 3}},
                        {{2, 3, 5, 7}, {3, 2, 1, 0}},
                        {{1, 33, 1, 7}, {2, 3, 0, 1}},
                        {{65, 129}, {1, 0}},
                        {{3, 40, 70}, {0, 2, 1}},
                        {{33, 2, 65}, {2, 1, 0}}};
  Random rng(13);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(describe(OpKind::Transpose, dtype,
                            str(c.shape) + " permutation " + str(c.perm)));
      Shape outShape;
      for (int64_t p : c.perm)
        outShape.push_back(c.shape[p]);
      HostTensor in = dataTensor(rng, dtype, c.shape);
      std::vector<HostTensor> out = {emptyTensor(dtype, outShape)};
      if (!runOk(OpKind::Transpose, transposeAttrs(c.perm), {in}, out))
        continue;
      std::vector<double> expected(in.values.size());
      for (int64_t flat = 0; flat < numel(outShape); ++flat) {
        Shape index = unravel(flat, outShape), source(c.shape.size());
        for (size_t i = 0; i < c.perm.size(); ++i)
          source[c.perm[i]] = index[i];
        expected[flat] = in.values[ravel(source, c.shape)];
      }
      expectExact(out[0], expected);
    }
  }
}

TEST_P(KernelConformanceTest, Broadcast) {
  struct Case {
    Shape in, out;
  };
  const Case cases[] = {{{}, {4, 3}},
                        {{1}, {17}},
                        {{17}, {3, 17}},
                        {{33, 1}, {33, 65}},
                        {{3, 1, 7}, {2, 3, 5, 7}},
                        {{2, 1}, {2, 1}}};
  Random rng(14);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(
          describe(OpKind::Broadcast, dtype, str(c.in) + " to " + str(c.out)));
      HostTensor in = dataTensor(rng, dtype, c.in);
      std::vector<HostTensor> out = {emptyTensor(dtype, c.out)};
      if (!runOk(OpKind::Broadcast, {}, {in}, out))
        continue;
      std::vector<double> expected(numel(c.out));
      for (int64_t flat = 0; flat < numel(c.out); ++flat)
        expected[flat] = in.values[broadcastSource(unravel(flat, c.out), c.in)];
      expectExact(out[0], expected);
    }
  }
}

TEST_P(KernelConformanceTest, Slice) {
  struct Case {
    Shape in;
    std::vector<int64_t> offsets, strides;
    Shape out;
  };
  const Case cases[] = {{{17}, {3}, {2}, {7}},
                        {{7, 9}, {1, 2}, {2, 3}, {3, 3}},
                        {{3, 5, 7}, {0, 1, 2}, {1, 1, 1}, {3, 3, 4}},
                        {{4, 33}, {1, 0}, {1, 1}, {2, 33}},
                        {{2, 3, 65}, {1, 0, 3}, {1, 2, 5}, {1, 2, 13}},
                        {{5, 1}, {4, 0}, {1, 1}, {1, 1}},
                        {{6, 8}, {0, 7}, {3, 1}, {2, 1}}};
  Random rng(15);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(describe(OpKind::Slice, dtype,
                            str(c.in) + " offsets " + str(c.offsets) +
                                " strides " + str(c.strides) + " -> " +
                                str(c.out)));
      HostTensor in = dataTensor(rng, dtype, c.in);
      std::vector<HostTensor> out = {emptyTensor(dtype, c.out)};
      if (!runOk(OpKind::Slice, sliceAttrs(c.offsets, c.strides), {in}, out))
        continue;
      std::vector<double> expected(numel(c.out));
      for (int64_t flat = 0; flat < numel(c.out); ++flat) {
        Shape index = unravel(flat, c.out);
        for (size_t d = 0; d < index.size(); ++d)
          index[d] = c.offsets[d] + index[d] * c.strides[d];
        expected[flat] = in.values[ravel(index, c.in)];
      }
      expectExact(out[0], expected);
    }
  }
}

// Pad writes the operand at offsets + i * strides and zeros everywhere else
// (the result buffer starts as 0xff bytes, so a missed zero shows): exact.
TEST_P(KernelConformanceTest, Pad) {
  struct Case {
    Shape in;
    std::vector<int64_t> offsets, strides;
    Shape out;
  };
  const Case cases[] = {{{7}, {3}, {2}, {17}},
                        {{3, 3}, {1, 2}, {2, 3}, {7, 11}},
                        {{3, 3, 4}, {0, 1, 2}, {1, 1, 1}, {3, 5, 7}},
                        {{2, 33}, {1, 0}, {1, 1}, {4, 33}},
                        {{1, 2, 13}, {1, 0, 3}, {1, 2, 5}, {2, 3, 65}},
                        {{1, 1}, {4, 0}, {1, 1}, {5, 1}},
                        {{2, 1}, {0, 7}, {3, 1}, {6, 8}},
                        {{0, 3}, {1, 0}, {1, 1}, {2, 3}}};
  Random rng(22);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(describe(OpKind::Pad, dtype,
                            str(c.in) + " offsets " + str(c.offsets) +
                                " strides " + str(c.strides) + " -> " +
                                str(c.out)));
      HostTensor in = dataTensor(rng, dtype, c.in);
      std::vector<HostTensor> out = {emptyTensor(dtype, c.out)};
      if (!runOk(OpKind::Pad, sliceAttrs(c.offsets, c.strides), {in}, out))
        continue;
      std::vector<double> expected(numel(c.out), 0.0);
      for (int64_t flat = 0; flat < numel(c.in); ++flat) {
        Shape index = unravel(flat, c.in);
        for (size_t d = 0; d < index.size(); ++d)
          index[d] = c.offsets[d] + index[d] * c.strides[d];
        expected[ravel(index, c.out)] = in.values[flat];
      }
      expectExact(out[0], expected);
    }
  }
}

TEST_P(KernelConformanceTest, Concat) {
  struct Case {
    std::vector<Shape> inputs;
    int64_t dim;
  };
  const Case cases[] = {{{{17}}, 0},
                        {{{3, 5}, {2, 5}}, 0},
                        {{{3, 5}, {3, 1}, {3, 7}}, 1},
                        {{{2, 3, 4}, {2, 1, 4}}, 1},
                        {{{2, 3, 4}, {2, 3, 1}, {2, 3, 33}}, 2}};
  Random rng(16);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      std::string name;
      for (const Shape &s : c.inputs)
        name += str(s) + " ";
      SCOPED_TRACE(describe(OpKind::Concat, dtype,
                            name + "dim " + std::to_string(c.dim)));
      std::vector<HostTensor> inputs;
      Shape outShape = c.inputs[0];
      outShape[c.dim] = 0;
      for (const Shape &s : c.inputs) {
        inputs.push_back(dataTensor(rng, dtype, s));
        outShape[c.dim] += s[c.dim];
      }
      std::vector<HostTensor> out = {emptyTensor(dtype, outShape)};
      if (!runOk(OpKind::Concat, axisAttrs(c.dim), inputs, out))
        continue;
      std::vector<double> expected(numel(outShape));
      for (int64_t flat = 0; flat < numel(outShape); ++flat) {
        Shape index = unravel(flat, outShape);
        size_t which = 0;
        while (index[c.dim] >= c.inputs[which][c.dim])
          index[c.dim] -= c.inputs[which++][c.dim];
        expected[flat] = inputs[which].values[ravel(index, c.inputs[which])];
      }
      expectExact(out[0], expected);
    }
  }
}

TEST_P(KernelConformanceTest, Gather) {
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const Case cases[] = {{{7, 5}, {3}, 0},       {{33}, {17}, 0},
                        {{7, 5}, {2, 4}, 1},    {{3, 9, 4}, {5}, 1},
                        {{3, 4, 9}, {2, 3}, 2}, {{1000, 64}, {2, 16}, 0}};
  Random rng(17);
  for (DType dtype : kAllTypes) {
    for (DType indexType : {DType::I32, DType::I64}) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(OpKind::Gather, dtype,
                              str(c.data) + " indices " + dtypeName(indexType) +
                                  str(c.indices) + " axis " +
                                  std::to_string(c.axis)));
        int64_t limit = c.data[c.axis];
        HostTensor data = dataTensor(rng, dtype, c.data);
        HostTensor indices =
            randomTensor(rng, indexType, c.indices, 0, limit - 1);
        Shape outShape(c.data.begin(), c.data.begin() + c.axis);
        outShape.insert(outShape.end(), c.indices.begin(), c.indices.end());
        outShape.insert(outShape.end(), c.data.begin() + c.axis + 1,
                        c.data.end());
        std::vector<HostTensor> out = {emptyTensor(dtype, outShape)};
        if (!runOk(OpKind::Gather, axisAttrs(c.axis), {data, indices}, out))
          continue;
        std::vector<double> expected(numel(outShape));
        size_t rank = c.indices.size();
        for (int64_t flat = 0; flat < numel(outShape); ++flat) {
          Shape index = unravel(flat, outShape);
          Shape at(index.begin() + c.axis, index.begin() + c.axis + rank);
          Shape source(index.begin(), index.begin() + c.axis);
          source.push_back(
              static_cast<int64_t>(indices.values[ravel(at, c.indices)]));
          source.insert(source.end(), index.begin() + c.axis + rank,
                        index.end());
          expected[flat] = data.values[ravel(source, c.data)];
        }
        expectExact(out[0], expected);
      }
    }
  }
}

// ScatterAdd: zeros plus each update at its index, indices drawn from a
// small range so most positions receive several (duplicates accumulate).
// An element that sums k updates is a sum of k terms in any order, within
// gamma_k = k u of the sum of their magnitudes, then stored in the dtype.
TEST_P(KernelConformanceTest, ScatterAdd) {
  struct Case {
    Shape out, indices;
    int64_t axis;
  };
  const Case cases[] = {{{7, 5}, {3}, 0},       {{5}, {17}, 0},
                        {{7, 5}, {2, 4}, 1},    {{3, 9, 4}, {5}, 1},
                        {{3, 4, 9}, {2, 3}, 2}, {{100, 64}, {4, 16}, 0},
                        {{4, 1}, {0}, 0}};
  Random rng(23);
  for (DType dtype : kFloatTypes) {
    for (DType indexType : {DType::I32, DType::I64}) {
      for (const Case &c : cases) {
        SCOPED_TRACE(describe(OpKind::ScatterAdd, dtype,
                              str(c.out) + " indices " + dtypeName(indexType) +
                                  str(c.indices) + " axis " +
                                  std::to_string(c.axis)));
        int64_t limit = c.out[c.axis];
        HostTensor indices = randomTensor(rng, indexType, c.indices, 0,
                                          std::min<int64_t>(limit, 4) - 1);
        Shape updatesShape(c.out.begin(), c.out.begin() + c.axis);
        updatesShape.insert(updatesShape.end(), c.indices.begin(),
                            c.indices.end());
        updatesShape.insert(updatesShape.end(), c.out.begin() + c.axis + 1,
                            c.out.end());
        HostTensor updates = dataTensor(rng, dtype, updatesShape);
        std::vector<HostTensor> out = {emptyTensor(dtype, c.out)};
        if (!runOk(OpKind::ScatterAdd, axisAttrs(c.axis), {updates, indices},
                   out))
          continue;
        std::vector<double> sum(numel(c.out), 0.0), magnitude(numel(c.out)),
            terms(numel(c.out), 0.0);
        size_t rank = c.indices.size();
        for (int64_t flat = 0; flat < numel(updatesShape); ++flat) {
          Shape index = unravel(flat, updatesShape);
          Shape at(index.begin() + c.axis, index.begin() + c.axis + rank);
          Shape target(index.begin(), index.begin() + c.axis);
          target.push_back(
              static_cast<int64_t>(indices.values[ravel(at, c.indices)]));
          target.insert(target.end(), index.begin() + c.axis + rank,
                        index.end());
          int64_t o = ravel(target, c.out);
          sum[o] += updates.values[flat];
          magnitude[o] += std::fabs(updates.values[flat]);
          terms[o] += 1;
        }
        std::vector<double> tol(numel(c.out));
        for (size_t i = 0; i < tol.size(); ++i)
          tol[i] = stored(dtype, sum[i], terms[i] * kU * magnitude[i]);
        expectClose(out[0], sum, tol);
      }
    }
  }
}

TEST_P(KernelConformanceTest, Copy) {
  struct Case {
    Shape in, out;
  };
  const Case cases[] = {
      {{1}, {1}}, {{6, 4}, {24}}, {{3, 5, 7}, {3, 5, 7}}, {{4100}, {2, 2050}}};
  Random rng(18);
  for (DType dtype : kAllTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(
          describe(OpKind::Copy, dtype, str(c.in) + " -> " + str(c.out)));
      HostTensor in = dataTensor(rng, dtype, c.in);
      std::vector<HostTensor> out = {emptyTensor(dtype, c.out)};
      if (!runOk(OpKind::Copy, {}, {in}, out))
        continue;
      expectExact(out[0], in.values);
    }
  }
}

// Fill: the f32 attribute rounded to the dtype (0.1 is inexact in all three
// float types); integer dtypes get integral values.
TEST_P(KernelConformanceTest, Fill) {
  const Shape shapes[] = {{}, {1}, {3, 17}, {2, 4100}};
  for (DType dtype : kAllTypes) {
    for (float value : isFloat(dtype) ? std::vector<float>{0.1f, -2.5f}
                                      : std::vector<float>{-3.0f, 7.0f}) {
      for (const Shape &shape : shapes) {
        SCOPED_TRACE(describe(OpKind::Fill, dtype,
                              str(shape) + " value " + std::to_string(value)));
        std::vector<HostTensor> out = {emptyTensor(dtype, shape)};
        if (!runOk(OpKind::Fill, fillAttrs(value), {}, out))
          continue;
        expectExact(out[0],
                    std::vector<double>(numel(shape), roundTo(dtype, value)));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Errors a kernel finds in the data
//===----------------------------------------------------------------------===//

// A gather index outside [0, size) (negative or too large) is an
// InvalidArgument naming the position and the value, never a stray read.
TEST_P(KernelConformanceTest, GatherRejectsOutOfRangeIndex) {
  Random rng(19);
  for (DType indexType : {DType::I32, DType::I64}) {
    for (int64_t axis = 0; axis < 2; ++axis) {
      for (int64_t bad : {int64_t(1234), int64_t(-77), int64_t(7)}) {
        SCOPED_TRACE(std::string("Gather indices ") + dtypeName(indexType) +
                     " axis " + std::to_string(axis) + " index " +
                     std::to_string(bad));
        // Axis sizes 7 and 5: index 7 is one past the end of axis 0.
        HostTensor data = dataTensor(rng, DType::F32, {7, 5});
        int64_t limit = data.shape[axis];
        HostTensor indices = randomTensor(rng, indexType, {20}, 0, limit - 1);
        indices.values[13] = static_cast<double>(bad);
        Shape outShape = axis == 0 ? Shape{20, 5} : Shape{7, 20};
        std::vector<HostTensor> out = {emptyTensor(DType::F32, outShape)};
        expectRejected(OpKind::Gather, axisAttrs(axis), {data, indices}, out,
                       bad, 13);
      }
    }
  }
}

// TopK: the k largest of each row, descending, equal values in index order
// (rows with ties and NaN among them), values copied exactly.
TEST_P(KernelConformanceTest, TopK) {
  struct Case {
    Shape in;
    int64_t k;
  };
  const Case cases[] = {{{5, 8}, 2}, {{2, 3, 4}, 4}, {{7}, 1}, {{3, 64}, 6}};
  Random rng(41);
  for (DType dtype : kFloatTypes) {
    for (const Case &c : cases) {
      SCOPED_TRACE(describe(OpKind::TopK, dtype,
                            str(c.in) + " k " + std::to_string(c.k)));
      HostTensor in = dataTensor(rng, dtype, c.in);
      int64_t n = c.in.back(), rows = numel(c.in) / n;
      // Ties in row 0 and a NaN in row 1 (when there is one).
      in.values[1] = in.values[n - 1] = in.values[0];
      if (rows > 1)
        in.values[n + 2] = NAN;
      Shape outShape = c.in;
      outShape.back() = c.k;
      std::vector<HostTensor> out = {emptyTensor(dtype, outShape),
                                     emptyTensor(DType::I64, outShape)};
      if (!runOk(OpKind::TopK, {}, {in}, out))
        continue;
      std::vector<double> values, indices;
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<int64_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        const double *x = in.values.data() + r * n;
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          if (std::isnan(x[a]) != std::isnan(x[b]))
            return std::isnan(x[a]);
          return x[a] > x[b];
        });
        for (int64_t j = 0; j < c.k; ++j) {
          values.push_back(x[order[j]]);
          indices.push_back(double(order[j]));
        }
      }
      expectExact(out[0], values);
      expectExact(out[1], indices);
    }
  }
}

// ExpertDispatch and ExpertCombine against a reference placement: slots
// k-major within each group, positions beyond the capacity dropped, the
// tokens form and the per-slot form, exact (rows are copied).
TEST_P(KernelConformanceTest, ExpertRouting) {
  struct Case {
    int64_t groups, s, k, experts, capacity, h;
  };
  const Case cases[] = {{2, 5, 2, 4, 3, 3},
                        {3, 8, 1, 2, 8, 5},
                        {1, 16, 2, 4, 32, 7},
                        {2, 6, 3, 8, 1, 2},
                        {4, 33, 2, 4, 9, 300}};
  Random rng(43);
  for (DType dtype : kFloatTypes) {
    for (DType indexType : {DType::I32, DType::I64}) {
      for (const Case &c : cases) {
        for (bool perToken : {true, false}) {
          SCOPED_TRACE(describe(
              OpKind::ExpertDispatch, dtype,
              std::string(perToken ? "tokens" : "slots") + " G" +
                  std::to_string(c.groups) + " S" + std::to_string(c.s) +
                  " K" + std::to_string(c.k) + " E" +
                  std::to_string(c.experts) + " C" +
                  std::to_string(c.capacity) + " H" + std::to_string(c.h) +
                  " indices " + dtypeName(indexType)));
          Shape indexShape{c.groups, c.s, c.k};
          Shape bufferShape{c.experts, c.groups, c.capacity, c.h};
          Shape slotShape{c.groups, c.s, c.k, c.h};
          Shape inShape = perToken ? Shape{c.groups, c.s, c.h} : slotShape;
          HostTensor indices =
              randomTensor(rng, indexType, indexShape, 0, c.experts - 1);
          HostTensor in = dataTensor(rng, dtype, inShape);
          // Where each slot lands: the row of the buffer, or -1.
          std::vector<int64_t> row(numel(indexShape), -1);
          for (int64_t g = 0; g < c.groups; ++g) {
            std::vector<int64_t> filled(c.experts, 0);
            for (int64_t j = 0; j < c.k; ++j)
              for (int64_t t = 0; t < c.s; ++t) {
                int64_t slot = (g * c.s + t) * c.k + j;
                int64_t e = int64_t(indices.values[slot]);
                if (filled[e] < c.capacity)
                  row[slot] = (e * c.groups + g) * c.capacity + filled[e]++;
              }
          }
          std::vector<HostTensor> buffer = {emptyTensor(dtype, bufferShape)};
          if (!runOk(OpKind::ExpertDispatch, {}, {in, indices}, buffer))
            continue;
          std::vector<double> placed(numel(bufferShape), 0.0);
          for (size_t slot = 0; slot < row.size(); ++slot)
            for (int64_t i = 0; row[slot] >= 0 && i < c.h; ++i)
              placed[row[slot] * c.h + i] =
                  in.values[(perToken ? slot / c.k : slot) * c.h + i];
          expectExact(buffer[0], placed);
          // Combine reads them back: zeros where a slot was dropped.
          std::vector<HostTensor> slots = {emptyTensor(dtype, slotShape)};
          if (!runOk(OpKind::ExpertCombine, {}, {buffer[0], indices}, slots))
            continue;
          std::vector<double> back(numel(slotShape), 0.0);
          for (size_t slot = 0; slot < row.size(); ++slot)
            for (int64_t i = 0; row[slot] >= 0 && i < c.h; ++i)
              back[slot * c.h + i] = placed[row[slot] * c.h + i];
          expectExact(slots[0], back);
        }
      }
    }
  }
}

// An expert index outside [0, E) is an InvalidArgument naming the position
// and the value, never a stray write.
TEST_P(KernelConformanceTest, ExpertRoutingRejectsOutOfRangeIndex) {
  Random rng(44);
  for (OpKind op : {OpKind::ExpertDispatch, OpKind::ExpertCombine}) {
    for (int64_t bad : {int64_t(4), int64_t(-3), int64_t(1234)}) {
      SCOPED_TRACE(std::string(opKindName(op)) + " index " +
                   std::to_string(bad));
      HostTensor indices = randomTensor(rng, DType::I64, {2, 5, 2}, 0, 3);
      indices.values[13] = static_cast<double>(bad);
      HostTensor buffer = dataTensor(rng, DType::F32, {4, 2, 3, 6});
      HostTensor slots = dataTensor(rng, DType::F32, {2, 5, 2, 6});
      bool dispatch = op == OpKind::ExpertDispatch;
      std::vector<HostTensor> out = {dispatch ? buffer : slots};
      expectRejected(op, {}, {dispatch ? slots : buffer, indices}, out, bad,
                     13);
    }
  }
}

// A scatter-add index outside [0, size) is an InvalidArgument naming the
// position and the value, never a stray write.
TEST_P(KernelConformanceTest, ScatterAddRejectsOutOfRangeIndex) {
  Random rng(24);
  for (DType indexType : {DType::I32, DType::I64}) {
    for (int64_t axis = 0; axis < 2; ++axis) {
      for (int64_t bad : {int64_t(1234), int64_t(-77), int64_t(7)}) {
        SCOPED_TRACE(std::string("ScatterAdd indices ") + dtypeName(indexType) +
                     " axis " + std::to_string(axis) + " index " +
                     std::to_string(bad));
        // Result axis sizes 7 and 5: index 7 is one past the end of axis 0.
        Shape outShape = {7, 5};
        int64_t limit = outShape[axis];
        HostTensor indices = randomTensor(rng, indexType, {20}, 0, limit - 1);
        indices.values[13] = static_cast<double>(bad);
        HostTensor updates = dataTensor(
            rng, DType::F32, axis == 0 ? Shape{20, 5} : Shape{7, 20});
        std::vector<HostTensor> out = {emptyTensor(DType::F32, outShape)};
        expectRejected(OpKind::ScatterAdd, axisAttrs(axis), {updates, indices},
                       out, bad, 13);
      }
    }
  }
}

// A label outside [0, classes) is an InvalidArgument naming the position
// and the value, for every reduction.
TEST_P(KernelConformanceTest, SoftmaxCrossEntropyRejectsOutOfRangeLabel) {
  Random rng(20);
  for (DType labelType : {DType::I32, DType::I64}) {
    for (int64_t reduction = 0; reduction < 3; ++reduction) {
      for (int64_t bad : {int64_t(1234), int64_t(-77), int64_t(5)}) {
        SCOPED_TRACE(std::string("SoftmaxCrossEntropy labels ") +
                     dtypeName(labelType) + " reduction " +
                     std::to_string(reduction) + " label " +
                     std::to_string(bad));
        HostTensor logits = randomTensor(rng, DType::F32, {20, 5}, -2, 2);
        HostTensor labels = randomTensor(rng, labelType, {20}, 0, 4);
        labels.values[13] = static_cast<double>(bad);
        std::vector<HostTensor> out = {
            emptyTensor(DType::F32, reduction == 2 ? Shape{20} : Shape{})};
        expectRejected(OpKind::SoftmaxCrossEntropy,
                       crossEntropyAttrs(plan::LossReduction(reduction)),
                       {logits, labels}, out, bad, 13);
      }
    }
  }
}

// Integer division by zero is an error on every backend: the CPU checks
// divisors before dividing (x / 0 would trap the process), the CUDA kernel
// writes 0 and records the position, reported at the next synchronisation.
TEST_P(KernelConformanceTest, IntegerDivisionByZeroIsAnError) {
  HostTensor lhs{DType::I32, {4}, {1, 2, 3, 4}};
  HostTensor rhs{DType::I32, {4}, {1, -1, 0, 2}};
  std::vector<HostTensor> out = {emptyTensor(DType::I32, {4})};
  expectRejected(OpKind::Div, {}, {lhs, rhs}, out, /*value=*/0,
                 /*position=*/2);
}

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

// Allocation accounting, 64-byte alignment, and copies in and out of device
// memory and within it.
TEST_P(KernelConformanceTest, DeviceMemory) {
  size_t before = device->allocatedBytes();
  std::vector<uint8_t> pattern(1000), back(1000, 0);
  for (size_t i = 0; i < pattern.size(); ++i)
    pattern[i] = static_cast<uint8_t>(i * 7 + 3);
  {
    StatusOr<std::unique_ptr<Buffer>> a = device->allocate(1000);
    StatusOr<std::unique_ptr<Buffer>> b = device->allocate(1000);
    ASSERT_TRUE(a.isOk() && b.isOk());
    EXPECT_EQ((*a)->size(), 1000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*a)->data()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*b)->data()) % 64, 0u);
    EXPECT_GE(device->allocatedBytes(), before + 2000);
    EXPECT_GE(device->peakAllocatedBytes(), device->allocatedBytes());
    ASSERT_TRUE(
        device->copyToDevice((*a)->data(), pattern.data(), 1000, *stream)
            .isOk());
    ASSERT_TRUE(device->copy((*b)->data(), (*a)->data(), 1000, *stream).isOk());
    ASSERT_TRUE(
        device->copyToHost(back.data(), (*b)->data(), 1000, *stream).isOk());
    StatusOr<std::unique_ptr<Event>> event = device->createEvent();
    ASSERT_TRUE(event.isOk());
    EXPECT_TRUE((*event)->record(*stream).isOk());
    EXPECT_TRUE((*event)->synchronize().isOk());
    EXPECT_TRUE(stream->synchronize().isOk());
    EXPECT_EQ(back, pattern);
  }
  EXPECT_EQ(device->allocatedBytes(), before);
  EXPECT_GE(device->peakAllocatedBytes(), before + 2000);
}

//===----------------------------------------------------------------------===//
// Coverage
//===----------------------------------------------------------------------===//

// Every opcode in plan.fbs has a test above: a new opcode fails here until
// one is written and listed.
TEST(KernelConformanceCoverage, EveryOpKindIsTested) {
  const std::set<OpKind> tested = {OpKind::Add,
                                   OpKind::Sub,
                                   OpKind::Mul,
                                   OpKind::Div,
                                   OpKind::Max,
                                   OpKind::Min,
                                   OpKind::Pow, // Binary*
                                   OpKind::Select,
                                   OpKind::Neg,
                                   OpKind::Exp,
                                   OpKind::Log,
                                   OpKind::Sqrt,
                                   OpKind::Rsqrt,
                                   OpKind::Tanh,
                                   OpKind::Erf,
                                   OpKind::Cos,
                                   OpKind::Sin,
                                   OpKind::Sigmoid,
                                   OpKind::Relu,
                                   OpKind::Silu,
                                   OpKind::Gelu, // Unary
                                   OpKind::Cast,
                                   OpKind::Matmul,
                                   OpKind::BatchMatmul,
                                   OpKind::Softmax,
                                   OpKind::LayerNorm,
                                   OpKind::RmsNorm, // Normalization
                                   OpKind::RotaryEmbedding,
                                   OpKind::Attention,
                                   OpKind::AttentionGrad,
                                   OpKind::SoftmaxCrossEntropy,
                                   OpKind::ReduceSum,
                                   OpKind::ReduceMean,
                                   OpKind::ReduceMax, // Reduce
                                   OpKind::Transpose,
                                   OpKind::Broadcast,
                                   OpKind::Slice,
                                   OpKind::Concat,
                                   OpKind::Gather,
                                   OpKind::Copy,
                                   OpKind::Fill,
                                   OpKind::Pad,
                                   OpKind::ScatterAdd,
                                   OpKind::Compare,
                                   OpKind::Fused,
                                   OpKind::TopK,
                                   OpKind::ExpertDispatch,
                                   OpKind::ExpertCombine};
  for (OpKind op : partition::plan::EnumValuesOpKind())
    EXPECT_TRUE(tested.count(op)) << opKindName(op) << " has no test";
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelConformanceTest,
                         ::testing::ValuesIn(availableBackends()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
