//===- ArenaPlannerTest.cpp - arena placement against a brute force ------===//
//
// Small cases by hand, then thousands of random instances (short and long
// lifetimes, equal sizes, empty values) where a brute-force checker proves
// that no two values live at the same instruction share a byte, that every
// offset is aligned and that the peak is the highest end; and that the
// placement is the one the plain scan over every placed value (greedy by
// size, first fit: what part-to-plan did before) makes.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ArenaPlanner.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

using namespace partition::part::arena;

namespace {

bool livesIntersect(const Buffer &a, const Buffer &b) {
  return a.def <= b.lastUse && b.def <= a.lastUse;
}

/// The first violation of `plan` for `buffers`, or "" if none.
std::string violation(const std::vector<Buffer> &buffers, const Plan &plan,
                      uint64_t alignment) {
  if (plan.offsets.size() != buffers.size())
    return "one offset per buffer expected";
  auto end = [&](size_t i) {
    return plan.offsets[i] + alignedSize(buffers[i].bytes, alignment);
  };
  uint64_t peak = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] % alignment)
      return "offset of buffer " + std::to_string(i) + " is not aligned";
    peak = std::max(peak, end(i));
  }
  if (peak != plan.peak)
    return "peak " + std::to_string(plan.peak) + " is not the highest end " +
           std::to_string(peak);
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!livesIntersect(buffers[i], buffers[j]))
        continue;
      if (plan.offsets[i] < end(j) && plan.offsets[j] < end(i))
        return "buffers " + std::to_string(i) + " and " + std::to_string(j) +
               " are live together and overlap";
    }
  return "";
}

/// Greedy by size, first fit, by scanning every placed buffer.
Plan scanPlan(const std::vector<Buffer> &buffers, uint64_t alignment) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t id : order) {
    uint64_t size = alignedSize(buffers[id].bytes, alignment);
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t other : placed)
      if (livesIntersect(buffers[id], buffers[other]))
        busy.push_back({plan.offsets[other],
                        plan.offsets[other] +
                            alignedSize(buffers[other].bytes, alignment)});
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, end);
    }
    plan.offsets[id] = offset;
    plan.peak = std::max(plan.peak, offset + size);
    placed.push_back(id);
  }
  return plan;
}

TEST(ArenaPlannerTest, DisjointLifetimesShareBytes) {
  Plan plan = planArena({{0, 1, 100}, {2, 3, 100}, {4, 4, 50}}, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(plan.peak, 128u);
}

TEST(ArenaPlannerTest, LifetimesMeetingAtOneInstructionIntersect) {
  // The second is written by the instruction that last reads the first.
  Plan plan = planArena({{0, 2, 64}, {2, 3, 64}}, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 64}));
  EXPECT_EQ(plan.peak, 128u);
}

TEST(ArenaPlannerTest, LargestFirstThenLowestGapThatFits) {
  // Placed in order 0 (256 B), 1 (128 B, a tie placed in input order),
  // 3 (128 B), 2 (64 B). 3 is live with 0 and 1 and goes above both; 2 is
  // live with 1 and 3 but not 0, so it takes the bytes 0 freed.
  std::vector<Buffer> buffers = {
      {0, 1, 256}, {0, 5, 128}, {2, 5, 64}, {1, 5, 128}};
  Plan plan = planArena(buffers, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 256, 0, 384}));
  EXPECT_EQ(plan.peak, 512u);
  EXPECT_EQ(violation(buffers, plan, 64), "");
}

TEST(ArenaPlannerTest, GapTooSmallIsSkippedAndASmallerValueFillsIt) {
  // Placed in order 0, 2, 1, 3, 4. At instruction 1, 2 takes [0, 448) and
  // 1 takes [512, 768): 3 (128 B) does not fit in the 64 bytes between
  // them and goes above 1; 4 (64 B) fills them.
  std::vector<Buffer> buffers = {
      {0, 0, 512}, {0, 1, 256}, {1, 1, 448}, {1, 1, 128}, {1, 1, 64}};
  Plan plan = planArena(buffers, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 512, 0, 768, 448}));
  EXPECT_EQ(plan.peak, 896u);
  EXPECT_EQ(violation(buffers, plan, 64), "");
}

TEST(ArenaPlannerTest, EmptyValuesTakeOneAlignment) {
  Plan plan = planArena({{0, 0, 0}, {0, 0, 0}}, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 64}));
  EXPECT_EQ(plan.peak, 128u);
  EXPECT_EQ(planArena({}, 64).peak, 0u);
}

/// `count` buffers over `steps` instructions: most live a few instructions,
/// some for most of the program; sizes from a few distinct values (ties) or
/// spread out, some empty.
std::vector<Buffer> randomBuffers(std::mt19937_64 &rng, size_t count,
                                  int64_t steps) {
  std::uniform_int_distribution<int64_t> at(-1, steps - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_int_distribution<uint64_t> small(0, 4), spread(0, 5000);
  std::uniform_int_distribution<int64_t> shortLife(0, 3);
  std::vector<Buffer> buffers;
  bool ties = kind(rng) < 5;
  for (size_t i = 0; i < count; ++i) {
    int64_t def = at(rng);
    int64_t life = kind(rng) == 0 ? std::uniform_int_distribution<int64_t>(
                                        0, steps)(rng)
                                  : shortLife(rng);
    uint64_t bytes = ties ? small(rng) * 100 : spread(rng);
    buffers.push_back({def, std::min(def + life, steps), bytes});
  }
  return buffers;
}

TEST(ArenaPlannerTest, RandomInstancesMatchTheScanAndNeverOverlap) {
  std::mt19937_64 rng(28);
  for (int instance = 0; instance < 4000; ++instance) {
    size_t count = std::uniform_int_distribution<size_t>(1, 120)(rng);
    int64_t steps = std::uniform_int_distribution<int64_t>(1, 80)(rng);
    uint64_t alignment = instance % 2 ? 64 : 1;
    std::vector<Buffer> buffers = randomBuffers(rng, count, steps);
    Plan plan = planArena(buffers, alignment);
    ASSERT_EQ(violation(buffers, plan, alignment), "")
        << "instance " << instance;
    Plan scan = scanPlan(buffers, alignment);
    ASSERT_EQ(plan.offsets, scan.offsets) << "instance " << instance;
    ASSERT_EQ(plan.peak, scan.peak) << "instance " << instance;
  }
}

TEST(ArenaPlannerTest, WorkPerValueGrowsAsLogNWhenFewValuesLiveAtOnce) {
  // Values read within two instructions, and 8 live for the whole program:
  // looking at every placed value would make the work per value grow as n;
  // the tree's grows as log n (log2(n) + 6 here, not a measured time).
  for (int64_t n : {1024, 8192, 65536}) {
    std::vector<Buffer> buffers;
    for (int64_t i = 0; i < n; ++i)
      buffers.push_back({i, i % (n / 8) == 0 ? n - 1 : i + i % 3,
                         uint64_t(i * 7919 % 13 + 1) * 64});
    Plan plan = planArena(buffers, 64);
    double perValue = double(plan.operations) / n;
    EXPECT_LE(perValue, std::log2(double(n)) + 16) << "n = " << n;
  }
}

TEST(ArenaPlannerTest, CheckerCatchesOverlapAndMisalignment) {
  std::vector<Buffer> buffers = {{0, 2, 64}, {1, 3, 64}};
  EXPECT_NE(violation(buffers, Plan{{0, 32}, 128}, 64), "");
  EXPECT_NE(violation(buffers, Plan{{0, 64}, 192}, 64), "");
  EXPECT_EQ(violation(buffers, Plan{{0, 64}, 128}, 64), "");
}

} // namespace
