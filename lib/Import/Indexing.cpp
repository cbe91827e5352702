//===- Indexing.cpp - GatherND and the routing ops of mixtures of experts -===//
//
// GatherND (transformers' causal-mask code reads rows of a mask through
// aten.index), and the ops a mixture of experts exports for its routing:
// TopK, OneHot, ScatterElements and NonZero. All fold on host values. On
// run-time data they become existing `part` ops where those express them
// exactly: GatherND with constant indices is a gather from the data
// flattened over its indexed dimensions; OneHot compares the indices with a
// constant iota. Run-time TopK and NonZero have no `part` form (NonZero's
// result size depends on the data) and are reported as such.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/Support/CheckedArithmetic.h"

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

/// Run-time data, constant indices: the data viewed as [rows, inner dims...]
/// gathered along dimension 0 at the rows the indices name.
LogicalResult translateGatherND(Node &n) {
  FailureOr<Value> data = n.input(0);
  if (failed(data))
    return failure();
  const HostTensor *indices = n.host(1);
  if (!indices)
    return n.fail("its indices ('" + printable(n.proto.input(1)) +
                  "') are computed at run time; partition translates "
                  "GatherND only with constant indices (bind every symbolic "
                  "dimension with --dim so that shape arithmetic folds)");
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
  Value gathered = part::GatherOp::create(n.builder, n.loc,
                                          n.im.reshape(*data, viewed, n.loc),
                                          n.constant(*rows), 0);
  return n.done(n.im.reshape(gathered, p->result, n.loc));
}

} // namespace

void partition::import::detail::registerIndexingOps(OpTable &t) {
  t.onOp("GatherND", 13)
      .inputs(2, 2)
      .fold(foldGatherND)
      .translate(translateGatherND)
      .shapeOperands({1})
      .movesData()
      .note("constant indices on run-time data");
}
