//===- StepMetricsTest.cpp - training progress figures of a plan ----------===//
//
// The model FLOPs of a small two-device plan built here (matmul with a
// transposed operand, a bf16 batch matmul, grouped-query attention, and an
// op that counts nothing) counted from its program or read from its
// model_flops field, the tokens of a step from the input names, the
// seconds at a cluster's peak, and the text and JSON forms of a step.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/StepMetrics.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace partition::runtime;
namespace plan = partition::plan;
namespace fb = flatbuffers;

namespace {

struct PlanSpec {
  /// The name of the integer input [4, 8] (global).
  std::string tokens = "tokens";
  /// The dtype of that input.
  plan::DType tokensType = plan::DType::I32;
  /// How many schedule steps run the program.
  int scheduleSteps = 1;
  /// Cut the program into fragments F (the Matmul) and B (the rest), run
  /// by steps F0, F1, F2 and B0 instead (format 11).
  bool fragments = false;
  /// Plan.model_flops; absent when none.
  fb::Optional<double> modelFlops = fb::nullopt;
};

/// A plan on mesh dp:2 whose program holds, per device:
///   Matmul f32 [2, 8, 16] x [32, 16]^T        2*2*8*32*16    = 16384
///   BatchMatmul bf16 [3, 4, 5] x [3, 5, 6]    2*3*4*6*5      =   720
///   Attention f32 q [1, 4, 8, 16], k [1, 2, 8, 16], v [1, 2, 8, 8]
///     (4 query heads over 2 key heads)        2*32*8*(16+8)  = 12288
///   Add                                                            0
/// and the inputs `spec.tokens` [4, 8] and "labels" i64 [4, 7], split over
/// dp along dimension 0.
std::vector<uint8_t> buildPlan(const PlanSpec &spec = {}) {
  fb::FlatBufferBuilder b;
  std::vector<fb::Offset<fb::String>> axisNames = {b.CreateString("dp")};
  std::vector<int64_t> axisSizes = {2};
  std::vector<int32_t> ranks = {0, 1};
  auto mesh = plan::CreateMeshDirect(b, "mesh", &axisNames, &axisSizes, &ranks);

  uint64_t arena = 0;
  std::vector<fb::Offset<plan::Value>> values;
  auto value = [&](plan::DType dtype, std::vector<int64_t> shape,
                   plan::Storage storage = plan::Storage::Arena,
                   uint32_t index = 0) {
    uint64_t offset = 0;
    if (storage == plan::Storage::Arena) {
      int64_t bytes = dtypeSize(toDType(dtype));
      for (int64_t d : shape)
        bytes *= d;
      offset = arena;
      arena += (uint64_t(bytes) + 63) / 64 * 64;
    }
    values.push_back(
        plan::CreateValueDirect(b, dtype, &shape, storage, offset, index));
    return uint32_t(values.size() - 1);
  };
  using plan::DType;
  uint32_t tokens = value(spec.tokensType, {2, 8}, plan::Storage::Input, 0);
  uint32_t labels = value(DType::I64, {2, 7}, plan::Storage::Input, 1);
  uint32_t x = value(DType::F32, {2, 8, 16});
  uint32_t w = value(DType::F32, {32, 16});
  uint32_t y = value(DType::F32, {2, 8, 32});
  uint32_t a = value(DType::BF16, {3, 4, 5});
  uint32_t c = value(DType::BF16, {3, 5, 6});
  uint32_t ac = value(DType::BF16, {3, 4, 6});
  uint32_t q = value(DType::F32, {1, 4, 8, 16});
  uint32_t k = value(DType::F32, {1, 2, 8, 16});
  uint32_t v = value(DType::F32, {1, 2, 8, 8});
  uint32_t o = value(DType::F32, {1, 4, 8, 8});
  uint32_t sum = value(DType::F32, {2, 8, 32});

  auto split = [&](size_t rank) {
    std::vector<fb::Offset<plan::DimSharding>> dims;
    for (size_t d = 0; d < rank; ++d) {
      std::vector<uint32_t> axes;
      if (d == 0)
        axes.push_back(0);
      dims.push_back(plan::CreateDimShardingDirect(b, &axes));
    }
    return plan::CreateShardingDirect(b, &dims);
  };
  std::vector<int64_t> tokensGlobal = {4, 8}, labelsGlobal = {4, 7};
  std::vector<fb::Offset<plan::Binding>> inputs = {
      plan::CreateBindingDirect(b, spec.tokens.c_str(), plan::Role::Input,
                                tokens, &tokensGlobal, split(2)),
      plan::CreateBindingDirect(b, "labels", plan::Role::Label, labels,
                                &labelsGlobal, split(2)),
  };
  auto kernel = [&](plan::OpKind op, const KernelAttrs &attrs,
                    std::vector<uint32_t> operands,
                    std::vector<uint32_t> results) {
    auto table = attrs.Pack(b);
    auto inst = plan::CreateKernelInst(b, op, attrs.type, table);
    return plan::CreateInstructionDirect(b, plan::Inst::KernelInst,
                                         inst.Union(), &operands, &results,
                                         "test.mlir:1:1");
  };
  std::vector<fb::Offset<plan::Instruction>> instructions = {
      kernel(plan::OpKind::Matmul, matmulAttrs(false, true), {x, w}, {y}),
      kernel(plan::OpKind::BatchMatmul, matmulAttrs(false, false), {a, c},
             {ac}),
      kernel(plan::OpKind::Attention, attentionAttrs(true, 0.25f), {q, k, v},
             {o}),
      kernel(plan::OpKind::Add, {}, {y, y}, {sum}),
  };
  std::vector<fb::Offset<plan::Fragment>> fragments;
  if (spec.fragments)
    fragments = {plan::CreateFragmentDirect(b, "F", 0, 1),
                 plan::CreateFragmentDirect(b, "B", 1, 3)};
  std::vector<fb::Offset<plan::Program>> programs = {plan::CreateProgramDirect(
      b, "step", 0, &values, arena, nullptr, &inputs, nullptr, &instructions,
      spec.fragments ? &fragments : nullptr)};
  std::vector<fb::Offset<plan::Mesh>> meshes = {mesh};
  std::vector<fb::Offset<plan::ScheduleStep>> schedule;
  if (spec.fragments)
    for (auto [fragment, microBatch] :
         {std::pair(0, 0), std::pair(0, 1), std::pair(0, 2), std::pair(1, 0)})
      schedule.push_back(
          plan::CreateScheduleStep(b, 0, uint32_t(microBatch), fragment));
  for (int i = 0; i < spec.scheduleSteps && !spec.fragments; ++i)
    schedule.push_back(plan::CreateScheduleStep(b, 0, uint32_t(i)));
  auto root = plan::CreatePlanDirect(b, kFormatVersion, "test", &meshes,
                                     &programs, &schedule, spec.modelFlops);
  b.FinishSizePrefixed(root, plan::PlanIdentifier());
  std::vector<uint8_t> bytes(b.GetBufferPointer(),
                             b.GetBufferPointer() + b.GetSize());
  appendPlanChecksum(bytes);
  return bytes;
}

LoadedPlan load(const PlanSpec &spec = {}) {
  StatusOr<LoadedPlan> p = LoadedPlan::fromBytes(buildPlan(spec), "test.plan");
  EXPECT_TRUE(p.isOk()) << p.status().toString();
  return std::move(*p);
}

TEST(StepMetrics, CountsTheProductsOfEachKernel) {
  LoadedPlan p = load();
  const plan::Program &program = *p.root().programs()->Get(0);
  const auto &insts = *program.instructions();
  EXPECT_EQ(instructionFlops(program, *insts.Get(0)), 16384);
  EXPECT_EQ(instructionFlops(program, *insts.Get(1)), 720);
  EXPECT_EQ(instructionFlops(program, *insts.Get(2)), 12288);
  EXPECT_EQ(instructionFlops(program, *insts.Get(3)), 0);
}

TEST(StepMetrics, StepFlopsSumEveryDeviceAndScheduleStep) {
  StepFlops once = countStepFlops(load().root());
  ASSERT_EQ(once.byDType.size(), 2u);
  EXPECT_EQ(once.byDType.at("f32"), 2 * (16384 + 12288));
  EXPECT_EQ(once.byDType.at("bf16"), 2 * 720);
  EXPECT_EQ(once.total(), 2 * (16384 + 12288 + 720));
  PlanSpec twice;
  twice.scheduleSteps = 2;
  EXPECT_EQ(countStepFlops(load(twice).root()).total(),
            4 * (16384 + 12288 + 720));
}

TEST(StepMetrics, StepFlopsCountEachFragmentStepsInstructions) {
  // F (the Matmul) three times, B (the rest) once, on each of 2 devices.
  PlanSpec fragments;
  fragments.fragments = true;
  StepFlops flops = countStepFlops(load(fragments).root());
  EXPECT_EQ(flops.byDType.at("f32"), 2 * (3 * 16384 + 12288));
  EXPECT_EQ(flops.byDType.at("bf16"), 2 * 720);
}

TEST(StepMetrics, ModelFlopsAreThePlansWhenItHasThem) {
  // Without Plan.model_flops: every device's products.
  StepFlops counted = modelStepFlops(load().root());
  EXPECT_FALSE(counted.ofGlobalProgram);
  EXPECT_EQ(counted.total(), 2 * (16384 + 12288 + 720));
  // With it: that figure, split over the dtypes as the programs' products
  // are (f32 28672 and bf16 720 of 29392 per device).
  PlanSpec global;
  global.modelFlops = 29392;
  LoadedPlan p = load(global);
  ASSERT_TRUE(p.root().model_flops());
  EXPECT_EQ(*p.root().model_flops(), 29392);
  StepFlops model = modelStepFlops(p.root());
  EXPECT_TRUE(model.ofGlobalProgram);
  EXPECT_DOUBLE_EQ(model.total(), 29392);
  EXPECT_DOUBLE_EQ(model.byDType.at("f32"), 28672);
  EXPECT_DOUBLE_EQ(model.byDType.at("bf16"), 720);
  EXPECT_NE(p.dump().find("model FLOPs per step 29392 (of the global "
                          "program)\n"),
            std::string::npos)
      << p.dump();
  EXPECT_NE(load().dump().find("model FLOPs per step 58784 (counted from the "
                               "per-device programs)\n"),
            std::string::npos);
  // 0 is a count (a model without products), not an absent field.
  global.modelFlops = 0;
  model = modelStepFlops(load(global).root());
  EXPECT_TRUE(model.ofGlobalProgram);
  EXPECT_EQ(model.total(), 0);
}

TEST(StepMetrics, ModelFlopsThatAreNotACountAreRejected) {
  for (double bad : {-1.0, double(NAN), double(INFINITY)}) {
    PlanSpec spec;
    spec.modelFlops = bad;
    StatusOr<LoadedPlan> p =
        LoadedPlan::fromBytes(buildPlan(spec), "test.plan");
    ASSERT_FALSE(p.isOk()) << bad;
    EXPECT_NE(
        p.status().toString().find(" are not a finite number of at least 0"),
        std::string::npos)
        << p.status().toString();
  }
}

TEST(StepMetrics, TokensAreTheElementsOfTheTokenInput) {
  StepTokens t = countStepTokens(load().root());
  EXPECT_EQ(t.input, "tokens");
  EXPECT_EQ(t.tokens, 32); // the global [4, 8], not a device's [2, 8]
  PlanSpec ids;
  ids.tokens = "Input_IDs";
  ids.tokensType = plan::DType::I64;
  t = countStepTokens(load(ids).root());
  EXPECT_EQ(t.input, "Input_IDs");
  EXPECT_EQ(t.tokens, 32);
  // No token input: the labels count.
  PlanSpec other;
  other.tokens = "x";
  t = countStepTokens(load(other).root());
  EXPECT_EQ(t.input, "labels");
  EXPECT_EQ(t.tokens, 28);
  // A float input named tokens is not one: still the labels.
  PlanSpec floats;
  floats.tokensType = plan::DType::F32;
  EXPECT_EQ(countStepTokens(load(floats).root()).input, "labels");
}

TEST(StepMetrics, SecondsAtPeakTakeEachDTypesPeak) {
  StepFlops flops;
  flops.byDType = {{"f32", 8e12}, {"bf16", 16e12}};
  Cluster cluster;
  cluster.peakFlops = {{"f32", 1e12}, {"bf16", 4e12}};
  std::optional<double> s = secondsAtPeak(flops, cluster, 2);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 8e12 / 2e12 + 16e12 / 8e12);
  // bf16 missing: at the f32 peak.
  cluster.peakFlops = {{"f32", 1e12}};
  EXPECT_DOUBLE_EQ(*secondsAtPeak(flops, cluster, 2), 24e12 / 2e12);
  cluster.peakFlops = {{"tf32", 1e12}};
  EXPECT_FALSE(secondsAtPeak(flops, cluster, 2));
  EXPECT_FALSE(secondsAtPeak(flops, *Cluster::load("h200"), 0));
  EXPECT_GT(*secondsAtPeak(flops, *Cluster::load("h200"), 8), 0);
}

StepFigures figures() {
  StepFigures f;
  f.step = 3;
  f.ofSteps = 10;
  f.scalars = {{"loss", 3.5}, {"mfu", 0.25}};
  f.stepMs = 212;
  f.tokensPerS = 151;
  f.mfu = 0.00125;
  f.peakBytes = 1234567;
  f.etaS = 1.5;
  return f;
}

TEST(StepMetrics, JsonLineNamesEveryFieldAndWritesNullForNonFinite) {
  EXPECT_EQ(formatMetricsJson(figures()),
            "{\"step\": 3, \"loss\": 3.5, \"output.mfu\": 0.25, "
            "\"step_ms\": 212, \"tokens_per_s\": 151, \"mfu\": 0.00125, "
            "\"peak_bytes\": 1234567, \"eta_s\": 1.5}");
  StepFigures f = figures();
  f.scalars = {{"loss", NAN}, {"we\"ird", INFINITY}};
  f.tokensPerS = NAN;
  f.mfu = NAN;
  EXPECT_EQ(formatMetricsJson(f),
            "{\"step\": 3, \"loss\": null, \"we\\\"ird\": null, "
            "\"step_ms\": 212, \"tokens_per_s\": null, \"mfu\": null, "
            "\"peak_bytes\": 1234567, \"eta_s\": 1.5}");
}

TEST(StepMetrics, ProgressLine) {
  EXPECT_EQ(formatProgress(figures()),
            "[3/10] loss 3.5 | mfu 0.25 | 212 ms | 151 tokens/s | MFU 0.125% "
            "| peak 1.23 MB | ETA 1.5s");
  StepFigures f = figures();
  f.scalars = {{"loss", 2}};
  f.tokensPerS = NAN;
  f.mfu = NAN;
  EXPECT_EQ(formatProgress(f),
            "[3/10] loss 2 | 212 ms | MFU - | peak 1.23 MB | ETA 1.5s");
}

TEST(StepMetrics, FormatBytes) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(999), "999 B");
  EXPECT_EQ(formatBytes(1000), "1 kB");
  EXPECT_EQ(formatBytes(1234567), "1.23 MB");
  EXPECT_EQ(formatBytes(999999), "1 MB"); // not "1e+03 kB"
  EXPECT_EQ(formatBytes(141000000000ull), "141 GB");
}

TEST(StepMetrics, FormatDuration) {
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(0.0004), "0.4ms");
  EXPECT_EQ(formatDuration(0.00996), "10ms");
  EXPECT_EQ(formatDuration(0.012), "12ms"); // not "0.0s"
  EXPECT_EQ(formatDuration(0.42), "420ms");
  EXPECT_EQ(formatDuration(0.9996), "1.0s");
  EXPECT_EQ(formatDuration(1.42), "1.4s");
  EXPECT_EQ(formatDuration(9.96), "10s");
  EXPECT_EQ(formatDuration(12.4), "12s");
  EXPECT_EQ(formatDuration(59.7), "1m00s");
  EXPECT_EQ(formatDuration(185), "3m05s");
  EXPECT_EQ(formatDuration(3599.8), "1h00m");
  EXPECT_EQ(formatDuration(7620), "2h07m");
  EXPECT_EQ(formatDuration(NAN), "-");
  EXPECT_EQ(formatDuration(-1), "-");
}

TEST(StepMetrics, MeanStepLeavesOutTheFirst) {
  EXPECT_EQ(meanStepMs({}), 0);
  EXPECT_EQ(meanStepMs({100}), 100);
  EXPECT_EQ(meanStepMs({100, 10, 20}), 15);
}

} // namespace
