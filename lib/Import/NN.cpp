//===- NN.cpp - contractions, softmax and layer normalisation -------------===//
//
// MatMul (part.matmul, or part.batch_matmul with the batch dimensions
// broadcast), Gemm (a matmul with transpose flags, scaled, plus C), Softmax
// and LayerNormalization (part.layer_norm over the normalised dimensions
// flattened, with its Mean and InvStdDev outputs when a model uses them).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

/// a @ b for matrices; x @ Wᵀ with Wᵀ an explicit Transpose (a tied output
/// head) is a matmul with transpose_b, so the weight keeps its own layout.
Value matrixProduct(Node &n, Value a, Value b) {
  auto transpose = b.getDefiningOp<part::TransposeOp>();
  if (!transpose || transpose.getPermutation().size() != 2 ||
      transpose.getPermutation()[0] != 1)
    return part::MatmulOp::create(n.builder, n.loc, a, b);
  Value r = part::MatmulOp::create(n.builder, n.loc, a, transpose.getInput(),
                                   /*transpose_a=*/false,
                                   /*transpose_b=*/true);
  if (transpose->use_empty())
    transpose->erase();
  return r;
}

/// Batched a @ b: the batch dimensions broadcast against each other.
FailureOr<Value> batchProduct(Node &n, Value a, Value b) {
  Shape sa = shapeOf(a), sb = shapeOf(b);
  Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  std::optional<Shape> batch = broadcastShapes(batchA, batchB);
  if (!batch)
    return n.error() << "batch dimensions " << formatShape(batchA) << " and "
                     << formatShape(batchB) << " do not broadcast";
  Shape ta = *batch, tb = *batch;
  ta.push_back(sa[sa.size() - 2]);
  ta.push_back(sa.back());
  tb.push_back(sb[sb.size() - 2]);
  tb.push_back(sb.back());
  a = n.im.broadcastTo(a, ta, n.loc);
  b = n.im.broadcastTo(b, tb, n.loc);
  if (batch->empty())
    return part::MatmulOp::create(n.builder, n.loc, a, b).getResult();
  return part::BatchMatmulOp::create(n.builder, n.loc, a, b).getResult();
}

LogicalResult translateMatMul(Node &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b) || failed(n.requireFloat(*a)))
    return failure();
  Value av = *a, bv = *b;
  if (failed(n.unify(av, bv)))
    return failure();
  Shape sa = shapeOf(av), sb = shapeOf(bv);
  if (sa.empty() || sb.empty())
    return n.error() << "MatMul of a scalar: operand shapes " << formatShape(sa)
                     << " and " << formatShape(sb);
  // Vectors are matrices of one row (a) or one column (b), dropped after.
  bool vecA = sa.size() == 1, vecB = sb.size() == 1;
  if (vecA)
    av = n.im.reshape(av, {1, sa[0]}, n.loc), sa = {1, sa[0]};
  if (vecB)
    bv = n.im.reshape(bv, {sb[0], 1}, n.loc), sb = {sb[0], 1};
  if (sb[sb.size() - 2] != sa.back())
    return n.error() << "contracting sizes differ: " << formatShape(shapeOf(*a))
                     << " x " << formatShape(shapeOf(*b));
  Value r;
  if (sb.size() == 2) {
    r = matrixProduct(n, av, bv);
  } else {
    FailureOr<Value> product = batchProduct(n, av, bv);
    if (failed(product))
      return failure();
    r = *product;
  }
  Shape out = shapeOf(r);
  if (vecA)
    out.erase(out.end() - 2);
  if (vecB)
    out.pop_back();
  return n.done(n.im.reshape(r, out, n.loc));
}

/// `v * s` (v itself when s is 1).
Value scaled(Node &n, Value v, float s) {
  if (s == 1.0f)
    return v;
  Value c = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, s));
  (void)n.unify(v, c); // a constant follows v
  return part::MulOp::create(n.builder, n.loc, v, c);
}

LogicalResult translateGemm(Node &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b) || failed(n.requireFloat(*a)))
    return failure();
  Value av = *a, bv = *b;
  if (failed(n.unify(av, bv)))
    return failure();
  bool transA = n.intAttr("transA", 0), transB = n.intAttr("transB", 0);
  Shape sa = shapeOf(av), sb = shapeOf(bv);
  if (sa.size() != 2 || sb.size() != 2)
    return n.error() << "Gemm needs two matrices, got " << formatShape(sa)
                     << " and " << formatShape(sb);
  if ((transA ? sa[0] : sa[1]) != (transB ? sb[1] : sb[0]))
    return n.error() << "contracting sizes differ: " << formatShape(sa)
                     << (transA ? "ᵀ" : "") << " x " << formatShape(sb)
                     << (transB ? "ᵀ" : "");
  Value r = part::MatmulOp::create(n.builder, n.loc, av, bv, transA, transB);
  r = scaled(n, r, n.floatAttr("alpha", 1.0f));
  if (!n.has(2))
    return n.done(r);
  FailureOr<Value> c = n.input(2);
  if (failed(c))
    return failure();
  Value cv = scaled(n, *c, n.floatAttr("beta", 1.0f));
  if (failed(n.unify(r, cv)))
    return failure();
  std::optional<Shape> sum = broadcastShapes(shapeOf(r), shapeOf(cv));
  if (!sum || *sum != shapeOf(r))
    return n.error() << "C of shape " << formatShape(shapeOf(cv))
                     << " does not broadcast to the product's "
                     << formatShape(shapeOf(r));
  return n.done(part::AddOp::create(n.builder, n.loc, r, cv));
}

LogicalResult translateSoftmax(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x) || failed(n.requireFloat(*x)))
    return failure();
  int64_t given = n.intAttr("axis", -1);
  std::optional<int64_t> axis = normalizeAxis(given, rankOf(*x));
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << rankOf(*x);
  return n.done(part::SoftmaxOp::create(n.builder, n.loc, *x, *axis));
}

//===----------------------------------------------------------------------===//
// LayerNormalization
//===----------------------------------------------------------------------===//

/// Normalisation over dimensions [axis, rank) is part.layer_norm over the
/// last dimension of x reshaped to [outer..., inner].
struct LayerNormShapes {
  Shape in, normalized, flat;
  int64_t axis, inner;
};

/// The scale or bias reshaped to [inner], in x's element type.
FailureOr<Value> layerNormAffine(Node &n, const LayerNormShapes &s, Value x,
                                 Value v, StringRef what) {
  std::optional<Shape> b = broadcastShapes(shapeOf(v), s.normalized);
  if (numElements(shapeOf(v)) != s.inner || !b || *b != s.normalized)
    return n.error() << what << " of shape " << formatShape(shapeOf(v))
                     << " does not match the normalised dimensions "
                     << formatShape(s.normalized);
  Value r = n.im.reshape(v, {s.inner}, n.loc);
  if (failed(n.unify(x, r)))
    return failure();
  return r;
}

/// LayerNormalization's optional outputs 1 (Mean) and 2 (InvStdDev): over
/// the normalised dimensions, kept as size-1 dimensions.
void layerNormStatistics(Node &n, const LayerNormShapes &s, Value xf,
                         float epsilon) {
  const onnx::NodeProto &node = n.proto;
  bool wantMean = node.output_size() > 1 && !node.output(1).empty();
  bool wantInv = node.output_size() > 2 && !node.output(2).empty();
  if (!wantMean && !wantInv)
    return;
  int64_t rank = static_cast<int64_t>(s.in.size());
  Shape stat(s.in.begin(), s.in.begin() + s.axis);
  stat.resize(rank, 1);
  Shape flatStat(s.in.begin(), s.in.begin() + s.axis);
  flatStat.push_back(1);
  Type et = elementTypeOf(xf);
  auto statType = RankedTensorType::get(flatStat, et);
  int64_t last = static_cast<int64_t>(s.flat.size()) - 1;
  OpBuilder &b = n.builder;
  Value mean = part::ReduceMeanOp::create(b, n.loc, statType, xf,
                                          ArrayRef<int64_t>{last}, true);
  if (wantMean)
    n.im.setValue(node.output(1), n.im.reshape(mean, stat, n.loc));
  if (!wantInv)
    return;
  Value centered = part::SubOp::create(b, n.loc, xf, mean);
  Value square = part::MulOp::create(b, n.loc, centered, centered);
  Value var = part::ReduceMeanOp::create(b, n.loc, statType, square,
                                         ArrayRef<int64_t>{last}, true);
  Value eps = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, epsilon));
  (void)n.unify(var, eps); // a constant follows var
  Value inv =
      part::RsqrtOp::create(b, n.loc, part::AddOp::create(b, n.loc, var, eps));
  n.im.setValue(node.output(2), n.im.reshape(inv, stat, n.loc));
}

LogicalResult translateLayerNorm(Node &n) {
  FailureOr<Value> x = n.input(0), scale = n.input(1);
  if (failed(x) || failed(scale) || failed(n.requireFloat(*x)))
    return failure();
  LayerNormShapes s;
  s.in = shapeOf(*x);
  int64_t rank = static_cast<int64_t>(s.in.size());
  int64_t given = n.intAttr("axis", -1);
  std::optional<int64_t> axis = normalizeAxis(given, rank);
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << rank;
  s.axis = *axis;
  s.normalized = Shape(s.in.begin() + s.axis, s.in.end());
  s.inner = numElements(s.normalized);
  s.flat = Shape(s.in.begin(), s.in.begin() + s.axis);
  s.flat.push_back(s.inner);
  FailureOr<Value> sv = layerNormAffine(n, s, *x, *scale, "scale");
  if (failed(sv))
    return failure();
  Value bias;
  if (n.has(2)) {
    FailureOr<Value> b = n.input(2);
    if (failed(b))
      return failure();
    FailureOr<Value> bv = layerNormAffine(n, s, *x, *b, "bias");
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  float epsilon = n.floatAttr("epsilon", 1e-5f);
  Value xf = n.im.reshape(*x, s.flat, n.loc);
  Value y = part::LayerNormOp::create(n.builder, n.loc, xf.getType(), xf, *sv,
                                      bias, n.builder.getF32FloatAttr(epsilon));
  n.im.setValue(n.proto.output(0), n.im.reshape(y, s.in, n.loc));
  layerNormStatistics(n, s, xf, epsilon);
  return success();
}

} // namespace

void partition::import::detail::registerNNOps(OpTable &t) {
  t.onOp("MatMul", 13)
      .inputs(2, 2)
      .translate(translateMatMul)
      .note("float tensors");
  t.onOp("Gemm", 13)
      .inputs(2, 3)
      .translate(translateGemm)
      .note("float tensors");
  t.onOp("Softmax", 13).translate(translateSoftmax);
  t.onOp("LayerNormalization", 17).inputs(2, 3).translate(translateLayerNorm);
}
