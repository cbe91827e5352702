//===- ZeroPrefetchTest.cpp - part-zero-prefetch groups by part.layer -----===//
//
// part-zero-prefetch with ops that carry `part.layer`: the gathers feeding
// one layer move together, one layer ahead. A unit test because the dialect
// does not accept `part.layer` yet, so the lit tests cannot spell it: the
// module is parsed and the pass run without the verifier.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace partition::part;

namespace {

// Two layers of weight + bias, gathered right before their uses (forward
// only); every compute op names its layer.
constexpr const char *kModule = R"mlir(
part.mesh @mesh = <["dp"=2]>
func.func @f(%x: tensor<2x8xf32> {part.role = #part.role<input>},
             %w0: tensor<4x8xf32> {part.role = #part.role<parameter>},
             %b0: tensor<4xf32> {part.role = #part.role<parameter>},
             %w1: tensor<4x8xf32> {part.role = #part.role<parameter>},
             %b1: tensor<4xf32> {part.role = #part.role<parameter>})
    -> tensor<2x8xf32> attributes {part.spmd = @mesh} {
  %gw0 = part.all_gather %w0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h0 = part.matmul %x, %gw0 {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %gb0 = part.all_gather %b0 on @mesh axes ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %y0 = part.add %h0, %gb0 {part.layer = 0 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %a0 = part.relu %y0 {part.layer = 0 : i64} : tensor<2x8xf32>
  %gw1 = part.all_gather %w1 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
  %h1 = part.matmul %a0, %gw1 {part.layer = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %gb1 = part.all_gather %b1 on @mesh axes ["dp"] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %y1 = part.add %h1, %gb1 {part.layer = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %y1 : tensor<2x8xf32>
}
)mlir";

/// The ops of @f's body by name, in order, with the gathered argument's
/// number for a gather of an argument ("all_gather1").
static std::vector<std::string> order(ModuleOp module) {
  std::vector<std::string> names;
  auto f = *module.getOps<func::FuncOp>().begin();
  for (Operation &op : f.getBody().front()) {
    std::string name = op.getName().stripDialect().str();
    if (auto arg = dyn_cast<BlockArgument>(op.getOperand(0));
        arg && name == "all_gather")
      name += std::to_string(arg.getArgNumber());
    names.push_back(name);
  }
  return names;
}

static std::vector<std::string> run(StringRef source, bool flat = false) {
  MLIRContext ctx;
  ctx.getOrLoadDialect<PartDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, config);
  if (!module)
    return {"parse error"};
  PassManager pm(&ctx);
  pm.enableVerifier(false);
  PartZeroPrefetchPassOptions options;
  options.flat = flat;
  pm.addPass(createPartZeroPrefetchPass(options));
  if (failed(pm.run(*module)))
    return {"pass failed"};
  return order(*module);
}

TEST(ZeroPrefetchTest, GroupsByLayer) {
  // A layer's gathers are issued together: layer 0's bias joins its weight,
  // and layer 1's two gathers move together above layer 0's compute (the
  // first use of layer 0's gathers), not above layer 0's gathers.
  std::vector<std::string> expected = {
      "all_gather1", "all_gather2", "all_gather3", "all_gather4", "matmul",
      "add",         "relu",        "matmul",      "add",         "return"};
  EXPECT_EQ(run(kModule), expected);
}

TEST(ZeroPrefetchTest, FlatGathersOneBucketPerLayer) {
  // flat=true (the pass's default): each layer's two gathers become one of
  // their flattened, concatenated shards, sliced back to each parameter
  // right before its first use (after the next layer's gather: the compute
  // stream runs in order and would wait there for the gather).
  std::vector<std::string> gather = {"reshape", "reshape", "concat",
                                     "all_gather"};
  std::vector<std::string> expected = gather;
  expected.insert(expected.end(), gather.begin(), gather.end());
  for (const char *op :
       {"slice", "reshape", "matmul", "slice", "reshape", "add", "relu",
        "slice", "reshape", "matmul", "slice", "reshape", "add", "return"})
    expected.push_back(op);
  EXPECT_EQ(run(kModule, /*flat=*/true), expected);
}

TEST(ZeroPrefetchTest, OneParameterAheadWithoutLayers) {
  std::string source = kModule;
  for (size_t at; (at = source.find(" {part.layer = ")) != std::string::npos;)
    source.erase(at, source.find('}', at) - at + 1);
  // Each gather moves above the first use of the one before it.
  std::vector<std::string> expected = {
      "all_gather1", "all_gather2", "matmul", "all_gather3", "add",
      "relu",        "all_gather4", "matmul", "add",         "return"};
  EXPECT_EQ(run(source), expected);
}

} // namespace
