//===- Reduction.cpp - reductions and scans -------------------------------===//
//
// ReduceMean, ReduceSum and ReduceMax become `part` reductions; ReduceProd
// folds on the host (exporters multiply shapes with it); CumSum folds on
// the host or, on a run-time value (positions from an attention mask),
// becomes a scan of log2(n) shifted additions, `part.slice` + `part.pad` +
// `part.add`, exact for integers.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

//===----------------------------------------------------------------------===//
// ReduceMean, ReduceSum, ReduceMax, ReduceProd
//===----------------------------------------------------------------------===//

/// The dimensions a reduction of a rank-`rank` tensor reduces, sorted;
/// empty with noop_with_empty_axes and no axes.
FailureOr<std::vector<int64_t>> reducedDims(Node &n, int64_t rank) {
  FailureOr<std::optional<std::vector<int64_t>>> axes = n.axes(1);
  if (failed(axes))
    return failure();
  std::vector<int64_t> dims;
  if (!*axes || (*axes)->empty()) {
    if (n.intAttr("noop_with_empty_axes", 0))
      return dims;
    dims.resize(rank);
    std::iota(dims.begin(), dims.end(), 0);
    return dims;
  }
  for (int64_t ax : **axes) {
    std::optional<int64_t> axis = normalizeAxis(ax, rank);
    if (!axis)
      return n.error() << "axis " << ax << " is out of range for rank " << rank;
    dims.push_back(*axis);
  }
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

LogicalResult translateReduce(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x) || failed(n.requireFloat(*x)))
    return failure();
  int64_t rank = rankOf(*x);
  FailureOr<std::vector<int64_t>> dims = reducedDims(n, rank);
  if (failed(dims))
    return failure();
  if (dims->empty())
    return n.done(*x);
  bool keep = n.intAttr("keepdims", 1);
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(*dims, i);
    if (!reduced)
      out.push_back(shapeOf(*x)[i]);
    else if (keep)
      out.push_back(1);
  }
  auto type = RankedTensorType::get(out, elementTypeOf(*x));
  const std::string &op = n.opType();
  Value r;
  if (op == "ReduceMean")
    r = part::ReduceMeanOp::create(n.builder, n.loc, type, *x, *dims, keep);
  else if (op == "ReduceSum")
    r = part::ReduceSumOp::create(n.builder, n.loc, type, *x, *dims, keep);
  else
    r = part::ReduceMaxOp::create(n.builder, n.loc, type, *x, *dims, keep);
  return n.done(r);
}

/// The product of a rank-0 or rank-1 tensor (a shape's element count).
FailureOr<bool> foldReduceProd(Node &n) {
  const HostTensor *a = n.host(0);
  if (a->shape.size() > 1)
    return n.fail("partition folds ReduceProd of rank 0 or 1 only; the "
                  "operand has shape " +
                  formatShape(a->shape));
  double p = 1;
  for (double v : a->values)
    p *= v;
  HostTensor out = HostTensor::scalar(a->elemType, p);
  if (n.intAttr("keepdims", 1))
    out.shape = {1};
  return n.folded(std::move(out));
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

/// CumSum's axis (input 1, a constant scalar), normalised for `rank`.
FailureOr<int64_t> cumSumAxis(Node &n, int64_t rank) {
  FailureOr<const HostTensor *> axis = n.requireHost(1, "axis");
  if (failed(axis))
    return failure();
  if ((*axis)->size() != 1)
    return n.error() << "axis must be a scalar; it has " << (*axis)->size()
                     << " elements";
  std::optional<int64_t> normalized = normalizeAxis((*axis)->asInt(0), rank);
  if (!normalized)
    return n.error() << "axis " << (*axis)->asInt(0)
                     << " is out of range for rank " << rank;
  return *normalized;
}

FailureOr<bool> foldCumSum(Node &n) {
  const HostTensor *a = n.host(0);
  FailureOr<int64_t> axis =
      cumSumAxis(n, static_cast<int64_t>(a->shape.size()));
  if (failed(axis))
    return failure();
  bool exclusive = n.intAttr("exclusive", 0), reverse = n.intAttr("reverse", 0);
  HostTensor out = *a;
  int64_t dim = a->shape[*axis], inner = 1;
  for (size_t d = *axis + 1; d < a->shape.size(); ++d)
    inner *= a->shape[d];
  int64_t outer = dim ? a->size() / (dim * inner) : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k) {
        int64_t j = reverse ? dim - 1 - k : k;
        int64_t at = (o * dim + j) * inner + i;
        double v = a->values[at];
        out.values[at] = roundTo(a->elemType, exclusive ? sum : sum + v);
        sum += v;
      }
    }
  return n.folded(std::move(out));
}

/// `x` moved by `by` places along `axis`, towards higher indices when
/// `forward`, with zeros shifted in: a slice and a pad.
Value shifted(Node &n, Value x, int64_t axis, int64_t by, bool forward) {
  Shape shape = shapeOf(x), offsets(shape.size(), 0);
  Shape kept = shape;
  kept[axis] -= by;
  if (!forward)
    offsets[axis] = by;
  auto keptType = RankedTensorType::get(kept, elementTypeOf(x));
  Value part = part::SliceOp::create(n.builder, n.loc, keptType, x, offsets,
                                     DenseI64ArrayAttr());
  Shape padOffsets(shape.size(), 0);
  if (forward)
    padOffsets[axis] = by;
  return part::PadOp::create(n.builder, n.loc, x.getType(), part, padOffsets,
                             DenseI64ArrayAttr());
}

/// A scan by doubling (Hillis and Steele): after the step that adds the
/// value `s` places back, each element holds the sum of the 2s elements up
/// to it; log2(n) steps give the inclusive sum. An exclusive sum is the
/// inclusive one shifted by one.
LogicalResult translateCumSum(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<int64_t> axis = cumSumAxis(n, rankOf(*x));
  if (failed(axis))
    return failure();
  bool exclusive = n.intAttr("exclusive", 0), reverse = n.intAttr("reverse", 0);
  int64_t dim = shapeOf(*x)[*axis];
  Value sum = *x;
  for (int64_t by = 1; by < dim; by *= 2)
    sum = part::AddOp::create(n.builder, n.loc, sum,
                              shifted(n, sum, *axis, by, !reverse));
  if (exclusive && dim > 1)
    return n.done(shifted(n, sum, *axis, 1, !reverse));
  if (exclusive) {
    // One element along the axis: the exclusive sum is 0.
    Value zero = n.constant(HostTensor::scalar(onnx::TensorProto::FLOAT, 0));
    if (failed(n.unify(sum, zero)))
      return failure();
    return n.done(n.im.broadcastTo(zero, shapeOf(sum), n.loc));
  }
  return n.done(sum);
}

} // namespace

void partition::import::detail::registerReductionOps(OpTable &t) {
  t.onOp("ReduceMean", 13)
      .inputs(1, 2)
      .translate(translateReduce)
      .axesInputFrom(18)
      .shapeOperands({1});
  t.onOp("ReduceMax", 13)
      .inputs(1, 2)
      .translate(translateReduce)
      .axesInputFrom(18)
      .shapeOperands({1})
      .note("float tensors");
  t.onOp("ReduceSum", 13)
      .inputs(1, 2)
      .translate(translateReduce)
      .axesInputFrom(13)
      .shapeOperands({1});
  t.onOp("ReduceProd", 13)
      .inputs(1, 2)
      .fold(foldReduceProd)
      .hostOnlyOperands()
      .note("constant rank-0 or rank-1 inputs (folded)");
  t.onOp("CumSum", 13)
      .inputs(2, 2)
      .fold(foldCumSum)
      .translate(translateCumSum)
      .shapeOperands({1})
      .note("constant axis");
}
