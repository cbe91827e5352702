//===- Elementwise.cpp - arithmetic, unary math and casts -----------------===//
//
// Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mod; Neg, Exp, Log, Sqrt, Tanh,
// Sigmoid, Relu, Erf, Cos, Sin, Reciprocal, Gelu, Abs, Sign, Floor, Ceil;
// Identity, Dropout, Cast, CastLike. Each folds on the host when its inputs
// are host values (shape arithmetic) and otherwise becomes the `part` op of
// the same name; Mod, Abs, Sign, Floor and Ceil only fold (exporters use
// them on shapes).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

//===----------------------------------------------------------------------===//
// Host folds
//===----------------------------------------------------------------------===//

/// Folds a binary op of host inputs 0 and 1 into a tensor of `type`.
FailureOr<bool> foldBinary(Node &n, int32_t type,
                           const std::function<double(double, double)> &fn) {
  const HostTensor *a = n.host(0), *b = n.host(1);
  if (failed(n.checkBroadcast(a->shape, b->shape)))
    return failure();
  if (failed(n.checkFoldSize(*broadcastShapes(a->shape, b->shape))))
    return failure();
  return n.folded(*hostBinary(*a, *b, type, fn));
}

FailureOr<bool> foldArithmetic(Node &n) {
  const HostTensor *a = n.host(0), *b = n.host(1);
  const std::string &op = n.opType();
  bool isInt = !isFloatElemType(a->elemType);
  // An integer division by zero has no value: folded into a shape it would
  // silently become some size.
  if ((op == "Div" || op == "Mod") && isInt &&
      llvm::is_contained(b->values, 0.0))
    return n.fail("integer " + Twine(op == "Div" ? "division" : "modulo") +
                  " by zero: the divisor '" + printable(n.proto.input(1)) +
                  "' is " + formatShape(b->ints()));
  std::function<double(double, double)> fn;
  if (op == "Add")
    fn = [](double x, double y) { return x + y; };
  else if (op == "Sub")
    fn = [](double x, double y) { return x - y; };
  else if (op == "Mul")
    fn = [](double x, double y) { return x * y; };
  else if (op == "Div")
    fn = [isInt](double x, double y) {
      return isInt ? std::trunc(x / y) : x / y;
    };
  else if (op == "Pow")
    fn = [](double x, double y) { return std::pow(x, y); };
  else // Mod
    fn = [isInt](double x, double y) {
      double r = std::fmod(x, y);
      if (isInt && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      return r;
    };
  return foldBinary(n, a->elemType, fn);
}

/// Max and Min are variadic: the maximum or minimum of all inputs, one after
/// the other.
FailureOr<bool> foldMaxMin(Node &n) {
  bool max = n.opType() == "Max";
  HostTensor acc = *n.host(0);
  for (int i = 1; i < n.proto.input_size(); ++i) {
    const HostTensor *next = n.host(i);
    if (failed(n.checkBroadcast(acc.shape, next->shape)) ||
        failed(n.checkFoldSize(*broadcastShapes(acc.shape, next->shape))))
      return failure();
    acc =
        *hostBinary(acc, *next, n.host(0)->elemType, [max](double x, double y) {
          return max ? std::max(x, y) : std::min(x, y);
        });
  }
  return n.folded(std::move(acc));
}

FailureOr<bool> foldUnary(Node &n) {
  static const std::map<std::string, double (*)(double)> fns = {
      {"Neg", [](double x) { return -x; }},
      {"Abs", [](double x) { return std::fabs(x); }},
      {"Sign", [](double x) { return double((x > 0) - (x < 0)); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},
      {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }},
      {"Sin", [](double x) { return std::sin(x); }},
      {"Cos", [](double x) { return std::cos(x); }},
      {"Floor", [](double x) { return std::floor(x); }},
      {"Ceil", [](double x) { return std::ceil(x); }}};
  double (*fn)(double) = fns.at(n.opType());
  HostTensor out = *n.host(0);
  for (double &v : out.values)
    v = roundTo(out.elemType, fn(v));
  return n.folded(std::move(out));
}

FailureOr<bool> foldIdentity(Node &n) { return n.folded(*n.host(0)); }

FailureOr<bool> foldCast(Node &n) {
  bool cast = n.opType() == "Cast";
  if (cast && !n.attr("to"))
    return n.fail("a Cast needs the 'to' attribute");
  int32_t to =
      cast ? static_cast<int32_t>(n.intAttr("to", 1)) : n.host(1)->elemType;
  HostTensor out = *n.host(0);
  out.elemType = to;
  for (double &v : out.values)
    v = roundTo(to, v);
  return n.folded(std::move(out));
}

//===----------------------------------------------------------------------===//
// Translation
//===----------------------------------------------------------------------===//

Value createBinary(Node &n, Value lhs, Value rhs) {
  const std::string &op = n.opType();
  OpBuilder &b = n.builder;
  if (op == "Add" || op == "Sum")
    return part::AddOp::create(b, n.loc, lhs, rhs);
  if (op == "Sub")
    return part::SubOp::create(b, n.loc, lhs, rhs);
  if (op == "Mul")
    return part::MulOp::create(b, n.loc, lhs, rhs);
  if (op == "Div")
    return part::DivOp::create(b, n.loc, lhs, rhs);
  if (op == "Max")
    return part::MaxOp::create(b, n.loc, lhs, rhs);
  if (op == "Min")
    return part::MinOp::create(b, n.loc, lhs, rhs);
  return part::PowOp::create(b, n.loc, lhs, rhs);
}

/// Add, Sub, Mul, Div, Pow, Max, Min, Sum, left to right over the inputs.
LogicalResult translateBinary(Node &n) {
  FailureOr<Value> first = n.input(0);
  if (failed(first))
    return failure();
  Value acc = *first;
  bool pow = n.opType() == "Pow";
  for (int i = 1; i < n.proto.input_size(); ++i) {
    FailureOr<Value> next = n.input(i);
    if (failed(next))
      return failure();
    Value rhs = *next;
    if (pow) {
      // ONNX lets the exponent's type differ from the base's.
      if (!isa<FloatType>(elementTypeOf(acc)))
        return n.error() << "integer base " << acc.getType()
                         << ": part.pow is floating point only";
      rhs = n.im.castTo(rhs, elementTypeOf(acc), n.loc);
    }
    if (failed(n.unify(acc, rhs)) ||
        failed(n.checkBroadcast(shapeOf(acc), shapeOf(rhs))))
      return failure();
    acc = createBinary(n, acc, rhs);
  }
  return n.done(acc);
}

FailureOr<Value> createGelu(Node &n, Value x) {
  std::string approximate = "none";
  if (const onnx::AttributeProto *a = n.attr("approximate"))
    approximate = a->s();
  if (approximate != "none" && approximate != "tanh")
    return n.error() << "unknown approximate='" << approximate
                     << "' (expected 'none' or 'tanh')";
  return part::GeluOp::create(n.builder, n.loc, x,
                              approximate == "tanh"
                                  ? part::GeluApproximation::Tanh
                                  : part::GeluApproximation::Erf)
      .getResult();
}

/// Neg, Exp, Log, Sqrt, Tanh, Sigmoid, Relu, Erf, Cos, Sin, Reciprocal,
/// Gelu on floats.
LogicalResult translateUnary(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x) || failed(n.requireFloat(*x)))
    return failure();
  const std::string &op = n.opType();
  OpBuilder &b = n.builder;
  Value v = *x;
  if (op == "Gelu") {
    FailureOr<Value> r = createGelu(n, v);
    return failed(r) ? failure() : n.done(*r);
  }
  if (op == "Reciprocal") {
    Value one = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, 1.0));
    if (failed(n.unify(v, one)))
      return failure();
    return n.done(part::DivOp::create(b, n.loc, one, v));
  }
  using Create = Value (*)(OpBuilder &, Location, Value);
  static const std::map<std::string, Create> creates = {
      {"Neg",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::NegOp::create(b, l, v);
       }},
      {"Exp",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::ExpOp::create(b, l, v);
       }},
      {"Log",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::LogOp::create(b, l, v);
       }},
      {"Sqrt",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::SqrtOp::create(b, l, v);
       }},
      {"Tanh",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::TanhOp::create(b, l, v);
       }},
      {"Sigmoid",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::SigmoidOp::create(b, l, v);
       }},
      {"Relu",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::ReluOp::create(b, l, v);
       }},
      {"Erf",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::ErfOp::create(b, l, v);
       }},
      {"Cos",
       [](OpBuilder &b, Location l, Value v) -> Value {
         return part::CosOp::create(b, l, v);
       }},
      {"Sin", [](OpBuilder &b, Location l, Value v) -> Value {
         return part::SinOp::create(b, l, v);
       }}};
  return n.done(creates.at(op)(b, n.loc, v));
}

LogicalResult translateIdentity(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (n.opType() == "Dropout" && n.proto.output_size() > 1 &&
      !n.proto.output(1).empty())
    return n.fail("the mask output of Dropout is not supported (partition "
                  "imports inference graphs)");
  return n.done(*x);
}

LogicalResult translateCast(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Type to;
  if (n.opType() == "CastLike") {
    FailureOr<Value> like = n.input(1);
    if (failed(like))
      return failure();
    return n.done(n.im.castTo(*x, elementTypeOf(*like), n.loc));
  }
  if (!n.attr("to"))
    return n.fail("a Cast needs the 'to' attribute");
  auto target = static_cast<int32_t>(n.intAttr("to", 0));
  to = n.im.partElementType(target);
  if (!to)
    return n.error() << "cast to " << elemTypeName(target)
                     << " is not supported";
  // To bool: nonzero is true (NaN included), as a comparison with 0
  // (booleans are i32 0 / 1 in part).
  if (target == onnx::TensorProto::BOOL) {
    Value xv = *x;
    Value zero = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, 0));
    if (failed(n.unify(xv, zero)))
      return failure();
    return n.done(part::CompareOp::create(
        n.builder, n.loc, part::ComparisonDirection::NE, xv, zero));
  }
  return n.done(n.im.castTo(*x, to, n.loc));
}

} // namespace

void partition::import::detail::registerElementwiseOps(OpTable &t) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow"})
    t.onOp(op, 13).inputs(2, 2).fold(foldArithmetic).translate(translateBinary);
  for (const char *op : {"Max", "Min"})
    t.onOp(op, 13).inputs(1, -1).fold(foldMaxMin).translate(translateBinary);
  t.onOp("Sum", 13).inputs(1, -1).translate(translateBinary);
  t.onOp("Mod", 13)
      .inputs(2, 2)
      .fold(foldArithmetic)
      .hostOnlyOperands()
      .note("constant inputs (folded)");
  for (const char *op :
       {"Neg", "Exp", "Log", "Sqrt", "Cos", "Sin", "Reciprocal"})
    t.onOp(op, 13).fold(foldUnary).translate(translateUnary);
  for (const char *op : {"Tanh", "Sigmoid", "Relu", "Erf"})
    t.onOp(op, 13).translate(translateUnary);
  t.onOp("Gelu", 20).translate(translateUnary);
  t.onOp("Abs", 13).fold(foldUnary).note("constant inputs (folded)");
  for (const char *op : {"Sign", "Floor", "Ceil"})
    t.onOp(op, 13).fold(foldUnary).hostOnlyOperands().note(
        "constant inputs (folded)");
  t.onOp("Identity", 13)
      .fold(foldIdentity)
      .translate(translateIdentity)
      .movesData();
  t.onOp("Dropout", 13)
      .inputs(1, 3)
      .fold(foldIdentity)
      .translate(translateIdentity)
      .note("inference: the identity, no mask output");
  t.onOp("Cast", 13)
      .fold(foldCast)
      .translate(translateCast)
      .movesData()
      .note("not to string or float64 at run time");
  t.onOp("CastLike", 15).inputs(2, 2).fold(foldCast).translate(translateCast);
}
