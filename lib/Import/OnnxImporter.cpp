//===- OnnxImporter.cpp - ONNX models to the part dialect -----------------===//
//
// One pass over the graph in its (topological) node order. Every value is
// either known on the host (constants, shapes, the shape arithmetic on them,
// boolean masks) and evaluated here in double precision, or a run-time value
// with a static type, translated to `part` ops. Host values reach the IR only
// when a run-time op consumes them, as `part.constant`s. Floating-point
// initializers with more than one element are parameters: function arguments
// named after the initializer, their data collected in `weights`.
//
// Ops built for a node inside a numbered module (`/h.3/...`, torch's
// ModuleList entries) carry its index as `part.layer`.
//
// Only the protobuf classes of libonnx are used: no schemas, no shape
// inference (Debian's libonnx stops at opset 17; partition supports 13..21).
// See docs/design/2026-12-02-onnx-import.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Import/OnnxImporter.h"

#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace partition;
using namespace partition::import;
namespace part = partition::part;

namespace {

/// The lowest and highest `ai.onnx` opset the importer translates.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 21;

using Shape = std::vector<int64_t>;

/// The element count of a shape whose count is known to fit (checked by
/// checkedNumElements when the shape was made).
int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// The element count of `shape`; nullopt when a dimension is negative or
/// the count overflows int64.
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

/// `name` as it is printed in a diagnostic: bytes that are not printable
/// ASCII as \xNN.
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

/// The file-safe form of a name from the model, which becomes a `part.name`
/// and later a file name (partition-run --output-dir writes DIR/NAME.npy):
/// leading '/' and '\\' are dropped and the others become '.', as a module
/// path does ("dense/kernel" gives "dense.kernel"). Returns nullopt and says
/// why in `why` for a name that no renaming makes safe: empty, a '.' or '..'
/// path component, a control character.
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

/// Bytes per element of the ONNX types whose data the importer can read.
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

/// A tensor known on the host. Values are held as doubles whatever the ONNX
/// element type (exact for the integers of shape arithmetic); `elemType` says
/// what they stand for.
struct HostTensor {
  int32_t elemType = onnx::TensorProto::FLOAT;
  Shape shape;
  std::vector<double> values;

  int64_t size() const { return static_cast<int64_t>(values.size()); }
  int64_t asInt(int64_t i) const {
    double v = values[i];
    if (std::isnan(v))
      return std::numeric_limits<int64_t>::min();
    if (v >= 9.2e18)
      return std::numeric_limits<int64_t>::max();
    if (v <= -9.2e18)
      return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  }
  std::vector<int64_t> ints() const {
    std::vector<int64_t> out(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      out[i] = asInt(i);
    return out;
  }
};

/// Rounds `v` to what an element of `type` can hold.
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

/// numpy broadcasting of two shapes; nullopt when they do not broadcast.
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

/// Index into a tensor of shape `from` for the element of the broadcast shape
/// `to` at multi-index `index`.
int64_t broadcastIndex(const Shape &from, const Shape &to,
                       const Shape &index) {
  int64_t offset = 0, stride = 1;
  size_t lead = to.size() - from.size();
  for (int64_t i = static_cast<int64_t>(from.size()) - 1; i >= 0; --i) {
    int64_t idx = from[i] == 1 ? 0 : index[i + lead];
    offset += idx * stride;
    stride *= from[i];
  }
  return offset;
}

/// Calls `fn(multiIndex, linear)` for every element of `shape`.
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

/// The layer of a node named by its module path, as torch.onnx.export
/// names nodes: the index of the first path component `<name>.<index>`
/// ("/transformer/h.3/attn/MatMul", "/model/layers.3/mlp/Mul",
/// "/encoder/layer.3/Add" are in layer 3); none for other names.
std::optional<int64_t> layerOfNodeName(StringRef name) {
  if (!name.consume_front("/"))
    return std::nullopt;
  SmallVector<StringRef> components;
  name.split(components, '/');
  components.pop_back(); // the node's own name ("MatMul_3")
  for (StringRef component : components) {
    auto [module, index] = component.rsplit('.');
    uint64_t value;
    if (!module.empty() && !index.empty() &&
        (isalpha(module.front()) || module.front() == '_') &&
        !index.getAsInteger(10, value) && value <= INT64_MAX)
      return static_cast<int64_t>(value);
  }
  return std::nullopt;
}

/// Gives the ops built for a node the node's layer (`part.layer`).
struct LayerTagger : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (layer)
      op->setAttr(part::PartDialect::getLayerAttrName(), layer);
  }
  IntegerAttr layer;
};

/// A value of the graph: on the host, or in the IR with a static type.
struct Slot {
  std::optional<HostTensor> host;
  Value value;
  /// For host values: the materialised constant, once a run-time op used it.
  Value constant;
  /// Initializers that became (or will become) parameters.
  const onnx::TensorProto *parameter = nullptr;
};

class Importer {
public:
  Importer(MLIRContext &context, StringRef path,
           const OnnxImportOptions &options, Weights &weights)
      : context(context), builder(&context), path(path.str()), options(options),
        weights(weights) {
    builder.setListener(&layerTagger);
  }

  OwningOpRef<ModuleOp> run();

private:
  // --- reading the file ---------------------------------------------------
  LogicalResult parse();
  LogicalResult checkModel();
  /// The element bytes of `tensor` (raw, typed fields or external data),
  /// little-endian in the tensor's own type.
  LogicalResult tensorBytes(const onnx::TensorProto &tensor,
                            std::string &bytes, const std::string &what);
  /// The `expected` bytes of an external tensor: a regular file inside the
  /// model's directory (no absolute path, no '..', no link leading out),
  /// with offset and length checked against the file's size.
  LogicalResult externalBytes(const onnx::TensorProto &tensor, int64_t expected,
                              std::string &bytes, const std::string &what);
  FailureOr<HostTensor> toHost(const onnx::TensorProto &tensor,
                               const std::string &what);

  // --- types and values ----------------------------------------------------
  /// The `part` element type standing for ONNX `elemType`, or null.
  Type partElementType(int32_t elemType);
  FailureOr<RankedTensorType> tensorType(int32_t elemType, const Shape &shape);
  Shape shapeOf(Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    return Shape(type.getShape().begin(), type.getShape().end());
  }
  /// The run-time value of `name`, materialising host values and parameters.
  FailureOr<Value> runtimeValue(const std::string &name);
  Value materialize(const HostTensor &host, Location loc);
  Value addParameter(const onnx::TensorProto &tensor);
  /// Checks that `node` may build a host value of `shape` (what it is:
  /// "result", "mask"): no negative dimension, at most
  /// `options.maxFoldElements` elements. Reports the shape and the numbers.
  LogicalResult checkFoldSize(const onnx::NodeProto &node, const Shape &shape,
                              StringRef what = "folded result");
  /// The `part.name` of a graph input, graph output or parameter: the
  /// model's name made file-safe (fileSafeName). Reports `what` and the
  /// name when it cannot be, or when two names of the model become one.
  FailureOr<std::string> irName(const std::string &raw, StringRef what);

  // --- nodes ---------------------------------------------------------------
  LogicalResult importNode(const onnx::NodeProto &node);
  /// Evaluates `node` on the host when all its inputs are host values and
  /// it has a host implementation; returns false when it does not apply.
  FailureOr<bool> foldNode(const onnx::NodeProto &node);
  LogicalResult translateNode(const onnx::NodeProto &node);

  InFlightDiagnostic nodeError(const onnx::NodeProto &node) {
    return emitError(nodeLoc(node))
           << "node '" << node.name() << "' (" << node.op_type() << "): ";
  }
  Location nodeLoc(const onnx::NodeProto &node) {
    return NameLoc::get(StringAttr::get(&context, node.name()),
                        FileLineColLoc::get(&context, path, 0, 0));
  }
  Location fileLoc() { return FileLineColLoc::get(&context, path, 0, 0); }

  bool hasInput(const onnx::NodeProto &node, int i) {
    return node.input_size() > i && !node.input(i).empty();
  }
  const HostTensor *hostInput(const onnx::NodeProto &node, int i) {
    if (!hasInput(node, i))
      return nullptr;
    auto it = slots.find(node.input(i));
    if (it == slots.end() || !it->second.host)
      return nullptr;
    return &*it->second.host;
  }
  /// The host value of input `i`, or an error naming the node and input.
  FailureOr<const HostTensor *> requireHost(const onnx::NodeProto &node, int i,
                                            StringRef what);
  const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                   StringRef name) {
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(const onnx::NodeProto &node, StringRef name, int64_t dflt) {
    const onnx::AttributeProto *a = attr(node, name);
    return a ? a->i() : dflt;
  }
  float floatAttr(const onnx::NodeProto &node, StringRef name, float dflt) {
    const onnx::AttributeProto *a = attr(node, name);
    return a ? a->f() : dflt;
  }
  std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto &node,
                                               StringRef name) {
    const onnx::AttributeProto *a = attr(node, name);
    if (!a)
      return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  /// Axes given by attribute (older opsets) or by input `inputIndex`.
  FailureOr<std::optional<std::vector<int64_t>>>
  axesOf(const onnx::NodeProto &node, int inputIndex);

  void setHost(const std::string &name, HostTensor host) {
    Slot &slot = slots[name];
    slot.host = std::move(host);
  }
  void setValue(const std::string &name, Value value) {
    slots[name].value = value;
  }

  // --- helpers building part ops --------------------------------------------
  Value reshape(Value v, const Shape &shape, Location loc);
  Value broadcastTo(Value v, const Shape &shape, Location loc);
  FailureOr<Value> castTo(Value v, Type elementType, Location loc);
  /// Brings both operands to one element type (host constants follow the
  /// run-time operand); fails when two run-time types differ.
  LogicalResult unifyTypes(const onnx::NodeProto &node, Value &a, Value &b);

  MLIRContext &context;
  LayerTagger layerTagger;
  OpBuilder builder;
  std::string path;
  const OnnxImportOptions &options;
  Weights &weights;

  onnx::ModelProto model;
  int64_t opset = 0;
  std::map<std::string, Slot> slots;
  std::map<std::string, const onnx::TensorProto *> initializers;
  Block *body = nullptr;
  SmallVector<DictionaryAttr> argAttrs;
  DenseMap<const onnx::TensorProto *, Value> parameterArgs;
  std::set<std::string> parameterNames;
  /// Model names and the IR names they became, and back.
  std::map<std::string, std::string> irNames, irNameOwners;
  /// The node being imported, for naming parameters after their first user.
  const onnx::NodeProto *currentNode = nullptr;
};

//===----------------------------------------------------------------------===//
// Reading the file
//===----------------------------------------------------------------------===//

LogicalResult Importer::parse() {
  // A directory, a device or a FIFO is no model: reading /dev/zero would
  // never end, and opening a FIFO blocks until someone writes to it.
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return emitError(UnknownLoc::get(&context))
           << "cannot read " << path << ": " << ec.message();
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return emitError(fileLoc())
           << "not a regular file ("
           << (status.type() == llvm::sys::fs::file_type::directory_file
                   ? "a directory"
                   : "a device, FIFO or socket")
           << "); partition-import reads a model from a file";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(UnknownLoc::get(&context))
           << "cannot read " << path << ": " << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty())
    return emitError(fileLoc()) << "the file is empty, not an ONNX model";
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return emitError(fileLoc())
           << "the file has " << bytes.size()
           << " bytes; ONNX models over 2 GiB keep their weights as external "
              "data";
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(fileLoc())
           << "not a valid ONNX model: the protobuf message does not parse ("
           << bytes.size() << " bytes; truncated or not an .onnx file)";
  return checkModel();
}

LogicalResult Importer::checkModel() {
  // protobuf accepts an empty message, and any prefix of a model that ends on
  // a field boundary: require what every exported model has.
  if (model.ir_version() <= 0)
    return emitError(fileLoc())
           << "not a valid ONNX model: no ir_version (truncated or not an "
              ".onnx file)";
  bool found = false;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      found = true;
      opset = id.version();
    }
  }
  if (!found)
    return emitError(fileLoc())
           << "the model imports no 'ai.onnx' opset; partition supports "
              "opsets "
           << kMinOpset << " to " << kMaxOpset;
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc())
           << "the model uses opset " << opset << "; partition supports "
           << kMinOpset << " to " << kMaxOpset
           << (opset < kMinOpset ? " (convert it with "
                                   "onnx.version_converter.convert_version)"
                                 : "");
  if (!model.has_graph() || model.graph().output_size() == 0)
    return emitError(fileLoc())
           << "not a valid ONNX model: it has no graph or the graph has no "
              "outputs (truncated?)";
  return success();
}

LogicalResult Importer::tensorBytes(const onnx::TensorProto &tensor,
                                    std::string &bytes,
                                    const std::string &what) {
  int32_t type = tensor.data_type();
  int64_t elementBytes = elemTypeBytes(type);
  if (elementBytes == 0)
    return emitError(fileLoc()) << what << " has element type "
                                << elemTypeName(type)
                                << ", which partition does not support";
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return emitError(fileLoc())
             << what << " has a negative dimension: " << formatShape(shape);
  std::optional<int64_t> elements = checkedNumElements(shape);
  std::optional<int64_t> byteCount =
      elements ? llvm::checkedMul<int64_t>(*elements, elementBytes)
               : std::nullopt;
  if (!byteCount)
    return emitError(fileLoc())
           << what << " of shape " << formatShape(shape)
           << " has more than 2^63 bytes of " << elemTypeName(type);
  int64_t expected = *byteCount;

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return externalBytes(tensor, expected, bytes, what);

  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != expected)
      return emitError(fileLoc())
             << what << " has " << tensor.raw_data().size()
             << " bytes of data, expected " << expected << " for "
             << elemTypeName(type) << formatShape(shape);
    bytes = tensor.raw_data();
    return success();
  }

  int64_t n = *elements;
  bytes.assign(expected, '\0');
  auto mismatch = [&](int64_t have) {
    return emitError(fileLoc())
           << what << " has " << have << " values, expected " << n << " for "
           << elemTypeName(type) << formatShape(shape);
  };
  switch (type) {
  case onnx::TensorProto::FLOAT:
    if (tensor.float_data_size() != n)
      return mismatch(tensor.float_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.float_data().data(), expected);
    return success();
  case onnx::TensorProto::DOUBLE:
    if (tensor.double_data_size() != n)
      return mismatch(tensor.double_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.double_data().data(), expected);
    return success();
  case onnx::TensorProto::INT64:
    if (tensor.int64_data_size() != n)
      return mismatch(tensor.int64_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.int64_data().data(), expected);
    return success();
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::UINT32:
    if (tensor.uint64_data_size() != n)
      return mismatch(tensor.uint64_data_size());
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = tensor.uint64_data(i);
      std::memcpy(bytes.data() + i * elementBytes, &v, elementBytes);
    }
    return success();
  default:
    // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16: int32_data
    // holds one element per entry (the bits, for the 16-bit floats).
    if (tensor.int32_data_size() != n)
      return mismatch(tensor.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = tensor.int32_data(i);
      std::memcpy(bytes.data() + i * elementBytes, &v, elementBytes);
    }
    return success();
  }
}

LogicalResult Importer::externalBytes(const onnx::TensorProto &tensor,
                                      int64_t expected, std::string &bytes,
                                      const std::string &what) {
  namespace fs = llvm::sys::fs;
  namespace sp = llvm::sys::path;
  std::string location;
  std::optional<int64_t> offset, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    if (entry.key() != "offset" && entry.key() != "length")
      continue;
    int64_t value;
    if (StringRef(entry.value()).getAsInteger(10, value) || value < 0)
      return emitError(fileLoc())
             << what << ": external data " << entry.key() << " '"
             << printable(entry.value()) << "' is not a non-negative integer";
    (entry.key() == "offset" ? offset : length) = value;
  }
  auto bad = [&](const Twine &why) {
    return emitError(fileLoc()) << what << ": external data location '"
                                << printable(location) << "' " << why;
  };
  if (location.empty())
    return bad("is empty");
  if (StringRef(location).contains('\0'))
    return bad("has a NUL byte");
  if (sp::is_absolute(location) || location.front() == '/')
    return bad("is an absolute path; it must be relative to the model's "
               "directory");
  for (auto it = sp::begin(location), e = sp::end(location); it != e; ++it)
    if (*it == "..")
      return bad("has a '..' component; it must stay inside the model's "
                 "directory");

  // Resolve links, then require the file inside the model's directory.
  SmallString<256> dir(sp::parent_path(path));
  if (dir.empty())
    dir = ".";
  SmallString<256> realDir, file(dir), realFile;
  sp::append(file, location);
  if (std::error_code ec = fs::real_path(dir, realDir))
    return bad("cannot be resolved: " + ec.message());
  if (std::error_code ec = fs::real_path(file, realFile))
    return emitError(fileLoc()) << what << ": cannot read external data "
                                << file << ": " << ec.message();
  StringRef inside = realFile;
  if (!inside.consume_front(realDir) || inside.empty() ||
      !sp::is_separator(inside.front()))
    return bad("resolves to " + realFile + ", outside the model's directory " +
               realDir);
  fs::file_status status;
  if (std::error_code ec = fs::status(realFile, status))
    return emitError(fileLoc()) << what << ": cannot read external data "
                                << file << ": " << ec.message();
  if (status.type() != fs::file_type::regular_file)
    return bad("is not a regular file");
  uint64_t size = status.getSize();
  uint64_t from = offset.value_or(0);
  if (from > size)
    return emitError(fileLoc())
           << what << ": external data " << file << " has " << size
           << " bytes; offset " << from << " is past its end";
  uint64_t count = length ? static_cast<uint64_t>(*length) : size - from;
  if (count != static_cast<uint64_t>(expected) || count > size - from)
    return emitError(fileLoc())
           << what << ": external data " << file << " at offset " << from
           << " with length " << count << " does not hold the " << expected
           << " bytes of " << elemTypeName(tensor.data_type())
           << formatShape(Shape(tensor.dims().begin(), tensor.dims().end()))
           << " (file size " << size << ")";
  auto buffer = llvm::MemoryBuffer::getFileSlice(realFile, count, from);
  if (!buffer)
    return emitError(fileLoc()) << what << ": cannot read external data "
                                << file << ": " << buffer.getError().message();
  bytes.assign((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  return success();
}

/// Element `i` of little-endian `T`s at `p`, as a double.
template <typename T>
double loadAs(const char *p, int64_t i) {
  T x;
  std::memcpy(&x, p + sizeof(T) * i, sizeof(T));
  return static_cast<double>(x);
}

FailureOr<HostTensor> Importer::toHost(const onnx::TensorProto &tensor,
                                       const std::string &what) {
  std::string bytes;
  if (failed(tensorBytes(tensor, bytes, what)))
    return failure();
  HostTensor host;
  host.elemType = tensor.data_type();
  host.shape.assign(tensor.dims().begin(), tensor.dims().end());
  // tensorBytes accepted the type, so it is one of these.
  double (*load)(const char *, int64_t) = nullptr;
  switch (host.elemType) {
  case onnx::TensorProto::FLOAT:
    load = loadAs<float>;
    break;
  case onnx::TensorProto::DOUBLE:
    load = loadAs<double>;
    break;
  case onnx::TensorProto::FLOAT16:
    load = [](const char *p, int64_t i) {
      return static_cast<double>(
          runtime::halfToFloat(static_cast<uint16_t>(loadAs<uint16_t>(p, i))));
    };
    break;
  case onnx::TensorProto::BFLOAT16:
    load = [](const char *p, int64_t i) {
      return static_cast<double>(
          runtime::bf16ToFloat(static_cast<uint16_t>(loadAs<uint16_t>(p, i))));
    };
    break;
  case onnx::TensorProto::INT64:
    load = loadAs<int64_t>;
    break;
  case onnx::TensorProto::UINT64:
    load = loadAs<uint64_t>;
    break;
  case onnx::TensorProto::INT32:
    load = loadAs<int32_t>;
    break;
  case onnx::TensorProto::UINT32:
    load = loadAs<uint32_t>;
    break;
  case onnx::TensorProto::INT16:
    load = loadAs<int16_t>;
    break;
  case onnx::TensorProto::UINT16:
    load = loadAs<uint16_t>;
    break;
  case onnx::TensorProto::INT8:
    load = loadAs<int8_t>;
    break;
  default: // UINT8, BOOL
    load = loadAs<uint8_t>;
    break;
  }
  int64_t n = numElements(host.shape);
  host.values.resize(n);
  for (int64_t i = 0; i < n; ++i)
    host.values[i] = load(bytes.data(), i);
  return host;
}

//===----------------------------------------------------------------------===//
// Types and values
//===----------------------------------------------------------------------===//

Type Importer::partElementType(int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto::FLOAT:
    return builder.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return builder.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return builder.getBF16Type();
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL: // booleans are i32 0 / 1 in part
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return builder.getI32Type();
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT32:
    return builder.getI64Type();
  default:
    return nullptr;
  }
}

FailureOr<RankedTensorType> Importer::tensorType(int32_t elemType,
                                                 const Shape &shape) {
  Type element = partElementType(elemType);
  if (!element)
    return failure();
  return RankedTensorType::get(shape, element);
}

Value Importer::materialize(const HostTensor &host, Location loc) {
  Type element = partElementType(host.elemType);
  if (!element || host.elemType == onnx::TensorProto::DOUBLE)
    element = builder.getF32Type(); // float64 host values enter as f32
  auto type = RankedTensorType::get(host.shape, element);
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    values.reserve(host.values.size());
    for (double v : host.values) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(f);
    }
    attr = DenseElementsAttr::get(type, values);
  } else {
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> values;
    values.reserve(host.values.size());
    for (int64_t i = 0; i < host.size(); ++i)
      values.push_back(APInt(width, static_cast<uint64_t>(host.asInt(i)),
                             /*isSigned=*/true, /*implicitTrunc=*/true));
    attr = DenseElementsAttr::get(type, values);
  }
  return part::ConstantOp::create(builder, loc, type, attr);
}

LogicalResult Importer::checkFoldSize(const onnx::NodeProto &node,
                                      const Shape &shape, StringRef what) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return nodeError(node) << "the " << what << " would have the shape "
                           << formatShape(shape)
                           << ", with a negative dimension";
  std::optional<int64_t> n = checkedNumElements(shape);
  if (!n)
    return nodeError(node) << "the " << what << " " << formatShape(shape)
                           << " would have more than 2^63 elements";
  if (*n > options.maxFoldElements)
    return nodeError(node) << "the " << what << " " << formatShape(shape)
                           << " would have " << *n
                           << " elements; partition folds constants of at "
                              "most "
                           << options.maxFoldElements
                           << " elements (--max-fold-elements)";
  return success();
}

FailureOr<std::string> Importer::irName(const std::string &raw,
                                        StringRef what) {
  auto known = irNames.find(raw);
  if (known != irNames.end())
    return known->second;
  std::string why;
  std::optional<std::string> safe = fileSafeName(raw, why);
  if (!safe) {
    emitError(fileLoc()) << what << " '" << printable(raw) << "' " << why
                         << "; names from the model become file names";
    return failure();
  }
  auto [owner, inserted] = irNameOwners.emplace(*safe, raw);
  if (!inserted) {
    emitError(fileLoc()) << what << " '" << printable(raw) << "' and '"
                         << printable(owner->second) << "' both become '"
                         << printable(*safe)
                         << "' ('/' in a name becomes '.'); rename one";
    return failure();
  }
  irNames[raw] = *safe;
  return *safe;
}

Value Importer::addParameter(const onnx::TensorProto &tensor) {
  auto it = parameterArgs.find(&tensor);
  if (it != parameterArgs.end())
    return it->second;
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(shape, partElementType(tensor.data_type()));
  // Exporters name the initializers they create by constant folding
  // "onnx::MatMul_123" (torch folds a Linear's transposed weight into one);
  // such a parameter is named after its first user instead:
  // node "/h.0/attn/c_proj/MatMul" gives "h.0.attn.c_proj.weight".
  // The initializer's name was made file-safe when it was registered.
  std::string name = irNames.at(tensor.name());
  if (StringRef(name).starts_with("onnx::") && currentNode &&
      StringRef(currentNode->name()).starts_with("/")) {
    StringRef scope = StringRef(currentNode->name()).drop_front();
    scope = scope.rsplit('/').first;
    if (!scope.empty() && scope != StringRef(currentNode->name()).drop_front()) {
      std::string derived = scope.str();
      std::replace(derived.begin(), derived.end(), '/', '.');
      derived += ".weight";
      std::string why;
      std::optional<std::string> safe = fileSafeName(derived, why);
      if (safe && !initializers.count(*safe) && !parameterNames.count(*safe) &&
          !irNameOwners.count(*safe)) {
        irNameOwners.emplace(*safe, tensor.name());
        name = *safe;
      }
    }
  }
  parameterNames.insert(name);
  Value arg = body->addArgument(
      type, NameLoc::get(StringAttr::get(&context, name), fileLoc()));
  argAttrs.push_back(builder.getDictionaryAttr(
      {builder.getNamedAttr(part::PartDialect::getNameAttrName(),
                            builder.getStringAttr(name)),
       builder.getNamedAttr(
           part::PartDialect::getRoleAttrName(),
           part::ArgRoleAttr::get(&context, part::ArgRole::Parameter))}));
  parameterArgs[&tensor] = arg;

  WeightTensor weight;
  weight.name = name;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT16:
    weight.dtype = runtime::DType::F16;
    break;
  case onnx::TensorProto::BFLOAT16:
    weight.dtype = runtime::DType::BF16;
    break;
  default:
    weight.dtype = runtime::DType::F32;
  }
  weight.shape = shape;
  std::string bytes;
  // The data was checked when the initializer was registered.
  (void)tensorBytes(tensor, bytes, "initializer '" + tensor.name() + "'");
  weight.data.assign(bytes.begin(), bytes.end());
  weights.tensors.push_back(std::move(weight));
  return arg;
}

FailureOr<Value> Importer::runtimeValue(const std::string &name) {
  auto it = slots.find(name);
  if (it == slots.end())
    return failure();
  Slot &slot = it->second;
  if (slot.value)
    return slot.value;
  if (slot.parameter) {
    slot.value = addParameter(*slot.parameter);
    return slot.value;
  }
  if (slot.host) {
    if (!slot.constant) {
      if (slot.host->elemType == onnx::TensorProto::DOUBLE ||
          !partElementType(slot.host->elemType)) {
        emitError(fileLoc())
            << "value '" << name << "' has element type "
            << elemTypeName(slot.host->elemType)
            << " and is used by a run-time op; partition computes in "
               "float32, float16, bfloat16, int32 and int64";
        return failure();
      }
      slot.constant = materialize(
          *slot.host,
          NameLoc::get(StringAttr::get(&context, name), fileLoc()));
    }
    return slot.constant;
  }
  return failure();
}

FailureOr<const HostTensor *>
Importer::requireHost(const onnx::NodeProto &node, int i, StringRef what) {
  if (!hasInput(node, i)) {
    nodeError(node) << "the " << what << " input is missing";
    return failure();
  }
  if (const HostTensor *host = hostInput(node, i))
    return host;
  nodeError(node) << "its " << what << " (input " << i << ", '"
                  << node.input(i)
                  << "') is computed at run time; partition needs it as a "
                     "constant (bind every symbolic dimension with --dim so "
                     "that shape arithmetic folds)";
  return failure();
}

FailureOr<std::optional<std::vector<int64_t>>>
Importer::axesOf(const onnx::NodeProto &node, int inputIndex) {
  if (auto fromAttr = intsAttr(node, "axes"))
    return std::optional<std::vector<int64_t>>(*fromAttr);
  if (!hasInput(node, inputIndex))
    return std::optional<std::vector<int64_t>>();
  FailureOr<const HostTensor *> axes = requireHost(node, inputIndex, "axes");
  if (failed(axes))
    return failure();
  return std::optional<std::vector<int64_t>>((*axes)->ints());
}

//===----------------------------------------------------------------------===//
// Helpers building part ops
//===----------------------------------------------------------------------===//

Value Importer::reshape(Value v, const Shape &shape, Location loc) {
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  return part::ReshapeOp::create(builder, loc, type, v);
}

Value Importer::broadcastTo(Value v, const Shape &shape, Location loc) {
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(v.getType()).getElementType());
  return part::BroadcastOp::create(builder, loc, type, v);
}

FailureOr<Value> Importer::castTo(Value v, Type elementType, Location loc) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == elementType)
    return v;
  return part::CastOp::create(builder, loc, type.clone(elementType), v)
      .getResult();
}

LogicalResult Importer::unifyTypes(const onnx::NodeProto &node, Value &a,
                                   Value &b) {
  Type ta = cast<RankedTensorType>(a.getType()).getElementType();
  Type tb = cast<RankedTensorType>(b.getType()).getElementType();
  if (ta == tb)
    return success();
  bool aConst = a.getDefiningOp<part::ConstantOp>() != nullptr;
  bool bConst = b.getDefiningOp<part::ConstantOp>() != nullptr;
  if (bConst) {
    b = *castTo(b, ta, b.getLoc());
    return success();
  }
  if (aConst) {
    a = *castTo(a, tb, a.getLoc());
    return success();
  }
  return nodeError(node) << "operands have element types " << ta << " and "
                         << tb;
}

//===----------------------------------------------------------------------===//
// Host evaluation
//===----------------------------------------------------------------------===//

/// Normalises a possibly negative axis; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

/// Binary elementwise evaluation with broadcasting.
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

/// ONNX Slice's start/end clamping for one axis; returns {start, size}.
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

/// The operator set the host evaluator knows.
const std::set<std::string> &hostOps() {
  static const std::set<std::string> ops = {
      "Constant", "Shape", "Size", "Identity", "Cast", "CastLike",
      "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Reshape",
      "Flatten", "Transpose", "Expand", "ConstantOfShape", "Range",
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Equal",
      "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And",
      "Or", "Xor", "Where", "Neg", "Abs", "Sqrt", "Reciprocal", "Exp",
      "Log", "Sin", "Cos", "Floor", "Ceil", "Trilu", "ReduceProd",
      "Dropout", "Sign"};
  return ops;
}

/// The operator set translated to part ops for run-time values.
const std::set<std::string> &runtimeOps() {
  static const std::set<std::string> ops = {"Add",        "Sub",
                                            "Mul",        "Div",
                                            "Pow",        "Max",
                                            "Min",        "Sum",
                                            "Neg",        "Exp",
                                            "Log",        "Sqrt",
                                            "Reciprocal", "Tanh",
                                            "Sigmoid",    "Relu",
                                            "Erf",        "Cos",
                                            "Sin",        "Gelu",
                                            "Identity",   "Dropout",
                                            "MatMul",     "Gemm",
                                            "Softmax",    "LayerNormalization",
                                            "ReduceMean", "ReduceSum",
                                            "ReduceMax",  "Reshape",
                                            "Flatten",    "Transpose",
                                            "Unsqueeze",  "Squeeze",
                                            "Concat",     "Slice",
                                            "Split",      "Gather",
                                            "Cast",       "CastLike",
                                            "Where",      "Expand",
                                            "Constant",   "Shape",
                                            "Size",       "ConstantOfShape",
                                            "Trilu"};
  return ops;
}

FailureOr<bool> Importer::foldNode(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  if (!hostOps().count(op))
    return false;
  // Shape and Size need only a static type; everything else host inputs.
  if (op == "Shape" || op == "Size") {
    Shape shape;
    if (const HostTensor *h = hostInput(node, 0))
      shape = h->shape;
    else if (FailureOr<Value> v = runtimeValue(node.input(0)); succeeded(v))
      shape = shapeOf(*v);
    else
      return false;
    HostTensor out;
    out.elemType = onnx::TensorProto::INT64;
    if (op == "Size") {
      out.values = {static_cast<double>(numElements(shape))};
    } else {
      int64_t rank = static_cast<int64_t>(shape.size());
      int64_t start = intAttr(node, "start", 0);
      int64_t end = intAttr(node, "end", rank);
      if (start < 0)
        start += rank;
      if (end < 0)
        end += rank;
      start = std::clamp<int64_t>(start, 0, rank);
      end = std::clamp<int64_t>(end, 0, rank);
      for (int64_t i = start; i < end; ++i)
        out.values.push_back(static_cast<double>(shape[i]));
      out.shape = {static_cast<int64_t>(out.values.size())};
    }
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "Constant") {
    HostTensor out;
    if (const onnx::AttributeProto *a = attr(node, "value")) {
      FailureOr<HostTensor> t =
          toHost(a->t(), "the value of node '" + node.name() + "'");
      if (failed(t))
        return failure();
      out = std::move(*t);
    } else if (const onnx::AttributeProto *a = attr(node, "value_float")) {
      out.values = {a->f()};
    } else if (const onnx::AttributeProto *a = attr(node, "value_floats")) {
      out.values.assign(a->floats().begin(), a->floats().end());
      out.shape = {a->floats_size()};
    } else if (const onnx::AttributeProto *a = attr(node, "value_int")) {
      out.elemType = onnx::TensorProto::INT64;
      out.values = {static_cast<double>(a->i())};
    } else if (const onnx::AttributeProto *a = attr(node, "value_ints")) {
      out.elemType = onnx::TensorProto::INT64;
      for (int64_t v : a->ints())
        out.values.push_back(static_cast<double>(v));
      out.shape = {a->ints_size()};
    } else {
      nodeError(node) << "a Constant needs value, value_float(s) or "
                         "value_int(s) (sparse and string constants are not "
                         "supported)";
      return failure();
    }
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "ConstantOfShape") {
    FailureOr<const HostTensor *> shape = requireHost(node, 0, "shape");
    if (failed(shape))
      return failure();
    HostTensor out;
    out.shape = (*shape)->ints();
    if (failed(checkFoldSize(node, out.shape)))
      return failure();
    double fill = 0;
    if (const onnx::AttributeProto *a = attr(node, "value")) {
      FailureOr<HostTensor> t = toHost(a->t(), "the value of '" + node.name() + "'");
      if (failed(t))
        return failure();
      out.elemType = t->elemType;
      fill = t->values.empty() ? 0 : t->values[0];
    }
    out.values.assign(numElements(out.shape), fill);
    setHost(node.output(0), std::move(out));
    return true;
  }

  // The remaining ops fold only when every input is a host value.
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && !hostInput(node, i))
      return false;
  const HostTensor *a = hostInput(node, 0);
  const HostTensor *b = hostInput(node, 1);
  auto bad = [&](const Twine &why) -> FailureOr<bool> {
    nodeError(node) << why;
    return failure();
  };
  auto binary =
      [&](int32_t type,
          std::function<double(double, double)> fn) -> FailureOr<bool> {
    std::optional<Shape> shape = broadcastShapes(a->shape, b->shape);
    if (!shape)
      return bad("operand shapes " + formatShape(a->shape) + " and " +
                 formatShape(b->shape) + " do not broadcast");
    if (failed(checkFoldSize(node, *shape)))
      return failure();
    std::optional<HostTensor> out = hostBinary(*a, *b, type, fn);
    setHost(node.output(0), std::move(*out));
    return true;
  };
  auto unary = [&](std::function<double(double)> fn) -> FailureOr<bool> {
    HostTensor out = *a;
    for (double &v : out.values)
      v = roundTo(out.elemType, fn(v));
    setHost(node.output(0), std::move(out));
    return true;
  };
  const int32_t boolType = onnx::TensorProto::BOOL;
  bool isInt = a && !isFloatElemType(a->elemType);

  if (op == "Identity" || op == "Dropout") {
    setHost(node.output(0), *a);
    return true;
  }
  if (op == "Add")
    return binary(a->elemType, [](double x, double y) { return x + y; });
  if (op == "Sub")
    return binary(a->elemType, [](double x, double y) { return x - y; });
  if (op == "Mul")
    return binary(a->elemType, [](double x, double y) { return x * y; });
  // An integer division by zero has no value: folded into a shape it would
  // silently become some size.
  if ((op == "Div" || op == "Mod") && isInt &&
      llvm::is_contained(b->values, 0.0))
    return bad("integer " + Twine(op == "Div" ? "division" : "modulo") +
               " by zero: the divisor '" + printable(node.input(1)) + "' is " +
               formatShape(b->ints()));
  if (op == "Div")
    return binary(a->elemType, [isInt](double x, double y) {
      if (isInt)
        return std::trunc(x / y);
      return x / y;
    });
  if (op == "Pow")
    return binary(a->elemType, [](double x, double y) { return std::pow(x, y); });
  if (op == "Max" || op == "Min") {
    // Variadic: the maximum or minimum of all inputs, one after the other.
    HostTensor acc = *a;
    for (int i = 1; i < node.input_size(); ++i) {
      const HostTensor *next = hostInput(node, i);
      std::optional<Shape> shape = broadcastShapes(acc.shape, next->shape);
      if (!shape)
        return bad("operand shapes " + formatShape(acc.shape) + " and " +
                   formatShape(next->shape) + " do not broadcast");
      if (failed(checkFoldSize(node, *shape)))
        return failure();
      acc = *hostBinary(acc, *next, a->elemType,
                        [max = op == "Max"](double x, double y) {
                          return max ? std::max(x, y) : std::min(x, y);
                        });
    }
    setHost(node.output(0), std::move(acc));
    return true;
  }
  if (op == "Mod")
    return binary(a->elemType, [isInt](double x, double y) {
      double r = std::fmod(x, y);
      if (isInt && r != 0 && ((r < 0) != (y < 0)))
        r += y;
      return r;
    });
  if (op == "Equal")
    return binary(boolType, [](double x, double y) { return x == y ? 1.0 : 0.0; });
  if (op == "Less")
    return binary(boolType, [](double x, double y) { return x < y ? 1.0 : 0.0; });
  if (op == "LessOrEqual")
    return binary(boolType, [](double x, double y) { return x <= y ? 1.0 : 0.0; });
  if (op == "Greater")
    return binary(boolType, [](double x, double y) { return x > y ? 1.0 : 0.0; });
  if (op == "GreaterOrEqual")
    return binary(boolType, [](double x, double y) { return x >= y ? 1.0 : 0.0; });
  if (op == "And")
    return binary(boolType, [](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; });
  if (op == "Or")
    return binary(boolType, [](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; });
  if (op == "Xor")
    return binary(boolType, [](double x, double y) { return ((x != 0) != (y != 0)) ? 1.0 : 0.0; });
  if (op == "Not")
    return unary([](double x) { return x != 0 ? 0.0 : 1.0; });
  if (op == "Neg")
    return unary([](double x) { return -x; });
  if (op == "Abs")
    return unary([](double x) { return std::fabs(x); });
  if (op == "Sign")
    return unary([](double x) { return double((x > 0) - (x < 0)); });
  if (op == "Sqrt")
    return unary([](double x) { return std::sqrt(x); });
  if (op == "Reciprocal")
    return unary([](double x) { return 1.0 / x; });
  if (op == "Exp")
    return unary([](double x) { return std::exp(x); });
  if (op == "Log")
    return unary([](double x) { return std::log(x); });
  if (op == "Sin")
    return unary([](double x) { return std::sin(x); });
  if (op == "Cos")
    return unary([](double x) { return std::cos(x); });
  if (op == "Floor")
    return unary([](double x) { return std::floor(x); });
  if (op == "Ceil")
    return unary([](double x) { return std::ceil(x); });
  if (op == "Cast" || op == "CastLike") {
    if (op == "Cast" && !attr(node, "to"))
      return bad("a Cast needs the 'to' attribute");
    int32_t to = op == "Cast" ? static_cast<int32_t>(intAttr(node, "to", 1))
                              : b->elemType;
    HostTensor out = *a;
    out.elemType = to;
    for (double &v : out.values)
      v = roundTo(to, v);
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "Where") {
    const HostTensor *c = hostInput(node, 2);
    std::optional<Shape> s1 = broadcastShapes(a->shape, b->shape);
    std::optional<Shape> shape = s1 ? broadcastShapes(*s1, c->shape) : s1;
    if (!shape)
      return bad("operand shapes do not broadcast");
    if (failed(checkFoldSize(node, *shape)))
      return failure();
    HostTensor out;
    out.elemType = b->elemType;
    out.shape = *shape;
    out.values.resize(numElements(*shape));
    forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
      out.values[linear] =
          a->values[broadcastIndex(a->shape, *shape, index)] != 0
              ? b->values[broadcastIndex(b->shape, *shape, index)]
              : c->values[broadcastIndex(c->shape, *shape, index)];
    });
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "ReduceProd") {
    if (!a->shape.empty() && a->shape.size() != 1)
      return false;
    HostTensor out;
    out.elemType = a->elemType;
    double p = 1;
    for (double v : a->values)
      p *= v;
    out.values = {p};
    if (intAttr(node, "keepdims", 1))
      out.shape = {1};
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "Range") {
    const HostTensor *c = hostInput(node, 2);
    if (a->size() != 1 || b->size() != 1 || c->size() != 1)
      return bad("start, limit and delta must be scalars; they have " +
                 Twine(a->size()) + ", " + Twine(b->size()) + " and " +
                 Twine(c->size()) + " elements");
    double start = a->values[0], limit = b->values[0], delta = c->values[0];
    if (delta == 0)
      return bad("Range with delta 0");
    double count = std::ceil((limit - start) / delta);
    auto num = [](double v) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.17g", v);
      return std::string(text);
    };
    std::string range =
        "Range from " + num(start) + " to " + num(limit) + " by " + num(delta);
    if (!std::isfinite(count))
      return bad(range + " has no finite length");
    if (count > static_cast<double>(options.maxFoldElements))
      return bad(range + " would have " + num(count) +
                 " elements; partition folds constants of at most " +
                 Twine(options.maxFoldElements) +
                 " elements (--max-fold-elements)");
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    HostTensor out;
    out.elemType = a->elemType;
    out.shape = {n};
    for (int64_t i = 0; i < n; ++i)
      out.values.push_back(roundTo(a->elemType, start + i * delta));
    setHost(node.output(0), std::move(out));
    return true;
  }
  if (op == "Trilu") {
    if (b && b->size() != 1)
      return bad("k must be a scalar; it has " + Twine(b->size()) +
                 " elements");
    int64_t k = b ? b->asInt(0) : 0;
    bool upper = intAttr(node, "upper", 1);
    if (a->shape.size() < 2)
      return bad("Trilu needs rank at least 2");
    HostTensor out = *a;
    int64_t rows = a->shape[a->shape.size() - 2],
            cols = a->shape.back();
    for (int64_t i = 0; i < out.size(); ++i) {
      int64_t r = (i / cols) % rows, col = i % cols;
      bool keep = upper ? col - r >= k : col - r <= k;
      if (!keep)
        out.values[i] = 0;
    }
    setHost(node.output(0), std::move(out));
    return true;
  }

  // Data movement on host tensors.
  int64_t rank = a ? static_cast<int64_t>(a->shape.size()) : 0;
  if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" ||
      op == "Squeeze" || op == "Expand" || op == "Transpose" ||
      op == "Gather" || op == "Slice" || op == "Concat") {
    // These share their shape logic with the run-time translation; the host
    // version computes the same thing element by element.
    HostTensor out;
    out.elemType = a->elemType;
    if (op == "Concat") {
      int64_t r = rank;
      std::optional<int64_t> axis = normalizeAxis(intAttr(node, "axis", 0), r);
      if (!axis)
        return bad("axis out of range");
      Shape shape = a->shape;
      shape[*axis] = 0;
      for (int i = 0; i < node.input_size(); ++i) {
        const HostTensor *in = hostInput(node, i);
        if (static_cast<int64_t>(in->shape.size()) != r)
          return bad("operands have different ranks");
        for (int64_t d = 0; d < r; ++d)
          if (d != *axis && in->shape[d] != a->shape[d])
            return bad("operands of shapes " + formatShape(a->shape) + " and " +
                       formatShape(in->shape) + " differ outside axis " +
                       Twine(*axis));
        shape[*axis] += in->shape[*axis];
      }
      out.shape = shape;
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= shape[d];
      for (int64_t d = *axis + 1; d < r; ++d)
        inner *= shape[d];
      for (int64_t o = 0; o < outer; ++o)
        for (int i = 0; i < node.input_size(); ++i) {
          const HostTensor *in = hostInput(node, i);
          int64_t chunk = in->shape[*axis] * inner;
          out.values.insert(out.values.end(),
                            in->values.begin() + o * chunk,
                            in->values.begin() + (o + 1) * chunk);
        }
      setHost(node.output(0), std::move(out));
      return true;
    }
    if (op == "Transpose") {
      std::vector<int64_t> perm(rank);
      std::iota(perm.rbegin(), perm.rend(), 0);
      if (auto p = intsAttr(node, "perm"))
        perm = *p;
      std::vector<int64_t> sorted = perm;
      llvm::sort(sorted);
      for (int64_t i = 0; i < static_cast<int64_t>(sorted.size()); ++i)
        if (static_cast<int64_t>(sorted.size()) != rank || sorted[i] != i)
          return bad("perm " + formatShape(perm) +
                     " is not a permutation of rank " + Twine(rank));
      Shape shape(rank);
      for (int64_t i = 0; i < rank; ++i)
        shape[i] = a->shape[perm[i]];
      Shape inStrides = stridesOf(a->shape);
      out.shape = shape;
      out.values.resize(a->values.size());
      forEachIndex(shape, [&](const Shape &index, int64_t linear) {
        int64_t src = 0;
        for (int64_t i = 0; i < rank; ++i)
          src += index[i] * inStrides[perm[i]];
        out.values[linear] = a->values[src];
      });
      setHost(node.output(0), std::move(out));
      return true;
    }
    if (op == "Gather") {
      std::optional<int64_t> axis = normalizeAxis(intAttr(node, "axis", 0), rank);
      if (!axis)
        return bad("axis out of range");
      Shape shape(a->shape.begin(), a->shape.begin() + *axis);
      shape.insert(shape.end(), b->shape.begin(), b->shape.end());
      shape.insert(shape.end(), a->shape.begin() + *axis + 1, a->shape.end());
      int64_t outer = 1, inner = 1, dim = a->shape[*axis];
      for (int64_t d = 0; d < *axis; ++d)
        outer *= a->shape[d];
      for (int64_t d = *axis + 1; d < rank; ++d)
        inner *= a->shape[d];
      if (failed(checkFoldSize(node, shape)))
        return failure();
      out.shape = shape;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < b->size(); ++j) {
          int64_t idx = b->asInt(j);
          if (idx < 0)
            idx += dim;
          if (idx < 0 || idx >= dim)
            return bad("index " + Twine(b->asInt(j)) + " is out of range for "
                       "dimension " + Twine(dim));
          auto from = a->values.begin() + (o * dim + idx) * inner;
          out.values.insert(out.values.end(), from, from + inner);
        }
      setHost(node.output(0), std::move(out));
      return true;
    }
    if (op == "Slice") {
      std::vector<int64_t> starts = b->ints();
      std::vector<int64_t> ends = hostInput(node, 2)->ints();
      std::vector<int64_t> axes(starts.size());
      std::iota(axes.begin(), axes.end(), 0);
      if (const HostTensor *h = hostInput(node, 3))
        axes = h->ints();
      std::vector<int64_t> steps(starts.size(), 1);
      if (const HostTensor *h = hostInput(node, 4))
        steps = h->ints();
      if (ends.size() != starts.size() || axes.size() != starts.size() ||
          steps.size() != starts.size())
        return bad("starts, ends, axes and steps differ in length");
      Shape begin(rank, 0), step(rank, 1), shape = a->shape;
      for (size_t i = 0; i < starts.size(); ++i) {
        std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
        if (!axis || steps[i] == 0)
          return bad("invalid axis or step");
        auto [s, n] = sliceRange(a->shape[*axis], starts[i], ends[i], steps[i]);
        begin[*axis] = s;
        step[*axis] = steps[i];
        shape[*axis] = n;
      }
      Shape inStrides = stridesOf(a->shape);
      out.shape = shape;
      out.values.resize(numElements(shape));
      forEachIndex(shape, [&](const Shape &index, int64_t linear) {
        int64_t src = 0;
        for (int64_t i = 0; i < rank; ++i)
          src += (begin[i] + index[i] * step[i]) * inStrides[i];
        out.values[linear] = a->values[src];
      });
      setHost(node.output(0), std::move(out));
      return true;
    }
    if (op == "Expand") {
      std::optional<Shape> shape = broadcastShapes(a->shape, b->ints());
      if (!shape)
        return bad("cannot expand " + formatShape(a->shape) + " to " +
                   formatShape(b->ints()));
      if (failed(checkFoldSize(node, *shape)))
        return failure();
      out.shape = *shape;
      out.values.resize(numElements(*shape));
      forEachIndex(*shape, [&](const Shape &index, int64_t linear) {
        out.values[linear] = a->values[broadcastIndex(a->shape, *shape, index)];
      });
      setHost(node.output(0), std::move(out));
      return true;
    }
    // Reshape, Flatten, Unsqueeze, Squeeze: same values, new shape.
    out.values = a->values;
    if (op == "Flatten") {
      std::optional<int64_t> axis =
          normalizeAxis(intAttr(node, "axis", 1), rank + 1);
      if (!axis)
        return bad("axis out of range");
      int64_t outer = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= a->shape[d];
      out.shape = {outer, outer ? a->size() / outer : 0};
    } else if (op == "Reshape") {
      Shape target = b->ints();
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == 0 && !intAttr(node, "allowzero", 0)) {
          if (i >= a->shape.size())
            return bad("shape " + formatShape(b->ints()) +
                       " copies dimension " + Twine(i) + " of " +
                       formatShape(a->shape));
          target[i] = a->shape[i];
        }
        if (target[i] < -1 || (target[i] == -1 && infer >= 0))
          return bad("cannot reshape " + formatShape(a->shape) + " to " +
                     formatShape(b->ints()));
        if (target[i] == -1) {
          infer = static_cast<int64_t>(i);
        } else {
          std::optional<int64_t> next =
              llvm::checkedMul<int64_t>(known, target[i]);
          if (!next)
            return bad("cannot reshape " + formatShape(a->shape) + " to " +
                       formatShape(b->ints()));
          known = *next;
        }
      }
      if (infer >= 0)
        target[infer] = known ? a->size() / known : 0;
      if (checkedNumElements(target) != std::optional<int64_t>(a->size()))
        return bad("cannot reshape " + formatShape(a->shape) + " to " +
                   formatShape(b->ints()));
      out.shape = target;
    } else {
      FailureOr<std::optional<std::vector<int64_t>>> axes = axesOf(node, 1);
      if (failed(axes))
        return failure();
      if (op == "Unsqueeze") {
        int64_t outRank = rank + static_cast<int64_t>((*axes)->size());
        std::vector<bool> inserted(outRank, false);
        for (int64_t ax : **axes) {
          std::optional<int64_t> n = normalizeAxis(ax, outRank);
          if (!n)
            return bad("axis out of range");
          if (inserted[*n])
            return bad("axis " + Twine(ax) + " is given twice");
          inserted[*n] = true;
        }
        for (int64_t i = 0, j = 0; i < outRank; ++i)
          out.shape.push_back(inserted[i] ? 1 : a->shape[j++]);
      } else {
        std::vector<bool> removed(rank, false);
        if (*axes)
          for (int64_t ax : **axes) {
            std::optional<int64_t> n = normalizeAxis(ax, rank);
            if (!n)
              return bad("axis out of range");
            removed[*n] = true;
          }
        else
          for (int64_t i = 0; i < rank; ++i)
            removed[i] = a->shape[i] == 1;
        for (int64_t i = 0; i < rank; ++i)
          if (!removed[i])
            out.shape.push_back(a->shape[i]);
      }
    }
    setHost(node.output(0), std::move(out));
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Translation of run-time nodes
//===----------------------------------------------------------------------===//

LogicalResult Importer::translateNode(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  Location loc = nodeLoc(node);
  auto input = [&](int i) -> FailureOr<Value> {
    if (!hasInput(node, i)) {
      nodeError(node) << "input " << i << " is missing";
      return failure();
    }
    FailureOr<Value> v = runtimeValue(node.input(i));
    if (failed(v))
      nodeError(node) << "input " << i << " ('" << node.input(i)
                      << "') has no value";
    return v;
  };
  auto elementTypeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  };
  auto rankOf = [&](Value v) {
    return static_cast<int64_t>(shapeOf(v).size());
  };
  auto requireFloat = [&](Value v) -> LogicalResult {
    if (isa<FloatType>(elementTypeOf(v)))
      return success();
    return nodeError(node) << "operand of type " << v.getType()
                           << " is not a float tensor";
  };
  auto done = [&](Value v) {
    setValue(node.output(0), v);
    return success();
  };

  // --- elementwise -----------------------------------------------------------
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
      op == "Pow" || op == "Max" || op == "Min" || op == "Sum") {
    FailureOr<Value> first = input(0);
    if (failed(first))
      return failure();
    Value acc = *first;
    for (int i = 1; i < node.input_size(); ++i) {
      FailureOr<Value> next = input(i);
      if (failed(next))
        return failure();
      Value rhs = *next;
      if (op == "Pow") {
        // ONNX lets the exponent's type differ from the base's.
        if (!isa<FloatType>(elementTypeOf(acc)))
          return nodeError(node) << "integer base " << acc.getType()
                                 << ": part.pow is floating point only";
        rhs = *castTo(rhs, elementTypeOf(acc), loc);
      }
      if (failed(unifyTypes(node, acc, rhs)))
        return failure();
      if (!broadcastShapes(shapeOf(acc), shapeOf(rhs)))
        return nodeError(node)
               << "operand shapes " << formatShape(shapeOf(acc)) << " and "
               << formatShape(shapeOf(rhs)) << " do not broadcast";
      if (op == "Add" || op == "Sum")
        acc = part::AddOp::create(builder, loc, acc, rhs);
      else if (op == "Sub")
        acc = part::SubOp::create(builder, loc, acc, rhs);
      else if (op == "Mul")
        acc = part::MulOp::create(builder, loc, acc, rhs);
      else if (op == "Div")
        acc = part::DivOp::create(builder, loc, acc, rhs);
      else if (op == "Max")
        acc = part::MaxOp::create(builder, loc, acc, rhs);
      else if (op == "Min")
        acc = part::MinOp::create(builder, loc, acc, rhs);
      else {
        if (failed(requireFloat(acc)))
          return failure();
        acc = part::PowOp::create(builder, loc, acc, rhs);
      }
    }
    return done(acc);
  }
  if (op == "Neg" || op == "Exp" || op == "Log" || op == "Sqrt" ||
      op == "Tanh" || op == "Sigmoid" || op == "Relu" || op == "Erf" ||
      op == "Cos" || op == "Sin" || op == "Reciprocal" || op == "Gelu") {
    FailureOr<Value> x = input(0);
    if (failed(x) || failed(requireFloat(*x)))
      return failure();
    Value v = *x;
    Value r;
    if (op == "Neg")
      r = part::NegOp::create(builder, loc, v);
    else if (op == "Exp")
      r = part::ExpOp::create(builder, loc, v);
    else if (op == "Log")
      r = part::LogOp::create(builder, loc, v);
    else if (op == "Sqrt")
      r = part::SqrtOp::create(builder, loc, v);
    else if (op == "Tanh")
      r = part::TanhOp::create(builder, loc, v);
    else if (op == "Sigmoid")
      r = part::SigmoidOp::create(builder, loc, v);
    else if (op == "Relu")
      r = part::ReluOp::create(builder, loc, v);
    else if (op == "Erf")
      r = part::ErfOp::create(builder, loc, v);
    else if (op == "Cos")
      r = part::CosOp::create(builder, loc, v);
    else if (op == "Sin")
      r = part::SinOp::create(builder, loc, v);
    else if (op == "Gelu") {
      std::string approximate = "none";
      if (const onnx::AttributeProto *a = attr(node, "approximate"))
        approximate = a->s();
      if (approximate != "none" && approximate != "tanh")
        return nodeError(node) << "unknown approximate='" << approximate
                               << "' (expected 'none' or 'tanh')";
      r = part::GeluOp::create(builder, 
          loc, v,
          approximate == "tanh" ? part::GeluApproximation::Tanh
                                : part::GeluApproximation::Erf);
    } else { // Reciprocal
      HostTensor one;
      one.elemType = onnx::TensorProto::FLOAT;
      one.values = {1.0};
      Value c = materialize(one, loc);
      if (failed(unifyTypes(node, v, c)))
        return failure();
      r = part::DivOp::create(builder, loc, c, v);
    }
    return done(r);
  }
  if (op == "Identity" || op == "Dropout") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    if (op == "Dropout" && node.output_size() > 1 && !node.output(1).empty())
      return nodeError(node) << "the mask output of Dropout is not supported "
                                "(partition imports inference graphs)";
    return done(*x);
  }
  if (op == "Cast" || op == "CastLike") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    Type to;
    if (op == "Cast") {
      if (!attr(node, "to"))
        return nodeError(node) << "a Cast needs the 'to' attribute";
      int64_t target = intAttr(node, "to", 0);
      to = partElementType(static_cast<int32_t>(target));
      if (!to)
        return nodeError(node) << "cast to "
                               << elemTypeName(static_cast<int32_t>(target))
                               << " is not supported";
      // To bool: nonzero is true (NaN included), as a comparison with 0
      // (booleans are i32 0 / 1 in part).
      if (target == onnx::TensorProto::BOOL) {
        HostTensor zero;
        zero.values = {0.0};
        Value xv = *x, zv = materialize(zero, loc);
        if (failed(unifyTypes(node, xv, zv)))
          return failure();
        return done(part::CompareOp::create(
            builder, loc, part::ComparisonDirection::NE, xv, zv));
      }
    } else {
      FailureOr<Value> like = input(1);
      if (failed(like))
        return failure();
      to = elementTypeOf(*like);
    }
    FailureOr<Value> r = castTo(*x, to, loc);
    if (failed(r))
      return failure();
    return done(*r);
  }
  // Comparisons and logic on values computed at run time (on constants
  // they fold on the host): booleans are i32 0 / 1, so Not is 1 - x, And a
  // product, Or a maximum and Xor an inequality.
  static const std::map<std::string, part::ComparisonDirection> comparisons =
      {{"Equal", part::ComparisonDirection::EQ},
       {"Less", part::ComparisonDirection::LT},
       {"LessOrEqual", part::ComparisonDirection::LE},
       {"Greater", part::ComparisonDirection::GT},
       {"GreaterOrEqual", part::ComparisonDirection::GE},
       {"Xor", part::ComparisonDirection::NE}};
  if (auto it = comparisons.find(op);
      it != comparisons.end() || op == "And" || op == "Or") {
    FailureOr<Value> a = input(0), b = input(1);
    if (failed(a) || failed(b))
      return failure();
    Value av = *a, bv = *b;
    if (failed(unifyTypes(node, av, bv)))
      return failure();
    if (!broadcastShapes(shapeOf(av), shapeOf(bv)))
      return nodeError(node) << "operand shapes " << formatShape(shapeOf(av))
                             << " and " << formatShape(shapeOf(bv))
                             << " do not broadcast";
    if (op == "And")
      return done(part::MulOp::create(builder, loc, av, bv));
    if (op == "Or")
      return done(part::MaxOp::create(builder, loc, av, bv));
    return done(part::CompareOp::create(builder, loc, it->second, av, bv));
  }
  if (op == "Not") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    HostTensor one;
    one.elemType = onnx::TensorProto::BOOL;
    one.values = {1.0};
    Value xv = *x, ov = materialize(one, loc);
    if (failed(unifyTypes(node, xv, ov)))
      return failure();
    return done(part::SubOp::create(builder, loc, ov, xv));
  }
  if (op == "Where") {
    FailureOr<Value> c = input(0), a = input(1), b = input(2);
    if (failed(c) || failed(a) || failed(b))
      return failure();
    Value av = *a, bv = *b;
    if (failed(unifyTypes(node, av, bv)))
      return failure();
    std::optional<Shape> s1 = broadcastShapes(shapeOf(*c), shapeOf(av));
    if (!s1 || !broadcastShapes(*s1, shapeOf(bv)))
      return nodeError(node) << "operand shapes do not broadcast";
    return done(part::SelectOp::create(builder, loc, *c, av, bv));
  }

  // --- contractions ----------------------------------------------------------
  if (op == "MatMul") {
    FailureOr<Value> a = input(0), b = input(1);
    if (failed(a) || failed(b) || failed(requireFloat(*a)))
      return failure();
    Value av = *a, bv = *b;
    if (failed(unifyTypes(node, av, bv)))
      return failure();
    Shape sa = shapeOf(av), sb = shapeOf(bv);
    if (sa.empty() || sb.empty())
      return nodeError(node) << "MatMul of a scalar";
    bool vecA = sa.size() == 1, vecB = sb.size() == 1;
    if (vecA)
      av = reshape(av, {1, sa[0]}, loc), sa = {1, sa[0]};
    if (vecB)
      bv = reshape(bv, {sb[0], 1}, loc), sb = {sb[0], 1};
    int64_t k = sa.back();
    if (sb[sb.size() - 2] != k)
      return nodeError(node) << "contracting sizes differ: "
                             << formatShape(shapeOf(*a)) << " x "
                             << formatShape(shapeOf(*b));
    Value r;
    if (sb.size() == 2) {
      // x @ Wᵀ with Wᵀ an explicit Transpose (a tied output head) is a
      // matmul with transpose_b: the weight keeps its own layout.
      auto transpose = bv.getDefiningOp<part::TransposeOp>();
      if (transpose && transpose.getPermutation().size() == 2 &&
          transpose.getPermutation()[0] == 1) {
        r = part::MatmulOp::create(builder, loc, av, transpose.getInput(),
                                           /*transpose_a=*/false,
                                           /*transpose_b=*/true);
        if (transpose->use_empty())
          transpose->erase();
      } else {
        r = part::MatmulOp::create(builder, loc, av, bv);
      }
    } else {
      Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
      std::optional<Shape> batch = broadcastShapes(batchA, batchB);
      if (!batch)
        return nodeError(node) << "batch dimensions "
                               << formatShape(batchA) << " and "
                               << formatShape(batchB) << " do not broadcast";
      Shape ta = *batch, tb = *batch;
      ta.push_back(sa[sa.size() - 2]);
      ta.push_back(k);
      tb.push_back(k);
      tb.push_back(sb.back());
      av = broadcastTo(av, ta, loc);
      bv = broadcastTo(bv, tb, loc);
      if (batch->size() == 0) {
        r = part::MatmulOp::create(builder, loc, av, bv);
      } else {
        r = part::BatchMatmulOp::create(builder, loc, av, bv);
      }
    }
    Shape out = shapeOf(r);
    if (vecA)
      out.erase(out.end() - 2);
    if (vecB)
      out.pop_back();
    return done(reshape(r, out, loc));
  }
  if (op == "Gemm") {
    FailureOr<Value> a = input(0), b = input(1);
    if (failed(a) || failed(b) || failed(requireFloat(*a)))
      return failure();
    Value av = *a, bv = *b;
    if (failed(unifyTypes(node, av, bv)))
      return failure();
    bool transA = intAttr(node, "transA", 0), transB = intAttr(node, "transB", 0);
    Shape sa = shapeOf(av), sb = shapeOf(bv);
    if (sa.size() != 2 || sb.size() != 2)
      return nodeError(node) << "Gemm needs two matrices, got "
                             << formatShape(sa) << " and " << formatShape(sb);
    if ((transA ? sa[0] : sa[1]) != (transB ? sb[1] : sb[0]))
      return nodeError(node) << "contracting sizes differ: "
                             << formatShape(sa) << (transA ? "ᵀ" : "")
                             << " x " << formatShape(sb)
                             << (transB ? "ᵀ" : "");
    Value r = part::MatmulOp::create(builder, loc, av, bv, transA, transB);
    auto scale = [&](Value v, float s) -> Value {
      if (s == 1.0f)
        return v;
      HostTensor c;
      c.values = {s};
      Value cv = materialize(c, loc);
      (void)unifyTypes(node, v, cv);
      return part::MulOp::create(builder, loc, v, cv);
    };
    r = scale(r, floatAttr(node, "alpha", 1.0f));
    if (hasInput(node, 2)) {
      FailureOr<Value> c = input(2);
      if (failed(c))
        return failure();
      Value cv = scale(*c, floatAttr(node, "beta", 1.0f));
      if (failed(unifyTypes(node, r, cv)))
        return failure();
      if (!broadcastShapes(shapeOf(r), shapeOf(cv)) ||
          *broadcastShapes(shapeOf(r), shapeOf(cv)) != shapeOf(r))
        return nodeError(node) << "C of shape " << formatShape(shapeOf(cv))
                               << " does not broadcast to the product's "
                               << formatShape(shapeOf(r));
      r = part::AddOp::create(builder, loc, r, cv);
    }
    return done(r);
  }

  // --- normalisation and softmax ----------------------------------------------
  if (op == "Softmax") {
    FailureOr<Value> x = input(0);
    if (failed(x) || failed(requireFloat(*x)))
      return failure();
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(node, "axis", -1), rankOf(*x));
    if (!axis)
      return nodeError(node) << "axis " << intAttr(node, "axis", -1)
                             << " is out of range for rank " << rankOf(*x);
    return done(part::SoftmaxOp::create(builder, loc, *x, *axis));
  }
  if (op == "LayerNormalization") {
    FailureOr<Value> x = input(0), scale = input(1);
    if (failed(x) || failed(scale) || failed(requireFloat(*x)))
      return failure();
    Shape in = shapeOf(*x);
    int64_t rank = static_cast<int64_t>(in.size());
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(node, "axis", -1), rank);
    if (!axis)
      return nodeError(node) << "axis " << intAttr(node, "axis", -1)
                             << " is out of range for rank " << rank;
    // Normalisation over dimensions [axis, rank) is part.layer_norm over
    // the last dimension of x reshaped to [outer..., inner].
    int64_t inner = 1;
    for (int64_t d = *axis; d < rank; ++d)
      inner *= in[d];
    Shape flat(in.begin(), in.begin() + *axis);
    flat.push_back(inner);
    float epsilon = floatAttr(node, "epsilon", 1e-5f);
    auto affine = [&](Value v, StringRef what) -> FailureOr<Value> {
      if (numElements(shapeOf(v)) != inner ||
          !broadcastShapes(shapeOf(v), Shape(in.begin() + *axis, in.end())) ||
          *broadcastShapes(shapeOf(v), Shape(in.begin() + *axis, in.end())) !=
              Shape(in.begin() + *axis, in.end()))
        return nodeError(node) << what << " of shape "
                               << formatShape(shapeOf(v))
                               << " does not match the normalised dimensions "
                               << formatShape(Shape(in.begin() + *axis,
                                                    in.end()));
      Value r = reshape(v, {inner}, loc);
      Value xv = *x;
      if (failed(unifyTypes(node, xv, r)))
        return failure();
      return r;
    };
    FailureOr<Value> sv = affine(*scale, "scale");
    if (failed(sv))
      return failure();
    Value bias;
    if (hasInput(node, 2)) {
      FailureOr<Value> b = input(2);
      if (failed(b))
        return failure();
      FailureOr<Value> bv = affine(*b, "bias");
      if (failed(bv))
        return failure();
      bias = *bv;
    }
    Value xf = reshape(*x, flat, loc);
    Value y = part::LayerNormOp::create(builder, 
        loc, xf.getType(), xf, *sv, bias, builder.getF32FloatAttr(epsilon));
    setValue(node.output(0), reshape(y, in, loc));
    // Mean and InvStdDev, when used: over the normalised dimensions, kept
    // as size-1 dimensions.
    bool wantMean = node.output_size() > 1 && !node.output(1).empty();
    bool wantInv = node.output_size() > 2 && !node.output(2).empty();
    if (wantMean || wantInv) {
      Shape stat(in.begin(), in.begin() + *axis);
      stat.resize(rank, 1);
      Shape flatStat(in.begin(), in.begin() + *axis);
      flatStat.push_back(1);
      Type et = elementTypeOf(xf);
      int64_t last = static_cast<int64_t>(flat.size()) - 1;
      Value mean = part::ReduceMeanOp::create(builder, 
          loc, RankedTensorType::get(flatStat, et), xf,
          ArrayRef<int64_t>{last}, true);
      if (wantMean)
        setValue(node.output(1), reshape(mean, stat, loc));
      if (wantInv) {
        Value centered = part::SubOp::create(builder, loc, xf, mean);
        Value square = part::MulOp::create(builder, loc, centered, centered);
        Value var = part::ReduceMeanOp::create(builder, 
            loc, RankedTensorType::get(flatStat, et), square,
            ArrayRef<int64_t>{last}, true);
        HostTensor eps;
        eps.values = {epsilon};
        Value ev = materialize(eps, loc);
        (void)unifyTypes(node, var, ev);
        Value inv = part::RsqrtOp::create(builder, 
            loc, part::AddOp::create(builder, loc, var, ev));
        setValue(node.output(2), reshape(inv, stat, loc));
      }
    }
    return success();
  }
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax") {
    FailureOr<Value> x = input(0);
    if (failed(x) || failed(requireFloat(*x)))
      return failure();
    int64_t rank = rankOf(*x);
    FailureOr<std::optional<std::vector<int64_t>>> axes = axesOf(node, 1);
    if (failed(axes))
      return failure();
    std::vector<int64_t> dims;
    if (!*axes || (*axes)->empty()) {
      if (intAttr(node, "noop_with_empty_axes", 0))
        return done(*x);
      dims.resize(rank);
      std::iota(dims.begin(), dims.end(), 0);
    } else {
      for (int64_t ax : **axes) {
        std::optional<int64_t> n = normalizeAxis(ax, rank);
        if (!n)
          return nodeError(node) << "axis " << ax << " is out of range for "
                                 << "rank " << rank;
        dims.push_back(*n);
      }
      llvm::sort(dims);
      dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    }
    bool keep = intAttr(node, "keepdims", 1);
    Shape out;
    for (int64_t i = 0; i < rank; ++i) {
      bool reduced = llvm::is_contained(dims, i);
      if (!reduced)
        out.push_back(shapeOf(*x)[i]);
      else if (keep)
        out.push_back(1);
    }
    auto type = RankedTensorType::get(out, elementTypeOf(*x));
    Value r;
    if (op == "ReduceMean")
      r = part::ReduceMeanOp::create(builder, loc, type, *x, dims, keep);
    else if (op == "ReduceSum")
      r = part::ReduceSumOp::create(builder, loc, type, *x, dims, keep);
    else
      r = part::ReduceMaxOp::create(builder, loc, type, *x, dims, keep);
    return done(r);
  }

  // --- data movement -------------------------------------------------------
  if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" ||
      op == "Squeeze") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    Shape in = shapeOf(*x);
    int64_t rank = static_cast<int64_t>(in.size());
    Shape out;
    if (op == "Reshape") {
      FailureOr<const HostTensor *> target = requireHost(node, 1, "shape");
      if (failed(target))
        return failure();
      out = (*target)->ints();
      int64_t known = 1, infer = -1;
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !intAttr(node, "allowzero", 0)) {
          if (i >= in.size())
            return nodeError(node) << "shape " << formatShape((*target)->ints())
                                   << " copies dimension " << i << " of "
                                   << formatShape(in);
          out[i] = in[i];
        }
        if (out[i] < -1)
          return nodeError(node) << "shape " << formatShape((*target)->ints())
                                 << " has the dimension " << out[i]
                                 << " (only -1, inferred, may be negative)";
        if (out[i] == 0 && intAttr(node, "allowzero", 0))
          return nodeError(node) << "shape " << formatShape((*target)->ints())
                                 << " has a dimension 0 with allowzero "
                                    "(partition has no empty tensors)";
        if (out[i] == -1) {
          if (infer >= 0)
            return nodeError(node) << "shape " << formatShape((*target)->ints())
                                   << " has two -1 dimensions";
          infer = static_cast<int64_t>(i);
        } else {
          std::optional<int64_t> next =
              llvm::checkedMul<int64_t>(known, out[i]);
          if (!next)
            return nodeError(node) << "shape " << formatShape((*target)->ints())
                                   << " has more than 2^63 elements";
          known = *next;
        }
      }
      if (infer >= 0) {
        if (known == 0 || numElements(in) % known != 0)
          return nodeError(node) << "cannot reshape " << formatShape(in)
                                 << " to " << formatShape((*target)->ints());
        out[infer] = numElements(in) / known;
      }
      if (checkedNumElements(out) != std::optional<int64_t>(numElements(in)))
        return nodeError(node) << "cannot reshape " << formatShape(in)
                               << " (" << numElements(in) << " elements) to "
                               << formatShape((*target)->ints());
    } else if (op == "Flatten") {
      std::optional<int64_t> axis =
          normalizeAxis(intAttr(node, "axis", 1), rank + 1);
      if (!axis)
        return nodeError(node) << "axis out of range";
      int64_t outer = 1;
      for (int64_t d = 0; d < *axis; ++d)
        outer *= in[d];
      out = {outer, numElements(in) / std::max<int64_t>(outer, 1)};
    } else {
      FailureOr<std::optional<std::vector<int64_t>>> axes = axesOf(node, 1);
      if (failed(axes))
        return failure();
      if (op == "Unsqueeze") {
        if (!*axes)
          return nodeError(node) << "Unsqueeze needs axes";
        int64_t outRank = rank + static_cast<int64_t>((*axes)->size());
        std::vector<bool> inserted(outRank, false);
        for (int64_t ax : **axes) {
          std::optional<int64_t> n = normalizeAxis(ax, outRank);
          if (!n)
            return nodeError(node) << "axis " << ax << " is out of range";
          if (inserted[*n])
            return nodeError(node) << "axis " << ax << " is given twice";
          inserted[*n] = true;
        }
        for (int64_t i = 0, j = 0; i < outRank; ++i)
          out.push_back(inserted[i] ? 1 : in[j++]);
      } else {
        std::vector<bool> removed(rank, false);
        if (*axes) {
          for (int64_t ax : **axes) {
            std::optional<int64_t> n = normalizeAxis(ax, rank);
            if (!n || in[*n] != 1)
              return nodeError(node) << "cannot squeeze axis " << ax << " of "
                                     << formatShape(in);
            removed[*n] = true;
          }
        } else {
          for (int64_t i = 0; i < rank; ++i)
            removed[i] = in[i] == 1;
        }
        for (int64_t i = 0; i < rank; ++i)
          if (!removed[i])
            out.push_back(in[i]);
      }
    }
    return done(reshape(*x, out, loc));
  }
  if (op == "Transpose") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    int64_t rank = rankOf(*x);
    std::vector<int64_t> perm(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    if (auto p = intsAttr(node, "perm"))
      perm = *p;
    std::vector<int64_t> sorted = perm;
    llvm::sort(sorted);
    for (int64_t i = 0; i < rank; ++i)
      if (static_cast<int64_t>(sorted.size()) != rank || sorted[i] != i)
        return nodeError(node) << "perm " << formatShape(perm)
                               << " is not a permutation of rank " << rank;
    bool identity = true;
    for (int64_t i = 0; i < rank; ++i)
      identity &= perm[i] == i;
    if (identity)
      return done(*x);
    return done(part::TransposeOp::create(builder, loc, *x, perm));
  }
  if (op == "Expand") {
    FailureOr<Value> x = input(0);
    FailureOr<const HostTensor *> shape = requireHost(node, 1, "shape");
    if (failed(x) || failed(shape))
      return failure();
    std::optional<Shape> out = broadcastShapes(shapeOf(*x), (*shape)->ints());
    if (out && llvm::any_of(*out, [](int64_t d) { return d < 1; }))
      out.reset();
    if (!out)
      return nodeError(node) << "cannot expand " << formatShape(shapeOf(*x))
                             << " to " << formatShape((*shape)->ints());
    return done(broadcastTo(*x, *out, loc));
  }
  if (op == "Concat") {
    SmallVector<Value> inputs;
    for (int i = 0; i < node.input_size(); ++i) {
      FailureOr<Value> v = input(i);
      if (failed(v))
        return failure();
      inputs.push_back(*v);
    }
    for (Value &v : inputs)
      if (failed(unifyTypes(node, inputs.front(), v)))
        return failure();
    int64_t rank = rankOf(inputs.front());
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(node, "axis", 0), rank);
    if (!axis)
      return nodeError(node) << "axis out of range";
    for (Value v : inputs) {
      Shape s = shapeOf(v), f = shapeOf(inputs.front());
      if (s.size() != f.size())
        return nodeError(node) << "operands of shapes " << formatShape(f)
                               << " and " << formatShape(s);
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis && s[d] != f[d])
          return nodeError(node) << "operands of shapes " << formatShape(f)
                                 << " and " << formatShape(s)
                                 << " differ outside axis " << *axis;
    }
    if (inputs.size() == 1)
      return done(inputs.front());
    return done(part::ConcatOp::create(builder, loc, inputs, *axis));
  }
  if (op == "Slice") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    FailureOr<const HostTensor *> starts = requireHost(node, 1, "starts");
    FailureOr<const HostTensor *> ends = requireHost(node, 2, "ends");
    if (failed(starts) || failed(ends))
      return failure();
    Shape in = shapeOf(*x);
    int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> s = (*starts)->ints(), e = (*ends)->ints();
    std::vector<int64_t> axes(s.size()), steps(s.size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (hasInput(node, 3)) {
      FailureOr<const HostTensor *> a = requireHost(node, 3, "axes");
      if (failed(a))
        return failure();
      axes = (*a)->ints();
    }
    if (hasInput(node, 4)) {
      FailureOr<const HostTensor *> st = requireHost(node, 4, "steps");
      if (failed(st))
        return failure();
      steps = (*st)->ints();
    }
    if (e.size() != s.size() || axes.size() != s.size() ||
        steps.size() != s.size())
      return nodeError(node) << "starts, ends, axes and steps differ in length";
    Shape offsets(rank, 0), strides(rank, 1), out = in;
    bool negative = false;
    for (size_t i = 0; i < s.size(); ++i) {
      std::optional<int64_t> axis = normalizeAxis(axes[i], rank);
      if (!axis || steps[i] == 0)
        return nodeError(node) << "axis " << axes[i] << " or step "
                               << steps[i] << " is invalid for rank " << rank;
      auto [start, size] = sliceRange(in[*axis], s[i], e[i], steps[i]);
      if (steps[i] < 0)
        negative = true;
      offsets[*axis] = start;
      strides[*axis] = steps[i];
      out[*axis] = size;
    }
    if (negative) {
      // part.slice strides are positive: an axis read backwards is a gather
      // of constant indices.
      Value v = *x;
      for (int64_t d = 0; d < rank; ++d) {
        if (out[d] == in[d] && strides[d] == 1 && offsets[d] == 0)
          continue;
        if (failed(checkFoldSize(node, {out[d]}, "index list")))
          return failure();
        HostTensor idx;
        idx.elemType = onnx::TensorProto::INT64;
        idx.shape = {out[d]};
        for (int64_t i = 0; i < out[d]; ++i)
          idx.values.push_back(static_cast<double>(offsets[d] + i * strides[d]));
        v = part::GatherOp::create(builder, loc, v, materialize(idx, loc), d);
      }
      return done(v);
    }
    if (out == in)
      return done(*x);
    bool unit = llvm::all_of(strides, [](int64_t st) { return st == 1; });
    auto type = RankedTensorType::get(out, elementTypeOf(*x));
    return done(part::SliceOp::create(builder, 
        loc, type, *x, offsets,
        unit ? DenseI64ArrayAttr() : builder.getDenseI64ArrayAttr(strides)));
  }
  if (op == "Split") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    Shape in = shapeOf(*x);
    int64_t rank = static_cast<int64_t>(in.size());
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(node, "axis", 0), rank);
    if (!axis)
      return nodeError(node) << "axis out of range";
    std::vector<int64_t> sizes;
    if (auto fromAttr = intsAttr(node, "split")) {
      sizes = *fromAttr;
    } else if (hasInput(node, 1)) {
      FailureOr<const HostTensor *> split = requireHost(node, 1, "split");
      if (failed(split))
        return failure();
      sizes = (*split)->ints();
    } else {
      int64_t parts = intAttr(node, "num_outputs", node.output_size());
      if (parts < 1 || parts > in[*axis])
        return nodeError(node)
               << "cannot split dimension " << *axis << " of "
               << formatShape(in) << " into " << parts << " parts";
      int64_t chunk = (in[*axis] + parts - 1) / parts;
      for (int64_t i = 0, left = in[*axis]; i < parts; ++i, left -= chunk)
        sizes.push_back(std::min(chunk, left));
    }
    if (static_cast<int>(sizes.size()) != node.output_size() ||
        llvm::any_of(sizes,
                     [&](int64_t n) { return n < 1 || n > in[*axis]; }) ||
        std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != in[*axis])
      return nodeError(node) << "split sizes " << formatShape(sizes)
                             << " do not cover dimension " << *axis << " of "
                             << formatShape(in) << " in "
                             << node.output_size() << " outputs";
    int64_t offset = 0;
    for (int i = 0; i < node.output_size(); ++i) {
      Shape offsets(rank, 0), out = in;
      offsets[*axis] = offset;
      out[*axis] = sizes[i];
      offset += sizes[i];
      auto type = RankedTensorType::get(out, elementTypeOf(*x));
      if (!node.output(i).empty())
        setValue(node.output(i),
                 out == in ? *x
                           : part::SliceOp::create(builder, 
                                 loc, type, *x, offsets, DenseI64ArrayAttr()));
    }
    return success();
  }
  if (op == "Gather") {
    FailureOr<Value> data = input(0);
    if (failed(data))
      return failure();
    Shape in = shapeOf(*data);
    int64_t rank = static_cast<int64_t>(in.size());
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(node, "axis", 0), rank);
    if (!axis)
      return nodeError(node) << "axis out of range";
    // A constant scalar index is a slice (e.g. one position of a sequence).
    if (const HostTensor *idx = hostInput(node, 1)) {
      for (int64_t i = 0; i < idx->size(); ++i) {
        int64_t v = idx->asInt(i);
        if (v < -in[*axis] || v >= in[*axis])
          return nodeError(node) << "index " << v << " is out of range for "
                                 << "dimension " << *axis << " of size "
                                 << in[*axis];
      }
      if (idx->shape.empty()) {
        int64_t v = idx->asInt(0);
        if (v < 0)
          v += in[*axis];
        Shape offsets(rank, 0), sliced = in;
        offsets[*axis] = v;
        sliced[*axis] = 1;
        auto type = RankedTensorType::get(sliced, elementTypeOf(*data));
        Value s = part::SliceOp::create(builder, loc, type, *data, offsets,
                                                DenseI64ArrayAttr());
        Shape out = in;
        out.erase(out.begin() + *axis);
        return done(reshape(s, out, loc));
      }
      // Negative constant indices are made positive.
      HostTensor positive = *idx;
      for (double &v : positive.values)
        if (v < 0)
          v += static_cast<double>(in[*axis]);
      return done(part::GatherOp::create(builder, 
          loc, *data, materialize(positive, loc), *axis));
    }
    FailureOr<Value> indices = input(1);
    if (failed(indices))
      return failure();
    if (!isa<IntegerType>(elementTypeOf(*indices)))
      return nodeError(node) << "indices of type " << indices->getType()
                             << " are not integers";
    // ONNX counts negative indices from the end: i + d * min(max(-i, 0), 1)
    // maps [-d, d) onto [0, d) and leaves indices outside it outside.
    Value idx = *indices;
    Type it = elementTypeOf(idx);
    auto scalar = [&](int64_t v) {
      HostTensor h;
      h.elemType = it.isInteger(32) ? onnx::TensorProto::INT32
                                    : onnx::TensorProto::INT64;
      h.values = {static_cast<double>(v)};
      return materialize(h, loc);
    };
    Value zero = scalar(0), one = scalar(1);
    Value negated = part::SubOp::create(builder, loc, zero, idx);
    Value isNegative = part::MinOp::create(builder, 
        loc, part::MaxOp::create(builder, loc, negated, zero), one);
    Value shift = part::MulOp::create(builder, loc, isNegative,
                                              scalar(in[*axis]));
    idx = part::AddOp::create(builder, loc, idx, shift);
    return done(part::GatherOp::create(builder, loc, *data, idx, *axis));
  }
  if (op == "Trilu") {
    FailureOr<Value> x = input(0);
    if (failed(x))
      return failure();
    int64_t k = 0;
    if (hasInput(node, 1)) {
      FailureOr<const HostTensor *> kv = requireHost(node, 1, "k");
      if (failed(kv))
        return failure();
      if ((*kv)->size() != 1)
        return nodeError(node)
               << "k must be a scalar; it has " << (*kv)->size() << " elements";
      k = (*kv)->asInt(0);
    }
    Shape in = shapeOf(*x);
    if (in.size() < 2)
      return nodeError(node) << "Trilu needs rank at least 2, got "
                             << formatShape(in);
    bool upper = intAttr(node, "upper", 1);
    int64_t rows = in[in.size() - 2], cols = in.back();
    if (failed(checkFoldSize(node, {rows, cols}, "mask")))
      return failure();
    HostTensor mask, zero;
    mask.elemType = onnx::TensorProto::INT32;
    mask.shape = {rows, cols};
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        mask.values.push_back((upper ? c - r >= k : c - r <= k) ? 1 : 0);
    zero.values = {0};
    Value zv = materialize(zero, loc);
    Value xv = *x;
    if (failed(unifyTypes(node, xv, zv)))
      return failure();
    return done(part::SelectOp::create(builder, loc, materialize(mask, loc),
                                               xv, zv));
  }
  if (op == "Shape" || op == "Size" || op == "Constant" ||
      op == "ConstantOfShape")
    return nodeError(node) << "could not be evaluated on the host";

  return nodeError(node) << "is not supported";
}

/// How many inputs an op takes: {at least, at most (-1: any number)}.
/// Inputs within the minimum must be given (not the empty name).
std::pair<int, int> inputArity(const std::string &op) {
  static const std::map<std::string, std::pair<int, int>> arity = {
      {"Constant", {0, 0}},
      {"CastLike", {2, 2}},
      {"Gather", {2, 2}},
      {"Reshape", {2, 2}},
      {"Expand", {2, 2}},
      {"Unsqueeze", {2, 2}},
      {"Add", {2, 2}},
      {"Sub", {2, 2}},
      {"Mul", {2, 2}},
      {"Div", {2, 2}},
      {"Pow", {2, 2}},
      {"Mod", {2, 2}},
      {"Equal", {2, 2}},
      {"Less", {2, 2}},
      {"LessOrEqual", {2, 2}},
      {"Greater", {2, 2}},
      {"GreaterOrEqual", {2, 2}},
      {"And", {2, 2}},
      {"Or", {2, 2}},
      {"Xor", {2, 2}},
      {"MatMul", {2, 2}},
      {"Max", {1, -1}},
      {"Min", {1, -1}},
      {"Sum", {1, -1}},
      {"Concat", {1, -1}},
      {"Squeeze", {1, 2}},
      {"Slice", {3, 5}},
      {"Range", {3, 3}},
      {"Where", {3, 3}},
      {"Trilu", {1, 2}},
      {"ReduceProd", {1, 2}},
      {"ReduceMean", {1, 2}},
      {"ReduceSum", {1, 2}},
      {"ReduceMax", {1, 2}},
      {"Split", {1, 2}},
      {"Gemm", {2, 3}},
      {"LayerNormalization", {2, 3}},
      {"Dropout", {1, 3}},
  };
  auto it = arity.find(op);
  return it == arity.end() ? std::pair<int, int>{1, 1} : it->second;
}

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  currentNode = &node;
  auto [least, most] = inputArity(node.op_type());
  for (int i = 0; i < least; ++i)
    if (!hasInput(node, i))
      return nodeError(node)
             << "takes at least " << least << " input"
             << (least == 1 ? "" : "s") << ", but input " << i << " is "
             << (node.input_size() > i ? "empty" : "missing");
  if (most >= 0 && node.input_size() > most)
    return nodeError(node) << "takes at most " << most << " input"
                           << (most == 1 ? "" : "s") << ", got "
                           << node.input_size();
  if (node.output_size() == 0 || node.output(0).empty())
    return nodeError(node) << "has no output";
  std::optional<int64_t> layer = layerOfNodeName(node.name());
  layerTagger.layer = layer ? builder.getI64IntegerAttr(*layer) : IntegerAttr();
  FailureOr<bool> folded = foldNode(node);
  if (failed(folded))
    return failure();
  if (*folded)
    return success();
  if (failed(translateNode(node)))
    return failure();
  // A run-time result whose element count overflows (broadcasting two
  // large shapes) would wrap in every size computed from it later.
  for (const std::string &out : node.output()) {
    auto it = slots.find(out);
    if (out.empty() || it == slots.end() || !it->second.value)
      continue;
    Shape shape = shapeOf(it->second.value);
    if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
      return nodeError(node) << "result '" << printable(out) << "' has the "
                             << "invalid shape " << formatShape(shape);
    if (!checkedNumElements(shape))
      return nodeError(node)
             << "result '" << printable(out) << "' of shape "
             << formatShape(shape) << " has more than 2^63 elements";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The whole model
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(parse()))
    return nullptr;
  const onnx::GraphProto &graph = model.graph();

  // --- collect every problem before building anything ------------------------
  bool ok = true;
  std::set<std::string> known;
  // ONNX graphs are in SSA form: every value has one definition, a graph
  // input, an initializer (which a graph input of the same name may
  // declare) or one node output. A second one would silently replace the
  // first.
  std::map<std::string, std::string> definedBy;
  std::vector<std::string> duplicates;
  auto define = [&](const std::string &name, const std::string &by) {
    if (name.empty())
      return;
    auto [it, inserted] = definedBy.emplace(name, by);
    if (!inserted)
      duplicates.push_back("'" + printable(name) + "' by " + it->second +
                           " and by " + by);
  };
  for (const onnx::TensorProto &init : graph.initializer()) {
    initializers[init.name()] = &init;
    known.insert(init.name());
    define(init.name(), "an initializer");
  }
  std::map<std::string, std::vector<std::string>> unsupported;
  std::vector<std::string> missing;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    known.insert(in.name());
    if (!initializers.count(in.name()))
      define(in.name(), "graph input");
  }
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      define(out, "node '" + printable(node.name()) + "'");
  {
    std::set<std::string> outputs;
    for (const onnx::ValueInfoProto &out : graph.output())
      if (!outputs.insert(out.name()).second)
        duplicates.push_back("graph output '" + printable(out.name()) +
                             "' is listed twice");
  }
  if (!duplicates.empty()) {
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "values defined more than once (an ONNX graph defines each value "
            "once):";
    for (const std::string &d : duplicates)
      diag << "\n  " << d;
    ok = false;
  }
  for (const onnx::NodeProto &node : graph.node()) {
    std::string domain = node.domain();
    bool standard = domain.empty() || domain == "ai.onnx";
    if (!standard || (!runtimeOps().count(node.op_type()) &&
                      !hostOps().count(node.op_type()))) {
      std::string key = standard ? node.op_type() : domain + "." + node.op_type();
      unsupported[key].push_back(node.name().empty() ? "<unnamed>"
                                                     : node.name());
    }
    for (const std::string &in : node.input()) {
      if (in.empty() || known.count(in))
        continue;
      auto later = definedBy.find(in);
      if (later != definedBy.end())
        missing.push_back("'" + printable(in) + "' (input of node '" +
                          printable(node.name()) +
                          "') is defined only later, by " + later->second +
                          ": the nodes are not in topological order or form "
                          "a cycle");
      else
        missing.push_back("'" + printable(in) + "' (input of node '" +
                          printable(node.name()) + "')");
    }
    for (const std::string &out : node.output())
      known.insert(out);
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    if (!known.count(out.name()))
      missing.push_back("'" + out.name() + "' (a graph output)");
  // Ops newer than the declared opset, and operand forms of another opset
  // than the declared one (a model the ONNX checker rejects).
  {
    static const std::map<std::string, int64_t> since = {
        {"Trilu", 14}, {"CastLike", 15}, {"LayerNormalization", 17},
        {"Gelu", 20}};
    std::vector<std::string> wrongOpset;
    for (const onnx::NodeProto &node : graph.node()) {
      if (!node.domain().empty() && node.domain() != "ai.onnx")
        continue;
      const std::string &op = node.op_type();
      std::string name = "'" + node.name() + "' (" + op + ")";
      auto it = since.find(op);
      if (it != since.end() && opset < it->second)
        wrongOpset.push_back(name + " exists from opset " +
                             std::to_string(it->second));
      bool hasAxesAttr = llvm::any_of(node.attribute(), [](const auto &a) {
        return a.name() == "axes";
      });
      bool reduceWithInputAxes = op == "ReduceMean" || op == "ReduceMax";
      if (reduceWithInputAxes) {
        if (opset >= 18 && hasAxesAttr)
          wrongOpset.push_back(name + " takes axes as an input from opset "
                                      "18, not as an attribute");
        if (opset < 18 && node.input_size() > 1)
          wrongOpset.push_back(name + " takes axes as an attribute before "
                                      "opset 18, not as an input");
      }
      if ((op == "ReduceSum" || op == "Unsqueeze" || op == "Squeeze" ||
           op == "Split") &&
          hasAxesAttr)
        wrongOpset.push_back(name + " takes axes as an input from opset 13, "
                                    "not as an attribute");
      if (op == "Split" && opset < 18 &&
          llvm::any_of(node.attribute(), [](const auto &a) {
            return a.name() == "num_outputs";
          }))
        wrongOpset.push_back(name + " has num_outputs only from opset 18");
    }
    if (!wrongOpset.empty()) {
      InFlightDiagnostic diag = emitError(fileLoc());
      diag << "nodes that do not match the declared opset " << opset << ":";
      for (const std::string &w : wrongOpset)
        diag << "\n  " << w;
      ok = false;
    }
  }
  if (!unsupported.empty()) {
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "unsupported ONNX ops (opset " << opset << "):";
    for (auto &[type, names] : unsupported) {
      diag << "\n  " << type << " (" << names.size() << " node"
           << (names.size() == 1 ? "" : "s") << "): ";
      for (size_t i = 0; i < names.size() && i < 8; ++i)
        diag << (i ? ", " : "") << names[i];
      if (names.size() > 8)
        diag << ", and " << names.size() - 8 << " more";
    }
    ok = false;
  }
  if (!missing.empty()) {
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "values used but never defined (a missing initializer or "
            "input?):";
    for (const std::string &m : missing)
      diag << "\n  " << m;
    ok = false;
  }

  // Graph inputs (those that are not initializers) and their static types.
  struct InputInfo {
    std::string name;
    RankedTensorType type;
  };
  std::vector<InputInfo> inputs;
  std::set<std::string> unboundReported;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue;
    if (!in.type().has_tensor_type()) {
      emitError(fileLoc()) << "input '" << in.name()
                           << "' is not a tensor (sequences, maps and "
                              "optionals are not supported)";
      ok = false;
      continue;
    }
    const onnx::TypeProto::Tensor &t = in.type().tensor_type();
    Shape shape;
    bool shapeOk = true;
    if (!t.has_shape()) {
      emitError(fileLoc()) << "input '" << in.name() << "' has no shape";
      ok = false;
      continue;
    }
    for (int d = 0; d < t.shape().dim_size(); ++d) {
      const onnx::TensorShapeProto::Dimension &dim = t.shape().dim(d);
      if (dim.has_dim_value() && dim.dim_value() > 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      if (dim.has_dim_value() && dim.dim_value() == 0) {
        emitError(fileLoc()) << "input '" << in.name() << "', dimension " << d
                             << " has size 0; partition has no empty "
                                "tensors";
        shapeOk = false;
        continue;
      }
      if (dim.has_dim_param()) {
        auto bound = options.dims.find(dim.dim_param());
        if (bound != options.dims.end()) {
          shape.push_back(bound->second);
          continue;
        }
        emitError(fileLoc())
            << "input '" << in.name() << "', dimension " << d
            << ": symbolic size '" << dim.dim_param()
            << "' is not bound; pass --dim " << dim.dim_param() << "=N";
      } else {
        emitError(fileLoc()) << "input '" << in.name() << "', dimension " << d
                             << " has no size; partition needs static "
                                "shapes";
      }
      shapeOk = false;
    }
    FailureOr<RankedTensorType> type = tensorType(t.elem_type(), shape);
    bool feedable = t.elem_type() == onnx::TensorProto::FLOAT ||
                    t.elem_type() == onnx::TensorProto::FLOAT16 ||
                    t.elem_type() == onnx::TensorProto::BFLOAT16 ||
                    t.elem_type() == onnx::TensorProto::INT32 ||
                    t.elem_type() == onnx::TensorProto::INT64;
    if (failed(type) || !feedable) {
      emitError(fileLoc()) << "input '" << in.name() << "' has element type "
                           << elemTypeName(t.elem_type())
                           << ", which partition does not support as an "
                              "input (float32, float16, bfloat16, int32, "
                              "int64)";
      ok = false;
      continue;
    }
    if (!shapeOk) {
      ok = false;
      continue;
    }
    if (!checkedNumElements(shape)) {
      emitError(fileLoc()) << "input '" << printable(in.name()) << "' of shape "
                           << formatShape(shape)
                           << " has more than 2^63 elements";
      ok = false;
      continue;
    }
    if (failed(irName(in.name(), "graph input"))) {
      ok = false;
      continue;
    }
    inputs.push_back({in.name(), *type});
  }
  // Bindings that match no symbol are most likely typos.
  {
    std::set<std::string> symbols;
    for (const onnx::ValueInfoProto &in : graph.input())
      if (in.type().has_tensor_type())
        for (const auto &dim : in.type().tensor_type().shape().dim())
          if (dim.has_dim_param())
            symbols.insert(dim.dim_param());
    for (auto &[name, value] : options.dims)
      if (!symbols.count(name)) {
        InFlightDiagnostic diag = emitError(fileLoc());
        diag << "--dim " << name << "=" << value
             << " names no symbolic dimension of the model's inputs";
        if (!symbols.empty()) {
          diag << " (they are:";
          for (const std::string &s : symbols)
            diag << " " << s;
          diag << ")";
        }
        ok = false;
      }
  }
  // Values consumed only by host computations: masks and shapes. A float
  // initializer that only reaches those (a causal-mask buffer compared with
  // 0, say) is a constant, not a parameter. One backward pass: a value is
  // host-only when every use is an operand of an op that cannot run in the
  // IR (comparisons, Trilu, ...), a shape-like operand (Reshape's shape,
  // Slice's bounds, Where's condition), or feeds data movement whose results
  // are all host-only.
  std::set<std::string> hostOnly;
  {
    std::map<std::string, std::vector<std::pair<const onnx::NodeProto *, int>>>
        uses;
    for (const onnx::NodeProto &node : graph.node())
      for (int i = 0; i < node.input_size(); ++i)
        uses[node.input(i)].push_back({&node, i});
    std::set<std::string> outputs;
    for (const onnx::ValueInfoProto &out : graph.output())
      outputs.insert(out.name());
    static const std::set<std::string> maskOps = {
        "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not",
        "And", "Or", "Xor", "Trilu", "Shape", "Size", "ConstantOfShape",
        "Range", "Sign", "Mod", "Floor", "Ceil", "ReduceProd"};
    static const std::set<std::string> movementOps = {
        "Identity", "Slice", "Reshape", "Unsqueeze", "Squeeze", "Cast",
        "Transpose", "Expand", "Concat", "Gather", "Flatten"};
    auto shapeOperand = [](const std::string &op, int i) {
      return (i >= 1 && (op == "Reshape" || op == "Slice" || op == "Expand" ||
                         op == "Unsqueeze" || op == "Squeeze" ||
                         op == "Split" || op == "ReduceMean" ||
                         op == "ReduceSum" || op == "ReduceMax" ||
                         op == "Tile")) ||
             (i == 0 && op == "Where");
    };
    auto decide = [&](const std::string &value) {
      if (value.empty() || outputs.count(value))
        return;
      auto it = uses.find(value);
      if (it == uses.end())
        return;
      for (auto [user, index] : it->second) {
        const std::string &op = user->op_type();
        bool resultsHostOnly = user->output_size() > 0;
        for (const std::string &out : user->output())
          if (!out.empty() && !hostOnly.count(out))
            resultsHostOnly = false;
        if (!(maskOps.count(op) || shapeOperand(op, index) ||
              (movementOps.count(op) && resultsHostOnly)))
          return;
      }
      hostOnly.insert(value);
    };
    // Users come after producers: deciding in reverse order sees every
    // user's results decided.
    for (int n = graph.node_size() - 1; n >= 0; --n)
      for (const std::string &out : graph.node(n).output())
        decide(out);
    for (const onnx::TensorProto &init : graph.initializer())
      decide(init.name());
  }

  // Initializers: their data must be readable.
  for (const onnx::TensorProto &init : graph.initializer()) {
    std::string what = "initializer '" + init.name() + "'";
    FailureOr<HostTensor> host = toHost(init, what);
    if (failed(host)) {
      ok = false;
      continue;
    }
    Slot &slot = slots[init.name()];
    bool isParameter = isFloatElemType(init.data_type()) &&
                       init.data_type() != onnx::TensorProto::DOUBLE &&
                       numElements(host->shape) > 1 &&
                       !hostOnly.count(init.name());
    if (isParameter) {
      slot.parameter = &init;
      if (failed(irName(init.name(), "initializer")))
        ok = false;
    } else {
      slot.host = std::move(*host);
    }
  }
  for (const onnx::ValueInfoProto &out : graph.output())
    if (failed(irName(out.name(), "graph output")))
      ok = false;
  if (!ok)
    return nullptr;

  // --- build ---------------------------------------------------------------
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  body = new Block();
  builder.setInsertionPointToStart(body);
  for (const InputInfo &in : inputs) {
    const std::string &name = irNames.at(in.name);
    Value arg = body->addArgument(
        in.type, NameLoc::get(StringAttr::get(&context, name), fileLoc()));
    argAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(part::PartDialect::getNameAttrName(),
                              builder.getStringAttr(name)),
         builder.getNamedAttr(
             part::PartDialect::getRoleAttrName(),
             part::ArgRoleAttr::get(&context, part::ArgRole::Input))}));
    slots[in.name].value = arg;
  }
  auto cleanup = [&]() {
    body->dropAllDefinedValueUses();
    delete body;
    body = nullptr;
  };
  for (const onnx::NodeProto &node : graph.node()) {
    if (failed(importNode(node))) {
      cleanup();
      return nullptr;
    }
  }
  layerTagger.layer = IntegerAttr();

  // Results, checked against what the model declares.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    FailureOr<Value> v = runtimeValue(out.name());
    if (failed(v)) {
      emitError(fileLoc()) << "graph output '" << out.name()
                           << "' has no value";
      cleanup();
      return nullptr;
    }
    if (out.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &t = out.type().tensor_type();
      int32_t e = t.elem_type();
      if (e != onnx::TensorProto::FLOAT && e != onnx::TensorProto::FLOAT16 &&
          e != onnx::TensorProto::BFLOAT16 && e != onnx::TensorProto::INT32 &&
          e != onnx::TensorProto::INT64) {
        emitError(fileLoc()) << "graph output '" << out.name()
                             << "' has element type " << elemTypeName(e)
                             << ", which partition does not support as an "
                                "output (float32, float16, bfloat16, int32, "
                                "int64)";
        cleanup();
        return nullptr;
      }
      Shape actual = shapeOf(*v);
      if (t.has_shape()) {
        bool rankOk = t.shape().dim_size() == static_cast<int>(actual.size());
        bool dimsOk = rankOk;
        for (int d = 0; rankOk && d < t.shape().dim_size(); ++d) {
          const auto &dim = t.shape().dim(d);
          int64_t expected = -1;
          if (dim.has_dim_value() && dim.dim_value() > 0)
            expected = dim.dim_value();
          else if (dim.has_dim_param() && options.dims.count(dim.dim_param()))
            expected = options.dims.at(dim.dim_param());
          if (expected >= 0 && expected != actual[d])
            dimsOk = false;
        }
        if (!dimsOk) {
          emitError(fileLoc())
              << "graph output '" << out.name() << "' is computed with shape "
              << formatShape(actual)
              << ", but the model declares another shape";
          cleanup();
          return nullptr;
        }
      }
    }
    results.push_back(*v);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(part::PartDialect::getNameAttrName(),
                             builder.getStringAttr(irNames.at(out.name())))));
  }
  func::ReturnOp::create(builder, fileLoc(), results);

  SmallVector<Type> argTypes(body->getArgumentTypes());
  auto function = func::FuncOp::create(
      fileLoc(), options.functionName,
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  function.getBody().push_back(body);
  body = nullptr;
  function.setAllArgAttrs(argAttrs);
  function.setAllResultAttrs(resultAttrs);
  module->push_back(function);
  return module;
}

} // namespace

OwningOpRef<ModuleOp>
partition::import::importOnnx(MLIRContext &context, StringRef path,
                              const OnnxImportOptions &options,
                              Weights &weights) {
  context.loadDialect<part::PartDialect, func::FuncDialect>();
  Importer importer(context, path, options, weights);
  return importer.run();
}
