//===- Pipelines.cpp - the part-spmd pipeline -----------------------------===//

#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace partition::part;

static constexpr llvm::StringLiteral kPipelineAxis = "pp";
static constexpr llvm::StringLiteral kMicroBatchAxis = "mb";

namespace {
/// The mesh part-define-mesh declares for `options.mesh` and the number of
/// pipeline stages (0 without a pp axis).
struct SpmdMesh {
  std::string shape;
  int64_t stages = 0;
};
} // namespace

static SpmdMesh spmdMesh(const SpmdPipelineOptions &options) {
  // A pp axis becomes a micro-batch axis "mb" (of the micro-batches' size)
  // until part-pipeline cuts the stages: the partitioner then writes one
  // micro-batch's program, with all_reduces over "mb" where micro-batches
  // accumulate.
  int64_t stages = 0;
  std::string shape;
  {
    SmallVector<StringRef> parts;
    StringRef(options.mesh).split(parts, ',', -1, false);
    for (StringRef part : parts) {
      auto [name, size] = part.split(':');
      if (name.trim() == kPipelineAxis) {
        (void)size.trim().getAsInteger(10, stages);
        continue;
      }
      shape += (shape.empty() ? "" : ",") + part.trim().str();
    }
    if (stages) {
      int64_t m = options.microBatches ? int64_t(options.microBatches) : stages;
      shape += (shape.empty() ? "" : ",") + std::string(kMicroBatchAxis) +
               ":" + std::to_string(m);
    }
  }
  return {shape, stages};
}

void partition::part::addSpmdShardingPipeline(
    OpPassManager &pm, const SpmdPipelineOptions &options) {
  auto [shape, stages] = spmdMesh(options);
  // Which of the parallel axes the mesh has.
  auto hasAxis = [&](StringRef axis) {
    SmallVector<StringRef> parts;
    StringRef(shape).split(parts, ',', -1, false);
    return llvm::any_of(parts, [&](StringRef part) {
      return part.split(':').first.trim() == axis;
    });
  };
  // Model FLOPs first: data parallelism pads batches, and later passes add
  // the work partitioning repeats (recomputation, replicated ops).
  pm.addPass(createPartModelFlopsPass());
  pm.addPass(createPartDefineMeshPass({options.meshName, shape}));
  // The batch is split over dp, the micro-batches, then ep (the
  // expert-parallel devices hold different data, as in Megatron-Core and
  // DeepSpeed-MoE; part-data-parallel says why ep is minor).
  std::string microBatches = stages ? std::string(kMicroBatchAxis) : "";
  std::string dpAxis = options.dataParallelAxis;
  std::string epAxis = options.expertParallelAxis;
  std::string cpAxis = options.contextParallelAxis;
  bool dp = hasAxis(dpAxis), ep = hasAxis(epAxis), cp = hasAxis(cpAxis);
  std::string first = dp ? dpAxis : stages ? microBatches : epAxis;
  if (dp || ep || stages)
    pm.addPass(createPartDataParallelPass(
        {options.meshName, first, ep && first != epAxis ? epAxis : "",
         microBatches}));
  if (hasAxis(options.tensorParallelAxis))
    pm.addPass(createPartTensorParallelPass(
        {options.meshName, options.tensorParallelAxis, options.sequenceParallel,
         cp ? cpAxis : std::string()}));
  if (ep)
    pm.addPass(createPartExpertParallelPass({options.meshName, epAxis}));
  // The sequence inside each device's batch (the mesh's order pp, dp, cp,
  // tp, as Megatron-Core's); after tensor parallelism, which finds the
  // heads of the forward attentions the ring form rewrites.
  if (cp)
    pm.addPass(createPartContextParallelPass(
        {options.meshName, cpAxis, options.contextAttention}));
  // ZeRO shards the tensor-parallel layouts over the data-parallel axis, so
  // it comes after both; without that axis the pass reports it. Stage 0
  // (plain data parallelism) only reduces each gradient of a training step
  // once, where backward produces it, rather than once per use.
  // With ep, the state of what is not split by expert is sharded over ep
  // too (the whole group the batch is split over).
  // With cp, every gradient is summed over it too, and the state sharded.
  if (options.zero != 0 || dp || ep || cp) {
    std::string group = dp ? dpAxis : cp ? cpAxis : ep ? epAxis : dpAxis;
    pm.addPass(createPartZeroPass(
        {options.meshName, group, ep && group != epAxis ? epAxis : "",
         cp && group != cpAxis ? cpAxis : "", options.zero}));
  }
  pm.addPass(createPartPropagateShardingsPass());
}

void partition::part::addSpmdPartitionPipeline(
    OpPassManager &pm, const SpmdPipelineOptions &options) {
  int64_t stages = spmdMesh(options).stages;
  pm.addPass(createPartPartitionPass(
      {stages ? std::string(kMicroBatchAxis) : std::string(),
       options.testDropMatmulReduction}));
  // Sums issued as soon as their operand is made, so that they run beside
  // the work that does not read them.
  pm.addPass(createPartHoistReductionsPass());
  // What backward can remake cheaper than forward can keep: a gathered
  // activation (the shard is kept, as Megatron keeps it) and an f32 copy.
  pm.addPass(createPartRemakeInBackwardPass());
  if (options.tpCommOverlap > 0)
    pm.addPass(createPartCollectiveMatmulPass(
        {options.tpCommOverlap, options.tensorParallelAxis}));
  if (stages)
    pm.addPass(createPartPipelinePass(
        {stages, options.schedule,
         options.virtualStages
             ? int64_t(options.virtualStages)
             : (options.schedule == "interleaved-1f1b" ||
                        options.schedule == "zb-v" ||
                        options.schedule == "v-half" ||
                        options.schedule == "v-min"
                    ? 2
                    : 1),
         options.stageLayers, options.balance,
         std::string(kMicroBatchAxis), options.unroll, options.gradSync}));
}

void partition::part::addSpmdPipeline(OpPassManager &pm,
                                      const SpmdPipelineOptions &options) {
  addSpmdShardingPipeline(pm, options);
  addSpmdPartitionPipeline(pm, options);
}

LogicalResult partition::part::checkSpmdMeshAxes(
    const SpmdPipelineOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  SmallVector<StringRef> parts;
  StringRef(options.mesh).split(parts, ',', -1, /*KeepEmpty=*/false);
  StringRef dp = options.dataParallelAxis, tp = options.tensorParallelAxis,
            ep = options.expertParallelAxis, cp = options.contextParallelAxis;
  for (StringRef part : parts) {
    StringRef axis = part.split(':').first.trim();
    if (axis == dp || axis == tp || axis == ep || axis == cp)
      continue;
    if (axis == kPipelineAxis) {
      int64_t stages = 0;
      if (part.split(':').second.trim().getAsInteger(10, stages) ||
          stages < 1)
        return emitError("part-spmd: mesh axis \"pp\" needs a size of at "
                         "least 1, got \"" +
                         part + "\"");
      if (options.microBatches < 0)
        return emitError("part-spmd: micro-batches=" +
                         Twine(int64_t(options.microBatches)) +
                         " must be positive");
      continue;
    }
    return emitError("part-spmd: unknown mesh axis \"" + axis +
                     "\" in mesh=\"" + options.mesh + "\"; known axes: \"" +
                     dp + "\" (data parallel), \"" + tp +
                     "\" (tensor parallel), \"" + ep +
                     "\" (expert parallel), \"" + cp +
                     "\" (context parallel), \"pp\" (pipeline stages)");
  }
  // grad-sync=step moves ZeRO's per-micro-batch reduce-scatter of a
  // pipeline's gradients; without both it would change nothing, silently.
  if (StringRef(options.gradSync) != "micro-batch") {
    bool pipelined = llvm::any_of(parts, [](StringRef part) {
      return part.split(':').first.trim() == kPipelineAxis;
    });
    if (!pipelined || options.zero == 0)
      return emitError("part-spmd: grad-sync=" + options.gradSync +
                       " reduce-scatters ZeRO's gradients once per step of a "
                       "pipeline; it needs a pp axis and zero=1, 2 or 3");
  }
  return success();
}

void partition::part::registerSpmdPipeline() {
  // PassPipelineRegistration, with the mesh's axes checked when the
  // pipeline is built: an axis no pass splits over would replicate
  // everything silently.
  registerPassPipeline(
      "part-spmd",
      "partitions a model for a mesh: record the model FLOPs of a step, "
      "declare the mesh, split the batch "
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
