//===- ComposerTest.cpp - composition rules on a synthetic probe ---------===//
//
// Composer::estimate on a probe written by hand (one probed layer: a 1 ms
// forward GEMM, a 2 ms backward of which half is weight gradients, a 1 ms
// update; 1M parameters of 4 bytes) and a cluster of round numbers (1
// TFLOP/s, 1 TB/s memory, 1 GB/s links without latency), so that each
// composition rule -- layers per stage, the update, the data-parallel
// collectives and what hides them, ZeRO's shards, the pipeline's formula
// and its simulation, memory -- gives a figure worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Planner/Composer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace partition::planner;
using partition::runtime::Cluster;

namespace {

Cluster roundCluster() {
  Cluster c;
  c.nodes = 1;
  c.devicesPerNode = 8;
  c.peakFlops = {{"f32", 1e12}};
  c.memoryBytes = 1e12;
  c.memoryBandwidth = 1e12;
  c.intraNode = {1e9, 0};
  c.interNode = {1e9, 0};
  return c;
}

ProbeOp op(int32_t section, bool backward, double flops, double bytes,
           bool weight = false) {
  ProbeOp o;
  o.section = section;
  o.backward = backward;
  o.scales = section != kUpdate;
  o.kind = flops > 0 ? partition::runtime::KernelKind::Gemm
                     : partition::runtime::KernelKind::Elementwise;
  o.weight = weight;
  o.flops = flops;
  o.bytes = bytes;
  o.peak = 1e12;
  return o;
}

Probe roundProbe() {
  Probe p;
  p.batch = 1;
  p.probedLayers = 1;
  p.ops = {op(0, false, 1e9, 0), op(0, true, 1e9, 0),
           op(0, true, 1e9, 0, /*weight=*/true), op(kUpdate, false, 0, 1e9)};
  p.layerParams = {1e6};
  p.layerTensors = {2};
  p.layerSaved = {1e6};
  p.parameterBytes = 4;
  p.stateBytes = 8;
  p.gradientBytes = 4;
  p.layerForwardFlops = {1e9};
  return p;
}

struct Fixture {
  Cluster cluster = roundCluster();
  Probe probe = roundProbe();
  ProbeCosts costs = costProbe(probe, 1, cluster);
  Model model;
  TrainingOptions training;
  ComposerCache cache;
  Fixture() {
    model.summary.layers = 4;
    model.probedLayerOf = [](int64_t) { return int64_t(0); };
  }
  PlanEstimate estimate(PlanConfig c, bool exact = false) {
    Composer composer(probe, costs, model, cluster, probe, 8, training, cache);
    std::string why;
    std::optional<PlanEstimate> e = composer.estimate(c, exact, &why);
    EXPECT_TRUE(e) << why;
    return e.value_or(PlanEstimate());
  }
};

PlanConfig plan(int64_t dp, int64_t pp, int64_t m, int64_t zero,
                std::string schedule = "none") {
  PlanConfig c;
  c.dp = dp;
  c.pp = pp;
  c.microBatches = m;
  c.zero = zero;
  c.schedule = std::move(schedule);
  return c;
}

TEST(Composer, OneDevice) {
  Fixture f;
  PlanEstimate e = f.estimate(plan(1, 1, 1, 0));
  // 4 layers of 1 + 2 ms, then the update of 4M parameters at 1 ns each.
  EXPECT_NEAR(e.compute, 12e-3, 1e-12);
  EXPECT_NEAR(e.seconds, 16e-3, 1e-12);
  EXPECT_NEAR(e.bubble, 0, 1e-12);
  EXPECT_DOUBLE_EQ(e.memory.parameters, 16e6);
  EXPECT_DOUBLE_EQ(e.memory.gradients, 16e6);
  EXPECT_DOUBLE_EQ(e.memory.optimizerState, 32e6);
  EXPECT_DOUBLE_EQ(e.memory.activations, 4e6);
  EXPECT_TRUE(e.fits);
  // Model FLOPs: forward and twice it backward, 8 sequences of 4 layers.
  EXPECT_DOUBLE_EQ(e.modelFlops, 3 * 4e9 * 8);
}

TEST(Composer, TensorParallelShareHiddenAtTheMicroBatch) {
  // A forward tp collective of 1 MB per sequence (1 ms at 1 GB/s), of which
  // the probe's program hid half at micro-batch 1 and a quarter at 2 (the
  // compute beside it grows with the micro-batch, its latencies do not):
  // what is exposed is interpolated between the sizes measured, and the
  // last measured share holds beyond them.
  Cluster cluster = roundCluster();
  Probe p = roundProbe();
  ProbeOp sum = op(0, false, 0, 0);
  sum.commBytes = 1e6;
  sum.commSteps = 1;
  p.ops.push_back(sum);
  p.hiddenForward = {0.5, 0.25};
  auto exposed = [&](double mbs) {
    ProbeCosts c = costProbe(p, mbs, cluster);
    return c.layers[0].forward.communication;
  };
  EXPECT_NEAR(exposed(1), 0.5e-3, 1e-12);
  EXPECT_NEAR(exposed(2), 2 * 0.75e-3, 1e-12);
  EXPECT_NEAR(p.hiddenAt(false, std::sqrt(2.0)), 0.375, 1e-12);
  EXPECT_NEAR(exposed(8), 8 * 0.75e-3, 1e-12);
  EXPECT_DOUBLE_EQ(p.hiddenAt(true, 4), 0); // backward measured nothing
}

TEST(Composer, DataParallelAllReduceHiddenByBackward) {
  Fixture f;
  PlanEstimate e = f.estimate(plan(2, 1, 1, 0));
  // 16 MB of gradients in one bucket: the ring moves 2 x 1/2 x 16 MB at
  // 1 GB/s, 16 ms, of which backward (8 ms and the bucket's copies, 64 MB
  // at 1 TB/s) hides 8.064 ms.
  double backward = 8e-3 + 64e-6;
  EXPECT_NEAR(e.compute, 4e-3 + backward, 1e-12);
  EXPECT_NEAR(e.seconds, 4e-3 + backward + 4e-3 + (16e-3 - backward), 1e-12);
  EXPECT_DOUBLE_EQ(e.memory.optimizerState, 32e6);
}

TEST(Composer, ZeroOneShardsStateAndGathersAfterTheUpdate) {
  Fixture f;
  PlanEstimate e = f.estimate(plan(2, 1, 1, 1));
  // The reduce-scatter (8 ms) hides behind backward; the update of half
  // the parameters (2 ms) and the all-gather of the new ones (8 ms) do not.
  double backward = 8e-3 + 48e-6;
  EXPECT_NEAR(e.seconds, 4e-3 + backward + 2e-3 + 8e-3, 1e-12);
  EXPECT_DOUBLE_EQ(e.memory.optimizerState, 16e6);
  EXPECT_DOUBLE_EQ(e.memory.gradients, 16e6);
  EXPECT_DOUBLE_EQ(f.estimate(plan(2, 1, 1, 2)).memory.gradients, 8e6);
}

TEST(Composer, ZeroThreeHoldsShardsAndOneGatheredLayer) {
  Fixture f;
  PlanEstimate e = f.estimate(plan(2, 1, 1, 3));
  EXPECT_DOUBLE_EQ(e.memory.parameters, 16e6 / 2 + 4e6);
  EXPECT_DOUBLE_EQ(e.memory.optimizerState, 16e6);
  // Forward gathers each layer's weights beside its compute.
  EXPECT_GT(e.stageForward[0], 4e-3);
}

// A tied embedding (the head reads the embedding's table): the probe
// counts its 2M parameters before and after the layers, and updates them
// once. One stage holds one copy; a pipeline's first and last stage each
// hold one; the update costs its 1 ns per parameter either way.
TEST(Composer, TiedEmbeddingIsOneCopyPerStage) {
  Fixture f;
  f.probe.preParams = f.probe.postParams = f.probe.tiedParams = 2e6;
  f.probe.preTensors = f.probe.postTensors = f.probe.tiedTensors = 1;
  // The probe's update ran over its 1M layer and 2M tied parameters.
  f.probe.ops.back().bytes = 3e9;
  f.costs = costProbe(f.probe, 1, f.cluster);
  EXPECT_DOUBLE_EQ(f.costs.updatePerParameter, 1e-9);
  PlanEstimate one = f.estimate(plan(1, 1, 1, 0));
  EXPECT_DOUBLE_EQ(one.memory.parameters, 4 * (4e6 + 2e6));
  PlanEstimate two = f.estimate(plan(1, 2, 2, 0, "1f1b"));
  EXPECT_EQ(two.stageMemory.size(), 2u);
  EXPECT_DOUBLE_EQ(two.stageMemory[0].parameters, 4 * (2e6 + 2e6));
  EXPECT_DOUBLE_EQ(two.stageMemory[1].parameters, 4 * (2e6 + 2e6));
}

TEST(Composer, OneFOneBFormulaAndSimulationAgree) {
  Fixture f;
  // 2 stages of 2 layers (6 ms per micro-batch each), 4 micro-batches:
  // 3 x 6 ms at the slowest stage's pace and 12 ms to fill and drain.
  PlanEstimate formula = f.estimate(plan(1, 2, 4, 0, "1f1b"));
  EXPECT_FALSE(formula.simulated);
  EXPECT_NEAR(formula.seconds, 30e-3 + 2e-3, 1e-12);
  EXPECT_NEAR(formula.bubble, 30e-3 - 24e-3, 1e-12);
  // The first stage holds 2 micro-batches' activations of its 2 layers.
  EXPECT_DOUBLE_EQ(formula.stageMemory[0].activations, 2 * 2e6);
  PlanEstimate simulated = f.estimate(plan(1, 2, 4, 0, "1f1b"), true);
  EXPECT_TRUE(simulated.simulated);
  EXPECT_NEAR(simulated.seconds, formula.seconds, 1e-12);
  EXPECT_DOUBLE_EQ(simulated.stageMemory[0].activations, 2 * 2e6);
}

TEST(Composer, GPipeHoldsEveryMicroBatch) {
  Fixture f;
  PlanEstimate e = f.estimate(plan(1, 2, 4, 0, "gpipe"), true);
  EXPECT_DOUBLE_EQ(e.stageMemory[0].activations, 4 * 2e6);
}

// An embedding (0.1 ms forward) and a head (2 ms forward, 2 ms backward)
// around the 4 layers: with 6 stages each end is a stage of its own (the
// compiler's cut, Megatron-Core's account_for_embedding/loss_in_pipeline_
// split), and with 5 the heavier end, the head, alone.
TEST(Composer, EndsTakeAStageOfTheirOwn) {
  Fixture f;
  f.probe.ops.push_back(op(kPre, false, 1e8, 0));
  f.probe.ops.push_back(op(kPost, false, 2e9, 0));
  f.probe.ops.push_back(op(kPost, true, 2e9, 0));
  f.costs = costProbe(f.probe, 1, f.cluster);
  PlanEstimate six = f.estimate(plan(1, 6, 6, 0, "1f1b"), true);
  ASSERT_EQ(six.stageForward.size(), 6u);
  EXPECT_NEAR(six.stageForward[0], 0.1e-3, 1e-12);
  for (int s = 1; s <= 4; ++s)
    EXPECT_NEAR(six.stageForward[s], 1e-3, 1e-12) << "stage " << s;
  EXPECT_NEAR(six.stageForward[5], 2e-3, 1e-12);
  PlanEstimate five = f.estimate(plan(1, 5, 5, 0, "1f1b"), true);
  ASSERT_EQ(five.stageForward.size(), 5u);
  EXPECT_NEAR(five.stageForward[0], 1.1e-3, 1e-12);
  EXPECT_NEAR(five.stageForward[4], 2e-3, 1e-12);
  // 7 stages: more than the layers and the ends fill.
  Composer composer(f.probe, f.costs, f.model, f.cluster, f.probe, 8,
                    f.training, f.cache);
  std::string why;
  EXPECT_FALSE(composer.estimate(plan(1, 7, 7, 0, "1f1b"), false, &why));
}

// Under a V the last chunk runs on the first stage: the head's work and
// its copy of a tied embedding are there, one copy beside the embedding's.
TEST(Composer, VRunsTheHeadOnTheFirstStage) {
  Fixture f;
  f.probe.ops.push_back(op(kPost, false, 2e9, 0));
  f.probe.preParams = f.probe.postParams = f.probe.tiedParams = 2e6;
  f.probe.preTensors = f.probe.postTensors = f.probe.tiedTensors = 1;
  f.costs = costProbe(f.probe, 1, f.cluster);
  PlanConfig c = plan(1, 2, 4, 0, "v-half");
  c.virtualStages = 2;
  PlanEstimate e = f.estimate(c, true);
  ASSERT_EQ(e.stageForward.size(), 2u);
  // Stage 0: layers 0 and 3 and the head; stage 1: layers 1 and 2.
  EXPECT_NEAR(e.stageForward[0], 4e-3, 1e-12);
  EXPECT_NEAR(e.stageForward[1], 2e-3, 1e-12);
  EXPECT_DOUBLE_EQ(e.stageMemory[0].parameters, 4 * (2e6 + 2e6));
  EXPECT_DOUBLE_EQ(e.stageMemory[1].parameters, 4 * 2e6);
}

TEST(Composer, MoreStagesThanLayersIsPruned) {
  Fixture f;
  Composer composer(f.probe, f.costs, f.model, f.cluster, f.probe, 8,
                    f.training, f.cache);
  std::string why;
  EXPECT_FALSE(composer.estimate(plan(1, 8, 8, 0, "1f1b"), false, &why));
  EXPECT_EQ(why, "no cut of the layers into the stages");
}

// Expert parallelism: of each layer's 1M parameters, 0.5M are an expert's
// (split over ep: the probe counts its local share). Dense gradients are
// reduced over dp x ep, the experts' over dp alone, and ZeRO shards each
// over its own group.
PlanConfig expertPlan(int64_t dp, int64_t ep, int64_t zero) {
  PlanConfig c = plan(dp, 1, 1, zero);
  c.ep = ep;
  return c;
}

TEST(Composer, ExpertsReducedAndShardedOverDataParallelOnly) {
  Fixture f;
  f.probe.layerExpertParams = {0.5e6};
  f.probe.layerExpertTensors = {1};
  // 4 layers: 2M dense and 2M expert parameters, 8 MB of gradients each.
  // ZeRO-1 on dp:2,ep:2: the dense state over 4 devices, the experts'
  // over 2.
  PlanEstimate z1 = f.estimate(expertPlan(2, 2, 1));
  EXPECT_DOUBLE_EQ(z1.memory.optimizerState, 2e6 * 8 / 4 + 2e6 * 8 / 2);
  EXPECT_DOUBLE_EQ(z1.memory.gradients, 16e6);
  EXPECT_DOUBLE_EQ(f.estimate(expertPlan(2, 2, 2)).memory.gradients,
                   8e6 / 4 + 8e6 / 2);
  PlanEstimate z3 = f.estimate(expertPlan(2, 2, 3));
  EXPECT_DOUBLE_EQ(z3.memory.parameters, 8e6 / 4 + 8e6 / 2 + 4e6);
  // ZeRO 0: the dense all-reduce over 4 devices (2 x 3/4 x 8 MB, 12 ms),
  // the experts' over 2 (2 x 1/2 x 8 MB, 8 ms). Backward (8 ms and each
  // bucket's copies, 32 MB at 1 TB/s) hides the first's 8.032 ms; the
  // second hides behind only its own copies (what is left), 32 us.
  PlanEstimate z0 = f.estimate(expertPlan(2, 2, 0));
  double backward = 8e-3 + 64e-6;
  double exposed = (12e-3 - 8.032e-3) + (8e-3 - 32e-6);
  EXPECT_NEAR(z0.seconds, 4e-3 + backward + 4e-3 + exposed, 1e-12);
  // ep:2 alone: the experts' gradients are whole on each device (no
  // reduction), the dense ones are all-reduced over ep.
  PlanEstimate ep = f.estimate(expertPlan(1, 2, 0));
  EXPECT_NEAR(ep.seconds, 4e-3 + 8e-3 + 32e-6 + 4e-3, 1e-12);
  EXPECT_DOUBLE_EQ(ep.memory.optimizerState, 32e6);
}

// Context parallelism: the batch is not split over cp, each sequence is
// (the probe's costs are a cp device's), and every gradient is summed over
// dp x cp, ZeRO sharding over that group: cp:2 reduces and shards as dp:2
// does, and dp:2 x cp:2 as dp:4.
PlanConfig contextPlan(int64_t dp, int64_t cp, int64_t zero) {
  PlanConfig c = plan(dp, 1, 1, zero);
  c.cp = cp;
  return c;
}

TEST(Composer, GradientsReducedAndShardedOverDataAndContextParallel) {
  Fixture f;
  // ZeRO 0 on cp:2: the all-reduce of 16 MB over 2 devices, 16 ms, of
  // which backward (8 ms and the bucket's copies) hides 8.064 ms.
  PlanEstimate cp = f.estimate(contextPlan(1, 2, 0));
  PlanEstimate dp = f.estimate(plan(2, 1, 1, 0));
  double backward = 8e-3 + 64e-6;
  EXPECT_NEAR(cp.seconds, 4e-3 + backward + 4e-3 + (16e-3 - backward), 1e-12);
  EXPECT_NEAR(cp.seconds, dp.seconds, 1e-12);
  // Model FLOPs and devices: 2 devices run the 8 sequences.
  EXPECT_DOUBLE_EQ(cp.modelFlops, dp.modelFlops);
  EXPECT_DOUBLE_EQ(cp.mfu, dp.mfu);
  // dp:2 x cp:2: ZeRO shards over the 4 devices, as dp:4 does.
  for (int64_t zero : {1, 2, 3}) {
    PlanEstimate both = f.estimate(contextPlan(2, 2, zero));
    PlanEstimate four = f.estimate(plan(4, 1, 1, zero));
    EXPECT_DOUBLE_EQ(both.memory.optimizerState, 32e6 / 4) << zero;
    EXPECT_DOUBLE_EQ(both.memory.gradients, four.memory.gradients) << zero;
    EXPECT_DOUBLE_EQ(both.memory.parameters, four.memory.parameters) << zero;
    EXPECT_NEAR(both.seconds, four.seconds, 1e-12) << zero;
  }
  // Experts' gradients are summed over dp x cp too (not over ep).
  f.probe.layerExpertParams = {0.5e6};
  f.probe.layerExpertTensors = {1};
  PlanConfig c = contextPlan(1, 2, 1);
  c.ep = 2;
  EXPECT_DOUBLE_EQ(f.estimate(c).memory.optimizerState,
                   2e6 * 8 / 4 + 2e6 * 8 / 2);
}

TEST(Composer, ContextParallelGroupsRunOnTheLinkTheySpan) {
  // dp:2 x cp:4 over tp 1 spans the 8 devices of a node: the gradients'
  // all-reduce on its 10 GB/s; over tp 2, 16 devices: the 1 GB/s link.
  Fixture f;
  f.cluster.intraNode = {1e10, 0};
  PlanEstimate node = f.estimate(contextPlan(2, 4, 0));
  PlanConfig wide = contextPlan(2, 4, 0);
  wide.tp = 2;
  PlanEstimate nodes = f.estimate(wide);
  // 2 x 7/8 x 16 MB: 2.8 ms at 10 GB/s, all hidden by backward; 28 ms at
  // 1 GB/s, 8.064 ms of it hidden.
  double backward = 8e-3 + 64e-6;
  EXPECT_NEAR(node.seconds, 4e-3 + backward + 4e-3, 1e-12);
  EXPECT_NEAR(nodes.seconds, 4e-3 + backward + 4e-3 + (28e-3 - backward),
              1e-12);
}

TEST(Composer, CollectivesRunOnTheLinkTheirGroupSpans) {
  // A forward all-to-all of 1 MB over an ep group: on the 10 GB/s link
  // while its group spans the 8 devices of a node, on the 1 GB/s one
  // beyond.
  Cluster cluster = roundCluster();
  cluster.intraNode = {1e10, 0};
  Probe p = roundProbe();
  ProbeOp a2a = op(0, false, 0, 0);
  a2a.commBytes = 1e6;
  a2a.commSteps = 1;
  a2a.span = 8;
  p.ops.push_back(a2a);
  EXPECT_NEAR(costProbe(p, 1, cluster).layers[0].forward.communication,
              1e-4, 1e-15);
  p.ops.back().span = 16;
  EXPECT_NEAR(costProbe(p, 1, cluster).layers[0].forward.communication,
              1e-3, 1e-15);
}

} // namespace
