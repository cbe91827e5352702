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
// Each node goes to the handler its op type is registered with (OpTable.cpp;
// the handlers live in one file per op family). This file holds what they
// share: the graph walk, the checks made before anything is built, values
// and parameters.
//
// Ops built for a node inside a numbered module (`/h.3/...`, torch's
// ModuleList entries) carry its index as `part.layer`.
//
// Only the protobuf classes of libonnx are used: no schemas, no shape
// inference (Debian's libonnx stops at opset 17; partition supports 13..21).
// See docs/design/2026-12-02-onnx-import.md.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/runtime/StoredShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/GlobPattern.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace mlir;
using namespace partition;
using namespace partition::import;
using namespace partition::import::detail;
namespace part = partition::part;

Importer::Importer(MLIRContext &context, StringRef path,
                   const OnnxImportOptions &options, Weights &weights)
    : context(context), builder(&context), path(path.str()), options(options),
      weights(weights) {
  builder.setListener(&layerTagger);
}

InFlightDiagnostic Importer::nodeError(const onnx::NodeProto &node) {
  return emitError(nodeLoc(node))
         << "node '" << node.name() << "' (" << node.op_type() << "): ";
}

Location Importer::nodeLoc(const onnx::NodeProto &node) {
  return NameLoc::get(StringAttr::get(&context, node.name()), fileLoc());
}

Location Importer::fileLoc() {
  return FileLineColLoc::get(&context, path, 0, 0);
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
  // A parameter torch.export names (a folded val_130 is the module's
  // model.layers.0.self_attn.q_proj.weight) takes the module's name.
  auto torchName = torchNames.find(tensor.name());
  if (torchName != torchNames.end())
    name = irNames.at(torchName->second);
  else if (StringRef(name).starts_with("onnx::") && currentNode &&
      StringRef(currentNode->name()).starts_with("/")) {
    StringRef scope = StringRef(currentNode->name()).drop_front();
    scope = scope.rsplit('/').first;
    if (!scope.empty() &&
        scope != StringRef(currentNode->name()).drop_front()) {
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
  SmallVector<NamedAttribute> attrs = {
      builder.getNamedAttr(part::PartDialect::getNameAttrName(),
                           builder.getStringAttr(name)),
      builder.getNamedAttr(
          part::PartDialect::getRoleAttrName(),
          part::ArgRoleAttr::get(&context, part::ArgRole::Parameter))};
  // A Linear's weight the exporter folded into its transpose: the program
  // reads [in, out], the weights file holds torch's [out, in].
  bool transposed = transposedWeights.count(tensor.name()) && shape.size() == 2;
  if (transposed) {
    attrs.push_back(builder.getNamedAttr(
        part::PartDialect::getStoredShapeAttrName(),
        builder.getDenseI64ArrayAttr({shape[1], shape[0]})));
    attrs.push_back(builder.getNamedAttr(
        part::PartDialect::getStoredPermutationAttrName(),
        builder.getDenseI64ArrayAttr({1, 0})));
  }
  argAttrs.push_back(builder.getDictionaryAttr(attrs));
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
  if (transposed) {
    weight.shape = {shape[1], shape[0]};
    runtime::transposeCopy(bytes.data(), shape, {1, 0}, weight.data.data(),
                           runtime::dtypeSize(weight.dtype));
  }
  weights.tensors.push_back(std::move(weight));
  return arg;
}

FailureOr<Value> Importer::runtimeValue(const std::string &name) {
  auto it = slots.find(name);
  if (it == slots.end())
    return failure();
  return valueOf(it->second, name);
}

FailureOr<Value> Importer::valueOf(Slot &slot, const std::string &name) {
  if (slot.value)
    return slot.value;
  if (slot.parameter) {
    slot.value = addParameter(*slot.parameter);
    return slot.value;
  }
  if (slot.transposeOf)
    return tiedTranspose(slot, name);
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
          *slot.host, NameLoc::get(StringAttr::get(&context, name), fileLoc()));
    }
    return slot.constant;
  }
  return failure();
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

Value Importer::castTo(Value v, Type elementType, Location loc) {
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
    b = castTo(b, ta, b.getLoc());
    return success();
  }
  if (aConst) {
    a = castTo(a, tb, a.getLoc());
    return success();
  }
  return nodeError(node) << "operands have element types " << ta << " and "
                         << tb;
}
//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

LogicalResult Node::fail(const Twine &why) {
  error() << why;
  return failure();
}

const HostTensor *Node::host(int i) {
  if (!has(i))
    return nullptr;
  auto it = im.slots.find(proto.input(i));
  if (it == im.slots.end() || !it->second.host)
    return nullptr;
  return &*it->second.host;
}

FailureOr<const HostTensor *> Node::requireHost(int i, StringRef what) {
  // Handlers ask only for inputs the op table requires or that they checked.
  assert(has(i) && "a required input is checked against the op table");
  if (const HostTensor *h = host(i))
    return h;
  error() << "its " << what << " (input " << i << ", '" << proto.input(i)
          << "') is computed at run time; partition needs it as a constant "
             "(bind every symbolic dimension with --dim so that shape "
             "arithmetic folds)";
  return failure();
}

FailureOr<Value> Node::input(int i) {
  if (!has(i)) {
    error() << "input " << i << " is missing";
    return failure();
  }
  auto it = im.slots.find(proto.input(i));
  if (it != im.slots.end() && it->second.sequence) {
    error() << "input " << i << " ('" << proto.input(i)
            << "') is a sequence; only sequence ops take sequences";
    return failure();
  }
  FailureOr<Value> v = im.runtimeValue(proto.input(i));
  if (failed(v))
    error() << "input " << i << " ('" << proto.input(i) << "') has no value";
  return v;
}

LogicalResult Node::requireFloat(Value v) {
  if (isa<FloatType>(elementTypeOf(v)))
    return success();
  return error() << "operand of type " << v.getType()
                 << " is not a float tensor";
}

const onnx::AttributeProto *Node::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : proto.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Node::intAttr(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

float Node::floatAttr(StringRef name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->f() : dflt;
}

std::optional<std::vector<int64_t>> Node::intsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<std::optional<std::vector<int64_t>>> Node::axes(int inputIndex) {
  if (auto fromAttr = intsAttr("axes"))
    return std::optional<std::vector<int64_t>>(*fromAttr);
  if (!has(inputIndex))
    return std::optional<std::vector<int64_t>>();
  FailureOr<const HostTensor *> given = requireHost(inputIndex, "axes");
  if (failed(given))
    return failure();
  return std::optional<std::vector<int64_t>>((*given)->ints());
}

LogicalResult Node::done(Value v) {
  im.setValue(proto.output(0), v);
  return success();
}

FailureOr<bool> Node::folded(HostTensor t) {
  im.setHost(proto.output(0), std::move(t));
  return true;
}

LogicalResult Node::checkBroadcast(const Shape &a, const Shape &b) {
  if (broadcastShapes(a, b))
    return success();
  return error() << "operand shapes " << formatShape(a) << " and "
                 << formatShape(b) << " do not broadcast";
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  currentNode = &node;
  // Unknown ops and domains were reported before anything was built.
  const OpHandler *handler = opTable().lookup(node.op_type());
  assert(handler && "unsupported ops are rejected before the build");
  int least = handler->minInputs, most = handler->maxInputs;
  for (int i = 0; i < least; ++i)
    if (node.input_size() <= i || node.input(i).empty())
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
  std::optional<int64_t> layer = layerOfNode(node);
  layerTagger.layer = layer ? builder.getI64IntegerAttr(*layer) : IntegerAttr();

  Node n(*this, node);
  if (handler->fold) {
    bool hostInputs = true;
    for (int i = 0; i < node.input_size(); ++i)
      if (n.has(i) && !n.host(i))
        hostInputs = false;
    if (hostInputs || handler->foldAnyInputs) {
      FailureOr<bool> folded = handler->fold(n);
      if (failed(folded))
        return failure();
      if (*folded)
        return success();
    }
  }
  if (!handler->translate) {
    std::string runtime;
    for (int i = 0; i < node.input_size(); ++i)
      if (n.has(i) && !n.host(i))
        runtime +=
            (runtime.empty() ? "'" : ", '") + printable(node.input(i)) + "'";
    // A fold fails or succeeds on host inputs; it declines only run-time
    // ones.
    assert(!runtime.empty() && "a fold declined host inputs");
    return n.fail("partition evaluates " + node.op_type() +
                  " only while importing, on constants; its inputs " + runtime +
                  " are computed at run time");
  }
  if (failed(handler->translate(n)))
    return failure();
  // A run-time result whose element count overflows (broadcasting two
  // large shapes) would wrap in every size computed from it later.
  for (const std::string &out : node.output()) {
    auto it = slots.find(out);
    if (out.empty() || it == slots.end() || !it->second.value)
      continue;
    Shape shape = shapeOf(it->second.value);
    // Static shapes come from the inputs' and every handler checks its own.
    assert(llvm::none_of(shape, [](int64_t d) { return d < 0; }) &&
           "a handler built a negative dimension");
    if (!checkedNumElements(shape))
      return nodeError(node)
             << "result '" << printable(out) << "' of shape "
             << formatShape(shape) << " has more than 2^63 elements";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The whole model: every problem is collected before anything is built
//===----------------------------------------------------------------------===//

/// Calls `fn` for every node of `graph` and of the graphs its nodes hold
/// (a Loop's body), outer nodes first.
static void
forEachNode(const onnx::GraphProto &graph,
            const std::function<void(const onnx::NodeProto &)> &fn) {
  for (const onnx::NodeProto &node : graph.node()) {
    fn(node);
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        forEachNode(a.g(), fn);
      for (const onnx::GraphProto &g : a.graphs())
        forEachNode(g, fn);
    }
  }
}

bool Importer::checkDefinitions() {
  const onnx::GraphProto &graph = model.graph();
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
    define(init.name(), "an initializer");
  }
  for (const onnx::ValueInfoProto &in : graph.input())
    if (!initializers.count(in.name()))
      define(in.name(), "graph input");
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      define(out, "node '" + printable(node.name()) + "'");
  std::set<std::string> outputs;
  for (const onnx::ValueInfoProto &out : graph.output())
    if (!outputs.insert(out.name()).second)
      duplicates.push_back("graph output '" + printable(out.name()) +
                           "' is listed twice");
  if (duplicates.empty())
    return true;
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << "values defined more than once (an ONNX graph defines each value "
          "once):";
  for (const std::string &d : duplicates)
    diag << "\n  " << d;
  return false;
}

bool Importer::checkNodes() {
  const onnx::GraphProto &graph = model.graph();
  std::map<std::string, std::string> definedLater;
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      definedLater.emplace(out, "node '" + printable(node.name()) + "'");
  std::set<std::string> known;
  for (const onnx::TensorProto &init : graph.initializer())
    known.insert(init.name());
  for (const onnx::ValueInfoProto &in : graph.input())
    known.insert(in.name());
  std::vector<std::string> missing;
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input()) {
      if (in.empty() || known.count(in))
        continue;
      auto later = definedLater.find(in);
      if (later != definedLater.end())
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

  bool ok = checkOpsets();
  // Every op type the table does not know, with its nodes, at once.
  std::map<std::string, std::vector<std::string>> unsupported;
  forEachNode(graph, [&](const onnx::NodeProto &node) {
    const std::string &domain = node.domain();
    bool standard = domain.empty() || domain == "ai.onnx";
    if (standard && opTable().lookup(node.op_type()))
      return;
    std::string key = standard ? node.op_type() : domain + "." + node.op_type();
    unsupported[key].push_back(node.name().empty() ? "<unnamed>" : node.name());
  });
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
  return ok;
}

/// Why `node` does not match the declared `opset` by `handler`'s
/// registration: an op newer than the opset, axes or an attribute in
/// another opset's form. Empty when it matches.
static std::vector<std::string> opsetMismatches(const onnx::NodeProto &node,
                                                const OpHandler &handler,
                                                int64_t opset) {
  std::vector<std::string> why;
  std::string name = "'" + node.name() + "' (" + node.op_type() + ")";
  auto hasAttr = [&](StringRef attr) {
    return llvm::any_of(node.attribute(),
                        [&](const auto &a) { return a.name() == attr; });
  };
  if (opset < handler.since)
    why.push_back(name + " exists from opset " + std::to_string(handler.since));
  if (int64_t from = handler.axesInputFrom) {
    if (opset >= from && hasAttr("axes"))
      why.push_back(name + " takes axes as an input from opset " +
                    std::to_string(from) + ", not as an attribute");
    if (opset < from && node.input_size() > 1)
      why.push_back(name + " takes axes as an attribute before opset " +
                    std::to_string(from) + ", not as an input");
  }
  for (const auto &[attr, from] : handler.attributesFrom)
    if (opset < from && hasAttr(attr))
      why.push_back(name + " has " + attr + " only from opset " +
                    std::to_string(from));
  return why;
}

bool Importer::checkOpsets() {
  // Ops newer than the declared opset, and operand forms of another opset
  // than the declared one (a model the ONNX checker rejects).
  std::vector<std::string> wrongOpset;
  forEachNode(model.graph(), [&](const onnx::NodeProto &node) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return;
    if (const OpHandler *handler = opTable().lookup(node.op_type()))
      for (std::string &why : opsetMismatches(node, *handler, opset))
        wrongOpset.push_back(std::move(why));
  });
  if (wrongOpset.empty())
    return true;
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << "nodes that do not match the declared opset " << opset << ":";
  for (const std::string &w : wrongOpset)
    diag << "\n  " << w;
  return false;
}

/// Element types a graph input or output may have: what partition-run
/// exchanges (a bool input is fed as i32 0 / 1).
static bool exchangeable(int32_t type, bool input) {
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16 ||
         type == onnx::TensorProto::INT32 || type == onnx::TensorProto::INT64 ||
         (input && type == onnx::TensorProto::BOOL);
}

FailureOr<Importer::InputInfo>
Importer::inputInfo(const onnx::ValueInfoProto &in) {
  if (!in.type().has_tensor_type())
    return emitError(fileLoc()) << "input '" << in.name()
                                << "' is not a tensor (sequences, maps and "
                                   "optionals are not supported)";
  const onnx::TypeProto::Tensor &t = in.type().tensor_type();
  if (!t.has_shape())
    return emitError(fileLoc()) << "input '" << in.name() << "' has no shape";
  Shape shape;
  bool shapeOk = true;
  for (int d = 0; d < t.shape().dim_size(); ++d) {
    const onnx::TensorShapeProto::Dimension &dim = t.shape().dim(d);
    if (dim.has_dim_value() && dim.dim_value() > 0) {
      shape.push_back(dim.dim_value());
      continue;
    }
    if (int64_t size = boundSize(in, d)) {
      shape.push_back(size);
      continue;
    }
    shapeOk = false;
    if (dim.has_dim_value() && dim.dim_value() == 0) {
      emitError(fileLoc()) << "input '" << in.name() << "', dimension " << d
                           << " has size 0; partition has no empty tensors";
    } else if (dim.has_dim_param()) {
      emitError(fileLoc()) << "input '" << in.name() << "', dimension " << d
                           << ": symbolic size '" << dim.dim_param()
                           << "' is not bound; pass --dim " << dim.dim_param()
                           << "=N, or --shape " << in.name()
                           << "=SIZExSIZE... to give the input's sizes by "
                              "position";
    } else {
      emitError(fileLoc()) << "input '" << in.name() << "', dimension " << d
                           << " has no size; partition needs static shapes: "
                              "pass --shape "
                           << in.name() << "=SIZExSIZE...";
    }
  }
  if (!exchangeable(t.elem_type(), /*input=*/true))
    return emitError(fileLoc())
           << "input '" << in.name() << "' has element type "
           << elemTypeName(t.elem_type())
           << ", which partition does not support as an input (float32, "
              "float16, bfloat16, int32, int64, bool)";
  if (!shapeOk)
    return failure();
  if (!checkedNumElements(shape))
    return emitError(fileLoc())
           << "input '" << printable(in.name()) << "' of shape "
           << formatShape(shape) << " has more than 2^63 elements";
  if (failed(irName(in.name(), "graph input")))
    return failure();
  return InputInfo{
      in.name(), RankedTensorType::get(shape, partElementType(t.elem_type()))};
}

bool Importer::collectInputs(std::vector<InputInfo> &inputs) {
  bool ok = true;
  // Graph inputs that are not initializers, with their static types.
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    if (initializers.count(in.name()))
      continue;
    FailureOr<InputInfo> info = inputInfo(in);
    if (failed(info))
      ok = false;
    else
      inputs.push_back(*info);
  }
  return ok;
}

std::set<std::string> Importer::hostOnlyValues() {
  // Values consumed only by host computations: masks and shapes. A float
  // initializer that only reaches those (a causal-mask buffer compared with
  // 0, say) is a constant, not a parameter. One backward pass: a value is
  // host-only when every use is an operand the op table marks as host-only
  // (comparisons, Trilu, ...), a shape-like operand (Reshape's shape,
  // Slice's bounds, Where's condition), or feeds data movement whose results
  // are all host-only. A use inside a Loop's body counts as a run-time use.
  const onnx::GraphProto &graph = model.graph();
  std::set<std::string> hostOnly;
  std::map<std::string, std::vector<std::pair<const onnx::NodeProto *, int>>>
      uses;
  for (const onnx::NodeProto &node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i)
      uses[node.input(i)].push_back({&node, i});
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.has_g())
        forEachNode(a.g(), [&](const onnx::NodeProto &inner) {
          for (const std::string &in : inner.input())
            uses[in].push_back({&node, -1});
        });
  }
  std::set<std::string> outputs;
  for (const onnx::ValueInfoProto &out : graph.output())
    outputs.insert(out.name());
  auto decide = [&](const std::string &value) {
    if (value.empty() || outputs.count(value))
      return;
    auto it = uses.find(value);
    if (it == uses.end())
      return;
    for (auto [user, index] : it->second) {
      const OpHandler *handler = opTable().lookup(user->op_type());
      if (!handler || index < 0)
        return;
      bool resultsHostOnly = user->output_size() > 0;
      for (const std::string &out : user->output())
        if (!out.empty() && !hostOnly.count(out))
          resultsHostOnly = false;
      bool shapeOperand =
          index < 32 && (handler->shapeOperands >> index & 1u) != 0;
      if (!(handler->hostOnlyOperands || shapeOperand ||
            (handler->movesData && resultsHostOnly)))
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
  return hostOnly;
}

/// The weight argument of a torch node "%linear = call_function[target=
/// torch.ops.aten.linear.default](args = (%x, %p_weight, ...)": p_weight;
/// "" for any other node.
static std::string linearWeightArgument(StringRef fx) {
  StringRef call = "target=torch.ops.aten.linear.default](args = (";
  size_t at = fx.find(call);
  if (at == StringRef::npos)
    return "";
  SmallVector<StringRef> args;
  fx.drop_front(at + call.size()).split(args, ',');
  if (args.size() < 2 || !args[1].trim().starts_with("%"))
    return "";
  StringRef weight = args[1].trim().drop_front();
  return weight.take_while([](char c) { return isalnum(c) || c == '_'; })
      .str();
}

void Importer::findLegacyTransposedWeights(
    const std::set<std::string> &candidates) {
  std::map<std::string, bool> onlyMatMulB;
  for (const onnx::NodeProto &node : model.graph().node())
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string &in = node.input(i);
      if (!candidates.count(in) || !StringRef(in).starts_with("onnx::MatMul_"))
        continue;
      bool b = node.op_type() == "MatMul" && i == 1;
      auto [it, first] = onlyMatMulB.emplace(in, b);
      it->second = it->second && b;
    }
  for (const auto &[name, b] : onlyMatMulB)
    if (b && initializers.count(name) && !tiedTransposes.count(name) &&
        initializers.at(name)->dims_size() == 2)
      transposedWeights.insert(name);
}

std::map<std::string, std::string>
Importer::torchExportConstants(const std::set<std::string> &candidates) {
  // torch.export (the dynamo exporter) records its graph signature on the
  // graph, and on each node the torch node it came from. Initializers named
  // after a placeholder's target are that placeholder; the others were
  // folded by the exporter (a Linear's Wᵀ, the causal mask, the rotary
  // tables) and are judged by the placeholders their users' torch nodes
  // read: a parameter's folded copy is that parameter, a value whose users
  // read no parameter was computed from buffers, constants and shapes.
  std::map<std::string, std::string> constants;
  TorchSignature placeholders = parseTorchSignature(
      unknownMetadataProps(model.graph(), 16)
          ["pkg.torch.export.ExportedProgram.graph_signature"]);
  if (placeholders.empty())
    return constants;
  hasTorchSignature = true;
  std::map<std::string, std::string> byTarget;
  for (auto &[name, placeholder] : placeholders)
    byTarget[placeholder.target] = name;
  std::map<std::string, std::vector<std::string>> readers;
  // The placeholder an initializer stands for as the weight of torch's
  // aten.linear (the MatMul's B is then the weight transposed), "" where
  // one of its readers is something else.
  std::map<std::string, std::string> linearWeightOf;
  for (const onnx::NodeProto &node : model.graph().node()) {
    std::string fx =
        unknownMetadataProps(node, 9)["pkg.torch.onnx.fx_node"];
    std::string weight = linearWeightArgument(fx);
    for (int i = 0; i < node.input_size(); ++i)
      if (candidates.count(node.input(i))) {
        bool linear = node.op_type() == "MatMul" && i == 1 && !weight.empty();
        auto [it, first] = linearWeightOf.emplace(node.input(i),
                                                  linear ? weight : "");
        if (!first && it->second != (linear ? weight : ""))
          it->second = "";
      }
    std::vector<std::string> read = torchPlaceholdersRead(node, placeholders);
    for (const std::string &in : node.input())
      if (candidates.count(in))
        readers[in].insert(readers[in].end(), read.begin(), read.end());
  }
  // Placeholder -> the initializer holding it.
  std::map<std::string, std::string> claimedBy;
  for (const std::string &init : candidates)
    if (byTarget.count(init))
      claimedBy[byTarget[init]] = init;
  for (const std::string &init : candidates) {
    auto own = byTarget.find(init);
    if (own != byTarget.end()) {
      const TorchPlaceholder &p = placeholders[own->second];
      if (p.kind != "PARAMETER")
        constants[init] = "torch.export lists it as a " +
                          StringRef(p.kind).lower() + " ('" + p.target + "')";
      continue;
    }
    std::string buffer, parameter, shared;
    for (const std::string &p : readers[init]) {
      const TorchPlaceholder &read = placeholders[p];
      if (read.kind != "PARAMETER")
        buffer = read.target;
      else if (!claimedBy.count(p) && parameter.empty())
        parameter = p;
      else if (claimedBy.count(p) && shared.empty())
        shared = p;
    }
    if (!parameter.empty()) {
      claimedBy[parameter] = init;
      torchNames[init] = placeholders[parameter].target;
      if (linearWeightOf[init] == parameter)
        transposedWeights.insert(init);
      continue;
    }
    if (!shared.empty()) {
      // A second folded use of a parameter: tied if it is the other's
      // transpose (findTiedTransposes), else a value folded from it.
      sharedReads[init] = claimedBy[shared];
      constants[init] = "folded by the exporter from parameter '" +
                        placeholders[shared].target +
                        "', which initializer '" + claimedBy[shared] +
                        "' holds, and not its transpose";
      continue;
    }
    constants[init] =
        buffer.empty()
            ? "folded by the exporter; the torch nodes using it read no "
              "parameter (a mask, a table computed from shapes)"
            : "folded by the exporter from buffer '" + buffer + "'";
  }
  findTorchAliases(placeholders, candidates, claimedBy, constants);
  return constants;
}

namespace {
/// --frozen and --trainable: glob patterns over initializer names and the
/// module names torch.export gives them. Each remembers whether it matched.
class ParameterOverrides {
public:
  ParameterOverrides(const OnnxImportOptions &options,
                     const std::map<std::string, std::string> &torchNames)
      : torchNames(torchNames) {
    for (const std::string &p : options.frozen)
      add(frozenPatterns, "--frozen", p);
    for (const std::string &p : options.trainable)
      add(trainablePatterns, "--trainable", p);
  }
  /// The first --frozen pattern matching `name`, or "".
  std::string frozen(const std::string &name) {
    return match(frozenPatterns, name);
  }
  std::string trainable(const std::string &name) {
    return match(trainablePatterns, name);
  }
  /// "--frozen 'x'" for each pattern that matched nothing, and each that is
  /// not a valid glob.
  std::vector<std::string> unused() const {
    std::vector<std::string> out = invalid;
    for (const auto *list : {&frozenPatterns, &trainablePatterns})
      for (const Pattern &p : *list)
        if (!p.matched)
          out.push_back(p.option + " '" + p.text + "'");
    return out;
  }

private:
  struct Pattern {
    std::string option, text;
    llvm::GlobPattern glob;
    bool matched = false;
  };
  void add(std::vector<Pattern> &list, const char *option,
           const std::string &text) {
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(text);
    if (!glob) {
      invalid.push_back(std::string(option) + " '" + text +
                        "' is not a glob pattern (" +
                        llvm::toString(glob.takeError()) + "), so it");
      return;
    }
    list.push_back({option, text, std::move(*glob)});
  }
  std::string match(std::vector<Pattern> &list, const std::string &name) {
    auto torchName = torchNames.find(name);
    for (Pattern &p : list)
      if (p.glob.match(name) ||
          (torchName != torchNames.end() && p.glob.match(torchName->second))) {
        p.matched = true;
        return p.text;
      }
    return "";
  }
  const std::map<std::string, std::string> &torchNames;
  std::vector<Pattern> frozenPatterns, trainablePatterns;
  std::vector<std::string> invalid;
};
} // namespace

bool Importer::registerInitializers() {
  // Initializers: their data must be readable.
  bool ok = true;
  std::set<std::string> hostOnly = hostOnlyValues();
  std::set<std::string> candidates;
  for (const onnx::TensorProto &init : model.graph().initializer())
    if (isFloatElemType(init.data_type()) &&
        init.data_type() != onnx::TensorProto::DOUBLE &&
        !hostOnly.count(init.name()) &&
        checkedNumElements(Shape(init.dims().begin(), init.dims().end()))
                .value_or(0) > 1)
      candidates.insert(init.name());
  std::map<std::string, std::string> constants =
      torchExportConstants(candidates);
  findTiedTransposes(candidates, constants);
  // After the ties: a tied head is the embedding transposed, not a weight.
  findLegacyTransposedWeights(candidates);
  // --frozen and --trainable match module names too: those torch.export
  // gives parameters, and those of parameters folded into an initializer.
  std::map<std::string, std::string> moduleNames = torchNames;
  for (const auto &[target, inits] : foldedParameters)
    for (const std::string &init : inits)
      moduleNames.emplace(init, target);
  ParameterOverrides overrides(options, moduleNames);
  auto becomesParameter = [&](const std::string &name) {
    return candidates.count(name) &&
           (!constants.count(name) || !overrides.trainable(name).empty()) &&
           overrides.frozen(name).empty() && !tiedTransposes.count(name);
  };
  std::set<std::string> frozenInits;
  for (const onnx::TensorProto &init : model.graph().initializer()) {
    std::string what = "initializer '" + init.name() + "'";
    FailureOr<HostTensor> host = toHost(init, what);
    if (failed(host)) {
      ok = false;
      continue;
    }
    Slot &slot = slots[init.name()];
    std::string frozen = overrides.frozen(init.name());
    std::string trainable = overrides.trainable(init.name());
    if (!frozen.empty())
      frozenInits.insert(init.name());
    bool isParameter = becomesParameter(init.name());
    auto tied = tiedTransposes.find(init.name());
    bool isTied = tied != tiedTransposes.end() && frozen.empty() &&
                  becomesParameter(tied->second);
    if (options.reportParameters && isFloatElemType(init.data_type()) &&
        numElements(host->shape) > 1) {
      InFlightDiagnostic remark = emitRemark(fileLoc());
      remark << "initializer '" << printable(init.name()) << "' "
             << formatShape(host->shape) << ": ";
      if (!frozen.empty() && candidates.count(init.name()))
        remark << "constant: --frozen '" << frozen << "'";
      else if (isTied)
        remark << "the transpose of parameter '"
               << printable(moduleNames.count(tied->second)
                                ? moduleNames[tied->second]
                                : tied->second)
               << "' (tied: "
               << (hasTorchSignature ? "its users read that parameter, and "
                                     : "")
               << "its data is initializer '" << printable(tied->second)
               << "' transposed, bit for bit)";
      else if (isParameter && constants.count(init.name()))
        remark << "parameter: --trainable '" << trainable << "' (the export "
               << "says " << constants[init.name()] << ")";
      else if (isParameter && torchAliases.count(init.name()))
        remark << "parameter '" << torchNames[init.name()]
               << "' (tied: torch.export also lists it as '"
               << torchAliases[init.name()] << "', and module '"
               << StringRef(torchNames[init.name()]).rsplit('.').first
               << "' reads it under that name)";
      else if (isParameter && torchNames.count(init.name()))
        remark << "parameter '" << torchNames[init.name()]
               << "' (torch.export names the parameter its users read)";
      else if (isParameter)
        remark << "parameter";
      else if (constants.count(init.name()))
        remark << "constant: " << constants[init.name()];
      else
        remark << "constant: it only feeds host computations (masks, shapes)";
    }
    if (isTied) {
      slot.transposeOf = initializers.at(tied->second);
    } else if (isParameter) {
      slot.parameter = &init;
      auto torchName = torchNames.find(init.name());
      if (failed(irName(init.name(), "initializer")) ||
          (torchName != torchNames.end() &&
           failed(irName(torchName->second, "parameter"))))
        ok = false;
    } else {
      slot.host = std::move(*host);
    }
  }
  for (const onnx::ValueInfoProto &out : model.graph().output())
    if (failed(irName(out.name(), "graph output")))
      ok = false;
  for (const std::string &unused : overrides.unused()) {
    emitError(fileLoc()) << unused << " matches no initializer";
    ok = false;
  }
  ok &= reportFoldedParameters(frozenInits, constants);
  return ok;
}

LogicalResult Importer::checkOutput(const onnx::ValueInfoProto &out, Value v) {
  if (!out.type().has_tensor_type())
    return success();
  const onnx::TypeProto::Tensor &t = out.type().tensor_type();
  int32_t e = t.elem_type();
  if (!exchangeable(e, /*input=*/false))
    return emitError(fileLoc())
           << "graph output '" << out.name() << "' has element type "
           << elemTypeName(e)
           << ", which partition does not support as an output (float32, "
              "float16, bfloat16, int32, int64)";
  if (!t.has_shape())
    return success();
  Shape actual = shapeOf(v);
  bool dimsOk = t.shape().dim_size() == static_cast<int>(actual.size());
  for (int d = 0; dimsOk && d < t.shape().dim_size(); ++d) {
    const auto &dim = t.shape().dim(d);
    int64_t expected = -1;
    if (dim.has_dim_value() && dim.dim_value() > 0)
      expected = dim.dim_value();
    else if (dim.has_dim_param() && symbolSizes.count(dim.dim_param()))
      expected = symbolSizes.at(dim.dim_param());
    if (expected >= 0 && expected != actual[d])
      dimsOk = false;
  }
  if (!dimsOk)
    return emitError(fileLoc())
           << "graph output '" << out.name() << "' is computed with shape "
           << formatShape(actual) << ", but the model declares another shape";
  return success();
}

LogicalResult
Importer::buildResults(SmallVectorImpl<Value> &results,
                       SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  // Results, checked against what the model declares.
  for (const onnx::ValueInfoProto &out : model.graph().output()) {
    auto slot = slots.find(out.name());
    if (slot != slots.end() && slot->second.sequence)
      return emitError(fileLoc()) << "graph output '" << out.name()
                                  << "' is a sequence; partition's outputs "
                                     "are tensors";
    FailureOr<Value> v = runtimeValue(out.name());
    if (failed(v))
      return emitError(fileLoc())
             << "graph output '" << out.name() << "' has no value";
    if (failed(checkOutput(out, *v)))
      return failure();
    results.push_back(*v);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(part::PartDialect::getNameAttrName(),
                             builder.getStringAttr(irNames.at(out.name())))));
  }
  return success();
}

OwningOpRef<ModuleOp> Importer::build(const std::vector<InputInfo> &inputs) {
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
    return nullptr;
  };
  for (const onnx::NodeProto &node : model.graph().node())
    if (failed(importNode(node)))
      return cleanup();
  layerTagger.layer = IntegerAttr();

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  if (failed(buildResults(results, resultAttrs)))
    return cleanup();
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

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(parse()))
    return nullptr;
  // Every problem is reported before anything is built.
  bool ok = checkDefinitions();
  ok &= checkNodes();
  std::vector<InputInfo> inputs;
  if (bindInputShapes() && checkDimBindings())
    ok &= collectInputs(inputs);
  else
    ok = false;
  ok &= registerInitializers();
  if (!ok)
    return nullptr;
  reportInputShapes();
  return build(inputs);
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
partition::import::importOnnx(MLIRContext &context, StringRef path,
                              const OnnxImportOptions &options,
                              Weights &weights) {
  context.loadDialect<part::PartDialect, func::FuncDialect>();
  Importer importer(context, path, options, weights);
  return importer.run();
}

std::vector<OnnxOpSupport> partition::import::supportedOnnxOps() {
  std::vector<OnnxOpSupport> ops;
  for (const auto &[name, handler] : opTable().handlers())
    ops.push_back({name, handler.since, handler.until, handler.note});
  return ops;
}
