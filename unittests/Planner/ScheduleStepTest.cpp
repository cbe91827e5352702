//===- ScheduleStepTest.cpp - the step costs schedules are simulated with -===//
//
// scheduleStepSeconds: a chunk's share of a stage's forward and backward,
// and zero-bubble's split of the backward into the weight gradients (W, as
// the probe finds them: the ops only weight gradients read) and the rest
// (Bi, what the previous stage waits for); chunkStepSeconds: each chunk its
// share of its stage's work.
//
//===----------------------------------------------------------------------===//

#include "partition/Planner/Planner.h"

#include <gtest/gtest.h>

using namespace partition::planner;
using Action = partition::part::pipeline::Action;

namespace {

TEST(ScheduleStep, SplitsBackwardByItsWeightGradients) {
  // A stage of 2 chunks: forward 4, backward 8 of which 6 weight gradients.
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 6, 2, Action::Forward), 2);
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 6, 2, Action::Backward), 4);
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 6, 2, Action::BackwardWeight), 3);
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 6, 2, Action::BackwardInput), 1);
  // Bi and W add up to B.
  for (double w : {0.5, 2.0, 7.5})
    EXPECT_DOUBLE_EQ(scheduleStepSeconds(1, 8, w, 1, Action::BackwardInput) +
                         scheduleStepSeconds(1, 8, w, 1, Action::BackwardWeight),
                     8);
  // Not known (0): halves. More than the backward: all of it.
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 0, 1, Action::BackwardWeight), 4);
  EXPECT_DOUBLE_EQ(scheduleStepSeconds(4, 8, 9, 1, Action::BackwardInput), 0);
}

TEST(ScheduleStep, ChunksTakeTheirShare) {
  using partition::part::pipeline::Step;
  // A stage of 2 chunks, the second with 3/4 of the forward and all of the
  // backward (a chunk of the embedding alone and one of the layers).
  std::vector<double> forward = {0.25, 0.75}, backward = {0, 1};
  auto at = [&](int64_t stage, Action action, int64_t chunk) {
    return chunkStepSeconds(4, 8, 6, forward, backward, stage, 2,
                            Step{action, 0, chunk});
  };
  EXPECT_DOUBLE_EQ(at(1, Action::Forward, 0), 1);
  EXPECT_DOUBLE_EQ(at(1, Action::Forward, 1), 3);
  EXPECT_DOUBLE_EQ(at(1, Action::Backward, 1), 8);
  EXPECT_DOUBLE_EQ(at(1, Action::BackwardWeight, 1), 6);
  EXPECT_DOUBLE_EQ(at(1, Action::BackwardInput, 1), 2);
  // The first chunk of the first stage: its backward is all W.
  forward = backward = {0.5, 0.5};
  EXPECT_DOUBLE_EQ(at(0, Action::BackwardInput, 0), 0);
  EXPECT_DOUBLE_EQ(at(0, Action::BackwardWeight, 0), 4);
  EXPECT_DOUBLE_EQ(at(0, Action::BackwardInput, 1), 1);
  // No shares: an even split, as scheduleStepSeconds.
  forward.clear();
  backward.clear();
  EXPECT_DOUBLE_EQ(at(1, Action::Forward, 1), 2);
  EXPECT_DOUBLE_EQ(at(1, Action::BackwardWeight, 0), 3);
}

} // namespace
