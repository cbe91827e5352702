//===- ReshardTest.cpp - the collectives that take one layout to another --===//
//
// planReshard (Analysis/Reshard.h) on the reshards the partitioner meets: a
// pending sum completed by a reduce_scatter or an all_reduce, an axis moved
// between dimensions by one all_to_all, axes gathered and sliced, and a
// pending sum asked for that no collective makes.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Reshard.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class ReshardTest : public ::testing::Test {
protected:
  StringAttr axis(StringRef name) { return StringAttr::get(&ctx, name); }
  SmallVector<StringAttr> axes(ArrayRef<StringRef> names) {
    SmallVector<StringAttr> out;
    for (StringRef n : names)
      out.push_back(axis(n));
    return out;
  }
  /// Devices of the mesh ["dp"=2, "tp"=4] that `list` spans.
  int64_t group(ArrayRef<StringAttr> list) {
    int64_t n = 1;
    for (StringAttr a : list)
      n *= a.getValue() == "dp" ? 2 : 4;
    return n;
  }
  ReshardPlan plan(const Layout &from, const Layout &to,
                   ArrayRef<int64_t> shape) {
    FailureOr<ReshardPlan> p = planReshard(
        from, to, shape, [&](ArrayRef<StringAttr> a) { return group(a); });
    EXPECT_TRUE(succeeded(p));
    return succeeded(p) ? *p : ReshardPlan();
  }
  std::string kinds(const ReshardPlan &p) {
    std::string out;
    for (const ReshardStep &s : p.steps)
      out += (out.empty() ? "" : ",") + stringifyReshardKind(s.kind).str();
    return out;
  }

  MLIRContext ctx;
};

TEST_F(ReshardTest, APendingSumWantedSplitIsReduceScattered) {
  // A row-parallel matmul's [8, 16] partial sum over tp, wanted split by
  // rows over tp (sequence parallelism): each device gets its 2 rows of the
  // sum, no all_reduce.
  Layout from = Layout::replicated(2), to = Layout::replicated(2);
  from.unreduced = axes({"tp"});
  to.dims[0] = axes({"tp"});
  ReshardPlan p = plan(from, to, {8, 16});
  EXPECT_EQ(kinds(p), "reduce_scatter");
  EXPECT_EQ(p.steps[0].dim, 0);
  EXPECT_EQ(p.steps[0].resultShape, (SmallVector<int64_t>{2, 16}));
  EXPECT_EQ(p.reached, to);
  // Wanted whole: one all_reduce.
  p = plan(from, Layout::replicated(2), {8, 16});
  EXPECT_EQ(kinds(p), "all_reduce");
  EXPECT_EQ(p.steps[0].axes, axes({"tp"}));
}

TEST_F(ReshardTest, AnAxisMovesBetweenDimensionsWithOneAllToAll) {
  // Columns over tp to rows over tp, one device's [8, 4] block: an
  // all_to_all gives [2, 16], not a gather of [8, 16] and a slice.
  Layout from = Layout::replicated(2), to = Layout::replicated(2);
  from.dims[1] = axes({"tp"});
  to.dims[0] = axes({"tp"});
  ReshardPlan p = plan(from, to, {8, 4});
  EXPECT_EQ(kinds(p), "all_to_all");
  EXPECT_EQ(p.steps[0].dim, 0);
  EXPECT_EQ(p.steps[0].concatDim, 1);
  EXPECT_EQ(p.steps[0].resultShape, (SmallVector<int64_t>{2, 16}));
}

TEST_F(ReshardTest, GathersWhatTheTargetDropsAndSlicesWhatItAdds) {
  // [dp][tp] to [tp][]: tp cannot move to dimension 0 by all_to_all (dp is
  // there first and must go), so dp and tp are gathered, then tp sliced.
  Layout from = Layout::replicated(2), to = Layout::replicated(2);
  from.dims[0] = axes({"dp"});
  from.dims[1] = axes({"tp"});
  to.dims[0] = axes({"tp"});
  ReshardPlan p = plan(from, to, {4, 4});
  EXPECT_EQ(kinds(p), "all_gather,all_gather,all_slice");
  EXPECT_EQ(p.steps[0].resultShape, (SmallVector<int64_t>{8, 4}));
  EXPECT_EQ(p.steps[1].resultShape, (SmallVector<int64_t>{8, 16}));
  EXPECT_EQ(p.steps[2].resultShape, (SmallVector<int64_t>{2, 16}));
  EXPECT_EQ(p.reached, to);
  // Nothing to do: no step.
  EXPECT_EQ(kinds(plan(to, to, {2, 16})), "");
}

// A sum pending over dp and tp whose use keeps it pending over dp (a
// gradient the optimizer's data-parallel reduction completes) is completed
// over tp only.
TEST_F(ReshardTest, CompletesOnlyTheAxesTheTargetDoesNotKeepPending) {
  Layout from = Layout::replicated(1), to = Layout::replicated(1);
  from.unreduced = axes({"dp", "tp"});
  to.unreduced = axes({"dp"});
  ReshardPlan p = plan(from, to, {8});
  EXPECT_EQ(kinds(p), "all_reduce");
  EXPECT_EQ(p.steps[0].axes, axes({"tp"}));
  EXPECT_EQ(p.reached, to);
}

TEST_F(ReshardTest, NoCollectiveMakesAPendingSum) {
  Layout from = Layout::replicated(1), to = Layout::replicated(1);
  to.unreduced = axes({"tp"});
  std::string error;
  FailureOr<ReshardPlan> p = planReshard(
      from, to, {8}, [&](ArrayRef<StringAttr> a) { return group(a); },
      &error);
  EXPECT_TRUE(failed(p));
  EXPECT_EQ(error, "would need a pending sum it does not have");
}

} // namespace
