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

LogicalResult partition::part::checkSpmdMeshAxes(
    const SpmdPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  SmallVector<StringRef> parts;
  StringRef(options.mesh).split(parts, ',', -1, /*KeepEmpty=*/false);
  StringRef dp = options.dataParallelAxis, tp = options.tensorParallelAxis;
  for (StringRef part : parts) {
    StringRef axis = part.split(':').first.trim();
    if (axis == dp || axis == tp)
      continue;
    if (axis == "pp")
      return emitError("part-spmd: mesh axis \"pp\": pipeline stages are not "
                       "supported yet (known axes: \"" +
                       dp + "\" (data parallel), \"" + tp +
                       "\" (tensor parallel))");
    return emitError("part-spmd: unknown mesh axis \"" + axis +
                     "\" in mesh=\"" + options.mesh + "\"; known axes: \"" +
                     dp + "\" (data parallel), \"" + tp +
                     "\" (tensor parallel)");
  }
  return success();
}

void partition::part::registerSpmdPipeline() {
  // PassPipelineRegistration, with the mesh's axes checked when the
  // pipeline is built: an axis no pass splits over would replicate
  // everything silently.
  registerPassPipeline(
      "part-spmd",
      "partitions a model for a mesh: declare the mesh, split the batch "
      "over the data-parallel axis, apply Megatron splits over the "
      "tensor-parallel axis, optionally shard optimizer state, gradients and "
      "parameters over the data-parallel axis (zero=1..3), propagate "
      "shardings, partition",
      [](OpPassManager &pm, StringRef optionsText,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        SpmdPipelineOptions options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        // The option's own error: no source location applies, so none is
        // printed (MLIR's handler would say "loc(unknown)").
        if (failed(checkSpmdMeshAxes(options, [](const Twine &message) {
              llvm::errs() << "error: " << message << "\n";
              return failure();
            })))
          return failure();
        addSpmdPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(SpmdPipelineOptions());
      });
}
