//===- Passes.h - part dialect passes ---------------------------*- C++ -*-===//
//
// Declares the passes of the `part` dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H
#define PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H

#include "partition/Dialect/Part/IR/PartDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <vector>

namespace partition::part {

/// The most bytes of gradients one collective of `part-grad-buckets`
/// carries unless told otherwise (PyTorch DDP's 25 MB); the planner costs
/// the buckets it compiles with this size.
inline constexpr int64_t kGradBucketBytes = 25'000'000;

/// The bucket size compiled plans use over `dp` devices: kGradBucketBytes,
/// or 1M fp32 elements per device where that is more (Megatron-Core's rule,
/// max(40M, 1M x dp) elements), so that each ring step moves enough bytes
/// that the 2 (dp - 1) latencies of a bucket do not dominate it.
inline int64_t gradBucketBytes(int64_t dp) {
  return std::max<int64_t>(kGradBucketBytes, dp * 4'000'000);
}

#define GEN_PASS_DECL
#include "partition/Dialect/Part/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "partition/Dialect/Part/Transforms/Passes.h.inc"

/// The balanced order of a sequence of `length` positions split over
/// `devices` (context parallelism): chunks 0, 2d-1, 1, 2d-2, ... of
/// length / (2d) positions each, so that device r holds chunks r and
/// 2d-1-r. Element i is the position that goes to place i.
std::vector<int64_t> balancedSequenceOrder(int64_t length, int64_t devices);

/// Options of the part-spmd pipeline.
struct SpmdPipelineOptions
    : public mlir::PassPipelineOptions<SpmdPipelineOptions> {
  Option<std::string> mesh{*this, "mesh",
                           llvm::cl::desc("mesh axes and sizes, e.g. "
                                          "dp:2,tp:4 or dp:2,ep:4,pp:2 (any "
                                          "may be absent)")};
  Option<std::string> meshName{*this, "mesh-name",
                               llvm::cl::desc("name of the mesh"),
                               llvm::cl::init("mesh")};
  Option<std::string> dataParallelAxis{*this, "dp-axis",
                                       llvm::cl::desc("the data-parallel axis"),
                                       llvm::cl::init("dp")};
  Option<std::string> tensorParallelAxis{
      *this, "tp-axis", llvm::cl::desc("the tensor-parallel axis"),
      llvm::cl::init("tp")};
  Option<std::string> expertParallelAxis{
      *this, "ep-axis",
      llvm::cl::desc("the expert-parallel axis (the experts of "
                     "mixture-of-experts layers, and the batch inside dp)"),
      llvm::cl::init("ep")};
  Option<std::string> contextParallelAxis{
      *this, "cp-axis",
      llvm::cl::desc("the context-parallel axis (the sequence, in the "
                     "balanced causal order)"),
      llvm::cl::init("cp")};
  Option<std::string> contextAttention{
      *this, "cp-attention",
      llvm::cl::desc("with a cp axis: all-gather (causal attention's keys "
                     "and values gathered whole), ring (their blocks passed "
                     "around cp, one computed while the next arrives) or "
                     "all-to-all (DeepSpeed-Ulysses: the whole sequence of "
                     "a share of the heads)"),
      llvm::cl::init("all-gather")};
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("split the residual stream by sequence over the "
                     "tensor-parallel axis between blocks"),
      llvm::cl::init(false)};
  Option<unsigned> zero{
      *this, "zero",
      llvm::cl::desc("ZeRO stage 0-3: shard optimizer state (1), also "
                     "gradients (2), also parameters (3) over the "
                     "data-parallel axis"),
      llvm::cl::init(0)};
  Option<int64_t> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("with a pp axis: micro-batches per step (default: the "
                     "number of stages)"),
      llvm::cl::init(0)};
  Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("with a pp axis: gpipe, 1f1b, interleaved-1f1b or "
                     "zero-bubble"),
      llvm::cl::init("1f1b")};
  Option<int64_t> virtualStages{
      *this, "virtual-stages",
      llvm::cl::desc("with schedule=interleaved-1f1b: chunks of layers per "
                     "stage (default 2)"),
      llvm::cl::init(0)};
  Option<std::string> stageLayers{
      *this, "stage-layers",
      llvm::cl::desc("with a pp axis: the layers of each stage, e.g. "
                     "0-11,12-23 (default: balanced by FLOPs)"),
      llvm::cl::init("")};
  Option<std::string> balance{
      *this, "balance",
      llvm::cl::desc("with a pp axis: what the stage cut balances, flops "
                     "(time) or memory (weights, gradients, optimizer state "
                     "and in-flight activations per stage)"),
      llvm::cl::init("flops")};
  Option<bool> unroll{
      *this, "unroll",
      llvm::cl::desc("with a pp axis: write each stage's schedule unrolled "
                     "(a copy of its ops per micro-batch, the reference "
                     "form) instead of fragments and a schedule table"),
      llvm::cl::init(false)};
  Option<std::string> gradSync{
      *this, "grad-sync",
      llvm::cl::desc("with a pp axis and zero=1 or 2: reduce-scatter each "
                     "micro-batch's gradients (micro-batch) or the whole "
                     "gradients once per step, in the last backward (step, "
                     "as Megatron's distributed optimizer)"),
      llvm::cl::init("micro-batch")};
  Option<int64_t> tpCommOverlap{
      *this, "tp-comm-overlap",
      llvm::cl::desc("with a tensor-parallel axis: split each matmul that "
                     "feeds or reads a collective over it into this many "
                     "chunks of rows, each chunk's collective overlapping "
                     "the next chunk's product (part-collective-matmul; "
                     "Megatron-Core's --tp-comm-overlap); 0: off"),
      llvm::cl::init(0)};
  /// TEST ONLY: part-partition's test-drop-matmul-reduction (a wrong
  /// program on purpose, for partition-check's tests).
  Option<bool> testDropMatmulReduction{
      *this, "test-drop-matmul-reduction",
      llvm::cl::desc("TEST ONLY: drop the all-reduce that completes a "
                     "matmul over a split contracted dimension"),
      llvm::cl::init(false)};
};

/// Adds the part-spmd pipeline to `pm`: part-model-flops (the global
/// program's model FLOPs, before anything changes them), part-define-mesh,
/// part-data-parallel (when the mesh has the data-parallel axis),
/// part-tensor-parallel (when it has the tensor-parallel axis), part-zero
/// (when `zero` is not 0), part-propagate-shardings, part-partition, and
/// with a `pp` axis part-pipeline (the batch is split over a micro-batch
/// axis "mb" in its place until then).
/// `--mlir-print-ir-after-all` shows the IR after each stage.
void addSpmdPipeline(mlir::OpPassManager &pm,
                     const SpmdPipelineOptions &options);

/// The first half of part-spmd: everything up to and including
/// part-propagate-shardings, which leaves the global program with a sharding
/// on every value (partition-check cuts that program and partitions the cut
/// with the same shardings).
void addSpmdShardingPipeline(mlir::OpPassManager &pm,
                             const SpmdPipelineOptions &options);

/// The second half of part-spmd: part-partition, and part-pipeline with a
/// `pp` axis.
void addSpmdPartitionPipeline(mlir::OpPassManager &pm,
                              const SpmdPipelineOptions &options);

/// Checks that every axis of `options.mesh` is the data-parallel, the
/// tensor-parallel or the pipeline axis (`pp`), and the pipeline options;
/// reports through `emitError` otherwise.
mlir::LogicalResult checkSpmdMeshAxes(
    const SpmdPipelineOptions &options,
    llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> emitError);

/// Registers `--part-spmd`; it checks the mesh with checkSpmdMeshAxes.
void registerSpmdPipeline();

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PASSES_H
