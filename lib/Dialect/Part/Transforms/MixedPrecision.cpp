//===- MixedPrecision.cpp - bf16 / f16 compute, f32 where it matters ------===//
//
// Turns f32 parameters into compute-type (bf16 or f16) ones and gives every
// op the type it computes in, casting operands where they differ: matrix
// products in the compute type, reductions, normalisations, exponentials and
// the loss in f32, everything else in the widest type of its non-constant
// operands. With f16, adds the dynamic loss-scale state argument. See
// docs/design/2026-12-02-training.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "part-mixed-precision"

namespace partition::part {
#define GEN_PASS_DEF_PARTMIXEDPRECISIONPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// The float element type of `type`, or null.
FloatType floatElement(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

/// Ops that compute in the compute type: the matrix products, whose kernels
/// accumulate in f32.
bool computesInLowPrecision(Operation *op) {
  return isa<MatmulOp, BatchMatmulOp, AttentionOp>(op);
}

/// Ops that compute in f32: reductions, normalisations, exponentials and the
/// loss (PyTorch autocast's f32 list).
bool computesInF32(Operation *op) {
  return isa<SoftmaxOp, LayerNormOp, RmsNormOp, SoftmaxCrossEntropyOp,
             ReduceSumOp, ReduceMeanOp, ExpOp, LogOp, PowOp>(op);
}

/// `type` with element type `element`.
RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

class Converter {
public:
  Converter(func::FuncOp function, FloatType compute)
      : function(function), compute(compute),
        f32(Float32Type::get(function.getContext())) {}

  void run();

private:
  /// `value` as a tensor of element type `element`: a new splat constant
  /// for a splat constant, else a cast in front of `user`, shared by the
  /// value's later users in the same layer.
  Value convert(Value value, Type element, Operation *user);

  func::FuncOp function;
  FloatType compute;
  FloatType f32;
  /// Converted splat constants, by (constant, element type).
  llvm::DenseMap<std::pair<Value, Type>, Value> constants;
  /// Casts made, by (value, element type, layer of their users).
  llvm::DenseMap<std::tuple<Value, Type, Attribute>, Value> casts;
};

Value Converter::convert(Value value, Type element, Operation *user) {
  OpBuilder b(user);
  Type type = withElement(value.getType(), element);
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat()) {
      Value &slot = constants[{value, element}];
      if (!slot) {
        b.setInsertionPointAfter(constant);
        double v = dense.getSplatValue<APFloat>().convertToDouble();
        auto shaped = cast<RankedTensorType>(type);
        slot = ConstantOp::create(
            b, constant.getLoc(),
            DenseElementsAttr::get(shaped, FloatAttr::get(element, v)));
      }
      return slot;
    }
  }
  // The cast belongs to the layer of the op it feeds: part-recompute then
  // recomputes it with the layer instead of keeping its result (a copy of
  // the layer's input in the compute type) from forward to backward, and a
  // pipeline cuts it with the layer. One cast serves every user in that
  // layer (ops are converted in order, so it precedes them): the layer's
  // q, k and v projections read one compute-type copy of their input, so
  // tensor parallelism gathers it once under sequence parallelism, and
  // autodiff sums their input gradients in the compute type, before the
  // one reduction of the sum (as Megatron's fused QKV projection does).
  Attribute layer = user->getAttr(PartDialect::getLayerAttrName());
  Value &slot = casts[{value, element, layer}];
  if (!slot) {
    auto cast = CastOp::create(b, user->getLoc(), type, value);
    if (layer)
      cast->setAttr(PartDialect::getLayerAttrName(), layer);
    slot = cast;
  }
  return slot;
}

void Converter::run() {
  Block &body = function.getBody().front();
  MLIRContext *ctx = function.getContext();

  // Parameters become compute-type tensors.
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        i, PartDialect::getRoleAttrName());
    if (!role || role.getValue() != ArgRole::Parameter)
      continue;
    BlockArgument arg = body.getArgument(i);
    FloatType element = floatElement(arg.getType());
    if (!element || !element.isF32())
      continue;
    arg.setType(withElement(arg.getType(), compute));
  }

  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (isa<CastOp, ConstantOp>(op))
      continue;
    // The type the op computes in.
    FloatType type;
    bool anyFloat = false;
    for (Value operand : op.getOperands()) {
      FloatType element = floatElement(operand.getType());
      if (!element)
        continue;
      anyFloat = true;
      if (operand.getDefiningOp<ConstantOp>())
        continue;
      if (!type || element.getWidth() > type.getWidth())
        type = element;
    }
    if (!anyFloat)
      continue;
    if (computesInLowPrecision(&op))
      type = compute;
    else if (computesInF32(&op))
      type = f32;
    else if (!type)
      continue; // only constants: the op keeps its types
    for (OpOperand &operand : op.getOpOperands()) {
      FloatType element = floatElement(operand.get().getType());
      if (element && element != type)
        operand.set(convert(operand.get(), type, &op));
    }
    for (Value result : op.getResults())
      if (floatElement(result.getType()))
        result.setType(withElement(result.getType(), type));
  }

  // Constants left without users by their converted copies.
  for (auto &[key, copy] : constants)
    if (Operation *original = key.first.getDefiningOp())
      if (original->use_empty())
        original->erase();
  constants.clear();
  casts.clear();

  // Results keep their declared types.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [operand, declared] :
       llvm::zip(ret->getOpOperands(), function.getResultTypes()))
    if (operand.get().getType() != declared) {
      OpBuilder b(ret);
      operand.set(CastOp::create(b, ret.getLoc(), declared, operand.get()));
    }
  function.setFunctionType(FunctionType::get(ctx, body.getArgumentTypes(),
                                             function.getResultTypes()));
}

struct PartMixedPrecisionPass
    : public partition::part::impl::PartMixedPrecisionPassBase<
          PartMixedPrecisionPass> {
  using PartMixedPrecisionPassBase::PartMixedPrecisionPassBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    FloatType type;
    if (compute == "bf16")
      type = BFloat16Type::get(ctx);
    else if (compute == "f16")
      type = Float16Type::get(ctx);
    else {
      getOperation().emitError()
          << "part-mixed-precision: unknown compute type \"" << compute
          << "\" (expected bf16 or f16)";
      return signalPassFailure();
    }
    if (!(initialLossScale > 0)) {
      getOperation().emitError()
          << "part-mixed-precision: initial-loss-scale must be positive, got "
          << initialLossScale;
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      if (getSpmdMesh(function)) {
        function.emitError()
            << "@" << function.getName()
            << " is a per-device program; part-mixed-precision rewrites the "
               "global program (run it before part-autodiff and part-spmd)";
        return signalPassFailure();
      }
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        if (function.getResultAttr(i, PartDialect::getGradOfAttrName()) ||
            function.getResultAttr(i, PartDialect::getUpdatesAttrName())) {
          function.emitError()
              << "@" << function.getName()
              << " already has gradients; part-mixed-precision rewrites the "
                 "forward function (run it before part-autodiff)";
          return signalPassFailure();
        }
      if (!function.getBody().hasOneBlock()) {
        function.emitError() << "part-mixed-precision handles functions of "
                                "one block; @"
                             << function.getName() << " has more";
        return signalPassFailure();
      }
      Converter(function, type).run();
      if (type.isF16())
        addLossScale(function);
    }
  }

  /// Appends the `loss_scale` state argument.
  void addLossScale(func::FuncOp function) {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    unsigned index = function.getNumArguments();
    (void)function.insertArgument(
        index, scalar,
        b.getDictionaryAttr(
            {b.getNamedAttr(PartDialect::getNameAttrName(),
                            b.getStringAttr("loss_scale")),
             b.getNamedAttr(PartDialect::getRoleAttrName(),
                            ArgRoleAttr::get(ctx, ArgRole::State)),
             b.getNamedAttr(PartDialect::getInitAttrName(),
                            b.getF32FloatAttr(float(initialLossScale))),
             b.getNamedAttr(PartDialect::getLossScaleAttrName(),
                            b.getUnitAttr())}),
        function.getLoc());
  }
};

} // namespace
