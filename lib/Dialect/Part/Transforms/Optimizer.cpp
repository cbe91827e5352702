//===- Optimizer.cpp - a training step from a gradient function -----------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#define DEBUG_TYPE "part-optimizer"

namespace partition::part {
#define GEN_PASS_DEF_PARTOPTIMIZERPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

struct PartOptimizerPass
    : public partition::part::impl::PartOptimizerPassBase<PartOptimizerPass> {
  using PartOptimizerPassBase::PartOptimizerPassBase;

  LogicalResult rewrite(func::FuncOp function);

  void runOnOperation() override {
    if (kind != "sgd" && kind != "adamw") {
      getOperation().emitError()
          << "unknown optimizer kind \"" << kind << "\" (expected sgd or adamw)";
      return signalPassFailure();
    }
    if (schedule != "constant" && schedule != "cosine") {
      getOperation().emitError()
          << "unknown learning-rate schedule \"" << schedule
          << "\" (expected constant or cosine)";
      return signalPassFailure();
    }
    if (schedule == "cosine" && decaySteps <= warmup) {
      getOperation().emitError()
          << "schedule=cosine needs decay-steps (the step at which the "
             "learning rate reaches min-lr) above warmup, got decay-steps="
          << int64_t(decaySteps) << " and warmup=" << int64_t(warmup);
      return signalPassFailure();
    }
    // Numeric options, checked before they turn into constants of the
    // update: a NaN learning rate or beta1 = 1 trains to NaN silently.
    auto checkRange = [&](StringRef name, double value, double low,
                          bool lowOpen, double high, bool highOpen) {
      bool ok = std::isfinite(value) &&
                (lowOpen ? value > low : value >= low) &&
                (highOpen ? value < high : value <= high);
      if (!ok)
        getOperation().emitError()
            << "part-optimizer: " << name << " must be in "
            << (lowOpen ? "(" : "[") << low << ", " << high
            << (highOpen ? ")" : "]") << ", got " << value;
      return ok;
    };
    double inf = std::numeric_limits<double>::infinity();
    // weight-decay < 0 means "the default of the kind" only as -1.
    if (!checkRange("lr", lr, 0, /*lowOpen=*/true, inf, true) ||
        !checkRange("momentum", momentum, 0, false, 1, true) ||
        !checkRange("beta1", beta1, 0, false, 1, true) ||
        !checkRange("beta2", beta2, 0, false, 1, true) ||
        !checkRange("epsilon", epsilon, 0, true, inf, true) ||
        (weightDecay != -1 &&
         !checkRange("weight-decay", weightDecay, 0, false, inf, true)) ||
        !checkRange("clip", clip, 0, false, inf, true) ||
        !checkRange("min-lr", minLr, 0, false, inf, true))
      return signalPassFailure();
    if (warmup < 0 || decaySteps < 0) {
      getOperation().emitError()
          << "part-optimizer: warmup and decay-steps count steps and must not "
             "be negative, got warmup="
          << int64_t(warmup) << " and decay-steps=" << int64_t(decaySteps);
      return signalPassFailure();
    }
    if (schedule == "constant" && (decaySteps != 0 || minLr != 0)) {
      getOperation().emitError()
          << "part-optimizer: decay-steps and min-lr apply to "
             "schedule=cosine, but the schedule is constant";
      return signalPassFailure();
    }
    if (minLr < 0 || minLr > lr) {
      getOperation().emitError()
          << "min-lr must be in [0, lr=" << lr << "], got " << minLr;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> withoutGradients;
    bool rewrote = false;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      bool hasGradients = false;
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        hasGradients |= function.getResultAttr(i, PartDialect::getGradOfAttrName()) != nullptr;
      if (!hasGradients) {
        withoutGradients.push_back(function);
        continue;
      }
      if (failed(rewrite(function)))
        return signalPassFailure();
      rewrote = true;
    }
    // Nothing to update is a mistake in the pipeline, not a no-op.
    if (!rewrote) {
      if (withoutGradients.empty())
        getOperation().emitError()
            << "part-optimizer: the module has no function to make a "
               "training step of";
      for (func::FuncOp function : withoutGradients)
        function.emitError()
            << "part-optimizer: @" << function.getName()
            << " returns no gradients (results with part.grad_of); run "
               "part-autodiff first";
      return signalPassFailure();
    }
  }
};

LogicalResult PartOptimizerPass::rewrite(func::FuncOp function) {
  MLIRContext *ctx = &getContext();
  StringRef nameAttr = PartDialect::getNameAttrName();
  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  // With `interleave` and no clipping each update goes right after its
  // gradient is produced, so that partitioning places the gradient's
  // reduction over dp inside backward, where it can overlap the rest of it;
  // the scalars shared by every update (constants, the step, the learning
  // rate, the bias corrections) then go at the top of the function (`top`).
  // Clipping needs the norm of every gradient, and loss scaling whether every
  // gradient is finite: then all updates stay at the end (on by default;
  // part-zero finds the update by data flow either way).
  OpBuilder top(ctx);
  Location loc = ret.getLoc();
  auto f32 = b.getF32Type();
  auto scalarType = RankedTensorType::get({}, f32);
  // One constant per value, made at the top of the function.
  std::map<float, Value> constants;
  auto scalar = [&](double v) -> Value {
    float f = static_cast<float>(v);
    Value &c = constants[f];
    if (!c)
      c = ConstantOp::create(top, loc, scalarType,
                             DenseElementsAttr::get(scalarType, f));
    return c;
  };

  // The loss (the results that are not gradients) and the gradients.
  SmallVector<Value> kept;
  SmallVector<DictionaryAttr> keptAttrs;
  SmallVector<std::pair<unsigned, Value>> grads; // (argument, gradient)
  for (unsigned i = 0; i < function.getNumResults(); ++i) {
    auto gradOf = function.getResultAttrOfType<IntegerAttr>(i, PartDialect::getGradOfAttrName());
    if (!gradOf) {
      kept.push_back(ret.getOperand(i));
      keptAttrs.push_back(function.getResultAttrDict(i));
      continue;
    }
    int64_t arg = gradOf.getInt();
    if (arg < 0 || arg >= static_cast<int64_t>(function.getNumArguments()))
      return function.emitError() << "result " << i << " is the gradient of "
                                  << "argument " << arg << ", which does not exist";
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        arg, PartDialect::getRoleAttrName());
    if (!role || role.getValue() != ArgRole::Parameter)
      return function.emitError() << "result " << i << " is the gradient of "
                                  << "argument " << arg
                                  << ", which is not a parameter";
    auto paramType = cast<RankedTensorType>(function.getArgumentTypes()[arg]);
    if (ret.getOperand(i).getType() != paramType)
      return function.emitError()
             << "gradient result " << i << " has type "
             << ret.getOperand(i).getType() << " but parameter " << arg
             << " has type " << paramType;
    if (!isa<FloatType>(paramType.getElementType()))
      return function.emitError() << "parameter " << arg << " is " << paramType
                                  << "; the optimizer updates float parameters";
    grads.push_back({static_cast<unsigned>(arg), ret.getOperand(i)});
  }

  // f16 mixed precision: the gradients are of `scale * loss`.
  Value lossScale;
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (function.getArgAttr(i, PartDialect::getLossScaleAttrName()))
      lossScale = body.getArgument(i);
  if (lossScale && growthInterval <= 0)
    return function.emitError()
           << "loss-scale-growth-interval must be positive, got "
           << growthInterval;

  // Clipping needs every gradient's norm and loss scaling every gradient's
  // finiteness before any update: then the updates stay at the end.
  bool updateInPlace =
      interleave && !((clip > 0 || lossScale) && !grads.empty());
  if (updateInPlace)
    top.setInsertionPointToStart(&body);
  else
    top.setInsertionPoint(ret);

  // State arguments are added to the block as they are made, and to the
  // function's type and attributes once at the end: one insertArgument each
  // would rebuild both for every new argument (quadratic in the parameters).
  SmallVector<DictionaryAttr> argAttrs;
  function.getAllArgAttrs(argAttrs);
  // `of`: the parameter argument a per-parameter state belongs to
  // (part.state_of, for part-zero), or -1.
  auto addState = [&](StringRef name, Type type, Attribute init = {},
                      int64_t of = -1) -> Value {
    NamedAttrList attrs;
    attrs.set(nameAttr, b.getStringAttr(name));
    attrs.set(PartDialect::getRoleAttrName(),
              ArgRoleAttr::get(ctx, ArgRole::State));
    if (init)
      attrs.set(PartDialect::getInitAttrName(), init);
    if (of >= 0)
      attrs.set(PartDialect::getStateOfAttrName(), b.getI64IntegerAttr(of));
    argAttrs.push_back(attrs.getDictionary(ctx));
    return body.addArgument(type, loc);
  };
  auto paramName = [&](unsigned arg) {
    auto name = function.getArgAttrOfType<StringAttr>(arg, nameAttr);
    return name ? name.getValue().str() : "arg" + std::to_string(arg);
  };

  // New values and the arguments they replace.
  SmallVector<std::pair<Value, unsigned>> updates;
  SmallVector<std::string> updateNames;

  Value step = addState("optimizer.step", scalarType);
  unsigned stepArg = body.getNumArguments() - 1;
  Value t = AddOp::create(top, loc, step, scalar(1.0));
  Value lrT = scalar(lr);
  // Cosine decay (Megatron's): from lr after the warm-up down to min-lr at
  // step decay-steps, then constant:
  //   p = clamp((t - warmup) / (decay-steps - warmup), 0, 1)
  //   lr(t) = min-lr + (lr - min-lr) * (1 + cos(pi p)) / 2
  // Before the warm-up ends p = 0, so the warm-up factor below applies to lr.
  if (schedule == "cosine") {
    // One op per statement throughout: ops created inside another create's
    // arguments would come out in an order that depends on the host
    // compiler (the order here is the one the tests were written against).
    Value span = scalar(double(decaySteps - warmup));
    Value sinceWarmup = SubOp::create(top, loc, t, scalar(double(warmup)));
    Value ratio = DivOp::create(top, loc, sinceWarmup, span);
    Value atLeast0 = MaxOp::create(top, loc, scalar(0.0), ratio);
    Value progress = MinOp::create(top, loc, scalar(1.0), atLeast0);
    Value angle = MulOp::create(top, loc, progress, scalar(M_PI));
    Value cosine = CosOp::create(top, loc, angle);
    Value onePlusCos = AddOp::create(top, loc, scalar(1.0), cosine);
    Value half = MulOp::create(top, loc, scalar(0.5), onePlusCos);
    Value decayed = MulOp::create(top, loc, scalar(lr - minLr), half);
    lrT = AddOp::create(top, loc, scalar(minLr), decayed);
  }
  if (warmup > 0) {
    Value ramp = DivOp::create(top, loc, t, scalar(double(warmup)));
    Value factor = MinOp::create(top, loc, scalar(1.0), ramp);
    lrT = MulOp::create(top, loc, lrT, factor);
  }
  // AdamW's bias corrections, 1 - beta^t: once at the top when the updates
  // are interleaved; else per update.
  Value c1, c2;
  auto biasCorrections = [&](OpBuilder &at) {
    c1 = SubOp::create(at, loc, scalar(1.0),
                       PowOp::create(at, loc, scalar(beta1), t));
    c2 = SubOp::create(at, loc, scalar(1.0),
                       PowOp::create(at, loc, scalar(beta2), t));
  };
  if (kind == "adamw" && !grads.empty() && updateInPlace)
    biasCorrections(top);

  // The gradients as part-autodiff returned them, for the marks below.
  SmallVector<Value> received;
  for (auto &[arg, g] : grads)
    received.push_back(g);

  // Gradients of compute-type (bf16 / f16) parameters are made f32, and
  // divided by the loss scale, before anything else looks at them.
  Value inverseScale;
  if (lossScale)
    inverseScale = DivOp::create(b, loc, scalar(1.0), lossScale);
  // Each gradient as the update reduces it over data parallelism (in f32,
  // before unscaling) is marked with its parameter: part.gradient_of, which
  // part-zero reads.
  for (auto &[arg, g] : grads) {
    auto type = cast<RankedTensorType>(g.getType());
    auto mark = [&, arg = arg](Value reduced) {
      Operation *def = reduced.getDefiningOp();
      if (def && def->getNumResults() == 1)
        def->setAttr(PartDialect::getGradientOfAttrName(),
                     b.getI64IntegerAttr(arg));
    };
    if (type.getElementType() == f32 && !inverseScale) {
      mark(g);
      continue;
    }
    OpBuilder at(ret);
    if (updateInPlace)
      if (Operation *def = g.getDefiningOp())
        at.setInsertionPointAfter(def);
    if (type.getElementType() != f32)
      g = CastOp::create(at, loc, type.clone(f32), g);
    mark(g);
    if (inverseScale)
      g = MulOp::create(at, loc, g, inverseScale);
  }

  // With loss scaling, whether every gradient is finite (1) or not (0): the
  // sum of `g * 0` over all gradients is 0, or NaN if any element is
  // infinite or NaN. A step with a non-finite gradient is skipped.
  Value finite;
  auto sumAll = [&](Value x) -> Value {
    auto type = cast<RankedTensorType>(x.getType());
    if (!type.getRank())
      return x;
    SmallVector<int64_t> dims(type.getRank());
    std::iota(dims.begin(), dims.end(), 0);
    return ReduceSumOp::create(b, loc, scalarType, x, dims, false);
  };
  if (lossScale && !grads.empty()) {
    Value total;
    for (auto &[arg, g] : grads) {
      Value s = sumAll(MulOp::create(b, loc, g, scalar(0.0)));
      total = total ? AddOp::create(b, loc, total, s).getResult() : s;
    }
    finite =
        CompareOp::create(b, loc, ComparisonDirection::EQ, total, scalar(0.0));
  }
  // `update` if the step is taken, else `old`.
  auto ifFinite = [&](Value update, Value old) -> Value {
    if (!finite)
      return update;
    return SelectOp::create(b, loc, finite, update, old);
  };

  // Global-norm clipping.
  if (clip > 0 && !grads.empty()) {
    Value sumSquares;
    for (auto &[arg, g] : grads) {
      Value s = sumAll(MulOp::create(b, loc, g, g));
      sumSquares = sumSquares ? AddOp::create(b, loc, sumSquares, s).getResult()
                              : s;
    }
    Value norm = SqrtOp::create(b, loc, sumSquares);
    Value normEps = AddOp::create(b, loc, norm, scalar(1e-6));
    Value ratio = DivOp::create(b, loc, scalar(clip), normEps);
    Value factor = MinOp::create(b, loc, scalar(1.0), ratio);
    for (auto &[arg, g] : grads)
      g = MulOp::create(b, loc, g, factor);
  }

  double wd = weightDecay >= 0 ? double(weightDecay)
                               : (kind == "adamw" ? 0.01 : 0.0);
  for (auto &[arg, g] : grads) {
    // The f32 weights the update works on: the parameter itself, or, for a
    // compute-type (bf16 / f16) parameter, its f32 master copy in the state,
    // first loaded from the parameter's weights.
    Value param = body.getArgument(arg);
    std::string name = paramName(arg);
    Value p = param;
    unsigned pArg = arg;
    std::string pName = name;
    auto type = cast<RankedTensorType>(g.getType()); // f32 by now
    if (cast<RankedTensorType>(param.getType()).getElementType() != f32) {
      pArg = body.getNumArguments();
      pName = "master." + name;
      p = addState(pName, type, b.getStringAttr(name), arg);
    }
    if (updateInPlace) {
      if (Operation *def = g.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPoint(ret);
    }
    // Records the new value of `target` (old value `old`).
    auto update = [&](Value value, Value old, unsigned target,
                      const std::string &targetName) {
      updates.push_back({ifFinite(value, old), target});
      updateNames.push_back(targetName);
    };
    // The new weights, and the parameter as their cast when they are a
    // master copy.
    auto updateWeights = [&](Value newP) {
      update(newP, p, pArg, pName);
      if (pArg != arg) {
        updates.push_back(
            {CastOp::create(b, loc, param.getType(), updates.back().first),
             arg});
        updateNames.push_back(name);
      }
    };
    if (kind == "sgd") {
      if (wd != 0)
        g = AddOp::create(b, loc, g, MulOp::create(b, loc, p, scalar(wd)));
      Value direction = g;
      if (momentum != 0) {
        unsigned bufArg = body.getNumArguments();
        Value buf = addState("momentum." + name, type, {}, arg);
        Value newBuf = AddOp::create(
            b, loc, MulOp::create(b, loc, buf, scalar(momentum)), g);
        update(newBuf, buf, bufArg, "momentum." + name);
        direction = newBuf;
      }
      updateWeights(
          SubOp::create(b, loc, p, MulOp::create(b, loc, direction, lrT)));
      continue;
    }
    // AdamW.
    unsigned mArg = body.getNumArguments();
    Value m = addState("adam.m." + name, type, {}, arg);
    unsigned vArg = body.getNumArguments();
    Value v = addState("adam.v." + name, type, {}, arg);
    Value gPart = MulOp::create(b, loc, g, scalar(1.0 - beta1));
    Value mPart = MulOp::create(b, loc, m, scalar(beta1));
    Value newM = AddOp::create(b, loc, mPart, gPart);
    Value oneMinusBeta2 = scalar(1.0 - beta2);
    Value gSquared = MulOp::create(b, loc, g, g);
    Value gSquaredPart = MulOp::create(b, loc, gSquared, oneMinusBeta2);
    Value vPart = MulOp::create(b, loc, v, scalar(beta2));
    Value newV = AddOp::create(b, loc, vPart, gSquaredPart);
    if (!updateInPlace)
      biasCorrections(b);
    Value mHat = DivOp::create(b, loc, newM, c1);
    Value vHat = DivOp::create(b, loc, newV, c2);
    Value eps = scalar(epsilon);
    Value denom = AddOp::create(b, loc, SqrtOp::create(b, loc, vHat), eps);
    Value decayed = p;
    if (wd != 0) {
      Value lrWd = MulOp::create(b, loc, lrT, scalar(wd));
      Value one = scalar(1.0);
      Value keep = SubOp::create(b, loc, one, lrWd);
      decayed = MulOp::create(b, loc, p, keep);
    }
    updateWeights(SubOp::create(
        b, loc, decayed,
        MulOp::create(b, loc, DivOp::create(b, loc, mHat, denom), lrT)));
    update(newM, m, mArg, "adam.m." + name);
    update(newV, v, vArg, "adam.v." + name);
  }
  b.setInsertionPoint(ret);
  updates.push_back({ifFinite(t, step), stepArg});
  updateNames.push_back("optimizer.step");

  // Dynamic loss scaling (PyTorch's GradScaler): halve the scale after a
  // non-finite step, double it after `growth-interval` finite steps in a row.
  if (lossScale) {
    unsigned scaleArg = cast<BlockArgument>(lossScale).getArgNumber();
    unsigned goodArg = body.getNumArguments();
    Value good = addState("loss_scale.good_steps", scalarType);
    Value one = scalar(1.0), zero = scalar(0.0);
    Value ok = finite;
    if (!ok) // no gradients: every step is finite
      ok = CompareOp::create(b, loc, ComparisonDirection::EQ, zero, zero);
    Value counted = AddOp::create(b, loc, good, one);
    Value grow = CompareOp::create(b, loc, ComparisonDirection::GE, counted,
                                   scalar(double(growthInterval)));
    // One statement per op: ops created inside another create's arguments
    // come out in an order that depends on the host compiler.
    Value halved = MulOp::create(b, loc, lossScale, scalar(0.5));
    Value doubled = MulOp::create(b, loc, lossScale, scalar(2.0));
    Value kept = SelectOp::create(b, loc, grow, doubled, lossScale);
    Value newScale = SelectOp::create(b, loc, ok, kept, halved);
    Value goodIfFinite = SelectOp::create(b, loc, grow, zero, counted);
    Value newGood = SelectOp::create(b, loc, ok, goodIfFinite, zero);
    updates.push_back({newScale, scaleArg});
    updateNames.push_back("loss_scale");
    updates.push_back({newGood, goodArg});
    updateNames.push_back("loss_scale.good_steps");
  }

  // Marks the first op of the update that reads each gradient, so that
  // memory reports can find the gradients (after partitioning, as reduced)
  // (part-zero reads part.gradient_of, set above).
  for (Value g : received) {
    OpOperand *first = nullptr;
    for (OpOperand &use : g.getUses())
      if (use.getOwner() != ret.getOperation() &&
          (!first || use.getOwner()->isBeforeInBlock(first->getOwner())))
        first = &use;
    if (first)
      first->getOwner()->setAttr(
          PartDialect::getGradientAttrName(),
          b.getI64IntegerAttr(first->getOperandNumber()));
  }

  b.setInsertionPoint(ret);
  // Results: what was kept (the loss), then every new value.
  SmallVector<Value> results(kept.begin(), kept.end());
  SmallVector<DictionaryAttr> resultAttrs(keptAttrs.begin(), keptAttrs.end());
  for (auto [update, name] : llvm::zip(updates, updateNames)) {
    results.push_back(update.first);
    resultAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(nameAttr, b.getStringAttr("new." + name)),
         b.getNamedAttr(PartDialect::getUpdatesAttrName(),
                        b.getI64IntegerAttr(update.second))}));
  }
  func::ReturnOp::create(b, loc, results);
  ret.erase();
  function.setFunctionType(FunctionType::get(
      ctx, body.getArgumentTypes(), ValueRange(results).getTypes()));
  function.setAllArgAttrs(argAttrs);
  function.setAllResultAttrs(resultAttrs);
  return success();
}
} // namespace
