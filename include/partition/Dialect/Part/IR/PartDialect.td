//===- PartDialect.td - the part dialect -------------------*- tablegen -*-===//
//
// The `part` dialect: model ops on ranked static tensors, device meshes,
// sharding annotations and the collectives the partitioner emits.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PARTDIALECT_TD
#define PARTITION_DIALECT_PART_IR_PARTDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Part_Dialect : Dialect {
  let name = "part";
  let cppNamespace = "::partition::part";
  let summary = "Model ops, device meshes, sharding annotations and collectives";
  let description = [{
    `part` describes a neural-network program and how it is spread over a
    set of devices. A module declares one or more device meshes
    (`part.mesh`), each a named grid of devices with named axes. Tensor
    values carry a `#part.sharding` that says, per dimension, which mesh axes
    split it, and over which axes the local value is still a partial sum
    (*unreduced*). Model ops (matmul, layer_norm, attention, ...) keep the
    structure of the source model so that sharding rules can be stated per
    op; collective ops (`part.all_reduce`, `part.all_gather`, ...) appear
    once the program has been partitioned into its per-device form.

    Function arguments are marked with `part.role` (parameter, input or
    label) and `part.name`, and may carry a `part.sharding`; op results carry
    `part.sharding` as a discardable attribute. A function result may carry
    `part.name` and, when it is a gradient (made by `part-autodiff`),
    `part.grad_of = <index of the parameter argument>`. Model ops may carry
    `part.layer = <index>`, the layer (transformer block) they belong to, and
    `part.recomputed` on a copy of a forward op that backward recomputes
    (`part-recompute`). A function marked
    `part.spmd = @mesh` is the per-device program of that mesh: its tensor
    types are local shards and the shardings on its arguments and results say
    how each shard relates to the whole value.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Adds the dialect's attributes (defined beside their storage classes).
    void registerAttributes();

    /// Name of the discardable attribute carrying a value's sharding, on op
    /// results and on function arguments and results.
    static constexpr ::llvm::StringLiteral getShardingAttrName() {
      return ::llvm::StringLiteral("part.sharding");
    }
    /// Name of the function attribute that marks a per-device (SPMD) program
    /// of a mesh: its tensor types are one device's shards.
    static constexpr ::llvm::StringLiteral getSpmdAttrName() {
      return ::llvm::StringLiteral("part.spmd");
    }
    /// Name of the argument and result attribute giving a value's name
    /// (the parameter name in weight files, the output file name).
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("part.name");
    }
    /// Name of the attribute recording where a propagated sharding came from.
    static constexpr ::llvm::StringLiteral getShardingOriginAttrName() {
      return ::llvm::StringLiteral("part.sharding_origin");
    }
    /// Name of the attribute on an inserted collective saying which op (and
    /// which of its operands) needed it.
    static constexpr ::llvm::StringLiteral getOriginAttrName() {
      return ::llvm::StringLiteral("part.origin");
    }
    /// Name of the function-result attribute saying which argument (a
    /// parameter or optimizer state) the result is the new value of: the
    /// runtime writes it back in place after each step.
    static constexpr ::llvm::StringLiteral getUpdatesAttrName() {
      return ::llvm::StringLiteral("part.updates");
    }
    /// Name of the function-argument attribute giving the argument's role.
    static constexpr ::llvm::StringLiteral getRoleAttrName() {
      return ::llvm::StringLiteral("part.role");
    }
    /// Name of the function-result attribute marking a gradient: the index
    /// of the (parameter) argument it is the gradient of (set by
    /// part-autodiff).
    static constexpr ::llvm::StringLiteral getGradOfAttrName() {
      return ::llvm::StringLiteral("part.grad_of");
    }
    /// Name of the argument attribute giving a `state` argument's initial
    /// value when no checkpoint holds it: a float (every element) or a
    /// string (the parameter of that name in the weights, converted to the
    /// argument's element type). Without it, state starts at zero.
    static constexpr ::llvm::StringLiteral getInitAttrName() {
      return ::llvm::StringLiteral("part.init");
    }
    /// Name of the unit argument attribute marking the 0-d f32 `state`
    /// argument that holds the dynamic loss scale (f16 mixed precision):
    /// part-autodiff seeds backward with it and part-optimizer unscales the
    /// gradients, skips non-finite steps and adjusts it.
    static constexpr ::llvm::StringLiteral getLossScaleAttrName() {
      return ::llvm::StringLiteral("part.loss_scale");
    }
    /// Name of the op attribute with which part-optimizer marks where the
    /// update reads a gradient: the index of the operand that is the
    /// gradient, as the optimizer receives it (after partitioning, after its
    /// reduction over dp). Memory reports count these operands' bytes.
    static constexpr ::llvm::StringLiteral getGradientAttrName() {
      return ::llvm::StringLiteral("part.gradient");
    }
    /// Name of the op attribute naming the parameter argument whose gradient
    /// the op's result is, as the update reduces it over data parallelism
    /// (set by part-optimizer; part-zero reads it).
    static constexpr ::llvm::StringLiteral getGradientOfAttrName() {
      return ::llvm::StringLiteral("part.gradient_of");
    }
    /// Name of the argument attribute naming, on an optimizer-state argument
    /// kept per parameter (a moment, a momentum buffer, a master copy), the
    /// parameter argument it belongs to (set by part-optimizer; part-zero
    /// reads it).
    static constexpr ::llvm::StringLiteral getStateOfAttrName() {
      return ::llvm::StringLiteral("part.state_of");
    }
    /// Name of the argument and result attribute giving the unpadded
    /// shape of a value whose dimensions were padded to a multiple of their
    /// shards (part-data-parallel, part-tensor-parallel): the runtime reads
    /// and writes only that part of the whole tensor.
    static constexpr ::llvm::StringLiteral getLogicalShapeAttrName() {
      return ::llvm::StringLiteral("part.logical_shape");
    }
    /// Name of the argument attribute giving the shape a parameter has in
    /// weights files, when the program views it in another shape with the
    /// same elements in the same order (a fused [in, 3 n] projection viewed
    /// as [in, 3, n] by part-split-fused-projections): each view dimension
    /// is part of one stored dimension, consecutive view dimensions making
    /// up each. Optimizer state and updated values of the parameter have it
    /// too.
    static constexpr ::llvm::StringLiteral getStoredShapeAttrName() {
      return ::llvm::StringLiteral("part.stored_shape");
    }
    /// Name of the argument attribute saying that weights files hold the
    /// parameter transposed: the argument views transpose(stored,
    /// permutation), where `part.stored_shape` (required with it) is the
    /// file's shape. The importer sets [1, 0] on a Linear's weight that the
    /// exporter folded into its transpose, so the file keeps torch's
    /// [out, in] while the program reads [in, out]. Optimizer state and
    /// updated values of the parameter have it too.
    static constexpr ::llvm::StringLiteral getStoredPermutationAttrName() {
      return ::llvm::StringLiteral("part.stored_permutation");
    }
    /// Name of the op attribute giving the index of the model layer (the
    /// transformer block `h.3`, `layers.3`) the op belongs to; set by the
    /// importer and the generators, read by part-recompute.
    static constexpr ::llvm::StringLiteral getLayerAttrName() {
      return ::llvm::StringLiteral("part.layer");
    }
    /// Name of the op attribute (a string: a mesh axis) asking a causal
    /// part.attention or part.attention_grad whose sequence is split over
    /// that axis for context parallelism's all-to-all form
    /// (DeepSpeed-Ulysses): the queries, keys and values exchanged with
    /// all-to-alls so that each device holds the whole sequence of a share
    /// of the heads, attention run there, and its results exchanged back.
    /// Set by part-context-parallel (attention=all-to-all).
    static constexpr ::llvm::StringLiteral getContextHeadsAttrName() {
      return ::llvm::StringLiteral("part.context_heads");
    }
    /// Name of the op attribute (a string: a mesh axis) asking a
    /// part.attention_block or part.attention_grad (with lse) whose
    /// sequence is split over that axis for context parallelism's ring
    /// form: the blocks of keys and values passed around the axis with
    /// collective permutes, one block computed per step while the next
    /// arrives, the blocks merged by their log-sum-exp. Set by
    /// part-context-parallel (attention=ring).
    static constexpr ::llvm::StringLiteral getContextRingAttrName() {
      return ::llvm::StringLiteral("part.context_ring");
    }
    /// Name of the f64 result attribute marking an auxiliary loss (a 0-d
    /// float result: a mixture of experts' load-balancing loss) and its
    /// weight: part-append-loss adds weight x the result to the loss.
    static constexpr ::llvm::StringLiteral getLossWeightAttrName() {
      return ::llvm::StringLiteral("part.loss_weight");
    }
    /// Name of the unit attribute marking an op as a recomputation, in
    /// backward, of a forward op (made by part-recompute); it also keeps CSE
    /// from merging the copy back into the original.
    static constexpr ::llvm::StringLiteral getRecomputedAttrName() {
      return ::llvm::StringLiteral("part.recomputed");
    }
    /// Name of the op attribute saying why part-tensor-parallel left an
    /// attention (or the softmax of one left decomposed) whole on every
    /// rank of its axis (a string: the axis, its size and the reason);
    /// --part-explain reports it.
    static constexpr ::llvm::StringLiteral getReplicatedAttrName() {
      return ::llvm::StringLiteral("part.replicated");
    }
    /// Name of the module attribute holding the model FLOPs of one step
    /// (an integer >= 0; i64, or i128 past 2^63): the matmul, batch matmul
    /// and attention products of
    /// the global program, counted by part-model-flops before partitioning
    /// changes them; part-to-plan writes it into the plan for MFU.
    static constexpr ::llvm::StringLiteral getModelFlopsAttrName() {
      return ::llvm::StringLiteral("part.model_flops");
    }
    /// Pipeline stages written as fragments and a schedule table
    /// (docs/design/2026-12-05-pipeline-schedule-as-data.md).
    /// On a fragment function: the kind of step it runs, "P" (once per
    /// step, first), or "F", "B", "Bi", "W" with ".c" for chunk c.
    static constexpr ::llvm::StringLiteral getFragmentAttrName() {
      return ::llvm::StringLiteral("part.fragment");
    }
    /// On a fragment: it runs in place of the fragment of the same name for
    /// that kind's last step in the table (the last micro-batch it adds to
    /// the accumulators), and completes each accumulation there -- the mean
    /// and the dp all_reduce -- so they overlap the rest of that step.
    static constexpr ::llvm::StringLiteral getFinalAttrName() {
      return ::llvm::StringLiteral("part.final");
    }
    /// On a stage function (which runs once per step, after its schedule):
    /// its fragments, in the order its program holds them.
    static constexpr ::llvm::StringLiteral getFragmentsAttrName() {
      return ::llvm::StringLiteral("part.fragments");
    }
    /// On a fragment's arguments and results, and a stage function's
    /// accumulator arguments: what the value is across the stage's steps,
    /// "arg:N" (argument N of the stage function), "stash:K" (kept from
    /// one step to a later one of the same micro-batch), "acc:K" (a sum
    /// over the micro-batches, zero at the start of the step), "hold:K"
    /// (made once per step by the P fragment) or "done:K" (sum K completed
    /// into another shape by a final fragment: reduce-scattered once per
    /// step under grad-sync=step).
    static constexpr ::llvm::StringLiteral getSlotAttrName() {
      return ::llvm::StringLiteral("part.slot");
    }
    /// On a stage function's argument: it holds this many micro-batches
    /// along dimension 0, one per step of the schedule.
    static constexpr ::llvm::StringLiteral getMicroBatchesAttrName() {
      return ::llvm::StringLiteral("part.micro_batches");
    }
  }];
}

// Every tensor an op reads or makes has an element count and a byte size
// that fit in int64 (see verifyTensorSizes in PartOps.h).
def Part_BoundedTensorSizes : NativeOpTrait<"BoundedTensorSizes"> {
  let cppNamespace = "::partition::part::PartOpTrait";
}

class Part_Op<string mnemonic, list<Trait> traits = []>
    : Op<Part_Dialect, mnemonic, !listconcat(traits, [Part_BoundedTensorSizes])>;

class Part_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Part_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // PARTITION_DIALECT_PART_IR_PARTDIALECT_TD
