//===- ShardingAttrTest.cpp - the sharding attribute algebra --------------===//
//
// Parsing, comparison, composition, permutation and local/global shapes of
// #part.sharding.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartAttrs.h"
#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class ShardingAttrTest : public ::testing::Test {
protected:
  ShardingAttrTest() {
    ctx.getOrLoadDialect<PartDialect>();
    mesh = parse<MeshAttr>("#part.mesh<[\"dp\"=2, \"tp\"=4]>");
  }

  template <typename AttrT>
  AttrT parse(StringRef text) {
    return dyn_cast_or_null<AttrT>(parseAttribute(text, &ctx));
  }

  ShardingAttr sharding(StringRef body) {
    return parse<ShardingAttr>(("#part.sharding<" + body + ">").str());
  }

  SmallVector<StringAttr> axes(ArrayRef<StringRef> names) {
    SmallVector<StringAttr> result;
    for (StringRef name : names)
      result.push_back(StringAttr::get(&ctx, name));
    return result;
  }

  MLIRContext ctx;
  MeshAttr mesh;
};

TEST_F(ShardingAttrTest, ParsesAndExposesAxes) {
  ShardingAttr s = sharding("@mesh, [{\"dp\"}, {}], unreduced={\"tp\"}");
  ASSERT_TRUE(s);
  EXPECT_EQ(s.getMesh().getValue(), "mesh");
  EXPECT_EQ(s.getRank(), 2);
  EXPECT_EQ(s.getDimAxes(0), axes({"dp"}));
  EXPECT_TRUE(s.getDimAxes(1).empty());
  EXPECT_TRUE(s.isShardedOver("dp"));
  EXPECT_FALSE(s.isShardedOver("tp"));
  EXPECT_TRUE(s.isUnreducedOver("tp"));
  EXPECT_FALSE(s.isFullyReplicated());
}

TEST_F(ShardingAttrTest, RejectsAnAxisUsedTwice) {
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  EXPECT_FALSE(sharding("@mesh, [{\"dp\"}, {\"dp\"}]"));
  EXPECT_FALSE(sharding("@mesh, [{\"tp\"}, {}], unreduced={\"tp\"}"));
}

TEST_F(ShardingAttrTest, CheckedBuilderReportsMalformedParameters) {
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emit = [&] { return emitError(UnknownLoc::get(&ctx)); };
  Builder b(&ctx);
  EXPECT_FALSE(
      ShardingAttr::getChecked(emit, &ctx, FlatSymbolRefAttr(), {}, {}));
  EXPECT_EQ(message, "sharding needs a mesh");
  EXPECT_FALSE(
      ShardingAttr::getChecked(emit, &ctx, FlatSymbolRefAttr::get(&ctx, "mesh"),
                               {b.getArrayAttr({b.getI64IntegerAttr(0)})}, {}));
  EXPECT_EQ(message, "mesh axes must be strings, got 0 : i64");
}

TEST_F(ShardingAttrTest, CompareIsStructural) {
  ShardingAttr a = sharding("@mesh, [{\"dp\"}, {\"tp\"}]");
  ShardingAttr b = ShardingAttr::get(&ctx, "mesh", {{"dp"}, {"tp"}});
  ShardingAttr c = sharding("@mesh, [{\"tp\"}, {\"dp\"}]");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(ShardingAttr::getReplicated(&ctx, "mesh", 2),
            sharding("@mesh, [{}, {}]"));
  EXPECT_TRUE(ShardingAttr::getReplicated(&ctx, "mesh", 2).isFullyReplicated());
}

TEST_F(ShardingAttrTest, ComposeAppendsMinorAxesAndUnitesUnreduced) {
  ShardingAttr a = sharding("@mesh, [{\"dp\"}, {}]");
  ShardingAttr b = sharding("@mesh, [{\"tp\"}, {}]");
  FailureOr<ShardingAttr> ab = a.compose(b);
  ASSERT_TRUE(succeeded(ab));
  EXPECT_EQ(*ab, sharding("@mesh, [{\"dp\", \"tp\"}, {}]"));
  // Order matters: the second operand's axes are minor.
  EXPECT_EQ(*b.compose(a), sharding("@mesh, [{\"tp\", \"dp\"}, {}]"));

  ShardingAttr partial = sharding("@mesh, [{}, {}], unreduced={\"tp\"}");
  EXPECT_EQ(*a.compose(partial),
            sharding("@mesh, [{\"dp\"}, {}], unreduced={\"tp\"}"));
}

TEST_F(ShardingAttrTest, ComposeFailsOnConflicts) {
  ShardingAttr a = sharding("@mesh, [{\"dp\"}, {}]");
  EXPECT_TRUE(failed(a.compose(sharding("@mesh, [{}, {\"dp\"}]"))));
  EXPECT_TRUE(failed(a.compose(sharding("@other, [{}, {\"tp\"}]"))));
  EXPECT_TRUE(failed(a.compose(sharding("@mesh, [{}, {}, {\"tp\"}]"))));
}

TEST_F(ShardingAttrTest, WithDimAxesAppended) {
  ShardingAttr a = sharding("@mesh, [{\"dp\"}, {}]");
  EXPECT_EQ(*a.withDimAxesAppended(1, axes({"tp"})),
            sharding("@mesh, [{\"dp\"}, {\"tp\"}]"));
  EXPECT_TRUE(failed(a.withDimAxesAppended(1, axes({"dp"}))));
}

TEST_F(ShardingAttrTest, PermuteFollowsATranspose) {
  ShardingAttr s = sharding("@mesh, [{\"dp\"}, {}, {\"tp\"}], unreduced={}");
  EXPECT_EQ(s.permute({2, 0, 1}), sharding("@mesh, [{\"tp\"}, {\"dp\"}, {}]"));
}

TEST_F(ShardingAttrTest, WithoutUnreduced) {
  ShardingAttr s = sharding("@mesh, [{\"dp\"}, {}], unreduced={\"tp\"}");
  EXPECT_EQ(s.withoutUnreduced(axes({"tp"})),
            sharding("@mesh, [{\"dp\"}, {}]"));
}

TEST_F(ShardingAttrTest, LocalAndGlobalShapes) {
  ShardingAttr s = sharding("@mesh, [{\"dp\"}, {\"tp\"}]");
  FailureOr<SmallVector<int64_t>> local = s.getLocalShape({8, 16}, mesh);
  ASSERT_TRUE(succeeded(local));
  EXPECT_EQ(*local, SmallVector<int64_t>({4, 4}));
  EXPECT_EQ(s.getGlobalShape(*local, mesh), SmallVector<int64_t>({8, 16}));

  ShardingAttr both = sharding("@mesh, [{\"dp\", \"tp\"}, {}]");
  EXPECT_EQ(both.getNumShards(0, mesh), 8);
  EXPECT_EQ(*both.getLocalShape({16, 3}, mesh), SmallVector<int64_t>({2, 3}));

  // Unreduced axes do not change the local shape.
  ShardingAttr partial = sharding("@mesh, [{}, {}], unreduced={\"tp\"}");
  EXPECT_EQ(*partial.getLocalShape({8, 16}, mesh),
            SmallVector<int64_t>({8, 16}));
}

TEST_F(ShardingAttrTest, LocalShapeReportsWhatDoesNotDivide) {
  ShardingAttr s = sharding("@mesh, [{}, {\"tp\"}]");
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(s.getLocalShape(
      {8, 6}, mesh, [&] { return emitError(UnknownLoc::get(&ctx)); })));
  EXPECT_EQ(message, "dimension 1 of size 6 is not divisible by its 4 shards "
                     "over mesh axes \"tp\"");
  EXPECT_TRUE(failed(s.getLocalShape({8, 8, 8}, mesh)));
}

TEST_F(ShardingAttrTest, ShardOffsetsFollowMajorToMinorAxes) {
  ShardingAttr s = sharding("@mesh, [{\"dp\", \"tp\"}, {}]");
  // Device (dp=1, tp=2) holds block 1 * 4 + 2 = 6 of 8 along dimension 0.
  EXPECT_EQ(s.getShardOffsets({2, 5}, mesh, {1, 2}),
            SmallVector<int64_t>({12, 0}));
  ShardingAttr swapped = sharding("@mesh, [{\"tp\", \"dp\"}, {}]");
  // Block 2 * 2 + 1 = 5.
  EXPECT_EQ(swapped.getShardOffsets({2, 5}, mesh, {1, 2}),
            SmallVector<int64_t>({10, 0}));
}

TEST_F(ShardingAttrTest, RoundTripsThroughText) {
  for (StringRef text : {
           "#part.sharding<@mesh, [{\"dp\"}, {}], unreduced={\"tp\"}>",
           "#part.sharding<@mesh, [{\"dp\", \"tp\"}, {}]>",
           "#part.sharding<@mesh, []>",
       }) {
    Attribute attr = parseAttribute(text, &ctx);
    ASSERT_TRUE(attr) << text.str();
    std::string printed;
    llvm::raw_string_ostream os(printed);
    attr.print(os);
    EXPECT_EQ(printed, text.str());
  }
}

} // namespace
