//===- PartDialect.cpp - the part dialect ---------------------------------===//
//
// Registers the dialect's ops and attributes, and verifies the `part.*`
// attributes that other ops (func.func, model ops) carry.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/runtime/StoredShape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cmath>

using namespace mlir;
using namespace partition::part;

#include "partition/Dialect/Part/IR/PartOpsDialect.cpp.inc"

void PartDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "partition/Dialect/Part/IR/PartOps.cpp.inc"
      >();
}

/// Verifies a `part.sharding` attribute on a value of type `type`.
static LogicalResult verifyShardingAttr(Operation *op, Attribute attr,
                                        Type type, const Twine &what) {
  auto sharding = dyn_cast<ShardingAttr>(attr);
  if (!sharding)
    return op->emitOpError() << "'part.sharding' on " << what
                             << " must be a #part.sharding, got " << attr;
  return verifyShardingFor(op, sharding, type, [&] {
    return op->emitOpError() << "has an invalid sharding on " << what << ": ";
  });
}

/// Verifies a `part.logical_shape` attribute on a value of type `type`: the
/// unpadded shape, of the same rank, each dimension in [1, the padded size]
/// (in a per-device program, the sizes are global and not checked against
/// the local type).
static LogicalResult verifyLogicalShapeAttr(Operation *op, Attribute attr,
                                            bool onResult, unsigned index) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitOpError() << "'part.logical_shape' belongs on function "
                                "arguments and results";
  Type type = onResult ? function.getResultTypes()[index]
                       : function.getArgumentTypes()[index];
  std::string what =
      (onResult ? "result " : "argument ") + std::to_string(index);
  auto shape = dyn_cast<DenseI64ArrayAttr>(attr);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!shape || !tensor || shape.size() != tensor.getRank())
    return op->emitOpError()
           << "'part.logical_shape' on " << what
           << " must be an array<i64> of the value's rank, got " << attr;
  bool spmd = op->hasAttr(PartDialect::getSpmdAttrName());
  for (auto [d, n] : llvm::enumerate(shape.asArrayRef()))
    if (n < 1 || (!spmd && n > tensor.getDimSize(d)))
      return op->emitOpError()
             << "'part.logical_shape' on " << what << " has dimension " << d
             << " of size " << n << ", which is not in [1, "
             << tensor.getDimSize(d) << "]";
  return success();
}

/// Verifies a `part.stored_shape` on argument `index`: the shape weights
/// files have, which the argument's (unpadded, whole) shape views.
static LogicalResult verifyStoredShapeAttr(Operation *op, Attribute attr,
                                           unsigned index) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  auto shape = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!function || !shape)
    return op->emitOpError() << "'part.stored_shape' on argument " << index
                             << " must be an array<i64> on a function, got "
                             << attr;
  // Weights files hold parameters and their state only: an input is fed
  // in its own shape (the plan loader rejects a stored shape on one).
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      index, PartDialect::getRoleAttrName());
  if (!role || (role.getValue() != ArgRole::Parameter &&
                role.getValue() != ArgRole::State))
    return op->emitOpError()
           << "'part.stored_shape' on argument " << index
           << " belongs on a #part.role<parameter> or #part.role<state> "
              "argument, not on "
           << (role ? "a #part.role<" +
                          stringifyArgRole(role.getValue()).str() + ">"
                    : std::string("an input"))
           << " argument";
  auto tensor = dyn_cast<RankedTensorType>(function.getArgumentTypes()[index]);
  if (!tensor)
    return op->emitOpError() << "'part.stored_shape' on argument " << index
                             << " needs a ranked tensor";
  std::vector<int64_t> view(tensor.getShape().begin(), tensor.getShape().end());
  if (auto logical = function.getArgAttrOfType<DenseI64ArrayAttr>(
          index, PartDialect::getLogicalShapeAttrName()))
    view.assign(logical.asArrayRef().begin(), logical.asArrayRef().end());
  // After partitioning the type is one device's block: only the stored
  // shape's own sizes can be checked.
  bool spmd = op->hasAttr(PartDialect::getSpmdAttrName());
  std::vector<int64_t> stored(shape.asArrayRef().begin(),
                              shape.asArrayRef().end());
  // The view reshapes the stored tensor transposed, when it is (a
  // permutation that is not one is verifyStoredPermutationAttr's error).
  auto permAttr = function.getArgAttrOfType<DenseI64ArrayAttr>(
      index, PartDialect::getStoredPermutationAttrName());
  std::vector<int64_t> perm;
  if (permAttr)
    perm.assign(permAttr.asArrayRef().begin(), permAttr.asArrayRef().end());
  if (!partition::runtime::isPermutation(perm, stored.size()))
    perm.clear();
  if (llvm::any_of(stored, [](int64_t n) { return n < 1; }) ||
      (!spmd && !partition::runtime::viewGroups(
                    view, partition::runtime::permuteShape(stored, perm)))) {
    InFlightDiagnostic diag = op->emitOpError()
                              << "'part.stored_shape' on argument " << index
                              << " is " << attr;
    if (!perm.empty())
      diag << " permuted by " << permAttr;
    return diag << ", which the argument's shape " << tensor
                << " does not view (each stored dimension must be the "
                << "product of consecutive dimensions of the argument)";
  }
  return success();
}

/// Verifies a `part.stored_permutation` on argument `index`: a permutation
/// of the dimensions of the argument's `part.stored_shape` (the view is
/// checked with the stored shape).
static LogicalResult verifyStoredPermutationAttr(Operation *op, Attribute attr,
                                                 unsigned index) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  auto perm = dyn_cast<DenseI64ArrayAttr>(attr);
  if (!function || !perm)
    return op->emitOpError()
           << "'part.stored_permutation' on argument " << index
           << " must be an array<i64> on a function, got " << attr;
  auto stored = function.getArgAttrOfType<DenseI64ArrayAttr>(
      index, PartDialect::getStoredShapeAttrName());
  if (!stored)
    return op->emitOpError()
           << "'part.stored_permutation' on argument " << index
           << " needs a 'part.stored_shape' on the argument (the shape "
              "weights files hold it in)";
  std::vector<int64_t> dims(perm.asArrayRef().begin(),
                            perm.asArrayRef().end());
  if (!partition::runtime::isPermutation(dims, stored.size()))
    return op->emitOpError()
           << "'part.stored_permutation' on argument " << index << " is "
           << attr << ", which does not permute the " << stored.size()
           << " dimensions of its 'part.stored_shape' " << stored;
  return success();
}

/// Verifies a `part.name` attribute: a non-empty string.
static LogicalResult verifyNameAttr(Operation *op, Attribute attr,
                                    StringRef what, unsigned index) {
  auto name = dyn_cast<StringAttr>(attr);
  if (!name || name.getValue().empty())
    return op->emitOpError() << "'part.name' on " << what << " " << index
                             << " must be a non-empty string, got " << attr;
  return success();
}

/// Verifies a `part.slot` attribute: "arg:N", "stash:N", "acc:N", "hold:N"
/// or "done:N" with N >= 0.
static LogicalResult verifySlotAttr(Operation *op, Attribute attr,
                                    StringRef what, unsigned index) {
  auto slot = dyn_cast<StringAttr>(attr);
  StringRef kind, number;
  if (slot)
    std::tie(kind, number) = slot.getValue().split(':');
  unsigned n;
  if (!slot ||
      !llvm::is_contained({"arg", "stash", "acc", "hold", "done"}, kind) ||
      number.getAsInteger(10, n))
    return op->emitOpError()
           << "'part.slot' on " << what << " " << index
           << " must be \"arg:N\", \"stash:N\", \"acc:N\", \"hold:N\" or "
              "\"done:N\", got "
           << attr;
  return success();
}

LogicalResult PartDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getShardingAttrName()) {
    if (op->getNumResults() == 1)
      return verifyShardingAttr(op, attr.getValue(), op->getResult(0).getType(),
                                "its result");
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || list.size() != op->getNumResults())
      return op->emitOpError()
             << "has " << op->getNumResults()
             << " results, so 'part.sharding' must be an array of as many "
                "#part.sharding";
    for (auto [index, sharding] : llvm::enumerate(list))
      if (failed(verifyShardingAttr(op, sharding,
                                    op->getResult(index).getType(),
                                    "result " + Twine(index))))
        return failure();
    return success();
  }
  if (name == getShardingOriginAttrName() || name == getOriginAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a string";
    return success();
  }
  if (name == getGradientOfAttrName()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    auto function = op->getParentOfType<FunctionOpInterface>();
    if (!index || index.getInt() < 0 || !function ||
        index.getInt() >= int64_t(function.getNumArguments()) ||
        op->getNumResults() != 1)
      return op->emitOpError()
             << "'part.gradient_of' belongs on an op of one result and names "
                "an argument of the function (the parameter whose gradient "
                "the result is), got "
             << attr.getValue();
    return success();
  }
  if (name == getGradientAttrName()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || index.getInt() < 0 ||
        index.getInt() >= int64_t(op->getNumOperands()))
      return op->emitOpError()
             << "'part.gradient' must be the index of one of its "
             << op->getNumOperands() << " operands, got " << attr.getValue();
    return success();
  }
  if (name == getSpmdAttrName()) {
    auto mesh = dyn_cast<FlatSymbolRefAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !mesh)
      return op->emitOpError()
             << "'part.spmd' belongs on a function and names a part.mesh";
    if (!lookupMesh(op, mesh))
      return op->emitOpError() << "'part.spmd' refers to " << mesh
                               << ", which is not a part.mesh";
    return success();
  }
  if (name == getLayerAttrName()) {
    auto layer = dyn_cast<IntegerAttr>(attr.getValue());
    if (!layer || !layer.getType().isSignlessInteger(64) || layer.getInt() < 0)
      return op->emitOpError()
             << "'part.layer' must be a non-negative i64 layer index, got "
             << attr.getValue();
    return success();
  }
  if (name == "part.stage") {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !stage || stage.getInt() < 0)
      return op->emitOpError() << "'part.stage' belongs on a function (a "
                                  "pipeline stage) and is a non-negative "
                                  "integer, got "
                               << attr.getValue();
    return success();
  }
  if (name == "part.step") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'part.step' names the pipeline step the op "
                                  "belongs to (\"F3\"), got "
                               << attr.getValue();
    return success();
  }
  if (name == "part.schedule_kind") {
    auto kind = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !kind)
      return op->emitOpError() << "'part.schedule_kind' belongs on a function "
                                  "(a pipeline stage) and names its schedule, "
                                  "got "
                               << attr.getValue();
    return success();
  }
  if (name == "part.schedule") {
    if (!isa<FunctionOpInterface>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'part.schedule' belongs on a function (a "
                                  "pipeline stage) and is a string, got "
                               << attr.getValue();
    return success();
  }
  if (name == getFragmentAttrName()) {
    if (!isa<FunctionOpInterface>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'part.fragment' belongs on a function (a "
                                  "pipeline fragment) and is a string, got "
                               << attr.getValue();
    return success();
  }
  if (name == getFinalAttrName()) {
    if (!isa<FunctionOpInterface>(op) || !isa<UnitAttr>(attr.getValue()) ||
        !op->hasAttr(getFragmentAttrName()))
      return op->emitOpError() << "'part.final' is a unit attribute on a "
                                  "pipeline fragment (with 'part.fragment')";
    return success();
  }
  if (name == getFragmentsAttrName()) {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!isa<FunctionOpInterface>(op) || !list ||
        !llvm::all_of(list, llvm::IsaPred<FlatSymbolRefAttr>))
      return op->emitOpError() << "'part.fragments' belongs on a function (a "
                                  "pipeline stage) and lists its fragment "
                                  "functions, got "
                               << attr.getValue();
    return success();
  }
  if (name == getModelFlopsAttrName()) {
    auto flops = dyn_cast<IntegerAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !flops || !flops.getType().isSignlessInteger() ||
        flops.getValue().isNegative())
      return op->emitOpError() << "'part.model_flops' belongs on a module and "
                                  "is an integer of at least 0 (the model "
                                  "FLOPs of one step), got "
                               << attr.getValue();
    return success();
  }
  if (name == getReplicatedAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'part.replicated' must be a string, got "
                               << attr.getValue();
    return success();
  }
  if (name == getContextHeadsAttrName() || name == getContextRingAttrName()) {
    bool heads = name == getContextHeadsAttrName();
    bool attention = heads ? isa<AttentionOp, AttentionGradOp>(op)
                           : isa<AttentionBlockOp, AttentionGradOp>(op);
    if (!attention || !isa<StringAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' names a mesh axis (a string) on "
             << (heads ? "part.attention or part.attention_grad"
                       : "part.attention_block or part.attention_grad")
             << ", got " << attr.getValue();
    return success();
  }
  if (name == getRecomputedAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'part.recomputed' is a unit attribute, got "
                               << attr.getValue();
    return success();
  }
  if (name == getRoleAttrName() || name == getNameAttrName())
    return op->emitOpError()
           << "'" << name << "' belongs on function arguments, not on an op";
  if (name == getGradOfAttrName())
    return op->emitOpError()
           << "'part.grad_of' belongs on function results, not on an op";
  return op->emitOpError() << "has unknown attribute '" << name << "'";
}

LogicalResult PartDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getShardingAttrName()) {
    // A function declaration has no entry block: take the type from the
    // signature.
    Type type;
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      type = function.getArgumentTypes()[argIndex];
    else if (!op->getRegion(regionIndex).empty())
      type = op->getRegion(regionIndex).getArgument(argIndex).getType();
    else
      return success();
    return verifyShardingAttr(op, attr.getValue(), type,
                              "argument " + Twine(argIndex));
  }
  if (name == getNameAttrName())
    return verifyNameAttr(op, attr.getValue(), "argument", argIndex);
  if (name == getLogicalShapeAttrName())
    return verifyLogicalShapeAttr(op, attr.getValue(), /*onResult=*/false,
                                  argIndex);
  if (name == getStoredShapeAttrName())
    return verifyStoredShapeAttr(op, attr.getValue(), argIndex);
  if (name == getStoredPermutationAttrName())
    return verifyStoredPermutationAttr(op, attr.getValue(), argIndex);
  if (name == getShardingOriginAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'part.sharding_origin' on argument "
                               << argIndex << " must be a string";
    return success();
  }
  if (name == getStateOfAttrName()) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    auto role = function ? function.getArgAttrOfType<ArgRoleAttr>(
                               argIndex, getRoleAttrName())
                         : ArgRoleAttr();
    if (!role || role.getValue() != ArgRole::State || !index ||
        index.getInt() < 0 ||
        index.getInt() >= int64_t(function.getNumArguments()))
      return op->emitOpError()
             << "'part.state_of' on argument " << argIndex
             << " belongs on a #part.role<state> argument and names an "
                "argument (its parameter), got "
             << attr.getValue();
    return success();
  }
  if (name == getInitAttrName() || name == getLossScaleAttrName()) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    auto role = function ? function.getArgAttrOfType<ArgRoleAttr>(
                               argIndex, getRoleAttrName())
                         : ArgRoleAttr();
    if (!role || role.getValue() != ArgRole::State)
      return op->emitOpError() << "'" << name << "' on argument " << argIndex
                               << " belongs on a #part.role<state> argument";
    Type type = function.getArgumentTypes()[argIndex];
    if (name == getInitAttrName()) {
      Attribute value = attr.getValue();
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (auto number = dyn_cast<FloatAttr>(value)) {
        if (!tensor || !isa<FloatType>(tensor.getElementType()))
          return op->emitOpError()
                 << "'part.init' on argument " << argIndex << " is the float "
                 << number.getValueAsDouble() << ", but the argument is "
                 << type;
        return success();
      }
      auto source = dyn_cast<StringAttr>(value);
      if (!source || source.getValue().empty())
        return op->emitOpError()
               << "'part.init' on argument " << argIndex
               << " must be a float or the name of a parameter, got " << value;
      return success();
    }
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!isa<UnitAttr>(attr.getValue()) || !tensor || tensor.getRank() != 0 ||
        !tensor.getElementType().isF32())
      return op->emitOpError()
             << "'part.loss_scale' on argument " << argIndex
             << " must be a unit attribute on a tensor<f32> state argument, "
                "got "
             << attr.getValue() << " on " << type;
    return success();
  }
  if (name == getSlotAttrName())
    return verifySlotAttr(op, attr.getValue(), "argument", argIndex);
  if (name == getMicroBatchesAttrName()) {
    auto count = dyn_cast<IntegerAttr>(attr.getValue());
    if (!count || count.getInt() < 1)
      return op->emitOpError() << "'part.micro_batches' on argument "
                               << argIndex << " must be a positive integer, got "
                               << attr.getValue();
    return success();
  }
  if (name == getRoleAttrName()) {
    if (!isa<ArgRoleAttr>(attr.getValue()))
      return op->emitOpError()
             << "'part.role' on argument " << argIndex
             << " must be #part.role<parameter|input|label>, got "
             << attr.getValue();
    return success();
  }
  return op->emitOpError() << "has unknown attribute '" << name
                           << "' on argument " << argIndex;
}

LogicalResult PartDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getNameAttrName())
    return verifyNameAttr(op, attr.getValue(), "result", resultIndex);
  if (name == getLogicalShapeAttrName())
    return verifyLogicalShapeAttr(op, attr.getValue(), /*onResult=*/true,
                                  resultIndex);
  if (name == getSlotAttrName())
    return verifySlotAttr(op, attr.getValue(), "result", resultIndex);
  if (name == getGradOfAttrName()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || !index.getType().isSignlessInteger(64))
      return op->emitOpError()
             << "'part.grad_of' on result " << resultIndex
             << " must be an i64 argument index, got " << attr.getValue();
    auto function = dyn_cast<FunctionOpInterface>(op);
    int64_t numArgs = function ? function.getNumArguments() : 0;
    if (function && (index.getInt() < 0 || index.getInt() >= numArgs))
      return op->emitOpError()
             << "'part.grad_of' on result " << resultIndex << " is "
             << index.getInt() << ", but the function has " << numArgs
             << " arguments";
    return success();
  }
  if (name == getLossWeightAttrName()) {
    auto weight = dyn_cast<FloatAttr>(attr.getValue());
    if (!weight || !std::isfinite(weight.getValueAsDouble()))
      return op->emitOpError()
             << "'part.loss_weight' on result " << resultIndex
             << " must be a finite float, got " << attr.getValue();
    return success();
  }
  if (name == getUpdatesAttrName()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!index || !function)
      return op->emitOpError() << "'part.updates' on result " << resultIndex
                               << " must be an integer argument index";
    int64_t arg = index.getInt();
    if (arg < 0 || arg >= static_cast<int64_t>(function.getNumArguments()))
      return op->emitOpError()
             << "result " << resultIndex << " updates argument " << arg
             << ", but the function has " << function.getNumArguments();
    if (function.getArgumentTypes()[arg] !=
        function.getResultTypes()[resultIndex])
      return op->emitOpError()
             << "result " << resultIndex << " of type "
             << function.getResultTypes()[resultIndex]
             << " cannot update argument " << arg << " of type "
             << function.getArgumentTypes()[arg];
    auto role = function.getArgAttrOfType<ArgRoleAttr>(arg, getRoleAttrName());
    if (!role || (role.getValue() != ArgRole::Parameter &&
                  role.getValue() != ArgRole::State))
      return op->emitOpError()
             << "result " << resultIndex << " updates argument " << arg
             << ", which is not a parameter or state";
    return success();
  }
  if (name != getShardingAttrName())
    return op->emitOpError() << "has unknown attribute '" << name
                             << "' on result " << resultIndex;
  // Only functions give their region results attributes; elsewhere there is
  // no result type to check the sharding against.
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return success();
  return verifyShardingAttr(op, attr.getValue(),
                            function.getResultTypes()[resultIndex],
                            "result " + Twine(resultIndex));
}
