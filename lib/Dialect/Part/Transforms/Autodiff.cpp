//===- Autodiff.cpp - reverse-mode differentiation of a loss function -----===//
//
// Rewrites `(args) -> loss` into `(args) -> (loss, d loss / d param...)`:
// one backward walk over the function's ops, each op's cotangents built by
// its VjpOpInterface rule (lib/Dialect/Part/IR/Vjp.cpp) and summed where a
// value has several uses. See docs/design/2026-12-02-training.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-autodiff"

namespace partition::part {
#define GEN_PASS_DEF_PARTAUTODIFFPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// True for a ranked tensor of a float element type.
bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// A splat constant of `type` with value `value`.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type,
                             FloatAttr::get(type.getElementType(), value)));
}

/// Differentiates `function` in place; reports and fails on what it cannot.
LogicalResult differentiate(func::FuncOp function) {
  MLIRContext *ctx = function.getContext();
  StringRef roleName = PartDialect::getRoleAttrName();
  StringRef nameName = PartDialect::getNameAttrName();

  // The loss: one 0-d float result.
  TypeRange resultTypes = function.getResultTypes();
  if (resultTypes.size() != 1 || !isFloatTensor(resultTypes[0]) ||
      cast<RankedTensorType>(resultTypes[0]).getRank() != 0) {
    InFlightDiagnostic diag = function.emitError()
                              << "part-autodiff differentiates a function "
                                 "whose single result is a 0-d float loss, "
                                 "but @"
                              << function.getName() << " returns (";
    // A training step returns hundreds of values: name a few.
    std::string types;
    llvm::raw_string_ostream os(types);
    llvm::interleaveComma(resultTypes.take_front(4), os);
    if (resultTypes.size() > 4)
      os << ", ... " << resultTypes.size() - 4 << " more";
    return diag << types << ")";
  }
  if (!function.getBody().hasOneBlock())
    return function.emitError()
           << "part-autodiff can only differentiate a function of one block";

  // The parameters, each of which gets a gradient.
  SmallVector<unsigned> parameters;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(i, roleName);
    if (!role || role.getValue() != ArgRole::Parameter)
      continue;
    if (!isFloatTensor(function.getArgumentTypes()[i]))
      return function.emitError()
             << "parameter argument " << i << " has type "
             << function.getArgumentTypes()[i]
             << ", which has no gradient (parameters must be float tensors)";
    parameters.push_back(i);
  }

  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  llvm::SmallPtrSet<Operation *, 32> original(forward.begin(), forward.end());

  // Backward ops go before the return, in reverse order of the forward ops,
  // so every cotangent is defined before its uses.
  OpBuilder b(ret);
  llvm::DenseMap<Value, Value> cotangents;
  // The seed: 1, or the loss scale (f16 mixed precision), so that backward
  // computes the gradients of `scale * loss` and small ones stay above f16's
  // smallest values; the optimizer divides by the scale again.
  Value seed;
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (function.getArgAttr(i, PartDialect::getLossScaleAttrName()))
      seed = body.getArgument(i);
  if (seed && seed.getType() != loss.getType())
    seed = CastOp::create(b, loss.getLoc(), loss.getType(), seed);
  cotangents[loss] = seed ? seed
                          : splat(b, loss.getLoc(),
                                  cast<RankedTensorType>(loss.getType()), 1.0);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultCotangents;
    bool any = false;
    for (Value result : op->getResults()) {
      Value c = cotangents.lookup(result);
      any |= bool(c);
      resultCotangents.push_back(c);
    }
    if (!any)
      continue; // no path to the loss
    auto vjp = dyn_cast<VjpOpInterface>(op);
    if (!vjp)
      return op->emitOpError()
             << "is on the path to the loss but has no vector-Jacobian "
                "product (VjpOpInterface), so part-autodiff cannot "
                "differentiate through it";
    Operation *before = ret->getPrevNode();
    SmallVector<Value> operandCotangents = vjp.buildVjp(b, resultCotangents);
    if (operandCotangents.size() != op->getNumOperands())
      return op->emitOpError()
             << "vector-Jacobian product gave " << operandCotangents.size()
             << " cotangents for " << op->getNumOperands()
             << " operands (a bug in its rule)";
    for (auto [index, operand, c] :
         llvm::enumerate(op->getOperands(), operandCotangents)) {
      if (!c || !isFloatTensor(operand.getType()))
        continue;
      if (c.getType() != operand.getType())
        return op->emitOpError()
               << "vector-Jacobian product gave operand " << index
               << " of type " << operand.getType() << " a cotangent of type "
               << c.getType() << " (a bug in its rule)";
      Value &slot = cotangents[operand];
      slot = slot ? AddOp::create(b, op->getLoc(), slot, c).getResult() : c;
    }
    // The backward ops of a layer's op belong to the layer (pipeline stages
    // run a layer's backward where its forward runs).
    if (Attribute layer = op->getAttr(PartDialect::getLayerAttrName()))
      for (Operation *made = before ? before->getNextNode() : &body.front();
           made && made != ret.getOperation(); made = made->getNextNode())
        if (!made->hasAttr(PartDialect::getLayerAttrName()))
          made->setAttr(PartDialect::getLayerAttrName(), layer);
    LLVM_DEBUG(llvm::dbgs() << "part-autodiff: differentiated " << op->getName()
                            << " at " << op->getLoc() << "\n");
  }

  // Results: the loss, then one gradient per parameter (zeros when the
  // parameter does not reach the loss).
  SmallVector<Value> results = {loss};
  SmallVector<Type> types = {loss.getType()};
  SmallVector<DictionaryAttr> resultAttrs = {function.getResultAttrDict(0)};
  if (!resultAttrs[0])
    resultAttrs[0] = DictionaryAttr::get(ctx);
  for (unsigned i : parameters) {
    BlockArgument arg = function.getArgument(i);
    Value grad = cotangents.lookup(arg);
    if (!grad)
      grad = splat(b, arg.getLoc(), cast<RankedTensorType>(arg.getType()), 0.0);
    results.push_back(grad);
    types.push_back(arg.getType());
    auto name = function.getArgAttrOfType<StringAttr>(i, nameName);
    std::string gradName =
        "grad." + (name ? name.str() : "arg" + std::to_string(i));
    NamedAttrList attrs;
    attrs.set(nameName, StringAttr::get(ctx, gradName));
    attrs.set(PartDialect::getGradOfAttrName(),
              IntegerAttr::get(IntegerType::get(ctx, 64), i));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  function.setFunctionType(
      FunctionType::get(ctx, function.getArgumentTypes(), types));
  function.setAllResultAttrs(resultAttrs);

  // Backward ops whose results nothing uses (cotangents of operands that
  // need none, such as the exponent of a pow by a constant).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!original.contains(&op) && isOpTriviallyDead(&op))
      op.erase();
  return success();
}

struct PartAutodiffPass
    : public partition::part::impl::PartAutodiffPassBase<PartAutodiffPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      if (getSpmdMesh(function)) {
        function.emitError()
            << "@" << function.getName()
            << " is a per-device program; part-autodiff differentiates the "
               "global program (run it before part-spmd)";
        return signalPassFailure();
      }
      if (failed(differentiate(function)))
        return signalPassFailure();
    }
  }
};

} // namespace
