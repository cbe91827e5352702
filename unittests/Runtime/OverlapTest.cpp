//===- OverlapTest.cpp - waits for collectives, overlap order, traces -----===//
//
// planCollectiveWaits and scheduleForOverlap on hand-made instruction lists
// (each hazard: a read of a collective's result, a write of its operand or
// result) and on random ones (properties: the order keeps every conflicting
// pair and the collectives in program order, and no compute instruction
// runs while a collective whose memory it touches is in flight). Then the
// Chrome trace writer.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Overlap.h"
#include "partition/runtime/Trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

using namespace partition::runtime;

namespace {

ByteRange bytes(uintptr_t begin, uintptr_t end) { return {begin, end}; }

InstructionAccess compute(std::vector<ByteRange> reads,
                          std::vector<ByteRange> writes) {
  return {false, std::move(reads), std::move(writes)};
}

InstructionAccess collective(std::vector<ByteRange> reads,
                             std::vector<ByteRange> writes) {
  return {true, std::move(reads), std::move(writes)};
}

TEST(ByteRange, Overlaps) {
  EXPECT_TRUE(bytes(0, 8).overlaps(bytes(7, 9)));
  EXPECT_FALSE(bytes(0, 8).overlaps(bytes(8, 9)));
  EXPECT_FALSE(bytes(4, 4).overlaps(bytes(0, 8))); // empty
  EXPECT_TRUE(bytes(2, 3).overlaps(bytes(0, 8)));
}

TEST(CollectiveWaits, ReadOfTheResultWaits) {
  // 0: x = f()  1: y = all_reduce(x)  2: z = g(w)  3: u = h(y)
  std::vector<InstructionAccess> program = {
      compute({}, {bytes(0, 16)}),
      collective({bytes(0, 16)}, {bytes(16, 32)}),
      compute({bytes(64, 80)}, {bytes(80, 96)}),
      compute({bytes(16, 32)}, {bytes(96, 112)}),
  };
  EXPECT_EQ(planCollectiveWaits(program), (std::vector<int>{-1, -1, -1, 1}));
}

TEST(CollectiveWaits, WriteOfTheOperandOrResultWaits) {
  // The arena reuses the operand's bytes (write after read) and the
  // result's (write after write) for later values.
  std::vector<InstructionAccess> operand = {
      collective({bytes(0, 16)}, {bytes(16, 32)}),
      compute({bytes(64, 80)}, {bytes(8, 12)}),
  };
  EXPECT_EQ(planCollectiveWaits(operand), (std::vector<int>{-1, 0}));
  std::vector<InstructionAccess> result = {
      collective({bytes(0, 16)}, {bytes(16, 32)}),
      compute({bytes(64, 80)}, {bytes(30, 40)}),
  };
  EXPECT_EQ(planCollectiveWaits(result), (std::vector<int>{-1, 0}));
  // Reading the operand while the collective reads it too is fine.
  std::vector<InstructionAccess> shared = {
      collective({bytes(0, 16)}, {bytes(16, 32)}),
      compute({bytes(0, 16)}, {bytes(64, 80)}),
  };
  EXPECT_EQ(planCollectiveWaits(shared), (std::vector<int>{-1, -1}));
}

TEST(CollectiveWaits, WaitingRetiresEveryEarlierCollective) {
  std::vector<InstructionAccess> program = {
      collective({bytes(0, 8)}, {bytes(0, 8)}),   // in place
      collective({bytes(8, 16)}, {bytes(8, 16)}), // in place
      compute({bytes(8, 16)}, {bytes(32, 40)}),   // needs 1: retires 0 too
      compute({bytes(0, 8)}, {bytes(40, 48)}),    // nothing left to wait for
      collective({bytes(32, 48)}, {bytes(48, 64)}),
      compute({bytes(0, 4)}, {bytes(64, 72)}), // unrelated to 4
  };
  EXPECT_EQ(planCollectiveWaits(program),
            (std::vector<int>{-1, -1, 1, -1, -1, -1}));
}

TEST(CollectiveWaits, CollectivesNeverWait) {
  // The lane orders a collective after the earlier ones itself.
  std::vector<InstructionAccess> program = {
      collective({bytes(0, 8)}, {bytes(8, 16)}),
      collective({bytes(8, 16)}, {bytes(0, 8)}),
  };
  EXPECT_EQ(planCollectiveWaits(program), (std::vector<int>{-1, -1}));
}

TEST(ScheduleForOverlap, DefersTheConsumerPastIndependentCompute) {
  // A bucket: concat, all_reduce, its slice (reads the result), then the
  // rest of backward, which touches other memory.
  std::vector<InstructionAccess> program = {
      compute({bytes(0, 8)}, {bytes(16, 32)}),      // 0: concat
      collective({bytes(16, 32)}, {bytes(32, 48)}), // 1: all_reduce
      compute({bytes(32, 40)}, {bytes(48, 56)}),    // 2: slice of the result
      compute({bytes(48, 56)}, {bytes(56, 64)}),    // 3: update, uses 2
      compute({bytes(64, 72)}, {bytes(72, 80)}),    // 4: backward matmul
      compute({bytes(72, 80)}, {bytes(80, 88)}),    // 5: backward
  };
  std::vector<int> order = scheduleForOverlap(program);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 4, 5, 2, 3}));
  std::vector<InstructionAccess> ordered;
  for (int i : order)
    ordered.push_back(program[i]);
  // The slice (now 5th) is where compute waits.
  EXPECT_EQ(planCollectiveWaits(ordered),
            (std::vector<int>{-1, -1, -1, -1, 1, -1}));
}

TEST(ScheduleForOverlap, ReusedMemoryStopsTheDeferral) {
  // Instruction 3 reuses the bytes the slice (2) reads: it must stay after
  // it, so compute waits at 2 and 3 follows.
  std::vector<InstructionAccess> program = {
      collective({bytes(0, 16)}, {bytes(16, 32)}), // 0
      compute({bytes(64, 72)}, {bytes(72, 80)}),   // 1: independent
      compute({bytes(16, 32)}, {bytes(32, 48)}),   // 2: reads the result
      compute({bytes(72, 80)}, {bytes(16, 24)}),   // 3: overwrites it
  };
  EXPECT_EQ(scheduleForOverlap(program), (std::vector<int>{0, 1, 2, 3}));
}

TEST(ScheduleForOverlap, KeepsCollectivesInProgramOrder) {
  // The second collective is independent of everything, yet issued after
  // the first, and the first's consumer is deferred behind it.
  std::vector<InstructionAccess> program = {
      collective({bytes(0, 8)}, {bytes(8, 16)}),    // 0
      compute({bytes(8, 16)}, {bytes(16, 24)}),     // 1: consumer of 0
      collective({bytes(32, 40)}, {bytes(40, 48)}), // 2
      compute({bytes(48, 56)}, {bytes(56, 64)}),    // 3
  };
  EXPECT_EQ(scheduleForOverlap(program), (std::vector<int>{0, 2, 3, 1}));
}

/// Random instruction lists over a small address space, so that conflicts
/// are frequent.
std::vector<InstructionAccess> randomProgram(std::mt19937 &rng, int n) {
  std::uniform_int_distribution<int> offset(0, 60), length(0, 6), count(0, 2);
  std::bernoulli_distribution async(0.25);
  std::vector<InstructionAccess> program(n);
  for (InstructionAccess &inst : program) {
    inst.async = async(rng);
    for (auto *ranges : {&inst.reads, &inst.writes}) {
      int k = count(rng) + (ranges == &inst.writes ? 1 : 0);
      for (int i = 0; i < k; ++i) {
        uintptr_t begin = offset(rng);
        ranges->push_back(bytes(begin, begin + length(rng)));
      }
    }
  }
  return program;
}

bool conflict(const InstructionAccess &a, const InstructionAccess &b) {
  auto any = [](const std::vector<ByteRange> &x,
                const std::vector<ByteRange> &y) {
    for (const ByteRange &r : x)
      for (const ByteRange &s : y)
        if (r.overlaps(s))
          return true;
    return false;
  };
  return any(a.writes, b.reads) || any(a.writes, b.writes) ||
         any(a.reads, b.writes);
}

TEST(ScheduleForOverlap, RandomProgramsKeepEveryConstraint) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<InstructionAccess> program = randomProgram(rng, 40);
    std::vector<int> order = scheduleForOverlap(program);
    ASSERT_EQ(order.size(), program.size());
    std::vector<int> position(program.size(), -1);
    for (size_t k = 0; k < order.size(); ++k) {
      ASSERT_GE(order[k], 0);
      ASSERT_EQ(position[order[k]], -1) << "instruction twice in the order";
      position[order[k]] = int(k);
    }
    for (size_t i = 0; i < program.size(); ++i)
      for (size_t j = i + 1; j < program.size(); ++j)
        if (conflict(program[i], program[j]) ||
            (program[i].async && program[j].async))
          ASSERT_LT(position[i], position[j])
              << "trial " << trial << ": " << i << " and " << j;

    // Run the order with the planned waits, every collective in flight
    // until a wait retires it: no compute instruction may touch the memory
    // of one still in flight.
    std::vector<InstructionAccess> ordered;
    for (int i : order)
      ordered.push_back(program[i]);
    std::vector<int> waits = planCollectiveWaits(ordered);
    std::vector<int> inFlight; // positions in `ordered`
    for (size_t k = 0; k < ordered.size(); ++k) {
      if (waits[k] >= 0) {
        ASSERT_TRUE(ordered[waits[k]].async);
        ASSERT_LT(waits[k], int(k));
        inFlight.erase(
            inFlight.begin(),
            std::upper_bound(inFlight.begin(), inFlight.end(), waits[k]));
      }
      if (ordered[k].async) {
        inFlight.push_back(int(k));
        continue;
      }
      for (int c : inFlight)
        ASSERT_FALSE(conflict(ordered[c], ordered[k]))
            << "trial " << trial << ": position " << k
            << " touches the memory of in-flight position " << c;
    }
  }
}

TEST(ChromeTrace, WritesProcessesTracksAndEscapedOrigins) {
  TraceEvent kernel;
  kernel.name = "Matmul";
  kernel.category = "kernel";
  kernel.startUs = 1000;
  kernel.durationUs = 5;
  kernel.instruction = 3;
  kernel.origin = "dir/\"model\".mlir:4:2";
  TraceEvent reduce;
  reduce.name = "AllReduce";
  reduce.category = "collective";
  reduce.track = TraceTrack::Communication;
  reduce.startUs = 1002;
  reduce.durationUs = 10;
  reduce.issuedUs = 999; // before the kernel
  reduce.instruction = 4;
  std::string path = ::testing::TempDir() + "/trace.json";
  ASSERT_TRUE(writeChromeTrace(path, {{kernel}, {reduce}}).isOk());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::string json = text.str();
  EXPECT_NE(json.find("\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1"),
            std::string::npos);
  EXPECT_NE(json.find("\"tid\":1,\"args\":{\"name\":\"communication\"}"),
            std::string::npos);
  // Times count from the earliest point, the collective's issue.
  EXPECT_NE(json.find("\"name\":\"Matmul\",\"cat\":\"kernel\",\"ph\":\"X\","
                      "\"ts\":1.000"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"origin\":\"dir/\\\"model\\\".mlir:4:2\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ts\":3.000,\"dur\":10.000,\"pid\":1,\"tid\":1"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"issued\":0.000,\"queued_us\":3.000"),
            std::string::npos)
      << json;
  EXPECT_FALSE(
      writeChromeTrace(::testing::TempDir() + "/no/such/dir/t.json", {})
          .isOk());
  std::remove(path.c_str());
}

} // namespace
