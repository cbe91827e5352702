//===- PipelineScheduleTest.cpp - schedules, their simulation and figures -===//
//
// The published figures under unit costs (F = 1, B = 2; zero-bubble's Bi and
// W = 1 each): 1F1B's and GPipe's bubble (p - 1) / (m + p - 1), GPipe
// holding m micro-batches where 1F1B holds p - s on stage s, interleaved
// 1F1B's warm-up of 2 (p - s - 1) + (v - 1) p + 1 chunks in flight and a
// bubble v times smaller (in chunk steps); zero-bubble below 1F1B's bubble
// within 1F1B's peak; the V schedules' (two chunks per stage in a V) under
// the zero-bubble papers' equal costs (F = B = W = 1, a whole backward
// B + W = 2): ZB-V without a bubble in 1F1B's activation memory, V-Half and
// V-Min in a half and a third of it; and the simulation's diagnostics.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <iterator>

using namespace partition::part::pipeline;

namespace {

Schedule make(ScheduleKind kind, int64_t p, int64_t m, int64_t v = 1) {
  std::string error;
  std::optional<Schedule> s = makeSchedule(kind, p, m, v, &error);
  EXPECT_TRUE(s.has_value()) << error;
  return s ? *s : Schedule();
}

Timeline run(const Schedule &schedule) {
  std::string error;
  std::optional<Timeline> t = simulate(schedule, &error);
  EXPECT_TRUE(t.has_value()) << error;
  return t ? *t : Timeline();
}

/// The papers' equal costs: F = B = W = 1, where B is the input's gradient
/// (Bi here); a whole backward is B + W = 2.
double equalCost(int64_t, const Step &step) {
  return step.action == Action::Backward ? 2.0 : 1.0;
}

Timeline runEqual(const Schedule &schedule) {
  std::string error;
  std::optional<Timeline> t = simulate(schedule, &error, equalCost);
  EXPECT_TRUE(t.has_value()) << error;
  return t ? *t : Timeline();
}

int64_t chunksOf(ScheduleKind kind) {
  if (kind == ScheduleKind::Interleaved1F1B)
    return 2;
  return placementOf(kind) == Placement::V ? 2 : 1;
}

const ScheduleKind allKinds[] = {ScheduleKind::GPipe,
                                 ScheduleKind::OneFOneB,
                                 ScheduleKind::Interleaved1F1B,
                                 ScheduleKind::ZeroBubbleH1,
                                 ScheduleKind::ZeroBubbleV,
                                 ScheduleKind::VHalf,
                                 ScheduleKind::VMin};

/// The most chunks' activations any stage holds.
int64_t peak(const Timeline &t) {
  return *std::max_element(t.peakInFlight.begin(), t.peakInFlight.end());
}

TEST(PipelineScheduleTest, OneFOneBAndGPipeBubbleIsPMinusOneOverMPlusPMinusOne) {
  for (auto kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (auto [p, m] : {std::pair<int64_t, int64_t>{2, 2}, {2, 8}, {4, 8},
                        {4, 16}, {8, 8}}) {
      SCOPED_TRACE(std::string(scheduleName(kind)) + " p=" +
                   std::to_string(p) + " m=" + std::to_string(m));
      Timeline t = run(make(kind, p, m));
      EXPECT_DOUBLE_EQ(t.makespan, 3.0 * (m + p - 1));
      for (int64_t s = 0; s < p; ++s)
        EXPECT_NEAR(t.bubble[s], double(p - 1) / double(m + p - 1), 1e-12);
    }
}

TEST(PipelineScheduleTest, OneFOneBHoldsPMinusSWhereGPipeHoldsM) {
  int64_t p = 4, m = 8;
  Timeline gpipe = run(make(ScheduleKind::GPipe, p, m));
  Timeline ofob = run(make(ScheduleKind::OneFOneB, p, m));
  for (int64_t s = 0; s < p; ++s) {
    EXPECT_EQ(gpipe.peakInFlight[s], m);
    EXPECT_EQ(ofob.peakInFlight[s], p - s);
  }
  // Fewer micro-batches than stages still runs (the warm-up is cut short).
  Timeline few = run(make(ScheduleKind::OneFOneB, 4, 2));
  EXPECT_EQ(few.peakInFlight[0], 2);
}

TEST(PipelineScheduleTest, InterleavedWarmsUpMegatronsCountAndShrinksTheBubble) {
  int64_t p = 4, m = 8, v = 2;
  Schedule schedule = make(ScheduleKind::Interleaved1F1B, p, m, v);
  Timeline t = run(schedule);
  for (int64_t s = 0; s < p; ++s) {
    // Chunks in flight: the warm-up forwards and the steady state's one.
    EXPECT_EQ(t.peakInFlight[s], 2 * (p - s - 1) + (v - 1) * p + 1);
    // Each chunk step is a unit here, so the bubble is (p - 1) chunk steps
    // of F + B over m v of them.
    EXPECT_NEAR(t.bubble[s], double(p - 1) / double(m * v + p - 1), 1e-12);
  }
  // Stage 0 starts with chunk 0 of micro-batches 0..3, then chunk 1.
  EXPECT_EQ(schedule.steps[0][4], (Step{Action::Forward, 0, 1}));
}

TEST(PipelineScheduleTest, ZeroBubbleFillsTheCoolDownWithWeightGradients) {
  int64_t p = 4, m = 8;
  Timeline zb = run(make(ScheduleKind::ZeroBubbleH1, p, m));
  Timeline ofob = run(make(ScheduleKind::OneFOneB, p, m));
  // 29 time units against 1F1B's 33: the idle time falls from 9 to 5 units
  // per stage, with no stage holding more micro-batches (from F to W) than
  // 1F1B's first stage does (p).
  EXPECT_DOUBLE_EQ(zb.makespan, 29);
  EXPECT_DOUBLE_EQ(ofob.makespan, 33);
  for (int64_t s = 0; s < p; ++s) {
    EXPECT_LT(zb.bubble[s], ofob.bubble[s]);
    EXPECT_LE(zb.peakInFlight[s], p);
  }
}

TEST(PipelineScheduleTest, ADeadlockNamesTheStagesAndWhatTheyWaitFor) {
  // Stage 1 runs micro-batch 1 first, stage 0 micro-batch 0 through its
  // backward: each waits for the other.
  Schedule s;
  s.stages = 2;
  s.microBatches = 2;
  s.steps = {{{Action::Forward, 0}, {Action::Backward, 0},
              {Action::Forward, 1}, {Action::Backward, 1}},
             {{Action::Forward, 1}, {Action::Backward, 1},
              {Action::Forward, 0}, {Action::Backward, 0}}};
  std::string error;
  EXPECT_FALSE(simulate(s, &error));
  EXPECT_EQ(error, "the schedule deadlocks: stage 0 waits at B0 (step 1) for "
                   "B0 on stage 1; stage 1 waits at F1 (step 0) for F1 on "
                   "stage 0");
}

TEST(PipelineScheduleTest, TransfersBeyondTheScheduleAreWaitedFor) {
  // GPipe on 2 stages runs; a value stage 1 makes in its backward and stage
  // 0 reads in its forward (no program does that) cannot arrive: stage 0's
  // forwards come first.
  Schedule s = make(ScheduleKind::GPipe, 2, 2);
  run(s);
  s.transfers.push_back({1, Action::Backward, 0, Action::Forward});
  std::string error;
  EXPECT_FALSE(simulate(s, &error));
  EXPECT_EQ(error, "the schedule deadlocks: stage 0 waits at F0 (step 0) for "
                   "B0 on stage 1; stage 1 waits at F0 (step 0) for F0 on "
                   "stage 0");
  // A value stage 1 makes in its forward and stage 0 reads in its backward
  // is there in time, and may delay stage 0 but not block it.
  s.transfers = {{1, Action::Forward, 0, Action::Backward}};
  run(s);
}

TEST(PipelineScheduleTest, StepNamesReadBack) {
  for (Step step : {Step{Action::Forward, 3}, Step{Action::Backward, 0},
                    Step{Action::BackwardInput, 12},
                    Step{Action::BackwardWeight, 7}, Step{Action::Forward, 2, 1}})
    for (int64_t chunks : {int64_t(1), int64_t(2)}) {
      if (step.chunk >= chunks)
        continue;
      std::optional<Step> back = parseStepText(stepText(step, chunks));
      ASSERT_TRUE(back) << stepText(step, chunks);
      EXPECT_EQ(*back, step) << stepText(step, chunks);
    }
  EXPECT_EQ(stepText({Action::BackwardInput, 3, 1}, 2), "Bi3.1");
  for (const char *bad : {"", "U", "F", "Fx", "B3.", "W3.1.2", "F-1", "X3"})
    EXPECT_FALSE(parseStepText(bad)) << bad;
}

TEST(PipelineScheduleTest, MissingOrRepeatedStepsAreNamed) {
  Schedule s = make(ScheduleKind::OneFOneB, 2, 2);
  s.steps[1].pop_back();
  std::string error;
  EXPECT_FALSE(simulate(s, &error));
  EXPECT_EQ(error, "stage 1 lacks B1");
  s = make(ScheduleKind::OneFOneB, 2, 2);
  s.steps[0].push_back(s.steps[0].front());
  EXPECT_FALSE(simulate(s, &error));
  EXPECT_EQ(error, "stage 0 repeats F0");
}

TEST(PipelineScheduleTest, ImpossibleShapesAreDiagnosed) {
  std::string error;
  EXPECT_FALSE(makeSchedule(ScheduleKind::Interleaved1F1B, 4, 6, 2, &error));
  EXPECT_EQ(error, "the interleaved schedule needs a number of micro-batches "
                   "that is a multiple of the 4 stages, got 6");
  EXPECT_FALSE(makeSchedule(ScheduleKind::Interleaved1F1B, 4, 8, 1, &error));
  EXPECT_FALSE(makeSchedule(ScheduleKind::OneFOneB, 0, 8, 1, &error));
  EXPECT_EQ(error, "a pipeline needs at least one stage, got 0");
  EXPECT_EQ(parseScheduleKind("zero-bubble"), ScheduleKind::ZeroBubbleH1);
  EXPECT_FALSE(parseScheduleKind("2f2b"));
}

TEST(PipelineScheduleTest, ScheduleNamesReadBack) {
  for (ScheduleKind kind : allKinds)
    EXPECT_EQ(parseScheduleKind(scheduleName(kind)), kind)
        << scheduleName(kind);
  EXPECT_STREQ(scheduleName(ScheduleKind::ZeroBubbleV), "zb-v");
  EXPECT_STREQ(scheduleName(ScheduleKind::VHalf), "v-half");
  EXPECT_STREQ(scheduleName(ScheduleKind::VMin), "v-min");
}

TEST(PipelineScheduleTest, VirtualStagesArePlacedInterleavedOrInAV) {
  // Interleaved: chunk c of stage s is c p + s. V: chunk 0 of stage s is
  // s, chunk 1 is 2p - 1 - s; stage 0 holds the first and the last.
  EXPECT_EQ(virtualStage(Placement::Interleaved, 4, 1, 1), 5);
  EXPECT_EQ(virtualStage(Placement::Interleaved, 4, 3, 0), 3);
  EXPECT_EQ(virtualStage(Placement::V, 4, 1, 0), 1);
  EXPECT_EQ(virtualStage(Placement::V, 4, 1, 1), 6);
  EXPECT_EQ(virtualStage(Placement::V, 4, 0, 1), 7);
  EXPECT_EQ(virtualStage(Placement::V, 4, 3, 1), 4);
  for (Placement placement : {Placement::Interleaved, Placement::V})
    for (int64_t p : {1, 2, 3, 4, 8})
      for (int64_t vs = 0; vs < 2 * p; ++vs) {
        StageChunk at = stageChunkOf(placement, p, vs);
        EXPECT_GE(at.stage, 0);
        EXPECT_LT(at.stage, p);
        EXPECT_EQ(virtualStage(placement, p, at.stage, at.chunk), vs)
            << "p=" << p << " vs=" << vs;
      }
  Schedule v = make(ScheduleKind::VMin, 4, 8, 2);
  EXPECT_EQ(v.placement, Placement::V);
  EXPECT_EQ(v.virtualStage(2, 1), 5);
  EXPECT_EQ(v.stageChunkOf(5).stage, 2);
  EXPECT_EQ(make(ScheduleKind::Interleaved1F1B, 4, 8, 2).virtualStage(2, 1),
            6);
}

TEST(PipelineScheduleTest, TheSimulationFollowsTheVPlacement) {
  // Two stages, one micro-batch: down the V (stage 0, 1, then 1 and 0 again
  // for chunk 1) and back up, each step after the one before it on the V,
  // each W right after its Bi.
  Schedule s;
  s.placement = Placement::V;
  s.stages = 2;
  s.chunks = 2;
  auto steps = [](std::initializer_list<const char *> names) {
    std::vector<Step> out;
    for (const char *n : names)
      out.push_back(*parseStepText(n));
    return out;
  };
  s.steps = {steps({"F0.0", "F0.1", "Bi0.1", "W0.1", "Bi0.0", "W0.0"}),
             steps({"F0.0", "F0.1", "Bi0.1", "W0.1", "Bi0.0", "W0.0"})};
  Timeline t = run(s);
  EXPECT_DOUBLE_EQ(t.makespan, 10);
  // Stage 0's F0.1 (virtual stage 3) after stage 1's (virtual stage 2) at
  // 2; stage 1's Bi0.1 after stage 0's at 4; stage 0's Bi0.0 (virtual stage
  // 0) after stage 1's at 7.
  EXPECT_EQ(t.start[0], (std::vector<double>{0, 3, 4, 5, 8, 9}));
  EXPECT_EQ(t.start[1], (std::vector<double>{1, 2, 5, 6, 7, 8}));
  // Stage 0 taking its chunk 0's backward first waits for stage 1's chunk
  // 0 (virtual stage 1), which waits for stage 0's chunk 1 (virtual stage
  // 3).
  s.steps[0] = steps({"F0.0", "Bi0.0", "F0.1", "Bi0.1", "W0.1", "W0.0"});
  std::string error;
  EXPECT_FALSE(simulate(s, &error));
  EXPECT_EQ(error, "the schedule deadlocks: stage 0 waits at Bi0.0 (step 1) "
                   "for B0.0 on stage 1; stage 1 waits at Bi0.1 (step 2) for "
                   "B0.1 on stage 0");
}

TEST(PipelineScheduleTest, EveryScheduleRunsUnderEqualCosts) {
  for (ScheduleKind kind : allKinds)
    for (int64_t p : {1, 2, 3, 4, 8})
      for (int64_t m : {2 * p, 4 * p}) {
        SCOPED_TRACE(std::string(scheduleName(kind)) + " p=" +
                     std::to_string(p) + " m=" + std::to_string(m));
        Schedule schedule = make(kind, p, m, chunksOf(kind));
        // Split backwards exactly where the kind says so.
        for (const auto &steps : schedule.steps)
          for (const Step &step : steps) {
            if (step.action == Action::Forward)
              continue;
            EXPECT_EQ(step.action != Action::Backward, splitsBackward(kind))
                << stepText(step, schedule.chunks);
          }
        Timeline equal = runEqual(schedule);
        // Every stage does m (F + B + W) of every chunk: 3 m per chunk.
        for (int64_t s = 0; s < p; ++s)
          EXPECT_DOUBLE_EQ(equal.makespan * (1 - equal.bubble[s]),
                           3.0 * m * chunksOf(kind));
        EXPECT_DOUBLE_EQ(equal.makespan, run(schedule).makespan);
      }
}

TEST(PipelineScheduleTest, ZeroBubbleVHasNoBubbleInOneFOneBsMemory) {
  // Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024), §6: "Under
  // the condition T_F = T_B = T_W, ZB-V achieves zero bubble with a peak
  // activations memory of p M_B", 1F1B's. The bubble rate is theirs (§5.3):
  // no stage idles between its first step and its last. A chunk is half a
  // stage's layers, so p micro-batches are 2p chunks in flight.
  for (int64_t p : {2, 3, 4, 8})
    for (int64_t m : {2 * p - 1, 2 * p, 3 * p, 4 * p, 8 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      Timeline zbv = runEqual(make(ScheduleKind::ZeroBubbleV, p, m, 2));
      Timeline ofob = runEqual(make(ScheduleKind::OneFOneB, p, m));
      EXPECT_DOUBLE_EQ(zbv.bubbleRate, 0);
      for (int64_t s = 0; s < p; ++s) {
        EXPECT_DOUBLE_EQ(zbv.end[s] - zbv.begin[s], 6.0 * m);
        EXPECT_EQ(zbv.peakInFlight[s], 2 * ofob.peakInFlight[0]);
      }
      // Against the whole run, only the first micro-batch's way down to
      // each stage: the makespan is 6 m + p - 1.
      EXPECT_DOUBLE_EQ(zbv.makespan, 6.0 * m + p - 1);
    }
}

TEST(PipelineScheduleTest, VHalfAndVMinHoldAHalfAndAThirdOfOneFOneBs) {
  // Qi et al., "Pipeline Parallelism with Controllable Memory" (NeurIPS
  // 2024): activation memory, in micro-batches, 1F1B p, V-Half
  // floor((p + 2) / 2), V-Min floor((p + 4) / 3) (the authors' summary
  // table on the paper's demo page, for T_F = T_B = T_W); in chunks (half a
  // stage's layers) twice that.
  for (int64_t p : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16})
    for (int64_t m : {2 * p, 4 * p, 8 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      EXPECT_EQ(peak(runEqual(make(ScheduleKind::VHalf, p, m, 2))),
                2 * ((p + 2) / 2));
      EXPECT_EQ(peak(runEqual(make(ScheduleKind::VMin, p, m, 2))),
                2 * ((p + 4) / 3));
    }
}

TEST(PipelineScheduleTest, VHalfAndVMinBubblesAreWithinThePublishedOnes) {
  // The authors' figures (the same table) under T_F = T_B = T_W: bubble
  // rate ~ p / 2m for V-Half, ~ 2p / 3m for V-Min, ~ p / m for 1F1B, i.e.
  // an idle time of about 3p, 4p and 6p units of a chunk's F whatever m,
  // the building block repeating without a bubble. The construction (building block,
  // squeezing, reordering of the warm-up and cool-down) idles exactly as
  // long as an independent transcription of it (a Python model of the
  // reference implementation's V-Half and V-Min generators, run for m = 2p
  // and 4p), and within the published figures.
  const int64_t ps[] = {2, 3, 4, 5, 6, 7, 8, 9, 12};
  const int64_t vHalfIdle[] = {1, 5, 5, 11, 11, 17, 17, 24, 29};
  const int64_t vMinIdle[] = {3, 6, 11, 15, 18, 23, 27, 30, 42};
  for (size_t i = 0; i < std::size(ps); ++i)
    for (int64_t m : {2 * ps[i], 4 * ps[i], 8 * ps[i]}) {
      int64_t p = ps[i];
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      Timeline half = runEqual(make(ScheduleKind::VHalf, p, m, 2));
      Timeline min = runEqual(make(ScheduleKind::VMin, p, m, 2));
      // bubbleRate = idle / (6m + idle).
      auto idle = [&](const Timeline &t) {
        return 6.0 * m * t.bubbleRate / (1 - t.bubbleRate);
      };
      EXPECT_NEAR(idle(half), vHalfIdle[i], 1e-9);
      EXPECT_NEAR(idle(min), vMinIdle[i], 1e-9);
      EXPECT_LE(half.bubbleRate, double(p) / (2 * m));
      EXPECT_LE(min.bubbleRate, 2.0 * p / (3 * m));
      EXPECT_LT(half.bubbleRate, min.bubbleRate);
    }
}

TEST(PipelineScheduleTest, VShapesNeedTwoChunksAndZeroBubbleVAWarmUp) {
  std::string error;
  EXPECT_FALSE(makeSchedule(ScheduleKind::ZeroBubbleV, 4, 6, 2, &error));
  EXPECT_EQ(error, "the zb-v schedule needs at least 2 * stages - 1 = 7 "
                   "micro-batches for 4 stages (its first stage's warm-up "
                   "runs that many forwards), got 6");
  EXPECT_TRUE(makeSchedule(ScheduleKind::ZeroBubbleV, 4, 7, 2, &error));
  EXPECT_FALSE(makeSchedule(ScheduleKind::VHalf, 4, 8, 1, &error));
  EXPECT_EQ(error, "the v-half schedule runs 2 chunks per stage (virtual "
                   "stages, in a V), got 1");
  EXPECT_FALSE(makeSchedule(ScheduleKind::VMin, 4, 8, 3, &error));
  EXPECT_EQ(error, "the v-min schedule runs 2 chunks per stage (virtual "
                   "stages, in a V), got 3");
  EXPECT_FALSE(makeSchedule(ScheduleKind::OneFOneB, 4, 8, 2, &error));
  EXPECT_EQ(error, "virtual stages are for the interleaved and V schedules, "
                   "not 1f1b");
  // V-Half and V-Min repeat their block for any number of micro-batches.
  for (int64_t m : {1, 2, 3})
    for (ScheduleKind kind : {ScheduleKind::VHalf, ScheduleKind::VMin})
      runEqual(make(kind, 4, m, 2));
}

} // namespace
