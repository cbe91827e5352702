//===- Raise.cpp - rebuild layer-level ops from decomposed forms ----------===//
//
// Greedy rewrite patterns, each rooted at the last op of a decomposition (the
// final product of a GELU, SiLU or norm, the bias add of a layer norm, the
// product of attention probabilities with the values), that match the few ops
// below the root and replace the root by one op. Each match looks at a
// bounded number of ops (a causal mask constant is classified once per
// attribute), so the pass is linear in the size of the program.
//
// A matcher records in a Diagnosis why it failed once it has seen enough to
// call the root a candidate (an erf or tanh inside `1 + .`, a sigmoid of the
// other factor, a mean-of-squares under a square root, a softmax feeding a
// product with the values). With `report`, the pass runs the matchers once
// more on the converged program and emits those reasons as remarks.
//
//===----------------------------------------------------------------------===//

#include "RaiseExperts.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#define DEBUG_TYPE "part-raise"

namespace partition::part {
#define GEN_PASS_DEF_PARTRAISEPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

//===----------------------------------------------------------------------===//
// Diagnosis
//===----------------------------------------------------------------------===//

namespace {
/// Why a root was not raised. Reasons count only once the matcher has called
/// the root a candidate; the first one wins.
struct Diagnosis {
  bool candidate = false;
  std::string reason;

  LogicalResult fail(const Twine &why) {
    if (candidate && reason.empty())
      reason = why.str();
    return failure();
  }
};
} // namespace

/// Formats a shape as `[4, 8]`.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// Formats a double the way a reader expects (`0.25`, `1e-06`, `-inf`).
static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%g", value);
  return text;
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The value of a splat floating-point `part.constant` (of any shape), or
/// nullopt.
static std::optional<APFloat> getSplatFloat(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>();
}

static double toDouble(APFloat value) {
  bool lost;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToDouble();
}

/// True when `v` is a splat constant equal to `exact` rounded to its type
/// (0.5, 1, 2, 3 and 0.044715 are written exactly by exporters).
static bool isExactly(Value v, double exact) {
  std::optional<APFloat> value = getSplatFloat(v);
  if (!value)
    return false;
  APFloat target(exact);
  bool lost;
  target.convert(value->getSemantics(), APFloat::rmNearestTiesToEven, &lost);
  return value->compare(target) == APFloat::cmpEqual;
}

/// True when `v` is a splat constant within 1e-6 relative of the irrational
/// `target` (sqrt(2), sqrt(2 / pi)), or within one unit in the last place of
/// a narrower type (f16, bf16) that cannot get that close.
static bool isApproximately(Value v, double target) {
  std::optional<APFloat> value = getSplatFloat(v);
  if (!value)
    return false;
  int precision = APFloat::semanticsPrecision(value->getSemantics());
  double tolerance = std::max(1e-6, std::ldexp(1.0, 1 - precision));
  return std::fabs(toDouble(*value) - target) <= tolerance * std::fabs(target);
}

/// The value of a splat constant, for messages ("a non-constant" otherwise).
static std::string describeConstant(Value v) {
  if (std::optional<APFloat> value = getSplatFloat(v))
    return formatNumber(toDouble(*value));
  return "a non-constant value";
}

/// `op`'s operand other than `v` (a binary op).
static Value otherOperand(Operation *op, Value v) {
  return op->getOperand(0) == v ? op->getOperand(1) : op->getOperand(0);
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

/// Most factors a product is taken apart into.
constexpr size_t kMaxFactors = 6;

/// Appends the factors of `v`: `v` itself, or, when `v` is a `part.mul` not
/// in `stop`, the factors of its operands. `muls` collects the products
/// taken apart. Fails beyond kMaxFactors.
static bool collectFactors(Value v, ArrayRef<Value> stop,
                           SmallVectorImpl<Value> &factors,
                           SmallVectorImpl<Operation *> &muls) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul || llvm::is_contained(stop, v)) {
    if (factors.size() >= kMaxFactors)
      return false;
    factors.push_back(v);
    return true;
  }
  muls.push_back(mul);
  return collectFactors(mul.getLhs(), stop, factors, muls) &&
         collectFactors(mul.getRhs(), stop, factors, muls);
}

/// The operands of `root` and of the products among them: where the
/// distinctive factor of a three-factor product sits in any association.
static SmallVector<Value, 6> shallowFactors(MulOp root) {
  SmallVector<Value, 6> result;
  for (Value operand : root->getOperands()) {
    result.push_back(operand);
    if (auto mul = operand.getDefiningOp<MulOp>())
      llvm::append_range(result, mul->getOperands());
  }
  return result;
}

/// True when the only user of `op`'s result is a `part.mul`: `op` is then
/// part of a larger product.
static bool soleUserIsMul(Operation *op) {
  return op->getResult(0).hasOneUse() &&
         isa<MulOp>(*op->getResult(0).getUsers().begin());
}

/// Removes one occurrence of `v` from `factors`; false if there is none.
static bool takeFactor(SmallVectorImpl<Value> &factors, Value v) {
  auto *it = llvm::find(factors, v);
  if (it == factors.end())
    return false;
  factors.erase(it);
  return true;
}

/// Checks that the results of `interior` are used only by `interior` and
/// `root`: a raised chain must not leave work behind for other users.
static LogicalResult checkContained(Operation *root,
                                    ArrayRef<Operation *> interior,
                                    Diagnosis &diagnosis) {
  llvm::SmallPtrSet<Operation *, 16> inside(interior.begin(), interior.end());
  inside.insert(root);
  for (Operation *op : interior)
    for (Operation *user : op->getUsers())
      if (!inside.contains(user))
        return diagnosis.fail(
            Twine("the intermediate '") + op->getName().getStringRef() +
            "' is also used by '" + user->getName().getStringRef() +
            "', outside the pattern");
  return success();
}

/// The location of a raised op: those of the root and the ops it replaces.
static Location fusedLoc(Operation *root, ArrayRef<Operation *> interior) {
  SmallVector<Location> locs = {root->getLoc()};
  for (Operation *op : interior)
    locs.push_back(op->getLoc());
  return FusedLoc::get(root->getContext(), locs);
}

/// Replaces `root` by `raised`, keeping the root's discardable attributes
/// (a sharding annotation on the root describes the raised value as well).
static void replaceRoot(PatternRewriter &rewriter, Operation *root,
                        Operation *raised) {
  LLVM_DEBUG(llvm::dbgs() << "part-raise: " << raised->getName() << " at "
                          << root->getLoc() << "\n");
  raised->setDiscardableAttrs(root->getDiscardableAttrDictionary());
  rewriter.replaceOp(root, raised->getResults());
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

namespace {
struct GeluMatch {
  Value input;
  GeluApproximation approximation;
  SmallVector<Operation *> interior;
};
} // namespace

/// `v` is `c * x`, `x * c` or (with `divisor`) `x / c` with `c` a splat
/// constant: returns x and sets `constant`.
static Value matchScaled(Value v, Value &constant, bool allowDivide,
                         Operation *&op) {
  op = v.getDefiningOp();
  if (auto mul = dyn_cast_or_null<MulOp>(op)) {
    if (getSplatFloat(mul.getRhs())) {
      constant = mul.getRhs();
      return mul.getLhs();
    }
    if (getSplatFloat(mul.getLhs())) {
      constant = mul.getLhs();
      return mul.getRhs();
    }
  }
  if (auto div = dyn_cast_or_null<DivOp>(op);
      div && allowDivide && getSplatFloat(div.getRhs())) {
    constant = div.getRhs();
    return div.getLhs();
  }
  return {};
}

/// Counts the factors of `value` as a power of `x` times one constant:
/// `x` counts 1, `pow(x, 2)` and `pow(x, 3)` their exponent. Returns the
/// exponent, or -1 when `value` is not such a product.
static int64_t powerOf(Value value, Value x, Value &constant,
                       SmallVectorImpl<Operation *> &interior) {
  SmallVector<Value, 6> factors;
  if (!collectFactors(value, {x}, factors, interior))
    return -1;
  int64_t exponent = 0;
  for (Value f : factors) {
    if (f == x) {
      ++exponent;
      continue;
    }
    if (auto pow = f.getDefiningOp<PowOp>(); pow && pow.getLhs() == x) {
      if (isExactly(pow.getRhs(), 2) || isExactly(pow.getRhs(), 3)) {
        exponent += isExactly(pow.getRhs(), 2) ? 2 : 3;
        interior.push_back(pow);
        continue;
      }
      return -1;
    }
    if (getSplatFloat(f) && !constant) {
      constant = f;
      continue;
    }
    return -1;
  }
  return exponent;
}

/// `x * 0.5 * (1 + erf(x / sqrt(2)))` or
/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, rooted at
/// the last product.
static FailureOr<GeluMatch> matchGelu(MulOp root, Diagnosis &diagnosis) {
  // The distinctive factor: 1 + erf(u) or 1 + tanh(u).
  AddOp onePlus;
  Operation *function = nullptr;
  for (Value f : shallowFactors(root)) {
    auto add = f.getDefiningOp<AddOp>();
    if (!add)
      continue;
    for (Value operand : add->getOperands())
      if (isa_and_nonnull<ErfOp, TanhOp>(operand.getDefiningOp()) &&
          getSplatFloat(otherOperand(add, operand))) {
        onePlus = add;
        function = operand.getDefiningOp();
      }
    if (onePlus)
      break;
  }
  if (!onePlus)
    return failure();
  diagnosis.candidate = true;
  bool isErf = isa<ErfOp>(function);
  StringRef name = isErf ? "erf" : "tanh";
  Value one = otherOperand(onePlus, function->getResult(0));
  if (!isExactly(one, 1.0))
    return diagnosis.fail(Twine("the constant added to ") + name + " is " +
                          describeConstant(one) + ", not 1");

  GeluMatch match;
  match.approximation =
      isErf ? GeluApproximation::Erf : GeluApproximation::Tanh;
  match.interior = {onePlus, function};
  Value u = function->getOperand(0);
  Value x;
  if (isErf) {
    // u = x / sqrt(2) or x * (1 / sqrt(2)).
    Value c;
    Operation *scale;
    x = matchScaled(u, c, /*allowDivide=*/true, scale);
    if (!x)
      return diagnosis.fail("the argument of erf is not x / sqrt(2) or "
                            "x * (1 / sqrt(2))");
    bool divides = isa<DivOp>(scale);
    if (!isApproximately(c, divides ? M_SQRT2 : M_SQRT1_2))
      return diagnosis.fail(Twine("the argument of erf is x ") +
                            (divides ? "/ " : "* ") + describeConstant(c) +
                            ", not x " +
                            (divides ? "/ sqrt(2)" : "* (1 / sqrt(2))"));
    match.interior.push_back(scale);
  } else {
    // u = sqrt(2 / pi) * (x + 0.044715 * x^3).
    Value c;
    Operation *scale;
    Value inner = matchScaled(u, c, /*allowDivide=*/false, scale);
    if (!inner)
      return diagnosis.fail("the argument of tanh is not a constant times "
                            "(x + 0.044715 * x^3)");
    const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
    if (!isApproximately(c, kSqrt2OverPi))
      return diagnosis.fail(Twine("the argument of tanh is scaled by ") +
                            describeConstant(c) + ", not sqrt(2 / pi)");
    auto sum = inner.getDefiningOp<AddOp>();
    if (!sum)
      return diagnosis.fail("the argument of tanh is not a constant times "
                            "(x + 0.044715 * x^3)");
    match.interior.push_back(scale);
    match.interior.push_back(sum);
    // Either operand of the sum may be x; the other is 0.044715 * x^3.
    std::string why = "the sum inside tanh is not x + 0.044715 * x^3";
    for (Value candidate : sum->getOperands()) {
      SmallVector<Operation *> cube;
      Value kappa;
      int64_t exponent =
          powerOf(otherOperand(sum, candidate), candidate, kappa, cube);
      if (exponent != 3 || !kappa)
        continue;
      if (!isExactly(kappa, 0.044715)) {
        why = "the cubic term's coefficient is " + describeConstant(kappa) +
              ", not 0.044715";
        continue;
      }
      x = candidate;
      llvm::append_range(match.interior, cube);
      break;
    }
    if (!x)
      return diagnosis.fail(why);
  }

  // The whole product: x, 0.5 and the distinctive factor.
  SmallVector<Value, 6> factors;
  SmallVector<Operation *> muls;
  if (!collectFactors(root.getResult(), {x}, factors, muls) ||
      !takeFactor(factors, onePlus.getResult()) || factors.size() > 2) {
    // A larger product (a gated unit) is no candidate; its GELU, if any, is.
    diagnosis.candidate = false;
    return failure();
  }
  if (!takeFactor(factors, x))
    return diagnosis.fail(Twine("the other factor is not the x inside ") +
                          name);
  if (factors.empty())
    return diagnosis.fail("the product lacks the factor 0.5");
  if (factors.size() != 1 || !isExactly(factors.front(), 0.5))
    return diagnosis.fail("the constant factor is " +
                          describeConstant(factors.front()) + ", not 0.5");
  if (root.getType() != x.getType())
    return diagnosis.fail(
        "a constant broadcasts the result beyond the shape of x");
  llvm::append_range(match.interior, llvm::drop_begin(muls)); // not the root
  if (failed(checkContained(root, match.interior, diagnosis)))
    return failure();
  match.input = x;
  return match;
}

//===----------------------------------------------------------------------===//
// SiLU
//===----------------------------------------------------------------------===//

/// `x * sigmoid(x)` in either order.
static FailureOr<SigmoidOp> matchSilu(MulOp root, Diagnosis &diagnosis) {
  for (Value operand : root->getOperands()) {
    auto sigmoid = operand.getDefiningOp<SigmoidOp>();
    if (!sigmoid || sigmoid.getInput() != otherOperand(root, operand))
      continue;
    diagnosis.candidate = true;
    if (failed(checkContained(root, {sigmoid}, diagnosis)))
      return failure();
    return sigmoid;
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Layer norm and RMS norm
//===----------------------------------------------------------------------===//

namespace {
struct NormMatch {
  bool layerNorm = false;
  Value input, scale;
  APFloat epsilon = APFloat(0.0f);
  SmallVector<Operation *> interior;
};
} // namespace

/// True when `mean` reduces the last dimension of its input with keep_dims.
static LogicalResult checkLastDimMean(ReduceMeanOp mean, StringRef what,
                                      Diagnosis &diagnosis) {
  int64_t last = mean.getInput().getType().getRank() - 1;
  if (mean.getDims() != ArrayRef<int64_t>{last})
    return diagnosis.fail(Twine("the ") + what + " is over dims " +
                          formatShape(mean.getDims()) +
                          ", not the last dimension " + Twine(last));
  if (!mean.getKeepDims())
    return diagnosis.fail(Twine("the ") + what +
                          " drops the reduced dimension (no keep_dims)");
  return success();
}

/// `mean(d^2) + eps` (either order; `d^2` as pow(d, 2) or d * d): returns d
/// and sets the epsilon. The root is a candidate once the sum of a mean is
/// found.
static Value matchMeanSquare(Value v, APFloat &epsilon,
                             SmallVectorImpl<Operation *> &interior,
                             Diagnosis &diagnosis) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add)
    return {};
  ReduceMeanOp mean;
  for (Value operand : add->getOperands())
    if (auto m = operand.getDefiningOp<ReduceMeanOp>())
      mean = m;
  if (!mean)
    return {};
  diagnosis.candidate = true;
  Value eps = otherOperand(add, mean.getResult());
  std::optional<APFloat> epsValue = getSplatFloat(eps);
  if (!epsValue) {
    (void)diagnosis.fail("the epsilon added to the mean is not a constant");
    return {};
  }
  if (failed(checkLastDimMean(mean, "mean of squares", diagnosis)))
    return {};
  Value squared = mean.getInput();
  Value d;
  if (auto pow = squared.getDefiningOp<PowOp>()) {
    if (!isExactly(pow.getRhs(), 2.0)) {
      (void)diagnosis.fail("the mean is of a power " +
                           describeConstant(pow.getRhs()) + ", not 2");
      return {};
    }
    d = pow.getLhs();
    interior.push_back(pow);
  } else if (auto mul = squared.getDefiningOp<MulOp>();
             mul && mul.getLhs() == mul.getRhs()) {
    d = mul.getLhs();
    interior.push_back(mul);
  } else {
    (void)diagnosis.fail("the mean is not of a square (pow(x, 2) or x * x)");
    return {};
  }
  bool lost;
  epsilon = *epsValue;
  epsilon.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  interior.push_back(add);
  interior.push_back(mean);
  return d;
}

/// `rsqrt(e)` or `1 / sqrt(e)`: returns e.
static Value matchInverseSqrt(Value v, SmallVectorImpl<Operation *> &interior) {
  if (auto rsqrt = v.getDefiningOp<RsqrtOp>()) {
    interior.push_back(rsqrt);
    return rsqrt.getInput();
  }
  auto div = v.getDefiningOp<DivOp>();
  if (!div || !isExactly(div.getLhs(), 1.0))
    return {};
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  if (!sqrt)
    return {};
  interior.push_back(div);
  interior.push_back(sqrt);
  return sqrt.getInput();
}

/// `d * rsqrt(mean(d^2) + eps) * scale` (rms_norm of d) or, when d is
/// `x - mean(x)`, layer_norm of x; the normalisation may also be
/// `d / sqrt(...)`, and the products associate and commute freely.
static FailureOr<NormMatch> matchNorm(MulOp root, Diagnosis &diagnosis) {
  NormMatch match;
  Value normalizer, numerator;
  bool quotient = false; // d / sqrt(...) rather than d * rsqrt(...)
  // Find the normaliser among the factors: an inverse square root, or a
  // quotient by a square root, of a mean of squares plus epsilon.
  for (Value f : shallowFactors(root)) {
    SmallVector<Operation *> ops;
    Value e = matchInverseSqrt(f, ops);
    Value quotientOf;
    if (!e) {
      auto div = f.getDefiningOp<DivOp>();
      auto sqrt = div ? div.getRhs().getDefiningOp<SqrtOp>() : SqrtOp();
      if (!sqrt)
        continue;
      e = sqrt.getInput();
      quotientOf = div.getLhs();
      ops = {div, sqrt};
    }
    Diagnosis probe;
    SmallVector<Operation *> inner;
    APFloat epsilon(0.0f);
    Value d = matchMeanSquare(e, epsilon, inner, probe);
    if (!probe.candidate)
      continue;
    diagnosis.candidate = true;
    if (!d)
      return diagnosis.fail(probe.reason);
    if (quotientOf && quotientOf != d)
      return diagnosis.fail(
          "the normalised numerator is not the value whose squares are "
          "averaged");
    normalizer = f;
    numerator = d;
    quotient = bool(quotientOf);
    match.epsilon = epsilon;
    llvm::append_range(match.interior, ops);
    llvm::append_range(match.interior, inner);
    break;
  }
  if (!normalizer)
    return failure();

  // The whole product: the numerator (unless inside a quotient), the
  // normaliser and the scale.
  SmallVector<Value, 6> factors;
  SmallVector<Operation *> muls;
  if (!collectFactors(root.getResult(), {numerator}, factors, muls) ||
      !takeFactor(factors, normalizer) ||
      (!quotient && !takeFactor(factors, numerator)))
    return diagnosis.fail("the product is not x * rsqrt(mean(x^2) + eps) * "
                          "scale with one x");
  if (factors.empty())
    return diagnosis.fail("there is no scale factor");
  if (factors.size() != 1)
    return diagnosis.fail(Twine("the normalised value is multiplied by ") +
                          Twine(factors.size()) + " factors, not one scale");
  match.scale = factors.front();

  // Layer norm when the numerator is x - mean(x).
  match.input = numerator;
  if (auto sub = numerator.getDefiningOp<SubOp>()) {
    auto centre = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    if (centre && centre.getInput() == sub.getLhs()) {
      if (failed(checkLastDimMean(centre, "mean subtracted", diagnosis)))
        return failure();
      match.layerNorm = true;
      match.input = sub.getLhs();
      match.interior.push_back(sub);
      match.interior.push_back(centre);
    }
  }
  auto input = tensorType(match.input);
  auto scale = tensorType(match.scale);
  int64_t d = input.getRank() ? input.getShape().back() : 0;
  if (input.getRank() < 1 || scale.getShape() != ArrayRef<int64_t>{d})
    return diagnosis.fail("the scale has shape " +
                          formatShape(scale.getShape()) + ", not [" + Twine(d) +
                          "] (the last dimension of the input)");
  if (scale.getElementType() != input.getElementType())
    return diagnosis.fail("the scale's element type differs from the input's");
  if (root.getType() != input)
    return diagnosis.fail("the result type differs from the input's");
  llvm::append_range(match.interior, llvm::drop_begin(muls));
  if (failed(checkContained(root, match.interior, diagnosis)))
    return failure();
  return match;
}

/// `layer_norm(x, scale) + bias` (either order) with a bias of shape [D].
static FailureOr<std::pair<LayerNormOp, Value>>
matchLayerNormBias(AddOp root, Diagnosis &diagnosis) {
  for (Value operand : root->getOperands()) {
    auto norm = operand.getDefiningOp<LayerNormOp>();
    Value bias = otherOperand(root, operand);
    if (!norm || norm.getBias() || tensorType(bias).getRank() != 1)
      continue;
    diagnosis.candidate = true;
    auto input = tensorType(norm.getInput());
    int64_t d = input.getShape().back();
    if (tensorType(bias).getShape() != ArrayRef<int64_t>{d})
      return diagnosis.fail("the bias has shape " +
                            formatShape(tensorType(bias).getShape()) +
                            ", not [" + Twine(d) + "]");
    if (root.getType() != input)
      return diagnosis.fail("the result type differs from the input's");
    if (failed(checkContained(root, {norm}, diagnosis)))
      return failure();
    return std::make_pair(norm, bias);
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

namespace {
struct RotaryMatch {
  Value input, cos, sin;
  SmallVector<Operation *> interior;
};
} // namespace

/// True when `v` is a `part.slice` of `x` ([..., D]) taking the last
/// dimension's elements [begin, begin + D / 2) and all of the others.
static bool isHalfOf(Value v, Value x, int64_t begin) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || slice.getInput() != x)
    return false;
  if (std::optional<ArrayRef<int64_t>> strides = slice.getStrides();
      strides && llvm::any_of(*strides, [](int64_t s) { return s != 1; }))
    return false;
  ArrayRef<int64_t> shape = tensorType(x).getShape();
  SmallVector<int64_t> offsets(shape.size(), 0), sizes(shape);
  offsets.back() = begin;
  sizes.back() = shape.back() / 2;
  return slice.getOffsets() == ArrayRef<int64_t>(offsets) &&
         slice.getType().getShape() == ArrayRef<int64_t>(sizes);
}

/// The rotary table `t` as the [S, D] operand of part.rotary_embedding on
/// `x` ([..., S, D]): its shape must be [S, D] after leading 1s, so that it
/// broadcasts the same way to every leading index. Empty message on
/// success.
static std::string checkRotaryTable(Value t, Value x, StringRef name) {
  auto table = tensorType(t);
  auto input = tensorType(x);
  ArrayRef<int64_t> shape = table.getShape();
  ArrayRef<int64_t> block = input.getShape().take_back(2);
  if (shape.size() < 2 || shape.size() > input.getShape().size() ||
      shape.take_back(2) != block ||
      llvm::any_of(shape.drop_back(2), [](int64_t n) { return n != 1; }))
    return (Twine("the ") + name + " table has shape " + formatShape(shape) +
            ", not " + formatShape(block) +
            " (the input's last two dimensions) after leading 1s")
        .str();
  if (table.getElementType() != input.getElementType())
    return (Twine("the ") + name +
            " table's element type differs from the input's")
        .str();
  return "";
}

/// `x * cos + rotate_half(x) * sin` with `rotate_half(x)` =
/// `concat(-x[..., D/2:], x[..., :D/2])` along the last dimension, rooted at
/// the sum (either order, either order of each product).
static FailureOr<RotaryMatch> matchRotary(AddOp root, Diagnosis &diagnosis) {
  // The distinctive product: concat(neg(.), .) times the sine table.
  MulOp sinProduct;
  ConcatOp rotated;
  for (Value operand : root->getOperands()) {
    auto mul = operand.getDefiningOp<MulOp>();
    if (!mul)
      continue;
    for (Value factor : mul->getOperands()) {
      auto concat = factor.getDefiningOp<ConcatOp>();
      if (concat && concat.getInputs().size() == 2 &&
          concat.getInputs()[0].getDefiningOp<NegOp>()) {
        sinProduct = mul;
        rotated = concat;
      }
    }
    if (sinProduct)
      break;
  }
  if (!sinProduct)
    return failure();
  auto cosProduct =
      otherOperand(root, sinProduct.getResult()).getDefiningOp<MulOp>();
  if (!cosProduct)
    return failure();
  diagnosis.candidate = true;

  // rotate_half(x): the halves of one x, the upper one negated and first.
  auto neg = rotated.getInputs()[0].getDefiningOp<NegOp>();
  auto upper = neg.getInput().getDefiningOp<SliceOp>();
  if (!upper)
    return diagnosis.fail("the negated half is not a part.slice");
  Value x = upper.getInput();
  auto input = tensorType(x);
  int64_t rank = input.getRank();
  if (rank < 2 || input.getShape().back() % 2 != 0)
    return diagnosis.fail("the rotated value has shape " +
                          formatShape(input.getShape()) +
                          ", not rank 2 or more with an even last dimension");
  int64_t d = input.getShape().back();
  if (static_cast<int64_t>(rotated.getDim()) != rank - 1)
    return diagnosis.fail("the halves are concatenated along dim " +
                          Twine(rotated.getDim()) + ", not the last dim " +
                          Twine(rank - 1));
  if (!isHalfOf(upper.getResult(), x, d / 2))
    return diagnosis.fail("the negated slice is not the upper half x[..., " +
                          Twine(d / 2) + ":] of the last dimension");
  if (!isHalfOf(rotated.getInputs()[1], x, 0))
    return diagnosis.fail("the second half of the concatenation is not the "
                          "lower half x[..., :" +
                          Twine(d / 2) + "] of the same value");

  // The tables.
  Value sinTable = otherOperand(sinProduct, rotated.getResult());
  if (!llvm::is_contained(cosProduct->getOperands(), x))
    return diagnosis.fail("the other product is not of the rotated value x");
  Value cosTable = otherOperand(cosProduct, x);
  if (cosTable == x)
    return diagnosis.fail("the other product is x * x, not x * cos");
  for (auto [table, name] :
       {std::make_pair(cosTable, "cos"), std::make_pair(sinTable, "sin")})
    if (std::string why = checkRotaryTable(table, x, name); !why.empty())
      return diagnosis.fail(why);
  if (root.getType() != input)
    return diagnosis.fail("the result type differs from the input's");

  RotaryMatch match;
  match.input = x;
  match.cos = cosTable;
  match.sin = sinTable;
  Operation *lower = rotated.getInputs()[1].getDefiningOp();
  match.interior = {cosProduct, sinProduct, rotated, neg, upper, lower};
  if (failed(checkContained(root, match.interior, diagnosis)))
    return failure();
  return match;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Masked scores are at most this (or -inf): exp of such a score is 0 in
/// f32 next to any unmasked score above -1e4 + 104.
constexpr double kMaskedAtMost = -1e4;

static bool isMaskedValue(double v) { return v <= kMaskedAtMost; }

namespace {
/// What a mask constant does to a [S, S] block of scores: nothing, causal
/// (query i keeps the keys j <= i), a sliding window (the keys with
/// 0 <= i - j < window) or something else.
struct MaskClass {
  enum Kind { Nothing, Causal, Window, Other } kind = Other;
  int64_t window = 0;    ///< for Window
  std::string why;       ///< for Other
  int64_t emptyRow = -1; ///< for Other: a row that keeps no key, or -1
};
} // namespace

/// Reads the additive float mask or the integer select condition `attr`
/// (the latter: nonzero where kept when `keepWhereTrue`, where masked
/// otherwise) into one flag per entry, true where the key is kept. Fails,
/// saying why in `why`, at a float entry that is neither 0 nor masked.
static LogicalResult readMask(DenseElementsAttr attr, bool isCondition,
                              bool keepWhereTrue, std::vector<bool> &kept,
                              std::string &why,
                              function_ref<std::string(int64_t)> entry) {
  kept.reserve(attr.getNumElements());
  if (isCondition) {
    for (const APInt &value : attr.getValues<APInt>())
      kept.push_back(keepWhereTrue != value.isZero());
    return success();
  }
  for (const APFloat &value : attr.getValues<APFloat>()) {
    double v = toDouble(value);
    if (v != 0.0 && !isMaskedValue(v)) {
      why = "entry " + entry(kept.size()) + " is " + formatNumber(v) +
            ", neither 0 nor -inf or at most -1e4";
      return failure();
    }
    kept.push_back(v == 0.0);
  }
  return success();
}

/// Classifies the mask `attr` (read as readMask reads it). Every [S, S] block
/// of the last two dimensions must be the same causal or band pattern; the
/// window is the number of keys the last row of the first block keeps.
static MaskClass classifyMask(DenseElementsAttr attr, bool isCondition,
                              bool keepWhereTrue) {
  auto type = cast<RankedTensorType>(attr.getType());
  ArrayRef<int64_t> shape = type.getShape();
  MaskClass result;
  int64_t cols = shape.empty() ? 1 : shape.back();
  int64_t rows = shape.size() < 2 ? 1 : shape[shape.size() - 2];
  auto entry = [&](int64_t flat) {
    return formatShape({(flat / cols) % rows, flat % cols});
  };
  std::vector<bool> kept;
  if (failed(readMask(attr, isCondition, keepWhereTrue, kept, result.why,
                      entry)))
    return result;
  if (llvm::all_of(kept, [](bool k) { return k; })) {
    result.kind = MaskClass::Nothing;
    return result;
  }
  if (shape.size() < 2 || rows != cols) {
    result.why = "its last two dimensions " +
                 formatShape(shape.take_back(std::min<size_t>(2, shape.size()))) +
                 " are not a square [S, S] block";
    return result;
  }
  int64_t s = cols, size = kept.size();
  for (int64_t row = 0; row * s < size; ++row)
    if (std::none_of(kept.begin() + row * s, kept.begin() + (row + 1) * s,
                     [](bool k) { return k; })) {
      result.emptyRow = row % s;
      result.why = "row " + std::to_string(row % s) + " masks every key";
      return result;
    }
  int64_t w = std::count(kept.begin() + (s - 1) * s, kept.begin() + s * s,
                         true);
  auto value = [&](int64_t flat) -> std::string {
    if (isCondition)
      return (*std::next(attr.getValues<APInt>().begin(), flat)).isZero()
                 ? "0"
                 : "nonzero";
    return formatNumber(
        toDouble(*std::next(attr.getValues<APFloat>().begin(), flat)));
  };
  std::string band = w < s ? " (the last row keeps " + std::to_string(w) +
                                 " keys, a sliding window of " +
                                 std::to_string(w) + ")"
                           : "";
  for (int64_t flat = 0; flat < size; ++flat) {
    int64_t i = (flat / s) % s, j = flat % s;
    bool expected = j <= i && i - j < w;
    if (kept[flat] == expected)
      continue;
    if (j > i)
      result.why = "entry " + entry(flat) + " above the diagonal is " +
                   value(flat) +
                   (isCondition ? ", so the mask keeps it"
                                : ", not -inf or at most -1e4");
    else if (expected)
      result.why = "entry " + entry(flat) + " on or below the diagonal is " +
                   value(flat) +
                   (isCondition ? ", so the mask masks it" : ", not 0") + band;
    else
      result.why = "entry " + entry(flat) + ", " + std::to_string(i - j) +
                   " keys before its query, is kept" + band;
    return result;
  }
  result.kind = w < s ? MaskClass::Window : MaskClass::Causal;
  result.window = w < s ? w : 0;
  return result;
}

namespace {
/// Classifications by mask attribute (and how it is read): the layers of a
/// model share their mask, which is scanned once.
struct MaskCache {
  llvm::DenseMap<std::pair<Attribute, unsigned>, MaskClass> entries;

  const MaskClass &get(DenseElementsAttr attr, bool isCondition,
                       bool keepWhereTrue) {
    unsigned how = isCondition ? (keepWhereTrue ? 1 : 2) : 0;
    auto [it, inserted] = entries.try_emplace({attr, how});
    if (inserted)
      it->second = classifyMask(attr, isCondition, keepWhereTrue);
    return it->second;
  }
};

struct AttentionMatch {
  Value query, key, value;
  /// When set, the key is this value transposed by `keyPermutation`.
  Value keySource;
  SmallVector<int64_t, 4> keyPermutation;
  bool causal = false;
  /// The sliding window (with `causal`), 0 for none.
  int64_t window = 0;
  double scale = 1.0;
  /// The NaN guard after the softmax (`where(isnan(p), 0, p)`), if any.
  SelectOp guard;
  /// [B, H] when the product with the values is over [B * H, Sq, Sk]: its
  /// result is the attention's reshaped to [B * H, Sq, D].
  SmallVector<int64_t, 2> mergedHeads;
  SmallVector<Operation *> interior;
};
} // namespace

/// A dense constant's value, or null.
static DenseElementsAttr getDenseConstant(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  return constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                  : DenseElementsAttr();
}

/// What a user runs to import an initializer as a constant.
constexpr llvm::StringLiteral kMarkConstantHint = "partition-import --frozen";

/// The name of the parameter `v` is, through reshapes, broadcasts and
/// casts (an initializer the importer made a parameter), or "".
static std::string parameterName(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<ReshapeOp, BroadcastOp, CastOp>(op))
      return "";
    v = op->getOperand(0);
  }
  auto arg = cast<BlockArgument>(v);
  auto function = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!function)
    return "";
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      arg.getArgNumber(), PartDialect::getRoleAttrName());
  if (!role || role.getValue() != ArgRole::Parameter)
    return "";
  auto name = function.getArgAttrOfType<StringAttr>(
      arg.getArgNumber(), PartDialect::getNameAttrName());
  return name ? name.str() : "#" + std::to_string(arg.getArgNumber());
}

/// The key/value heads `v` repeats, Llama's `repeat_kv` as exported:
/// reshape [B, Hkv, S, D] -> [B, Hkv, 1, S, D], broadcast to
/// [B, Hkv, n, S, D], reshape to [B, Hkv * n, S, D]. Head h of the result is
/// head h / n of the source, which is how part.attention reads fewer key and
/// value heads than query heads. Null when `v` is not such a repetition.
static Value unrepeatHeads(Value v) {
  auto merge = v.getDefiningOp<ReshapeOp>();
  auto repeat =
      merge ? merge.getInput().getDefiningOp<BroadcastOp>() : BroadcastOp();
  auto split =
      repeat ? repeat.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!split)
    return {};
  ArrayRef<int64_t> source = split.getInput().getType().getShape();
  ArrayRef<int64_t> inserted = split.getType().getShape();
  ArrayRef<int64_t> repeated = repeat.getType().getShape();
  ArrayRef<int64_t> result = merge.getType().getShape();
  if (source.size() != 4)
    return {};
  int64_t b = source[0], h = source[1], s = source[2], d = source[3];
  int64_t n = repeated.size() == 5 ? repeated[2] : 0;
  if (inserted != ArrayRef<int64_t>{b, h, 1, s, d} ||
      repeated != ArrayRef<int64_t>{b, h, n, s, d} ||
      result != ArrayRef<int64_t>{b, h * n, s, d})
    return {};
  return split.getInput();
}

/// True when `v` is a float constant that is zero everywhere.
static bool isZeroConstant(Value v) {
  DenseElementsAttr attr = getDenseConstant(v);
  return attr && isa<FloatType>(attr.getElementType()) && attr.isSplat() &&
         attr.getSplatValue<APFloat>().isZero();
}

/// The [B, H, S, D] value that `v`, a [B * H, S, D] value, is a reshape of,
/// where `heads` is [B, H]; null otherwise.
static Value mergedHeadsOf(Value v, ArrayRef<int64_t> heads) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  ArrayRef<int64_t> from = reshape.getInput().getType().getShape();
  ArrayRef<int64_t> to = reshape.getType().getShape();
  if (from.size() != 4 || to.size() != 3 || from.take_front(2) != heads ||
      from.drop_front(2) != to.drop_front())
    return {};
  return reshape.getInput();
}

/// True when `reshape` merges the first two dimensions of a rank-4 value,
/// [B, H, X, Y] -> [B * H, X, Y] (heads folded into the batch).
static bool mergesHeads(ReshapeOp reshape) {
  ArrayRef<int64_t> from = reshape.getInput().getType().getShape();
  ArrayRef<int64_t> to = reshape.getType().getShape();
  return from.size() == 4 && to.size() == 3 && to[0] == from[0] * from[1] &&
         to.drop_front() == from.drop_front(2);
}


/// Fails, saying that `mask` (what `what` names) is not a constant, and
/// which parameter it is when it is one: a parameter may hold anything, so
/// the mask it holds cannot be classified.
static LogicalResult failNotConstant(StringRef what, Value mask,
                                     Diagnosis &diagnosis) {
  std::string name = parameterName(mask);
  if (name.empty())
    return diagnosis.fail(what + " is not a constant");
  return diagnosis.fail(what + " is parameter '" + name +
                        "', not a constant; mark it constant (" +
                        kMarkConstantHint + " '" + name + "')");
}

/// `where(isnan(p), 0, p)`, torch's guard after every SDPA softmax, as the
/// importer translates it: `select(compare ne(p, p), 0, p)` (or
/// `select(compare eq(p, p), p, 0)`). Returns p, setting `guard` and adding
/// the guard's ops to `interior`; returns `v` when it is not such a guard.
static Value peelNanGuard(Value v, SelectOp &guard,
                          SmallVectorImpl<Operation *> &interior) {
  auto select = v.getDefiningOp<SelectOp>();
  auto compare =
      select ? select.getCondition().getDefiningOp<CompareOp>() : CompareOp();
  if (!compare || compare.getLhs() != compare.getRhs())
    return v;
  Value p = compare.getLhs();
  ComparisonDirection direction = compare.getDirection();
  bool notEqual = direction == ComparisonDirection::NE;
  if (!notEqual && direction != ComparisonDirection::EQ)
    return v;
  Value kept = notEqual ? select.getFalseValue() : select.getTrueValue();
  Value zero = notEqual ? select.getTrueValue() : select.getFalseValue();
  if (kept != p || !isZeroConstant(zero) || select.getType() != p.getType())
    return v;
  guard = select;
  interior.push_back(select);
  interior.push_back(compare);
  return p;
}

/// The probabilities `root` multiplies with the values: a softmax over
/// [B, H, Sq, Sk]; or, with the heads folded into the batch, that softmax
/// reshaped to [B * H, Sq, Sk] (BLOOM), or a softmax over [B * H, Sq, Sk]
/// scores reshaped from [B, H, Sq, Sk] ones (OPT); under the NaN guard or
/// not. Returns the [B, H, Sq, Sk] scores; sets `match.mergedHeads` where
/// the heads are folded.
static FailureOr<Value> matchProbabilities(BatchMatmulOp root,
                                           AttentionMatch &match,
                                           Diagnosis &diagnosis) {
  Value probs = peelNanGuard(root.getLhs(), match.guard, match.interior);
  ReshapeOp mergedProbs = probs.getDefiningOp<ReshapeOp>();
  Value source = mergedProbs ? mergedProbs.getInput() : probs;
  if (mergedProbs && !match.guard)
    source = peelNanGuard(source, match.guard, match.interior);
  auto softmax = source.getDefiningOp<SoftmaxOp>();
  if (!softmax)
    return failure();
  diagnosis.candidate = true;
  if (mergedProbs)
    match.interior.push_back(mergedProbs);
  match.interior.push_back(softmax);
  auto probsType = softmax.getType();
  if (root.getTransposeA() || root.getTransposeB())
    return diagnosis.fail("the product with the values transposes an operand");
  int64_t rank = probsType.getRank();
  if (softmax.getDim() != static_cast<uint64_t>(rank - 1))
    return diagnosis.fail("the softmax is over dim " + Twine(softmax.getDim()) +
                          ", not the last (key) dimension " + Twine(rank - 1));
  Value scores = softmax.getInput();
  ReshapeOp mergedScores;
  if (mergedProbs) {
    if (!mergesHeads(mergedProbs))
      return diagnosis.fail("the probabilities are reshaped from " +
                            formatShape(probsType.getShape()) + " to " +
                            formatShape(mergedProbs.getType().getShape()) +
                            ", not from [B, H, Sq, Sk] to [B * H, Sq, Sk]");
  } else if (rank == 3) {
    mergedScores = scores.getDefiningOp<ReshapeOp>();
    if (!mergedScores || !mergesHeads(mergedScores))
      return diagnosis.fail("attention needs rank-4 [batch, heads, seq, "
                            "head_dim] operands; the probabilities have rank "
                            "3 and are not a softmax of rank-4 [B, H, Sq, Sk] "
                            "scores reshaped to [B * H, Sq, Sk]");
    match.interior.push_back(mergedScores);
    scores = mergedScores.getInput();
  } else if (rank != 4) {
    return diagnosis.fail("attention needs rank-4 [batch, heads, seq, "
                          "head_dim] operands, the probabilities have rank " +
                          Twine(rank));
  }
  if (mergedProbs || mergedScores) {
    ArrayRef<int64_t> heads = tensorType(scores).getShape().take_front(2);
    match.mergedHeads.assign(heads.begin(), heads.end());
  }
  return scores;
}

/// Records the mask `kind` in `match`; fails where it is neither none,
/// causal nor a sliding window, or does not cover the [S, S] `block` of
/// scores. `what` names the mask in messages.
static LogicalResult takeMaskKind(const MaskClass &kind, ShapedType maskType,
                                  ArrayRef<int64_t> block, StringRef what,
                                  AttentionMatch &match, Diagnosis &diagnosis) {
  if (kind.kind == MaskClass::Other && kind.emptyRow >= 0 && match.guard)
    return diagnosis.fail(
        what + " masks every key of row " + Twine(kind.emptyRow) +
        ": where the masked scores are -inf the softmax is NaN there and "
        "the NaN guard after it gives 0, so the guard is not a no-op and "
        "stays");
  if (kind.kind == MaskClass::Other)
    return diagnosis.fail(what + " is neither causal nor a sliding window: " +
                          kind.why);
  if (kind.kind == MaskClass::Nothing)
    return success();
  ArrayRef<int64_t> shape = maskType.getShape();
  if (shape.size() < 2 || shape.take_back(2) != block || block[0] != block[1])
    return diagnosis.fail("a causal mask needs a square [S, S] block of "
                          "scores and a mask covering it, got scores " +
                          formatShape(block) + " and a mask of shape " +
                          formatShape(shape));
  match.causal = true;
  match.window = kind.window;
  return success();
}

/// Takes the mask off the `scores` the softmax reads, [B, H, Sq, Sk] with
/// `block` [Sq, Sk]: an additive constant, a select against a masked value,
/// or none; and OPT's clamp of the masked scores. Returns the unmasked
/// scores.
static FailureOr<Value> matchMask(Value scores, ArrayRef<int64_t> block,
                                  MaskCache &cache, AttentionMatch &match,
                                  Diagnosis &diagnosis) {
  // OPT clamps the masked scores: max(scores + mask, finfo.min). The clamp
  // changes only scores below its bound c, and c <= -1e4: with the largest
  // score of a row above -1e4 + 104, which the mask rules below assume,
  // such a score and c both give exp(. - max) = 0 in f32 and the largest
  // score is unchanged, so the probabilities are the same with or without
  // the clamp.
  if (auto clamp = scores.getDefiningOp<MaxOp>()) {
    Value bound, clamped;
    for (Value operand : clamp->getOperands())
      if (getSplatFloat(operand)) {
        bound = operand;
        clamped = otherOperand(clamp, operand);
      }
    if (!bound)
      return diagnosis.fail("the scores are clamped by a non-constant value");
    if (!isMaskedValue(toDouble(*getSplatFloat(bound))))
      return diagnosis.fail("the scores are clamped below by " +
                            describeConstant(bound) +
                            ", not by -inf or a value at most -1e4");
    if (clamp.getType() != clamped.getType())
      return diagnosis.fail("the clamp broadcasts the scores to a larger "
                            "shape");
    match.interior.push_back(clamp);
    scores = clamped;
  }

  if (auto add = scores.getDefiningOp<AddOp>()) {
    DenseElementsAttr mask;
    Value unmasked, parameter;
    for (Value operand : add->getOperands()) {
      if (DenseElementsAttr attr = getDenseConstant(operand);
          attr && isa<FloatType>(attr.getElementType())) {
        mask = attr;
        unmasked = otherOperand(add, operand);
      } else if (!parameterName(operand).empty()) {
        parameter = operand;
      }
    }
    if (!mask)
      return failNotConstant("the mask added to the scores",
                             parameter ? parameter : add.getRhs(), diagnosis);
    if (add.getType() != unmasked.getType())
      return diagnosis.fail("the mask broadcasts the scores to a larger shape");
    if (failed(takeMaskKind(cache.get(mask, false, false), mask.getType(),
                            block, "the additive mask", match, diagnosis)))
      return failure();
    match.interior.push_back(add);
    return unmasked;
  }
  auto select = scores.getDefiningOp<SelectOp>();
  if (!select)
    return scores;
  DenseElementsAttr condition = getDenseConstant(select.getCondition());
  if (!condition)
    return failNotConstant("the select's condition", select.getCondition(),
                           diagnosis);
  auto maskedValue = [](Value v) {
    std::optional<APFloat> value = getSplatFloat(v);
    return value && isMaskedValue(toDouble(*value));
  };
  bool keepWhereTrue;
  if (maskedValue(select.getFalseValue())) {
    keepWhereTrue = true;
    scores = select.getTrueValue();
  } else if (maskedValue(select.getTrueValue())) {
    keepWhereTrue = false;
    scores = select.getFalseValue();
  } else {
    return diagnosis.fail("neither value of the select is a constant -inf "
                          "or at most -1e4");
  }
  if (select.getType() != scores.getType())
    return diagnosis.fail("the select broadcasts the scores to a larger "
                          "shape");
  if (failed(takeMaskKind(cache.get(condition, true, keepWhereTrue),
                          condition.getType(), block, "the select's condition",
                          match, diagnosis)))
    return failure();
  match.interior.push_back(select);
  return scores;
}

/// The score product under the unmasked `scores`: scalar factors, the zero
/// `baddbmm(zeros, Q, Kt, alpha = s)` adds (GPT-NeoX), and, where the
/// product was taken over [B * H, Sq, Sk], the reshape that splits batch
/// and heads again (returned in `splitHeads`). x + 0 is x, so the zero
/// changes nothing. Sets the queries and the keys (or their source).
static LogicalResult matchScoreProduct(Value scores, AttentionMatch &match,
                                       Diagnosis &diagnosis) {
  ReshapeOp splitHeads;
  for (int i = 0; i < 6; ++i) {
    Value c;
    Operation *op;
    if (Value inner = matchScaled(scores, c, /*allowDivide=*/true, op);
        inner && inner.getType() == scores.getType()) {
      double factor = toDouble(*getSplatFloat(c));
      match.scale *= isa<DivOp>(op) ? 1.0 / factor : factor;
      match.interior.push_back(op);
      scores = inner;
      continue;
    }
    if (auto add = scores.getDefiningOp<AddOp>()) {
      Value inner;
      for (Value operand : add->getOperands())
        if (isZeroConstant(operand))
          inner = otherOperand(add, operand);
      if (!inner || inner.getType() != scores.getType())
        break;
      match.interior.push_back(add);
      scores = inner;
      continue;
    }
    if (auto reshape = scores.getDefiningOp<ReshapeOp>();
        reshape && !splitHeads) {
      ArrayRef<int64_t> from = reshape.getInput().getType().getShape();
      ArrayRef<int64_t> to = reshape.getType().getShape();
      if (from.size() != 3 || from[0] != to[0] * to[1] ||
          from.drop_front() != to.drop_front(2))
        return diagnosis.fail("the scores are reshaped from " +
                              formatShape(from) +
                              ", not from [B * H, Sq, Sk] = " +
                              formatShape({to[0] * to[1], to[2], to[3]}));
      splitHeads = reshape;
      match.interior.push_back(reshape);
      scores = reshape.getInput();
      continue;
    }
    break;
  }
  auto product = scores.getDefiningOp<BatchMatmulOp>();
  if (!product)
    return diagnosis.fail("the scores are not a batch_matmul of queries and "
                          "keys scaled by a constant");
  if (product.getTransposeA())
    return diagnosis.fail("the score product transposes the queries");
  match.interior.push_back(product);

  // Scalar factors on the queries or the (transposed) keys.
  auto peel = [&](Value v) {
    Value c;
    Operation *op;
    Value inner = matchScaled(v, c, /*allowDivide=*/true, op);
    // A shared scaled value stays as it is, scale and all.
    if (!inner || inner.getType() != v.getType() || !v.hasOneUse())
      return v;
    double factor = toDouble(*getSplatFloat(c));
    match.scale *= isa<DivOp>(op) ? 1.0 / factor : factor;
    match.interior.push_back(op);
    return inner;
  };
  match.query = peel(product.getLhs());
  Value keys = peel(product.getRhs());
  bool transposeB = product.getTransposeB();
  if (splitHeads) {
    // A product over [B * H, S, D]: queries and keys are [B, H, S, D]
    // values reshaped (the keys before or after their transpose).
    ArrayRef<int64_t> heads = splitHeads.getType().getShape().take_front(2);
    if (auto transpose = keys.getDefiningOp<TransposeOp>();
        transpose && !transposeB &&
        transpose.getPermutation() == ArrayRef<int64_t>{0, 2, 1}) {
      keys = transpose.getInput();
      transposeB = true;
    }
    match.query = mergedHeadsOf(match.query, heads);
    keys = mergedHeadsOf(keys, heads);
    if (!match.query || !keys)
      return diagnosis.fail(
          "the score product is over [B * H, S, D], but its operands are not "
          "[B, H, S, D] queries and keys reshaped with B, H = " +
          formatShape(heads));
  }
  if (transposeB) {
    match.key = keys;
  } else if (auto transpose = keys.getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> p = transpose.getPermutation();
    SmallVector<int64_t, 4> composed = {p[0], p[1], p[3], p[2]};
    if (composed == ArrayRef<int64_t>{0, 1, 2, 3}) {
      match.key = transpose.getInput();
    } else {
      match.keySource = transpose.getInput();
      match.keyPermutation = composed;
    }
  } else {
    match.keySource = keys;
    match.keyPermutation = {0, 1, 3, 2};
  }
  return success();
}

/// `softmax(mask(scale(Q Kt))) V` rooted at the product with V, the
/// probabilities under torch's NaN guard or not.
static LogicalResult matchAttentionChain(BatchMatmulOp root, MaskCache &cache,
                                         AttentionMatch &match,
                                         Diagnosis &diagnosis) {
  FailureOr<Value> scores = matchProbabilities(root, match, diagnosis);
  if (failed(scores))
    return failure();
  // A causal or sliding-window mask must cover the whole [Sq, Sk] block.
  ArrayRef<int64_t> block = tensorType(*scores).getShape().take_back(2);
  scores = matchMask(*scores, block, cache, match, diagnosis);
  if (failed(scores) ||
      failed(matchScoreProduct(*scores, match, diagnosis)))
    return failure();
  match.value = root.getRhs();
  if (!match.mergedHeads.empty()) {
    match.value = mergedHeadsOf(root.getRhs(), match.mergedHeads);
    if (!match.value)
      return diagnosis.fail(
          "the probabilities are over [B * H, Sq, Sk], but the values are "
          "not [B, H, Sk, D] values reshaped with B, H = " +
          formatShape(match.mergedHeads));
  }
  // Grouped-query attention: keys and values whose heads were repeated to
  // the query heads are used as they were.
  if (!match.keySource) {
    Value key = unrepeatHeads(match.key), value = unrepeatHeads(match.value);
    if (key && value &&
        tensorType(key).getDimSize(1) == tensorType(value).getDimSize(1)) {
      match.key = key;
      match.value = value;
    }
  }
  return checkContained(root, match.interior, diagnosis);
}

/// matchAttentionChain, saying where a NaN guard stays. A raised attention
/// absorbs the guard: its mask (none, causal or a window) keeps at least
/// one key in every row, so the softmax of finite scores is never NaN and
/// the guard never fires.
static FailureOr<AttentionMatch>
matchAttention(BatchMatmulOp root, MaskCache &cache, Diagnosis &diagnosis) {
  AttentionMatch match;
  if (succeeded(matchAttentionChain(root, cache, match, diagnosis)))
    return match;
  if (match.guard && !diagnosis.reason.empty() &&
      !StringRef(diagnosis.reason).ends_with("stays"))
    diagnosis.reason += "; the NaN guard after the softmax stays";
  return failure();
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {
struct RaiseGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    FailureOr<GeluMatch> match = matchGelu(root, diagnosis);
    if (failed(match))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    auto gelu =
        GeluOp::create(rewriter, fusedLoc(root, match->interior),
                       root.getType(), match->input, match->approximation);
    replaceRoot(rewriter, root, gelu);
    return success();
  }
};

struct RaiseSilu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    FailureOr<SigmoidOp> sigmoid = matchSilu(root, diagnosis);
    if (failed(sigmoid))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    auto silu = SiluOp::create(rewriter, fusedLoc(root, {*sigmoid}),
                               root.getType(), sigmoid->getInput());
    replaceRoot(rewriter, root, silu);
    return success();
  }
};

struct RaiseNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    FailureOr<NormMatch> match = matchNorm(root, diagnosis);
    if (failed(match))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    Location loc = fusedLoc(root, match->interior);
    Operation *norm;
    if (match->layerNorm)
      norm = LayerNormOp::create(rewriter, loc, root.getType(), match->input,
                                 match->scale, Value(), match->epsilon);
    else
      norm = RmsNormOp::create(rewriter, loc, root.getType(), match->input,
                               match->scale, match->epsilon);
    replaceRoot(rewriter, root, norm);
    return success();
  }
};

struct RaiseLayerNormBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    auto match = matchLayerNormBias(root, diagnosis);
    if (failed(match))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    auto [norm, bias] = *match;
    auto raised = LayerNormOp::create(
        rewriter, fusedLoc(root, {norm}), root.getType(), norm.getInput(),
        norm.getScale(), bias, norm.getEpsilonAttr());
    replaceRoot(rewriter, root, raised);
    return success();
  }
};

struct RaiseRotaryEmbedding : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    FailureOr<RotaryMatch> match = matchRotary(root, diagnosis);
    if (failed(match))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    Location loc = fusedLoc(root, match->interior);
    auto inputType = tensorType(match->input);
    auto tableType = RankedTensorType::get(inputType.getShape().take_back(2),
                                           inputType.getElementType());
    Attribute layer = root->getAttr(PartDialect::getLayerAttrName());
    // A table of shape [1, ..., 1, S, D] becomes [S, D]: a constant is
    // rewritten, anything else reshaped.
    auto asTable = [&](Value table) -> Value {
      if (table.getType() == tableType)
        return table;
      Operation *op;
      if (DenseElementsAttr attr = getDenseConstant(table))
        op = ConstantOp::create(rewriter, loc, tableType,
                                attr.reshape(tableType));
      else
        op = ReshapeOp::create(rewriter, loc, tableType, table);
      if (layer)
        op->setAttr(PartDialect::getLayerAttrName(), layer);
      return op->getResult(0);
    };
    Value cos = asTable(match->cos);
    Value sin = asTable(match->sin);
    auto rotary = RotaryEmbeddingOp::create(rewriter, loc, root.getType(),
                                            match->input, cos, sin);
    replaceRoot(rewriter, root, rotary);
    return success();
  }
};

struct RaiseAttention : OpRewritePattern<BatchMatmulOp> {
  RaiseAttention(MLIRContext *context, MaskCache &cache, bool report)
      : OpRewritePattern(context), cache(cache), report(report) {}

  LogicalResult matchAndRewrite(BatchMatmulOp root,
                                PatternRewriter &rewriter) const override {
    Diagnosis diagnosis;
    FailureOr<AttentionMatch> match = matchAttention(root, cache, diagnosis);
    if (failed(match))
      return rewriter.notifyMatchFailure(root, diagnosis.reason);
    if (report && match->guard)
      root->emitRemark()
          << "raised to part.attention; the NaN guard after the softmax is "
             "a no-op and is dropped: the "
          << (match->window ? "sliding-window"
                            : (match->causal ? "causal" : "absent"))
          << " mask keeps a key in every row, so the softmax of finite "
             "scores is never NaN";
    Location loc = fusedLoc(root, match->interior);
    Value key = match->key;
    if (match->keySource) {
      auto sourceType = tensorType(match->keySource);
      SmallVector<int64_t, 4> shape;
      for (int64_t p : match->keyPermutation)
        shape.push_back(sourceType.getDimSize(p));
      auto transpose = TransposeOp::create(
          rewriter, loc,
          RankedTensorType::get(shape, sourceType.getElementType()),
          match->keySource, match->keyPermutation);
      if (Attribute layer = root->getAttr(PartDialect::getLayerAttrName()))
        transpose->setAttr(PartDialect::getLayerAttrName(), layer);
      key = transpose;
    }
    int64_t headDim = tensorType(match->query).getShape().back();
    double defaultScale = 1.0 / std::sqrt(static_cast<double>(headDim));
    FloatAttr scale;
    if (std::fabs(match->scale - defaultScale) > 1e-6 * defaultScale)
      scale = rewriter.getF32FloatAttr(static_cast<float>(match->scale));
    IntegerAttr window;
    if (match->window)
      window = rewriter.getI64IntegerAttr(match->window);
    if (match->mergedHeads.empty()) {
      auto attention =
          AttentionOp::create(rewriter, loc, root.getType(), match->query, key,
                              match->value, Value(), Value(), match->causal,
                              scale, window);
      replaceRoot(rewriter, root, attention);
      return success();
    }
    // Heads folded into the batch: the attention is [B, H, Sq, D], the
    // product [B * H, Sq, D]. Where the product is only split into heads
    // again, the attention replaces that split; otherwise it is reshaped.
    ArrayRef<int64_t> merged = root.getType().getShape();
    auto type = RankedTensorType::get(
        {match->mergedHeads[0], match->mergedHeads[1], merged[1], merged[2]},
        root.getType().getElementType());
    auto attention =
        AttentionOp::create(rewriter, loc, type, match->query, key,
                            match->value, Value(), Value(), match->causal,
                            scale, window);
    Attribute layer = root->getAttr(PartDialect::getLayerAttrName());
    if (layer)
      attention->setAttr(PartDialect::getLayerAttrName(), layer);
    auto split = root->hasOneUse() ? dyn_cast<ReshapeOp>(*root->user_begin())
                                   : ReshapeOp();
    if (split && split.getType() == type) {
      replaceRoot(rewriter, split, attention);
      rewriter.eraseOp(root);
      return success();
    }
    auto reshape = ReshapeOp::create(rewriter, loc, root.getType(), attention);
    replaceRoot(rewriter, root, reshape);
    return success();
  }

  MaskCache &cache;
  bool report;
};
} // namespace

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct PartRaisePass
    : public partition::part::impl::PartRaisePassBase<PartRaisePass> {
  using PartRaisePassBase::PartRaisePassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    MaskCache cache;
    RewritePatternSet patterns(context);
    patterns.add<RaiseGelu, RaiseSilu, RaiseNorm, RaiseLayerNormBias,
                 RaiseRotaryEmbedding>(context);
    patterns.add<RaiseAttention>(context, cache, report);
    partition::part::detail::populateRaiseExpertPatterns(patterns);
    // Keep constants where they are: raising changes nothing else. No
    // pattern feeds another in a cycle, so the rewrite converges in two
    // sweeps; were it cut short, the program would still be equivalent.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      LLVM_DEBUG(llvm::dbgs() << "part-raise: stopped before converging\n");
    // Once SiLU is raised: the layers of each expert MLP between one
    // dispatch and one combine.
    partition::part::detail::fuseExpertChains(getOperation());
    shareRotaryTables();
    if (report)
      reportNearMisses(cache);
  }

  /// The queries and keys of a layer share their cos and sin tables, but
  /// each raised rotary embedding made its own [S, D] copy: the first equal
  /// constant (value and attributes) earlier in the block serves them all.
  void shareRotaryTables() {
    llvm::DenseMap<std::tuple<Block *, Attribute, Attribute>, ConstantOp> first;
    llvm::SetVector<Operation *> replaced;
    getOperation().walk([&](RotaryEmbeddingOp rotary) {
      for (OpOperand &operand : llvm::drop_begin(rotary->getOpOperands())) {
        auto constant = operand.get().getDefiningOp<ConstantOp>();
        if (!constant)
          continue;
        auto key = std::make_tuple(
            constant->getBlock(), constant.getValue(),
            Attribute(constant->getDiscardableAttrDictionary()));
        auto [it, inserted] = first.try_emplace(key, constant);
        if (inserted || it->second == constant ||
            !it->second->isBeforeInBlock(constant))
          continue;
        operand.set(it->second);
        replaced.insert(constant);
      }
    });
    for (Operation *constant : replaced)
      if (constant->use_empty())
        constant->erase();
  }

  /// Runs the matchers on what is left and says why each candidate was not
  /// raised.
  void reportNearMisses(MaskCache &cache) {
    getOperation().walk([&](Operation *op) {
      if (auto mul = dyn_cast<MulOp>(op)) {
        reportProduct(mul, "part.gelu", matchGelu);
        reportProduct(mul, "part.silu", matchSilu);
        reportProduct(mul, "part.layer_norm or part.rms_norm", matchNorm);
      } else if (auto add = dyn_cast<AddOp>(op)) {
        Diagnosis diagnosis;
        if (failed(matchLayerNormBias(add, diagnosis)))
          emitNearMiss(op, "part.layer_norm with a bias", diagnosis);
        Diagnosis rotary;
        if (failed(matchRotary(add, rotary)))
          emitNearMiss(op, "part.rotary_embedding", rotary);
      } else if (auto product = dyn_cast<BatchMatmulOp>(op)) {
        Diagnosis diagnosis;
        if (failed(matchAttention(product, cache, diagnosis)))
          emitNearMiss(op, "part.attention", diagnosis);
        std::string experts =
            partition::part::detail::whyNotExpertProduct(product);
        if (!experts.empty())
          op->emitRemark() << "not raised to part.expert_dispatch: " << experts;
      }
    });
  }

  static void emitNearMiss(Operation *op, StringRef target,
                           const Diagnosis &diagnosis) {
    if (diagnosis.candidate && !diagnosis.reason.empty())
      op->emitRemark() << "not raised to " << target << ": "
                       << diagnosis.reason;
  }

  /// Reports a product that `matcher` calls a candidate but did not match,
  /// unless it is a factor of a larger candidate product, which says why.
  template <typename Match>
  static void reportProduct(MulOp mul, StringRef target,
                            FailureOr<Match> (*matcher)(MulOp, Diagnosis &)) {
    Diagnosis diagnosis;
    if (succeeded(matcher(mul, diagnosis)) || !diagnosis.candidate)
      return;
    if (soleUserIsMul(mul)) {
      Diagnosis outer;
      (void)matcher(cast<MulOp>(*mul->user_begin()), outer);
      if (outer.candidate)
        return;
    }
    emitNearMiss(mul, target, diagnosis);
  }
};
} // namespace
