//===- Logic.cpp - comparisons, boolean logic, Where and Trilu ------------===//
//
// Masks: Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor,
// Not, IsNaN, IsInf, Where and Trilu. On host values they fold; on values
// the program computes (an attention_mask input, a softmax) they become
// `part` ops. Booleans are i32 0 / 1 in `part`, so Not is 1 - x, And a
// product, Or a maximum and Xor an inequality; IsNaN is `x != x` (true
// exactly for NaN under IEEE comparison, which the CPU and CUDA kernels
// keep: neither is built with fast math); Where is `part.select` and Trilu a
// select with a constant mask.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

constexpr int32_t kBool = onnx::TensorProto::BOOL;

//===----------------------------------------------------------------------===//
// Host folds
//===----------------------------------------------------------------------===//

FailureOr<bool> foldComparison(Node &n) {
  using Fn = double (*)(double, double);
  static const std::map<std::string, Fn> fns = {
      {"Equal", [](double x, double y) { return x == y ? 1.0 : 0.0; }},
      {"Less", [](double x, double y) { return x < y ? 1.0 : 0.0; }},
      {"LessOrEqual", [](double x, double y) { return x <= y ? 1.0 : 0.0; }},
      {"Greater", [](double x, double y) { return x > y ? 1.0 : 0.0; }},
      {"GreaterOrEqual", [](double x, double y) { return x >= y ? 1.0 : 0.0; }},
      {"And",
       [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; }},
      {"Or", [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; }},
      {"Xor",
       [](double x, double y) { return ((x != 0) != (y != 0)) ? 1.0 : 0.0; }}};
  const HostTensor *a = n.host(0), *b = n.host(1);
  if (failed(n.checkBroadcast(a->shape, b->shape)) ||
      failed(n.checkFoldSize(*broadcastShapes(a->shape, b->shape))))
    return failure();
  return n.folded(*hostBinary(*a, *b, kBool, fns.at(n.opType())));
}

FailureOr<bool> foldNot(Node &n) {
  HostTensor out = *n.host(0);
  for (double &v : out.values)
    v = v != 0 ? 0.0 : 1.0;
  return n.folded(std::move(out));
}

FailureOr<bool> foldWhere(Node &n) {
  const HostTensor *c = n.host(0), *a = n.host(1), *b = n.host(2);
  std::optional<Shape> s1 = broadcastShapes(c->shape, a->shape);
  std::optional<Shape> shape = s1 ? broadcastShapes(*s1, b->shape) : s1;
  if (!shape)
    return n.fail("operand shapes " + formatShape(c->shape) + ", " +
                  formatShape(a->shape) + " and " + formatShape(b->shape) +
                  " do not broadcast");
  if (failed(n.checkFoldSize(*shape)))
    return failure();
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = *shape;
  out.values.resize(numElements(*shape));
  forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
    out.values[linear] =
        c->values[broadcastIndex(c->shape, *shape, index)] != 0
            ? a->values[broadcastIndex(a->shape, *shape, index)]
            : b->values[broadcastIndex(b->shape, *shape, index)];
  });
  return n.folded(std::move(out));
}

FailureOr<bool> foldIsNaN(Node &n) {
  HostTensor out = *n.host(0);
  out.elemType = kBool;
  for (double &v : out.values)
    v = std::isnan(v) ? 1.0 : 0.0;
  return n.folded(std::move(out));
}

/// IsInf's attributes: which infinities it detects.
std::pair<bool, bool> isInfSigns(Node &n) {
  return {n.intAttr("detect_positive", 1) != 0,
          n.intAttr("detect_negative", 1) != 0};
}

FailureOr<bool> foldIsInf(Node &n) {
  auto [positive, negative] = isInfSigns(n);
  HostTensor out = *n.host(0);
  out.elemType = kBool;
  for (double &v : out.values)
    v = std::isinf(v) && (v > 0 ? positive : negative) ? 1.0 : 0.0;
  return n.folded(std::move(out));
}

/// Trilu's k: input 1, a constant scalar (0 when absent).
FailureOr<int64_t> triluK(Node &n) {
  if (!n.has(1))
    return 0;
  FailureOr<const HostTensor *> k = n.requireHost(1, "k");
  if (failed(k))
    return failure();
  if ((*k)->size() != 1)
    return n.error() << "k must be a scalar; it has " << (*k)->size()
                     << " elements";
  return (*k)->asInt(0);
}

/// Whether Trilu keeps the element at (row, col).
bool triluKeeps(bool upper, int64_t k, int64_t row, int64_t col) {
  return upper ? col - row >= k : col - row <= k;
}

FailureOr<bool> foldTrilu(Node &n) {
  FailureOr<int64_t> k = triluK(n);
  if (failed(k))
    return failure();
  const HostTensor *a = n.host(0);
  if (a->shape.size() < 2)
    return n.fail("Trilu needs rank at least 2, got " + formatShape(a->shape));
  bool upper = n.intAttr("upper", 1);
  HostTensor out = *a;
  int64_t rows = a->shape[a->shape.size() - 2], cols = a->shape.back();
  for (int64_t i = 0; i < out.size(); ++i)
    if (!triluKeeps(upper, *k, (i / cols) % rows, i % cols))
      out.values[i] = 0;
  return n.folded(std::move(out));
}

//===----------------------------------------------------------------------===//
// Translation
//===----------------------------------------------------------------------===//

LogicalResult translateComparison(Node &n) {
  static const std::map<std::string, part::ComparisonDirection> directions = {
      {"Equal", part::ComparisonDirection::EQ},
      {"Less", part::ComparisonDirection::LT},
      {"LessOrEqual", part::ComparisonDirection::LE},
      {"Greater", part::ComparisonDirection::GT},
      {"GreaterOrEqual", part::ComparisonDirection::GE},
      {"Xor", part::ComparisonDirection::NE}};
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  Value av = *a, bv = *b;
  if (failed(n.unify(av, bv)) ||
      failed(n.checkBroadcast(shapeOf(av), shapeOf(bv))))
    return failure();
  if (n.opType() == "And")
    return n.done(part::MulOp::create(n.builder, n.loc, av, bv));
  if (n.opType() == "Or")
    return n.done(part::MaxOp::create(n.builder, n.loc, av, bv));
  return n.done(part::CompareOp::create(n.builder, n.loc,
                                        directions.at(n.opType()), av, bv));
}

LogicalResult translateNot(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Value xv = *x, one = n.constant(HostTensor::scalar(kBool, 1.0));
  if (failed(n.unify(xv, one)))
    return failure();
  return n.done(part::SubOp::create(n.builder, n.loc, one, xv));
}

LogicalResult translateWhere(Node &n) {
  FailureOr<Value> c = n.input(0), a = n.input(1), b = n.input(2);
  if (failed(c) || failed(a) || failed(b))
    return failure();
  Value av = *a, bv = *b;
  if (failed(n.unify(av, bv)))
    return failure();
  std::optional<Shape> s1 = broadcastShapes(shapeOf(*c), shapeOf(av));
  if (!s1 || !broadcastShapes(*s1, shapeOf(bv)))
    return n.error() << "operand shapes " << formatShape(shapeOf(*c)) << ", "
                     << formatShape(shapeOf(av)) << " and "
                     << formatShape(shapeOf(bv)) << " do not broadcast";
  return n.done(part::SelectOp::create(n.builder, n.loc, *c, av, bv));
}

/// `x != x`: the one comparison that is true exactly for NaN. Kept this
/// simple on purpose: SDPA's NaN guard `Where(IsNaN(p), 0, p)` becomes
/// `select(compare ne(p, p), 0, p)`, the form attention raising matches.
LogicalResult translateIsNaN(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x) || failed(n.requireFloat(*x)))
    return failure();
  return n.done(part::CompareOp::create(n.builder, n.loc,
                                        part::ComparisonDirection::NE, *x, *x));
}

/// `x == +inf` and / or `x == -inf` (the larger of the two when both count).
LogicalResult translateIsInf(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x) || failed(n.requireFloat(*x)))
    return failure();
  auto [positive, negative] = isInfSigns(n);
  auto equalTo = [&](double v) -> Value {
    Value c = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, v)),
          xv = *x;
    (void)n.unify(xv, c); // a float constant follows the float input
    return part::CompareOp::create(n.builder, n.loc,
                                   part::ComparisonDirection::EQ, xv, c);
  };
  double inf = std::numeric_limits<double>::infinity();
  if (positive && negative) {
    // One statement each: the order of the ops does not depend on the
    // compiler's order of evaluating arguments.
    Value isPositive = equalTo(inf);
    Value isNegative = equalTo(-inf);
    return n.done(
        part::MaxOp::create(n.builder, n.loc, isPositive, isNegative));
  }
  if (positive || negative)
    return n.done(equalTo(positive ? inf : -inf));
  HostTensor none;
  none.elemType = kBool;
  none.shape = shapeOf(*x);
  if (failed(n.checkFoldSize(none.shape)))
    return failure();
  none.values.assign(numElements(none.shape), 0.0);
  return n.done(n.constant(none));
}

/// A select between x and 0 with the constant mask of its last two
/// dimensions.
LogicalResult translateTrilu(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> k = triluK(n);
  if (failed(k))
    return failure();
  Shape in = shapeOf(*x);
  if (in.size() < 2)
    return n.error() << "Trilu needs rank at least 2, got " << formatShape(in);
  bool upper = n.intAttr("upper", 1);
  int64_t rows = in[in.size() - 2], cols = in.back();
  if (failed(n.checkFoldSize({rows, cols}, "mask")))
    return failure();
  HostTensor mask;
  mask.elemType = onnx::TensorProto::INT32;
  mask.shape = {rows, cols};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      mask.values.push_back(triluKeeps(upper, *k, r, c) ? 1 : 0);
  Value zero = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, 0));
  Value xv = *x;
  if (failed(n.unify(xv, zero)))
    return failure();
  return n.done(
      part::SelectOp::create(n.builder, n.loc, n.constant(mask), xv, zero));
}

} // namespace

void partition::import::detail::registerLogicOps(OpTable &t) {
  for (const char *op :
       {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    t.onOp(op, 13)
        .inputs(2, 2)
        .fold(foldComparison)
        .translate(translateComparison)
        .hostOnlyOperands()
        .note("results are i32 0 / 1");
  for (const char *op : {"And", "Or", "Xor"})
    t.onOp(op, 13)
        .inputs(2, 2)
        .fold(foldComparison)
        .translate(translateComparison)
        .hostOnlyOperands()
        .note("constant or run-time bool (i32 0 / 1)");
  t.onOp("Not", 13)
      .fold(foldNot)
      .translate(translateNot)
      .hostOnlyOperands()
      .note("constant or run-time bool (i32 0 / 1)");
  t.onOp("IsNaN", 13)
      .fold(foldIsNaN)
      .translate(translateIsNaN)
      .hostOnlyOperands()
      .note("float input; results are i32 0 / 1");
  t.onOp("IsInf", 13)
      .fold(foldIsInf)
      .translate(translateIsInf)
      .hostOnlyOperands()
      .note("float input; results are i32 0 / 1");
  t.onOp("Where", 13)
      .inputs(3, 3)
      .fold(foldWhere)
      .translate(translateWhere)
      .shapeOperands({0});
  t.onOp("Trilu", 14)
      .inputs(1, 2)
      .fold(foldTrilu)
      .translate(translateTrilu)
      .hostOnlyOperands()
      .note("k constant");
}
