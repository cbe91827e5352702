//===- AppendLoss.cpp - a training loss for inference functions -----------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

#define DEBUG_TYPE "part-append-loss"

namespace partition::part {
#define GEN_PASS_DEF_PARTAPPENDLOSSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartAppendLossPass
    : public partition::part::impl::PartAppendLossPassBase<PartAppendLossPass> {
  using PartAppendLossPassBase::PartAppendLossPassBase;

  /// Adds weight x result to `loss` for each result marked with a loss
  /// weight (an auxiliary loss of the model).
  static LogicalResult addAuxiliaryLosses(func::FuncOp function,
                                          func::ReturnOp ret, OpBuilder &b,
                                          Value &loss) {
    StringRef weightName = PartDialect::getLossWeightAttrName();
    for (unsigned i = 0; i < function.getNumResults(); ++i) {
      auto weight = function.getResultAttrOfType<FloatAttr>(i, weightName);
      if (!weight)
        continue;
      Value aux = ret.getOperand(i);
      auto type = dyn_cast<RankedTensorType>(aux.getType());
      if (!type || type.getRank() != 0 ||
          !isa<FloatType>(type.getElementType()))
        return function.emitError()
               << "result " << i << " has " << weightName
               << " but type " << aux.getType()
               << "; an auxiliary loss is a 0-d float";
      Location loc = ret.getLoc();
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      if (type != scalar)
        aux = CastOp::create(b, loc, scalar, aux);
      Value w = ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(scalar, float(weight.getValueAsDouble())));
      loss = AddOp::create(b, loc, loss, MulOp::create(b, loc, aux, w));
    }
    return success();
  }

  LogicalResult appendLoss(func::FuncOp function) {
    MLIRContext *ctx = &getContext();
    StringRef nameAttr = PartDialect::getNameAttrName();
    if (function.getNumResults() == 0)
      return function.emitError() << "has no result to compute a loss from";
    // The result the loss is computed from.
    unsigned index = 0;
    if (!output.empty()) {
      bool found = false;
      for (unsigned i = 0; i < function.getNumResults(); ++i) {
        auto name = function.getResultAttrOfType<StringAttr>(i, nameAttr);
        if (name && name.getValue() == output) {
          index = i;
          found = true;
        }
      }
      if (!found)
        return function.emitError()
               << "has no result named \"" << output << "\" (output=)";
    }
    auto type = dyn_cast<RankedTensorType>(function.getResultTypes()[index]);
    if (!type || !isa<FloatType>(type.getElementType()))
      return function.emitError()
             << "result " << index << " has type "
             << function.getResultTypes()[index]
             << "; a loss needs a float tensor";
    if (function.getNumResults() == 1 && type.getRank() == 0)
      return function.emitError()
             << "already returns a scalar; it needs no appended loss";

    auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
    Value value = ret.getOperand(index);
    OpBuilder b(ret);
    Location loc = ret.getLoc();
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    Block &body = function.getBody().front();
    Value loss;
    if (kind == "cross-entropy") {
      if (type.getRank() < 2)
        return function.emitError()
               << "result " << index << " of type " << type
               << " has no class dimension for a cross-entropy loss";
      auto labelsType =
          RankedTensorType::get(type.getShape().drop_back(), b.getI32Type());
      if (failed(function.insertArgument(
              function.getNumArguments(), labelsType,
              b.getDictionaryAttr(
                  {b.getNamedAttr(nameAttr, b.getStringAttr("labels")),
                   b.getNamedAttr(PartDialect::getRoleAttrName(),
                                  ArgRoleAttr::get(ctx, ArgRole::Label))}),
              loc)))
        return failure();
      Value labels = body.getArguments().back();
      Value logits = value;
      if (type.getElementType() != b.getF32Type())
        logits = CastOp::create(b, loc, type.clone(b.getF32Type()), logits);
      loss = SoftmaxCrossEntropyOp::create(b, loc, scalar, logits, labels,
                                           LossReduction::Mean);
    } else if (kind == "mse") {
      if (failed(function.insertArgument(
              function.getNumArguments(), type,
              b.getDictionaryAttr(
                  {b.getNamedAttr(nameAttr, b.getStringAttr("targets")),
                   b.getNamedAttr(PartDialect::getRoleAttrName(),
                                  ArgRoleAttr::get(ctx, ArgRole::Label))}),
              loc)))
        return failure();
      Value targets = body.getArguments().back();
      Value diff = SubOp::create(b, loc, value, targets);
      Value square = MulOp::create(b, loc, diff, diff);
      if (type.getElementType() != b.getF32Type())
        square = CastOp::create(b, loc, type.clone(b.getF32Type()), square);
      SmallVector<int64_t> dims(type.getRank());
      std::iota(dims.begin(), dims.end(), 0);
      loss = type.getRank() == 0
                 ? square
                 : ReduceMeanOp::create(b, loc, scalar, square, dims, false)
                       .getResult();
    } else {
      return function.emitError() << "unknown loss kind \"" << kind
                                  << "\" (expected cross-entropy or mse)";
    }
    if (failed(addAuxiliaryLosses(function, ret, b, loss)))
      return failure();
    func::ReturnOp::create(b, loc, ValueRange{loss});
    ret.erase();
    function.setFunctionType(FunctionType::get(
        ctx, function.getArgumentTypes(), TypeRange{scalar}));
    function.setAllResultAttrs(ArrayRef<DictionaryAttr>{b.getDictionaryAttr(
        b.getNamedAttr(nameAttr, b.getStringAttr("loss")))});
    return success();
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      if (failed(appendLoss(function)))
        return signalPassFailure();
    }
  }
};
} // namespace
