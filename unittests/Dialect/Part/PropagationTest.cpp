//===- PropagationTest.cpp - sharding propagation as an analysis ----------===//
//
// ShardingPropagation (Analysis/Propagation.h) on small functions: layouts
// spread through ops forward and backward, a user's annotation beats a
// propagated one, and compute() leaves the IR as it was.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class PropagationTest : public ::testing::Test {
protected:
  PropagationTest() {
    ctx.getOrLoadDialect<PartDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }

  func::FuncOp parseFunction(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    return module ? module->lookupSymbol<func::FuncOp>("f") : func::FuncOp();
  }
  MeshOp mesh() { return module->lookupSymbol<MeshOp>("mesh"); }
  std::string text(ShardingAttr s) {
    std::string out;
    llvm::raw_string_ostream os(out);
    if (s)
      os << Attribute(s);
    else
      os << "none";
    return out;
  }
  std::string moduleText() {
    std::string out;
    llvm::raw_string_ostream os(out);
    module->print(os);
    return out;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(PropagationTest, SpreadsForwardAndBackwardWithoutChangingTheIR) {
  func::FuncOp f = parseFunction(R"(
    part.mesh @mesh = <["dp"=2, "tp"=4]>
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
                 %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
      %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %1 = part.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
      %2 = part.sharding_constraint %1 <@mesh, [{"dp"}, {"tp"}]> : tensor<8x32xf32>
      return %2 : tensor<8x32xf32>
    })");
  ASSERT_TRUE(f);
  std::string before = moduleText();
  ShardingPropagation propagation(f, mesh());
  ASSERT_TRUE(succeeded(propagation.compute()));
  EXPECT_EQ(moduleText(), before);
  Block &body = f.getBody().front();
  // The constraint's columns over tp reach back to the weight and the bias;
  // the input's rows over dp reach the matmul's result.
  EXPECT_EQ(text(propagation.shardingOf(f.getArgument(1))),
            "#part.sharding<@mesh, [{}, {\"tp\"}]>");
  EXPECT_EQ(text(propagation.shardingOf(f.getArgument(2))),
            "#part.sharding<@mesh, [{\"tp\"}]>");
  Operation &matmul = body.front();
  EXPECT_EQ(text(propagation.shardingOf(matmul.getResult(0))),
            "#part.sharding<@mesh, [{\"dp\"}, {\"tp\"}]>");
  EXPECT_NE(propagation.originOf(matmul.getResult(0)).find("annotation"),
            std::string::npos);
  // write() then records it.
  propagation.write();
  EXPECT_TRUE(f.getArgAttr(1, PartDialect::getShardingAttrName()));
  EXPECT_TRUE(matmul.hasAttr(PartDialect::getShardingAttrName()));
}

TEST_F(PropagationTest, AUserAnnotationBeatsAPropagatedOne) {
  // The weight is pinned replicated by the user: the contraction over tp
  // that the input offers does not reach it, and the input keeps its own.
  func::FuncOp f = parseFunction(R"(
    part.mesh @mesh = <["tp"=4]>
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                 %w: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>})
        -> tensor<8x32xf32> {
      %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      return %0 : tensor<8x32xf32>
    })");
  ASSERT_TRUE(f);
  ShardingPropagation propagation(f, mesh());
  ASSERT_TRUE(succeeded(propagation.compute()));
  EXPECT_EQ(text(propagation.shardingOf(f.getArgument(1))),
            "#part.sharding<@mesh, [{}, {}]>");
  EXPECT_EQ(text(propagation.shardingOf(f.getArgument(0))),
            "#part.sharding<@mesh, [{}, {\"tp\"}]>");
  // The result is a pending sum over tp (the contraction is split).
  Operation &matmul = f.getBody().front().front();
  EXPECT_EQ(text(propagation.shardingOf(matmul.getResult(0))),
            "#part.sharding<@mesh, [{}, {}], unreduced={\"tp\"}>");
}

} // namespace
