//===- RuntimeCoreTest.cpp - status, dtypes, shapes, plans, shardings -----===//
//
// The plan loader is fed a valid plan and every corruption of it we can
// build: truncations at every length, random byte flips, and targeted bad
// indices, shapes and attributes. Each must give an error, never a crash.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/DType.h"
#include "partition/runtime/DeviceGroups.h"
#include "partition/runtime/Executor.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Sharding.h"
#include "partition/runtime/Status.h"
#include "partition/runtime/StoredShape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <set>

using namespace partition::runtime;
namespace plan = partition::plan;
namespace fb = flatbuffers;

namespace {

//===----------------------------------------------------------------------===//
// Status and dtypes
//===----------------------------------------------------------------------===//

Status failingCall() {
  return PARTITION_ERROR(InvalidArgument, "value ", 3, " is bad");
}

Status propagates() {
  PARTITION_RETURN_IF_ERROR(failingCall());
  return Status::ok();
}

TEST(Status, CarriesCodeMessageAndPlace) {
  Status s = propagates();
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "value 3 is bad");
  EXPECT_NE(s.where().find("RuntimeCoreTest.cpp:"), std::string::npos);
  EXPECT_EQ(s.withContext("loading").message(), "loading: value 3 is bad");
  EXPECT_EQ(Status::ok().toString(), "ok");
}

StatusOr<int> half(int x) {
  if (x % 2)
    return PARTITION_ERROR(InvalidArgument, x, " is odd");
  return x / 2;
}

Status quarter(int x, int &result) {
  PARTITION_ASSIGN_OR_RETURN(int h, half(x));
  PARTITION_ASSIGN_OR_RETURN(result, half(h));
  return Status::ok();
}

TEST(Status, AssignOrReturn) {
  int r = 0;
  EXPECT_TRUE(quarter(8, r).isOk());
  EXPECT_EQ(r, 2);
  EXPECT_EQ(quarter(6, r).message(), "3 is odd");
}

TEST(DType, HalfRoundTripsEveryValue) {
  // Every finite f16 bit pattern survives f16 -> f32 -> f16 exactly.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
      continue; // NaN payloads may change; checked below
    EXPECT_EQ(floatToHalf(halfToFloat(h)), h) << "bits " << bits;
  }
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f)), 1.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9.
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11))),
            1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(halfToFloat(floatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(halfToFloat(floatToHalf(70000.0f))));
  EXPECT_EQ(halfToFloat(floatToHalf(std::ldexp(1.0f, -24))),
            std::ldexp(1.0f, -24)); // smallest subnormal
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f)), 1.0f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST(DType, Bf16RoundTripsEveryValueAndKeepsNaN) {
  // Every bf16 bit pattern survives bf16 -> f32 -> bf16 exactly, except that
  // a NaN may come back quieted (but a NaN, with its sign).
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t b = static_cast<uint16_t>(bits);
    uint16_t back = floatToBf16(bf16ToFloat(b));
    if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) {
      EXPECT_TRUE(std::isnan(bf16ToFloat(back))) << "bits " << bits;
      EXPECT_EQ(back & 0x8000, b & 0x8000) << "bits " << bits;
      continue;
    }
    EXPECT_EQ(back, b) << "bits " << bits;
  }
  // The largest finite float rounds up to infinity; a signalling NaN whose
  // payload lives only in the low 16 bits stays a NaN.
  EXPECT_TRUE(std::isinf(bf16ToFloat(floatToBf16(3.4028235e38f))));
  uint32_t snan = 0x7f800001u;
  float f;
  std::memcpy(&f, &snan, 4);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(f))));
}

TEST(DType, ElementSizes) {
  EXPECT_EQ(dtypeSize(DType::F32), 4);
  EXPECT_EQ(dtypeSize(DType::F16), 2);
  EXPECT_EQ(dtypeSize(DType::BF16), 2);
  EXPECT_EQ(dtypeSize(DType::I32), 4);
  EXPECT_EQ(dtypeSize(DType::I64), 8);
  // The plan's dtypes are the runtime's, number for number.
  for (plan::DType type : plan::EnumValuesDType())
    EXPECT_EQ(toPlanDType(toDType(type)), type);
}

//===----------------------------------------------------------------------===//
// Device groups
//===----------------------------------------------------------------------===//

TEST(DeviceGroups, DevicesAreRowMajorOverTheAxes) {
  const std::vector<int64_t> sizes = {2, 3, 4}; // "pp", "dp", "tp"
  EXPECT_EQ(deviceIndex(sizes, std::vector<int64_t>{1, 2, 3}), 23);
  EXPECT_EQ(deviceIndex(sizes, std::vector<int64_t>{0, 1, 0}), 4);
  EXPECT_EQ(deviceCoordinates(sizes, 13), std::vector<int64_t>({1, 0, 1}));
  for (int64_t d = 0; d < 24; ++d)
    EXPECT_EQ(deviceIndex(sizes, deviceCoordinates(sizes, d)), d);
}

TEST(DeviceGroups, GroupIndexIsRowMajorOverTheAxesAsListed) {
  const std::vector<int64_t> sizes = {2, 3, 4};
  const std::vector<int64_t> at = {1, 2, 1};
  EXPECT_EQ(groupSize(sizes, std::vector<uint32_t>{2, 0}), 8);
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{2}), 1);
  // ["tp", "pp"]: tp major, 1 * 2 + 1; ["pp", "tp"]: pp major, 1 * 4 + 1.
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{2, 0}), 3);
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{0, 2}), 5);
  // ["dp", "tp"]: 2 * 4 + 1; ["tp", "dp"]: 1 * 3 + 2.
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{1, 2}), 9);
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{2, 1}), 5);
  EXPECT_EQ(groupIndex(sizes, at, std::vector<uint32_t>{}), 0);
  // Over every axis in mesh order, the group index is the device id.
  for (int64_t d = 0; d < 24; ++d)
    EXPECT_EQ(groupIndex(sizes, deviceCoordinates(sizes, d),
                         std::vector<uint32_t>{0, 1, 2}),
              d);
}

TEST(DeviceGroups, MembersAreTheDevicesThatDifferOnlyAlongTheAxes) {
  const std::vector<int64_t> sizes = {2, 3, 4};
  const std::vector<uint32_t> axes = {2, 0}; // "tp", then "pp"
  for (int64_t d = 0; d < 24; ++d) {
    std::vector<int64_t> at = deviceCoordinates(sizes, d);
    std::set<int64_t> members;
    for (int64_t g = 0; g < groupSize(sizes, axes); ++g) {
      std::vector<int64_t> member = groupMemberCoordinates(sizes, at, axes, g);
      EXPECT_EQ(member[1], at[1]) << "off the group's axes";
      EXPECT_EQ(groupIndex(sizes, member, axes), g);
      members.insert(deviceIndex(sizes, member));
    }
    EXPECT_EQ(members.size(), 8u);
    EXPECT_TRUE(members.count(d));
  }
}

//===----------------------------------------------------------------------===//
// Kernel shape checks
//===----------------------------------------------------------------------===//

TensorRef t(std::vector<int64_t> shape, DType dtype = DType::F32) {
  return TensorRef{nullptr, dtype, std::move(shape)};
}

TEST(KernelShapes, AcceptsWhatTheDialectAccepts) {
  EXPECT_TRUE(
      checkKernelShapes(OpKind::Add, {}, {t({4, 8}), t({8})}, {t({4, 8})})
          .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Matmul, matmulAttrs(false, true),
                                {t({2, 3, 8}), t({5, 8})}, {t({2, 3, 5})})
                  .isOk());
  EXPECT_TRUE(
      checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        {t({2, 4, 6, 8}), t({2, 2, 6, 8}), t({2, 2, 6, 3})},
                        {t({2, 4, 6, 3})})
          .isOk());
  EXPECT_TRUE(
      checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f, 2),
                        {t({2, 4, 6, 8}), t({2, 2, 6, 8}), t({2, 2, 6, 3})},
                        {t({2, 4, 6, 3})})
          .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::ReduceSum, reduceAttrs({1}),
                                {t({4, 8})}, {t({4, 1})})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Slice, sliceAttrs({0, 1}, {1, 2}),
                                {t({4, 8})}, {t({4, 4})})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Select, {},
                                {t({8, 1}, DType::I64), t({2, 1, 4}), t({})},
                                {t({2, 8, 4})})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Erf, {}, {t({4, 8}, DType::BF16)},
                                {t({4, 8}, DType::BF16)})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Cos, {}, {t({4, 8}, DType::F16)},
                                {t({4, 8}, DType::F16)})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Sin, {}, {t({})}, {t({})}).isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Pad, sliceAttrs({0, 1}, {1, 2}),
                                {t({4, 4})}, {t({4, 9})})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::ScatterAdd, axisAttrs(0),
                                {t({2, 16, 8}), t({2, 16}, DType::I64)},
                                {t({100, 8})})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Compare,
                                compareAttrs(plan::CompareDirection::Lt),
                                {t({8, 1}, DType::I64), t({4}, DType::I64)},
                                {t({8, 4}, DType::I32)})
                  .isOk());
}

// A Fused kernel's table is checked before it runs: each message names the
// step, the slot or the operand and the numbers.
TEST(KernelShapes, FusedRejectsWithTheNumbers) {
  using S = plan::FusedStep;
  auto step = [](OpKind op, uint16_t a, uint16_t b = 0) {
    return S(op, plan::DType::F32, plan::GeluApproximation::Erf, a, b);
  };
  // x [4, 8] * bias [8] then exp: fine.
  KernelAttrs good = fusedAttrs(
      {step(OpKind::Mul, 0, 1), step(OpKind::Exp, 2)}, {3});
  EXPECT_TRUE(
      checkKernelShapes(OpKind::Fused, good, {t({4, 8}), t({8})}, {t({4, 8})})
          .isOk());
  Status s = checkKernelShapes(OpKind::Fused, good, {t({4, 8}), t({3})},
                               {t({4, 8})});
  EXPECT_EQ(s.message(), "Fused: operand 1 of shape [3] has 3 elements, which "
                         "do not repeat to the 32 of the results");
  s = checkKernelShapes(OpKind::Fused, good, {t({4, 8}), t({8}, DType::I32)},
                        {t({4, 8})});
  EXPECT_EQ(s.message(), "Fused: an operand must be f32, f16 or bf16, got i32");
  s = checkKernelShapes(
      OpKind::Fused, fusedAttrs({step(OpKind::Mul, 0, 3)}, {2}),
      {t({4}), t({4})}, {t({4})});
  EXPECT_EQ(s.message(), "Fused: step 0 (Mul) reads slot 3, which is not "
                         "defined before it (slots 0-1)");
  s = checkKernelShapes(OpKind::Fused,
                        fusedAttrs({step(OpKind::Matmul, 0, 1)}, {2}),
                        {t({4}), t({4})}, {t({4})});
  EXPECT_EQ(s.message(),
            "Fused: step 0 is Matmul, which is not an elementwise float op");
  s = checkKernelShapes(OpKind::Fused, fusedAttrs({step(OpKind::Neg, 0)}, {0}),
                        {t({4})}, {t({4})});
  EXPECT_EQ(s.message(),
            "Fused: result 0 is slot 0, but the steps' slots are 1-1");
  s = checkKernelShapes(OpKind::Fused, fusedAttrs({step(OpKind::Neg, 0)}, {1}),
                        {t({4})}, {t({4}), t({4})});
  EXPECT_EQ(s.message(), "Fused: names 1 output slots for 2 results");
  s = checkKernelShapes(OpKind::Fused,
                        fusedAttrs({step(OpKind::Neg, 0), step(OpKind::Exp, 0)},
                                   {1, 2}),
                        {t({4})}, {t({4}), t({2, 2})});
  EXPECT_EQ(s.message(), "Fused: result 1 has shape [2, 2] but result 0 has [4]");
  s = checkKernelShapes(OpKind::Fused, fusedAttrs({}, {}), {t({4})}, {t({4})});
  EXPECT_EQ(s.message(), "Fused: has 0 steps; 1 to 64 are allowed");
  S badRound(OpKind::Neg, plan::DType::I32, plan::GeluApproximation::Erf, 0,
             0);
  s = checkKernelShapes(OpKind::Fused, fusedAttrs({badRound}, {1}), {t({4})},
                        {t({4})});
  EXPECT_EQ(s.message(), "Fused: step 0 rounds to 3, which is not a float dtype");
  s = checkKernelShapes(OpKind::Fused, {}, {t({4})}, {t({4})});
  EXPECT_EQ(s.message(), "Fused: takes FusedAttrs, got none");
}

TEST(KernelShapes, RejectsWithTheNumbers) {
  Status s = checkKernelShapes(OpKind::Matmul, matmulAttrs(false, false),
                               {t({2, 8}), t({4, 5})}, {t({2, 5})});
  EXPECT_EQ(s.message(), "Matmul: contracting sizes differ: 8 and 4");
  s = checkKernelShapes(OpKind::Add, {}, {t({4, 8}), t({3})}, {t({4, 8})});
  EXPECT_EQ(s.message(), "Add: shapes [4, 8] and [3] do not broadcast");
  s = checkKernelShapes(OpKind::Softmax, softmaxAttrs(2), {t({4, 8})},
                        {t({4, 8})});
  EXPECT_EQ(s.message(), "Softmax: dim 2 is out of range for rank 2");
  s = checkKernelShapes(OpKind::Slice, sliceAttrs({0, 6}, {1, 1}), {t({4, 8})},
                        {t({4, 4})});
  EXPECT_FALSE(s.isOk());
  s = checkKernelShapes(OpKind::Gather, axisAttrs(0), {t({10, 4}), t({3})},
                        {t({3, 4})});
  EXPECT_EQ(s.message(), "Gather: indices must be i32 or i64, got f32");
  s = checkKernelShapes(OpKind::Select, {},
                        {t({4, 8}, DType::I32), t({8}), t({3, 1})},
                        {t({4, 8})});
  EXPECT_EQ(s.message(),
            "Select: shapes [4, 8], [8] and [3, 1] do not broadcast");
  s = checkKernelShapes(OpKind::Select, {}, {t({8}), t({8}), t({8})}, {t({8})});
  EXPECT_EQ(s.message(), "Select: the condition must be i32 or i64, got f32");
  s = checkKernelShapes(OpKind::Select, {},
                        {t({8}, DType::I32), t({8}), t({8}, DType::F16)},
                        {t({8})});
  EXPECT_EQ(s.message(),
            "Select: true_value has dtype f32 but false_value has f16");
  s = checkKernelShapes(OpKind::Erf, {}, {t({8}, DType::I32)},
                        {t({8}, DType::I32)});
  EXPECT_EQ(s.message(), "Erf: the operand must be f32, f16 or bf16, got i32");
  s = checkKernelShapes(OpKind::Cos, {}, {t({8}, DType::I64)},
                        {t({8}, DType::I64)});
  EXPECT_EQ(s.message(), "Cos: the operand must be f32, f16 or bf16, got i64");
  s = checkKernelShapes(OpKind::Sin, {}, {t({8})}, {t({4})});
  EXPECT_EQ(s.message(), "Sin: result shape [4] must be [8]");
  s = checkKernelShapes(OpKind::Pad, sliceAttrs({0, 2}, {1, 2}), {t({4, 8})},
                        {t({4, 16})});
  EXPECT_EQ(s.message(), "Pad: dimension 1 (offset 2, stride 2, size 8) "
                         "writes outside [4, 16]");
  s = checkKernelShapes(OpKind::ScatterAdd, axisAttrs(0),
                        {t({2, 8}), t({2, 3}, DType::I32)}, {t({100, 8})});
  EXPECT_EQ(s.message(), "ScatterAdd: updates have shape [2, 8] but must be "
                         "[2, 3, 8] for indices [2, 3] and result [100, 8]");
  s = checkKernelShapes(OpKind::ScatterAdd, axisAttrs(0), {t({3, 8}), t({3})},
                        {t({100, 8})});
  EXPECT_EQ(s.message(), "ScatterAdd: indices must be i32 or i64, got f32");
  s = checkKernelShapes(OpKind::TopK, {}, {t({4, 8})},
                        {t({4, 9}), t({4, 9}, DType::I64)});
  EXPECT_EQ(s.message(), "TopK: takes K = 9 of [4, 8]");
  s = checkKernelShapes(OpKind::TopK, {}, {t({4, 8})},
                        {t({4, 2}), t({4, 2}, DType::I32)});
  EXPECT_EQ(s.message(), "TopK: indices must be i64, got i32");
  s = checkKernelShapes(OpKind::ExpertDispatch, {},
                        {t({2, 16, 3, 64}), t({2, 16, 2}, DType::I64)},
                        {t({4, 2, 8, 64})});
  EXPECT_EQ(s.message(), "ExpertDispatch: slots [2, 16, 3, 64], indices "
                         "[2, 16, 2] and buffer [4, 2, 8, 64] do not match");
  s = checkKernelShapes(OpKind::ExpertCombine, {},
                        {t({4, 2, 8, 64}), t({2, 16, 2}, DType::I64)},
                        {t({2, 16, 64})});
  EXPECT_EQ(s.message(), "ExpertCombine: slots [2, 16, 64], indices "
                         "[2, 16, 2] and buffer [4, 2, 8, 64] do not match");
  EXPECT_TRUE(checkKernelShapes(OpKind::ExpertDispatch, {},
                                {t({2, 16, 64}), t({2, 16, 2}, DType::I32)},
                                {t({4, 2, 8, 64})})
                  .isOk());
  s = checkKernelShapes(OpKind::Compare,
                        compareAttrs(plan::CompareDirection(6)),
                        {t({8}), t({8})}, {t({8}, DType::I32)});
  EXPECT_EQ(s.message(), "Compare: direction must be 0 (eq) to 5 (ge), got 6");
  s = checkKernelShapes(OpKind::Compare,
                        compareAttrs(plan::CompareDirection::Eq),
                        {t({8}), t({8})}, {t({8})});
  EXPECT_EQ(s.message(), "Compare: the result must be i32, got f32");
  s = checkKernelShapes(OpKind::Compare,
                        compareAttrs(plan::CompareDirection::Eq),
                        {t({4, 8}), t({3, 1})}, {t({4, 8}, DType::I32)});
  EXPECT_EQ(s.message(), "Compare: shapes [4, 8] and [3, 1] do not broadcast");
  std::vector<TensorRef> qkv = {t({1, 2, 6, 8}), t({1, 2, 6, 8}),
                                t({1, 2, 6, 8})};
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f, -3), qkv,
                        {t({1, 2, 6, 8})});
  EXPECT_EQ(s.message(),
            "Attention: the attention window must be positive, got -3");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(false, 0.5f, 4), qkv,
                        {t({1, 2, 6, 8})});
  EXPECT_EQ(s.message(), "Attention: an attention window (4) needs causal");
  s = checkKernelShapes(OpKind(200), {}, {}, {});
  EXPECT_FALSE(s.isOk());
}

// Attention and AttentionGrad take query_positions [Sq] and key_positions
// [Sk] (i32 or i64, one dtype) after their other operands; with them,
// causal attention may have Sq != Sk (a chunk of the queries).
TEST(KernelShapes, AttentionPositions) {
  std::vector<TensorRef> qkv = {t({1, 4, 6, 8}), t({1, 2, 16, 8}),
                                t({1, 2, 16, 3})};
  auto with = [&](std::vector<TensorRef> in, TensorRef qp, TensorRef kp) {
    in.push_back(std::move(qp));
    in.push_back(std::move(kp));
    return in;
  };
  std::vector<TensorRef> result = {t({1, 4, 6, 3})};
  EXPECT_TRUE(checkKernelShapes(
                  OpKind::Attention, attentionAttrs(true, 0.5f),
                  with(qkv, t({6}, DType::I64), t({16}, DType::I64)), result)
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(
                  OpKind::Attention, attentionAttrs(true, 0.5f, 3),
                  with(qkv, t({6}, DType::I32), t({16}, DType::I32)), result)
                  .isOk());
  std::vector<TensorRef> grads = {t({1, 4, 6, 8}), t({1, 4, 16, 8}),
                                  t({1, 4, 16, 3})};
  std::vector<TensorRef> qkvdy = qkv;
  qkvdy.push_back(t({1, 4, 6, 3}));
  EXPECT_TRUE(checkKernelShapes(
                  OpKind::AttentionGrad, attentionAttrs(true, 0.5f),
                  with(qkvdy, t({6}, DType::I64), t({16}, DType::I64)), grads)
                  .isOk());

  Status s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                               qkv, result);
  EXPECT_EQ(s.message(), "Attention: causal attention without positions "
                         "needs equal sequence lengths, got 6 and 16");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        with(qkv, t({16}, DType::I64), t({16}, DType::I64)),
                        result);
  EXPECT_EQ(s.message(), "Attention: query_positions has shape [16] but must "
                         "be [6] (the query sequence length)");
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f),
                        with(qkvdy, t({6}, DType::I64), t({1, 16}, DType::I64)),
                        grads);
  EXPECT_EQ(s.message(), "AttentionGrad: key_positions has shape [1, 16] but "
                         "must be [16] (the key sequence length)");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        with(qkv, t({6}), t({16}, DType::I64)), result);
  EXPECT_EQ(s.message(),
            "Attention: query_positions must be i32 or i64, got f32");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        with(qkv, t({6}, DType::I64), t({16}, DType::BF16)),
                        result);
  EXPECT_EQ(s.message(),
            "Attention: key_positions must be i32 or i64, got bf16");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        with(qkv, t({6}, DType::I64), t({16}, DType::I32)),
                        result);
  EXPECT_EQ(s.message(), "Attention: query_positions has dtype i64 but "
                         "key_positions has i32");
  std::vector<TensorRef> four = qkv;
  four.push_back(t({6}, DType::I64));
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f), four,
                        result);
  EXPECT_EQ(s.message(), "Attention: takes 3 operands (5 with query_positions "
                         "and key_positions) and 1 result (2 with lse), got 4 "
                         "and 1");
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f),
                        with(qkv, t({6}, DType::I64), t({16}, DType::I64)),
                        grads);
  EXPECT_EQ(s.message(), "AttentionGrad: takes 4 operands (6 with "
                         "query_positions and key_positions, 8 with those, lse "
                         "and delta) and 3 results, got 5 and 3");
}

// The block form (ring attention): Attention's second result lse and
// AttentionGrad's operands lse and delta after the positions, all f32
// [B, H, Sq] whatever the query's dtype.
TEST(KernelShapes, AttentionBlockForm) {
  DType bf16 = DType::BF16, i64 = DType::I64;
  std::vector<TensorRef> qkv = {t({1, 4, 6, 8}, bf16), t({1, 2, 16, 8}, bf16),
                                t({1, 2, 16, 3}, bf16)};
  std::vector<TensorRef> withPositions = qkv;
  withPositions.push_back(t({6}, i64));
  withPositions.push_back(t({16}, i64));
  TensorRef result = t({1, 4, 6, 3}, bf16), lse = t({1, 4, 6});
  EXPECT_TRUE(checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                                withPositions, {result, lse})
                  .isOk());
  EXPECT_TRUE(checkKernelShapes(OpKind::Attention, attentionAttrs(false, 0.5f),
                                qkv, {result, lse})
                  .isOk());
  std::vector<TensorRef> grad = {t({1, 4, 6, 8}, bf16),
                                 t({1, 2, 16, 8}, bf16),
                                 t({1, 2, 16, 3}, bf16),
                                 t({1, 4, 6, 3}, bf16),
                                 t({6}, i64),
                                 t({16}, i64),
                                 t({1, 4, 6}),
                                 t({1, 4, 6})};
  std::vector<TensorRef> grads = {t({1, 4, 6, 8}, bf16), t({1, 4, 16, 8}, bf16),
                                  t({1, 4, 16, 3}, bf16)};
  EXPECT_TRUE(checkKernelShapes(OpKind::AttentionGrad,
                                attentionAttrs(true, 0.5f, 4), grad, grads)
                  .isOk());

  Status s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                               withPositions, {result, t({1, 4, 6}, bf16)});
  EXPECT_EQ(s.message(),
            "Attention: lse must be f32 [1, 4, 6], got bf16 [1, 4, 6]");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        withPositions, {result, t({1, 4, 6, 1})});
  EXPECT_EQ(s.message(),
            "Attention: lse must be f32 [1, 4, 6], got f32 [1, 4, 6, 1]");
  s = checkKernelShapes(OpKind::Attention, attentionAttrs(true, 0.5f),
                        withPositions, {result, lse, lse});
  EXPECT_EQ(s.message(), "Attention: takes 3 operands (5 with query_positions "
                         "and key_positions) and 1 result (2 with lse), got 5 "
                         "and 3");
  std::vector<TensorRef> bad = grad;
  bad[6] = t({1, 2, 6});
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f), bad,
                        grads);
  EXPECT_EQ(s.message(),
            "AttentionGrad: lse must be f32 [1, 4, 6], got f32 [1, 2, 6]");
  bad = grad;
  bad[7] = t({1, 4, 6}, bf16);
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f), bad,
                        grads);
  EXPECT_EQ(s.message(),
            "AttentionGrad: delta must be f32 [1, 4, 6], got bf16 [1, 4, 6]");
  bad = grad;
  bad.pop_back();
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f), bad,
                        grads);
  EXPECT_EQ(s.message(), "AttentionGrad: takes 4 operands (6 with "
                         "query_positions and key_positions, 8 with those, lse "
                         "and delta) and 3 results, got 7 and 3");
  // The block form's positions are checked as the others'.
  bad = grad;
  bad[5] = t({6}, i64);
  s = checkKernelShapes(OpKind::AttentionGrad, attentionAttrs(true, 0.5f), bad,
                        grads);
  EXPECT_EQ(s.message(), "AttentionGrad: key_positions has shape [6] but must "
                         "be [16] (the key sequence length)");
}

TEST(KernelShapes, TakesTheAttributeTableOfItsOpcode) {
  // Each opcode takes one kind of table (or none), with values in range.
  Status s = checkKernelShapes(OpKind::Matmul, {}, {t({2, 8}), t({8, 5})},
                               {t({2, 5})});
  EXPECT_EQ(s.message(), "Matmul: takes MatmulAttrs, got none");
  s = checkKernelShapes(OpKind::Matmul, softmaxAttrs(0), {t({2, 8}), t({8, 5})},
                        {t({2, 5})});
  EXPECT_EQ(s.message(), "Matmul: takes MatmulAttrs, got SoftmaxAttrs");
  s = checkKernelShapes(OpKind::Add, axisAttrs(0), {t({4}), t({4})}, {t({4})});
  EXPECT_EQ(s.message(), "Add: takes no attributes, got AxisAttrs");
  s = checkKernelShapes(OpKind::SoftmaxCrossEntropy,
                        crossEntropyAttrs(plan::LossReduction(3)),
                        {t({4, 10}), t({4}, DType::I32)}, {t({})});
  EXPECT_EQ(s.message(), "SoftmaxCrossEntropy: reduction must be 0 (mean), 1 "
                         "(sum) or 2 (none), got 3");
  s = checkKernelShapes(OpKind::Gelu, geluAttrs(plan::GeluApproximation(2)),
                        {t({4})}, {t({4})});
  EXPECT_EQ(s.message(), "Gelu: approximation must be 0 (erf) or 1 (tanh), "
                         "got 2");
  s = checkKernelShapes(OpKind::RmsNorm, normAttrs(1e-5f, true),
                        {t({4, 8}), t({8}), t({8})}, {t({4, 8})});
  EXPECT_EQ(s.message(), "RmsNorm: has no bias, but has_bias is set");
  s = checkKernelShapes(OpKind::Slice, sliceAttrs({0, 1}, {1}), {t({4, 8})},
                        {t({4, 4})});
  EXPECT_EQ(s.message(), "Slice: takes 2 offsets and 2 strides, got 2 and 1");
  s = checkKernelShapes(OpKind::Transpose, transposeAttrs({0, 0}), {t({4, 8})},
                        {t({4, 4})});
  EXPECT_EQ(s.message(), "Transpose: permutation [0, 0] is not a permutation");
  s = checkKernelShapes(OpKind::ReduceMax, reduceAttrs({}), {t({4, 8})},
                        {t({4, 8})});
  EXPECT_EQ(s.message(), "ReduceMax: needs at least one reduced dimension");
  // A stride that overflows int64 on the way to the last element read.
  s = checkKernelShapes(OpKind::Slice, sliceAttrs({0}, {int64_t(1) << 62}),
                        {t({8})}, {t({4})});
  EXPECT_EQ(s.message(), "Slice: dimension 0 (offset 0, stride "
                         "4611686018427387904, size 4) reads outside [8]");
  EXPECT_EQ(formatKernelAttrs(sliceAttrs({0, 1}, {1, 2})),
            "{offsets=[0, 1], strides=[1, 2]}");
  EXPECT_EQ(formatKernelAttrs(compareAttrs(plan::CompareDirection::Le)),
            "{direction=Le}");
  EXPECT_EQ(formatKernelAttrs({}), "");
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

/// What to break when building the test plan.
enum class Break {
  Nothing,
  Version,
  MeshRanks,
  ValueIndex,
  ArenaOverflow,
  AliasForward,
  OperandIndex,
  KernelShape,
  KernelAttrsKind,
  KernelAttrsNone,
  KernelAttrsMissingTable,
  KernelAttrsUnknownKind,
  KernelAttrsRange,
  CollectiveAttrsKind,
  CollectiveAxis,
  CollectiveShape,
  BindingSharding,
  StoredShape,
  StoredPermutation,
  StoredPermutationView,
  ScheduleProgram,
  Opcode,
  HugeShape,
  MisalignedArena,
  ArenaOverlap,
  ParameterBuffer,
};

/// A two-device plan: y = all_reduce(x @ w) + b over axis "tp".
std::vector<uint8_t> buildPlan(Break what = Break::Nothing) {
  fb::FlatBufferBuilder b;
  std::vector<fb::Offset<fb::String>> axisNames = {b.CreateString("tp")};
  std::vector<int64_t> axisSizes = {2};
  std::vector<int32_t> ranks = {0, what == Break::MeshRanks ? 0 : 1};
  auto mesh = plan::CreateMeshDirect(b, "mesh", &axisNames, &axisSizes, &ranks);

  auto value = [&](std::vector<int64_t> shape, plan::Storage storage,
                   uint64_t offset, uint32_t index) {
    return plan::CreateValueDirect(b, plan::DType::F32, &shape, storage, offset,
                                   index);
  };
  std::vector<fb::Offset<plan::Value>> values = {
      value({4, 8}, plan::Storage::Input, 0, 0), // 0 x
      value({8, 6}, plan::Storage::Persistent, 0,
            what == Break::ValueIndex ? 7 : 0),    // 1 w
      value({6}, plan::Storage::Persistent, 0, 1), // 2 b
      value({4, 6}, plan::Storage::Arena,
            what == Break::ArenaOverflow ? 200 : 0, 0), // 3
      value({4, 6}, plan::Storage::Arena,
            what == Break::MisalignedArena ? 132
            : what == Break::ArenaOverlap  ? 64
                                           : 128,
            0),                                  // 4
      value({4, 6}, plan::Storage::Arena, 0, 0), // 5
      value({24}, plan::Storage::Alias, 0,
            what == Break::AliasForward ? 7 : 5), // 6
      what == Break::HugeShape // 2^80 elements, 0 when wrapped
          ? value({int64_t(1) << 40, int64_t(1) << 40}, plan::Storage::Arena,
                  128, 0)
          : what == Break::ParameterBuffer // larger than b's buffer
                ? value({24}, plan::Storage::Persistent, 0, 1)
                : value({24}, plan::Storage::Arena, 128, 0), // 7
  };
  auto sharding = [&](std::vector<std::vector<uint32_t>> dims) {
    std::vector<fb::Offset<plan::DimSharding>> d;
    for (auto &axes : dims)
      d.push_back(plan::CreateDimShardingDirect(b, &axes));
    return plan::CreateShardingDirect(b, &d);
  };
  auto binding = [&](const char *name, plan::Role role, uint32_t v,
                     std::vector<int64_t> global,
                     fb::Offset<plan::Sharding> s) {
    return plan::CreateBindingDirect(b, name, role, v, &global, s);
  };
  // w [16, 6] stored as [96] (a valid view); broken, as [12, 8], whose
  // dimensions no consecutive ones of [16, 6] multiply to.
  std::vector<int64_t> wGlobal = {what == Break::BindingSharding ? 20 : 16, 6};
  // Broken permutations: one that repeats a dimension, and one whose
  // transposed [6, 16] the view [16, 6] is not.
  std::vector<int64_t> wStored = {wGlobal[0] * wGlobal[1]};
  std::vector<int64_t> wPerm;
  if (what == Break::StoredShape)
    wStored = {12, 8};
  if (what == Break::StoredPermutation)
    wStored = {6, 16}, wPerm = {0, 0};
  if (what == Break::StoredPermutationView)
    wStored = {16, 6}, wPerm = {1, 0};
  std::vector<fb::Offset<plan::Binding>> params = {
      plan::CreateBindingDirect(b, "w", plan::Role::Parameter, 1, &wGlobal,
                                sharding({{0}, {}}), nullptr, -1, nullptr, 0,
                                &wStored, wPerm.empty() ? nullptr : &wPerm),
      binding("b", plan::Role::Parameter, 2, {6}, sharding({{}})),
  };
  std::vector<fb::Offset<plan::Binding>> inputs = {
      binding("x", plan::Role::Input, 0, {4, 16}, sharding({{}, {0}}))};
  std::vector<fb::Offset<plan::Binding>> outputs = {
      binding("y", plan::Role::Output, 6, {24}, sharding({{}}))};

  auto instruction = [&](plan::OpKind op, plan::KernelAttrs type,
                         fb::Offset<void> table, std::vector<uint32_t> operands,
                         std::vector<uint32_t> results, const char *loc) {
    auto k = plan::CreateKernelInst(b, op, type, table);
    return plan::CreateInstructionDirect(b, plan::Inst::KernelInst, k.Union(),
                                         &operands, &results, loc);
  };
  auto kernel = [&](plan::OpKind op, const KernelAttrs &attrs,
                    std::vector<uint32_t> operands,
                    std::vector<uint32_t> results) {
    auto table = attrs.Pack(b);
    return instruction(op, attrs.type, table, std::move(operands),
                       std::move(results), "test.mlir:1:1");
  };
  std::vector<uint32_t> reduceAxes = {what == Break::CollectiveAxis ? 3u : 0u};
  // An all-reduce takes no attribute table.
  bool dimTable = what == Break::CollectiveAttrsKind;
  fb::Offset<void> gatherDim =
      dimTable ? plan::CreateCollectiveDimAttrs(b, int64_t(0)).Union()
               : fb::Offset<void>();
  auto allReduce = plan::CreateCollectiveInstDirect(
      b, plan::CollectiveKind::AllReduce, &reduceAxes, plan::ReduceOp::Sum,
      dimTable ? plan::CollectiveAttrs::CollectiveDimAttrs
               : plan::CollectiveAttrs::NONE,
      gatherDim);
  std::vector<uint32_t> arOperands = {3},
                        arResults = {what == Break::CollectiveShape ? 7u : 4u};
  std::vector<uint32_t> matmulOperands = {0, what == Break::OperandIndex ? 99u
                                                                         : 1u};
  std::vector<uint32_t> matmulResults = {what == Break::KernelShape ? 7u : 3u};
  plan::OpKind matmulOp =
      what == Break::Opcode ? plan::OpKind(999) : plan::OpKind::Matmul;
  fb::Offset<plan::Instruction> matmul;
  switch (what) {
  case Break::KernelAttrsKind:
    matmul = kernel(matmulOp, softmaxAttrs(1), matmulOperands, matmulResults);
    break;
  case Break::KernelAttrsNone:
    matmul = kernel(matmulOp, {}, matmulOperands, matmulResults);
    break;
  case Break::KernelAttrsMissingTable:
    matmul = instruction(matmulOp, plan::KernelAttrs::MatmulAttrs, {},
                         matmulOperands, matmulResults, "test.mlir:1:1");
    break;
  case Break::KernelAttrsUnknownKind:
    matmul = instruction(matmulOp, plan::KernelAttrs(99),
                         matmulAttrs(false, false).Pack(b), matmulOperands,
                         matmulResults, "test.mlir:1:1");
    break;
  default:
    matmul = kernel(matmulOp, matmulAttrs(false, false), matmulOperands,
                    matmulResults);
  }
  std::vector<fb::Offset<plan::Instruction>> instructions = {
      matmul,
      plan::CreateInstructionDirect(b, plan::Inst::CollectiveInst,
                                    allReduce.Union(), &arOperands, &arResults,
                                    "test.mlir:2:1"),
      what == Break::KernelAttrsRange
          ? instruction(plan::OpKind::Softmax, plan::KernelAttrs::SoftmaxAttrs,
                        softmaxAttrs(2).Pack(b), {4}, {5}, "test.mlir:3:1")
          : instruction(plan::OpKind::Add, plan::KernelAttrs::NONE, {}, {4, 2},
                        {5}, "test.mlir:3:1"),
  };
  std::vector<fb::Offset<plan::Program>> programs = {plan::CreateProgramDirect(
      b, "f", 0, &values, 256, &params, &inputs, &outputs, &instructions)};
  std::vector<fb::Offset<plan::Mesh>> meshes = {mesh};
  std::vector<fb::Offset<plan::ScheduleStep>> schedule = {
      plan::CreateScheduleStep(b, what == Break::ScheduleProgram ? 4 : 0, 0)};
  auto root = plan::CreatePlanDirect(
      b, what == Break::Version ? kFormatVersion + 1 : kFormatVersion, "test",
      &meshes, &programs, &schedule);
  b.FinishSizePrefixed(root, plan::PlanIdentifier());
  std::vector<uint8_t> bytes(b.GetBufferPointer(),
                             b.GetBufferPointer() + b.GetSize());
  appendPlanChecksum(bytes);
  return bytes;
}

TEST(Plan, LoadsAValidPlanAndDumpsIt) {
  StatusOr<LoadedPlan> p = LoadedPlan::fromBytes(buildPlan(), "test.plan");
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(p->worldSize(), 2);
  std::string dump = p->dump();
  EXPECT_NE(dump.find("mesh @mesh [\"tp\"=2] ranks [0, 1]"), std::string::npos)
      << dump;
  EXPECT_NE(dump.find("%3 = Matmul {transpose_a=false, transpose_b=false}(%0, "
                      "%1) : f32[4, 6] @arena+0"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("AllReduce Sum over {\"tp\"} (group of 2)"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("param \"w\" %1 : f32[8, 6] of global [16, 6] sharded "
                      "[{\"tp\"}, {}]"),
            std::string::npos)
      << dump;
}

TEST(Plan, RejectsEachTargetedCorruptionWithItsReason) {
  struct Case {
    Break what;
    std::string expected;
  } cases[] = {
      {Break::Version, "plan format version " +
                           std::to_string(kFormatVersion + 1) +
                           " is not supported"},
      {Break::MeshRanks, "rank 0 is out of range or repeated"},
      {Break::ValueIndex, "value 1 is parameter 7 of 2"},
      {Break::ArenaOverflow, "value 3 occupies arena bytes [200, 296) beyond "
                             "the arena of 256"},
      {Break::AliasForward, "value 6 aliases value 7, which is not an earlier "
                            "value"},
      {Break::OperandIndex, "operand value 99 of 8"},
      {Break::KernelShape, "Matmul: result shape [24] must be [4, 6]"},
      {Break::KernelAttrsKind,
       "program 0 (f): instruction 0 (test.mlir:1:1): Matmul: takes "
       "MatmulAttrs, got SoftmaxAttrs"},
      {Break::KernelAttrsNone, "program 0 (f): instruction 0 (test.mlir:1:1): "
                               "Matmul: takes MatmulAttrs, got none"},
      {Break::KernelAttrsMissingTable,
       "program 0 (f): instruction 0 (test.mlir:1:1): Matmul: its MatmulAttrs "
       "table is missing"},
      {Break::KernelAttrsUnknownKind,
       "program 0 (f): instruction 0 (test.mlir:1:1): Matmul: an attribute "
       "table of unknown kind 99"},
      {Break::KernelAttrsRange,
       "program 0 (f): instruction 2 (test.mlir:3:1): Softmax: dim 2 is out "
       "of range for rank 2"},
      {Break::CollectiveAttrsKind,
       "program 0 (f): instruction 1 (test.mlir:2:1): AllReduce: takes no "
       "attributes, got CollectiveDimAttrs"},
      {Break::CollectiveAxis, "axis 3 is out of range or repeated"},
      {Break::CollectiveShape, "result shape [24] must be [4, 6]"},
      {Break::BindingSharding,
       "parameter \"w\" dimension 0: local size 8 times 2 shards (16) does "
       "not cover the global size 20"},
      {Break::StoredShape,
       "parameter \"w\" has the stored shape [12, 8], which its global shape "
       "[16, 6] does not view"},
      {Break::StoredPermutation,
       "parameter \"w\" has the stored permutation [0, 0], which is not a "
       "permutation of the dimensions of its stored shape [6, 16]"},
      {Break::StoredPermutationView,
       "parameter \"w\" has the stored shape [16, 6] permuted [1, 0] to "
       "[6, 16], which its global shape [16, 6] does not view"},
      {Break::ScheduleProgram, "schedule step names program 4 of 1"},
      {Break::Opcode, "unknown opcode 999"},
      {Break::HugeShape, "value 7 of shape [1099511627776, 1099511627776] "
                         "has more than 1125899906842624 elements"},
      // Kernels load f32 (and wider vectors) from the arena: an offset the
      // compiler never gives was a misaligned load.
      {Break::MisalignedArena,
       "program 0 (f): value 4 (f32) is at arena offset 132, which is not a "
       "multiple of the arena alignment 64"},
      // The all-reduce would write its result over its own operand.
      {Break::ArenaOverlap,
       "program 0 (f): value 4 (arena bytes [64, 160), live from instruction "
       "1 to instruction 2) overlaps value 3 (arena bytes [0, 96), live from "
       "instruction 0 to instruction 1)"},
      {Break::ParameterBuffer, "program 0 (f): value 7 (f32, 96 bytes) is "
                               "kept in the buffer of parameter \"b\" (f32, "
                               "24 bytes)"},
  };
  for (const Case &c : cases) {
    StatusOr<LoadedPlan> p = LoadedPlan::fromBytes(buildPlan(c.what), "x.plan");
    ASSERT_FALSE(p.isOk()) << "corruption " << int(c.what) << " accepted";
    EXPECT_NE(p.status().message().find(c.expected), std::string::npos)
        << "got: " << p.status().message();
    EXPECT_EQ(p.status().message().rfind("x.plan: ", 0), 0u)
        << p.status().message();
  }
}

TEST(Plan, RejectsEveryTruncation) {
  std::vector<uint8_t> valid = buildPlan();
  for (size_t n = 0; n < valid.size(); ++n) {
    std::vector<uint8_t> cut(valid.begin(), valid.begin() + n);
    EXPECT_FALSE(LoadedPlan::fromBytes(cut, "cut.plan").isOk())
        << "truncated to " << n << " bytes";
  }
}

TEST(Plan, RejectsEveryRandomByteFlip) {
  // The checksum covers every byte: no mutation may load as another plan
  // (before it, a flip in a shape or an attribute could load and run).
  std::vector<uint8_t> valid = buildPlan();
  std::mt19937 rng(1234);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> mutant = valid;
    int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f)
      mutant[rng() % mutant.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    if (mutant == valid)
      continue;
    StatusOr<LoadedPlan> p = LoadedPlan::fromBytes(mutant, "m.plan");
    EXPECT_FALSE(p.isOk()) << "mutation " << i << " loaded";
  }
}

TEST(Plan, NamesTheChecksumMismatch) {
  std::vector<uint8_t> plan = buildPlan();
  plan[plan.size() / 2] ^= 1;
  StatusOr<LoadedPlan> p = LoadedPlan::fromBytes(plan, "c.plan");
  ASSERT_FALSE(p.isOk());
  EXPECT_NE(p.status().message().find("c.plan: the plan's checksum does not "
                                      "match its"),
            std::string::npos)
      << p.status().message();
  // A plan without a checksum is an older format.
  std::vector<uint8_t> old(plan.begin(), plan.end() - kPlanChecksumBytes);
  EXPECT_NE(LoadedPlan::fromBytes(old, "o.plan")
                .status()
                .message()
                .find("has no checksum"),
            std::string::npos);
}

TEST(Plan, RejectsPaddedFiles) {
  std::vector<uint8_t> padded = buildPlan();
  padded.push_back(0);
  EXPECT_NE(LoadedPlan::fromBytes(padded, "p.plan")
                .status()
                .message()
                .find("truncated or padded"),
            std::string::npos);
}

TEST(Plan, RejectsOtherFiles) {
  EXPECT_NE(
      LoadedPlan::fromBytes(
          {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'}, "a.txt")
          .status()
          .message()
          .find("not a partition plan"),
      std::string::npos);
  EXPECT_EQ(LoadedPlan::fromFile("/nonexistent/p.plan").status().code(),
            StatusCode::NotFound);
}

//===----------------------------------------------------------------------===//
// Shardings
//===----------------------------------------------------------------------===//

TEST(Sharding, OffsetsAndBlocks) {
  std::vector<uint8_t> bytes = buildPlan();
  const plan::Plan *p = plan::GetSizePrefixedPlan(bytes.data());
  const plan::Mesh &mesh = *p->meshes()->Get(0);
  EXPECT_EQ(meshCoordinates(mesh, 1), std::vector<int64_t>({1}));
  const plan::Binding &x = *p->programs()->Get(0)->inputs()->Get(0);
  // x: global [4, 16] split over "tp" along dimension 1: device 1 holds
  // columns 8..15.
  EXPECT_EQ(shardOffsets(mesh, *x.sharding(), {1}, {4, 8}),
            std::vector<int64_t>({0, 8}));

  std::vector<float> global(4 * 16), block(4 * 8), back(4 * 16, -1);
  for (size_t i = 0; i < global.size(); ++i)
    global[i] = float(i);
  extractBlock(global.data(), {4, 16}, block.data(), {4, 8}, {0, 8}, 4);
  EXPECT_EQ(block[0], 8.0f);
  EXPECT_EQ(block[8], 24.0f);
  insertBlock(back.data(), {4, 16}, block.data(), {4, 8}, {0, 8}, 4);
  EXPECT_EQ(back[8], 8.0f);
  EXPECT_EQ(back[0], -1.0f);
  EXPECT_EQ(back[63], 63.0f);
}

// A dimension padded to split it evenly: 5 rows in blocks of 2, so the third
// block holds one row and one of padding, and a fourth would be all padding.
TEST(ShardingTest, BlocksPastAPaddedEndAreClipped) {
  EXPECT_EQ(clippedShape({5, 3}, {4, 0}, {2, 3}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(clippedShape({5, 3}, {6, 0}, {2, 3}), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(clippedShape({5, 3}, {2, 0}, {2, 3}), (std::vector<int64_t>{2, 3}));
  std::vector<float> global(5 * 3), block(2 * 3, -1), back(5 * 3, -1);
  for (size_t i = 0; i < global.size(); ++i)
    global[i] = float(i);
  extractBlock(global.data(), {5, 3}, block.data(), {2, 3}, {4, 0}, 4);
  EXPECT_EQ(block, (std::vector<float>{12, 13, 14, -1, -1, -1}));
  block = {1, 2, 3, 4, 5, 6};
  insertBlock(back.data(), {5, 3}, block.data(), {2, 3}, {4, 0}, 4);
  EXPECT_EQ(back[12], 1.0f);
  EXPECT_EQ(back[14], 3.0f);
  EXPECT_EQ(back[11], -1.0f); // nothing written before the block
  // Clipped in an inner dimension: rows of 3 in blocks of 2 columns.
  std::vector<float> column(2 * 2, -1);
  extractBlock(global.data(), {5, 3}, column.data(), {2, 2}, {0, 2}, 4);
  EXPECT_EQ(column, (std::vector<float>{2, -1, 5, -1}));
  // All padding: nothing is copied.
  std::vector<float> none(2 * 3, -1);
  extractBlock(global.data(), {5, 3}, none.data(), {2, 3}, {6, 0}, 4);
  EXPECT_EQ(none, std::vector<float>(6, -1));
}

// A parameter stored [in, k n] and viewed [in, k, n] (a fused projection):
// which stored dimension each view dimension belongs to.
TEST(StoredShape, ViewGroups) {
  using Groups = std::optional<std::vector<size_t>>;
  EXPECT_EQ(viewGroups({4, 3, 5}, {4, 15}), Groups({{0, 1, 1}}));
  EXPECT_EQ(viewGroups({3, 5, 4}, {15, 4}), Groups({{0, 0, 1}}));
  EXPECT_EQ(viewGroups({4, 15}, {4, 15}), Groups({{0, 1}}));
  EXPECT_EQ(viewGroups({3, 2}, {6}), Groups({{0, 0}}));
  EXPECT_EQ(viewGroups({4, 1, 5}, {4, 5}), Groups({{0, 1, 1}}));
  EXPECT_EQ(viewGroups({4, 5, 1}, {4, 5}), Groups({{0, 1, 1}}));
  // Not a view: the same elements but not consecutive groups, other
  // element counts, empty or non-positive sizes.
  EXPECT_EQ(viewGroups({6, 10}, {4, 15}), std::nullopt);
  EXPECT_EQ(viewGroups({4, 3, 4}, {4, 15}), std::nullopt);
  EXPECT_EQ(viewGroups({4, 3, 5, 2}, {4, 15}), std::nullopt);
  EXPECT_EQ(viewGroups({4, 15}, {4, 15, 2}), std::nullopt);
  EXPECT_EQ(viewGroups({4, 0, 5}, {4, 0}), std::nullopt);
  EXPECT_EQ(viewGroups({}, {1}), std::nullopt);
}

// Reading a view block as pieces of the stored tensor gives what cutting the
// block out of the view itself gives (the same bytes, row-major), for
// blocks of every dimension, blocks that reach past a padded end, and a
// transposed layout.
TEST(StoredShape, PiecesAssembleTheViewBlock) {
  struct Case {
    std::vector<int64_t> view, stored, offsets, block;
  };
  for (const Case &c : std::vector<Case>{
           {{4, 3, 6}, {4, 18}, {0, 0, 2}, {4, 3, 2}},  // a tp block of n
           {{4, 3, 6}, {4, 18}, {1, 1, 3}, {2, 2, 3}},  // inside every dim
           {{3, 6, 4}, {18, 4}, {0, 4, 0}, {3, 2, 4}},  // transposed weight
           {{2, 3, 6}, {6, 6}, {1, 0, 0}, {1, 3, 6}},   // leading group
           {{4, 3, 5}, {4, 15}, {0, 0, 3}, {4, 3, 2}},  // odd split
           {{2, 2, 3, 4}, {2, 24}, {0, 1, 1, 2}, {2, 1, 2, 2}}}) { // 3 in a group
    std::optional<std::vector<size_t>> groups = viewGroups(c.view, c.stored);
    ASSERT_TRUE(groups);
    int64_t total = 1, count = 1;
    for (int64_t d : c.view)
      total *= d;
    for (int64_t d : c.block)
      count *= d;
    std::vector<float> whole(total);
    for (int64_t i = 0; i < total; ++i)
      whole[i] = float(i);
    std::vector<float> expected(count, -1), got(count, -2);
    extractBlock(whole.data(), c.view, expected.data(), c.block, c.offsets, 4);
    for (const StoredPiece &p :
         storedPieces(c.view, c.stored, *groups, c.offsets, c.block)) {
      int64_t n = 1;
      for (int64_t d : p.storedShape)
        n *= d;
      std::vector<float> piece(n);
      extractBlock(whole.data(), c.stored, piece.data(), p.storedShape,
                   p.storedOffsets, 4);
      insertBlock(got.data(), c.block, piece.data(), p.blockShape,
                  p.blockOffsets, 4);
    }
    EXPECT_EQ(got, expected) << "view of rank " << c.view.size()
                              << " at offset " << c.offsets[2];
  }
}

TEST(StoredShape, Permutations) {
  EXPECT_TRUE(isPermutation({1, 0}, 2));
  EXPECT_TRUE(isPermutation({2, 0, 1}, 3));
  EXPECT_TRUE(isPermutation({}, 0));
  EXPECT_FALSE(isPermutation({0, 0}, 2));
  EXPECT_FALSE(isPermutation({1, 2}, 2));
  EXPECT_FALSE(isPermutation({-1, 0}, 2));
  EXPECT_FALSE(isPermutation({1, 0}, 3));
  EXPECT_EQ(permuteShape({6, 4}, {1, 0}), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(permuteShape({2, 3, 4}, {2, 0, 1}),
            (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(permuteShape({2, 3}, {}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(inversePermutation({2, 0, 1}), (std::vector<int64_t>{1, 2, 0}));
}

/// A ParameterSource over one whole tensor in the stored layout: each read
/// must name the stored shape and cut a block of it.
class StoredTensorSource final : public ParameterSource {
public:
  StoredTensorSource(std::vector<int64_t> shape, std::vector<float> data)
      : shape(std::move(shape)), data(std::move(data)) {}
  Status read(const std::string &, DType,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override {
    if (globalShape != shape)
      return PARTITION_ERROR(InvalidArgument, "read of shape ",
                             formatShape(globalShape), ", stored ",
                             formatShape(shape));
    extractBlock(data.data(), shape, dst, localShape, offsets, sizeof(float));
    ++reads;
    return Status::ok();
  }
  std::vector<int64_t> shape;
  std::vector<float> data;
  int reads = 0;
};

// A parameter the weights file holds transposed (torch's Linear weight
// [out, in], viewed [in, out]; a fused one [k n, in] viewed [in, k, n]; a
// rank-3 permutation): readStoredBlock gives each block of the view what
// cutting it out of transpose-then-reshape, computed here element by
// element, gives; and toStoredOrder turns the whole view back into the
// file's bytes.
TEST(StoredShape, PermutedReadGivesTheViewBlock) {
  struct Case {
    std::vector<int64_t> stored, perm, view, offsets, block;
  };
  for (const Case &c : std::vector<Case>{
           {{6, 4}, {1, 0}, {4, 6}, {0, 3}, {4, 3}},    // column-parallel
           {{6, 4}, {1, 0}, {4, 6}, {2, 0}, {2, 6}},    // row-parallel
           {{6, 4}, {1, 0}, {4, 6}, {1, 2}, {3, 2}},    // inside both
           {{12, 4}, {1, 0}, {4, 2, 6}, {0, 0, 3}, {4, 2, 3}}, // fused, tp
           {{12, 4}, {1, 0}, {4, 2, 6}, {1, 1, 0}, {2, 1, 6}},
           {{2, 3, 4}, {2, 0, 1}, {2, 2, 2, 3}, {1, 0, 1, 1}, {1, 2, 1, 2}},
           {{4, 18}, {}, {4, 3, 6}, {0, 0, 2}, {4, 3, 2}}}) { // no permutation
    std::vector<int64_t> permuted = permuteShape(c.stored, c.perm);
    int64_t total = 1;
    for (int64_t d : c.stored)
      total *= d;
    std::vector<float> file(total);
    for (int64_t i = 0; i < total; ++i)
      file[i] = float(i);
    // view element e is transpose(file, perm) at the row-major index e of
    // `permuted`: file index f with f[perm[i]] = t[i].
    size_t rank = permuted.size();
    std::vector<float> view(total);
    for (int64_t e = 0; e < total; ++e) {
      std::vector<int64_t> t(rank), f(rank);
      for (int64_t rest = e, d = int64_t(rank) - 1; d >= 0; --d) {
        t[d] = rest % permuted[d];
        rest /= permuted[d];
      }
      for (size_t i = 0; i < rank; ++i)
        f[c.perm.empty() ? i : c.perm[i]] = t[i];
      int64_t at = 0;
      for (size_t d = 0; d < rank; ++d)
        at = at * c.stored[d] + f[d];
      view[e] = file[at];
    }
    int64_t count = 1;
    for (int64_t d : c.block)
      count *= d;
    std::vector<float> expected(count, -1), got(count, -2);
    extractBlock(view.data(), c.view, expected.data(), c.block, c.offsets, 4);
    StoredTensorSource source(c.stored, file);
    Status read = readStoredBlock(source, "w", DType::F32, c.view, c.stored,
                                  c.perm, c.offsets, c.block, got.data());
    ASSERT_TRUE(read.isOk()) << read.message();
    EXPECT_EQ(got, expected) << "stored " << formatShape(c.stored)
                             << " permuted " << formatShape(c.perm);
    std::vector<char> bytes(total * 4);
    std::memcpy(bytes.data(), view.data(), bytes.size());
    std::vector<char> back = toStoredOrder(bytes, c.stored, c.perm, 4);
    EXPECT_EQ(std::memcmp(back.data(), file.data(), bytes.size()), 0)
        << "stored " << formatShape(c.stored);
  }
}

TEST(StoredShape, PermutedReadRejectsWhatIsNoView) {
  StoredTensorSource source({6, 4}, std::vector<float>(24));
  std::vector<float> dst(24);
  Status s = readStoredBlock(source, "w", DType::F32, {4, 6}, {6, 4}, {0, 0},
                             {0, 0}, {4, 6}, dst.data());
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("parameter \"w\": stored permutation [0, 0] "
                             "does not permute stored shape [6, 4]"),
            std::string::npos)
      << s.message();
  s = readStoredBlock(source, "w", DType::F32, {6, 4}, {6, 4}, {1, 0}, {0, 0},
                      {6, 4}, dst.data());
  EXPECT_NE(s.message().find("global shape [6, 4] does not view stored "
                             "shape [4, 6]"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(source.reads, 0);
}

} // namespace
