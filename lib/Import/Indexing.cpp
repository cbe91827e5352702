//===- Indexing.cpp - GatherND and the routing ops of mixtures of experts -===//
//
// GatherND (transformers' causal-mask code reads rows of a mask through
// aten.index), and the ops a mixture of experts exports for its routing:
// TopK, OneHot, ScatterElements and NonZero. All fold on host values. On
// run-time data they become existing `part` ops where those express them
// exactly: GatherND with constant indices is a gather from the data
// flattened over its indexed dimensions, with run-time indices of one
// component a gather along dimension 0; OneHot compares the indices with a
// constant iota; TopK with a constant k is part.top_k. Run-time NonZero has
// no `part` form (its result size depends on the data) and is reported as
// such.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

//===----------------------------------------------------------------------===//
// GatherND
//===----------------------------------------------------------------------===//

/// What a GatherND reads: `batch` leading dimensions shared by data and
/// indices, `depth` data dimensions indexed by each index tuple (the last
/// dimension of the indices), the rest copied whole.
struct GatherNDPlan {
  int64_t batch = 0, depth = 0;
  /// Elements of one batch's indexed block: data.shape[batch:batch+depth].
  int64_t block = 1;
  /// Elements copied per index tuple: data.shape[batch+depth:].
  int64_t inner = 1;
  /// The result shape: indices.shape[:-1] + data.shape[batch+depth:].
  Shape result;
};

FailureOr<GatherNDPlan> gatherNDPlan(Node &n, const Shape &data,
                                     const Shape &indices) {
  int64_t r = static_cast<int64_t>(data.size());
  int64_t q = static_cast<int64_t>(indices.size());
  GatherNDPlan p;
  p.batch = n.intAttr("batch_dims", 0);
  if (q < 1 || r < 1)
    return n.error() << "data of shape " << formatShape(data)
                     << " and indices of shape " << formatShape(indices)
                     << " must both have rank at least 1";
  if (p.batch < 0 || p.batch >= std::min(q, r))
    return n.error() << "batch_dims " << p.batch << " is outside [0, "
                     << std::min(q, r) << ") for data of shape "
                     << formatShape(data) << " and indices of shape "
                     << formatShape(indices);
  for (int64_t d = 0; d < p.batch; ++d)
    if (data[d] != indices[d])
      return n.error() << "batch dimension " << d << " of data of shape "
                       << formatShape(data) << " and indices of shape "
                       << formatShape(indices) << " differ";
  p.depth = indices.back();
  if (p.depth < 1 || p.depth > r - p.batch)
    return n.error() << "index tuples of length " << p.depth
                     << " (the last dimension of indices of shape "
                     << formatShape(indices) << ") must be in [1, "
                     << r - p.batch << "] for data of shape "
                     << formatShape(data) << " and batch_dims " << p.batch;
  for (int64_t d = p.batch; d < p.batch + p.depth; ++d)
    p.block *= data[d];
  for (int64_t d = p.batch + p.depth; d < r; ++d)
    p.inner *= data[d];
  p.result.assign(indices.begin(), indices.end() - 1);
  p.result.insert(p.result.end(), data.begin() + p.batch + p.depth, data.end());
  if (!checkedNumElements(p.result))
    return n.error() << "the result of shape " << formatShape(p.result)
                     << " has more than 2^63 elements";
  return p;
}

/// For each index tuple of the constant `indices`, the row it reads of the
/// data viewed as [batch elements * block, inner]: the tuple's row-major
/// position in data.shape[batch:batch+depth] (negative components count
/// from the end) plus its batch's offset. Reports the first component out
/// of range with its position and value.
FailureOr<HostTensor> gatherNDRows(Node &n, const Shape &data,
                                   const HostTensor &indices,
                                   const GatherNDPlan &p) {
  if (isFloatElemType(indices.elemType))
    return n.error() << "indices of type " << elemTypeName(indices.elemType)
                     << " are not integers";
  HostTensor rows;
  rows.elemType = onnx::TensorProto::INT64;
  rows.shape.assign(indices.shape.begin(), indices.shape.end() - 1);
  int64_t tuples = indices.size() / p.depth;
  int64_t perBatch = 1;
  for (int64_t d = p.batch; d + 1 < static_cast<int64_t>(indices.shape.size());
       ++d)
    perBatch *= indices.shape[d];
  rows.values.resize(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t row = 0;
    for (int64_t j = 0; j < p.depth; ++j) {
      int64_t dim = data[p.batch + j], v = indices.asInt(t * p.depth + j);
      if (v < -dim || v >= dim) {
        Shape at(indices.shape.begin(), indices.shape.end() - 1);
        Shape strides = stridesOf(at);
        for (size_t d = 0; d < at.size(); ++d)
          at[d] = t / strides[d] % at[d];
        at.push_back(j);
        return n.error() << "index " << v << " at indices position "
                         << formatShape(at) << " is out of range for data "
                         << "dimension " << p.batch + j << " of size " << dim
                         << " (data of shape " << formatShape(data) << ")";
      }
      row = row * dim + (v < 0 ? v + dim : v);
    }
    rows.values[t] = static_cast<double>(t / perBatch * p.block + row);
  }
  return rows;
}

FailureOr<bool> foldGatherND(Node &n) {
  const HostTensor *data = n.host(0), *indices = n.host(1);
  FailureOr<GatherNDPlan> p = gatherNDPlan(n, data->shape, indices->shape);
  if (failed(p) || failed(n.checkFoldSize(p->result)))
    return failure();
  FailureOr<HostTensor> rows = gatherNDRows(n, data->shape, *indices, *p);
  if (failed(rows))
    return failure();
  HostTensor out;
  out.elemType = data->elemType;
  out.shape = p->result;
  out.values.reserve(numElements(p->result));
  for (int64_t t = 0; t < rows->size(); ++t) {
    auto from = data->values.begin() + rows->asInt(t) * p->inner;
    out.values.insert(out.values.end(), from, from + p->inner);
  }
  return n.folded(std::move(out));
}

/// Run-time indices of one component each (batch_dims 0, indices
/// [..., 1]): a gather along dimension 0 at the indices without their last
/// dimension, negative ones counted from the end (a mixture of experts
/// reading the weights of each token's experts, aten.index on the stacked
/// expert weights). Longer index tuples or batch dimensions would need a
/// row computed from several components, where one out of range could
/// silently read another row: those are reported.
LogicalResult translateRuntimeGatherND(Node &n, Value data) {
  FailureOr<Value> indices = n.input(1);
  if (failed(indices))
    return failure();
  Shape in = shapeOf(data), idx = shapeOf(*indices);
  FailureOr<GatherNDPlan> p = gatherNDPlan(n, in, idx);
  if (failed(p))
    return failure();
  if (p->batch != 0 || p->depth != 1)
    return n.fail("its indices ('" + printable(n.proto.input(1)) +
                  "') are computed at run time, with batch_dims " +
                  Twine(p->batch) + " and index tuples of length " +
                  Twine(p->depth) + " (indices of shape " + formatShape(idx) +
                  "); partition translates run-time GatherND only with "
                  "batch_dims 0 and tuples of length 1 (a gather along "
                  "dimension 0)");
  Shape rows(idx.begin(), idx.end() - 1);
  // One tuple reads one row: gather it as a list of one, then drop that
  // dimension with the final reshape.
  if (rows.empty())
    rows = {1};
  Value flat = n.im.reshape(*indices, rows, n.loc);
  FailureOr<Value> normalized = runtimeIndexValues(n, flat, in[0]);
  if (failed(normalized))
    return failure();
  Value gathered =
      part::GatherOp::create(n.builder, n.loc, data, *normalized, 0);
  return n.done(n.im.reshape(gathered, p->result, n.loc));
}

/// Run-time data, constant indices: the data viewed as [rows, inner dims...]
/// gathered along dimension 0 at the rows the indices name.
LogicalResult translateGatherND(Node &n) {
  FailureOr<Value> data = n.input(0);
  if (failed(data))
    return failure();
  const HostTensor *indices = n.host(1);
  if (!indices)
    return translateRuntimeGatherND(n, *data);
  Shape in = shapeOf(*data);
  FailureOr<GatherNDPlan> p = gatherNDPlan(n, in, indices->shape);
  if (failed(p))
    return failure();
  FailureOr<HostTensor> rows = gatherNDRows(n, in, *indices, *p);
  if (failed(rows))
    return failure();
  int64_t batches = 1;
  for (int64_t d = 0; d < p->batch; ++d)
    batches *= in[d];
  Shape viewed = {batches * p->block};
  viewed.insert(viewed.end(), in.begin() + p->batch + p->depth, in.end());
  // Every row once, in order (transformers' mask lookup at an arange of
  // each dimension): the data itself, under the result's shape.
  bool identity = rows->size() == viewed[0];
  for (int64_t i = 0; identity && i < rows->size(); ++i)
    identity = rows->asInt(i) == i;
  if (identity)
    return n.done(n.im.reshape(*data, p->result, n.loc));
  // A single tuple (indices of rank 1) reads one row: gather it as a list
  // of one and drop that dimension with the final reshape.
  if (rows->shape.empty())
    rows->shape = {1};
  // In this order whatever the compiler's order of arguments.
  Value view = n.im.reshape(*data, viewed, n.loc);
  Value rowIndices = n.constant(*rows);
  Value gathered =
      part::GatherOp::create(n.builder, n.loc, view, rowIndices, 0);
  return n.done(n.im.reshape(gathered, p->result, n.loc));
}

//===----------------------------------------------------------------------===//
// Routing of a mixture of experts: TopK, OneHot, ScatterElements, NonZero
//===----------------------------------------------------------------------===//

/// The elements of `shape` before, along and after `axis`.
struct AxisSplit {
  int64_t outer = 1, dim = 1, inner = 1;
};

AxisSplit splitAt(const Shape &shape, int64_t axis) {
  AxisSplit a;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? a.outer : d == axis ? a.dim : a.inner) *= shape[d];
  return a;
}

/// TopK's axis and k for input `shape`: an error naming the node when the
/// axis is out of range or k is not one value in [1, the axis's size].
struct TopKChoice {
  int64_t axis, count;
};
FailureOr<TopKChoice> topKChoice(Node &n, const Shape &shape,
                                 const HostTensor &k) {
  FailureOr<int64_t> axis =
      axisAttribute(n, -1, static_cast<int64_t>(shape.size()));
  if (failed(axis))
    return failure();
  if (k.size() != 1)
    return n.fail("k must hold one value; it has " + Twine(k.size()) +
                  " elements");
  int64_t count = k.asInt(0);
  if (count < 1 || count > shape[*axis])
    return n.fail("k " + Twine(count) + " is outside [1, " +
                  Twine(shape[*axis]) + "] for dimension " + Twine(*axis) +
                  " of shape " + formatShape(shape));
  return TopKChoice{*axis, count};
}

FailureOr<bool> foldTopK(Node &n) {
  const HostTensor *x = n.host(0), *k = n.host(1);
  FailureOr<TopKChoice> choice = topKChoice(n, x->shape, *k);
  if (failed(choice))
    return failure();
  int64_t axis = choice->axis;
  int64_t count = choice->count;
  AxisSplit a = splitAt(x->shape, axis);
  bool largest = n.intAttr("largest", 1) != 0;
  HostTensor values, indices;
  values.elemType = x->elemType;
  indices.elemType = onnx::TensorProto::INT64;
  values.shape = indices.shape = x->shape;
  values.shape[axis] = indices.shape[axis] = count;
  values.values.resize(a.outer * count * a.inner);
  indices.values.resize(values.values.size());
  std::vector<int64_t> order(a.dim);
  for (int64_t o = 0; o < a.outer; ++o)
    for (int64_t i = 0; i < a.inner; ++i) {
      auto at = [&](int64_t j) {
        return x->values[(o * a.dim + j) * a.inner + i];
      };
      for (int64_t j = 0; j < a.dim; ++j)
        order[j] = j;
      // The lower index first among equal values, as onnxruntime sorts.
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
        return largest ? at(l) > at(r) : at(l) < at(r);
      });
      for (int64_t j = 0; j < count; ++j) {
        int64_t to = (o * count + j) * a.inner + i;
        values.values[to] = at(order[j]);
        indices.values[to] = static_cast<double>(order[j]);
      }
    }
  n.im.setHost(n.proto.output(0), std::move(values));
  if (n.proto.output_size() > 1 && !n.proto.output(1).empty())
    n.im.setHost(n.proto.output(1), std::move(indices));
  return true;
}

/// Run-time TopK (k known while importing) as part.top_k along the last
/// dimension: another axis is moved last and back, and the smallest are
/// the largest of the negated values (order and ties unchanged).
LogicalResult translateTopK(Node &n) {
  FailureOr<Value> x = n.input(0);
  FailureOr<const HostTensor *> k = n.requireHost(1, "k");
  if (failed(x) || failed(k) || failed(n.requireFloat(*x)))
    return failure();
  Shape shape = shapeOf(*x);
  int64_t rank = static_cast<int64_t>(shape.size());
  FailureOr<TopKChoice> choice = topKChoice(n, shape, **k);
  if (failed(choice))
    return failure();
  int64_t axis = choice->axis;
  int64_t count = choice->count;
  bool largest = n.intAttr("largest", 1) != 0;
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[axis], perm[rank - 1]);
  auto moved = [&](Value v) -> Value {
    if (axis == rank - 1)
      return v;
    return part::TransposeOp::create(n.builder, n.loc, v, perm);
  };
  auto negated = [&](Value v) -> Value {
    return largest ? v : part::NegOp::create(n.builder, n.loc, v);
  };
  Value in = negated(moved(*x));
  Shape top = shapeOf(in);
  top.back() = count;
  auto type = cast<RankedTensorType>(in.getType());
  auto op = part::TopKOp::create(
      n.builder, n.loc, type.clone(top),
      type.clone(top, n.builder.getI64Type()), in);
  Value values = moved(negated(op.getValues()));
  Value indices = moved(op.getIndices());
  n.im.setValue(n.proto.output(0), values);
  if (n.proto.output_size() > 1 && !n.proto.output(1).empty())
    n.im.setValue(n.proto.output(1), indices);
  return success();
}

/// OneHot's depth and its off and on values (inputs 1 and 2).
struct OneHotParams {
  int64_t depth = 0;
  HostTensor off, on;
};

FailureOr<OneHotParams> oneHotParams(Node &n) {
  FailureOr<const HostTensor *> depth = n.requireHost(1, "depth");
  FailureOr<const HostTensor *> values = n.requireHost(2, "values");
  if (failed(depth) || failed(values))
    return failure();
  if ((*depth)->size() != 1 || (*values)->size() != 2)
    return n.fail("depth must hold one value and values two; they hold " +
                  Twine((*depth)->size()) + " and " + Twine((*values)->size()));
  OneHotParams p;
  p.depth = (*depth)->asInt(0);
  if (p.depth < 1)
    return n.fail("depth " + Twine(p.depth) +
                  " is not positive (partition has no empty tensors)");
  p.off = HostTensor::scalar((*values)->elemType, (*values)->values[0]);
  p.on = HostTensor::scalar((*values)->elemType, (*values)->values[1]);
  return p;
}

FailureOr<bool> foldOneHot(Node &n) {
  const HostTensor *idx = n.host(0);
  FailureOr<OneHotParams> p = oneHotParams(n);
  if (failed(p))
    return failure();
  int64_t rank = static_cast<int64_t>(idx->shape.size()) + 1;
  FailureOr<int64_t> axis = axisAttribute(n, -1, rank);
  if (failed(axis))
    return failure();
  Shape shape = idx->shape;
  shape.insert(shape.begin() + *axis, p->depth);
  if (!checkedNumElements(shape))
    return n.fail("the result of shape " + formatShape(shape) +
                  " has more than 2^63 elements");
  if (failed(n.checkFoldSize(shape)))
    return failure();
  Shape idxStrides = stridesOf(idx->shape);
  HostTensor out;
  out.elemType = p->off.elemType;
  out.shape = shape;
  out.values.resize(numElements(shape));
  forEachIndex(shape, [&](const Shape &index, int64_t linear) {
    Shape at = index;
    at.erase(at.begin() + *axis);
    int64_t from = 0;
    for (size_t d = 0; d < at.size(); ++d)
      from += at[d] * idxStrides[d];
    double v = idx->values[from];
    int64_t hot = static_cast<int64_t>(v < 0 ? v + p->depth : v);
    out.values[linear] =
        hot == index[*axis] ? p->on.values[0] : p->off.values[0];
  });
  return n.folded(std::move(out));
}

/// Run-time indices: `indices == iota` (or `iota - depth` for negative
/// indices) along the new axis, selecting the on or off value.
LogicalResult translateOneHot(Node &n) {
  FailureOr<Value> idx = n.input(0);
  FailureOr<OneHotParams> p = oneHotParams(n);
  if (failed(idx) || failed(p))
    return failure();
  if (!isa<IntegerType>(elementTypeOf(*idx)))
    return n.error() << "indices of type " << idx->getType()
                     << " are not integers";
  Shape in = shapeOf(*idx);
  int64_t rank = static_cast<int64_t>(in.size()) + 1;
  FailureOr<int64_t> axis = axisAttribute(n, -1, rank);
  if (failed(axis))
    return failure();
  Shape unit = in, iotaShape(rank, 1);
  unit.insert(unit.begin() + *axis, 1);
  iotaShape[*axis] = p->depth;
  HostTensor iota, below;
  iota.elemType = below.elemType = elementTypeOf(*idx).isInteger(32)
                                       ? onnx::TensorProto::INT32
                                       : onnx::TensorProto::INT64;
  iota.shape = below.shape = iotaShape;
  for (int64_t j = 0; j < p->depth; ++j) {
    iota.values.push_back(static_cast<double>(j));
    below.values.push_back(static_cast<double>(j - p->depth));
  }
  Value v = n.im.reshape(*idx, unit, n.loc);
  auto eq = [&](const HostTensor &t) -> Value {
    return part::CompareOp::create(
        n.builder, n.loc, part::ComparisonDirection::EQ, v, n.constant(t));
  };
  // One statement each: the order of the ops does not depend on the
  // compiler's order of evaluating arguments.
  Value exact = eq(iota);
  Value fromEnd = eq(below);
  Value hot = part::MaxOp::create(n.builder, n.loc, exact, fromEnd);
  Value on = n.constant(p->on);
  Value off = n.constant(p->off);
  return n.done(part::SelectOp::create(n.builder, n.loc, hot, on, off));
}

FailureOr<bool> foldScatterElements(Node &n) {
  const HostTensor *data = n.host(0), *idx = n.host(1), *upd = n.host(2);
  int64_t rank = static_cast<int64_t>(data->shape.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  if (idx->shape != upd->shape || idx->shape.size() != data->shape.size())
    return n.fail("indices of shape " + formatShape(idx->shape) +
                  " and updates of shape " + formatShape(upd->shape) +
                  " must have one shape, of the rank of data of shape " +
                  formatShape(data->shape));
  std::string reduction = "none";
  if (const onnx::AttributeProto *r = n.attr("reduction"))
    reduction = r->s();
  if (!llvm::is_contained({std::string("none"), std::string("add"),
                           std::string("mul"), std::string("max"),
                           std::string("min")},
                          reduction))
    return n.fail("reduction '" + printable(reduction) +
                  "' is not one of "
                  "none, add, mul, max, min");
  Shape strides = stridesOf(data->shape);
  HostTensor out = *data;
  LogicalResult ok = success();
  forEachIndex(idx->shape, [&](const Shape &index, int64_t linear) {
    if (failed(ok))
      return;
    int64_t dim = data->shape[*axis], v = idx->asInt(linear);
    for (size_t d = 0; d < index.size(); ++d)
      if (static_cast<int64_t>(d) != *axis && index[d] >= data->shape[d])
        v = dim; // outside: reported below
    if (v < -dim || v >= dim) {
      ok = n.fail("index " + Twine(v) + " at indices position " +
                  formatShape(index) + " is out of range for dimension " +
                  Twine(*axis) + " of data of shape " +
                  formatShape(data->shape));
      return;
    }
    Shape at = index;
    at[*axis] = v < 0 ? v + dim : v;
    int64_t to = 0;
    for (size_t d = 0; d < at.size(); ++d)
      to += at[d] * strides[d];
    double &dst = out.values[to], u = upd->values[linear];
    if (reduction == "none")
      dst = u;
    else if (reduction == "add")
      dst += u;
    else if (reduction == "mul")
      dst *= u;
    else if (reduction == "max")
      dst = std::max(dst, u);
    else
      dst = std::min(dst, u);
    dst = roundTo(out.elemType, dst);
  });
  if (failed(ok))
    return failure();
  return n.folded(std::move(out));
}

FailureOr<bool> foldNonZero(Node &n) {
  const HostTensor *x = n.host(0);
  Shape strides = stridesOf(x->shape);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x->size(); ++i)
    if (x->values[i] != 0)
      hits.push_back(i);
  int64_t rank = std::max<int64_t>(1, x->shape.size());
  if (hits.empty())
    return n.fail("its input '" + printable(n.proto.input(0)) +
                  "' has no non-zero element, so the result would be empty "
                  "(partition has no empty tensors)");
  HostTensor out;
  out.elemType = onnx::TensorProto::INT64;
  out.shape = {rank, static_cast<int64_t>(hits.size())};
  out.values.resize(rank * hits.size());
  for (size_t h = 0; h < hits.size(); ++h)
    for (int64_t d = 0; d < rank; ++d)
      out.values[d * hits.size() + h] = static_cast<double>(
          x->shape.empty() ? 0 : hits[h] / strides[d] % x->shape[d]);
  return n.folded(std::move(out));
}

LogicalResult translateNonZero(Node &n) {
  return n.fail("NonZero of '" + printable(n.proto.input(0)) +
                "', which is computed at run time: its output size depends "
                "on run-time data (partition needs static shapes); it is "
                "supported only on values known while importing");
}

} // namespace

void partition::import::detail::registerIndexingOps(OpTable &t) {
  t.onOp("GatherND", 13)
      .inputs(2, 2)
      .fold(foldGatherND)
      .translate(translateGatherND)
      .shapeOperands({1})
      .movesData()
      .note("constant indices, or run-time indices with batch_dims 0 and "
            "tuples of length 1 (part.gather along dimension 0)");
  t.onOp("TopK", 13)
      .inputs(2, 2)
      .fold(foldTopK)
      .translate(translateTopK)
      .shapeOperands({1})
      .note("run-time values with a constant k: part.top_k");
  t.onOp("OneHot", 13)
      .inputs(3, 3)
      .fold(foldOneHot)
      .translate(translateOneHot)
      .shapeOperands({1, 2})
      .note("constant depth and values");
  t.onOp("ScatterElements", 13)
      .inputs(3, 3)
      .fold(foldScatterElements)
      .movesData()
      .note("constant inputs (folded)");
  t.onOp("NonZero", 13)
      .fold(foldNonZero)
      .translate(translateNonZero)
      .hostOnlyOperands()
      .note("constant input (folded): its size depends on the data");
}
