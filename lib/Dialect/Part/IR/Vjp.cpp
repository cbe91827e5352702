//===- Vjp.cpp - vector-Jacobian products of the part model ops -----------===//
//
// buildVjp() of every model op (VjpOpInterface): given the cotangents of the
// op's results, the cotangents of its operands, written with `part` ops only
// so that the backward program is partitioned by the same sharding rules as
// the forward one. Composite ops (attention, layer_norm, rms_norm,
// softmax_cross_entropy) recompute what they need from their operands; no op
// needs a backward kernel of its own.
//
// Conventions, where the derivative is not defined everywhere:
// - max, min and reduce_max split the cotangent evenly among tied elements
//   (as PyTorch's torch.maximum / torch.minimum and amax do): for a tie in
//   max(a, b) each side gets half, and for k equal maxima in a reduce_max
//   each gets 1 / k;
// - relu's derivative at 0 is 0 (PyTorch's convention);
// - pow's derivative with respect to the exponent takes log(0) as 0, so
//   that 0^b (b > 0) contributes 0 rather than NaN;
// - integer operands (indices, labels, select conditions, integer
//   arithmetic) and ops with integer results (compare, casts to integers)
//   carry no cotangent.
//
// Every rule is checked against central finite differences in float64 numpy
// by test/Dialect/Part/Autodiff/finite-differences.mlir.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace partition::part;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isFloat(Value v) { return isa<FloatType>(typeOf(v).getElementType()); }

/// Builds the `part` ops of one rule at one location. Rules never build
/// two ops in the arguments of one call (C++ leaves their order open), so
/// the backward program comes out the same whatever the compiler.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// A 0-d constant of the float element type of `like`.
  Value scalar(Value like, double value) {
    Type elt = typeOf(like).getElementType();
    auto type = RankedTensorType::get({}, elt);
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, FloatAttr::get(elt, value)));
  }
  /// A 1-d constant [start, start + 1, ..., start + n) of integer element
  /// type `elt`.
  Value iota(int64_t n, Type elt, int64_t start = 0) {
    SmallVector<APInt> values;
    unsigned bits = elt.getIntOrFloatBitWidth();
    for (int64_t i = 0; i < n; ++i)
      values.push_back(APInt(bits, start + i, /*isSigned=*/true));
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({n}, elt), values));
  }

  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value mul(Value x, double c) { return mul(x, scalar(x, c)); }
  Value add(Value x, double c) { return add(x, scalar(x, c)); }
  /// c - x.
  Value rsub(double c, Value x) { return sub(scalar(x, c), x); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }
  Value log(Value x) { return LogOp::create(b, loc, x); }
  Value tanh(Value x) { return TanhOp::create(b, loc, x); }
  Value erf(Value x) { return ErfOp::create(b, loc, x); }
  Value cos(Value x) { return CosOp::create(b, loc, x); }
  Value sin(Value x) { return SinOp::create(b, loc, x); }
  Value rsqrt(Value x) { return RsqrtOp::create(b, loc, x); }
  Value sigmoid(Value x) { return SigmoidOp::create(b, loc, x); }

  /// lhs <direction> rhs as i32 0 / 1.
  Value compare(ComparisonDirection direction, Value lhs, Value rhs) {
    return CompareOp::create(b, loc, direction, lhs, rhs);
  }
  /// An i32 0 / 1 mask as floats of `like`'s element type.
  Value toFloat(Value mask, Value like) {
    return CastOp::create(
        b, loc, typeOf(mask).clone(typeOf(like).getElementType()), mask);
  }
  Value select(Value condition, Value onTrue, Value onFalse) {
    return SelectOp::create(b, loc, condition, onTrue, onFalse);
  }

  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (typeOf(v).getShape() == shape)
      return v;
    return ReshapeOp::create(b, loc, typeOf(v).clone(shape), v);
  }
  Value broadcast(Value v, ArrayRef<int64_t> shape) {
    if (typeOf(v).getShape() == shape)
      return v;
    return BroadcastOp::create(b, loc, typeOf(v).clone(shape), v);
  }
  Value transpose(Value v, ArrayRef<int64_t> permutation) {
    return TransposeOp::create(b, loc, v, permutation);
  }
  /// Swaps the last two dimensions.
  Value swapLast(Value v) {
    int64_t rank = typeOf(v).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    return transpose(v, perm);
  }
  Value sum(Value v, ArrayRef<int64_t> dims, bool keepDims) {
    return ReduceSumOp::create(b, loc, v, dims, keepDims);
  }
  Value mean(Value v, ArrayRef<int64_t> dims, bool keepDims) {
    return ReduceMeanOp::create(b, loc, v, dims, keepDims);
  }
  /// Sum and mean over the last dimension, kept with size 1.
  Value sumLast(Value v) { return sum(v, {typeOf(v).getRank() - 1}, true); }
  Value meanLast(Value v) { return mean(v, {typeOf(v).getRank() - 1}, true); }

  Value matmul(Value lhs, Value rhs, bool ta, bool tb) {
    return MatmulOp::create(b, loc, lhs, rhs, ta, tb);
  }
  Value batchMatmul(Value lhs, Value rhs, bool ta, bool tb) {
    return BatchMatmulOp::create(b, loc, lhs, rhs, ta, tb);
  }
  Value slice(Value v, RankedTensorType type, ArrayRef<int64_t> offsets,
              DenseI64ArrayAttr strides = {}) {
    return SliceOp::create(b, loc, type, v, b.getDenseI64ArrayAttr(offsets),
                           strides);
  }
  Value pad(Value v, RankedTensorType type, ArrayRef<int64_t> offsets,
            DenseI64ArrayAttr strides = {}) {
    return PadOp::create(b, loc, type, v, b.getDenseI64ArrayAttr(offsets),
                         strides);
  }

  /// Sums a cotangent of a broadcast shape back to `target`'s shape: over
  /// the leading dimensions `target` lacks and the dimensions where it has
  /// size 1 (numpy broadcasting in reverse).
  Value sumTo(Value g, RankedTensorType target) {
    ArrayRef<int64_t> from = typeOf(g).getShape(), to = target.getShape();
    int64_t lead = from.size() - to.size();
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < static_cast<int64_t>(from.size()); ++d)
      if (from[d] != (d < lead ? 1 : to[d - lead]))
        dims.push_back(d);
    if (!dims.empty())
      g = sum(g, dims, /*keepDims=*/false);
    return reshape(g, to);
  }

  OpBuilder &b;
  Location loc;
};

/// The cotangents of an op none of whose operands gets one.
SmallVector<Value> none(Operation *op) {
  return SmallVector<Value>(op->getNumOperands(), Value());
}

/// The shape of `input` with `dims` kept as size 1.
SmallVector<int64_t> keptShape(Value input, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape(typeOf(input).getShape());
  for (int64_t d : dims)
    shape[d] = 1;
  return shape;
}

} // namespace

//===----------------------------------------------------------------------===//
// Constants, casts, sharding constraints
//===----------------------------------------------------------------------===//

SmallVector<Value> ConstantOp::buildVjp(OpBuilder &, ArrayRef<Value>) {
  return {};
}

SmallVector<Value> CastOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // Float to float: the cotangent converted back. Through an integer, the
  // value is piecewise constant: no cotangent.
  if (!cot[0] || !isFloat(getInput()) || !isFloat(getResult()))
    return none(*this);
  return {CastOp::create(b, getLoc(), getInput().getType(), cot[0])};
}

SmallVector<Value> ShardingConstraintOp::buildVjp(OpBuilder &b,
                                                  ArrayRef<Value> cot) {
  // The cotangent is pinned like the value (JAX's transpose of
  // with_sharding_constraint), so the backward pass keeps the layout the
  // user asked for.
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  return {ShardingConstraintOp::create(b, getLoc(), cot[0], getSharding())};
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops, compare, select
//===----------------------------------------------------------------------===//

SmallVector<Value> AddOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  return {e.sumTo(cot[0], typeOf(getLhs())), e.sumTo(cot[0], typeOf(getRhs()))};
}

SmallVector<Value> SubOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  return {e.sumTo(cot[0], typeOf(getLhs())),
          e.neg(e.sumTo(cot[0], typeOf(getRhs())))};
}

SmallVector<Value> MulOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  return {e.sumTo(e.mul(cot[0], getRhs()), typeOf(getLhs())),
          e.sumTo(e.mul(cot[0], getLhs()), typeOf(getRhs()))};
}

SmallVector<Value> DivOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // y = a / b: da = dy / b, db = -dy * a / b^2 = -dy * y / b.
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  Value dividend = e.div(cot[0], getRhs());
  return {e.sumTo(dividend, typeOf(getLhs())),
          e.neg(e.sumTo(e.mul(dividend, getResult()), typeOf(getRhs())))};
}

/// max (or min) of lhs and rhs: the cotangent goes to the operand that was
/// taken, half to each on a tie.
static SmallVector<Value> extremumVjp(Operation *op, OpBuilder &b, Value dy,
                                      bool isMax) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (!dy || !isFloat(lhs))
    return none(op);
  Emitter e(b, op->getLoc());
  auto wins = isMax ? ComparisonDirection::GT : ComparisonDirection::LT;
  auto loses = isMax ? ComparisonDirection::LT : ComparisonDirection::GT;
  Value half =
      e.mul(e.toFloat(e.compare(ComparisonDirection::EQ, lhs, rhs), dy), 0.5);
  Value toLhs = e.add(e.toFloat(e.compare(wins, lhs, rhs), dy), half);
  Value toRhs = e.add(e.toFloat(e.compare(loses, lhs, rhs), dy), half);
  return {e.sumTo(e.mul(dy, toLhs), typeOf(lhs)),
          e.sumTo(e.mul(dy, toRhs), typeOf(rhs))};
}

SmallVector<Value> MaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  return extremumVjp(*this, b, cot[0], /*isMax=*/true);
}

SmallVector<Value> MinOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  return extremumVjp(*this, b, cot[0], /*isMax=*/false);
}

SmallVector<Value> PowOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // y = a^b: da = dy * b * a^(b - 1); db = dy * y * log(a), with log(0)
  // taken as 0 (0^b is flat in b for b > 0).
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  Value a = getLhs(), x = getRhs(), dy = cot[0];
  Value lowered = PowOp::create(b, getLoc(), a, e.add(x, -1.0));
  Value da = e.mul(e.mul(dy, x), lowered);
  Value isZero = e.compare(ComparisonDirection::EQ, a, e.scalar(a, 0.0));
  Value safe = e.select(isZero, e.scalar(a, 1.0), a);
  Value db = e.mul(e.mul(dy, getResult()), e.log(safe));
  return {e.sumTo(da, typeOf(a)), e.sumTo(db, typeOf(x))};
}

SmallVector<Value> CompareOp::buildVjp(OpBuilder &, ArrayRef<Value>) {
  // Piecewise constant: no cotangent for either operand.
  return none(*this);
}

SmallVector<Value> SelectOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  Value zero = e.scalar(cot[0], 0.0);
  return {
      Value(),
      e.sumTo(e.select(getCondition(), cot[0], zero), typeOf(getTrueValue())),
      e.sumTo(e.select(getCondition(), zero, cot[0]), typeOf(getFalseValue()))};
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

/// The rule of a unary op whose derivative is `derivative(e, x, y)`:
/// dx = dy * derivative.
template <typename Derivative>
static SmallVector<Value> unaryVjp(Operation *op, OpBuilder &b, Value dy,
                                   Derivative derivative) {
  if (!dy)
    return none(op);
  Emitter e(b, op->getLoc());
  return {e.mul(dy, derivative(e, op->getOperand(0), op->getResult(0)))};
}

SmallVector<Value> NegOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  return {Emitter(b, getLoc()).neg(cot[0])};
}

SmallVector<Value> ExpOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  return unaryVjp(*this, b, cot[0],
                  [](Emitter &, Value, Value y) { return y; });
}

SmallVector<Value> LogOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  return {Emitter(b, getLoc()).div(cot[0], getInput())};
}

SmallVector<Value> SqrtOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d sqrt(x) = 1 / (2 sqrt(x)).
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  return {e.div(e.mul(cot[0], 0.5), getResult())};
}

SmallVector<Value> RsqrtOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value, Value y) {
    return e.mul(e.mul(y, e.mul(y, y)), -0.5);
  });
}

SmallVector<Value> TanhOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value, Value y) {
    return e.rsub(1.0, e.mul(y, y));
  });
}

SmallVector<Value> ErfOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d erf(x) = 2 / sqrt(pi) * exp(-x^2).
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value x, Value) {
    return e.mul(e.exp(e.neg(e.mul(x, x))), 2.0 / std::sqrt(M_PI));
  });
}

SmallVector<Value> CosOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d cos(x) = -sin(x).
  return unaryVjp(*this, b, cot[0],
                  [](Emitter &e, Value x, Value) { return e.neg(e.sin(x)); });
}

SmallVector<Value> SinOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d sin(x) = cos(x).
  return unaryVjp(*this, b, cot[0],
                  [](Emitter &e, Value x, Value) { return e.cos(x); });
}

SmallVector<Value> SigmoidOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value, Value y) {
    return e.mul(y, e.rsub(1.0, y));
  });
}

SmallVector<Value> ReluOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // The cotangent where x > 0, else 0 (also at x = 0).
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  Value zero = e.scalar(x, 0.0);
  return {e.select(e.compare(ComparisonDirection::GT, x, zero), cot[0], zero)};
}

SmallVector<Value> SiluOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // d x s(x) = s + x s (1 - s) = s (1 + x (1 - s)).
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value x, Value) {
    Value s = e.sigmoid(x);
    return e.mul(s, e.add(e.mul(x, e.rsub(1.0, s)), 1.0));
  });
}

SmallVector<Value> GeluOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (getApproximation() == GeluApproximation::Erf) {
    // d 0.5 x (1 + erf(x / sqrt 2)) = 0.5 (1 + erf(x / sqrt 2))
    //                                 + x exp(-x^2 / 2) / sqrt(2 pi).
    return unaryVjp(*this, b, cot[0], [](Emitter &e, Value x, Value) {
      Value cdf = e.mul(e.add(e.erf(e.mul(x, M_SQRT1_2)), 1.0), 0.5);
      Value pdf =
          e.mul(e.exp(e.mul(e.mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
      return e.add(cdf, e.mul(x, pdf));
    });
  }
  // u = k (x + c x^3), t = tanh(u), y = 0.5 x (1 + t):
  // dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
  return unaryVjp(*this, b, cot[0], [](Emitter &e, Value x, Value) {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Value x2 = e.mul(x, x);
    Value t = e.tanh(e.mul(e.add(x, e.mul(e.mul(x2, x), c)), k));
    Value left = e.mul(e.add(t, 1.0), 0.5);
    Value du = e.mul(e.add(e.mul(x2, 3.0 * c), 1.0), 0.5 * k);
    return e.add(left, e.mul(e.mul(x, e.rsub(1.0, e.mul(t, t))), du));
  });
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

SmallVector<Value> MatmulOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // With A = op(lhs) [..., M, K] and B = op(rhs) [K, N]: dA = dy B^T and
  // dB = sum over the leading dimensions of A^T dy, each written so that the
  // transposes fold into the products' flags.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  bool ta = getTransposeA(), tb = getTransposeB();
  Value lhs = getLhs(), rhs = getRhs();
  int64_t rank = typeOf(lhs).getRank();
  Value dlhs;
  if (!ta)
    dlhs = e.matmul(dy, rhs, false, !tb);
  else if (rank == 2)
    dlhs = e.matmul(rhs, dy, tb, true); // dA^T = B dy^T
  else
    dlhs = e.swapLast(e.matmul(dy, rhs, false, !tb));
  // dB: fold the leading dimensions of A and dy into the rows.
  Value a = lhs, g = dy;
  bool aTransposed = ta;
  if (rank > 2) {
    if (ta)
      a = e.swapLast(a);
    aTransposed = false;
    ArrayRef<int64_t> shape = typeOf(a).getShape();
    // The product of the leading dimensions (not elements / last: the last
    // dimension may be 0).
    int64_t rows = 1;
    for (int64_t size : shape.drop_back())
      rows *= size;
    a = e.reshape(a, {rows, shape.back()});
    g = e.reshape(g, {rows, typeOf(dy).getShape().back()});
  }
  Value drhs = tb ? e.matmul(g, a, true, aTransposed)    // dB^T = dy^T A
                  : e.matmul(a, g, !aTransposed, false); // dB = A^T dy
  return {dlhs, drhs};
}

SmallVector<Value> BatchMatmulOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // Per batch, as matmul: dA = dy B^T, dB = A^T dy, transposes folded into
  // the flags.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  bool ta = getTransposeA(), tb = getTransposeB();
  Value lhs = getLhs(), rhs = getRhs();
  Value dlhs = ta ? e.batchMatmul(rhs, dy, tb, true)    // dA^T = B dy^T
                  : e.batchMatmul(dy, rhs, false, !tb); // dA = dy B^T
  Value drhs = tb ? e.batchMatmul(dy, lhs, true, ta)    // dB^T = dy^T A
                  : e.batchMatmul(lhs, dy, !ta, false); // dB = A^T dy
  return {dlhs, drhs};
}

//===----------------------------------------------------------------------===//
// Softmax, normalisation, rotary embedding
//===----------------------------------------------------------------------===//

SmallVector<Value> SoftmaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // dx = y (dy - sum(dy y)) along dim.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value y = getResult();
  int64_t dim = getDim();
  return {e.mul(y, e.sub(dy, e.sum(e.mul(dy, y), {dim}, true)))};
}

SmallVector<Value> LayerNormOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // xhat = (x - mean) * r, r = 1 / sqrt(var + eps), y = xhat * scale + bias:
  // dscale = sum(dy xhat), dbias = sum(dy), and with g = dy * scale,
  // dx = r (g - mean(g) - xhat mean(g xhat)) over the last dimension.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  Value centered = e.sub(x, e.meanLast(x));
  Value variance = e.meanLast(e.mul(centered, centered));
  Value r = e.rsqrt(e.add(variance, getEpsilon().convertToDouble()));
  Value xhat = e.mul(centered, r);
  Value g = e.mul(dy, getScale());
  Value centeredG = e.sub(g, e.meanLast(g));
  Value dx =
      e.mul(r, e.sub(centeredG, e.mul(xhat, e.meanLast(e.mul(g, xhat)))));
  SmallVector<Value> result = {dx,
                               e.sumTo(e.mul(dy, xhat), typeOf(getScale()))};
  if (getBias())
    result.push_back(e.sumTo(dy, typeOf(getBias())));
  return result;
}

SmallVector<Value> RmsNormOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // xhat = x r, r = 1 / sqrt(mean(x^2) + eps), y = xhat * scale:
  // dscale = sum(dy xhat), and with g = dy * scale,
  // dx = r (g - xhat mean(g xhat)) over the last dimension.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  Value r =
      e.rsqrt(e.add(e.meanLast(e.mul(x, x)), getEpsilon().convertToDouble()));
  Value xhat = e.mul(x, r);
  Value g = e.mul(dy, getScale());
  Value dx = e.mul(r, e.sub(g, e.mul(xhat, e.meanLast(e.mul(g, xhat)))));
  return {dx, e.sumTo(e.mul(dy, xhat), typeOf(getScale()))};
}

SmallVector<Value> RotaryEmbeddingOp::buildVjp(OpBuilder &b,
                                               ArrayRef<Value> cot) {
  // y = x cos + R(x) sin with R(x) = [-x2, x1] (halves of the last
  // dimension). R is linear with transpose R^T(z) = [z2, -z1], so
  // dx = dy cos + R^T(dy sin); the tables get dy x and dy R(x) summed over
  // the leading dimensions.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank(), half = type.getShape().back() / 2;
  SmallVector<int64_t> halfShape(type.getShape());
  halfShape.back() = half;
  RankedTensorType halfType = type.clone(halfShape);
  SmallVector<int64_t> first(rank, 0), second(rank, 0);
  second.back() = half;
  auto halves = [&](Value v) {
    return std::make_pair(e.slice(v, halfType, first),
                          e.slice(v, halfType, second));
  };
  auto concat = [&](Value lo, Value hi) -> Value {
    return ConcatOp::create(b, getLoc(), ValueRange{lo, hi},
                            uint64_t(rank - 1));
  };
  auto [x1, x2] = halves(x);
  Value rotated = concat(e.neg(x2), x1);
  auto [z1, z2] = halves(e.mul(dy, getSin()));
  Value direct = e.mul(dy, getCos());
  Value dx = e.add(direct, concat(z2, e.neg(z1)));
  return {dx, e.sumTo(e.mul(dy, x), typeOf(getCos())),
          e.sumTo(e.mul(dy, rotated), typeOf(getSin()))};
}

//===----------------------------------------------------------------------===//
// Attention, loss
//===----------------------------------------------------------------------===//

SmallVector<Value> AttentionOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // One part.attention_grad, which recomputes the probabilities block by
  // block; its key and value gradients are per query head. Grouped-query:
  // query head h uses key/value head h / G, so each group's G heads are
  // summed back into the head they share.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value q = getQuery(), k = getKey(), v = getValue();
  auto grad = AttentionGradOp::create(
      b, getLoc(), q, k, v, dy, getQueryPositions(), getKeyPositions(),
      /*lse=*/Value(), /*delta=*/Value(), getCausal(), getScaleAttr(),
      getWindowAttr());
  int64_t heads = typeOf(q).getShape()[1], kvHeads = typeOf(k).getShape()[1];
  int64_t group = heads / kvHeads;
  // [B, H, S, D] -> [B, Hkv, S, D], summing each group.
  auto collapse = [&](Value t) {
    if (group == 1)
      return t;
    ArrayRef<int64_t> s = typeOf(t).getShape();
    Value r = e.reshape(t, {s[0], kvHeads, group, s[2], s[3]});
    return e.sum(r, {2}, /*keepDims=*/false);
  };
  SmallVector<Value> cotangents = {grad.getQueryGrad(),
                                   collapse(grad.getKeyGrad()),
                                   collapse(grad.getValueGrad())};
  cotangents.resize(getNumOperands()); // none for the positions
  return cotangents;
}

SmallVector<Value> SoftmaxCrossEntropyOp::buildVjp(OpBuilder &b,
                                                   ArrayRef<Value> cot) {
  // d loss_i / d logits_i = softmax(logits_i) - onehot(label_i), times the
  // position's cotangent: dy / N for a mean over N positions, dy for a sum,
  // dy_i without reduction.
  Value dy = cot[0];
  if (!dy)
    return none(*this);
  Emitter e(b, getLoc());
  Value logits = getLogits(), labels = getLabels();
  RankedTensorType type = typeOf(logits);
  int64_t rank = type.getRank(), classes = type.getShape().back();
  Value p = SoftmaxOp::create(b, getLoc(), logits, uint64_t(rank - 1));
  SmallVector<int64_t> column(typeOf(labels).getShape());
  column.push_back(1);
  Value iota = e.iota(classes, typeOf(labels).getElementType());
  Value hot =
      e.compare(ComparisonDirection::EQ, iota, e.reshape(labels, column));
  Value diff = e.sub(p, e.toFloat(hot, logits));
  Value scale = dy;
  switch (getReduction()) {
  case LossReduction::Mean:
    scale = e.mul(dy, 1.0 / static_cast<double>(std::max<int64_t>(
                                1, typeOf(labels).getNumElements())));
    break;
  case LossReduction::Sum:
    break;
  case LossReduction::None:
    scale = e.reshape(dy, column);
    break;
  }
  return {e.mul(diff, scale), Value()};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

SmallVector<Value> ReduceSumOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  return {e.broadcast(e.reshape(cot[0], keptShape(x, getDims())),
                      typeOf(x).getShape())};
}

SmallVector<Value> ReduceMeanOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  int64_t count = 1;
  for (int64_t d : getDims())
    count *= typeOf(x).getDimSize(d);
  Value g = e.mul(e.reshape(cot[0], keptShape(x, getDims())),
                  1.0 / static_cast<double>(std::max<int64_t>(1, count)));
  return {e.broadcast(g, typeOf(x).getShape())};
}

SmallVector<Value> ReduceMaxOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // The cotangent goes to the elements equal to the maximum, split evenly
  // among ties.
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  Value x = getInput();
  SmallVector<int64_t> kept = keptShape(x, getDims());
  Value taken = e.toFloat(
      e.compare(ComparisonDirection::EQ, x, e.reshape(getResult(), kept)), x);
  Value count = e.sum(taken, getDims(), /*keepDims=*/true);
  return {e.mul(taken, e.div(e.reshape(cot[0], kept), count))};
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

SmallVector<Value> ReshapeOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  return {Emitter(b, getLoc()).reshape(cot[0], typeOf(getInput()).getShape())};
}

SmallVector<Value> TransposeOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return {Emitter(b, getLoc()).transpose(cot[0], inverse)};
}

SmallVector<Value> BroadcastOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  return {Emitter(b, getLoc()).sumTo(cot[0], typeOf(getInput()))};
}

SmallVector<Value> SliceOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  return {Emitter(b, getLoc())
              .pad(cot[0], typeOf(getInput()), getOffsets(), getStridesAttr())};
}

SmallVector<Value> PadOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getInput()))
    return none(*this);
  return {
      Emitter(b, getLoc())
          .slice(cot[0], typeOf(getInput()), getOffsets(), getStridesAttr())};
}

SmallVector<Value> ConcatOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0] || !isFloat(getResult()))
    return none(*this);
  Emitter e(b, getLoc());
  int64_t dim = getDim();
  SmallVector<int64_t> offsets(typeOf(getResult()).getRank(), 0);
  SmallVector<Value> result;
  for (Value input : getInputs()) {
    result.push_back(e.slice(cot[0], typeOf(input), offsets));
    offsets[dim] += typeOf(input).getDimSize(dim);
  }
  return result;
}

SmallVector<Value> GatherOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // Each looked-up slice's cotangent is added back at its index; repeated
  // indices accumulate.
  if (!cot[0] || !isFloat(getData()))
    return none(*this);
  return {ScatterAddOp::create(b, getLoc(), getData().getType(), cot[0],
                               getIndices(), getAxis()),
          Value()};
}

SmallVector<Value> ScatterAddOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  return {GatherOp::create(b, getLoc(), cot[0], getIndices(), getAxis()),
          Value()};
}

//===----------------------------------------------------------------------===//
// Mixture-of-experts routing
//===----------------------------------------------------------------------===//

SmallVector<Value> TopKOp::buildVjp(OpBuilder &b, ArrayRef<Value> cot) {
  // Each value's cotangent goes back to the position it was taken from:
  // compare the indices [..., K, 1] with an iota [N], select, sum over K.
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  RankedTensorType indices = typeOf(getIndices());
  SmallVector<int64_t> column(indices.getShape());
  column.push_back(1);
  Value iota = e.iota(typeOf(getInput()).getShape().back(),
                      indices.getElementType());
  Value hit = e.compare(ComparisonDirection::EQ,
                        e.reshape(getIndices(), column), iota);
  Value zero = e.scalar(cot[0], 0.0);
  Value taken = e.select(hit, e.reshape(cot[0], column), zero);
  return {e.sum(taken, {indices.getRank() - 1}, /*keepDims=*/false)};
}

SmallVector<Value> ExpertDispatchOp::buildVjp(OpBuilder &b,
                                              ArrayRef<Value> cot) {
  // The adjoint reads each slot back from the buffer; a token sent to K
  // experts sums its K slots.
  if (!cot[0])
    return none(*this);
  Emitter e(b, getLoc());
  RankedTensorType indices = typeOf(getIndices());
  RankedTensorType buffer = typeOf(getResult());
  SmallVector<int64_t> slots(indices.getShape());
  slots.push_back(buffer.getShape().back());
  Value read = ExpertCombineOp::create(b, getLoc(), typeOf(cot[0]).clone(slots),
                                       cot[0], getIndices());
  if (typeOf(getInput()).getRank() == 3)
    read = e.sum(read, {2}, /*keepDims=*/false);
  return {read, Value()};
}

SmallVector<Value> ExpertCombineOp::buildVjp(OpBuilder &b,
                                             ArrayRef<Value> cot) {
  if (!cot[0])
    return none(*this);
  return {ExpertDispatchOp::create(b, getLoc(), getInput().getType(), cot[0],
                                   getIndices()),
          Value()};
}
