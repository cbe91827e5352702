//===- Pipelines.cpp - the part-spmd pipeline -----------------------------===//

#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace partition::part;

void partition::part::addSpmdPipeline(OpPassManager &pm,
                                      const SpmdPipelineOptions &options) {
  std::string shape = options.mesh;
  // Which of the parallel axes the mesh has.
  auto hasAxis = [&](StringRef axis) {
    SmallVector<StringRef> parts;
    StringRef(shape).split(parts, ',', -1, false);
    return llvm::any_of(parts, [&](StringRef part) {
      return part.split(':').first.trim() == axis;
    });
  };
  pm.addPass(createPartDefineMeshPass({options.meshName, shape}));
  if (hasAxis(options.dataParallelAxis))
    pm.addPass(createPartDataParallelPass(
        {options.meshName, options.dataParallelAxis}));
  if (hasAxis(options.tensorParallelAxis))
    pm.addPass(createPartTensorParallelPass({options.meshName,
                                             options.tensorParallelAxis,
                                             options.sequenceParallel}));
  // ZeRO shards the tensor-parallel layouts over the data-parallel axis, so
  // it comes after both; without that axis the pass reports it. Stage 0
  // (plain data parallelism) only reduces each gradient of a training step
  // once, where backward produces it, rather than once per use.
  if (options.zero != 0 || hasAxis(options.dataParallelAxis))
    pm.addPass(createPartZeroPass(
        {options.meshName, options.dataParallelAxis, options.zero}));
  pm.addPass(createPartPropagateShardingsPass());
  pm.addPass(createPartPartitionPass());
}

void partition::part::registerSpmdPipeline() {
  PassPipelineRegistration<SpmdPipelineOptions>(
      "part-spmd",
      "partitions a model for a mesh: declare the mesh, split the batch "
      "over the data-parallel axis, apply Megatron splits over the "
      "tensor-parallel axis, optionally shard optimizer state, gradients and "
      "parameters over the data-parallel axis (zero=1..3), propagate "
      "shardings, partition",
      addSpmdPipeline);
}
