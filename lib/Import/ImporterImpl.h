//===- ImporterImpl.h - shared state of the ONNX importer -------*- C++ -*-===//
//
// Private to lib/Import. The importer walks the graph once (OnnxImporter.cpp)
// and hands every node to the handler its op type is registered with in one
// table (OpTable.cpp), modelled on torch-mlir's `patterns.onOp("Add", 7,
// ...)`. A handler may fold the node on the host (every value it reads is
// known while importing) and translate it to `part` ops otherwise; the files
// Elementwise.cpp, Logic.cpp, Shape.cpp, Indexing.cpp, Reduction.cpp, NN.cpp
// and ControlFlow.cpp register the handlers of one op family each. The table is
// the only place that says what is supported: the "unsupported op"
// diagnostic, the opset checks, the arity checks and `partition-import
// --list-ops` all read it.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_LIB_IMPORT_IMPORTERIMPL_H
#define PARTITION_LIB_IMPORT_IMPORTERIMPL_H

#include "partition/Import/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace partition::import::detail {

using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Value;

/// The lowest and highest `ai.onnx` opset the importer translates.
constexpr int64_t kMinOpset = 13;
constexpr int64_t kMaxOpset = 21;

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Host values and the helpers on them (HostTensor.cpp)
//===----------------------------------------------------------------------===//

/// The element count of a shape whose count is known to fit (checked by
/// checkedNumElements when the shape was made).
int64_t numElements(const Shape &shape);
/// The element count of `shape`; nullopt when a dimension is negative or
/// the count overflows int64.
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);
/// `name` as it is printed in a diagnostic: bytes that are not printable
/// ASCII as \xNN.
std::string printable(llvm::StringRef name);
/// The file-safe form of a name from the model, which becomes a `part.name`
/// and later a file name (partition-run --output-dir writes DIR/NAME.npy):
/// leading '/' and '\\' are dropped and the others become '.', as a module
/// path does ("dense/kernel" gives "dense.kernel"). Returns nullopt and says
/// why in `why` for a name that no renaming makes safe: empty, a '.' or '..'
/// path component, a control character.
std::optional<std::string> fileSafeName(llvm::StringRef raw, std::string &why);
/// "[2, 3]".
std::string formatShape(const Shape &shape);
/// numpy's name of an ONNX element type ("float32", "bool").
const char *elemTypeName(int32_t type);
/// Bytes per element of the ONNX types whose data the importer can read; 0
/// for the others.
int64_t elemTypeBytes(int32_t type);
bool isFloatElemType(int32_t type);

/// A tensor known on the host. Values are held as doubles whatever the ONNX
/// element type (exact for the integers of shape arithmetic); `elemType` says
/// what they stand for.
struct HostTensor {
  int32_t elemType = onnx::TensorProto::FLOAT;
  Shape shape;
  std::vector<double> values;

  int64_t size() const { return static_cast<int64_t>(values.size()); }
  /// Element `i` as an integer, saturated (NaN gives the minimum).
  int64_t asInt(int64_t i) const;
  std::vector<int64_t> ints() const;
  /// A rank-0 tensor holding `value`.
  static HostTensor scalar(int32_t elemType, double value);
};

/// Rounds `v` to what an element of `type` can hold.
double roundTo(int32_t type, double v);
/// numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);
/// Row-major strides of `shape`, in elements.
Shape stridesOf(const Shape &shape);
/// Index into a tensor of shape `from` for the element of the broadcast shape
/// `to` at multi-index `index`.
int64_t broadcastIndex(const Shape &from, const Shape &to, const Shape &index);
/// Calls `fn(multiIndex, linear)` for every element of `shape`.
void forEachIndex(const Shape &shape,
                  const std::function<void(const Shape &, int64_t)> &fn);
/// Normalises a possibly negative axis; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Binary elementwise evaluation with broadcasting; nullopt when the shapes
/// do not broadcast.
std::optional<HostTensor>
hostBinary(const HostTensor &a, const HostTensor &b, int32_t resultType,
           const std::function<double(double, double)> &fn);
/// ONNX Slice's start/end clamping for one axis; returns {start, size}.
std::pair<int64_t, int64_t> sliceRange(int64_t dim, int64_t start, int64_t end,
                                       int64_t step);
/// `size` elements of `in` from `offset` along `axis` (a host part.slice).
HostTensor hostSlice(const HostTensor &in, int64_t axis, int64_t offset,
                     int64_t size);
/// The layer of a node named by its module path, as torch.onnx.export
/// names nodes: the index of the first path component `<name>.<index>`
/// ("/transformer/h.3/attn/MatMul" is in layer 3); none for other names.
std::optional<int64_t> layerOfNodeName(llvm::StringRef name);
/// The index of a module path component `<name>.<index>` ("h.3",
/// "model.layers.3"); none for another.
std::optional<int64_t> moduleIndex(llvm::StringRef component);

/// The static shape, element type and rank of a run-time value.
Shape shapeOf(Value v);
mlir::Type elementTypeOf(Value v);
int64_t rankOf(Value v);

//===----------------------------------------------------------------------===//
// Values of the graph
//===----------------------------------------------------------------------===//

/// A value of the graph: on the host, in the IR with a static type, or a
/// sequence of such values (SplitToSequence, a Loop's carried sequence).
struct Slot {
  std::optional<HostTensor> host;
  Value value;
  /// For host values: the materialised constant, once a run-time op used it.
  Value constant;
  /// Initializers that became (or will become) parameters.
  const onnx::TensorProto *parameter = nullptr;
  /// An initializer the exporter folded to the transpose of this parameter
  /// (a tied weight, TiedParameters.cpp): its value is the parameter
  /// transposed in the IR, so that both uses train one parameter.
  const onnx::TensorProto *transposeOf = nullptr;
  /// For sequences: the elements (each a host value or a run-time value).
  std::optional<std::vector<Slot>> sequence;
};

/// The `metadata_props` (field `fieldNumber`) of an ONNX message, read from
/// its unknown fields: Debian's libonnx predates metadata on nodes, graphs
/// and tensors (field 9 of NodeProto, 16 of GraphProto and TensorProto).
std::map<std::string, std::string>
unknownMetadataProps(const google::protobuf::Message &message,
                     int fieldNumber);

/// One placeholder of torch.export's graph signature: its kind (PARAMETER,
/// BUFFER or CONSTANT_TENSOR), target (the module path) and position.
struct TorchPlaceholder {
  std::string kind, target;
  size_t index = 0;
};
using TorchSignature = std::map<std::string, TorchPlaceholder>;

/// The placeholders of a graph signature as the dynamo exporter records it,
/// from lines "p_model_x_weight: PARAMETER target='model.x.weight'".
TorchSignature parseTorchSignature(llvm::StringRef text);

/// The placeholders of `signature` that the torch node `node` came from reads
/// (its pkg.torch.onnx.fx_node metadata), in order.
std::vector<std::string> torchPlaceholdersRead(const onnx::NodeProto &node,
                                               const TorchSignature &signature);

/// The innermost module `node` came from (the last module of its
/// pkg.torch.onnx.name_scopes metadata: "transformer.wte"), or "".
std::string torchModuleOf(const onnx::NodeProto &node);
/// The torch module scopes the dynamo exporter records for a node, from
/// the root in ("", "model", "model.layers.3", ...), then the torch node's
/// own name; empty for another exporter's node.
std::vector<std::string> torchScopesOf(const onnx::NodeProto &node);
/// The layer a node belongs to: by its name (layerOfNodeName, the
/// TorchScript exporter's "/model/layers.3/..."), else by the first of
/// its dynamo scopes that is a module's index ("model.layers.3"): the
/// dynamo exporter's names ("node_MatMul_7") say nothing of it.
std::optional<int64_t> layerOfNode(const onnx::NodeProto &node);

//===----------------------------------------------------------------------===//
// The op table (OpTable.cpp)
//===----------------------------------------------------------------------===//

class Node;

/// Evaluates a node on the host: true when it did (its outputs are host
/// values), false when it does not apply (a run-time input), failure after
/// an error naming the node.
using FoldFn = FailureOr<bool> (*)(Node &node);
/// Translates a node to `part` ops, or reports why it cannot.
using TranslateFn = LogicalResult (*)(Node &node);

/// What the importer knows about one ONNX op type: the opsets it takes, its
/// operands, how to fold and translate it.
struct OpHandler {
  std::string opType;
  /// The opsets whose form of the op the handler implements.
  int64_t since = kMinOpset, until = kMaxOpset;
  /// Inputs: at least `minInputs` given (not empty names), at most
  /// `maxInputs` (-1: any number).
  int minInputs = 1, maxInputs = 1;
  /// Where support is partial, what is and is not (--list-ops prints it).
  std::string note;
  FoldFn fold = nullptr;
  /// Call `fold` whatever its inputs are (Shape needs only a static type);
  /// otherwise only when every given input is a host value.
  bool foldAnyInputs = false;
  TranslateFn translate = nullptr;
  /// Opset from which `axes` is an input rather than an attribute (0: the
  /// op has no axes).
  int64_t axesInputFrom = 0;
  /// Attributes that exist only from an opset on (Split's num_outputs).
  std::vector<std::pair<std::string, int64_t>> attributesFrom;
  /// For telling parameters from constants (an initializer that reaches
  /// only host computations is a constant): every operand is a mask or
  /// shape computation (comparisons, Trilu, Range, ...)...
  bool hostOnlyOperands = false;
  /// ... or a bit per operand that is shape-like (a Reshape's shape, a
  /// Where's condition) ...
  uint32_t shapeOperands = 0;
  /// ... or the op only moves data, so its operands are host-only when its
  /// results are.
  bool movesData = false;

  /// "13-21".
  std::string opsetRange() const;
};

/// The handlers by op type, registered with
/// `table.onOp("Add", 13).inputs(2, 2).fold(f).translate(t)`.
class OpTable {
public:
  class Registration {
  public:
    explicit Registration(OpHandler &handler) : handler(handler) {}
    Registration &inputs(int least, int most) {
      handler.minInputs = least;
      handler.maxInputs = most;
      return *this;
    }
    Registration &fold(FoldFn fn, bool anyInputs = false) {
      handler.fold = fn;
      handler.foldAnyInputs = anyInputs;
      return *this;
    }
    Registration &translate(TranslateFn fn) {
      handler.translate = fn;
      return *this;
    }
    Registration &note(llvm::StringRef text) {
      handler.note = text.str();
      return *this;
    }
    Registration &axesInputFrom(int64_t opset) {
      handler.axesInputFrom = opset;
      return *this;
    }
    Registration &attributeFrom(llvm::StringRef name, int64_t opset) {
      handler.attributesFrom.push_back({name.str(), opset});
      return *this;
    }
    Registration &hostOnlyOperands() {
      handler.hostOnlyOperands = true;
      return *this;
    }
    Registration &shapeOperands(std::initializer_list<int> operands) {
      for (int i : operands)
        handler.shapeOperands |= 1u << i;
      return *this;
    }
    Registration &movesData() {
      handler.movesData = true;
      return *this;
    }

  private:
    OpHandler &handler;
  };

  /// Registers `opType` for opsets `since` to `until`. An op type is
  /// registered once (asserted).
  Registration onOp(llvm::StringRef opType, int64_t since,
                    int64_t until = kMaxOpset);
  /// The handler of `opType` in the default domain, whatever the opset;
  /// null when there is none.
  const OpHandler *lookup(llvm::StringRef opType) const;
  const std::map<std::string, OpHandler> &handlers() const { return table; }

private:
  std::map<std::string, OpHandler> table;
};

/// The one table, built on first use.
const OpTable &opTable();

/// Registration of each op family.
void registerElementwiseOps(OpTable &table);
void registerLogicOps(OpTable &table);
void registerShapeOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerNNOps(OpTable &table);
void registerControlFlowOps(OpTable &table);
void registerIndexingOps(OpTable &table);

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

/// Gives the ops built for a node the node's layer (`part.layer`).
struct LayerTagger : public mlir::OpBuilder::Listener {
  void notifyOperationInserted(mlir::Operation *op,
                               mlir::OpBuilder::InsertPoint) override;
  mlir::IntegerAttr layer;
};

class Importer {
public:
  Importer(mlir::MLIRContext &context, llvm::StringRef path,
           const OnnxImportOptions &options, Weights &weights);

  mlir::OwningOpRef<mlir::ModuleOp> run();

  // --- reading the file (ModelFile.cpp) -----------------------------------
  LogicalResult parse();
  LogicalResult checkModel();
  /// The element bytes of `tensor` (raw, typed fields or external data),
  /// little-endian in the tensor's own type.
  LogicalResult tensorBytes(const onnx::TensorProto &tensor, std::string &bytes,
                            const std::string &what);
  /// The `expected` bytes of an external tensor: a regular file inside the
  /// model's directory (no absolute path, no '..', no link leading out),
  /// with offset and length checked against the file's size.
  LogicalResult externalBytes(const onnx::TensorProto &tensor, int64_t expected,
                              std::string &bytes, const std::string &what);
  FailureOr<HostTensor> toHost(const onnx::TensorProto &tensor,
                               const std::string &what);

  // --- types and values -----------------------------------------------------
  /// The `part` element type standing for ONNX `elemType`, or null.
  mlir::Type partElementType(int32_t elemType);
  /// The run-time value of `name`, materialising host values and parameters.
  FailureOr<Value> runtimeValue(const std::string &name);
  /// The run-time value of `slot` (named `name` in diagnostics).
  FailureOr<Value> valueOf(Slot &slot, const std::string &name);
  Value materialize(const HostTensor &host, mlir::Location loc);
  Value addParameter(const onnx::TensorProto &tensor);
  /// Checks that `node` may build a host value of `shape` (what it is:
  /// "result", "mask"): no negative dimension, at most
  /// `options.maxFoldElements` elements. Reports the shape and the numbers.
  LogicalResult checkFoldSize(const onnx::NodeProto &node, const Shape &shape,
                              llvm::StringRef what = "folded result");
  /// The `part.name` of a graph input, graph output or parameter: the
  /// model's name made file-safe (fileSafeName). Reports `what` and the
  /// name when it cannot be, or when two names of the model become one.
  FailureOr<std::string> irName(const std::string &raw, llvm::StringRef what);

  // --- nodes
  // ------------------------------------------------------------------
  /// Checks `node` against its handler (operand count, an output) and folds
  /// or translates it.
  LogicalResult importNode(const onnx::NodeProto &node);
  mlir::InFlightDiagnostic nodeError(const onnx::NodeProto &node);
  mlir::Location nodeLoc(const onnx::NodeProto &node);
  mlir::Location fileLoc();
  void setHost(const std::string &name, HostTensor host) {
    slots[name].host = std::move(host);
  }
  void setValue(const std::string &name, Value value) {
    slots[name].value = value;
  }

  // --- helpers building part ops --------------------------------------------
  Value reshape(Value v, const Shape &shape, mlir::Location loc);
  Value broadcastTo(Value v, const Shape &shape, mlir::Location loc);
  Value castTo(Value v, mlir::Type elementType, mlir::Location loc);
  /// Brings both operands to one element type (host constants follow the
  /// run-time operand); fails when two run-time types differ.
  LogicalResult unifyTypes(const onnx::NodeProto &node, Value &a, Value &b);

  mlir::MLIRContext &context;
  LayerTagger layerTagger;
  mlir::OpBuilder builder;
  std::string path;
  const OnnxImportOptions &options;
  Weights &weights;

  onnx::ModelProto model;
  int64_t opset = 0;
  std::map<std::string, Slot> slots;

private:
  // --- the whole model (OnnxImporter.cpp) -----------------------------------
  struct InputInfo {
    std::string name;
    mlir::RankedTensorType type;
  };
  bool checkDefinitions();
  bool checkNodes();
  bool checkOpsets();
  bool collectInputs(std::vector<InputInfo> &inputs);
  FailureOr<InputInfo> inputInfo(const onnx::ValueInfoProto &in);
  bool checkDimBindings();
  // --- input shapes (InputShapes.cpp) ---------------------------------------
  /// Binds `symbolSizes` and `anonymousSizes` from --dim and --shape;
  /// reports a --shape naming no input, of the wrong rank, contradicting a
  /// fixed dimension or binding a symbol to two sizes.
  bool bindInputShapes();
  /// The size `in`'s dimension `d` has after the bindings, or 0.
  int64_t boundSize(const onnx::ValueInfoProto &in, int d);
  /// "input_ids [2, 16], attention_mask [2, 16]": the graph inputs' shapes,
  /// symbolic dimensions by name (with their bound size where bound).
  std::string describeInputShapes();
  /// The inputs' shapes (describeInputShapes) and, where the model fixes
  /// sizes, that the file serves only those and how to export dynamic
  /// ones.
  std::string inputShapesNote();
  /// With --report-parameters: a remark stating the inputs' shapes.
  void reportInputShapes();
  /// The graph inputs that are not initializers.
  std::vector<const onnx::ValueInfoProto *> graphInputs();
  std::set<std::string> hostOnlyValues();
  bool registerInitializers();
  /// What torch.export's metadata says of each floating-point initializer
  /// that would otherwise be a parameter: a buffer or a value the exporter
  /// folded from no parameter is a constant; a parameter (or a folded copy
  /// of one) is named by its module path. Fills `torchNames` and returns
  /// the initializers that are constants, with the reason.
  std::map<std::string, std::string>
  torchExportConstants(const std::set<std::string> &candidates);
  /// The legacy exporter's folded Linear weights among `candidates`:
  /// "onnx::MatMul_*" initializers of rank 2 read only as a MatMul's B
  /// (torch's weight transposed, [in, out]). Adds them to
  /// `transposedWeights`.
  void findLegacyTransposedWeights(const std::set<std::string> &candidates);

  // --- tied and folded parameters (TiedParameters.cpp) ----------------------
  /// Placeholders torch.export lists but no node reads: a parameter tied to
  /// another (torch.export reads tied parameters through one placeholder;
  /// its own module reads the other's) takes the name named_parameters()
  /// lists first; one whose module uses values the exporter folded from
  /// no parameter was folded into them (`foldedParameters`, and their
  /// reason in `constants`); of any other, --report-parameters remarks
  /// that the file does not say. `claimedBy`: placeholder -> the
  /// initializer holding it.
  void findTorchAliases(const TorchSignature &signature,
                        const std::set<std::string> &candidates,
                        const std::map<std::string, std::string> &claimedBy,
                        std::map<std::string, std::string> &constants);
  /// Folded initializers whose data is another parameter's transposed, bit
  /// for bit: with torch.export's metadata, those whose users read a
  /// parameter another initializer holds (`sharedReads`); without it, a
  /// folded ("onnx::") initializer and one named after its module. Fills
  /// `tiedTransposes` and takes them out of `constants`.
  void findTiedTransposes(const std::set<std::string> &candidates,
                          std::map<std::string, std::string> &constants);
  /// Whether the data of `folded` is that of `kept` transposed, bit for bit,
  /// and not all one value (which any transpose of equal shape matches).
  bool isTiedTranspose(const onnx::TensorProto &folded,
                       const onnx::TensorProto &kept);
  /// The error (or, when --frozen covers them, the remarks) for parameters
  /// the exporter folded away, and for folded uses of a parameter that are
  /// not its transpose (`sharedReads` left untied). False after an error.
  bool reportFoldedParameters(
      const std::set<std::string> &frozen,
      const std::map<std::string, std::string> &constants);
  /// The parameter a tied initializer is the transpose of, transposed.
  Value tiedTranspose(const Slot &slot, const std::string &name);
  LogicalResult
  buildResults(mlir::SmallVectorImpl<Value> &results,
               mlir::SmallVectorImpl<mlir::DictionaryAttr> &attrs);
  LogicalResult checkOutput(const onnx::ValueInfoProto &out, Value v);
  mlir::OwningOpRef<mlir::ModuleOp> build(const std::vector<InputInfo> &inputs);

  std::map<std::string, const onnx::TensorProto *> initializers;
  mlir::Block *body = nullptr;
  mlir::SmallVector<mlir::DictionaryAttr> argAttrs;
  llvm::DenseMap<const onnx::TensorProto *, Value> parameterArgs;
  /// Parameters' module names from torch.export's metadata, by initializer.
  std::map<std::string, std::string> torchNames;
  /// Initializers that are a Linear's weight transposed, [in, out], as the
  /// exporters fold it: the parameter keeps that type, and the weights file
  /// holds torch's [out, in] (part.stored_permutation [1, 0]).
  std::set<std::string> transposedWeights;
  /// Whether the model holds torch.export's graph signature.
  bool hasTorchSignature = false;
  /// Folded initializers whose users read a parameter another initializer
  /// holds (torch.export's metadata): folded initializer -> that one.
  std::map<std::string, std::string> sharedReads;
  /// Tied weights: folded initializer -> the parameter's initializer it is
  /// the transpose of.
  std::map<std::string, std::string> tiedTransposes;
  /// Why an initializer holding a tied parameter is named as it is, for the
  /// remarks: initializer -> the other name torch.export lists for it.
  std::map<std::string, std::string> torchAliases;
  /// Parameters torch.export lists that the exporter folded away: module
  /// path -> the initializers their module uses instead.
  std::map<std::string, std::vector<std::string>> foldedParameters;
  std::set<std::string> parameterNames;
  /// Sizes of symbolic dimensions (--dim, and --shape through the inputs
  /// that carry them), and of unnamed dynamic ones by (input, dimension).
  std::map<std::string, int64_t> symbolSizes;
  std::map<std::pair<std::string, int>, int64_t> anonymousSizes;
  /// Model names and the IR names they became, and back.
  std::map<std::string, std::string> irNames, irNameOwners;
  /// The node being imported, for naming parameters after their first user.
  const onnx::NodeProto *currentNode = nullptr;
};

//===----------------------------------------------------------------------===//
// What a handler sees of its node
//===----------------------------------------------------------------------===//

/// One node being imported, with the importer's state: its inputs as host or
/// run-time values, its attributes, the builder and diagnostics that name it.
class Node {
public:
  Node(Importer &im, const onnx::NodeProto &proto)
      : im(im), proto(proto), builder(im.builder), loc(im.nodeLoc(proto)) {}

  Importer &im;
  const onnx::NodeProto &proto;
  mlir::OpBuilder &builder;
  mlir::Location loc;

  const std::string &opType() const { return proto.op_type(); }
  /// An error at the node: "node 'name' (Op): ...".
  mlir::InFlightDiagnostic error() { return im.nodeError(proto); }
  /// Reports `why` and fails (for folds and handlers alike).
  mlir::LogicalResult fail(const llvm::Twine &why);

  // --- inputs
  // -------------------------------------------------------------------
  /// Whether input `i` is given (present and not the empty name).
  bool has(int i) const {
    return proto.input_size() > i && !proto.input(i).empty();
  }
  /// The host value of input `i`, or null.
  const HostTensor *host(int i);
  /// The host value of input `i`, or an error naming the node and input.
  FailureOr<const HostTensor *> requireHost(int i, llvm::StringRef what);
  /// The run-time value of input `i` (host values are materialised).
  FailureOr<Value> input(int i);
  /// Fails with an error unless `v` is a float tensor.
  LogicalResult requireFloat(Value v);

  // --- attributes
  // -----------------------------------------------------------------
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const;
  float floatAttr(llvm::StringRef name, float dflt) const;
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const;
  /// Axes given by attribute (older opsets) or by input `inputIndex`.
  FailureOr<std::optional<std::vector<int64_t>>> axes(int inputIndex);

  // --- results
  // ----------------------------------------------------------------------
  /// Output 0 is `v`.
  LogicalResult done(Value v);
  /// Output 0 is the host value `t` (a successful fold).
  FailureOr<bool> folded(HostTensor t);
  /// A `part.constant` for `t` at the node.
  Value constant(const HostTensor &t) { return im.materialize(t, loc); }
  LogicalResult unify(Value &a, Value &b) { return im.unifyTypes(proto, a, b); }
  LogicalResult checkFoldSize(const Shape &shape,
                              llvm::StringRef what = "folded result") {
    return im.checkFoldSize(proto, shape, what);
  }
  /// Fails with "operand shapes [..] and [..] do not broadcast" unless they
  /// do.
  LogicalResult checkBroadcast(const Shape &a, const Shape &b);
};

/// The node's `axis` attribute (`dflt` when absent) normalised for `rank`;
/// an error naming the axis and the rank when it is out of range.
FailureOr<int64_t> axisAttribute(Node &n, int64_t dflt, int64_t rank);

/// Run-time gather indices `idx` into a dimension of size `dim` with ONNX's
/// negative indices (counted from the end) mapped onto [0, dim); indices
/// outside [-dim, dim) stay outside, so part.gather reports them at run
/// time. An error naming the type when `idx` is not integer.
FailureOr<Value> runtimeIndexValues(Node &n, Value idx, int64_t dim);

} // namespace partition::import::detail

#endif // PARTITION_LIB_IMPORT_IMPORTERIMPL_H
