//===- ShardingProjectionTest.cpp - layouts onto factors and back ---------===//
//
// The sharding analysis library's projection (ShardingProjection.h) on the
// rules of real ops, parsed from IR: a matmul, a reshape into heads whose
// compound factor an axis splits (or cannot split), a softmax whose
// need-replication factor consumes axes without taking them.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class ShardingProjectionTest : public ::testing::Test {
protected:
  ShardingProjectionTest() {
    ctx.getOrLoadDialect<PartDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  /// The first op of the body of `func.func @f`, parsed from `body`.
  Operation *parseOp(StringRef function) {
    module = parseSourceString<ModuleOp>(function, &ctx);
    if (!module)
      return nullptr;
    auto f = module->lookupSymbol<func::FuncOp>("f");
    return &f.getBody().front().front();
  }

  StringAttr axis(StringRef name) { return StringAttr::get(&ctx, name); }
  SmallVector<StringAttr> axes(ArrayRef<StringRef> names) {
    SmallVector<StringAttr> result;
    for (StringRef name : names)
      result.push_back(axis(name));
    return result;
  }
  /// Sizes of the mesh ["dp"=2, "tp"=4].
  int64_t sizeOf(StringAttr a) { return a.getValue() == "dp" ? 2 : 4; }
  /// Projects operand `operand`'s `layout` onto `rule`'s factors.
  ValueProjection project(const ShardingRule &rule, const Layout &layout,
                          unsigned operand = 0) {
    return projectOntoFactors(rule, rule.getOperandMappings()[operand], layout,
                              [&](StringAttr a) { return sizeOf(a); });
  }
  /// The result's layout from a projection's factor axes.
  Layout result(const ShardingRule &rule, const ValueProjection &p) {
    return layoutFromFactors(rule, rule.getResultMappings()[0], p.factorAxes,
                             /*isResult=*/true);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ShardingProjectionTest, MatmulFactorsAndPendingResult) {
  Operation *op = parseOp(R"(
    func.func @f(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
      %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      return %0 : tensor<8x32xf32>
    })");
  ASSERT_TRUE(op);
  ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
  // x split [dp, tp]: rows over dp (factor m), contraction over tp (k).
  Layout x = Layout::replicated(2);
  x.dims[0] = axes({"dp"});
  x.dims[1] = axes({"tp"});
  ValueProjection p = project(rule, x);
  EXPECT_FALSE(p.hasLeftover());
  // Back onto the weight: [tp, -]; onto the result: [dp, -], pending over tp.
  Layout w = layoutFromFactors(rule, rule.getOperandMappings()[1],
                               p.factorAxes, /*isResult=*/false);
  EXPECT_EQ(w.dims[0], axes({"tp"}));
  EXPECT_TRUE(w.dims[1].empty());
  EXPECT_TRUE(w.unreduced.empty());
  Layout y = result(rule, p);
  EXPECT_EQ(y.dims[0], axes({"dp"}));
  EXPECT_TRUE(y.dims[1].empty());
  EXPECT_EQ(y.unreduced, axes({"tp"}));
}

TEST_F(ShardingProjectionTest, ReshapeIntoHeadsSplitsTheMajorFactor) {
  // [2, 8, 32] -> [2, 8, 4, 8]: the features are the compound [h d] with
  // h = 4, d = 8.
  Operation *op = parseOp(R"(
    func.func @f(%x: tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32> {
      %0 = part.reshape %x : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
      return %0 : tensor<2x8x4x8xf32>
    })");
  ASSERT_TRUE(op);
  ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
  Layout x = Layout::replicated(3);
  x.dims[2] = axes({"tp"});
  ValueProjection p = project(rule, x);
  EXPECT_FALSE(p.hasLeftover());
  Layout y = result(rule, p);
  EXPECT_EQ(y.dims[2], axes({"tp"})); // the heads
  EXPECT_TRUE(y.dims[3].empty());
  // ["tp", "dp"] (8 ways): tp takes the 4 heads whole, so dp goes on to
  // the head dimension.
  x.dims[2] = axes({"tp", "dp"});
  p = project(rule, x);
  EXPECT_FALSE(p.hasLeftover());
  y = result(rule, p);
  EXPECT_EQ(y.dims[2], axes({"tp"}));
  EXPECT_EQ(y.dims[3], axes({"dp"}));
  // ["dp", "tp"]: dp splits the heads in two; tp cannot split the two left,
  // and since the heads are not split completely it cannot pass on to the
  // head dimension either: it stops at the op.
  x.dims[2] = axes({"dp", "tp"});
  p = project(rule, x);
  EXPECT_EQ(p.leftover[2], axes({"tp"}));
  y = result(rule, p);
  EXPECT_EQ(y.dims[2], axes({"dp"}));
  EXPECT_TRUE(y.dims[3].empty());
}

TEST_F(ShardingProjectionTest, AnAxisThatDoesNotDivideStopsAtTheOp) {
  // 2 heads of 16: tp (4) does not divide the heads, so it cannot pass to
  // the minor factor either (the split is major to minor).
  Operation *op = parseOp(R"(
    func.func @f(%x: tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32> {
      %0 = part.reshape %x : tensor<2x8x32xf32> -> tensor<2x8x2x16xf32>
      return %0 : tensor<2x8x2x16xf32>
    })");
  ASSERT_TRUE(op);
  ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
  Layout x = Layout::replicated(3);
  x.dims[2] = axes({"tp"});
  ValueProjection p = project(rule, x);
  EXPECT_EQ(p.leftover[2], axes({"tp"}));
  for (const auto &factor : p.factorAxes)
    EXPECT_TRUE(factor.empty());
}

TEST_F(ShardingProjectionTest, NeedReplicationConsumesButNeverTakes) {
  Operation *op = parseOp(R"(
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
      %0 = part.softmax %x dim 1 : tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    })");
  ASSERT_TRUE(op);
  ShardingRule rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
  Layout x = Layout::replicated(2);
  x.dims[0] = axes({"dp"});
  x.dims[1] = axes({"tp"});
  ValueProjection p = project(rule, x);
  EXPECT_FALSE(p.hasLeftover());
  Layout y = result(rule, p);
  EXPECT_EQ(y.dims[0], axes({"dp"}));
  EXPECT_TRUE(y.dims[1].empty()); // the softmax dimension stays whole
}

TEST_F(ShardingProjectionTest, LayoutRoundTripsThroughTheAttribute) {
  Layout l = Layout::replicated(3);
  l.dims[0] = axes({"dp"});
  l.dims[2] = axes({"tp"});
  ShardingAttr s = l.toAttr(&ctx, FlatSymbolRefAttr::get(&ctx, "mesh"));
  EXPECT_EQ(Layout::of(s, 3), l);
  EXPECT_EQ(l.numAxes(), 2u);
  auto mesh = MeshAttr::get(&ctx, {axis("dp"), axis("tp")}, {2, 4});
  EXPECT_EQ(l.localShape({8, 3, 16}, mesh), (SmallVector<int64_t>{4, 3, 4}));
}

} // namespace
