//===- CostTest.cpp - cost queries against hand-computed figures ----------===//
//
// Analysis/Cost.h: the bytes each collective moves per device, the FLOPs of
// a matmul, and the bytes resident per device for a Megatron MLP block
// trained with AdamW on dp:2,tp:4 with ZeRO 0 to 3, each figure computed by
// hand below.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

class CostTest : public ::testing::Test {
protected:
  CostTest() {
    ctx.getOrLoadDialect<PartDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }
  MLIRContext ctx;
};

TEST_F(CostTest, CollectivesMoveRingWeightedBytes) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    part.mesh @mesh = <["dp"=2, "tp"=4]>
    func.func @f(%a: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x16xf32>, tensor<2x16xf32>, tensor<4x16xf32>, tensor<4x4xf32>)
        attributes {part.spmd = @mesh} {
      %0 = part.all_reduce %a on @mesh axes ["tp"] sum : tensor<4x16xf32>
      %1 = part.all_gather %a on @mesh axes ["tp"] dim 0 : tensor<4x16xf32> -> tensor<16x16xf32>
      %2 = part.reduce_scatter %a on @mesh axes ["dp"] dim 0 sum : tensor<4x16xf32> -> tensor<2x16xf32>
      %3 = part.all_reduce %a on @mesh axes ["dp", "tp"] sum : tensor<4x16xf32>
      %4 = part.all_slice %a on @mesh axes ["tp"] dim 1 : tensor<4x16xf32> -> tensor<4x4xf32>
      return %0, %1, %2, %3, %4 : tensor<4x16xf32>, tensor<16x16xf32>, tensor<2x16xf32>, tensor<4x16xf32>, tensor<4x4xf32>
    })",
                                                             &ctx);
  ASSERT_TRUE(module);
  MeshAttr mesh = module->lookupSymbol<MeshOp>("mesh").getMesh();
  auto f = module->lookupSymbol<func::FuncOp>("f");
  SmallVector<CollectiveCost> costs;
  f.walk([&](Operation *op) {
    if (auto c = collectiveCost(op, mesh))
      costs.push_back(*c);
  });
  ASSERT_EQ(costs.size(), 5u);
  // 4 x 16 f32 = 256 bytes.
  EXPECT_EQ(costs[0].kind, "all_reduce");
  EXPECT_EQ(costs[0].groupSize, 4);
  EXPECT_EQ(costs[0].operandBytes, 256);
  EXPECT_EQ(costs[0].movedBytes, 384); // 2 * 3/4 * 256
  EXPECT_EQ(costs[1].movedBytes, 768); // 3/4 of the 1024-byte result
  EXPECT_EQ(costs[2].movedBytes, 128); // 1/2 of 256
  EXPECT_EQ(costs[3].groupSize, 8);
  EXPECT_EQ(costs[3].movedBytes, 448); // 2 * 7/8 * 256
  EXPECT_EQ(costs[4].movedBytes, 0);   // each keeps its block
}

TEST_F(CostTest, MatmulFlops) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%x: tensor<2x4x16xf32>, %w: tensor<16x32xf32>) -> tensor<2x4x32xf32> {
      %0 = part.matmul %x, %w : (tensor<2x4x16xf32>, tensor<16x32xf32>) -> tensor<2x4x32xf32>
      return %0 : tensor<2x4x32xf32>
    })",
                                                             &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  Operation &matmul = f.getBody().front().front();
  EXPECT_EQ(flopsOf(&matmul), 2 * 2 * 4 * 32 * 16);
}

// Attention's FLOPs and bytes as its kernels run: a block of scores goes
// through memory (forward 8 + 2 e bytes per score, backward 16 + 6 e, e
// the element size), on top of the operands and results; the backward's
// FLOPs are q k^T again, do v^T, p^T do, ds k and ds^T q.
TEST_F(CostTest, AttentionFlopsAndScoreBlocks) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x32xbf16>, %dy: tensor<2x4x8x32xbf16>)
        -> (tensor<2x4x8x32xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x32xbf16>) {
      %o = part.attention %q, %k, %v causal : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x32xbf16>) -> tensor<2x4x8x32xbf16>
      %dq, %dk, %dv = part.attention_grad %q, %k, %v, %dy causal : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x32xbf16>, tensor<2x4x8x32xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x32xbf16>)
      return %o, %dq, %dk, %dv : tensor<2x4x8x32xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x32xbf16>
    })",
                                                             &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  Operation &forward = f.getBody().front().front();
  Operation &backward = *std::next(f.getBody().front().begin());
  int64_t scores = 2 * 4 * 8 * 8; // B H Sq Sk
  EXPECT_EQ(flopsOf(&forward), 2 * scores * 16 + 2 * scores * 32);
  EXPECT_EQ(flopsOf(&backward), 6 * scores * 16 + 4 * scores * 32);
  EXPECT_EQ(attentionScratchBytes(&forward), scores * (8 + 2 * 2));
  EXPECT_EQ(attentionScratchBytes(&backward), scores * (16 + 6 * 2));
  // q, k, v and the result: 2 * (1024 + 512 + 1024 + 2048) bytes.
  EXPECT_EQ(memoryBytesOf(&forward, /*fuse=*/false),
            2 * (1024 + 512 + 1024 + 2048) + scores * 12);
}

/// The resident bytes of a Megatron MLP block (x [8, 16] -> 64 -> 16, a mean
/// loss) trained with AdamW, partitioned on dp:2,tp:4 with ZeRO `stage`.
ResidentBytes mlpBlock(MLIRContext &ctx, unsigned stage) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @f(%x: tensor<8x16xf32> {part.name = "x", part.role = #part.role<input>},
                 %w1: tensor<16x64xf32> {part.name = "w1", part.role = #part.role<parameter>},
                 %b1: tensor<64xf32> {part.name = "b1", part.role = #part.role<parameter>},
                 %w2: tensor<64x16xf32> {part.name = "w2", part.role = #part.role<parameter>},
                 %b2: tensor<16xf32> {part.name = "b2", part.role = #part.role<parameter>}) -> tensor<f32> {
      %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
      %1 = part.add %0, %b1 : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
      %2 = part.gelu %1 tanh : tensor<8x64xf32>
      %3 = part.matmul %2, %w2 : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
      %4 = part.add %3, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
      %5 = part.reduce_mean %4 dims [0, 1] : tensor<8x16xf32> -> tensor<f32>
      return %5 : tensor<f32>
    })",
                                                             &ctx);
  EXPECT_TRUE(module);
  if (!module)
    return {};
  PassManager pm(&ctx);
  pm.addPass(createPartAutodiffPass());
  pm.addPass(createPartOptimizerPass());
  SpmdPipelineOptions options;
  options.mesh = "dp:2,tp:4";
  options.zero = stage;
  addSpmdPipeline(pm, options);
  EXPECT_TRUE(succeeded(pm.run(*module)));
  auto f = module->lookupSymbol<func::FuncOp>("f");
  EXPECT_TRUE(getSpmdMesh(f));
  return residentBytes(f, module->lookupSymbol<MeshOp>("mesh").getMesh());
}

// Liveness: x [8, 16] -> h [8, 64] -> g = gelu(h) -> y [8, 16] -> mean.
// h (2048 bytes) lives until gelu, g (2048) until the second matmul: both
// at once at the gelu, 4096 bytes; y (512) and the loss (4) after.
TEST_F(CostTest, LivePeakIsTheMostBytesLiveAtOnce) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    part.mesh @mesh = <["dp"=1]>
    func.func @f(%x: tensor<8x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x16xf32>) -> tensor<f32>
        attributes {part.spmd = @mesh} {
      %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
      %1 = part.gelu %0 tanh : tensor<8x64xf32>
      %2 = part.matmul %1, %w2 : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
      %3 = part.reduce_mean %2 dims [0, 1] : tensor<8x16xf32> -> tensor<f32>
      return %3 : tensor<f32>
    })",
                                                             &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  ResidentBytes r =
      residentBytes(f, module->lookupSymbol<MeshOp>("mesh").getMesh());
  EXPECT_EQ(r.livePeak, 4096);
  EXPECT_EQ(r.inputs, 8 * 16 * 4 + 16 * 64 * 4 + 64 * 16 * 4);
}

TEST_F(CostTest, ResidentBytesOfAMegatronBlockWithZero) {
  // Tensor parallelism splits w1 by columns and w2 by rows over tp (4):
  // w1 [16, 16] and w2 [16, 16] locally, 1024 bytes each; b1 follows w1's
  // columns, [16], 64 bytes; b2 stays whole, [16], 64 bytes. 2176 bytes of
  // parameters per device, and 16*64 + 64 + 64*16 + 16 = 2128 elements in
  // the whole model.
  // AdamW keeps m and v per parameter and a step counter (an f32 scalar).
  // ZeRO splits state (1), gradients (2) and parameters (3) over dp (2):
  // every local parameter halves (each has a dimension of 16), so the two
  // moments take 2 x 1088 bytes, and the gradients the optimizer reads (as
  // reduced over dp) halve from stage 1, where they are reduce-scattered
  // to the state's layout. The input is x [8, 16] split over dp: 256 bytes.
  struct Expected {
    unsigned stage;
    int64_t parameters, state, gradients;
  } expected[] = {
      {0, 2176, 2 * 2176 + 4, 2176},
      {1, 2176, 2 * 1088 + 4, 1088},
      {2, 2176, 2 * 1088 + 4, 1088},
      {3, 1088, 2 * 1088 + 4, 1088},
  };
  for (const Expected &e : expected) {
    SCOPED_TRACE("ZeRO stage " + std::to_string(e.stage));
    ResidentBytes r = mlpBlock(ctx, e.stage);
    EXPECT_EQ(r.parameters, e.parameters);
    EXPECT_EQ(r.state, e.state);
    EXPECT_EQ(r.gradients, e.gradients);
    EXPECT_EQ(r.inputs, 256);
    EXPECT_EQ(r.globalParameterElements, 2128);
  }
}

} // namespace
