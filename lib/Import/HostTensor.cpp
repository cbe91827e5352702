//===- HostTensor.cpp - values known while importing ----------------------===//
//
// Shapes, element types and tensors the importer evaluates on the host (in
// double precision, exact for the integers of shape arithmetic), and the
// names and formats its diagnostics use.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;

namespace partition::import::detail {

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> next = llvm::checkedMul<int64_t>(n, d);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

std::string printable(StringRef name) {
  std::string out;
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof(hex), "\\x%02X", c);
    out += hex;
  }
  return out;
}

std::optional<std::string> fileSafeName(StringRef raw, std::string &why) {
  for (size_t i = 0; i < raw.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", c);
      why = std::string("has the control character ") + hex + " at byte " +
            std::to_string(i);
      return std::nullopt;
    }
  }
  SmallVector<StringRef> components;
  llvm::SplitString(raw, components, "/\\");
  for (StringRef component : components)
    if (component == "." || component == "..") {
      why = "has a '" + component.str() +
            "' path component and would leave the directory it is written "
            "to";
      return std::nullopt;
    }
  std::string safe = raw.ltrim("/\\").str();
  std::replace(safe.begin(), safe.end(), '/', '.');
  std::replace(safe.begin(), safe.end(), '\\', '.');
  if (safe.empty()) {
    why = "is empty";
    return std::nullopt;
  }
  return safe;
}

std::string formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char *elemTypeName(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return "float32";
  case onnx::TensorProto::UINT8:
    return "uint8";
  case onnx::TensorProto::INT8:
    return "int8";
  case onnx::TensorProto::UINT16:
    return "uint16";
  case onnx::TensorProto::INT16:
    return "int16";
  case onnx::TensorProto::INT32:
    return "int32";
  case onnx::TensorProto::INT64:
    return "int64";
  case onnx::TensorProto::STRING:
    return "string";
  case onnx::TensorProto::BOOL:
    return "bool";
  case onnx::TensorProto::FLOAT16:
    return "float16";
  case onnx::TensorProto::DOUBLE:
    return "float64";
  case onnx::TensorProto::UINT32:
    return "uint32";
  case onnx::TensorProto::UINT64:
    return "uint64";
  case onnx::TensorProto::BFLOAT16:
    return "bfloat16";
  default:
    return "an unknown element type";
  }
}

int64_t elemTypeBytes(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return 1;
  default:
    return 0;
  }
}

bool isFloatElemType(int32_t type) {
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16 ||
         type == onnx::TensorProto::DOUBLE;
}

double roundTo(int32_t type, double v) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return static_cast<double>(static_cast<float>(v));
  case onnx::TensorProto::BOOL:
    return v != 0 ? 1 : 0;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return std::isfinite(v) ? std::trunc(v) : 0;
  default:
    return v;
  }
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

int64_t broadcastIndex(const Shape &from, const Shape &to, const Shape &index) {
  int64_t offset = 0, stride = 1;
  size_t lead = to.size() - from.size();
  for (int64_t i = static_cast<int64_t>(from.size()) - 1; i >= 0; --i) {
    int64_t idx = from[i] == 1 ? 0 : index[i + lead];
    offset += idx * stride;
    stride *= from[i];
  }
  return offset;
}

void forEachIndex(const Shape &shape,
                  const std::function<void(const Shape &, int64_t)> &fn) {
  int64_t n = numElements(shape);
  Shape index(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(index, linear);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

std::optional<int64_t> moduleIndex(StringRef component) {
  auto [module, index] = component.rsplit('.');
  uint64_t value;
  if (!module.empty() && !index.empty() &&
      (isalpha(module.front()) || module.front() == '_') &&
      !index.getAsInteger(10, value) && value <= INT64_MAX)
    return static_cast<int64_t>(value);
  return std::nullopt;
}

std::optional<int64_t> layerOfNodeName(StringRef name) {
  if (!name.consume_front("/"))
    return std::nullopt;
  SmallVector<StringRef> components;
  name.split(components, '/');
  components.pop_back(); // the node's own name ("MatMul_3")
  for (StringRef component : components)
    if (std::optional<int64_t> layer = moduleIndex(component))
      return layer;
  return std::nullopt;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

std::optional<HostTensor>
hostBinary(const HostTensor &a, const HostTensor &b, int32_t resultType,
           const std::function<double(double, double)> &fn) {
  std::optional<Shape> shape = broadcastShapes(a.shape, b.shape);
  if (!shape)
    return std::nullopt;
  HostTensor out;
  out.elemType = resultType;
  out.shape = *shape;
  out.values.resize(numElements(*shape));
  forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
    out.values[linear] = roundTo(
        resultType, fn(a.values[broadcastIndex(a.shape, *shape, index)],
                       b.values[broadcastIndex(b.shape, *shape, index)]));
  });
  return out;
}

std::pair<int64_t, int64_t> sliceRange(int64_t dim, int64_t start, int64_t end,
                                       int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) {
    return std::max(lo, std::min(v, hi));
  };
  if (start < 0)
    start = start <= -dim ? 0 : start + dim;
  if (end < 0)
    end = end <= -dim ? -1 : end + dim;
  // start and end are clamped to [-1, dim]; the sizes are computed without
  // `step - 1` or `-step`, which overflow for the extreme steps.
  if (step > 0) {
    start = clamp(start, 0, dim);
    end = clamp(end, 0, dim);
    int64_t size = end > start ? (end - start - 1) / step + 1 : 0;
    return {start, size};
  }
  start = clamp(start, 0, dim - 1);
  end = clamp(end, -1, dim - 1);
  uint64_t stride = -static_cast<uint64_t>(step);
  int64_t size = start > end
                     ? static_cast<int64_t>(
                           static_cast<uint64_t>(start - end - 1) / stride + 1)
                     : 0;
  return {start, size};
}

int64_t HostTensor::asInt(int64_t i) const {
  double v = values[i];
  if (std::isnan(v))
    return std::numeric_limits<int64_t>::min();
  if (v >= 9.2e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::vector<int64_t> HostTensor::ints() const {
  std::vector<int64_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = asInt(i);
  return out;
}

HostTensor HostTensor::scalar(int32_t elemType, double value) {
  HostTensor t;
  t.elemType = elemType;
  t.values = {value};
  return t;
}

HostTensor hostSlice(const HostTensor &in, int64_t axis, int64_t offset,
                     int64_t size) {
  HostTensor out;
  out.elemType = in.elemType;
  out.shape = in.shape;
  out.shape[axis] = size;
  int64_t outer = 1, inner = 1, dim = in.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= in.shape[d];
  for (size_t d = axis + 1; d < in.shape.size(); ++d)
    inner *= in.shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    auto from = in.values.begin() + (o * dim + offset) * inner;
    out.values.insert(out.values.end(), from, from + size * inner);
  }
  return out;
}

Shape shapeOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

void LayerTagger::notifyOperationInserted(Operation *op,
                                          OpBuilder::InsertPoint) {
  if (layer)
    op->setAttr(part::PartDialect::getLayerAttrName(), layer);
}

} // namespace partition::import::detail
