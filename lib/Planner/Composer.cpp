//===- Composer.cpp - a plan's step time and memory from a probe ----------===//

#include "Composer.h"

#include "partition/Dialect/Part/Analysis/StageBalance.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include <algorithm>
#include <cmath>

using partition::runtime::Cluster;
using partition::runtime::Link;
namespace pl = partition::part::pipeline;

namespace partition::planner {

//===----------------------------------------------------------------------===//
// Costs of a probe at one micro-batch size
//===----------------------------------------------------------------------===//

ProbeCosts costProbe(const Probe &p, double microBatchSize,
                     const Cluster &cluster) {
  ProbeCosts c;
  c.layers.assign(p.probedLayers, {});
  double k = microBatchSize / double(std::max<int64_t>(1, p.batch));
  double update = 0;
  for (const ProbeOp &o : p.ops) {
    double scale = o.scales ? k : 1.0;
    Cost t;
    // A tp group's collectives on NVLink within a node, an ep group's
    // all-to-alls too while ep x tp fits one.
    const Link &link = o.span <= cluster.devicesPerNode ? cluster.intraNode
                                                        : cluster.interNode;
    if (o.commSteps > 0)
      t.communication =
          cluster.linkSeconds(link, o.commBytes * scale, o.commSteps) *
          (1 - p.hiddenAt(o.backward, microBatchSize));
    else
      t.compute = cluster.kernelSeconds(o.flops * scale, o.bytes * scale,
                                        o.peak, o.kind);
    if (o.section == kUpdate) {
      update += t.total();
      continue;
    }
    PassCost &pc = o.section >= 0 ? c.layers[o.section]
                   : o.section == kPre ? c.pre
                                       : c.post;
    if (o.commSteps == 0)
      pc.flops += o.flops * scale;
    (!o.scales ? pc.once : o.backward ? pc.backward : pc.forward) += t;
    if (o.scales && o.backward && o.weight)
      pc.weight += t;
  }
  // The probe updates a tied embedding once.
  double params = p.preParams + p.postParams - p.tiedParams;
  for (double l : p.layerParams)
    params += l;
  c.updatePerParameter = params > 0 ? update / params : 0;
  return c;
}

namespace {

/// A ring collective of `bytes` over n devices of `link`, as the compiled
/// program's collectives are costed (runtime::ringCost).
double ringTime(runtime::Ring kind, double bytes, int64_t n, const Link &link,
                const Cluster &cluster) {
  runtime::RingCost r = runtime::ringCost(kind, bytes, n);
  return r.steps > 0 ? cluster.linkSeconds(link, r.movedBytes, r.steps) : 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

struct Composer::Layout {
  /// The micro-batch against the probe's batch.
  double k;
  const Link *dpLink;
  /// One transfer of a layer's output between stages.
  double transfer;
  std::optional<pl::ScheduleKind> kind;
  /// The layers of each stage and chunk.
  const StageCut *cut;
  /// The stage of the last chunk, which runs the head (the first under a
  /// V), and the chunk there.
  int64_t headStage = 0, headChunk = 0;
};

const std::optional<StageCut> &
Composer::stageLayers(int64_t p, int64_t V, pl::Placement placement) const {
  auto key =
      std::make_tuple(static_cast<const void *>(&costs), p, V, int(placement));
  auto it = cache.cuts.find(key);
  if (it != cache.cuts.end())
    return it->second;
  std::optional<StageCut> &cut = cache.cuts[key];
  const int64_t L = model.summary.layers;
  if (p <= 0 || V <= 0)
    return cut;
  pl::LayerGroups groups;
  if (p == 1 && V == 1) {
    for (int64_t l = 0; l < L; ++l)
      groups[l] = 0;
  } else {
    auto work = [](const PassCost &c) { return c.flops; };
    pl::LayerCosts layers;
    for (int64_t l = 0; l < L; ++l)
      layers.layers.push_back(
          {l, work(costs.layers[model.probedLayerOf(l)]), 0, 0});
    layers.leading.flops = work(costs.pre);
    layers.trailing.flops = work(costs.post);
    std::string error;
    std::optional<pl::LayerGroups> balanced =
        pl::balanceFlops(layers, {p, V}, &error);
    if (!balanced)
      return cut;
    groups = std::move(*balanced);
  }
  cut.emplace();
  cut->stages.resize(p);
  cut->chunks.assign(p, std::vector<std::vector<int64_t>>(V));
  for (auto [layer, group] : groups) {
    pl::StageChunk at = pl::stageChunkOf(placement, p, group);
    cut->stages[at.stage].push_back(layer);
    cut->chunks[at.stage][at.chunk].push_back(layer);
  }
  return cut;
}

const std::pair<std::optional<pl::Schedule>, std::string> &
Composer::schedule(pl::ScheduleKind kind, int64_t p, int64_t m,
                   int64_t V) const {
  auto key = std::make_tuple(int(kind), p, m, V);
  auto it = cache.schedules.find(key);
  if (it == cache.schedules.end()) {
    std::string why;
    std::optional<pl::Schedule> made = pl::makeSchedule(kind, p, m, V, &why);
    it = cache.schedules.emplace(key, std::make_pair(std::move(made), why))
             .first;
  }
  return it->second;
}

StageCosts Composer::stageCosts(const PlanConfig &c, const Layout &x) const {
  const int64_t p = c.pp, V = c.virtualStages;
  StageCosts s;
  s.forward.assign(p, {});
  s.backward.assign(p, {});
  s.weight.assign(p, {});
  s.update.assign(p, 0);
  s.once.assign(p, {});
  s.parameters.assign(p, 0);
  s.saved.assign(p, 0);
  s.tensors.assign(p, 0);
  // What a stage runs per micro-batch and holds: its layers, the embedding
  // on the first, the head on the stage of the last chunk.
  const int64_t headStage = x.headStage;
  s.expertParameters.assign(p, 0);
  s.expertTensors.assign(p, 0);
  auto add = [&](int64_t stage, const PassCost &cost, double params,
                 double tensors, double saved) {
    s.forward[stage] += cost.forward;
    s.backward[stage] += cost.backward;
    s.weight[stage] += cost.weight;
    s.once[stage] += cost.once;
    s.parameters[stage] += params;
    s.tensors[stage] += tensors;
    s.saved[stage] += saved * x.k;
  };
  for (int64_t stage = 0; stage < p; ++stage) {
    for (int64_t l : x.cut->stages[stage]) {
      int64_t q = model.probedLayerOf(l);
      add(stage, costs.layers[q], probe.layerParams[q], probe.layerTensors[q],
          probe.layerSaved[q]);
      if (size_t(q) < probe.layerExpertParams.size()) {
        s.expertParameters[stage] += probe.layerExpertParams[q];
        s.expertTensors[stage] += probe.layerExpertTensors[q];
      }
    }
    if (stage == 0)
      add(stage, costs.pre, probe.preParams, probe.preTensors, probe.preSaved);
    if (stage == headStage)
      add(stage, costs.post, probe.postParams, probe.postTensors,
          probe.postSaved);
    if (stage == 0 && stage == headStage) { // one copy of a tied embedding
      s.parameters[stage] -= probe.tiedParams;
      s.tensors[stage] -= probe.tiedTensors;
    }
    // Pipeline transfers: a stage waits for its input's (and its output
    // gradient's) transfer, V times per micro-batch when interleaved.
    if (stage > 0 || V > 1)
      s.forward[stage].communication += x.transfer * double(V);
    if (stage < p - 1 || V > 1)
      s.backward[stage].communication += x.transfer * double(V);
    addDataParallel(c, x, stage, s);
  }
  addChunkShares(x, s);
  return s;
}

void Composer::addChunkShares(const Layout &x, StageCosts &s) const {
  const int64_t p = int64_t(x.cut->chunks.size());
  s.forwardShare.assign(p, {});
  s.backwardShare.assign(p, {});
  for (int64_t stage = 0; stage < p; ++stage) {
    const std::vector<std::vector<int64_t>> &chunks = x.cut->chunks[stage];
    const int64_t V = int64_t(chunks.size());
    std::vector<double> forward(V, 0), backward(V, 0);
    auto add = [&](int64_t chunk, const PassCost &cost) {
      forward[chunk] += cost.forward.total();
      backward[chunk] += cost.backward.total();
    };
    for (int64_t chunk = 0; chunk < V; ++chunk)
      for (int64_t l : chunks[chunk])
        add(chunk, costs.layers[model.probedLayerOf(l)]);
    if (stage == 0 && V > 0)
      add(0, costs.pre);
    if (stage == x.headStage && x.headChunk < V)
      add(x.headChunk, costs.post);
    auto shares = [V](std::vector<double> work) {
      double sum = 0;
      for (double w : work)
        sum += w;
      for (double &w : work)
        w = sum > 0 ? w / sum : 1.0 / double(V);
      return work;
    };
    s.forwardShare[stage] = shares(forward);
    s.backwardShare[stage] = shares(backward);
  }
}

/// Parameters whose gradients one group of devices reduces (and ZeRO
/// shards over): the dense ones over dp x cp x ep, the experts' over dp x
/// cp (a cp device sees other tokens of the same sequences; an ep device
/// holds other experts).
struct Composer::ReduceGroup {
  double parameters = 0, tensors = 0;
  int64_t devices = 1;
  /// Flat gathers of ZeRO-3 (part-zero-prefetch: one per layer, one per
  /// tensor outside the layers).
  double gathers = 0;
};

std::vector<Composer::ReduceGroup>
Composer::reduceGroups(const PlanConfig &c, const Layout &x, int64_t stage,
                       const StageCosts &s) const {
  double layers = double(x.cut->stages[stage].size());
  ReduceGroup dense, experts;
  experts.parameters = s.expertParameters[stage];
  experts.tensors = s.expertTensors[stage];
  experts.devices = c.expertDataParallel();
  experts.gathers = experts.parameters > 0 ? std::max(1.0, layers) : 0;
  dense.parameters = s.parameters[stage] - experts.parameters;
  dense.tensors = s.tensors[stage] - experts.tensors;
  dense.devices = c.dataParallel();
  dense.gathers = std::max(1.0, layers + (stage == 0 ? probe.preTensors : 0) +
                                    (stage == x.headStage ? probe.postTensors
                                                          : 0));
  std::vector<ReduceGroup> groups = {dense};
  if (experts.parameters > 0)
    groups.push_back(experts);
  return groups;
}

void Composer::addDataParallel(const PlanConfig &c, const Layout &x,
                               int64_t stage, StageCosts &s) const {
  // Compute that hides collectives, shared by the groups: what one group's
  // collectives hide behind, the next one's cannot.
  double usedForward = 0, usedBackward = 0;
  double update = 0;
  for (const ReduceGroup &g : reduceGroups(c, x, stage, s))
    update += addReductions(c, x, g, stage, s, usedForward, usedBackward);
  s.update[stage] = update + s.once[stage].total();
}

double Composer::addReductions(const PlanConfig &c, const Layout &x,
                               const ReduceGroup &g, int64_t stage,
                               StageCosts &s, double &usedForward,
                               double &usedBackward) const {
  const int64_t p = c.pp, d = g.devices;
  const Link &dpLink = *x.dpLink;
  // Data parallelism and ZeRO as the compiler places them: the gradient
  // all-reduce once per step, in the last micro-batch's backward (ZeRO 0);
  // a reduce-scatter in every micro-batch's backward and the parameters'
  // all-gather after the update (1, 2); with 3 also the parameters'
  // all-gather in every forward and again in backward. What runs beside
  // backward is hidden up to the cluster's overlap.
  double gradients = g.parameters * probe.gradientBytes;
  double weights = g.parameters * probe.parameterBytes;
  auto hidden = [&](double comm, double besides, double &used) {
    double h = std::min(comm, std::max(0.0, besides - used));
    used += h;
    return h * cluster.overlap;
  };
  auto hiddenForward = [&](double comm) {
    return hidden(comm, s.forward[stage].compute, usedForward);
  };
  auto hiddenBackward = [&](double comm) {
    return hidden(comm, s.backward[stage].compute, usedBackward);
  };
  // The gradients are reduced in one backward (ZeRO 0's all-reduce and a
  // once-per-step reduce-scatter in the last micro-batch's, or the only
  // one), or in every micro-batch's (ZeRO's reduce-scatter otherwise).
  bool pipelined = p > 1 || c.microBatches > 1;
  bool oneBackward = c.zero == 0 || c.syncPerStep || !pipelined;
  // dp-overlap=0: the reductions of one backward wait for its end; a
  // pipeline's per-micro-batch reduce-scatters still run beside the
  // micro-batches after them.
  bool waitForBackward = !c.dpOverlap && oneBackward;
  double update = g.parameters * costs.updatePerParameter /
                  double(c.zero >= 1 ? d : 1);
  // Collectives as the plan compiles them, each paying the ring's
  // latencies: gradient reductions in buckets of gradBucketBytes(dp x cp x
  // ep)
  // (part-grad-buckets, in a pipeline's backward fragments too); ZeRO-3's
  // gathers one flat bucket per layer (part-zero-prefetch), one per tensor
  // outside the layers; ZeRO-1/2's gathers after the update one per tensor.
  double reductions = std::max(
      1.0,
      std::ceil(gradients / double(part::gradBucketBytes(c.dataParallel()))));
  double gathers = c.zero == 3 ? g.gathers : std::max(1.0, g.tensors);
  // The latencies of the collectives after the first of `count`.
  auto more = [&](double count, runtime::Ring kind) {
    return cluster.linkSeconds(
        dpLink, 0, (count - 1) * runtime::ringCost(kind, 0, d).steps);
  };
  // Inference has no gradients: nothing to reduce.
  bool training = probe.gradientBytes > 0;
  // Bucketed f32 gradients reduced in bf16 (part-grad-buckets dtype) move
  // half the bytes (the copies stay f32).
  double reduced = gradients;
  if (this->training.gradReduce == "bf16" && probe.gradientBytes >= 4)
    reduced = gradients / 2;
  // The copies those buckets compile to, memory-bound: a bucket's concat
  // reads and writes each gradient, its slices each result (the whole
  // gradient, or its shard); a flat gather's concat its shards, its
  // slices the gathered parameters, in every pass that gathers. A
  // pipeline's last backward only is once per step.
  double copy =
      cluster.kernelSeconds(0, 1, 1, runtime::KernelKind::Elementwise);
  double bucketCopies =
      2.0 * gradients * (1.0 + (c.zero >= 1 ? 1.0 / double(d) : 1.0)) * copy;
  if (training && d > 1 && oneBackward && pipelined)
    update += bucketCopies;
  else if (training && d > 1)
    s.backward[stage].compute += bucketCopies;
  if (training && d > 1 && c.zero == 3) {
    double flat = 2.0 * weights * (1.0 + 1.0 / double(d)) * copy;
    s.forward[stage].compute += flat;
    s.backward[stage].compute += flat;
  }
  if (training && d > 1 && c.zero == 0) {
    double ar = ringTime(runtime::Ring::AllReduce, reduced, d, dpLink,
                         cluster) +
                more(reductions, runtime::Ring::AllReduce);
    update += ar - (waitForBackward ? 0 : hiddenBackward(ar));
  } else if (training && d > 1) {
    double rs = ringTime(runtime::Ring::AllGather, reduced, d, dpLink,
                         cluster) +
                more(reductions, runtime::Ring::ReduceScatter);
    double ag = ringTime(runtime::Ring::AllGather, weights, d, dpLink,
                         cluster) +
                more(gathers, runtime::Ring::AllGather);
    // Backward's collectives share the compute that hides them: the
    // reduce-scatter, and with ZeRO-3 the gathers again (once per layer:
    // a recomputed forward reads its layer's backward gather, which
    // part-zero-prefetch makes one flat gather of each weight). Reduced
    // once per step (sync=step), the reduce-scatter runs in the last
    // backward only, as ZeRO 0's all-reduce does.
    double backward = c.syncPerStep || waitForBackward ? 0 : rs;
    if (waitForBackward)
      update += rs;
    else if (c.syncPerStep)
      update += rs - hiddenBackward(rs);
    if (c.zero == 3) {
      s.forward[stage].communication += ag - hiddenForward(ag);
      backward += ag;
    } else {
      update += ag;
    }
    s.backward[stage].communication += backward - hiddenBackward(backward);
  }
  return update;
}

MemoryEstimate Composer::memoryOf(const PlanConfig &c, const Layout &x,
                                  const StageCosts &s, int64_t stage,
                                  int64_t inFlight) const {
  MemoryEstimate mem;
  double params = s.parameters[stage];
  // Each group's parameters, gradients and state, sharded over its devices
  // by ZeRO.
  for (const ReduceGroup &g : reduceGroups(c, x, stage, s)) {
    double d = double(g.devices), n = g.parameters;
    mem.parameters += n * probe.parameterBytes / (c.zero == 3 ? d : 1);
    // Reduced once per step, the whole sum is held, and its shard.
    mem.gradients += c.syncPerStep
                         ? n * probe.gradientBytes * (1.0 + 1.0 / d)
                         : n * probe.gradientBytes / (c.zero >= 2 ? d : 1);
    mem.optimizerState += n * probe.stateBytes / (c.zero >= 1 ? d : 1);
  }
  if (c.zero == 3) // the largest layer's gathered weights
    mem.parameters += params /
                      std::max<size_t>(1, x.cut->stages[stage].size()) *
                      probe.parameterBytes;
  mem.activations = s.saved[stage] / double(c.virtualStages) * double(inFlight);
  mem.workspace = std::max(
      probe.workspaceAt(x.k),
      probe.updateWorkspace / double(c.zero >= 1 ? c.dataParallel() : 1));
  return mem;
}

std::optional<Composer::PipelineTime>
Composer::pipelineTime(const PlanConfig &c, const Layout &x,
                       const StageCosts &s, bool exact,
                       std::string *pruned) const {
  const int64_t p = c.pp, m = c.microBatches, V = c.virtualStages;
  auto work = [&](int64_t stage) {
    return double(m) * (s.forward[stage].total() + s.backward[stage].total());
  };
  if (p == 1) {
    PipelineTime t;
    t.seconds = work(0);
    t.inFlight.assign(1, 1);
    t.bubble.assign(1, 0);
    return t;
  }
  if (!exact)
    return pipelineFormula(c, x, s);
  // p, m, V: each bounded (kMaxDevices, kMaxMicroBatches, layers), their
  // product in double.
  double steps = double(p) * double(m) * double(V);
  if (steps > double(kMaxScheduleSteps)) {
    *pruned = "schedule: more than " + std::to_string(kMaxScheduleSteps) +
              " steps to simulate";
    return std::nullopt;
  }
  const std::pair<std::optional<pl::Schedule>, std::string> &made =
      schedule(*x.kind, p, m, V);
  if (!made.first) {
    *pruned = "schedule: " + made.second;
    return std::nullopt;
  }
  auto cost = [&](int64_t stage, const pl::Step &step) {
    return chunkStepSeconds(s.forward[stage].total(),
                            s.backward[stage].total(), s.weight[stage].total(),
                            s.forwardShare[stage], s.backwardShare[stage],
                            stage, V, step);
  };
  std::string why;
  std::optional<pl::Timeline> timeline = pl::simulate(*made.first, &why, cost);
  if (!timeline) {
    *pruned = "schedule: " + why;
    return std::nullopt;
  }
  PipelineTime t;
  t.seconds = timeline->makespan;
  t.simulated = true;
  for (int64_t stage = 0; stage < p; ++stage) {
    t.inFlight.push_back(timeline->peakInFlight[stage]);
    t.bubble.push_back(timeline->makespan - work(stage));
  }
  return t;
}

Composer::PipelineTime Composer::pipelineFormula(const PlanConfig &c,
                                                 const Layout &x,
                                                 const StageCosts &s) const {
  using Kind = pl::ScheduleKind;
  const int64_t p = c.pp, m = c.microBatches, V = c.virtualStages;
  Kind kind = x.kind.value_or(Kind::OneFOneB);
  // (m - 1) micro-batches at the slowest stage's pace, plus filling and
  // draining through every stage (a chunk's worth when interleaved; the
  // forward only for zero-bubble, whose weight gradients fill the rest).
  double slowest = 0, fill = 0;
  for (int64_t stage = 0; stage < p; ++stage) {
    double one = s.forward[stage].total() + s.backward[stage].total();
    slowest = std::max(slowest, one);
    fill += kind == Kind::ZeroBubbleH1 ? s.forward[stage].total() : one;
  }
  if (kind == Kind::Interleaved1F1B)
    fill /= double(V);
  PipelineTime t;
  t.seconds = double(m - 1) * slowest + fill;
  // The V schedules, as their simulation under equal F, B and W costs
  // gives them (PipelineScheduleTest): ZB-V idles not at all, V-Half
  // about p / 3 of a micro-batch's stage time, V-Min about 0.6 p; they
  // hold 2p, about p + 2 and about (2p + 8) / 3 chunks.
  switch (kind) {
  case Kind::ZeroBubbleH1:
    t.seconds = std::max(t.seconds, double(m) * slowest);
    break;
  case Kind::ZeroBubbleV:
    t.seconds = double(m) * slowest;
    break;
  case Kind::VHalf:
    t.seconds = double(m) * slowest + slowest * double(p) / 3;
    break;
  case Kind::VMin:
    t.seconds = double(m) * slowest + slowest * 0.6 * double(p);
    break;
  case Kind::GPipe:
  case Kind::OneFOneB:
  case Kind::Interleaved1F1B:
    break;
  }
  for (int64_t stage = 0; stage < p; ++stage) {
    double work =
        double(m) * (s.forward[stage].total() + s.backward[stage].total());
    t.bubble.push_back(std::max(0.0, t.seconds - work));
    int64_t held = std::min(m, p - stage);
    switch (kind) {
    case Kind::GPipe:
      held = m;
      break;
    case Kind::Interleaved1F1B:
      held = std::min(m * V, (p - stage) * 2 + (V - 1) * p);
      break;
    case Kind::ZeroBubbleV:
      held = std::min(2 * m, 2 * p);
      break;
    case Kind::VHalf:
      held = std::min(2 * m, 2 * ((p + 2) / 2));
      break;
    case Kind::VMin:
      held = std::min(2 * m, 2 * ((p + 4) / 3));
      break;
    case Kind::OneFOneB:
    case Kind::ZeroBubbleH1:
      break;
    }
    t.inFlight.push_back(held);
  }
  return t;
}

void Composer::addFlops(const PlanConfig &c, PlanEstimate &e) const {
  // FLOPs from the tp = 1 probe: the model's, not a device's share.
  double forward = modelProbe.outsideForwardFlops;
  double layersForward = 0;
  for (int64_t l = 0; l < model.summary.layers; ++l)
    layersForward += modelProbe.layerForwardFlops[model.probedLayerOf(l)];
  forward += layersForward;
  double perSequence = forward / double(std::max<int64_t>(1, modelProbe.batch));
  double sequences = double(globalBatch);
  // Training: forward and a backward of twice its FLOPs; inference:
  // forward only.
  e.modelFlops = (probe.gradientBytes > 0 ? 3 : 1) * perSequence * sequences;
  e.hardwareFlops =
      e.modelFlops +
      (c.recompute == Recompute::Full
           ? layersForward / double(std::max<int64_t>(1, modelProbe.batch)) *
                 sequences
           : 0);
  double devices = double(c.devices());
  e.tflopsPerDevice = e.hardwareFlops / devices / e.seconds / 1e12;
  double peak = modelProbe.ops.empty() ? 1 : 0;
  for (const ProbeOp &o : modelProbe.ops)
    if (o.kind != runtime::KernelKind::Elementwise)
      peak = std::max(peak, o.peak);
  e.mfu = peak > 0 ? e.modelFlops / devices / e.seconds / peak : 0;
}

std::optional<PlanEstimate> Composer::estimate(const PlanConfig &c, bool exact,
                                               std::string *pruned) const {
  Layout x;
  x.k = double(c.microBatchSize) / double(std::max<int64_t>(1, probe.batch));
  const int64_t perNode = std::max<int64_t>(1, cluster.devicesPerNode);
  // A gradient-reduction group (dp x cp x ep, and the experts' dp x cp)
  // spans dp x cp x ep x tp consecutive ranks.
  x.dpLink = c.dataParallel() * c.tp <= perNode ? &cluster.intraNode
                                                : &cluster.interNode;
  const Link &ppLink =
      c.devices() <= perNode ? cluster.intraNode : cluster.interNode;
  x.transfer =
      c.pp > 1 ? cluster.linkSeconds(ppLink, probe.transferBytes * x.k, 1) : 0;
  x.kind = pl::parseScheduleKind(c.schedule);
  pl::Placement placement =
      x.kind ? pl::placementOf(*x.kind) : pl::Placement::Interleaved;
  const std::optional<StageCut> &cut =
      stageLayers(c.pp, c.virtualStages, placement);
  pl::StageChunk head =
      pl::stageChunkOf(placement, c.pp, c.pp * c.virtualStages - 1);
  x.headStage = head.stage;
  x.headChunk = head.chunk;
  if (!cut) {
    if (pruned)
      *pruned = "no cut of the layers into the stages";
    return std::nullopt;
  }
  x.cut = &*cut;
  StageCosts s = stageCosts(c, x);
  std::optional<PipelineTime> pipeline = pipelineTime(c, x, s, exact, pruned);
  if (!pipeline)
    return std::nullopt;

  PlanEstimate e;
  e.config = c;
  e.simulated = pipeline->simulated;
  // The step: the pipeline, then the update of the stage that ends last.
  int64_t busiest = 0;
  e.seconds = 0;
  for (int64_t stage = 0; stage < c.pp; ++stage)
    if (pipeline->seconds + s.update[stage] > e.seconds) {
      e.seconds = pipeline->seconds + s.update[stage];
      busiest = stage;
    }
  e.compute = double(c.microBatches) * (s.forward[busiest].compute +
                             s.backward[busiest].compute) +
              s.once[busiest].compute;
  e.bubble = std::max(0.0, pipeline->bubble[busiest]);
  e.exposedCommunication = std::max(0.0, e.seconds - e.compute - e.bubble);
  // Memory: the stage with the most.
  double most = -1;
  for (int64_t stage = 0; stage < c.pp; ++stage) {
    MemoryEstimate mem =
        memoryOf(c, x, s, stage, pipeline->inFlight[stage]);
    e.stageForward.push_back(s.forward[stage].total());
    e.stageBackward.push_back(s.backward[stage].total());
    e.stageWeight.push_back(s.weight[stage].total());
    e.stageForwardShare.push_back(s.forwardShare[stage]);
    e.stageBackwardShare.push_back(s.backwardShare[stage]);
    e.stageUpdate.push_back(s.update[stage]);
    e.stageMemory.push_back(mem);
    if (mem.total() > most) {
      most = mem.total();
      e.memory = mem;
      e.memoryStage = stage;
    }
  }
  e.fits = most <= cluster.memoryBytes;
  addFlops(c, e);
  return e;
}

} // namespace partition::planner
