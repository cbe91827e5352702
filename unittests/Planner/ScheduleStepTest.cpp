//===- ScheduleStepTest.cpp - the step costs schedules are simulated with -===//
//
// scheduleStepSeconds: a chunk's share of a stage's forward and backward,
// and zero-bubble's split of the backward into the weight gradients (W, as
// the probe finds them: the ops only weight gradients read) and the rest
// (Bi, what the previous stage waits for).
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

} // namespace
