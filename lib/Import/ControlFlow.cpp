//===- ControlFlow.cpp - Loop and sequences, unrolled ---------------------===//
//
// torch.onnx.export writes repeat_interleave (grouped-query attention's
// key/value heads) at dynamic shapes as a Loop over a sequence:
// SplitToSequence, SequenceEmpty, a Loop whose body reads the sequence with
// SequenceAt and appends with SequenceInsert, ConcatFromSequence. Once every
// symbolic dimension is bound, the trip count is known: the loop is
// unrolled, its body imported once per iteration, and a sequence is just a
// list of values (each on the host or in the IR), so nothing of it reaches
// `part`. A loop whose trip count or condition is computed at run time is
// rejected with the node named.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include <limits>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

namespace {

/// The most iterations a Loop is unrolled to.
constexpr int64_t kMaxUnrolledIterations = 4096;

/// The sequence input `i`, or an error.
FailureOr<std::vector<Slot> *> sequenceInput(Node &n, int i) {
  auto it = n.im.slots.find(n.proto.input(i));
  if (it == n.im.slots.end() || !it->second.sequence)
    return n.error() << "input " << i << " ('" << printable(n.proto.input(i))
                     << "') is not a sequence";
  return &*it->second.sequence;
}

/// The tensor input `i` as a slot (a host value stays one).
FailureOr<Slot> tensorInput(Node &n, int i) {
  auto it = n.im.slots.find(n.proto.input(i));
  if (it == n.im.slots.end() || it->second.sequence)
    return n.error() << "input " << i << " ('" << printable(n.proto.input(i))
                     << "') is not a tensor";
  return it->second;
}

/// A constant scalar position into a sequence of `size`; `insert` allows
/// `size` itself.
FailureOr<int64_t> sequencePosition(Node &n, int i, int64_t size, bool insert) {
  FailureOr<const HostTensor *> pos = n.requireHost(i, "position");
  if (failed(pos))
    return failure();
  if ((*pos)->size() != 1)
    return n.error() << "the position must be a scalar; it has "
                     << (*pos)->size() << " elements";
  int64_t p = (*pos)->asInt(0), end = insert ? size + 1 : size;
  if (p < -size || p >= end)
    return n.error() << "position " << p << " is out of range for a sequence "
                     << "of " << size << " tensors";
  return p < 0 ? p + size : p;
}

void setSequence(Node &n, int output, std::vector<Slot> elements) {
  Slot &slot = n.im.slots[n.proto.output(output)];
  slot = Slot();
  slot.sequence = std::move(elements);
}

LogicalResult translateSequenceEmpty(Node &n) {
  setSequence(n, 0, {});
  return success();
}

LogicalResult translateSequenceConstruct(Node &n) {
  std::vector<Slot> elements;
  for (int i = 0; i < n.proto.input_size(); ++i) {
    FailureOr<Slot> t = tensorInput(n, i);
    if (failed(t))
      return failure();
    elements.push_back(*t);
  }
  setSequence(n, 0, std::move(elements));
  return success();
}

LogicalResult translateSequenceAt(Node &n) {
  FailureOr<std::vector<Slot> *> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  FailureOr<int64_t> pos =
      sequencePosition(n, 1, static_cast<int64_t>((*seq)->size()), false);
  if (failed(pos))
    return failure();
  n.im.slots[n.proto.output(0)] = (**seq)[*pos];
  return success();
}

LogicalResult translateSequenceInsert(Node &n) {
  FailureOr<std::vector<Slot> *> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  FailureOr<Slot> t = tensorInput(n, 1);
  if (failed(t))
    return failure();
  std::vector<Slot> elements = **seq;
  int64_t pos = static_cast<int64_t>(elements.size());
  if (n.has(2)) {
    FailureOr<int64_t> given = sequencePosition(n, 2, pos, true);
    if (failed(given))
      return failure();
    pos = *given;
  }
  elements.insert(elements.begin() + pos, *t);
  setSequence(n, 0, std::move(elements));
  return success();
}

LogicalResult translateSequenceLength(Node &n) {
  FailureOr<std::vector<Slot> *> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  n.im.setHost(n.proto.output(0),
               HostTensor::scalar(onnx::TensorProto::INT64,
                                  static_cast<double>((*seq)->size())));
  return success();
}

/// `size` elements of `slot` from `offset` along `axis`, the axis dropped
/// when `squeeze`: on the host or as part.slice.
Slot sliceSlot(Node &n, Slot &slot, Value value, int64_t axis, int64_t offset,
               int64_t size, bool squeeze) {
  Slot out;
  if (slot.host) {
    HostTensor piece = hostSlice(*slot.host, axis, offset, size);
    if (squeeze)
      piece.shape.erase(piece.shape.begin() + axis);
    out.host = std::move(piece);
    return out;
  }
  Shape shape = shapeOf(value), offsets(shape.size(), 0);
  offsets[axis] = offset;
  shape[axis] = size;
  auto type = RankedTensorType::get(shape, elementTypeOf(value));
  Value piece = part::SliceOp::create(n.builder, n.loc, type, value, offsets,
                                      DenseI64ArrayAttr());
  if (squeeze)
    shape.erase(shape.begin() + axis);
  out.value = n.im.reshape(piece, shape, n.loc);
  return out;
}

/// SplitToSequence's piece sizes along a dimension of `dim`.
FailureOr<std::vector<int64_t>> sequenceSplitSizes(Node &n, int64_t dim) {
  if (!n.has(1))
    return std::vector<int64_t>(dim, 1);
  FailureOr<const HostTensor *> split = n.requireHost(1, "split");
  if (failed(split))
    return failure();
  std::vector<int64_t> sizes;
  if ((*split)->shape.empty()) {
    int64_t chunk = (*split)->asInt(0);
    if (chunk < 1)
      return n.error() << "split " << chunk << " is not positive";
    for (int64_t left = dim; left > 0; left -= chunk)
      sizes.push_back(std::min(chunk, left));
    return sizes;
  }
  sizes = (*split)->ints();
  int64_t total = 0;
  for (int64_t s : sizes)
    total = s < 1 ? -1 : (total < 0 ? -1 : total + s);
  if (total != dim)
    return n.error() << "split sizes " << formatShape(sizes)
                     << " do not cover the dimension of size " << dim;
  return sizes;
}

LogicalResult translateSplitToSequence(Node &n) {
  FailureOr<Slot> input = tensorInput(n, 0);
  if (failed(input))
    return failure();
  Value value;
  Shape shape = input->host ? input->host->shape : Shape();
  if (!input->host) {
    FailureOr<Value> v = n.input(0);
    if (failed(v))
      return failure();
    value = *v;
    shape = shapeOf(value);
  }
  int64_t given = n.intAttr("axis", 0);
  std::optional<int64_t> axis =
      normalizeAxis(given, static_cast<int64_t>(shape.size()));
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << shape.size();
  FailureOr<std::vector<int64_t>> sizes = sequenceSplitSizes(n, shape[*axis]);
  if (failed(sizes))
    return failure();
  bool squeeze = !n.has(1) && !n.intAttr("keepdims", 1);
  std::vector<Slot> elements;
  int64_t offset = 0;
  for (int64_t size : *sizes) {
    elements.push_back(
        sliceSlot(n, *input, value, *axis, offset, size, squeeze));
    offset += size;
  }
  setSequence(n, 0, std::move(elements));
  return success();
}

LogicalResult translateConcatFromSequence(Node &n) {
  FailureOr<std::vector<Slot> *> seq = sequenceInput(n, 0);
  if (failed(seq))
    return failure();
  if ((*seq)->empty())
    return n.fail("the sequence is empty (partition has no empty tensors)");
  bool newAxis = n.intAttr("new_axis", 0);
  SmallVector<Value> values;
  for (Slot &element : **seq) {
    FailureOr<Value> v = n.im.valueOf(element, n.proto.input(0));
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  int64_t rank = rankOf(values.front()) + (newAxis ? 1 : 0);
  int64_t given = n.intAttr("axis", 0);
  std::optional<int64_t> axis = normalizeAxis(given, rank);
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << rank;
  for (Value &v : values) {
    if (failed(n.unify(values.front(), v)))
      return failure();
    if (newAxis) {
      Shape s = shapeOf(v);
      s.insert(s.begin() + *axis, 1);
      v = n.im.reshape(v, s, n.loc);
    }
  }
  Shape first = shapeOf(values.front());
  for (Value v : values) {
    Shape s = shapeOf(v);
    bool agree = s.size() == first.size();
    for (int64_t d = 0; agree && d < rank; ++d)
      agree = d == *axis || s[d] == first[d];
    if (!agree)
      return n.error() << "elements of shapes " << formatShape(first) << " and "
                       << formatShape(s) << " differ outside axis " << *axis;
  }
  if (values.size() == 1)
    return n.done(values.front());
  return n.done(part::ConcatOp::create(n.builder, n.loc, values, *axis));
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

/// A host boolean scalar: the loop's condition.
FailureOr<bool> hostCondition(Node &n, const Slot &slot, StringRef what) {
  if (!slot.host)
    return n.error() << "the loop's " << what
                     << " is computed at run time; partition unrolls loops "
                        "whose trip count and condition are known while "
                        "importing";
  if (slot.host->size() != 1)
    return n.error() << "the loop's " << what << " has " << slot.host->size()
                     << " elements, not one";
  return slot.host->values[0] != 0;
}

/// The trip count (input 0, absent: unbounded) and first condition (input
/// 1, absent: true).
FailureOr<std::pair<int64_t, bool>> loopBounds(Node &n) {
  int64_t trips = std::numeric_limits<int64_t>::max();
  if (n.has(0)) {
    FailureOr<const HostTensor *> m = n.requireHost(0, "trip count");
    if (failed(m))
      return failure();
    if ((*m)->size() != 1)
      return n.error() << "the trip count has " << (*m)->size()
                       << " elements, not one";
    trips = (*m)->asInt(0);
  }
  bool cond = true;
  if (n.has(1)) {
    FailureOr<Slot> c = tensorInput(n, 1);
    if (failed(c))
      return failure();
    FailureOr<bool> value = hostCondition(n, *c, "condition");
    if (failed(value))
      return failure();
    cond = *value;
  }
  return std::make_pair(trips, cond);
}

/// The names the body defines, so that each iteration starts afresh.
std::vector<std::string> bodyNames(const onnx::GraphProto &body) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &in : body.input())
    names.push_back(in.name());
  for (const onnx::NodeProto &node : body.node())
    for (const std::string &out : node.output())
      names.push_back(out);
  return names;
}

/// Runs the body once: binds its inputs, imports its nodes, collects its
/// outputs (condition, carried values, scan outputs).
FailureOr<std::vector<Slot>> runBody(Node &n, const onnx::GraphProto &body,
                                     int64_t iteration,
                                     ArrayRef<Slot> carried) {
  for (const std::string &name : bodyNames(body))
    n.im.slots.erase(name);
  n.im.setHost(body.input(0).name(),
               HostTensor::scalar(onnx::TensorProto::INT64,
                                  static_cast<double>(iteration)));
  n.im.setHost(body.input(1).name(),
               HostTensor::scalar(onnx::TensorProto::BOOL, 1));
  for (size_t i = 0; i < carried.size(); ++i)
    n.im.slots[body.input(2 + i).name()] = carried[i];
  for (const onnx::NodeProto &node : body.node())
    if (failed(n.im.importNode(node)))
      return failure();
  std::vector<Slot> outputs;
  for (const onnx::ValueInfoProto &out : body.output()) {
    auto it = n.im.slots.find(out.name());
    if (it == n.im.slots.end())
      return n.error() << "the body's output '" << printable(out.name())
                       << "' has no value";
    outputs.push_back(it->second);
  }
  return outputs;
}

/// Stacks one scan output's per-iteration values along a new axis 0.
FailureOr<Value> stackScan(Node &n, std::vector<Slot> &values,
                           const std::string &name) {
  SmallVector<Value> rows;
  for (Slot &slot : values) {
    FailureOr<Value> v = n.im.valueOf(slot, name);
    if (failed(v))
      return failure();
    Shape s = shapeOf(*v);
    s.insert(s.begin(), 1);
    rows.push_back(n.im.reshape(*v, s, n.loc));
  }
  for (Value &row : rows)
    if (failed(n.unify(rows.front(), row)) ||
        shapeOf(row) != shapeOf(rows.front()))
      return n.error() << "scan output '" << printable(name)
                       << "' changes shape between iterations";
  if (rows.size() == 1)
    return rows.front();
  return part::ConcatOp::create(n.builder, n.loc, rows, 0).getResult();
}

LogicalResult checkLoopBody(Node &n, const onnx::GraphProto &body,
                            int carried) {
  if (body.input_size() != 2 + carried || body.output_size() < 1 + carried ||
      n.proto.output_size() != body.output_size() - 1)
    return n.error() << "the body takes " << body.input_size()
                     << " inputs and gives " << body.output_size()
                     << " outputs for " << carried << " carried values and "
                     << n.proto.output_size() << " loop outputs";
  return success();
}

LogicalResult translateLoop(Node &n) {
  const onnx::AttributeProto *bodyAttr = n.attr("body");
  if (!bodyAttr || !bodyAttr->has_g())
    return n.fail("a Loop needs the 'body' graph attribute");
  const onnx::GraphProto &body = bodyAttr->g();
  int carriedCount = std::max(0, n.proto.input_size() - 2);
  if (failed(checkLoopBody(n, body, carriedCount)))
    return failure();
  FailureOr<std::pair<int64_t, bool>> bounds = loopBounds(n);
  if (failed(bounds))
    return failure();
  std::vector<Slot> carried;
  for (int i = 2; i < n.proto.input_size(); ++i) {
    auto it = n.im.slots.find(n.proto.input(i));
    if (it == n.im.slots.end())
      return n.error() << "input " << i << " ('" << printable(n.proto.input(i))
                       << "') has no value";
    carried.push_back(it->second);
  }
  int scanCount = body.output_size() - 1 - carriedCount;
  std::vector<std::vector<Slot>> scans(scanCount);
  auto [trips, cond] = *bounds;
  int64_t iteration = 0;
  for (; iteration < trips && cond; ++iteration) {
    if (iteration == kMaxUnrolledIterations)
      return n.error() << "the loop runs more than " << kMaxUnrolledIterations
                       << " iterations; partition unrolls at most "
                       << kMaxUnrolledIterations;
    FailureOr<std::vector<Slot>> out = runBody(n, body, iteration, carried);
    if (failed(out))
      return failure();
    FailureOr<bool> next = hostCondition(n, (*out)[0], "condition");
    if (failed(next))
      return failure();
    cond = *next;
    carried.assign(out->begin() + 1, out->begin() + 1 + carriedCount);
    for (int s = 0; s < scanCount; ++s)
      scans[s].push_back((*out)[1 + carriedCount + s]);
  }
  for (const std::string &name : bodyNames(body))
    n.im.slots.erase(name);
  for (int i = 0; i < carriedCount; ++i)
    n.im.slots[n.proto.output(i)] = carried[i];
  for (int s = 0; s < scanCount; ++s) {
    if (iteration == 0)
      return n.fail("the loop runs no iteration, so its scan outputs would be "
                    "empty (partition has no empty tensors)");
    FailureOr<Value> stacked =
        stackScan(n, scans[s], n.proto.output(carriedCount + s));
    if (failed(stacked))
      return failure();
    n.im.setValue(n.proto.output(carriedCount + s), *stacked);
  }
  return success();
}

} // namespace

void partition::import::detail::registerControlFlowOps(OpTable &t) {
  t.onOp("Loop", 13)
      .inputs(0, -1)
      .translate(translateLoop)
      .note("unrolled: trip count and condition known while importing");
  t.onOp("SequenceEmpty", 13).inputs(0, 0).translate(translateSequenceEmpty);
  t.onOp("SequenceConstruct", 13)
      .inputs(1, -1)
      .translate(translateSequenceConstruct);
  t.onOp("SequenceAt", 13)
      .inputs(2, 2)
      .translate(translateSequenceAt)
      .note("constant position");
  t.onOp("SequenceInsert", 13)
      .inputs(2, 3)
      .translate(translateSequenceInsert)
      .note("constant position");
  t.onOp("SequenceLength", 13).translate(translateSequenceLength);
  t.onOp("SplitToSequence", 13)
      .inputs(1, 2)
      .translate(translateSplitToSequence)
      .note("constant split");
  t.onOp("ConcatFromSequence", 13).translate(translateConcatFromSequence);
}
