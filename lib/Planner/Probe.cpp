//===- Probe.cpp - one partitioning of a cut model, costed per op ---------===//

#include "Probe.h"

#include "partition/Conversion/PartToPlan/Fusion.h"
#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/CostModel.h"
#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace partition::part;
using partition::runtime::Cluster;

namespace partition::planner {

const char *recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "none";
}

std::optional<Recompute> parseRecompute(llvm::StringRef name) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (name == recomputeName(r))
      return r;
  return std::nullopt;
}

std::string PlanConfig::text() const {
  std::string s = "tp=" + std::to_string(tp) + " pp=" + std::to_string(pp) +
                  " dp=" + std::to_string(dp);
  if (cp > 1)
    s += " cp=" + std::to_string(cp);
  if (ep > 1)
    s += " ep=" + std::to_string(ep);
  if (virtualStages > 1)
    s += " vpp=" + std::to_string(virtualStages);
  s += " mbs=" + std::to_string(microBatchSize) +
       " mb=" + std::to_string(microBatches) + " schedule=" + schedule +
       " zero=" + std::to_string(zero) +
       " recompute=" + recomputeName(recompute) +
       " sp=" + (sequenceParallel ? "1" : "0");
  if (syncPerStep)
    s += " sync=step";
  if (tpOverlap)
    s += " tp-overlap=" + std::to_string(tpOverlap);
  if (!dpOverlap)
    s += " dp-overlap=0";
  return s;
}

std::string PlanConfig::spmdOptions() const {
  // pp outermost and tp innermost: a stage's devices are consecutive ranks,
  // a tp group the closest of them, an ep group the tp groups next to each
  // other (Megatron-Core's order: its all-to-alls on NVLink while ep x tp
  // fits a node), a cp group the ep x tp blocks next to each other (cp
  // between dp and tp, as Megatron-Core orders it: attention's K/V
  // all-gathers on NVLink while cp x ep x tp fits a node).
  std::string mesh;
  auto axis = [&](const char *name, int64_t size) {
    mesh += (mesh.empty() ? "" : ",") + std::string(name) + ":" +
            std::to_string(size);
  };
  bool pipelined = pp > 1 || microBatches > 1;
  if (pipelined)
    axis("pp", pp);
  if (dp > 1)
    axis("dp", dp);
  if (cp > 1)
    axis("cp", cp);
  if (ep > 1)
    axis("ep", ep);
  if (tp > 1 || mesh.empty())
    axis("tp", tp);
  std::string s = "mesh=\"" + mesh + "\"";
  if (pipelined) {
    s += " micro-batches=" + std::to_string(microBatches) +
         " schedule=" + schedule;
    if (virtualStages > 1)
      s += " virtual-stages=" + std::to_string(virtualStages);
  }
  if (zero)
    s += " zero=" + std::to_string(zero);
  if (sequenceParallel)
    s += " sequence-parallel=true";
  if (syncPerStep)
    s += " grad-sync=step";
  if (tpOverlap)
    s += " tp-comm-overlap=" + std::to_string(tpOverlap);
  return s;
}

namespace {

func::FuncOp mainFunction(ModuleOp module) {
  for (auto f : module.getOps<func::FuncOp>())
    if (!f.isDeclaration())
      return f;
  return {};
}

bool hasLoss(ModuleOp model) {
  func::FuncOp f = mainFunction(model);
  if (!f)
    return false;
  // An auxiliary loss (part.loss_weight) is added to a loss, not one.
  return llvm::any_of(llvm::seq<unsigned>(0, f.getNumResults()),
                      [&](unsigned i) {
                        auto r = dyn_cast<RankedTensorType>(
                            f.getResultTypes()[i]);
                        return r && r.getRank() == 0 &&
                               !f.getResultAttr(
                                   i, part::PartDialect::
                                          getLossWeightAttrName());
                      });
}

/// The consecutive ranks a group over `axes` spans: the size of its
/// outermost axis and of every axis inside it.
int64_t spanOf(MeshAttr mesh, ArrayRef<StringAttr> axes) {
  ArrayRef<StringAttr> names = mesh.getAxisNames();
  ArrayRef<int64_t> sizes = mesh.getAxisSizes();
  size_t outermost = names.size();
  for (StringAttr a : axes)
    outermost = std::min<size_t>(
        outermost, size_t(llvm::find(names, a) - names.begin()));
  int64_t span = 1;
  for (size_t i = outermost; i < names.size(); ++i)
    span *= sizes[i];
  return span;
}

double bytesOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? double(getTensorBytes(t).value_or(0)) : 0;
}

double elementsOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? double(t.getNumElements()) : 0;
}

/// The points (fixed, scaled) at which fixed + k scaled is the most for
/// some k >= 0: the upper convex hull in (scaled, fixed), from the point
/// with the most fixed bytes towards the most scaled ones.
std::vector<std::pair<double, double>>
upperHull(std::vector<std::pair<double, double>> points) {
  // By scaled bytes, then fixed; only the most fixed bytes per scaled.
  llvm::sort(points, [](auto a, auto b) {
    return a.second != b.second ? a.second < b.second : a.first > b.first;
  });
  std::vector<std::pair<double, double>> hull;
  for (auto point : points) {
    if (!hull.empty() && hull.back().second == point.second)
      continue;
    // Drop the last point while it lies on or below the line from the one
    // before it to this one, or has no more fixed bytes than this one.
    while (!hull.empty()) {
      auto [f1, s1] = hull.back();
      if (f1 <= point.first) {
        hull.pop_back();
        continue;
      }
      if (hull.size() < 2)
        break;
      auto [f0, s0] = hull[hull.size() - 2];
      // (s1, f1) under the chord from (s0, f0) to (s, f)?
      if ((f1 - f0) * (point.second - s0) <= (point.first - f0) * (s1 - s0))
        hull.pop_back();
      else
        break;
    }
    hull.push_back(point);
  }
  return hull;
}

} // namespace

namespace {
void addPass(std::string &pipeline, const std::string &pass) {
  if (!pass.empty())
    pipeline += (pipeline.empty() ? "" : ",") + pass;
}
} // namespace

std::string trainingPipeline(ModuleOp model, const TrainingOptions &training,
                             Recompute recompute) {
  std::string p;
  if (!training.train)
    return p;
  if (!hasLoss(model))
    addPass(p, "part-append-loss");
  if (training.precision == "bf16")
    addPass(p, "part-mixed-precision{compute=bf16}");
  addPass(p, "part-autodiff");
  if (recompute != Recompute::None)
    addPass(p, std::string("part-recompute{mode=") + recomputeName(recompute) +
                   "}");
  addPass(p, "part-optimizer{" + training.optimizer + "}");
  return p;
}

std::string afterSpmdPipeline(bool train, int64_t dp, int64_t zero,
                              const std::string &gradReduce, bool dpOverlap) {
  std::string p;
  // Data parallelism: gradient reductions (all-reduces, ZeRO's
  // reduce-scatters) in buckets of gradBucketBytes(dp) inside backward (a
  // pipeline's: in its backward fragments), as PyTorch DDP, FSDP and
  // Megatron-Core do; without overlap, after backward.
  if (train && dp > 1)
    addPass(p, "part-grad-buckets{bytes=" +
                   std::to_string(part::gradBucketBytes(dp)) +
                   (gradReduce == "f32" ? "" : " dtype=" + gradReduce) +
                   (dpOverlap ? "" : " overlap=false") + "}");
  // ZeRO-3: each layer's parameters gathered as one flat bucket, a layer
  // ahead.
  if (zero == 3)
    addPass(p, "part-zero-prefetch");
  return p;
}

std::string planPipeline(ModuleOp model, const TrainingOptions &training,
                         const PlanConfig &plan) {
  std::string p = trainingPipeline(model, training, plan.recompute);
  addPass(p, "part-spmd{" + plan.spmdOptions() + "}");
  addPass(p, afterSpmdPipeline(training.train, plan.dataParallel(), plan.zero,
                               training.gradReduce, plan.dpOverlap));
  return p;
}

/// Of the communication of the ops `include` selects, the share
/// part-estimate's two lanes run beside compute that does not wait for it,
/// each op at the scale `scaleOf` gives it.
static double hiddenShare(func::FuncOp function, MeshAttr mesh,
                          const Cluster &cluster,
                          llvm::function_ref<bool(Operation *)> include,
                          llvm::function_ref<double(Operation *)> scaleOf) {
  ProgramEstimate e = estimateProgram(function, mesh, 0, cluster, nullptr,
                                      include, scaleOf);
  double comm = e.whole.communication;
  if (comm <= 0)
    return 0;
  return std::clamp((e.whole.compute + comm - e.seconds) / comm, 0.0, 1.0);
}

/// Whether `op`'s results have a batch-sized shape, given which values do:
/// those of an op that reads one, except what sums the tokens away -- a
/// weight gradient (a 2-d matmul contracting its rows, a scatter-add into
/// a table), a reduction over the leading dimension, a scalar.
static bool keepsBatchSize(Operation &op,
                           const llvm::DenseSet<Value> &batchSized) {
  if (llvm::none_of(op.getOperands(),
                    [&](Value v) { return batchSized.contains(v); }))
    return false;
  if (auto m = dyn_cast<MatmulOp>(op);
      m && m.getTransposeA() &&
      cast<RankedTensorType>(m.getLhs().getType()).getRank() == 2)
    return false;
  if (isa<ScatterAddOp>(op))
    return false;
  auto reducesLeading = [](ArrayRef<int64_t> dims) {
    return llvm::is_contained(dims, int64_t(0));
  };
  if (auto r = dyn_cast<ReduceSumOp>(op); r && reducesLeading(r.getDims()))
    return false;
  if (auto r = dyn_cast<ReduceMeanOp>(op); r && reducesLeading(r.getDims()))
    return false;
  if (auto r = dyn_cast<ReduceMaxOp>(op); r && reducesLeading(r.getDims()))
    return false;
  return llvm::all_of(op.getResultTypes(), [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.getRank() > 0;
  });
}

/// Which pass each op of a training step is in. Forward: what the loss (or
/// an inference's outputs) is computed from; update: what reads the
/// gradients as the optimizer takes them (part.gradient_of) or its state;
/// backward: the rest.
enum Kind { Forward, Backward, Update };

static llvm::DenseMap<Operation *, Kind> passKinds(func::FuncOp function) {
  Block &body = function.getBody().front();
  llvm::DenseSet<Operation *> forward = forwardProgram(function);
  llvm::DenseSet<Operation *> update;
  SmallVector<Value> work;
  for (Operation &op : body.without_terminator())
    if (op.hasAttr(PartDialect::getGradientOfAttrName()) ||
        op.hasAttr(PartDialect::getGradientAttrName()))
      for (Value r : op.getResults())
        for (Operation *u : r.getUsers())
          if (update.insert(u).second)
            llvm::append_range(work, u->getResults());
  for (auto [i, arg] : llvm::enumerate(function.getArguments()))
    if (auto role = function.getArgAttrOfType<ArgRoleAttr>(
            i, PartDialect::getRoleAttrName());
        role && role.getValue() == ArgRole::State)
      work.push_back(arg);
  while (!work.empty())
    for (Operation *u : work.pop_back_val().getUsers())
      if (!isa<func::ReturnOp>(u) && !forward.contains(u) &&
          update.insert(u).second)
        llvm::append_range(work, u->getResults());
  llvm::DenseMap<Operation *, Kind> kinds;
  for (Operation &op : body.without_terminator())
    kinds[&op] = forward.contains(&op)  ? Forward
                 : update.contains(&op) ? Update
                                        : Backward;
  return kinds;
}

/// The section of each op of `body` (a layer, pre, post or the update);
/// returns the largest layer. Untagged ops between a pass's layer ops
/// (mixed precision's casts of what one layer hands the next) go with the
/// next layer op of the same pass; before the first, forward's are the
/// embedding's (pre) and backward's the head's (post); after the last, the
/// other way round. Backward ops computed among forward's (what a layer
/// keeps for its weight gradients, such as an all-gathered input) keep
/// their own layer but place none of the untagged ops: the head's backward
/// comes after forward ends, before the last layer's.
static int64_t
assignSections(Block &body, const llvm::DenseMap<Operation *, Kind> &kinds,
               llvm::DenseMap<Operation *, int32_t> &sections) {
  int64_t maxLayer = -1;
  Operation *lastForward = nullptr;
  for (Operation &op : body.without_terminator())
    if (kinds.lookup(&op) == Forward)
      lastForward = &op;
  for (Kind pass : {Forward, Backward}) {
    SmallVector<Operation *> pending;
    bool seenLayer = false, afterForward = pass == Forward || !lastForward;
    for (Operation &op : body.without_terminator()) {
      if (&op == lastForward)
        afterForward = true;
      if (kinds.lookup(&op) != pass)
        continue;
      if (auto layer = op.getAttrOfType<IntegerAttr>("part.layer")) {
        int32_t l = int32_t(layer.getInt());
        maxLayer = std::max<int64_t>(maxLayer, l);
        sections[&op] = l;
        if (!afterForward)
          continue;
        for (Operation *o : pending)
          sections[o] = seenLayer ? l : (pass == Forward ? kPre : kPost);
        pending.clear();
        seenLayer = true;
        continue;
      }
      pending.push_back(&op);
    }
    for (Operation *o : pending)
      sections[o] = seenLayer ? (pass == Forward ? kPost : kPre)
                              : (pass == Forward ? kPre : kPost);
  }
  for (Operation &op : body.without_terminator())
    if (kinds.lookup(&op) == Update)
      sections[&op] = kUpdate;
  return maxLayer;
}

/// How much of its own (tensor-parallel) communication the compiled probe
/// hides behind compute it does not wait for, in forward and in backward
/// apart (a forward's sums are read by the next op at once; backward's run
/// beside the weight gradients), at each micro-batch size the composition
/// interpolates between: the compute beside a collective grows with the
/// micro-batch (the ops of `scaled`), its latencies do not.
static void measureHiddenShares(func::FuncOp function, MeshAttr mesh,
                                const Cluster &cluster,
                                const llvm::DenseMap<Operation *, Kind> &kinds,
                                const llvm::DenseSet<Operation *> &scaled,
                                const llvm::DenseSet<Operation *> &leftOut,
                                Probe &p) {
  for (Kind pass : {Forward, Backward}) {
    std::vector<double> &shares =
        pass == Forward ? p.hiddenForward : p.hiddenBackward;
    for (int64_t i = 0; i < Probe::kHiddenSizes; ++i) {
      double k =
          double(int64_t(1) << i) / double(std::max<int64_t>(1, p.batch));
      shares.push_back(hiddenShare(
          function, mesh, cluster,
          [&](Operation *op) {
            return kinds.lookup(op) == pass && !leftOut.contains(op);
          },
          [&](Operation *op) { return scaled.contains(op) ? k : 1.0; }));
    }
  }
}

/// The gradients' reductions over the axes part-zero sums every gradient
/// over (the probe's cp and ep; dp is 1 in a probe): a sum over those axes
/// alone whose result the update reads, as it is or through a view or a
/// cast. The composition adds them for the plan's whole dp x cp x ep group
/// (Composer::addReductions); counted here too, they would be twice.
static llvm::DenseSet<Operation *>
gradientReductions(Block &body,
                   const llvm::DenseMap<Operation *, Kind> &kinds) {
  llvm::DenseSet<Operation *> out;
  for (Operation &op : body.without_terminator()) {
    ArrayAttr axes;
    if (auto ar = dyn_cast<AllReduceOp>(op))
      axes = ar.getAxesAttr();
    else if (auto rs = dyn_cast<ReduceScatterOp>(op))
      axes = rs.getAxesAttr();
    if (!axes || kinds.lookup(&op) != Backward ||
        !llvm::all_of(axes, [](Attribute a) {
          StringRef name = cast<StringAttr>(a).getValue();
          return name == "dp" || name == "cp" || name == "ep";
        }))
      continue;
    SmallVector<std::pair<Value, int>> work = {{op.getResult(0), 0}};
    bool toUpdate = false;
    while (!work.empty() && !toUpdate) {
      auto [v, depth] = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (kinds.lookup(user) == Update ||
            user->hasAttr(PartDialect::getGradientAttrName())) {
          toUpdate = true;
          break;
        }
        if (depth < 3 && user->getNumOperands() == 1)
          for (Value r : user->getResults())
            work.push_back({r, depth + 1});
      }
    }
    if (toUpdate)
      out.insert(&op);
  }
  return out;
}

std::optional<Probe> runProbe(ModuleOp cut, const TrainingOptions &training,
                              const PlanConfig &config, const Cluster &cluster,
                              std::string *error) {
  OwningOpRef<ModuleOp> module(cut.clone());
  MLIRContext *ctx = module->getContext();
  PlanConfig probe = config;
  probe.dp = probe.pp = probe.microBatches = probe.microBatchSize = 1;
  probe.zero = 0;
  probe.virtualStages = 1;
  probe.schedule = "none";
  std::string first;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
        first = d.str();
      return success();
    });
    PassManager pm(ctx);
    // The plan's passes up to part-spmd: the gradients' reductions over
    // the probe's cp and ep are left out below, so they are not bucketed
    // (part-grad-buckets) either.
    std::string text = trainingPipeline(*module, training, probe.recompute);
    addPass(text, "part-spmd{" + probe.spmdOptions() + "}");
    std::string parseError;
    llvm::raw_string_ostream os(parseError);
    if (failed(parsePassPipeline(text, pm, os))) {
      *error = "cannot build the passes \"" + text + "\": " + parseError;
      return std::nullopt;
    }
    if (failed(pm.run(*module))) {
      *error = first.empty() ? "the passes failed" : first;
      return std::nullopt;
    }
  }
  func::FuncOp function;
  MeshOp meshOp;
  for (auto f : module->getOps<func::FuncOp>())
    if (FlatSymbolRefAttr m = getSpmdMesh(f); m && !f.isDeclaration()) {
      function = f;
      meshOp = lookupMesh(f, m);
      break;
    }
  if (!function || !meshOp) {
    *error = "the partitioned probe has no per-device program";
    return std::nullopt;
  }
  MeshAttr mesh = meshOp.getMesh();

  Probe p;
  p.config = probe;
  Block &body = function.getBody().front();
  // Batch inputs, and what depends on them (its time grows with the
  // batch); `batchSized`: what also has a batch-sized shape (its bytes grow
  // with the batch: not a weight gradient, which contracts the tokens).
  llvm::DenseSet<Value> batched, batchSized;
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    auto role =
        function.getArgAttrOfType<ArgRoleAttr>(i, PartDialect::getRoleAttrName());
    if (role && (role.getValue() == ArgRole::Input ||
                 role.getValue() == ArgRole::Label)) {
      batched.insert(arg);
      batchSized.insert(arg);
      if (auto t = dyn_cast<RankedTensorType>(arg.getType());
          t && t.getRank() > 0 && p.batch == 0)
        p.batch = t.getDimSize(0);
    }
  }
  llvm::DenseMap<Operation *, Kind> kinds = passKinds(function);
  llvm::DenseSet<Operation *> leftOut = gradientReductions(body, kinds);
  llvm::DenseMap<Operation *, int32_t> sections;
  int64_t maxLayer = assignSections(body, kinds, sections);
  p.probedLayers = maxLayer + 1;
  p.layerParams.assign(p.probedLayers, 0);
  p.layerTensors.assign(p.probedLayers, 0);
  p.layerExpertParams.assign(p.probedLayers, 0);
  p.layerExpertTensors.assign(p.probedLayers, 0);
  p.layerSaved.assign(p.probedLayers, 0);
  p.layerForwardFlops.assign(p.probedLayers, 0);
  // Zero-bubble's W, as part-pipeline splits a backward: a gradient ends
  // in the update or the return (no accumulation in the probe).
  llvm::DenseSet<Operation *> weightOps = weightGradientOps(
      body, [&](Operation *op) { return kinds.lookup(op) == Backward; },
      [&](Operation *op) {
        return isa<func::ReturnOp>(op) || kinds.lookup(op) == Update;
      },
      [&](Operation *op) { return sections.lookup(op); });

  // A result backward reads, itself or through reshapes (views of its
  // buffer, not counted on their own).
  std::function<bool(Value)> readInBackward = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *u) {
      auto it = kinds.find(u);
      if (it != kinds.end() && it->second == Backward)
        return true;
      return isa<ReshapeOp>(u) && readInBackward(u->getResult(0));
    });
  };
  llvm::DenseSet<Operation *> scaled; // grows with the batch
  for (Operation &op : body.without_terminator()) {
    Kind kind = kinds[&op];
    bool dependsOnBatch = llvm::any_of(
        op.getOperands(), [&](Value v) { return batched.contains(v); });
    if (dependsOnBatch && kind != Update) {
      scaled.insert(&op);
      for (Value r : op.getResults())
        batched.insert(r);
    }
    if (kind != Update && keepsBatchSize(op, batchSized))
      for (Value r : op.getResults())
        batchSized.insert(r);
    if (isa<ReshapeOp, ConstantOp, AxisIndexOp>(op))
      continue;
    ProbeOp o;
    o.section = sections[&op];
    o.backward = kind == Backward;
    o.weight = weightOps.contains(&op);
    o.scales = dependsOnBatch && kind != Update;
    if (std::optional<CollectiveCost> c = collectiveCost(&op, mesh)) {
      if (isa<AllSliceOp>(op) || c->groupSize <= 1 || c->movedBytes == 0 ||
          leftOut.contains(&op))
        continue;
      o.commBytes = double(c->movedBytes);
      o.commSteps = c->steps;
      o.span = spanOf(mesh, c->axes);
    } else {
      int64_t bytes = memoryBytesOf(&op, cluster.fusion);
      int64_t flops = flopsOf(&op);
      // Saturated: beyond what the cost model counts (a sequence of 2^22
      // in attention, 2^94 FLOPs).
      if (bytes == std::numeric_limits<int64_t>::max() ||
          flops == std::numeric_limits<int64_t>::max()) {
        *error = "'" + op.getName().getStringRef().str() +
                 "' moves or computes more than 2^63 bytes or FLOPs on one "
                 "device, beyond what the cost model counts";
        return std::nullopt;
      }
      KernelWork work = kernelWorkOf(&op, cluster);
      o.bytes = work.bytes;
      o.flops = work.flops;
      o.kind = work.kind;
      o.peak = peakFlopsFor(&op, cluster);
      if (kind == Forward) {
        if (o.section >= 0)
          p.layerForwardFlops[o.section] += o.flops;
        else
          p.outsideForwardFlops += o.flops;
      }
    }
    p.ops.push_back(o);
    // What forward keeps for backward.
    if (kind == Forward)
      for (Value r : op.getResults()) {
        if (!readInBackward(r))
          continue;
        if (o.section >= 0)
          p.layerSaved[o.section] += bytesOf(r);
        else if (o.section == kPre)
          p.preSaved += bytesOf(r);
        else
          p.postSaved += bytesOf(r);
      }
  }

  measureHiddenShares(function, mesh, cluster, kinds, scaled, leftOut, p);

  // Parameters: by the layer of the first layer op that reads them (through
  // casts and the like), else before or after the layers (both when tied).
  double parameterElements = 0, parameterBytes = 0, stateBytes = 0;
  for (auto [i, arg] : llvm::enumerate(function.getArguments())) {
    auto role =
        function.getArgAttrOfType<ArgRoleAttr>(i, PartDialect::getRoleAttrName());
    if (!role)
      continue;
    if (role.getValue() == ArgRole::State) {
      stateBytes += bytesOf(arg);
      continue;
    }
    if (role.getValue() != ArgRole::Parameter)
      continue;
    double elements = elementsOf(arg);
    parameterElements += elements;
    parameterBytes += bytesOf(arg);
    int32_t layer = -1;
    bool pre = false, post = false;
    SmallVector<std::pair<Value, int>> work = {{arg, 0}};
    while (!work.empty() && layer < 0) {
      auto [v, depth] = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        auto it = sections.find(user);
        if (it == sections.end() || it->second == kUpdate)
          continue;
        if (it->second >= 0) {
          layer = it->second;
          break;
        }
        if (kinds[user] == Forward) {
          pre |= it->second == kPre;
          post |= it->second == kPost;
        }
        // Through what views or casts the parameter alone (a weight's
        // bf16 copy made before the layers): not through what reads it
        // with activations (the embedding's lookup, whose result the first
        // layer reads).
        if (depth < 3 && user->getNumOperands() == 1)
          for (Value r : user->getResults())
            work.push_back({r, depth + 1});
      }
    }
    if (layer >= 0) {
      p.layerParams[layer] += elements;
      p.layerTensors[layer] += 1;
      // An expert's weight: split over ep (spmdOptions' axis).
      if (auto sharding = function.getArgAttrOfType<ShardingAttr>(
              i, PartDialect::getShardingAttrName());
          sharding && sharding.isShardedOver("ep")) {
        p.layerExpertParams[layer] += elements;
        p.layerExpertTensors[layer] += 1;
      }
    } else {
      if (pre || !post) {
        p.preParams += elements;
        p.preTensors += 1;
      }
      if (post) {
        p.postParams += elements;
        p.postTensors += 1;
      }
      if (pre && post) {
        p.tiedParams += elements;
        p.tiedTensors += 1;
      }
    }
  }
  // Transient bytes: op results that are not kept for backward, not read
  // by the update (gradients) and not returned, live from their op to their
  // last use: the most at once in forward and backward (grows with the
  // batch), and in the update (the optimizer's temporaries).
  double peakUpdate = 0, gradientBytes = 0;
  {
    auto transient = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || isa<ReshapeOp>(def))
        return false;
      for (Operation *u : v.getUsers()) {
        if (isa<func::ReturnOp>(u))
          return false;
        auto it = kinds.find(u);
        if (it == kinds.end())
          continue;
        if (kinds[def] != Update && it->second == Update)
          return false;
        if (kinds[def] == Forward && it->second == Backward)
          return false;
      }
      return true;
    };
    // Values inside part-to-plan's fused kernels never reach memory (a
    // chain of elementwise ops -- GELU's derivative, AdamW's update -- runs
    // as one kernel): the compiled plan gives them no arena bytes.
    llvm::DenseSet<Value> fusedAway;
    for (const FusionGroup &group : findFusionGroups(body, isFusedKernelOp))
      addInternalValues(group, fusedAway);
    llvm::DenseMap<Operation *, SmallVector<Value>> dying;
    llvm::DenseMap<Value, Operation *> lastUse;
    for (Operation &op : body.without_terminator())
      for (Value v : op.getOperands())
        lastUse[v] = &op;
    for (auto &[v, op] : lastUse)
      if (transient(v))
        dying[op].push_back(v);
    // Live bytes that do not grow with the batch and those that do.
    double live = 0, liveScaled = 0;
    auto add = [&](Value v, double sign) {
      if (!fusedAway.contains(v))
        (batchSized.contains(v) ? liveScaled : live) += sign * bytesOf(v);
    };
    std::vector<std::pair<double, double>> points;
    for (Operation &op : body.without_terminator()) {
      for (Value r : op.getResults()) {
        if (transient(r))
          add(r, 1);
        else if (kinds[&op] != Update && !isa<ReshapeOp>(op) &&
                 llvm::any_of(r.getUsers(), [&](Operation *u) {
                   return kinds.lookup(u) == Update;
                 }))
          gradientBytes += bytesOf(r);
      }
      if (kinds[&op] == Update)
        peakUpdate = std::max(peakUpdate, live + liveScaled);
      else
        points.push_back({live, liveScaled});
      for (Value v : dying.lookup(&op))
        add(v, -1);
    }
    p.workspace = upperHull(std::move(points));
  }
  if (parameterElements > 0) {
    p.parameterBytes = parameterBytes / parameterElements;
    p.stateBytes = stateBytes / parameterElements;
    p.gradientBytes = gradientBytes / parameterElements;
  }
  p.updateWorkspace = peakUpdate;

  // A layer's output as the next layer reads it: what crosses a stage cut.
  if (p.probedLayers >= 2) {
    llvm::DenseSet<Value> crossing;
    for (Operation &op : body.without_terminator()) {
      auto it = sections.find(&op);
      if (it == sections.end() || it->second != 1 || kinds[&op] != Forward)
        continue;
      for (Value v : op.getOperands())
        if (Operation *def = v.getDefiningOp()) {
          auto d = sections.find(def);
          if (d != sections.end() && d->second == 0 &&
              kinds[def] == Forward)
            crossing.insert(v);
        }
    }
    for (Value v : crossing)
      p.transferBytes += bytesOf(v);
    // Megatron's scatter/gather: a value every tp device holds whole
    // crosses as one block per device.
    if (!probe.sequenceParallel)
      p.transferBytes /= double(std::max<int64_t>(1, probe.tp));
  }
  return p;
}

} // namespace partition::planner
