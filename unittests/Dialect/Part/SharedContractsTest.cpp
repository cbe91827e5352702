//===- SharedContractsTest.cpp - compiler and runtime agree ---------------===//
//
// The compiler takes element sizes, f16 / bf16 conversions and the device
// and group numbering of a mesh from the runtime's plain headers (DType.h,
// DeviceGroups.h). These tests hold the compiler's own views to them: the
// dialect's byte sizes and mesh numbering, and the conversions MLIR's
// APFloat performs when passes build f16 / bf16 constants, which the runtime
// reads as bits.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartAttrs.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/runtime/DType.h"
#include "partition/runtime/DeviceGroups.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace partition;
using namespace partition::part;

namespace {

/// `f` converted by APFloat to `semantics`, as bits.
uint16_t apfloatBits(float f, const llvm::fltSemantics &semantics) {
  llvm::APFloat value(f);
  bool lost = false;
  value.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Floats that exercise rounding: ties at both precisions, subnormals of
/// f16, overflow, zeros, infinities; then random bit patterns.
std::vector<float> sampleFloats() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               1.0f + std::ldexp(1.0f, -8),
                               1.0f + 3 * std::ldexp(1.0f, -8),
                               1.0f + std::ldexp(1.0f, -11),
                               1.0f + 3 * std::ldexp(1.0f, -11),
                               65504.0f,
                               65519.0f,
                               65520.0f,
                               70000.0f,
                               std::ldexp(1.0f, -24),
                               std::ldexp(1.0f, -25),
                               3 * std::ldexp(1.0f, -26),
                               std::ldexp(1.0f, -14) * 0.75f,
                               3.4028235e38f,
                               INFINITY,
                               -INFINITY};
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    float f = fromBits(static_cast<uint32_t>(rng()));
    if (!std::isnan(f))
      values.push_back(f);
  }
  return values;
}

TEST(SharedContracts, ApfloatConstantsMatchTheRuntimeConversions) {
  for (float f : sampleFloats()) {
    EXPECT_EQ(apfloatBits(f, llvm::APFloat::BFloat()), runtime::floatToBf16(f))
        << "bf16 of " << f;
    EXPECT_EQ(apfloatBits(f, llvm::APFloat::IEEEhalf()),
              runtime::floatToHalf(f))
        << "f16 of " << f;
  }
  // Widening: every non-NaN bit pattern reads as the same float.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    llvm::APInt word(16, bits);
    llvm::APFloat bf16(llvm::APFloat::BFloat(), word);
    llvm::APFloat half(llvm::APFloat::IEEEhalf(), word);
    if (!bf16.isNaN()) {
      EXPECT_EQ(bf16.convertToFloat(),
                runtime::bf16ToFloat(static_cast<uint16_t>(bits)))
          << "bf16 bits " << bits;
    }
    if (!half.isNaN()) {
      EXPECT_EQ(half.convertToFloat(),
                runtime::halfToFloat(static_cast<uint16_t>(bits)))
          << "f16 bits " << bits;
    }
  }
}

TEST(SharedContracts, TensorBytesAreTheRuntimeElementSizes) {
  MLIRContext ctx;
  Builder b(&ctx);
  std::pair<Type, runtime::DType> types[] = {
      {b.getF32Type(), runtime::DType::F32},
      {b.getF16Type(), runtime::DType::F16},
      {b.getBF16Type(), runtime::DType::BF16},
      {b.getI32Type(), runtime::DType::I32},
      {b.getI64Type(), runtime::DType::I64}};
  for (auto [type, dtype] : types) {
    EXPECT_EQ(getRuntimeDType(type), dtype);
    EXPECT_EQ(*getTensorBytes(RankedTensorType::get({3, 5}, type)),
              15 * runtime::dtypeSize(dtype));
  }
  // Types the runtime lacks have no runtime dtype; their size is their bit
  // width in bytes.
  EXPECT_FALSE(getRuntimeDType(b.getF64Type()));
  EXPECT_FALSE(getRuntimeDType(b.getI1Type()));
  EXPECT_EQ(*getTensorBytes(RankedTensorType::get({3}, b.getF64Type())), 24);
}

TEST(SharedContracts, MeshNumberingIsTheRuntimes) {
  MLIRContext ctx;
  ctx.getOrLoadDialect<PartDialect>();
  auto mesh = dyn_cast_or_null<MeshAttr>(
      parseAttribute("#part.mesh<[\"pp\"=2, \"dp\"=3, \"tp\"=4]>", &ctx));
  ASSERT_TRUE(mesh);
  auto axis = [&](StringRef name) { return StringAttr::get(&ctx, name); };
  std::vector<int64_t> sizes = {2, 3, 4};
  for (int64_t d = 0; d < mesh.getNumDevices(); ++d) {
    SmallVector<int64_t> at = mesh.getCoordinates(d);
    EXPECT_EQ(std::vector<int64_t>(at.begin(), at.end()),
              runtime::deviceCoordinates(sizes, d));
    // The order the axes are listed in decides the group index.
    EXPECT_EQ(mesh.getGroupIndex(at, {axis("tp"), axis("pp")}),
              at[2] * 2 + at[0]);
    EXPECT_EQ(mesh.getGroupIndex(at, {axis("pp"), axis("tp")}),
              at[0] * 4 + at[2]);
    EXPECT_EQ(mesh.getGroupIndex(at, {axis("dp")}),
              runtime::groupIndex(sizes, at, std::vector<unsigned>{1}));
  }
}

} // namespace
