//===- PlanConstraintTest.cpp - partition-plan's --fix -------------------===//
//
// PlanConstraint::parse reads every key and rejects what is not a choice
// with a message naming it; admits() and choices() compare a plan with the
// fixed choices, the once-per-step gradient reduce-scatter (sync) among
// them. PlanConfig writes the part-spmd options of what it fixes.
//
//===----------------------------------------------------------------------===//

#include "partition/Planner/Planner.h"

#include "gtest/gtest.h"

using namespace partition::planner;

namespace {

std::optional<PlanConstraint> parse(const std::string &text,
                                    std::string *error) {
  return PlanConstraint::parse(text, error);
}

TEST(PlanConstraint, ParsesEveryKey) {
  std::string error;
  std::optional<PlanConstraint> c =
      parse("dp=16,tp=8,pp=8,vpp=2,mbs=1,schedule=1f1b,zero=1,"
            "recompute=full,sp=1,sync=step,tp-overlap=4,dp-overlap=0",
            &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->dp, 16);
  EXPECT_EQ(c->tp, 8);
  EXPECT_EQ(c->pp, 8);
  EXPECT_EQ(c->virtualStages, 2);
  EXPECT_EQ(c->microBatchSize, 1);
  EXPECT_EQ(c->schedule, "1f1b");
  EXPECT_EQ(c->zero, 1);
  EXPECT_EQ(c->recompute, Recompute::Full);
  EXPECT_EQ(c->sequenceParallel, true);
  EXPECT_EQ(c->syncPerStep, true);
  EXPECT_EQ(c->tpOverlap, 4);
  EXPECT_EQ(c->dpOverlap, false);
  // Spaces around items and values are allowed; nothing given fixes nothing.
  c = parse(" tp = 4 , sync=micro-batch ", &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->tp, 4);
  EXPECT_EQ(c->syncPerStep, false);
  EXPECT_FALSE(c->pp);
  c = parse("", &error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->choices(PlanConfig()).empty());
}

TEST(PlanConstraint, RejectsWhatIsNotAChoice) {
  struct Case {
    const char *text, *error;
  };
  for (const Case &k : std::initializer_list<Case>{
           {"xp=2", "--fix: unknown key \"xp\" (known: dp tp pp cp ep vpp "
                    "mbs schedule zero recompute sp sync tp-overlap "
                    "dp-overlap)"},
           {"ep=0", "--fix: ep=0 is not a whole number of at least 1"},
           {"cp=0", "--fix: cp=0 is not a whole number of at least 1"},
           {"cp=16777217",
            "--fix: cp=16777217 is too large (at most 16777216)"},
           {"cp=2,cp=4", "--fix: cp is given twice (cp=2, cp=4)"},
           {"dp-overlap=2", "--fix: dp-overlap=2 is not 0 or 1"},
           {"tp-overlap=1", "--fix: tp-overlap=1 is not 0 (off) or a number "
                            "of chunks (at least 2)"},
           {"tp-overlap=65", "--fix: tp-overlap=65 is too large (at most 64)"},
           {"zero=5", "--fix: zero=5 is not a ZeRO stage (0-3)"},
           {"tp=0", "--fix: tp=0 is not a whole number of at least 1"},
           {"tp=x", "--fix: tp=x is not a whole number of at least 1"},
           {"tp=2,tp=4", "--fix: tp is given twice (tp=2, tp=4)"},
           {"sync=often", "--fix: sync=often is not step or micro-batch"},
           {"sp=yes", "--fix: sp=yes is not 0 or 1"},
           {"recompute=some",
            "--fix: recompute=some is not none, selective or full"},
       }) {
    std::string error;
    EXPECT_FALSE(parse(k.text, &error)) << k.text;
    EXPECT_EQ(error, k.error) << k.text;
  }
}

TEST(PlanConstraint, FixesContextParallelism) {
  std::string error;
  std::optional<PlanConstraint> c = parse("tp=8,pp=16,cp=16", &error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->cp, 16);
  PlanConfig plan;
  plan.tp = 8;
  plan.pp = 16;
  plan.cp = 8;
  EXPECT_FALSE(c->admits(plan));
  std::vector<PlanConstraint::Choice> choices = c->choices(plan);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(choices[2].key, "cp");
  EXPECT_EQ(choices[2].fixed, "16");
  EXPECT_EQ(choices[2].actual, "8");
  plan.cp = 16;
  EXPECT_TRUE(c->admits(plan));
}

TEST(PlanConstraint, AdmitsThePlansWithItsChoices) {
  std::string error;
  std::optional<PlanConstraint> c = parse("zero=1,sync=step", &error);
  ASSERT_TRUE(c) << error;
  PlanConfig plan;
  plan.zero = 1;
  EXPECT_FALSE(c->admits(plan)); // reduce-scattered per micro-batch
  std::vector<PlanConstraint::Choice> choices = c->choices(plan);
  ASSERT_EQ(choices.size(), 2u);
  EXPECT_EQ(choices[1].key, "sync");
  EXPECT_EQ(choices[1].fixed, "step");
  EXPECT_EQ(choices[1].actual, "micro-batch");
  plan.syncPerStep = true;
  EXPECT_TRUE(c->admits(plan));
}

TEST(PlanConstraint, RecomputeHasThreeForms) {
  std::string error;
  for (auto [name, r] : {std::pair{"none", Recompute::None},
                         std::pair{"selective", Recompute::Selective},
                         std::pair{"full", Recompute::Full}}) {
    std::optional<PlanConstraint> c =
        parse(std::string("recompute=") + name, &error);
    ASSERT_TRUE(c) << error;
    EXPECT_EQ(c->recompute, r);
    EXPECT_STREQ(recomputeName(r), name);
    PlanConfig plan;
    plan.recompute = r;
    EXPECT_TRUE(c->admits(plan));
    plan.recompute = r == Recompute::Full ? Recompute::None : Recompute::Full;
    EXPECT_FALSE(c->admits(plan));
  }
  EXPECT_FALSE(parseRecompute("partial"));
}

TEST(PlanConfig, WritesPartSpmdOptions) {
  PlanConfig c;
  c.tp = 8;
  c.pp = 8;
  c.dp = 16;
  c.microBatches = 96;
  c.zero = 1;
  c.syncPerStep = true;
  EXPECT_EQ(c.spmdOptions(),
            "mesh=\"pp:8,dp:16,tp:8\" micro-batches=96 schedule=1f1b zero=1 "
            "grad-sync=step");
  EXPECT_EQ(c.text(), "tp=8 pp=8 dp=16 mbs=1 mb=96 schedule=1f1b zero=1 "
                      "recompute=none sp=0 sync=step");
  c.syncPerStep = false;
  EXPECT_EQ(c.spmdOptions(),
            "mesh=\"pp:8,dp:16,tp:8\" micro-batches=96 schedule=1f1b zero=1");
  c.sequenceParallel = true;
  c.tpOverlap = 4;
  EXPECT_EQ(c.spmdOptions(),
            "mesh=\"pp:8,dp:16,tp:8\" micro-batches=96 schedule=1f1b zero=1 "
            "sequence-parallel=true tp-comm-overlap=4");
  EXPECT_EQ(c.text(), "tp=8 pp=8 dp=16 mbs=1 mb=96 schedule=1f1b zero=1 "
                      "recompute=none sp=1 tp-overlap=4");
  c.dpOverlap = false;
  EXPECT_EQ(c.text(), "tp=8 pp=8 dp=16 mbs=1 mb=96 schedule=1f1b zero=1 "
                      "recompute=none sp=1 tp-overlap=4 dp-overlap=0");
}

// ep between dp and tp: an ep group is the tp groups beside each other.
TEST(PlanConfig, PlacesEpBetweenDpAndTp) {
  PlanConfig c;
  c.tp = 2;
  c.dp = 2;
  c.ep = 4;
  EXPECT_EQ(c.spmdOptions(), "mesh=\"dp:2,ep:4,tp:2\"");
  EXPECT_EQ(c.text(), "tp=2 pp=1 dp=2 ep=4 mbs=1 mb=1 schedule=1f1b zero=0 "
                      "recompute=none sp=0");
  EXPECT_EQ(c.devices(), 16);
  EXPECT_EQ(c.dataParallel(), 8);
  c.tp = 1;
  c.dp = 1;
  EXPECT_EQ(c.spmdOptions(), "mesh=\"ep:4\"");
}

// cp between dp and ep (Megatron-Core's order, pp dp cp ep tp): a cp group
// is the ep x tp blocks beside each other. The batch is not split over it
// but every gradient is summed over it: dp x cp x ep devices reduce a dense
// gradient, dp x cp an expert's.
TEST(PlanConfig, PlacesCpBetweenDpAndTp) {
  PlanConfig c;
  c.tp = 8;
  c.pp = 16;
  c.dp = 8;
  c.cp = 16;
  c.microBatches = 16;
  EXPECT_EQ(c.spmdOptions(), "mesh=\"pp:16,dp:8,cp:16,tp:8\" "
                             "micro-batches=16 schedule=1f1b");
  EXPECT_EQ(c.text(), "tp=8 pp=16 dp=8 cp=16 mbs=1 mb=16 schedule=1f1b "
                      "zero=0 recompute=none sp=0");
  EXPECT_EQ(c.devices(), 16384);
  EXPECT_EQ(c.dataParallel(), 128);
  EXPECT_EQ(c.expertDataParallel(), 128);
  c.ep = 2;
  c.pp = 1;
  c.microBatches = 1;
  EXPECT_EQ(c.spmdOptions(), "mesh=\"dp:8,cp:16,ep:2,tp:8\"");
  EXPECT_EQ(c.text(), "tp=8 pp=1 dp=8 cp=16 ep=2 mbs=1 mb=1 schedule=1f1b "
                      "zero=0 recompute=none sp=0");
  EXPECT_EQ(c.dataParallel(), 256);
  EXPECT_EQ(c.expertDataParallel(), 128);
  c.tp = 1;
  c.dp = 1;
  c.ep = 1;
  c.cp = 2;
  EXPECT_EQ(c.spmdOptions(), "mesh=\"cp:2\"");
  // Its gradients are reduced in buckets, as dp's.
  EXPECT_NE(afterSpmdPipeline(true, c.dataParallel(), 0)
                .find("part-grad-buckets{bytes="),
            std::string::npos);
}

// The gradients' reductions over dp in buckets (a pipeline's too); with
// dp-overlap=0 after backward; nothing without dp.
TEST(PlanConfig, PlacesGradientReductions) {
  std::string buckets = afterSpmdPipeline(true, 8, 0);
  EXPECT_NE(buckets.find("part-grad-buckets{bytes="), std::string::npos)
      << buckets;
  EXPECT_EQ(buckets.find("overlap"), std::string::npos) << buckets;
  std::string after = afterSpmdPipeline(true, 8, 0, "f32", false);
  EXPECT_NE(after.find(" overlap=false}"), std::string::npos) << after;
  EXPECT_EQ(afterSpmdPipeline(true, 1, 0, "f32", false), "");
  EXPECT_EQ(afterSpmdPipeline(false, 8, 0), "");
}

} // namespace
