//===- PipelineScheduleTest.cpp - schedules, their simulation and figures -===//
//
// The published figures under unit costs (F = 1, B = 2; zero-bubble's Bi and
// W = 1 each): 1F1B's and GPipe's bubble (p - 1) / (m + p - 1), GPipe
// holding m micro-batches where 1F1B holds p - s on stage s, interleaved
// 1F1B's warm-up of 2 (p - s - 1) + (v - 1) p + 1 chunks in flight and a
// bubble v times smaller (in chunk steps); zero-bubble below 1F1B's bubble
// within 1F1B's peak; and the simulation's diagnostics.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"

#include "gtest/gtest.h"

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

} // namespace
