//===- Shape.cpp - constants, shapes and data movement --------------------===//
//
// Constant, ConstantOfShape, Shape, Size and Range (host values only), and
// Reshape, Flatten, Unsqueeze, Squeeze, Transpose, Expand, Tile, Concat,
// Slice, Split, Gather and GatherElements. Each data-movement op computes
// its result's shape once (the helpers below, which also give the
// diagnostics) and then either moves host values or builds `part` ops.
// Operands that are shapes (a Reshape's target, Slice's bounds, an Expand's
// shape, Tile's repeats) must be host values: with every symbolic dimension
// bound, exporters' shape arithmetic folds.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <numeric>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;

FailureOr<int64_t>
partition::import::detail::axisAttribute(Node &n, int64_t dflt, int64_t rank) {
  int64_t given = n.intAttr("axis", dflt);
  std::optional<int64_t> axis = normalizeAxis(given, rank);
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << rank;
  return *axis;
}

namespace {

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

/// Shape and Size need only a static type, not a host value.
FailureOr<bool> foldShape(Node &n) {
  Shape shape;
  if (const HostTensor *h = n.host(0))
    shape = h->shape;
  else if (FailureOr<Value> v = n.input(0); succeeded(v))
    shape = shapeOf(*v);
  else
    return failure();
  HostTensor out;
  out.elemType = onnx::TensorProto::INT64;
  if (n.opType() == "Size") {
    out.values = {static_cast<double>(numElements(shape))};
    return n.folded(std::move(out));
  }
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = n.intAttr("start", 0), end = n.intAttr("end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  for (int64_t i = start; i < end; ++i)
    out.values.push_back(static_cast<double>(shape[i]));
  out.shape = {static_cast<int64_t>(out.values.size())};
  return n.folded(std::move(out));
}

FailureOr<bool> foldConstant(Node &n) {
  HostTensor out;
  if (const onnx::AttributeProto *a = n.attr("value")) {
    FailureOr<HostTensor> t =
        n.im.toHost(a->t(), "the value of node '" + n.proto.name() + "'");
    if (failed(t))
      return failure();
    out = std::move(*t);
  } else if (const onnx::AttributeProto *a = n.attr("value_float")) {
    out.values = {a->f()};
  } else if (const onnx::AttributeProto *a = n.attr("value_floats")) {
    out.values.assign(a->floats().begin(), a->floats().end());
    out.shape = {a->floats_size()};
  } else if (const onnx::AttributeProto *a = n.attr("value_int")) {
    out.elemType = onnx::TensorProto::INT64;
    out.values = {static_cast<double>(a->i())};
  } else if (const onnx::AttributeProto *a = n.attr("value_ints")) {
    out.elemType = onnx::TensorProto::INT64;
    for (int64_t v : a->ints())
      out.values.push_back(static_cast<double>(v));
    out.shape = {a->ints_size()};
  } else {
    return n.fail("a Constant needs value, value_float(s) or value_int(s) "
                  "(sparse and string constants are not supported)");
  }
  return n.folded(std::move(out));
}

FailureOr<bool> foldConstantOfShape(Node &n) {
  FailureOr<const HostTensor *> shape = n.requireHost(0, "shape");
  if (failed(shape))
    return failure();
  HostTensor out;
  out.shape = (*shape)->ints();
  if (failed(n.checkFoldSize(out.shape)))
    return failure();
  double fill = 0;
  if (const onnx::AttributeProto *a = n.attr("value")) {
    FailureOr<HostTensor> t =
        n.im.toHost(a->t(), "the value of '" + n.proto.name() + "'");
    if (failed(t))
      return failure();
    out.elemType = t->elemType;
    fill = t->values.empty() ? 0 : t->values[0];
  }
  out.values.assign(numElements(out.shape), fill);
  return n.folded(std::move(out));
}

std::string formatNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", v);
  return text;
}

FailureOr<bool> foldRange(Node &n) {
  const HostTensor *a = n.host(0), *b = n.host(1), *c = n.host(2);
  if (a->size() != 1 || b->size() != 1 || c->size() != 1)
    return n.fail("start, limit and delta must be scalars; they have " +
                  Twine(a->size()) + ", " + Twine(b->size()) + " and " +
                  Twine(c->size()) + " elements");
  double start = a->values[0], limit = b->values[0], delta = c->values[0];
  if (delta == 0)
    return n.fail("Range with delta 0");
  double count = std::ceil((limit - start) / delta);
  std::string range = "Range from " + formatNumber(start) + " to " +
                      formatNumber(limit) + " by " + formatNumber(delta);
  if (!std::isfinite(count))
    return n.fail(range + " has no finite length");
  if (count > static_cast<double>(n.im.options.maxFoldElements))
    return n.fail(range + " would have " + formatNumber(count) +
                  " elements; partition folds constants of at most " +
                  Twine(n.im.options.maxFoldElements) +
                  " elements (--max-fold-elements)");
  int64_t size = std::max<int64_t>(0, static_cast<int64_t>(count));
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = {size};
  for (int64_t i = 0; i < size; ++i)
    out.values.push_back(roundTo(a->elemType, start + i * delta));
  return n.folded(std::move(out));
}

//===----------------------------------------------------------------------===//
// Result shapes, shared by folding and translation
//===----------------------------------------------------------------------===//

/// A Reshape's result shape for an input of shape `in` (0 copies a
/// dimension unless allowzero, -1 is inferred). Host values may be empty
/// (`allowEmpty`); run-time tensors may not.
FailureOr<Shape> reshapeTarget(Node &n, const Shape &in, bool allowEmpty) {
  FailureOr<const HostTensor *> target = n.requireHost(1, "shape");
  if (failed(target))
    return failure();
  Shape given = (*target)->ints(), out = given;
  bool allowZero = n.intAttr("allowzero", 0);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowZero) {
      if (i >= in.size())
        return n.error() << "shape " << formatShape(given)
                         << " copies dimension " << i << " of "
                         << formatShape(in);
      out[i] = in[i];
    }
    if (out[i] < -1)
      return n.error() << "shape " << formatShape(given)
                       << " has the dimension " << out[i]
                       << " (only -1, inferred, may be negative)";
    if (out[i] == 0 && !allowEmpty)
      return n.error() << "shape " << formatShape(given)
                       << " has a dimension 0 with allowzero (partition has no "
                          "empty tensors)";
    if (out[i] == -1) {
      if (infer >= 0)
        return n.error() << "shape " << formatShape(given)
                         << " has two -1 dimensions";
      infer = static_cast<int64_t>(i);
      continue;
    }
    std::optional<int64_t> next = llvm::checkedMul<int64_t>(known, out[i]);
    if (!next)
      return n.error() << "shape " << formatShape(given)
                       << " has more than 2^63 elements";
    known = *next;
  }
  int64_t count = numElements(in);
  if (infer >= 0) {
    if (known == 0 || count % known != 0)
      return n.error() << "cannot reshape " << formatShape(in) << " to "
                       << formatShape(given);
    out[infer] = count / known;
  }
  if (checkedNumElements(out) != std::optional<int64_t>(count))
    return n.error() << "cannot reshape " << formatShape(in) << " (" << count
                     << " elements) to " << formatShape(given);
  return out;
}

FailureOr<Shape> flattenShape(Node &n, const Shape &in) {
  int64_t rank = static_cast<int64_t>(in.size());
  int64_t given = n.intAttr("axis", 1);
  std::optional<int64_t> axis = normalizeAxis(given, rank + 1);
  if (!axis)
    return n.error() << "axis " << given << " is out of range for rank "
                     << rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= in[d];
  return Shape{outer, outer ? numElements(in) / outer : 0};
}

FailureOr<Shape> unsqueezeShape(Node &n, const Shape &in) {
  FailureOr<std::optional<std::vector<int64_t>>> axes = n.axes(1);
  if (failed(axes))
    return failure();
  // Unsqueeze takes axes as its required input 1 from opset 13 on.
  assert(*axes && "Unsqueeze's axes are a required input");
  int64_t outRank = static_cast<int64_t>(in.size() + (*axes)->size());
  std::vector<bool> inserted(outRank, false);
  for (int64_t ax : **axes) {
    std::optional<int64_t> axis = normalizeAxis(ax, outRank);
    if (!axis)
      return n.error() << "axis " << ax << " is out of range for rank "
                       << outRank;
    if (inserted[*axis])
      return n.error() << "axis " << ax << " is given twice";
    inserted[*axis] = true;
  }
  Shape out;
  for (int64_t i = 0, j = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? 1 : in[j++]);
  return out;
}

FailureOr<Shape> squeezeShape(Node &n, const Shape &in) {
  FailureOr<std::optional<std::vector<int64_t>>> axes = n.axes(1);
  if (failed(axes))
    return failure();
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> removed(rank, false);
  if (*axes) {
    for (int64_t ax : **axes) {
      std::optional<int64_t> axis = normalizeAxis(ax, rank);
      if (!axis || in[*axis] != 1)
        return n.error() << "cannot squeeze axis " << ax << " of "
                         << formatShape(in);
      removed[*axis] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      removed[i] = in[i] == 1;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i)
    if (!removed[i])
      out.push_back(in[i]);
  return out;
}

/// The result shape of the ops that keep the values and change the shape.
FailureOr<Shape> reshapeLikeShape(Node &n, const Shape &in, bool host) {
  const std::string &op = n.opType();
  if (op == "Reshape")
    return reshapeTarget(n, in, host);
  if (op == "Flatten")
    return flattenShape(n, in);
  if (op == "Unsqueeze")
    return unsqueezeShape(n, in);
  return squeezeShape(n, in);
}

FailureOr<std::vector<int64_t>> transposePerm(Node &n, int64_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (auto given = n.intsAttr("perm"))
    perm = *given;
  std::vector<int64_t> sorted = perm;
  llvm::sort(sorted);
  bool permutation = static_cast<int64_t>(sorted.size()) == rank;
  for (int64_t i = 0; permutation && i < rank; ++i)
    permutation = sorted[i] == i;
  if (!permutation)
    return n.error() << "perm " << formatShape(perm)
                     << " is not a permutation of rank " << rank;
  return perm;
}

/// Expand: numpy broadcasting of the input against the shape operand, in
/// both directions ([3, 1] to [1, 4] gives [3, 4]), the rank growing to the
/// longer of the two.
FailureOr<Shape> expandShape(Node &n, const Shape &in) {
  FailureOr<const HostTensor *> shape = n.requireHost(1, "shape");
  if (failed(shape))
    return failure();
  Shape target = (*shape)->ints();
  std::optional<Shape> out = broadcastShapes(in, target);
  if (!out || llvm::any_of(*out, [](int64_t d) { return d < 1; }))
    return n.error() << "cannot expand " << formatShape(in) << " to "
                     << formatShape(target);
  return Shape(*out);
}

/// Concat: the operands agree outside `axis`.
FailureOr<Shape> concatShape(Node &n, ArrayRef<Shape> shapes, int64_t axis) {
  const Shape &first = shapes.front();
  Shape out = first;
  out[axis] = 0;
  for (const Shape &s : shapes) {
    if (s.size() != first.size())
      return n.error() << "operands of shapes " << formatShape(first) << " and "
                       << formatShape(s) << " differ in rank";
    for (size_t d = 0; d < first.size(); ++d)
      if (static_cast<int64_t>(d) != axis && s[d] != first[d])
        return n.error() << "operands of shapes " << formatShape(first)
                         << " and " << formatShape(s) << " differ outside axis "
                         << axis;
    out[axis] += s[axis];
  }
  return out;
}

/// Slice's offsets, steps and result shape along every dimension.
struct SliceParams {
  Shape offsets, steps, shape;
};

FailureOr<SliceParams> sliceParams(Node &n, const Shape &in) {
  FailureOr<const HostTensor *> starts = n.requireHost(1, "starts");
  FailureOr<const HostTensor *> ends = n.requireHost(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> s = (*starts)->ints(), e = (*ends)->ints();
  std::vector<int64_t> axes(s.size()), steps(s.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (n.has(3)) {
    FailureOr<const HostTensor *> given = n.requireHost(3, "axes");
    if (failed(given))
      return failure();
    axes = (*given)->ints();
  }
  if (n.has(4)) {
    FailureOr<const HostTensor *> given = n.requireHost(4, "steps");
    if (failed(given))
      return failure();
    steps = (*given)->ints();
  }
  if (e.size() != s.size() || axes.size() != s.size() ||
      steps.size() != s.size())
    return n.error() << "starts, ends, axes and steps differ in length ("
                     << s.size() << ", " << e.size() << ", " << axes.size()
                     << ", " << steps.size() << ")";
  SliceParams p{Shape(rank, 0), Shape(rank, 1), in};
  for (size_t i = 0; i < s.size(); ++i) {
    std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
    if (!axis || steps[i] == 0)
      return n.error() << "axis " << axes[i] << " or step " << steps[i]
                       << " is invalid for rank " << rank;
    auto [start, size] = sliceRange(in[*axis], s[i], e[i], steps[i]);
    p.offsets[*axis] = start;
    p.steps[*axis] = steps[i];
    p.shape[*axis] = size;
  }
  return p;
}

/// Gather's constant indices, checked against the dimension and made
/// non-negative.
FailureOr<HostTensor> gatherIndices(Node &n, const HostTensor &indices,
                                    int64_t axis, int64_t dim) {
  HostTensor positive = indices;
  for (int64_t i = 0; i < indices.size(); ++i) {
    int64_t v = indices.asInt(i);
    if (v < -dim || v >= dim)
      return n.error() << "index " << v << " is out of range for dimension "
                       << axis << " of size " << dim;
    if (v < 0)
      positive.values[i] = static_cast<double>(v + dim);
  }
  return positive;
}

/// Tile: `repeats` (a host value) gives one count per dimension; the result
/// has each dimension times its count. Host values may be empty
/// (`allowEmpty`); run-time tensors may not.
FailureOr<Shape> tileShape(Node &n, const Shape &in, bool allowEmpty) {
  FailureOr<const HostTensor *> given = n.requireHost(1, "repeats");
  if (failed(given))
    return failure();
  Shape repeats = (*given)->ints();
  if (repeats.size() != in.size())
    return n.error() << "repeats " << formatShape(repeats) << " has "
                     << repeats.size() << " elements for an input of shape "
                     << formatShape(in);
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0 || (repeats[d] == 0 && !allowEmpty))
      return n.error() << "repeats " << formatShape(repeats)
                       << " has the count " << repeats[d]
                       << " (partition has no empty tensors)";
    std::optional<int64_t> dim = llvm::checkedMul<int64_t>(in[d], repeats[d]);
    if (!dim)
      return n.error() << "repeats " << formatShape(repeats) << " tile "
                       << formatShape(in) << " past 2^63 elements";
    out[d] = *dim;
  }
  if (!checkedNumElements(out))
    return n.error() << "repeats " << formatShape(repeats) << " tile "
                     << formatShape(in) << " past 2^63 elements";
  return out;
}

/// GatherElements: data and indices have one rank; the result has the
/// indices' shape, which may be smaller than the data's outside `axis`.
FailureOr<int64_t> gatherElementsAxis(Node &n, const Shape &data,
                                      const Shape &indices) {
  if (data.size() != indices.size())
    return n.error() << "indices of shape " << formatShape(indices)
                     << " and data of shape " << formatShape(data)
                     << " differ in rank";
  FailureOr<int64_t> axis = axisAttribute(n, 0, static_cast<int64_t>(data.size()));
  if (failed(axis))
    return failure();
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != *axis && indices[d] > data[d])
      return n.error() << "indices of shape " << formatShape(indices)
                       << " exceed data of shape " << formatShape(data)
                       << " in dimension " << d;
  return *axis;
}

/// The position in row-major data of shape `data` of the element a
/// GatherElements reads for index position `index` (with `value`, already
/// non-negative, along `axis`).
int64_t gatherElementsSource(const Shape &dataStrides, const Shape &index,
                             int64_t axis, int64_t value) {
  int64_t src = 0;
  for (size_t d = 0; d < index.size(); ++d)
    src +=
        (static_cast<int64_t>(d) == axis ? value : index[d]) * dataStrides[d];
  return src;
}

/// Split's sizes: an attribute, input 1, or num_outputs (or the number of
/// outputs) as equal as possible.
FailureOr<std::vector<int64_t>> splitSizes(Node &n, const Shape &in,
                                           int64_t axis) {
  std::vector<int64_t> sizes;
  int outputs = n.proto.output_size();
  if (auto fromAttr = n.intsAttr("split")) {
    sizes = *fromAttr;
  } else if (n.has(1)) {
    FailureOr<const HostTensor *> split = n.requireHost(1, "split");
    if (failed(split))
      return failure();
    sizes = (*split)->ints();
  } else {
    int64_t parts = n.intAttr("num_outputs", outputs);
    if (parts < 1 || parts > in[axis])
      return n.error() << "cannot split dimension " << axis << " of "
                       << formatShape(in) << " into " << parts << " parts";
    int64_t chunk = (in[axis] + parts - 1) / parts;
    for (int64_t i = 0, left = in[axis]; i < parts; ++i, left -= chunk)
      sizes.push_back(std::min(chunk, left));
  }
  if (static_cast<int>(sizes.size()) != outputs ||
      llvm::any_of(sizes, [&](int64_t s) { return s < 1 || s > in[axis]; }) ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != in[axis])
    return n.error() << "split sizes " << formatShape(sizes)
                     << " do not cover dimension " << axis << " of "
                     << formatShape(in) << " in " << outputs << " outputs";
  return sizes;
}

//===----------------------------------------------------------------------===//
// Folds
//===----------------------------------------------------------------------===//

FailureOr<bool> foldReshapeLike(Node &n) {
  const HostTensor *a = n.host(0);
  FailureOr<Shape> shape = reshapeLikeShape(n, a->shape, /*host=*/true);
  if (failed(shape))
    return failure();
  HostTensor out = *a;
  out.shape = *shape;
  return n.folded(std::move(out));
}

FailureOr<bool> foldTranspose(Node &n) {
  const HostTensor *a = n.host(0);
  int64_t rank = static_cast<int64_t>(a->shape.size());
  FailureOr<std::vector<int64_t>> perm = transposePerm(n, rank);
  if (failed(perm))
    return failure();
  HostTensor out;
  out.elemType = a->elemType;
  for (int64_t i = 0; i < rank; ++i)
    out.shape.push_back(a->shape[(*perm)[i]]);
  Shape inStrides = stridesOf(a->shape);
  out.values.resize(a->values.size());
  forEachIndex(out.shape, [&](const Shape &index, int64_t linear) {
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i)
      src += index[i] * inStrides[(*perm)[i]];
    out.values[linear] = a->values[src];
  });
  return n.folded(std::move(out));
}

FailureOr<bool> foldExpand(Node &n) {
  const HostTensor *a = n.host(0);
  FailureOr<Shape> shape = expandShape(n, a->shape);
  if (failed(shape) || failed(n.checkFoldSize(*shape)))
    return failure();
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = *shape;
  out.values.resize(numElements(*shape));
  forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
    out.values[linear] = a->values[broadcastIndex(a->shape, *shape, index)];
  });
  return n.folded(std::move(out));
}

FailureOr<bool> foldConcat(Node &n) {
  const HostTensor *a = n.host(0);
  int64_t rank = static_cast<int64_t>(a->shape.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  std::vector<Shape> shapes;
  for (int i = 0; i < n.proto.input_size(); ++i)
    shapes.push_back(n.host(i)->shape);
  FailureOr<Shape> shape = concatShape(n, shapes, *axis);
  if (failed(shape))
    return failure();
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = *shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= out.shape[d];
  for (int64_t d = *axis + 1; d < rank; ++d)
    inner *= out.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int i = 0; i < n.proto.input_size(); ++i) {
      const HostTensor *in = n.host(i);
      int64_t chunk = in->shape[*axis] * inner;
      out.values.insert(out.values.end(), in->values.begin() + o * chunk,
                        in->values.begin() + (o + 1) * chunk);
    }
  return n.folded(std::move(out));
}

FailureOr<bool> foldSlice(Node &n) {
  const HostTensor *a = n.host(0);
  FailureOr<SliceParams> p = sliceParams(n, a->shape);
  if (failed(p))
    return failure();
  int64_t rank = static_cast<int64_t>(a->shape.size());
  Shape inStrides = stridesOf(a->shape);
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = p->shape;
  out.values.resize(numElements(p->shape));
  forEachIndex(p->shape, [&](const Shape &index, int64_t linear) {
    int64_t src = 0;
    for (int64_t i = 0; i < rank; ++i)
      src += (p->offsets[i] + index[i] * p->steps[i]) * inStrides[i];
    out.values[linear] = a->values[src];
  });
  return n.folded(std::move(out));
}

FailureOr<bool> foldGather(Node &n) {
  const HostTensor *a = n.host(0), *b = n.host(1);
  int64_t rank = static_cast<int64_t>(a->shape.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  int64_t dim = a->shape[*axis];
  FailureOr<HostTensor> indices = gatherIndices(n, *b, *axis, dim);
  if (failed(indices))
    return failure();
  Shape shape(a->shape.begin(), a->shape.begin() + *axis);
  shape.insert(shape.end(), b->shape.begin(), b->shape.end());
  shape.insert(shape.end(), a->shape.begin() + *axis + 1, a->shape.end());
  if (failed(n.checkFoldSize(shape)))
    return failure();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= a->shape[d];
  for (int64_t d = *axis + 1; d < rank; ++d)
    inner *= a->shape[d];
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = shape;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < indices->size(); ++j) {
      auto from = a->values.begin() + (o * dim + indices->asInt(j)) * inner;
      out.values.insert(out.values.end(), from, from + inner);
    }
  return n.folded(std::move(out));
}

FailureOr<bool> foldSplit(Node &n) {
  const HostTensor *a = n.host(0);
  int64_t rank = static_cast<int64_t>(a->shape.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  FailureOr<std::vector<int64_t>> sizes = splitSizes(n, a->shape, *axis);
  if (failed(sizes))
    return failure();
  int64_t offset = 0;
  for (int i = 0; i < n.proto.output_size(); ++i) {
    if (!n.proto.output(i).empty())
      n.im.setHost(n.proto.output(i),
                   hostSlice(*a, *axis, offset, (*sizes)[i]));
    offset += (*sizes)[i];
  }
  return true;
}

FailureOr<bool> foldTile(Node &n) {
  const HostTensor *a = n.host(0);
  FailureOr<Shape> shape = tileShape(n, a->shape, /*allowEmpty=*/true);
  if (failed(shape) || failed(n.checkFoldSize(*shape)))
    return failure();
  Shape inStrides = stridesOf(a->shape);
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = *shape;
  out.values.resize(numElements(*shape));
  forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
    int64_t src = 0;
    for (size_t d = 0; d < index.size(); ++d)
      src += index[d] % a->shape[d] * inStrides[d];
    out.values[linear] = a->values[src];
  });
  return n.folded(std::move(out));
}

FailureOr<bool> foldGatherElements(Node &n) {
  const HostTensor *a = n.host(0), *b = n.host(1);
  FailureOr<int64_t> axis = gatherElementsAxis(n, a->shape, b->shape);
  if (failed(axis))
    return failure();
  FailureOr<HostTensor> idx = gatherIndices(n, *b, *axis, a->shape[*axis]);
  if (failed(idx))
    return failure();
  Shape strides = stridesOf(a->shape);
  HostTensor out;
  out.elemType = a->elemType;
  out.shape = b->shape;
  out.values.resize(b->values.size());
  forEachIndex(b->shape, [&](const Shape &index, int64_t linear) {
    out.values[linear] = a->values[gatherElementsSource(strides, index, *axis,
                                                        idx->asInt(linear))];
  });
  return n.folded(std::move(out));
}

//===----------------------------------------------------------------------===//
// Translation
//===----------------------------------------------------------------------===//

LogicalResult translateReshapeLike(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Shape> shape = reshapeLikeShape(n, shapeOf(*x), /*host=*/false);
  if (failed(shape))
    return failure();
  return n.done(n.im.reshape(*x, *shape, n.loc));
}

LogicalResult translateTranspose(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<std::vector<int64_t>> perm = transposePerm(n, rankOf(*x));
  if (failed(perm))
    return failure();
  bool identity = true;
  for (size_t i = 0; i < perm->size(); ++i)
    identity &= (*perm)[i] == static_cast<int64_t>(i);
  if (identity)
    return n.done(*x);
  return n.done(part::TransposeOp::create(n.builder, n.loc, *x, *perm));
}

LogicalResult translateExpand(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Shape> shape = expandShape(n, shapeOf(*x));
  if (failed(shape))
    return failure();
  return n.done(n.im.broadcastTo(*x, *shape, n.loc));
}

LogicalResult translateConcat(Node &n) {
  SmallVector<Value> inputs;
  std::vector<Shape> shapes;
  for (int i = 0; i < n.proto.input_size(); ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  for (Value &v : inputs) {
    if (failed(n.unify(inputs.front(), v)))
      return failure();
    shapes.push_back(shapeOf(v));
  }
  FailureOr<int64_t> axis = axisAttribute(n, 0, rankOf(inputs.front()));
  if (failed(axis) || failed(concatShape(n, shapes, *axis)))
    return failure();
  if (inputs.size() == 1)
    return n.done(inputs.front());
  return n.done(part::ConcatOp::create(n.builder, n.loc, inputs, *axis));
}

LogicalResult translateSlice(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Shape in = shapeOf(*x);
  FailureOr<SliceParams> p = sliceParams(n, in);
  if (failed(p))
    return failure();
  if (llvm::any_of(p->steps, [](int64_t s) { return s < 0; })) {
    // part.slice strides are positive: an axis read backwards is a gather
    // of constant indices.
    Value v = *x;
    for (size_t d = 0; d < in.size(); ++d) {
      if (p->shape[d] == in[d] && p->steps[d] == 1 && p->offsets[d] == 0)
        continue;
      if (failed(n.checkFoldSize({p->shape[d]}, "index list")))
        return failure();
      HostTensor idx;
      idx.elemType = onnx::TensorProto::INT64;
      idx.shape = {p->shape[d]};
      for (int64_t i = 0; i < p->shape[d]; ++i)
        idx.values.push_back(
            static_cast<double>(p->offsets[d] + i * p->steps[d]));
      v = part::GatherOp::create(n.builder, n.loc, v, n.constant(idx), d);
    }
    return n.done(v);
  }
  if (p->shape == in)
    return n.done(*x);
  bool unit = llvm::all_of(p->steps, [](int64_t s) { return s == 1; });
  auto type = RankedTensorType::get(p->shape, elementTypeOf(*x));
  return n.done(part::SliceOp::create(
      n.builder, n.loc, type, *x, p->offsets,
      unit ? DenseI64ArrayAttr() : n.builder.getDenseI64ArrayAttr(p->steps)));
}

LogicalResult translateSplit(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Shape in = shapeOf(*x);
  int64_t rank = static_cast<int64_t>(in.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  FailureOr<std::vector<int64_t>> sizes = splitSizes(n, in, *axis);
  if (failed(sizes))
    return failure();
  int64_t offset = 0;
  for (int i = 0; i < n.proto.output_size(); ++i) {
    Shape offsets(rank, 0), out = in;
    offsets[*axis] = offset;
    out[*axis] = (*sizes)[i];
    offset += (*sizes)[i];
    auto type = RankedTensorType::get(out, elementTypeOf(*x));
    if (!n.proto.output(i).empty())
      n.im.setValue(n.proto.output(i),
                    out == in
                        ? *x
                        : part::SliceOp::create(n.builder, n.loc, type, *x,
                                                offsets, DenseI64ArrayAttr()));
  }
  return success();
}

/// Run-time indices (input 1): see runtimeIndexValues.
FailureOr<Value> runtimeIndices(Node &n, int64_t dim) {
  FailureOr<Value> indices = n.input(1);
  if (failed(indices))
    return failure();
  return runtimeIndexValues(n, *indices, dim);
}

LogicalResult translateGather(Node &n) {
  FailureOr<Value> data = n.input(0);
  if (failed(data))
    return failure();
  Shape in = shapeOf(*data);
  int64_t rank = static_cast<int64_t>(in.size());
  FailureOr<int64_t> axis = axisAttribute(n, 0, rank);
  if (failed(axis))
    return failure();
  const HostTensor *given = n.host(1);
  if (!given) {
    FailureOr<Value> idx = runtimeIndices(n, in[*axis]);
    if (failed(idx))
      return failure();
    return n.done(part::GatherOp::create(n.builder, n.loc, *data, *idx, *axis));
  }
  FailureOr<HostTensor> idx = gatherIndices(n, *given, *axis, in[*axis]);
  if (failed(idx))
    return failure();
  if (!idx->shape.empty())
    return n.done(part::GatherOp::create(n.builder, n.loc, *data,
                                         n.constant(*idx), *axis));
  // A constant scalar index is a slice (e.g. one position of a sequence).
  Shape offsets(rank, 0), sliced = in;
  offsets[*axis] = idx->asInt(0);
  sliced[*axis] = 1;
  auto type = RankedTensorType::get(sliced, elementTypeOf(*data));
  Value s = part::SliceOp::create(n.builder, n.loc, type, *data, offsets,
                                  DenseI64ArrayAttr());
  Shape out = in;
  out.erase(out.begin() + *axis);
  return n.done(n.im.reshape(s, out, n.loc));
}

LogicalResult translateTile(Node &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Shape in = shapeOf(*x);
  FailureOr<Shape> out = tileShape(n, in, /*allowEmpty=*/false);
  if (failed(out))
    return failure();
  // Each repeated dimension d gets a new dimension of its count in front:
  // [d0, d1] repeated [r0, 1] is [1, d0, d1] broadcast to [r0, d0, d1],
  // read as [r0 * d0, d1].
  Shape unit, spread;
  for (size_t d = 0; d < in.size(); ++d) {
    if ((*out)[d] != in[d]) {
      unit.push_back(1);
      spread.push_back((*out)[d] / in[d]);
    }
    unit.push_back(in[d]);
    spread.push_back(in[d]);
  }
  if (spread == in)
    return n.done(*x);
  Value v = n.im.broadcastTo(n.im.reshape(*x, unit, n.loc), spread, n.loc);
  return n.done(n.im.reshape(v, *out, n.loc));
}

/// GatherElements whose constant indices are the same across every
/// dimension but `axis` (positions broadcast over the batch and the
/// features, as GPT-J reads its sin/cos table): the data cut to the
/// indices' shape outside `axis`, gathered along `axis` by one index list.
FailureOr<Value> gatherElementsAlongAxis(Node &n, Value data,
                                         const HostTensor &idx, int64_t axis) {
  Shape at(idx.shape.size(), 0);
  Shape strides = stridesOf(idx.shape);
  HostTensor list;
  list.elemType = onnx::TensorProto::INT64;
  list.shape = {idx.shape[axis]};
  for (int64_t i = 0; i < idx.shape[axis]; ++i)
    list.values.push_back(idx.values[i * strides[axis]]);
  bool uniform = true;
  forEachIndex(idx.shape, [&](const Shape &index, int64_t linear) {
    uniform &= idx.values[linear] == list.values[index[axis]];
  });
  if (!uniform)
    return failure();
  Shape in = shapeOf(data), cut = idx.shape;
  cut[axis] = in[axis];
  if (cut != in) {
    auto type = RankedTensorType::get(cut, elementTypeOf(data));
    data = part::SliceOp::create(n.builder, n.loc, type, data,
                                 Shape(in.size(), 0), DenseI64ArrayAttr());
  }
  return part::GatherOp::create(n.builder, n.loc, data, n.constant(list), axis)
      .getResult();
}

/// GatherElements in general: a gather from the flattened data at
/// `index * stride(axis) + base`, where base is the position of the
/// element's other coordinates. Constant indices give one constant; a
/// run-time index (made non-negative as Gather's are) is scaled and offset
/// at run time. An index out of range along `axis` reads another row
/// rather than failing.
LogicalResult translateGatherElements(Node &n) {
  FailureOr<Value> data = n.input(0);
  if (failed(data))
    return failure();
  Shape in = shapeOf(*data);
  const HostTensor *given = n.host(1);
  Shape idxShape;
  if (given) {
    idxShape = given->shape;
  } else {
    FailureOr<Value> indices = n.input(1);
    if (failed(indices))
      return failure();
    idxShape = shapeOf(*indices);
  }
  FailureOr<int64_t> axis = gatherElementsAxis(n, in, idxShape);
  if (failed(axis))
    return failure();
  Shape strides = stridesOf(in);
  auto flat = [&] { return n.im.reshape(*data, {numElements(in)}, n.loc); };
  if (given) {
    FailureOr<HostTensor> idx = gatherIndices(n, *given, *axis, in[*axis]);
    if (failed(idx))
      return failure();
    FailureOr<Value> alongAxis = gatherElementsAlongAxis(n, *data, *idx, *axis);
    if (succeeded(alongAxis))
      return n.done(*alongAxis);
    HostTensor source = *idx;
    forEachIndex(idxShape, [&](const Shape &index, int64_t linear) {
      source.values[linear] = static_cast<double>(
          gatherElementsSource(strides, index, *axis, idx->asInt(linear)));
    });
    Value positions = n.constant(source);
    return n.done(
        part::GatherOp::create(n.builder, n.loc, flat(), positions, 0));
  }
  FailureOr<Value> idx = runtimeIndices(n, in[*axis]);
  if (failed(idx))
    return failure();
  HostTensor base, stride;
  base.elemType = stride.elemType = elementTypeOf(*idx).isInteger(32)
                                        ? onnx::TensorProto::INT32
                                        : onnx::TensorProto::INT64;
  base.shape = idxShape;
  base.values.resize(numElements(idxShape));
  forEachIndex(idxShape, [&](const Shape &index, int64_t linear) {
    base.values[linear] =
        static_cast<double>(gatherElementsSource(strides, index, *axis, 0));
  });
  stride.values = {static_cast<double>(strides[*axis])};
  Value scaled =
      part::MulOp::create(n.builder, n.loc, *idx, n.constant(stride));
  Value source =
      part::AddOp::create(n.builder, n.loc, scaled, n.constant(base));
  return n.done(part::GatherOp::create(n.builder, n.loc, flat(), source, 0));
}

} // namespace

/// ONNX counts negative indices from the end, so i + d * min(max(-i, 0), 1)
/// maps [-d, d) onto [0, d) and leaves indices outside it outside.
FailureOr<Value>
partition::import::detail::runtimeIndexValues(Node &n, Value idx, int64_t dim) {
  if (!isa<IntegerType>(elementTypeOf(idx)))
    return n.error() << "indices of type " << idx.getType()
                     << " are not integers";
  int32_t type = elementTypeOf(idx).isInteger(32) ? onnx::TensorProto::INT32
                                                  : onnx::TensorProto::INT64;
  auto scalar = [&](int64_t v) {
    return n.constant(HostTensor::scalar(type, static_cast<double>(v)));
  };
  OpBuilder &b = n.builder;
  Value zero = scalar(0), one = scalar(1);
  Value negated = part::SubOp::create(b, n.loc, zero, idx);
  Value isNegative = part::MinOp::create(
      b, n.loc, part::MaxOp::create(b, n.loc, negated, zero), one);
  Value shift = part::MulOp::create(b, n.loc, isNegative, scalar(dim));
  return part::AddOp::create(b, n.loc, idx, shift).getResult();
}

void partition::import::detail::registerShapeOps(OpTable &t) {
  t.onOp("Constant", 13)
      .inputs(0, 0)
      .fold(foldConstant, /*anyInputs=*/true)
      .note("no sparse or string values");
  for (const char *op : {"Shape", "Size"})
    t.onOp(op, 13)
        .fold(foldShape, /*anyInputs=*/true)
        .hostOnlyOperands()
        .note("static shapes (folded)");
  t.onOp("ConstantOfShape", 13)
      .fold(foldConstantOfShape, /*anyInputs=*/true)
      .hostOnlyOperands()
      .note("constant shape (folded)");
  t.onOp("Range", 13)
      .inputs(3, 3)
      .fold(foldRange)
      .hostOnlyOperands()
      .note("constant inputs (folded)");
  t.onOp("Reshape", 13)
      .inputs(2, 2)
      .fold(foldReshapeLike)
      .translate(translateReshapeLike)
      .shapeOperands({1})
      .movesData()
      .note("constant shape");
  t.onOp("Flatten", 13)
      .fold(foldReshapeLike)
      .translate(translateReshapeLike)
      .movesData();
  t.onOp("Unsqueeze", 13)
      .inputs(2, 2)
      .fold(foldReshapeLike)
      .translate(translateReshapeLike)
      .axesInputFrom(13)
      .shapeOperands({1})
      .movesData()
      .note("constant axes");
  t.onOp("Squeeze", 13)
      .inputs(1, 2)
      .fold(foldReshapeLike)
      .translate(translateReshapeLike)
      .axesInputFrom(13)
      .shapeOperands({1})
      .movesData()
      .note("constant axes");
  t.onOp("Transpose", 13)
      .fold(foldTranspose)
      .translate(translateTranspose)
      .movesData();
  t.onOp("Expand", 13)
      .inputs(2, 2)
      .fold(foldExpand)
      .translate(translateExpand)
      .shapeOperands({1})
      .movesData()
      .note("constant shape");
  t.onOp("Concat", 13)
      .inputs(1, -1)
      .fold(foldConcat)
      .translate(translateConcat)
      .movesData();
  t.onOp("Slice", 13)
      .inputs(3, 5)
      .fold(foldSlice)
      .translate(translateSlice)
      .shapeOperands({1, 2, 3, 4})
      .movesData()
      .note("constant starts, ends, axes, steps");
  t.onOp("Split", 13)
      .inputs(1, 2)
      .fold(foldSplit)
      .translate(translateSplit)
      .axesInputFrom(13)
      .attributeFrom("num_outputs", 18)
      .shapeOperands({1})
      .movesData()
      .note("constant split sizes");
  t.onOp("Gather", 13)
      .inputs(2, 2)
      .fold(foldGather)
      .translate(translateGather)
      .movesData();
  t.onOp("GatherElements", 13)
      .inputs(2, 2)
      .fold(foldGatherElements)
      .translate(translateGatherElements)
      .movesData();
  t.onOp("Tile", 13)
      .inputs(2, 2)
      .fold(foldTile)
      .translate(translateTile)
      .shapeOperands({1})
      .movesData()
      .note("constant repeats");
}
