//===- ScheduleTest.cpp - the pipeline schedule as data (format 11) -------===//
//
// Plans whose programs are cut into fragments that a schedule table runs
// once per micro-batch: stash slots, micro-batched inputs, transfers
// identified by (channel, micro-batch), and the loader's checks of each
// new field. The plans are built by hand; ranks are threads on the CPU
// backend with Gloo.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Executor.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/cpu/CpuDevice.h"
#include "partition/runtime/cpu/GlooCommunicator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <thread>

using namespace partition::runtime;
namespace plan = partition::plan;
namespace fb = flatbuffers;

namespace {

TEST(FragmentStepName, InsertsTheMicroBatchBeforeTheChunk) {
  EXPECT_EQ(fragmentStepName("F", 3), "F3");
  EXPECT_EQ(fragmentStepName("B.1", 2), "B2.1");
  EXPECT_EQ(fragmentStepName("Bi", 3), "Bi3");
  EXPECT_EQ(fragmentStepName("W.12", 0), "W0.12");
  // A final fragment (its kind's last step, completing the sums).
  EXPECT_EQ(fragmentStepName("B+reduce", 7), "B7+reduce");
  EXPECT_EQ(fragmentStepName("W.1+reduce", 2), "W2.1+reduce");
  EXPECT_EQ(fragmentStepName("P", 5), "P");
  EXPECT_EQ(fragmentStepName("U", 5), "U");
}

TEST(TransferTag, IsUniquePerChannelAndMicroBatch) {
  // 4 micro-batches: channel c, micro-batch m -> 4c + m.
  EXPECT_EQ(transferTag(0, 3, 4), 3);
  EXPECT_EQ(transferTag(1, 0, 4), 4);
  EXPECT_EQ(transferTag(2, 1, 4), 9);
  // Without fragment steps: the channel alone, as before format 11.
  EXPECT_EQ(transferTag(7, 0, 1), 7);
}

//===----------------------------------------------------------------------===//
// Building plans
//===----------------------------------------------------------------------===//

/// Helpers over one FlatBufferBuilder.
struct Builder {
  fb::FlatBufferBuilder b;

  fb::Offset<plan::Mesh> mesh(const char *name, int32_t rank) {
    std::vector<fb::Offset<fb::String>> axes = {b.CreateString("dp")};
    std::vector<int64_t> sizes = {1};
    std::vector<int32_t> ranks = {rank};
    return plan::CreateMeshDirect(b, name, &axes, &sizes, &ranks);
  }
  fb::Offset<plan::Value> value(std::vector<int64_t> shape,
                                plan::Storage storage, uint64_t offset,
                                uint32_t index = 0, uint32_t slots = 0) {
    return plan::CreateValueDirect(b, plan::DType::F32, &shape, storage, offset,
                                   index, slots);
  }
  /// A replicated binding of `v` with `microBatches`.
  fb::Offset<plan::Binding> binding(const char *name, plan::Role role,
                                    uint32_t v, std::vector<int64_t> global,
                                    uint32_t microBatches = 0) {
    std::vector<fb::Offset<plan::DimSharding>> dims;
    for (size_t d = 0; d < global.size(); ++d) {
      std::vector<uint32_t> none;
      dims.push_back(plan::CreateDimShardingDirect(b, &none));
    }
    auto sharding = plan::CreateShardingDirect(b, &dims);
    return plan::CreateBindingDirect(b, name, role, v, &global, sharding,
                                     nullptr, -1, nullptr, 0, nullptr, nullptr,
                                     microBatches);
  }
  fb::Offset<plan::Instruction> kernel(plan::OpKind op,
                                       const KernelAttrs &attrs,
                                       std::vector<uint32_t> operands,
                                       std::vector<uint32_t> results,
                                       const std::string &loc) {
    auto table = attrs.Pack(b);
    auto k = plan::CreateKernelInst(b, op, attrs.type, table);
    return plan::CreateInstructionDirect(b, plan::Inst::KernelInst, k.Union(),
                                         &operands, &results, loc.c_str());
  }
  fb::Offset<plan::Instruction> send(uint32_t v, uint32_t peer, int64_t channel,
                                     const std::string &loc) {
    std::vector<uint32_t> operands = {v};
    auto s = plan::CreateSendInst(b, peer, channel);
    return plan::CreateInstructionDirect(b, plan::Inst::SendInst, s.Union(),
                                         &operands, nullptr, loc.c_str());
  }
  fb::Offset<plan::Instruction> recv(uint32_t v, uint32_t peer, int64_t channel,
                                     const std::string &loc) {
    std::vector<uint32_t> results = {v};
    auto r = plan::CreateRecvInst(b, peer, channel);
    return plan::CreateInstructionDirect(b, plan::Inst::RecvInst, r.Union(),
                                         nullptr, &results, loc.c_str());
  }
  /// Fragments named `names`, of `counts` instructions each, in order.
  std::vector<fb::Offset<plan::Fragment>>
  fragments(const std::vector<std::string> &names,
            const std::vector<uint32_t> &counts) {
    std::vector<fb::Offset<plan::Fragment>> result;
    uint32_t first = 0;
    for (size_t k = 0; k < names.size(); ++k) {
      result.push_back(
          plan::CreateFragmentDirect(b, names[k].c_str(), first, counts[k]));
      first += counts[k];
    }
    return result;
  }
  std::vector<uint8_t>
  finish(std::vector<fb::Offset<plan::Mesh>> meshes,
         std::vector<fb::Offset<plan::Program>> programs,
         const std::vector<std::tuple<uint32_t, int32_t, uint32_t>> &steps) {
    std::vector<fb::Offset<plan::ScheduleStep>> schedule;
    for (auto [program, fragment, microBatch] : steps)
      schedule.push_back(
          plan::CreateScheduleStep(b, program, microBatch, fragment));
    auto root = plan::CreatePlanDirect(b, kFormatVersion, "test", &meshes,
                                       &programs, &schedule);
    b.FinishSizePrefixed(root, plan::PlanIdentifier());
    std::vector<uint8_t> bytes(b.GetBufferPointer(),
                               b.GetBufferPointer() + b.GetSize());
    appendPlanChecksum(bytes);
    return bytes;
  }
};

plan::FusedStep fusedStep(plan::OpKind op, uint16_t a, uint16_t b) {
  return plan::FusedStep(op, plan::DType::F32, plan::GeluApproximation::Erf, a,
                         b);
}

/// What to break in the one-stage plan.
enum class Break {
  Nothing,
  SlotsPastArena,
  SlotsOnInput,
  MicroBatchesOnOutput,
  MicroBatchesShape,
  FragmentsGap,
  FragmentsShort,
  FragmentName,
  UpdateNotLast,
  WholeStep,
  FragmentIndex,
  MicroBatchRange,
  PrologueTwice,
  StashOverlap,
  TemporaryOverStash,
  ReadAfterUpdate,
};

constexpr uint32_t kMicroBatches = 4;

// Fragments of the one-stage plan (indices into Program.fragments).
constexpr int32_t kP = 0, kF = 1, kB = 2, kW = 3, kU = 4;

/// One rank's program, cut into P, F, B, W (empty) and U, run over 4
/// micro-batches in a 1F1B order with two in flight:
///   P:    acc = 0
///   F(m): s = x_m * x_m               (the stash: 2 slots)
///   B(m): acc += sum_rows(s) * c_m    (in place)
///   U:    sum = copy(acc)
/// x (rows 2 per micro-batch) and c (1 row) are micro-batched inputs.
std::vector<uint8_t> buildStagePlan(Break what = Break::Nothing) {
  Builder pb;
  uint32_t stashSlots = what == Break::SlotsPastArena ? 6 : 2;
  uint64_t tOffset = what == Break::StashOverlap ? 128 : 192;
  uint64_t pOffset = what == Break::TemporaryOverStash ? 64 : 256;
  std::vector<fb::Offset<plan::Value>> values = {
      pb.value({2, 3}, plan::Storage::Input, 0, 0,
               what == Break::SlotsOnInput ? 2 : 0), // 0 x_m
      pb.value({1, 3}, plan::Storage::Input, 0, 1),  // 1 c_m
      pb.value({1, 3}, plan::Storage::Arena, 0),     // 2 acc
      pb.value({2, 3}, plan::Storage::Arena, 64, 0, stashSlots), // 3 stash
      pb.value({1, 3}, plan::Storage::Arena, tOffset),           // 4 row sum
      pb.value({1, 3}, plan::Storage::Arena, pOffset),           // 5 product
      pb.value({1, 3}, plan::Storage::Arena, 0),   // 6 acc, updated
      pb.value({1, 3}, plan::Storage::Arena, 320), // 7 sum
  };
  std::vector<int64_t> xGlobal = {
      what == Break::MicroBatchesShape ? 10 : 2 * kMicroBatches, 3};
  std::vector<fb::Offset<plan::Binding>> inputs = {
      pb.binding("x", plan::Role::Input, 0, xGlobal, kMicroBatches),
      pb.binding("c", plan::Role::Input, 1, {kMicroBatches, 3}, kMicroBatches),
  };
  std::vector<fb::Offset<plan::Binding>> outputs = {
      pb.binding("sum", plan::Role::Output, 7, {1, 3},
                 what == Break::MicroBatchesOnOutput ? 2 : 0)};
  std::vector<fb::Offset<plan::Instruction>> instructions = {
      pb.kernel(plan::OpKind::Fill, fillAttrs(0), {}, {2}, "t.mlir:1:1"),
      pb.kernel(plan::OpKind::Mul, {}, {0, 0}, {3}, "t.mlir:2:1"),
      pb.kernel(plan::OpKind::ReduceSum, reduceAttrs({0}), {3}, {4},
                "t.mlir:3:1"),
      pb.kernel(plan::OpKind::Mul, {}, {4, 1}, {5}, "t.mlir:4:1"),
      pb.kernel(plan::OpKind::Fused,
                fusedAttrs({fusedStep(plan::OpKind::Add, 0, 1)}, {2}), {2, 5},
                {6}, "t.mlir:5:1"),
      pb.kernel(plan::OpKind::Copy, {}, {2}, {7}, "t.mlir:6:1"),
  };
  std::vector<std::string> names = {"P", "F", "B", "W", "U"};
  std::vector<uint32_t> counts = {1, 1, 3, 0, 1};
  if (what == Break::FragmentsShort)
    counts = {1, 1, 3, 0, 0};
  if (what == Break::FragmentName)
    names[3] = "W.x";
  if (what == Break::ReadAfterUpdate) // U's copy of acc moves into B
    counts = {1, 1, 4, 0, 0};
  if (what == Break::UpdateNotLast)
    std::swap(names[3], names[4]), std::swap(counts[3], counts[4]);
  auto fragments = pb.fragments(names, counts);
  if (what == Break::FragmentsGap) // one instruction after F's end
    fragments[2] = plan::CreateFragmentDirect(pb.b, "B", 3, 2);
  std::vector<fb::Offset<plan::Program>> programs = {plan::CreateProgramDirect(
      pb.b, "stage", 0, &values, 384, nullptr, &inputs, &outputs,
      &instructions, &fragments)};
  std::vector<std::tuple<uint32_t, int32_t, uint32_t>> steps = {
      {0, kP, 0}, {0, kF, 0}, {0, kF, 1}, {0, kB, 0}, {0, kF, 2},
      {0, kB, 1}, {0, kF, 3}, {0, kB, 2}, {0, kB, 3}, {0, kW, 0},
      {0, kU, 0}};
  if (what == Break::WholeStep)
    steps[4] = {0, -1, 0};
  if (what == Break::FragmentIndex)
    steps[4] = {0, 7, 2};
  if (what == Break::MicroBatchRange)
    steps[4] = {0, kF, kMicroBatches};
  if (what == Break::PrologueTwice)
    steps[9] = {0, kP, 0};
  return pb.finish({pb.mesh("m", 0)}, programs, steps);
}

/// The whole inputs of the one-stage plan: x[r][j] = r + j + 1 over 8
/// rows, c[m][j] = m + 1 + 0.5 j.
HostTensor stageInput(const char *name) {
  bool isX = std::strcmp(name, "x") == 0;
  HostTensor t{DType::F32, {isX ? 2 * kMicroBatches : kMicroBatches, 3}, {}};
  std::vector<float> data;
  for (int64_t r = 0; r < t.shape[0]; ++r)
    for (int64_t j = 0; j < 3; ++j)
      data.push_back(isX ? float(r + j + 1) : float(r + 1) + 0.5f * j);
  t.data.resize(data.size() * sizeof(float));
  std::memcpy(t.data.data(), data.data(), t.data.size());
  return t;
}

std::vector<float> floats(const HostTensor &t) {
  std::vector<float> v(t.data.size() / sizeof(float));
  std::memcpy(v.data(), t.data.data(), t.data.size());
  return v;
}

/// The one-stage plan's result computed by hand: sum over micro-batches m
/// of c_m times the column sums of x_m squared.
std::vector<float> stageExpected() {
  std::vector<float> x = floats(stageInput("x")), c = floats(stageInput("c"));
  std::vector<float> sum(3, 0);
  for (uint32_t m = 0; m < kMicroBatches; ++m)
    for (int j = 0; j < 3; ++j) {
      float rows = 0;
      for (int r = 0; r < 2; ++r) {
        float v = x[(2 * m + r) * 3 + j];
        rows += v * v;
      }
      sum[j] += rows * c[m * 3 + j];
    }
  return sum;
}

/// A one-rank executor of `bytes`, its inputs set.
struct OneRank {
  std::shared_ptr<InProcessStore> store = std::make_shared<InProcessStore>();
  cpu::GlooCommunicatorFactory comms{0, 1, store};
  std::unique_ptr<Device> device = cpu::createCpuDevice();
  std::unique_ptr<Executor> executor;

  explicit OneRank(std::vector<uint8_t> bytes, ExecutorOptions options = {}) {
    StatusOr<LoadedPlan> plan =
        LoadedPlan::fromBytes(std::move(bytes), "stage.plan");
    EXPECT_TRUE(plan.isOk()) << plan.status().toString();
    if (!plan.isOk())
      return;
    auto created = Executor::create(*plan, 0, *device, comms, options);
    EXPECT_TRUE(created.isOk()) << created.status().toString();
    if (!created.isOk())
      return;
    executor = std::move(created).value();
    for (const char *name : {"x", "c"}) {
      Status s = executor->setInput(name, stageInput(name));
      EXPECT_TRUE(s.isOk()) << s.toString();
    }
  }
};

//===----------------------------------------------------------------------===//
// One stage
//===----------------------------------------------------------------------===//

TEST(Schedule, FragmentStepsGiveTheComputationDoneByHand) {
  OneRank rank(buildStagePlan());
  ASSERT_TRUE(rank.executor);
  // Twice: the prologue zeroes the accumulator at the start of each run.
  for (int run = 0; run < 2; ++run) {
    Status s = rank.executor->run();
    ASSERT_TRUE(s.isOk()) << s.toString();
    StatusOr<HostTensor> sum = rank.executor->output("sum");
    ASSERT_TRUE(sum.isOk()) << sum.status().toString();
    EXPECT_EQ(floats(*sum), stageExpected()) << "run " << run;
  }
  // The inputs' buffers hold every micro-batch: 4 x (24 + 12) bytes.
  EXPECT_GE(rank.executor->memoryUse().inputs, 4 * (24 + 12));
}

TEST(Schedule, SynchronousCollectivesGiveTheSameResult) {
  ExecutorOptions options;
  options.asyncCollectives = false;
  OneRank rank(buildStagePlan(), options);
  ASSERT_TRUE(rank.executor);
  ASSERT_TRUE(rank.executor->run().isOk());
  StatusOr<HostTensor> sum = rank.executor->output("sum");
  ASSERT_TRUE(sum.isOk());
  EXPECT_EQ(floats(*sum), stageExpected());
}

TEST(Schedule, TraceOriginsAndErrorsNameTheStep) {
  ExecutorOptions options;
  options.trace = true;
  OneRank traced(buildStagePlan(), options);
  ASSERT_TRUE(traced.executor);
  ASSERT_TRUE(traced.executor->run().isOk());
  std::vector<std::string> origins;
  for (const TraceEvent &e : traced.executor->trace())
    if (e.category == "kernel")
      origins.push_back(e.origin);
  std::vector<std::string> expected = {
      "P t.mlir:1:1",  "F0 t.mlir:2:1", "F1 t.mlir:2:1", "B0 t.mlir:3:1",
      "B0 t.mlir:4:1", "B0 t.mlir:5:1", "F2 t.mlir:2:1", "B1 t.mlir:3:1",
      "B1 t.mlir:4:1", "B1 t.mlir:5:1", "F3 t.mlir:2:1", "B2 t.mlir:3:1",
      "B2 t.mlir:4:1", "B2 t.mlir:5:1", "B3 t.mlir:3:1", "B3 t.mlir:4:1",
      "B3 t.mlir:5:1", "U t.mlir:6:1"};
  EXPECT_EQ(origins, expected);

  // An injected fault strikes at the first run of its instruction: B's
  // row sum in B0; by default, the middle of the run order (instruction 3).
  for (int64_t instruction : {int64_t(2), int64_t(-1)}) {
    ExecutorOptions faulty;
    int faults = 0;
    faulty.fault = [&] {
      ++faults;
      return PARTITION_ERROR(Internal, "injected");
    };
    faulty.faultRun = 1;
    faulty.faultInstruction = instruction;
    OneRank rank(buildStagePlan(), faulty);
    ASSERT_TRUE(rank.executor);
    ASSERT_TRUE(rank.executor->run().isOk());
    Status s = rank.executor->run();
    EXPECT_EQ(faults, 1);
    std::string where = instruction == 2 ? "instruction 2 (t.mlir:3:1)"
                                         : "instruction 3 (t.mlir:4:1)";
    EXPECT_NE(s.toString().find("rank 0: B0 (micro-batch 0), " + where),
              std::string::npos)
        << s.toString();
  }
}

TEST(Schedule, AFaultThatPassesStrikesOnlyAtTheFirstRun) {
  // F runs once per micro-batch; the fault is injected before F0 alone.
  ExecutorOptions options;
  int faults = 0;
  options.fault = [&] {
    ++faults;
    return Status::ok();
  };
  options.faultRun = 0;
  options.faultInstruction = 1;
  OneRank rank(buildStagePlan(), options);
  ASSERT_TRUE(rank.executor);
  ASSERT_TRUE(rank.executor->run().isOk());
  ASSERT_TRUE(rank.executor->run().isOk());
  EXPECT_EQ(faults, 1);
}

TEST(Schedule, DumpListsFragmentsAndNamesSteps) {
  StatusOr<LoadedPlan> plan = LoadedPlan::fromBytes(buildStagePlan(), "s");
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  std::string dump = plan->dump();
  for (const char *text :
       {"plan format 13", " fragment 2 B: instructions [2, 5)\n",
        " fragment 3 W: instructions [5, 5)\n fragment 4 U: instructions "
        "[5, 6)\n",
        "input \"x\" %0 : f32[2, 3] of global [8, 3] sharded [{}, {}] in 4 "
        "micro-batches",
        "@arena+64 x2 slots",
        "(program 0, F3, micro-batch 3) (program 0, B2, micro-batch 2)",
        "(program 0, U, micro-batch 0)"})
    EXPECT_NE(dump.find(text), std::string::npos) << text << "\n" << dump;
}

TEST(Schedule, RejectsEachBrokenField) {
  struct Case {
    Break what;
    std::string message;
  };
  std::vector<Case> cases = {
      {Break::SlotsPastArena,
       "program 0 (stage): value 3 has 6 slots of 24 bytes 64 bytes apart "
       "from arena offset 64, beyond the arena of 384 bytes"},
      {Break::SlotsOnInput,
       "value 0 has 2 slots, which only an arena value may have (its storage "
       "is Input)"},
      {Break::MicroBatchesOnOutput,
       "output \"sum\" has 2 micro-batches, which only an input or label may "
       "have"},
      {Break::MicroBatchesShape,
       "input \"x\" dimension 0: local size 8 (4 micro-batches) times 1 "
       "shards (8) does not cover the global size 10"},
      {Break::FragmentsGap,
       "fragment 2 \"B\" starts at instruction 3 but the fragments before it "
       "end at 2"},
      {Break::FragmentsShort,
       "the fragments cover 5 instructions, but the program has 6"},
      {Break::FragmentName,
       "fragment 3 is named \"W.x\", which is not letters, optionally "
       "followed by a dot and a chunk number"},
      {Break::UpdateNotLast, "fragment 3 \"U\" of 5 must be the last"},
      {Break::WholeStep,
       "schedule step 4 (program 0 (stage)): runs the whole program, which "
       "has 5 fragments; its steps must name one"},
      {Break::FragmentIndex,
       "schedule step 4 (program 0 (stage)): names fragment 7 of 5"},
      {Break::MicroBatchRange,
       "schedule step 4 (program 0 (stage)): micro-batch 4 of input \"x\", "
       "which has 4 micro-batches"},
      {Break::PrologueTwice,
       "schedule step 9 (program 0 (stage)): the prologue P must be its "
       "program's first step and run once"},
      {Break::StashOverlap,
       "value 4 (arena bytes [128, 140), live from instruction 2 to "
       "instruction 3) overlaps value 3 (arena bytes [64, 152), live from "
       "instruction 1 to instruction 4)"},
      {Break::TemporaryOverStash,
       "value 5 (arena bytes [64, 76), live from instruction 3 to instruction "
       "4) overlaps value 3 (arena bytes [64, 152), live from instruction 1 "
       "to instruction 4)"},
      // B reads acc after updating it in place: the read would see the
      // update (reads of it in other fragments are meant to).
      {Break::ReadAfterUpdate,
       "value 6 (arena bytes [0, 12), live from instruction 4 to instruction "
       "4) overlaps value 2 (arena bytes [0, 12), live from instruction 0 to "
       "instruction 5)"},
  };
  for (const Case &c : cases) {
    StatusOr<LoadedPlan> plan =
        LoadedPlan::fromBytes(buildStagePlan(c.what), "stage.plan");
    ASSERT_FALSE(plan.isOk()) << "accepted: " << c.message;
    EXPECT_NE(plan.status().message().find(c.message), std::string::npos)
        << plan.status().message() << "\nexpected: " << c.message;
  }
}

//===----------------------------------------------------------------------===//
// Two stages
//===----------------------------------------------------------------------===//

/// Stage 0 sends each micro-batch of its input (one row of 2) to stage 1
/// on channel `channel`; stage 1 accumulates acc = 2 acc + r_m, so the
/// result depends on the order the micro-batches arrive in, and its last
/// fragment B sets k = 7 (independent of the receive, so that the overlap
/// order of the whole program would run it while F's receive is in
/// flight). `inOrder` false runs stage 1's F1 before its F0: its receives
/// no longer match.
std::vector<uint8_t> buildTwoStagePlan(bool inOrder = true,
                                       int64_t channel = 3) {
  Builder pb;
  std::vector<fb::Offset<plan::Value>> values0 = {
      pb.value({1, 2}, plan::Storage::Input, 0, 0)};
  std::vector<fb::Offset<plan::Binding>> inputs0 = {
      pb.binding("x", plan::Role::Input, 0, {2, 2}, 2)};
  std::vector<fb::Offset<plan::Instruction>> instructions0 = {
      pb.send(0, 1, channel, "s0.mlir:1:1")};
  auto fragments0 = pb.fragments({"F"}, {1});
  std::vector<fb::Offset<plan::Value>> values1 = {
      pb.value({1, 2}, plan::Storage::Arena, 0),  // 0 received
      pb.value({1, 2}, plan::Storage::Arena, 64), // 1 acc
      pb.value({1, 2}, plan::Storage::Arena, 64),  // 2 acc, updated
      pb.value({1, 2}, plan::Storage::Arena, 128), // 3 k
  };
  std::vector<fb::Offset<plan::Binding>> outputs1 = {
      pb.binding("acc", plan::Role::Output, 1, {1, 2}),
      pb.binding("k", plan::Role::Output, 3, {1, 2})};
  std::vector<fb::Offset<plan::Instruction>> instructions1 = {
      pb.kernel(plan::OpKind::Fill, fillAttrs(0), {}, {1}, "s1.mlir:1:1"),
      pb.recv(0, 0, channel, "s1.mlir:2:1"),
      pb.kernel(plan::OpKind::Fused,
                fusedAttrs({fusedStep(plan::OpKind::Add, 0, 0),
                            fusedStep(plan::OpKind::Add, 2, 1)},
                           {3}),
                {1, 0}, {2}, "s1.mlir:3:1"),
      pb.kernel(plan::OpKind::Fill, fillAttrs(7), {}, {3}, "s1.mlir:4:1"),
  };
  auto fragments1 = pb.fragments({"P", "F", "B"}, {1, 2, 1});
  std::vector<fb::Offset<plan::Program>> programs = {
      plan::CreateProgramDirect(pb.b, "stage0", 0, &values0, 0, nullptr,
                                &inputs0, nullptr, &instructions0,
                                &fragments0),
      plan::CreateProgramDirect(pb.b, "stage1", 1, &values1, 192, nullptr,
                                nullptr, &outputs1, &instructions1,
                                &fragments1)};
  std::vector<std::tuple<uint32_t, int32_t, uint32_t>> steps = {
      {0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 1, inOrder ? 0u : 1u},
      {1, 1, inOrder ? 1u : 0u}, {1, 2, 0}};
  return pb.finish({pb.mesh("s0", 0), pb.mesh("s1", 1)}, programs, steps);
}

TEST(Schedule, TransfersMatchByChannelAndMicroBatch) {
  StatusOr<LoadedPlan> plan =
      LoadedPlan::fromBytes(buildTwoStagePlan(), "two.plan");
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  auto store = std::make_shared<InProcessStore>();
  std::vector<float> result;
  std::vector<std::string> origins; // rank 1's kernels
  std::vector<std::thread> threads;
  std::vector<Status> statuses(2);
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      cpu::GlooOptions options;
      options.timeout = std::chrono::seconds(20);
      cpu::GlooCommunicatorFactory comms(r, 2, store, options);
      std::unique_ptr<Device> device = cpu::createCpuDevice();
      auto executor = Executor::create(*plan, r, *device, comms, r == 1);
      if (!executor.isOk()) {
        statuses[r] = executor.status();
        return;
      }
      if (r == 0) {
        HostTensor x{DType::F32, {2, 2}, std::vector<char>(16)};
        float data[] = {1, 2, 10, 20};
        std::memcpy(x.data.data(), data, sizeof(data));
        statuses[r] = (*executor)->setInput("x", x);
      }
      for (int run = 0; run < 2 && statuses[r].isOk(); ++run)
        statuses[r] = (*executor)->run();
      if (r == 1 && statuses[r].isOk()) {
        StatusOr<HostTensor> acc = (*executor)->output("acc");
        statuses[r] = acc.status();
        if (acc.isOk())
          result = floats(*acc);
        for (const TraceEvent &e : (*executor)->trace())
          if (e.category == "kernel" && e.step == 1)
            origins.push_back(e.origin);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : statuses)
    ASSERT_TRUE(s.isOk()) << s.toString();
  // acc = 2 (2 * 0 + x_0) + x_1, micro-batch 0 first.
  EXPECT_EQ(result, (std::vector<float>{2 * 1 + 10, 2 * 2 + 20}));
  // B's kernel stays in B: the overlap order is each fragment's own.
  EXPECT_EQ(origins,
            (std::vector<std::string>{"P s1.mlir:1:1", "F0 s1.mlir:3:1",
                                      "F1 s1.mlir:3:1", "B0 s1.mlir:4:1"}));
}

TEST(Schedule, LoaderNamesTransfersTheTableLeavesUnmatched) {
  StatusOr<LoadedPlan> plan =
      LoadedPlan::fromBytes(buildTwoStagePlan(/*inOrder=*/false), "two.plan");
  ASSERT_FALSE(plan.isOk());
  EXPECT_NE(plan.status().message().find(
                "transfers from program 0 (stage0) to program 1 (stage1) on "
                "channel 3: send 1 is instruction 0 (s0.mlir:1:1) of step F0 "
                "(micro-batch 0), channel 3, F32[1, 2] but receive 1 is "
                "instruction 1 (s1.mlir:2:1) of step F1 (micro-batch 1), "
                "channel 3, F32[1, 2]; a channel's transfers are matched in "
                "the order issued"),
            std::string::npos)
      << plan.status().message();

  // Channel 2^55 with 2 micro-batches: tag 2^56 + m is beyond 2^56 - 1.
  plan = LoadedPlan::fromBytes(buildTwoStagePlan(true, int64_t(1) << 55),
                               "two.plan");
  ASSERT_FALSE(plan.isOk());
  EXPECT_NE(plan.status().message().find(
                "program 0 (stage0): instruction 0 (s0.mlir:1:1) of step F0 "
                "(micro-batch 0), channel 36028797018963968, F32[1, 2]: its "
                "tag, channel * 2 (1 + the schedule's last micro-batch) + 0, "
                "is beyond 72057594037927935"),
            std::string::npos)
      << plan.status().message();
}

} // namespace
