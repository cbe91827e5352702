//===- Passes.td - part dialect passes ----------------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD
#define PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartStripShardingPass : Pass<"part-strip-sharding", "::mlir::ModuleOp"> {
  let summary = "removes every sharding annotation, leaving the unpartitioned program";
  let description = [{
    Drops `part.sharding` from function arguments, function results and op
    results, and replaces each `part.sharding_constraint` by its operand. The
    result computes the same function on a single device: it is the
    reference that every partitioned plan of the module is checked against.
    Meshes stay, since collectives and other annotations may still name them;
    with `remove-meshes` they are erased too when nothing refers to them.

    Before:
    ```mlir
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}] # "}]" # [{>}) -> tensor<8x16xf32> {
      %0 = part.sharding_constraint %x <@mesh, [{}, {"tp"}] # "}]" # [{> : tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
      return %x : tensor<8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"removeMeshes", "remove-meshes", "bool", /*default=*/"false",
           "also erase part.mesh ops that nothing refers to any more">
  ];
}

def PartShardingReportPass : Pass<"part-sharding-report", "::mlir::ModuleOp"> {
  let summary = "prints how each function's arguments and results are split over the mesh";
  let description = [{
    An analysis that leaves the IR unchanged. For every function whose
    arguments or results carry a `part.sharding`, it prints one row per
    argument and result: role, global type, sharding, the shape each device
    holds and its bytes, then the parameter bytes per device against the
    whole model. A value without an annotation is listed as replicated.
    After partitioning (`part-spmd`), a per-device program's types are the
    local ones: the report then derives the global shapes from them.

    ```
    func @mlp3 on @mesh ["dp"=2, "tp"=4] (8 devices)
      value     role       global       sharding      local       bytes/device
      arg 0     input      32x64xf32    [{"dp"}, {}] # "}]" # [{  16x64xf32   4096
      arg 2     parameter  64x128xf32   [{}, {"tp"}] # "}]" # [{  64x32xf32   8192
      ...
      parameters: 104488 bytes in all, 30376 bytes per device (29.1%)
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartPrintShardingRulesPass
    : Pass<"part-print-sharding-rules", "::mlir::ModuleOp"> {
  let summary = "reports every op's sharding rule as a remark";
  let description = [{
    For each op with a sharding rule, emits a remark giving its factors: per
    operand and result, the factors of each dimension (major to minor; `1`
    for a broadcast dimension), each factor's size, and the factors that are
    not parallel. Checks every rule against its op on the way. An op of the
    part dialect without a rule is reported as an error: it could not be
    partitioned.

    ```mlir
    %2 = part.matmul %0, %1 : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
    ```
    gives
    ```
    remark: sharding rule ([a, b, d], [d, c]) -> ([a, b, c]) a=8 b=16 c=256 d=64; d reduction
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartPropagateShardingsPass
    : Pass<"part-propagate-shardings", "::mlir::ModuleOp"> {
  let summary = "gives every value a sharding, from the user's annotations";
  let description = [{
    Spreads the shardings of annotated function arguments and results,
    `part.sharding_constraint`s and annotated op results through every op by
    its sharding rule, forward and backward, until nothing changes. A factor
    takes its mesh axes from the highest-priority value that carries some (a
    user annotation over a propagated sharding; at equal priority, a finer
    split of the same axes, or else the larger value's split, since the
    smaller value is cheaper to reshard); need-replication factors never
    take axes; axes
    on a reduction factor make the result unreduced over them. Each value that
    receives a sharding records its source in `part.sharding_origin`.
    Per-device (`part.spmd`) functions are left alone. An op of the dialect
    without a sharding rule is an error. A sharding that would split a
    dimension its axes do not divide is not applied, and a remark says which
    value and dimension stay whole.

    Before:
    ```mlir
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}] # "}]" # [{>},
                 %w: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}] # "}]" # [{>}) -> tensor<8x32xf32> {
      %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      %1 = part.relu %0 : tensor<8x32xf32>
      return %1 : tensor<8x32xf32>
    }
    ```
    After, `%0` and `%1` carry `#part.sharding<@mesh, [{"dp"}, {"tp"}] # "}]" # [{>`.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartCollectiveMatmulPass : Pass<"part-collective-matmul", "::mlir::ModuleOp"> {
  let summary = "splits tensor-parallel matmuls and their collectives into chunks that overlap";
  let description = [{
    On per-device (`part.spmd`) functions, splits the matmuls next to a
    collective over `axis` into `chunks` matmuls of their rows, each chunk
    with its own collective, issued so that one chunk's collective runs on
    the runtime's communication lane while the next chunk's product
    computes (Megatron-Core's `--tp-comm-overlap` in its split-pipelined
    form; XLA's collective matmul). Without it a collective that a matmul
    feeds, or whose result a matmul reads, waits for the whole product or
    holds it up.

    - `matmul -> all_reduce sum`: chunks of any row dimension of the lhs
      that `chunks` divides; the sums are concatenated.
    - `matmul -> reduce_scatter sum` over row dimension `d` of `parts`
      devices: device j keeps rows [j, j + 1) / parts, so chunk i takes,
      of every device's block, its i-th part (the rows viewed as `[parts,
      chunks, r]`, slice i of the middle dimension); the scattered chunks
      concatenated are the device's block in order.
    - `all_gather` over row dimension `d` read by matmuls (lhs, not
      transposed, weight made before the gather): chunk i of the local rows
      gathered (`[parts, r]`: rows (j, i) of the `[parts, chunks, r]` view),
      gather i + 1 issued before chunk i's products; each product, and the
      gathered value where anything else reads it (a weight gradient),
      reassembled in row order.

    Shapes the chunks do not divide are left as they are. Every result is
    the same numbers as before (each row's product is computed alone; sums
    and gathers are elementwise across devices). `part-spmd` runs it with
    `tp-comm-overlap=N`.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"4",
           "chunks of rows per matmul (at least 2)">,
    Option<"axis", "axis", "std::string", /*default=*/"\"tp\"",
           "the mesh axis whose collectives (over it and any other axes) are split">
  ];
}

def PartRemakeInBackwardPass : Pass<"part-remake-in-backward", "::mlir::ModuleOp"> {
  let summary = "backward remakes gathered activations and widened casts instead of keeping them";
  let description = [{
    On per-device (`part.spmd`) functions of a training step: a value made
    in forward (the ops the step's plain results need) and read by backward
    after another layer's work (an op of another `part.layer` between) is
    remade for backward when remaking it is cheaper than keeping it
    (docs/design/2026-12-07-remake-in-backward.md):
    - a `part.all_gather` of an activation (not of a parameter or optimizer
      state): sequence parallelism's gathered matmul input, `t` times its
      shard, which the weight gradient reads. As Megatron-LM does, the shard
      is kept and gathered again, as part of the reader's layer, above the
      GEMM of that layer's backward before the reader (where the layer's
      backward begins without one; right before the reader without
      `part.layer`), so that the gather runs beside that GEMM;
    - a `part.cast` to a wider float type (mixed precision's f32 copy of a
      bf16 value, read by a norm's backward): cast again right before its
      first backward reader, keeping the 2-byte value.
    Backward's readers read the clone, forward's the original: the same
    bits, so nothing computed changes. `part-spmd` runs it after
    `part-partition`.

    ```mlir
    // Before: the gathered %g (t x the shard) lives until the weight gradient
    %g = part.all_gather %x on @mesh axes ["tp"] dim 1 : ...
    %y = part.matmul %g, %w : ...
    ...
    %dx = part.matmul %dy, %w transpose_b {part.layer = 0} : ...
    %dw = part.matmul %g, %dy transpose_a {part.layer = 0} : ...
    // After: backward gathers the shard %x again, beside the input gradient
    %g = part.all_gather %x on @mesh axes ["tp"] dim 1 : ...
    %y = part.matmul %g, %w : ...
    ...
    %g2 = part.all_gather %x on @mesh axes ["tp"] dim 1 {part.layer = 0} : ...
    %dx = part.matmul %dy, %w transpose_b {part.layer = 0} : ...
    %dw = part.matmul %g2, %dy transpose_a {part.layer = 0} : ...
    ```
  }];
}

def PartHoistReductionsPass : Pass<"part-hoist-reductions", "::mlir::ModuleOp"> {
  let summary = "issues each all-reduce and reduce-scatter right after its operand is made";
  let description = [{
    On per-device (`part.spmd`) functions, moves every `part.all_reduce`
    and `part.reduce_scatter` up to right after the op that makes its
    operand (several sums of one value keep their order). `part-partition`
    reshards an operand right before the op that reads it, so a sum pending
    over the tensor-parallel axis -- the input gradient of a column-parallel
    matmul in backward -- was issued only where it is read, after
    independent work (the weight gradient, an interleaved update). Issued
    early, it runs on the runtime's communication lane while that work
    computes, as Megatron's asynchronous input-gradient all-reduce does.
    Then, for each sum, the ops since the previous collective (or op with
    effects) that it does not wait for move to right after it, in their
    order: a layer's weight gradients and their updates, which autodiff
    wrote before the input gradients they do not feed, run beside the sum
    instead of ahead of it. Ops move only past ops they do not read; what
    anything computes is unchanged. `part-spmd` runs it after
    `part-partition`.

    ```mlir
    // Before
    %dx = part.matmul %dy, %w : ...
    %dw = part.matmul %x, %dy transpose_a : ...
    %s = part.all_reduce %dx on @mesh axes ["tp"] sum : ...
    // After: the sum runs beside the weight gradient
    %dx = part.matmul %dy, %w : ...
    %s = part.all_reduce %dx on @mesh axes ["tp"] sum : ...
    %dw = part.matmul %x, %dy transpose_a : ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"defer", "defer", "bool", /*default=*/"true",
           "also move the layer's ops a sum does not wait for below it">
  ];
}

def PartPartitionPass : Pass<"part-partition", "::mlir::ModuleOp"> {
  let summary = "rewrites each annotated global function into its per-device program";
  let description = [{
    Walks a function whose values carry shardings (usually after
    `part-propagate-shardings`) and rebuilds it on local shapes. Before each
    op, its operands are resharded to what the op's sharding rule needs: a
    pending sum is reduce-scattered where the target splits a dimension with
    the same axes and all-reduced otherwise; an axis that moves between
    dimensions goes by `part.all_to_all`; an axis to drop is gathered with
    `part.all_gather`; an axis to add is taken with `part.all_slice`. Axes
    on reduction factors leave the op's result a pending sum (a mean over a
    split dimension is scaled to its share); a pending sum stays pending
    through ops that keep it valid (adding two sums pending over the same
    axes, negation, reshape, transpose, scaling by a whole value), so two
    row-parallel branches added need one all-reduce. A gather from a table
    split along the looked-up dimension, and a cross-entropy over
    class-split logits, are partitioned without gathering (Megatron's
    vocabulary-parallel embedding and loss).
    Results are resharded to the function's result annotations. Each inserted
    collective records in `part.origin` which op and operand needed it. The
    function gets `part.spmd = @mesh`; `partition-translate --part-to-plan`
    lowers it.

    Before:
    ```mlir
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}] # "}]" # [{>},
                 %w: tensor<16x4xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}] # "}]" # [{>}) -> tensor<8x4xf32> {
      %0 = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
      return %0 : tensor<8x4xf32>
    }
    ```
    After (mesh "tp"=4):
    ```mlir
    func.func @f(%x: tensor<8x4xf32> {...}, %w: tensor<4x4xf32> {...}) -> tensor<8x4xf32>
        attributes {part.spmd = @mesh} {
      %0 = part.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
      %1 = part.all_reduce %0 on @mesh axes ["tp"] sum {part.origin = "result 0 of func.return"} : tensor<8x4xf32>
      return %1 : tensor<8x4xf32>
    }
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"accumulateAxes", "accumulate-axes", "std::string",
           /*default=*/"\"\"",
           "comma-separated mesh axes over which only sums and means may be "
           "completed (all_reduce): no other collective is chosen over them "
           "(the micro-batch axis of a pipeline, whose devices run one after "
           "another)">,
    Option<"testDropMatmulReduction", "test-drop-matmul-reduction", "bool",
           /*default=*/"false",
           "TEST ONLY: leave out the all_reduce that completes a matmul's "
           "sum over a split contracted dimension, so that the program is "
           "wrong (partition-check's tests use it to see a mismatch found)">
  ];
}

def PartExplainPass : Pass<"part-explain", "::mlir::ModuleOp"> {
  let summary = "says why each collective is there and what it costs";
  let description = [{
    For every collective of a per-device (`part.spmd`) function, emits a
    remark with its kind, mesh axes, group size, the bytes it moves per
    device and its `part.origin` (the op and operand that needed it, and the
    annotations that gave that op its sharding); then prints a table per
    function: collectives by kind and axes, how many, and bytes per device.
    Bytes per device follow ring algorithms: all-reduce 2(n-1)/n of the
    buffer, all-gather and all-to-all (n-1)/n of the larger side,
    reduce-scatter (n-1)/n of its input, a permute the buffer, all_slice
    nothing. The IR is unchanged.

    Pipeline stages (part-pipeline): each `part.send` gets a remark (bytes,
    the receiving stage, channel and step) and a row per receiving stage in
    the table; then the stages' schedules as a text timeline under unit
    costs (F 1, B 2, Bi and W 1), as the compiler simulated them, with each
    stage's idle share and micro-batches in flight.

    ```
    func @mlp on @mesh: 1 collective, 384 bytes per device
      kind        axes    count  bytes/device
      all_reduce  "tp"    1      384
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartEstimatePass : Pass<"part-estimate", "::mlir::ModuleOp"> {
  let summary = "predicts the step time of per-device programs on a cluster";
  let description = [{
    The cost model (docs/design/2026-12-03-cost-model.md) on what part-spmd
    wrote: every op of each per-device (`part.spmd`) program timed on one
    device of `cluster` (a preset -- dgx-a100, dgx-h100, h200 -- or a cluster
    file, as `partition-run --calibrate` writes): kernels by roofline with
    the cluster's GEMM efficiency curve, collectives and pipeline transfers
    by latency and bandwidth of the link within or between nodes. Pipeline
    stages' steps are costed and their schedule simulated with those costs.
    Prints a line per program and the predicted step time; the IR is
    unchanged. Communication is not overlapped with compute in the sum.

    ```
    estimate on local-cpu (1 node of 2 devices, f32 peak 7.35e+10 FLOP/s):
      @gpt on 2 devices: compute 1.92 ms, communication 0.84 ms
      step 2.76 ms
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"\"",
           "a cluster preset (dgx-a100, dgx-h100, h200) or cluster file">
  ];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartModelFlopsPass : Pass<"part-model-flops", "::mlir::ModuleOp"> {
  let summary = "records the model FLOPs of one step of the global program";
  let description = [{
    MFU divides the FLOPs the model needs per step (the unpartitioned
    step's, as Megatron and PaLM count them) by the step time and the
    devices' peak. Counted from the per-device programs, work that a
    partitioning repeats on several devices (ops every tensor-parallel rank
    computes, ZeRO's or a pipeline's recomputation) would count once per
    device, so MFU would depend on the partitioning. This pass counts them
    once, on the global program, before anything partitions it; `part-spmd`
    runs it first, and `part-to-plan` writes the figure into the plan
    (`Plan.model_flops`), which `partition-run` reads.

    The count is 2*M*N*K of every `part.matmul` and `part.batch_matmul`
    (times the batch) and the two products of `part.attention` (q k^T and
    p v, a causal mask not halving them), over every global function
    (those without `part.spmd`) with a body. Ops that `part-recompute` made
    (`part.recomputed`) are left out: model FLOPs do not count
    recomputation. Nor does the q k^T that `part-autodiff` recomputes for
    attention's derivative (also `part.recomputed`): an attention counts 6
    products, 2 forward and 4 backward, as PaLM's formula does. A module
    without a global function (hand-written
    per-device programs) is left as it is; the attribute is set again
    (counted afresh) when already there. The count is exact: an `i64`, or
    an `i128` past 2^63 FLOPs (a 405B-parameter model on 16M tokens a step
    takes 4e19).

    ```mlir
    module {
      func.func @step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> ... {
        %y = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    // becomes
    module attributes {part.model_flops = 1024 : i64} {
      ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartDefineMeshPass : Pass<"part-define-mesh", "::mlir::ModuleOp"> {
  let summary = "declares the device mesh the module is partitioned for";
  let description = [{
    Adds `part.mesh @<name> = <[...]>` from a compact shape such as
    `dp:2,tp:4` (axis names and sizes, major to minor), unless the module
    already declares that mesh with the same axes; a different declaration is
    an error.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "name", "std::string", /*default=*/"\"mesh\"",
           "name of the mesh">,
    Option<"shape", "shape", "std::string", /*default=*/"\"\"",
           "axes and sizes, e.g. dp:2,tp:4">
  ];
}

def PartDataParallelPass : Pass<"part-data-parallel", "::mlir::ModuleOp"> {
  let summary = "splits the batch of every input and label over a mesh axis";
  let description = [{
    For each global function, gives every argument with role `input` or
    `label` whose first dimension is the batch, and that has no sharding, a
    split of that dimension over `axis`; parameters stay as they are
    (replicated unless something else splits them). The batch is the first
    dimension of the labels (without labels, of the input of highest rank);
    an input whose first dimension the ops' sharding rules join to another
    dimension (a rotary table [S, d], whose S is the activations' sequence)
    stays whole on every device, as does one joined to nothing whose first
    dimension differs from the batch's size. A batch the axis does not
    divide is padded to a multiple of it, with what reads across the batch
    masked (a mean over it rescaled, a cross-entropy's padded positions left
    out) and `part.logical_shape` recording the real size; where padding
    would change a result (a normalisation over the batch) it is an error
    naming the op.

    ```mlir
    %x: tensor<8x16xf32> {part.role = #part.role<input>}
    // becomes
    %x: tensor<8x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}] # "}]" # [{>}
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"mesh\"",
           "the mesh">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "the data-parallel mesh axis">,
    Option<"expertAxis", "expert-axis", "std::string", /*default=*/"\"\"",
           "an axis the batch is split over after `axis` (expert "
           "parallelism's: the ep devices hold different experts and "
           "different data; part-spmd sets it)">,
    Option<"microBatchAxis", "micro-batch-axis", "std::string",
           /*default=*/"\"\"",
           "a last axis the batch is split over (the "
           "micro-batches of a pipeline; part-spmd sets it)">
  ];
}

def PartExpertParallelPass : Pass<"part-expert-parallel", "::mlir::ModuleOp"> {
  let summary = "splits the experts of mixture-of-experts layers over a mesh axis";
  let description = [{
    For each global function, gives every parameter whose first dimension
    the ops' sharding rules join to the experts' dimension of a
    `part.expert_dispatch` buffer (the `[E, ...]` weights of the experts'
    batched matmuls) a split of that dimension over `axis`, added in front
    of any split it has. With the batch split over the same axis
    (part-data-parallel's `expert-axis`), propagation then finds the
    buffer split by groups where the tokens are dispatched and by experts
    where the experts run, and the partitioner exchanges the two with
    `part.all_to_all`s, forward and backward (GShard's formulation). A
    function with no `part.expert_dispatch` is an error: the axis would only
    split the batch. The experts must divide by the axis size (an error
    names the parameter and the sizes). See
    docs/design/2026-12-07-experts.md.

    ```mlir
    %w1: tensor<8x64x176xf32> {part.role = #part.role<parameter>}
    // becomes
    %w1: tensor<8x64x176xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"ep"}, {}, {}] # "}]" # [{>}
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"mesh\"",
           "the mesh">,
    Option<"axis", "axis", "std::string", /*default=*/"\"ep\"",
           "the expert-parallel mesh axis">
  ];
}

def PartContextParallelPass : Pass<"part-context-parallel", "::mlir::ModuleOp"> {
  let summary = "splits the sequence over a mesh axis, in the balanced causal order";
  let description = [{
    Context parallelism (Megatron-Core's `--context-parallel-size`, Llama
    3's long-context phase): for each global function, the sequence, the
    dimension of its `part.attention`s' query and key positions and of every
    value the ops' sharding rules join to them, is cut into `2 * size`
    chunks, and device `r` of `axis` holds chunks `r` and `2 size - 1 - r`,
    so that under a causal mask every device has as many (query, key) pairs
    to compute as any other.

    - Every input and label indexed by the sequence (tokens, labels, a
      mask), and every constant (position ids, rotary tables, the positions
      they are computed from), is gathered in that order where it enters,
      with the indices split over `axis`: each device takes its own
      positions, with no communication.
    - Every causal attention is given the positions of the order
      (`positions(...)`): its mask compares global positions, its queries
      split with the sequence, and its keys and values are gathered whole
      over `axis` (the all-gather form Llama 3 ran); backward
      reduce-scatters their gradients.
    - With `attention=all-to-all` (DeepSpeed-Ulysses), each causal
      attention is tagged `part.context_heads`: the partitioner exchanges
      its queries, keys and values with all-to-alls over `axis` so that
      each device holds the whole sequence of a share of the heads (keys
      and values repeated where the devices do not divide their heads),
      runs it there, and exchanges the results back.
    - With `attention=ring`, each causal attention becomes a
      `part.attention_block` (its rows' log-sum-exp kept for backward),
      and its `part.attention_grad` takes that and `delta =
      rowsum(dO * O)`; both are tagged `part.context_ring`: the
      partitioner passes the blocks of keys and values around `axis` with
      collective permutes (the key and value gradients travel with their
      block and arrive home after the last step), computing one block per
      step while the next arrives.
    - Every result indexed by the sequence (logits) is put back in the
      sequence's order. A mean or sum loss does not depend on the order.

    Errors name what cannot be split: no attention, a sequence length that
    `2 * size` does not divide, attentions of different lengths, and a
    slice, pad or concatenation along the sequence (labels shifted inside
    the model). See docs/design/2026-12-07-context-parallel.md.

    ```mlir
    %o = part.attention %q, %k, %v causal : ...
    // becomes
    %pos = part.constant dense<[0, 1, 6, 7, 2, 3, 4, 5]> : tensor<8xi64>
    %local = part.sharding_constraint %pos <@mesh, [{"cp"}] # "}]" # [{> : tensor<8xi64>
    %o = part.attention %q, %k, %v causal positions(%local, %pos) : ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"mesh\"",
           "the mesh">,
    Option<"axis", "axis", "std::string", /*default=*/"\"cp\"",
           "the context-parallel mesh axis">,
    Option<"attention", "attention", "std::string",
           /*default=*/"\"all-gather\"",
           "how causal attention sees the other devices' keys: all-gather "
           "(the keys and values gathered whole, any number of heads), "
           "ring (their blocks passed around the axis, one computed while "
           "the next arrives, merged by log-sum-exp) or all-to-all "
           "(DeepSpeed-Ulysses: queries, keys and values exchanged for the "
           "whole sequence of a share of the heads; the devices must "
           "divide each device's query heads)">
  ];
}

def PartTensorParallelPass : Pass<"part-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "annotates Megatron column/row splits of MLP and attention blocks";
  let description = [{
    Finds pairs of linear layers joined by a path that a split of their
    shared dimension passes through unchanged: from a `part.matmul` whose
    right operand is a parameter, through elementwise ops, bias adds,
    reshapes and transposes into heads, rotary embeddings and attention, to a
    `part.matmul` that takes the result as its left operand and a parameter
    as its right. The first weight is split by columns over `axis`, the
    second by rows (Megatron's column- and row-parallel linear layers: an MLP,
    or the Q/K/V projections and the attention output projection). A
    parameter table looked up by rows (an embedding) is split by rows: a
    vocabulary-parallel embedding, and, when an output head shares the
    table, vocabulary-split logits and loss.
    Propagation then carries the splits through biases, heads and
    activations, and the forward pass of each such block needs one
    all-reduce. With `sequence-parallel`, the residual add after each row-
    parallel layer gets a `part.sharding_constraint` splitting the sequence
    dimension over the axis (and the batch as the inputs are split), so the
    partitioner reduce-scatters the block's output and all-gathers the next
    block's input. A vocabulary or MLP width the axis does not divide is
    padded to a multiple of it (as Megatron pads a vocabulary), the padded
    logits masked out of the softmax and loss; a table whose rows cannot be
    padded stays whole, with a remark. Head counts and sequence lengths the
    axis does not divide are errors naming them. An attention no split
    reaches stays whole on every rank: a remark says why (its queries come
    from an argument, a fused projection left whole, a projection with no
    row-parallel partner, ...) and `part.replicated` keeps it for
    `--part-explain`; so does attention left decomposed (a softmax of a
    product of two computed values, which part-raise did not rebuild as a
    `part.attention`).

    Grouped-query attention with fewer key/value heads (Hkv) than ranks, where
    Hkv divides the axis size: each rank keeps a copy of the key/value head
    its query heads use (Megatron's replication of kv heads). The mesh axis
    becomes two, `axis` of size Hkv and `axis`_rep of size (size / Hkv), a
    sub-axis split such as Shardy writes `"tp":(1)2`, `"tp":(2)2`; the key
    and value projections are split over `axis` alone, every other split over
    both, and the ranks along `axis`_rep sum the kv weights' gradients. A
    remark says so. With `tp:4` and 2 kv heads:

    ```mlir
    part.mesh @mesh = <["tp"=2, "tp_rep"=2]>
    %wq: tensor<64x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp", "tp_rep"}] # "}]" # [{>}
    %wk: tensor<64x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}] # "}]" # [{>}
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"mesh\"",
           "the mesh">,
    Option<"axis", "axis", "std::string", /*default=*/"\"tp\"",
           "the tensor-parallel mesh axis">,
    Option<"sequenceParallel", "sequence-parallel", "bool",
           /*default=*/"false",
           "also split the residual stream [batch, sequence, features] by "
           "sequence over the axis between blocks (Megatron's sequence "
           "parallelism): each block's all-reduce becomes a reduce-scatter "
           "and an all-gather, and layer norms run on sequence shards">,
    Option<"contextAxis", "context-axis", "std::string", /*default=*/"\"\"",
           "an axis the sequence is split over already (part-context-"
           "parallel's): sequence parallelism splits each device's tokens "
           "again, the sequence over this axis and then `axis`, as "
           "Megatron-Core's sequence parallelism within a context-parallel "
           "rank">
  ];
}

def PartPipelinePass : Pass<"part-pipeline", "::mlir::ModuleOp"> {
  let summary = "cuts a per-device training step into pipeline stages running micro-batches on a schedule";
  let description = [{
    Input: a training step partitioned (`part-partition`) over a mesh with a
    micro-batch axis (`micro-batch-axis`, default "mb") that splits the
    batch: the per-device function computes one micro-batch, and the
    all_reduces over that axis (the loss, each gradient) are where
    micro-batches accumulate. `part-spmd` builds this for a mesh with a
    `pp` axis. See docs/design/2026-12-03-pipelines.md.

    Output: one function per stage, `@<step>_stage<s>` with `part.spmd` on
    a mesh `@<mesh>_pp<s>` of the other axes, `part.stage = s` and
    `part.schedule` (the stage's steps: "F0 F1 B0 ..."); every op says
    which step it belongs to (`part.step = "F3"`, "U" for the update after
    the schedule; traces and errors show it). Each runs its
    steps of the schedule unrolled: the forward or backward ops of the
    stage on micro-batch k (a slice of the batched arguments), a
    `part.send` of every value another stage reads and a `part.recv` where
    it is read (channel: the value's number times the micro-batches plus
    k), the accumulations summed (averaged where the all_reduce averaged)
    and reduced over their other axes, then the optimizer once. Forward ops
    are cut by `part.layer` into contiguous groups balanced by FLOPs (the
    embedding's on the first stage, the head's on the last), by memory
    with `balance=memory` (each stage's parameters, gradients and optimizer
    state plus its layers' saved activations times the micro-batches the
    schedule keeps in flight on it: 1F1B's first stage holds p of them, its
    last one), or as `stage-layers` says; a layer's backward runs with its
    forward (part-autodiff labels it with the layer), and so does the
    backward of an op outside the layers (by what it reads: the final
    norm's input, the token ids the embedding's gradient scatters by).
    With more groups than layers, the ops before the first layer (the
    embedding) and those after the last (the head and the loss) take a
    group of their own, as Megatron-Core's
    `account_for_embedding_in_pipeline_split` and
    `account_for_loss_in_pipeline_split` count them (Llama 3 405B's 126
    layers in 128 chunks: 16 stages of 8); with one more group, the end
    whose cut is the more even (by FLOPs or memory); `stage-layers` writes
    such a group `none` (`none,0-3,4-7,none`).
    With `schedule=interleaved-1f1b` each stage holds `virtual-stages`
    chunks of layers (chunk c of stage s is layer group c * stages + s) and
    runs them interleaved (Megatron's virtual pipeline); steps and
    `part.step` then name the chunk ("F3.1").
    With `schedule=zero-bubble` (ZB-H1) a stage's backward splits into the
    input gradient (Bi) and the weight gradients (W: the backward ops whose
    results only other W ops and the gradient accumulation read). After the
    cut the schedule is simulated with every value the stages send each
    other, and one that could wait forever is an error.
    A parameter several stages read (a tied embedding) is held and updated
    by each, with the accumulated gradient sent to each.

    Errors: fewer layers than stages (times chunks) less the ends, a stage without forward
    work, micro-batches not a multiple of the stages (interleaved), a
    schedule the simulation rejects (it names the stages and steps that
    wait on each other), a collective over the micro-batch axis other than a
    sum or mean, a per-micro-batch value returned.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"2",
           "the number of pipeline stages">,
    Option<"scheduleName", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b, interleaved-1f1b or zero-bubble (ZB-H1)">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "interleaved-1f1b: chunks of layers per stage (default 2 there)">,
    Option<"stageLayers", "stage-layers", "std::string", /*default=*/"\"\"",
           "layers per stage, e.g. 0-11,12-23, `none` for an end's group "
           "of no layers (default: balanced by FLOPs)">,
    Option<"balance", "balance", "std::string", /*default=*/"\"flops\"",
           "what the cut balances: flops (time) or memory (each stage's "
           "weights, gradients, optimizer state and in-flight activations)">,
    Option<"microBatchAxis", "micro-batch-axis", "std::string",
           /*default=*/"\"mb\"", "the mesh axis that splits micro-batches">,
    Option<"unroll", "unroll", "bool", /*default=*/"false",
           "write each stage's schedule unrolled (a copy of its ops per "
           "micro-batch; the reference form) instead of fragments and a "
           "schedule table">,
    Option<"gradSync", "grad-sync", "std::string",
           /*default=*/"\"micro-batch\"",
           "when a gradient that ZeRO-1/2 reduce-scatters over dp is "
           "reduced: micro-batch (each micro-batch's gradient, its shards "
           "summed) or step (the whole gradient summed over the "
           "micro-batches and reduce-scattered once, in the last backward, "
           "as Megatron's distributed optimizer: the micro-batches times "
           "less dp traffic for a whole gradient buffer)">
  ];
}

def PartZeroPass : Pass<"part-zero", "::mlir::ModuleOp"> {
  let summary = "shards optimizer state, gradients and parameters over the data-parallel axis (ZeRO)";
  let description = [{
    ZeRO as shardings: adds annotations only, before propagation, to a
    training step (`part-optimizer`'s output) already annotated for data and
    tensor parallelism. Each value is split over `axis` on top of the layout
    propagation would give it (its tensor-parallel shard), on its first
    dimension whose local size the axis divides; a value with no such
    dimension stays whole over the axis and a remark names it. With
    `expert-axis`, each value is then split over that axis too, the same
    way, unless its layout already uses it (the experts' weights, split
    by expert): the dense parameters' state is sharded over the whole
    group the batch is split over.
    - `stage=0` (what `part-spmd` runs on a mesh with the data-parallel
      axis and no `zero=N`): no layout changes; only the gradient
      constraints of stage 1 below, to the layouts propagation gives, so
      each gradient's sum over the axis is completed once (an all-reduce
      where backward produces it) instead of once per use in the update.
    - `stage=1`: every non-scalar `state` argument (the matching
      `part.updates` result is laid out like it), so the update runs on one
      shard per device, and a `part.sharding_constraint` on each gradient,
      right where it is produced, to the layout of the values it updates
      (the state's, where tensor parallelism lays out the parameter
      otherwise):
      each gradient is reduce-scattered once (all-reduced once where its
      state stays whole), the new parameters all-gathered. Parameters are
      pinned to their layout.
    - `stage=2`: the same program. The whole reduced gradient that stage 2
      removes in other systems never exists here: the reduce-scatter
      consumes the pending local gradient.
    - `stage=3`: also the `parameter` arguments at rest; every use outside
      the update gets a `part.sharding_constraint` to the parameter's layout
      without the axis, so the partitioner all-gathers it before the use.

    The update is found by data flow, wherever `part-optimizer` put it
    (interleaved with backward or at the end, after clipping or not). The
    gradient of a `part.updates` result: walking back from the result
    through ops elementwise in its type (operands of its type or scalars,
    none a value the other results -- the loss -- are computed from), the
    nearest value through which every path from the data (the arguments
    that are neither parameters nor state) passes: the backward op that
    produced it, or the sum of its contributions. The update: the ops the
    `part.updates` results are computed from, stopping at the gradients,
    less those the gradients or the other results are computed from.

    ```mlir
    %m: tensor<16x32xf32> {part.role = #part.role<state>}
    // becomes, with stage=1 on a mesh with "dp" = 2 (the "tp" split is the
    // one propagation gives the parameter the state belongs to)
    %m: tensor<16x32xf32> {part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}] # "}]" # [{>}
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"meshName", "mesh", "std::string", /*default=*/"\"mesh\"",
           "the mesh">,
    Option<"axis", "axis", "std::string", /*default=*/"\"dp\"",
           "the data-parallel mesh axis">,
    Option<"expertAxis", "expert-axis", "std::string", /*default=*/"\"\"",
           "an axis the batch is also split over (expert parallelism's): "
           "values not split over it already (all but the experts') are "
           "split over it after `axis`, as Megatron-Core shards the dense "
           "parameters' state over the whole data-parallel group">,
    Option<"contextAxis", "context-axis", "std::string", /*default=*/"\"\"",
           "an axis the sequence is split over (context parallelism's): its "
           "devices hold other positions of the same sequences, so every "
           "gradient is summed over it and the state is split over it "
           "after `axis` (and before `expert-axis`), as Megatron-Core's "
           "distributed optimizer shards over the data- and "
           "context-parallel group">,
    Option<"stage", "stage", "unsigned", /*default=*/"1",
           "ZeRO stage: 0 only reduces each gradient once (plain data "
           "parallelism), 1 shards optimizer state, 2 also gradients, 3 also "
           "parameters">
  ];
}

def PartRaisePass : Pass<"part-raise", "::mlir::ModuleOp"> {
  let summary = "rebuilds layer-level ops from the decomposed forms ONNX exporters write";
  let description = [{
    An ONNX model exported by PyTorch spells its layers out in elementwise
    ops, and the importer translates them one to one. This pass finds those
    decompositions and replaces each by the op the partitioner understands,
    so the tensor-parallel patterns and sharding rules see `gelu`,
    `layer_norm` and `attention` rather than a dozen elementwise ops:

    | decomposed form | raised to |
    | --- | --- |
    | `x * 0.5 * (1 + erf(x / sqrt(2)))` (or `x * (1 / sqrt(2))`) | `part.gelu erf` |
    | `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, `x^3` as `pow(x, 3)` or products | `part.gelu tanh` |
    | `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * scale [+ bias]` | `part.layer_norm` |
    | `x * rsqrt(mean(x^2) + eps) * scale` (`rsqrt` or `div(1, sqrt)`; or `x / sqrt(...)`) | `part.rms_norm` |
    | `x * sigmoid(x)` | `part.silu` |
    | `softmax(Q Kt * s + mask) V` or `softmax(select(causal, Q Kt * s, -big)) V`, heads in the batch or not, the probabilities under torch's NaN guard or not | `part.attention` (`causal`, `window`) |
    | `x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin` | `part.rotary_embedding` |
    | `batch_matmul(gather(W, ids), x)`: the `[E, P, Q]` weights of each slot's expert, `ids` a `part.top_k`'s indices, one vector `x` per slot | `part.expert_dispatch`, `part.batch_matmul` over the experts, `part.expert_combine` |

    Products match in any operand order and association. Constants are
    splat `part.constant`s of any shape that broadcasts without changing
    the result's shape; exact values (0.5, 1, 2, 3, 0.044715) must be equal
    after rounding to the constant's type, irrational ones (sqrt(2),
    sqrt(2 / pi)) within 1e-6 relative (or one unit in the last place of
    f16 / bf16). Means are `part.reduce_mean` over the last dimension with
    `keep_dims`; an epsilon is read from its constant; `scale` and `bias`
    must have shape `[D]`. Attention takes rank-4 `[B, H, S, D]` operands,
    `Kt` as `transpose_b`, a `part.transpose` swapping the last two
    dimensions, or any transpose (a new one is made); scalar factors on the
    scores, and on `Q` or `Kt` where nothing else uses the scaled value,
    become `scale` (left out when it equals `1 / sqrt(D)`). Keys and values
    whose heads were repeated to the query heads (Llama's `repeat_kv`:
    reshape to `[B, Hkv, 1, S, D]`, broadcast, reshape) are taken before the
    repetition, giving grouped-query attention. The score product may also
    be taken over `[B * H, S, D]` (GPT-NeoX's `baddbmm(zeros, Q, Kt, alpha =
    s)`): queries and keys `[B, H, S, D]` reshaped to it (the keys before or
    after their transpose), the scores reshaped back to `[B, H, Sq, Sk]`,
    and an all-zero constant added to them is dropped (`x + 0` is `x`).
    The probabilities may be taken over `[B * H, Sq, Sk]` as well, with
    values `[B, H, Sk, D]` reshaped to `[B * H, Sk, D]`: a softmax over
    `[B, H, Sq, Sk]` reshaped to it (BLOOM's order), or a softmax over its
    last dimension of `[B, H, Sq, Sk]` scores reshaped to it (OPT); the
    attention then replaces the product's reshape back to `[B, H, Sq, D]`
    (or is reshaped to the product's shape). The masked scores may be
    clamped, `max(scores, c)` with a constant `c` that is `-inf` or at most
    -1e4 (OPT's `finfo.min`): it changes only scores below `c`, whose `exp`
    is 0 in f32 with or without the clamp under the assumption the mask
    rule makes (each row's largest unmasked score above -1e4 + 104). A bias
    added to the scores (BLOOM's ALiBi) is not attention as `part.attention`
    computes it and stays.
    The mask is a constant: an additive one that is 0 where a key is kept
    and `-inf` or at most -1e4 where it is masked (`exp` of such a score is
    0 in f32), or a `part.select` between the scores and such a value under
    a 0 / 1 condition (nonzero where kept, or the negation with the operands
    swapped). A mask that keeps every key, or none, gives non-causal
    attention; one that keeps the keys on and below the diagonal, causal
    attention; one that keeps, in every row i, the keys j with
    `0 <= i - j < w` for a `w` smaller than the sequence (Mistral's
    `sliding_window`, Gemma 3's sliding layers), causal attention with
    `window w` (`w` is read from the last row and every entry checked).
    Every [S, S] block of the mask must hold the same pattern. A mask that
    is a parameter (an initializer the importer did not fold) cannot be
    read, and the remark names it.

    torch writes a NaN guard after every SDPA softmax, `where(isnan(p), 0,
    p)`, imported as `select(compare ne(p, p), 0, p)`: it zeroes the rows a
    mask masks entirely. Under the masks above every row keeps a key (its
    own position), so the softmax of finite scores has no NaN and the guard
    is a no-op: the raised attention absorbs it (with `report`, a remark
    says so). Where attention is not raised the guard stays, and the remark
    says that too; a mask that masks every key of a row keeps it by name.

    A rotary embedding (rotate-half form, as Llama, GPT-NeoX and Phi write
    it) is raised on the value it rotates: with partial rotary embeddings
    (GPT-NeoX's `rotary_pct`, Phi's `partial_rotary_factor`) that is the
    slice of each head's first dimensions, and the concatenation with the
    rest stays. The halves are `part.slice`s of one `x` with unit strides,
    the upper one under `part.neg`, concatenated along the last dimension;
    the `cos` and `sin` tables have shape `[S, D]` after leading 1s (the
    same rows for every sequence of the batch; per-sequence positions are
    not one table) and become `[S, D]` operands: a constant is rewritten,
    anything else reshaped, and the queries and keys of a layer share one
    pair of rewritten constants.

    The experts of a mixture of experts as Hugging Face's `batched_mm`
    writes them (what torch's exporters trace: each token repeated over its
    K slots, each slot's expert weights gathered at the router's top-k
    expert ids, one matrix-vector product per slot) become a dispatch of the
    slots to their experts' capacity buffers `[E, G, C, Q]`, a
    `part.batch_matmul` of the buffers with the weights `[E, ...]` whole,
    and a combine back to the slots, so a plan can split the experts (`ep`).
    The ids are the indices of a `part.top_k` over the E experts, reshaped
    (and under the importer's shift of negative indices, a no-op on them);
    groups are the sequences (G is the first dimension of the first value
    of rank >= 3 above the router holding its tokens, C = S: a token's
    top-k experts are distinct, so nothing is dropped). The routing weights
    and the sum over K stay as they are. Then a dispatch of values computed
    slot by slot from a combine of the same routing (slices of the
    features, SiLU, GELU, ReLU, tanh, negation, products, reshapes) computes
    them on the buffer instead (they keep the rows a dispatch leaves
    unfilled zero), and a dispatch of each token broadcast over its K slots
    dispatches the tokens: one dispatch and one combine per expert MLP.

    A pattern raises only when it matches exactly, and only when no
    intermediate value of the chain is used outside it; otherwise the ops
    stay as they are and the program is unchanged. With `report`, every
    candidate that was left alone (a softmax whose mask is not causal, a
    norm whose scale has the wrong shape, a GELU whose constant is off, ...)
    gets a remark saying why.

    Before:
    ```mlir
    %c = part.constant dense<0.707106769> : tensor<f32>
    %h = part.constant dense<5.000000e-01> : tensor<f32>
    %one = part.constant dense<1.000000e+00> : tensor<f32>
    %0 = part.mul %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %1 = part.erf %0 : tensor<4x8xf32>
    %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = part.mul %3, %h : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
    After:
    ```mlir
    %4 = part.gelu %x erf : tensor<4x8xf32>
    ```
    Ops left without uses are erased; nothing else changes. A raised op
    keeps the discardable attributes of the op it replaces (`part.layer`, a
    `part.sharding`).
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "emit a remark at each candidate that was not raised, saying why">
  ];
}

def PartSplitFusedProjectionsPass
    : Pass<"part-split-fused-projections", "::mlir::ModuleOp"> {
  let summary = "rewrites a fused projection ([Q | K | V], gate/up) into one projection per block";
  let description = [{
    Exporters write a fused projection as one matmul by a weight
    `[in, k * n]` (optionally plus a bias `[k * n]`, and a reshape of the
    leading dimensions) whose result is sliced into `k` blocks of `n`
    features: GPT-2's `c_attn` ([Q | K | V], k = 3), a fused gate/up MLP
    (k = 2). Split by columns for tensor parallelism, such a weight gives
    each rank part of Q and part of K instead of whole heads of each, so
    `part-tensor-parallel` could not split the attention.

    This pass views the weight as `[in, k, n]` (a transposed one, `[k n, in]`,
    as `[k, n, in]`) and the bias as `[k, n]`, and replaces the matmul and
    its slices by one matmul per block, over a slice of the view. The
    parameter keeps its name, and `part.stored_shape` records the shape it
    has in weights files: the runtime reads the view from the stored tensor
    (the same elements in the same order), so weights and checkpoints
    written for the original model still load. Split on `n`, every rank
    then holds the same features of every block: Megatron's layout.

    Blocks of different widths (Phi-3's `qkv_proj` with fewer key/value
    heads; Falcon's multi-query layout, the result viewed by heads and read
    by a slice and gathers) have no such view: each block then multiplies
    by its own slice of the weight, which `part-tensor-parallel` splits
    with a sharding constraint (the weight stays whole on every rank).

    It applies only where nothing else reads the weight, the bias or the
    matmul's result, and the readers (slices of the first feature
    dimension, or gathers of consecutive constant indices along it) cover
    the features once; anything else is left as it is. `partition-import`
    runs it after `part-raise`.

    Before:
    ```mlir
    %y = part.matmul %x, %w : (tensor<16x32xf32>, tensor<32x96xf32>) -> tensor<16x96xf32>
    %q = part.slice %y offsets [0, 0] : tensor<16x96xf32> -> tensor<16x32xf32>
    %k = part.slice %y offsets [0, 32] : tensor<16x96xf32> -> tensor<16x32xf32>
    %v = part.slice %y offsets [0, 64] : tensor<16x96xf32> -> tensor<16x32xf32>
    ```
    After (`%w: tensor<32x3x32xf32> {part.stored_shape = array<i64: 32, 96>}`):
    ```mlir
    %0 = part.slice %w offsets [0, 0, 0] : tensor<32x3x32xf32> -> tensor<32x1x32xf32>
    %1 = part.reshape %0 : tensor<32x1x32xf32> -> tensor<32x32xf32>
    %q = part.matmul %x, %1 : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
    ```
    and the same for `%k` and `%v` at offsets 1 and 2.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartAutodiffPass : Pass<"part-autodiff", "::mlir::ModuleOp"> {
  let summary = "turns a loss function into the function returning the loss and its gradients";
  let description = [{
    Reverse-mode differentiation of the global program. Every function of
    the module must be a global program (not `part.spmd`) returning a
    single 0-d float value, the loss; it becomes the training-gradient
    function with the same arguments that returns the loss followed by one
    gradient per `part.role = #part.role<parameter>` argument, in argument
    order. Gradient results are named `grad.<parameter name>` and carry
    `part.grad_of = <argument index>`.

    The pass walks the function once, backwards from the loss (seeded with
    1), and asks each op for its vector-Jacobian product through
    `VjpOpInterface`; a value with several uses gets the sum (`part.add`) of
    its uses' cotangents. Integer values (indices, labels) carry no
    cotangent, and a parameter with no path to the loss gets zeros. The
    backward ops are `part` ops placed after the forward ones, so
    `part-spmd` partitions the whole step (on a data-parallel mesh the
    gradients come out as pending sums over the batch axes, resolved where
    the results need them). Backward ops left without uses are erased; the
    forward program is left as it was. The work is linear in the size of the
    function.

    An op on the path to the loss without the interface (a collective, a
    call) is an error naming it; so is a function whose results are not one
    0-d float.

    Before:
    ```mlir
    func.func @f(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
                 %w: tensor<8xf32> {part.name = "w", part.role = #part.role<parameter>}) -> tensor<f32> {
      %0 = part.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %1 = part.reduce_sum %0 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
      return %1 : tensor<f32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: ..., %w: ...) -> (tensor<f32>, tensor<8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"}) {
      %0 = part.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %1 = part.reduce_sum %0 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
      %one = part.constant dense<1.000000e+00> : tensor<f32>
      %2 = part.reshape %one : tensor<f32> -> tensor<1x1xf32>
      %3 = part.broadcast %2 : tensor<1x1xf32> -> tensor<4x8xf32>
      %4 = part.mul %3, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %5 = part.reduce_sum %4 dims [0] : tensor<4x8xf32> -> tensor<8xf32>
      return %1, %5 : tensor<f32>, tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
}

def PartAppendLossPass : Pass<"part-append-loss", "::mlir::ModuleOp"> {
  let summary = "turns an inference function into one that returns a scalar training loss";
  let description = [{
    An imported ONNX model computes outputs (logits); training needs a loss.
    For each global function, takes the result named by `output` (default:
    the first) and returns, instead of all results, one `f32` scalar named
    `loss`:
    - `kind=cross-entropy`: a new argument `labels` (role `label`, `i32`,
      the output's shape without its last dimension) and the mean
      `part.softmax_cross_entropy` of the output (logits) against it;
    - `kind=mse`: a new argument `targets` (role `label`, the output's
      type) and the mean of `(output - targets)^2` over all elements.

    Every 0-d float result carrying `part.loss_weight = w` (an auxiliary
    loss the model computes, such as a mixture of experts' load-balancing
    loss) is added as `w` times itself, in f32.

    ```mlir
    func.func @main(%ids: tensor<2x8xi64> {...}, ...) -> (tensor<2x8x96xf32> {part.name = "logits"})
    // becomes, with kind=cross-entropy
    func.func @main(%ids: tensor<2x8xi64> {...}, ..., %labels: tensor<2x8xi32> {part.name = "labels", part.role = #part.role<label>})
        -> (tensor<f32> {part.name = "loss"})
    ```

    A function that already returns a scalar, an output that is not a
    float tensor (of rank at least 2 for cross-entropy), an `output`
    naming no result, or a loss weight on a result that is not a 0-d float
    is an error naming the function and the values.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy or mse">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "part.name of the result the loss is computed from (default: the first result)">
  ];
}

def PartMixedPrecisionPass : Pass<"part-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "computes a loss function in bf16 or f16, keeping precision-sensitive ops in f32";
  let description = [{
    Runs on the forward loss function, before `part-autodiff`. Every f32
    `parameter` argument becomes a `compute` (bf16 or f16) tensor: the
    weights the model computes with, 2 bytes per element. The ops then
    compute as PyTorch's autocast would have them:

    - `matmul`, `batch_matmul` and `attention` compute in the compute type
      (the kernels accumulate in f32);
    - `softmax`, `layer_norm`, `rms_norm`, `softmax_cross_entropy`,
      `reduce_sum`, `reduce_mean`, `exp`, `log` and `pow` compute in f32;
    - every other op computes in the widest float type among its operands
      that are not constants, and constants take the type of the op's other
      operands (like Python scalars in PyTorch).

    A `part.cast` goes in front of each operand of another type, and the
    function's results are cast back to their declared types, so the loss
    stays f32. `part-autodiff` then gives compute-type gradients, and
    `part-optimizer` keeps an f32 master copy of each such parameter in its
    state (`master.P`, initialised from the weights of `P`), updates it in
    f32 and writes the parameter back as its cast.

    `compute=f16` adds dynamic loss scaling, which f16's narrow exponent
    range needs: a `state` argument `loss_scale` (tensor<f32>, starting at
    `initial-loss-scale`, marked `part.loss_scale`) that `part-autodiff`
    seeds backward with, so small gradients do not flush to zero; the
    optimizer unscales the gradients, skips the step when one of them is not
    finite, and halves or grows the scale (see `part-optimizer`).
    bf16 has f32's exponent range and needs no scaling.

    ```mlir
    // before
    %h = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    // after, compute=bf16 (%w is now tensor<16x32xbf16>)
    %0 = part.cast %x : tensor<8x16xf32> -> tensor<8x16xbf16>
    %h = part.matmul %0, %w : (tensor<8x16xbf16>, tensor<16x32xbf16>) -> tensor<8x32xbf16>
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"compute", "compute", "std::string", /*default=*/"\"bf16\"",
           "bf16 or f16">,
    Option<"initialLossScale", "initial-loss-scale", "double",
           /*default=*/"65536", "f16 only: the loss scale at the first step">
  ];
}

def PartOptimizerPass : Pass<"part-optimizer", "::mlir::ModuleOp"> {
  let summary = "appends an optimizer update to a gradient function: one training step";
  let description = [{
    Takes a function that returns a loss and gradients -- results carrying
    `part.grad_of = <argument index>`, as `part-autodiff` makes them -- and
    makes it one training step: the gradients update their parameters, and
    the function returns the loss, then the new value of every parameter and
    of every optimizer state tensor, each marked `part.updates = <argument
    index>` so that the runtime writes it back in place after the step. The
    gradient results are dropped.

    State is explicit: a scalar f32 argument `optimizer.step` (the number of
    steps taken) and, per parameter `P`, `momentum.P` (SGD with momentum) or
    `adam.m.P` and `adam.v.P` (AdamW), f32 of the parameter's shape, all with
    role `state`. The runtime starts state at zero unless a checkpoint has
    it.

    - `kind=sgd`: `b = momentum * b + g; p = p - lr * b` (PyTorch's SGD;
      without momentum `p = p - lr * g`), plus `weight_decay * p` added to
      `g` when set.
    - `kind=adamw`: `m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
      p = p (1 - lr wd) - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`
      with `t` the step after this one (PyTorch's AdamW).
    - `clip=C`: every gradient is first scaled by `min(1, C / (|g| + 1e-6))`
      with `|g|` the global norm over all gradients.
    - `warmup=W`: the learning rate rises linearly, `lr * min(1, t / W)`.
    - `schedule=cosine decay-steps=T min-lr=L`: after the warm-up the
      learning rate falls from `lr` to `L` along half a cosine, reaching it
      at step `T` and staying there (Megatron's cosine decay):
      `L + (lr - L) (1 + cos(pi p)) / 2` with
      `p = clamp((t - W) / (T - W), 0, 1)`. `schedule=constant` (the
      default) keeps `lr` after the warm-up.

    `interleave=true` puts the shared scalars (step + 1, learning rate,
    bias corrections) at the top of the function and each parameter's
    update right after its gradient is produced, so that partitioning puts
    each gradient's reduction over dp inside backward (see
    `part-grad-buckets`); results and their order are unchanged. With
    `clip` the updates stay at the end: the global norm needs every
    gradient. On by default; `interleave=false` puts every update at the
    end of the function (`part-zero` finds the update by data flow either
    way).

    Mixed precision (after `part-mixed-precision`): a bf16 or f16 parameter
    `P` gets an f32 master copy `master.P` in the state, whose initial value
    is `P`'s weights (`part.init = "P"`); its gradient is cast to f32, the
    update works on the master copy, and the parameter's new value is the
    cast of the new master copy. With a `part.loss_scale` state argument
    (f16), the gradients are first divided by the scale; if any element of
    any gradient is not finite the whole step is skipped (every new value is
    the old one, the step count included), the scale halves and the count
    of good steps restarts; after `loss-scale-growth-interval` finite steps
    in a row the scale doubles (PyTorch's GradScaler; the count is the state
    `loss_scale.good_steps`). The updates then stay at the end, as with
    `clip`.

    The update is written with elementwise `part` ops, so any sharding of a
    parameter is a sharding of its update: partitioning splits the update
    the way the parameter is split, and ZeRO only has to split the state.
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"adamw\"",
           "sgd or adamw">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0",
           "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1",
           "weight decay (default: 0.01 for adamw, 0 for sgd)">,
    Option<"clip", "clip", "double", /*default=*/"0",
           "global gradient-norm clipping threshold (0: off)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"constant\"",
           "learning-rate schedule after the warm-up: constant or cosine">,
    Option<"decaySteps", "decay-steps", "int64_t", /*default=*/"0",
           "schedule=cosine: the step at which the learning rate reaches min-lr">,
    Option<"minLr", "min-lr", "double", /*default=*/"0",
           "schedule=cosine: the final learning rate">,
    Option<"warmup", "warmup", "int64_t", /*default=*/"0",
           "linear learning-rate warm-up steps (0: none)">,
    Option<"interleave", "interleave", "bool", /*default=*/"true",
           "put each update right after its gradient (ignored with clip "
           "and loss scaling)">,
    Option<"growthInterval", "loss-scale-growth-interval", "int64_t",
           /*default=*/"2000",
           "dynamic loss scaling: finite steps in a row before the scale doubles">
  ];
}

def PartRecomputePass : Pass<"part-recompute", "::mlir::ModuleOp"> {
  let summary = "recomputes a layer's activations in backward instead of keeping them";
  let description = [{
    Activation recomputation (checkpointing) per layer, on the global
    training program: after `part-autodiff` (or `part-optimizer`), before
    `part-spmd`. Ops belong to a layer by their `part.layer` attribute,
    which `partition-import` sets from ONNX node names (`/h.3/...`,
    `/model/layers.3/...`) and the `--model` generators on each block.

    The forward ops are those the loss (result 0) depends on. For each
    selected layer, a value defined by the layer's forward ops is
    *internal* when no forward op outside the layer uses it (the layer's
    outputs are the next layer's inputs, which stay). Every internal value
    that backward (or the optimizer) uses is recomputed: the layer's forward
    ops it depends on are cloned, each right before the first backward use
    of its results (or of the clones that need it), fed by the originals of
    the layer's inputs and parameters, and backward's uses move to the
    clones. So only the layer's inputs stay live from forward to backward,
    and in backward the recomputed values live only through the layer's
    backward. Ops without operands (constants) and ops with side effects
    are not cloned: their values are used as they are.

    A clone keeps the original's attributes (`part.layer` included), gets
    `part.recomputed` -- which also keeps `cse` from merging it back into
    the original -- and `part.origin = "recomputation of layer N (from
    <location>)"`, and its location is the original's under the name
    `"recomputed"`. Propagation and partitioning treat clones as any op:
    a recomputed row-parallel matmul under tensor parallelism repeats its
    all-reduce, and ZeRO-3 gathers a parameter again for its clone.

    `mode=selective` recomputes only the memory-bound ops of each layer:
    the results of its matmuls, batch matmuls and attention are kept from
    forward (as the layer's inputs are) and what backward needs of the
    other ops (norms, activations, casts, reshapes, residual adds) is
    recomputed from them -- torchtitan's op-level selective checkpointing.
    It saves the normalized copies, the activation function's output and
    the casts between them for little compute (no matmul runs twice).
    `part.attention` recomputes its probabilities in its own backward in
    every mode, so the attention core of Korthikanti et al.'s selective
    recomputation never holds its sequence-squared scores. `mode=full`
    (default) recomputes the whole layer.

    `layers=all` (default) recomputes every layer; `layers=0,2` those
    listed. A listed layer that no function has, a bad list, a per-device
    (`part.spmd`) function and a function without gradients or updates are
    errors.

    Before (layer 0, `%x` its input; backward uses `%1`):
    ```mlir
    %0 = part.matmul %x, %w {part.layer = 0 : i64} : ...
    %1 = part.relu %0 {part.layer = 0 : i64} : ...
    %2 = part.add %x, %1 {part.layer = 0 : i64} : ...      // layer output
    ...                                                    // rest of forward
    %g = part.mul %d, %1 : ...                             // backward
    ```
    After:
    ```mlir
    ...
    %r0 = part.matmul %x, %w {part.layer = 0 : i64, part.origin = "recomputation of layer 0 ...", part.recomputed} : ...
    %r1 = part.relu %r0 {part.layer = 0 : i64, part.origin = "...", part.recomputed} : ...
    %g = part.mul %d, %r1 : ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"layers", "layers", "std::string", /*default=*/"\"all\"",
           "the layers to recompute: all, or a comma-separated list of "
           "layer indices such as 0,2">,
    Option<"mode", "mode", "std::string", /*default=*/"\"full\"",
           "full (the whole layer) or selective (all but its matmuls and "
           "attention)">
  ];
}

def PartZeroPrefetchPass : Pass<"part-zero-prefetch", "::mlir::ModuleOp"> {
  let summary = "issues ZeRO-3 parameter all-gathers one group ahead of their use";
  let description = [{
    On per-device (`part.spmd`) functions, takes the `part.all_gather` ops of
    parameter arguments -- with `part-spmd="zero=3"` one before every use of a
    parameter, in forward and again in backward -- and moves each up to right
    before the first use of the previous group's gathers, so that it runs
    (the runtime runs collectives on their own stream) while the previous
    group computes. A group is a run of gathers, in the order of their first
    use, whose first users carry the same `part.layer` attribute; without
    that attribute each gather is a group of its own, prefetched above the
    first use of the previous parameter. Backward uses the layers in reverse
    order, and so are its gathers prefetched. The first group's gathers are
    issued together, before its first use. Only one group is gathered
    ahead of the one in use, so the gathered copies live at most two groups
    at a time; a gather never moves down. With `flat=true` (the default) the
    gathers of a group of two or more over the same mesh axes become one, as
    FSDP gathers a wrap unit's flat parameter: the shards are flattened
    (`[1, n]`) and concatenated, gathered once over dimension 0 (`[dp,
    total]`: row i is device i's shards), and each parameter's columns are
    sliced out and reshaped to its gathered shape. One collective per layer
    pays the ring's latencies once instead of once per tensor. Its
    `part.origin` names the parameters (`flat all_gather of 4 parameters
    (part-zero-prefetch): w q k v; first: ...`). A gather whose shards are
    not one contiguous run of the gathered value (a dimension of size above
    one before the gathered one) stays on its own. A parameter gathered
    twice in one group (a layer's recomputed forward and its backward) is
    gathered once, and both read that value. A moved gather's `part.origin`
    gains `; prefetched (part-zero-prefetch) ...` with the op it was in front
    of.

    It is not part of `part-spmd`; add it after:
    `partition-opt --part-spmd="mesh=dp:2 zero=3" --part-zero-prefetch`.

    ```mlir
    // Before
    %w0 = part.all_gather %arg1 on @mesh axes ["dp"] dim 0 : tensor<8x32xf32> -> tensor<16x32xf32>
    %h0 = part.matmul %x, %w0 : ...
    %a0 = part.relu %h0 : ...
    %w1 = part.all_gather %arg3 on @mesh axes ["dp"] dim 0 : tensor<16x32xf32> -> tensor<32x32xf32>
    %h1 = part.matmul %a0, %w1 : ...
    // After: layer 1's weight is gathered while layer 0 computes
    %w0 = part.all_gather %arg1 ...
    %w1 = part.all_gather %arg3 ... {part.origin = "...; prefetched (part-zero-prefetch) ..."}
    %h0 = part.matmul %x, %w0 : ...
    %a0 = part.relu %h0 : ...
    %h1 = part.matmul %a0, %w1 : ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"flat", "flat", "bool", /*default=*/"true",
           "one all_gather per group of parameters, flattened and "
           "concatenated (false: one per parameter)">
  ];
}

def PartGradBucketsPass : Pass<"part-grad-buckets", "::mlir::ModuleOp"> {
  let summary = "groups gradient all-reduces and reduce-scatters into buckets that overlap backward";
  let description = [{
    On per-device (`part.spmd`) functions and a pipeline's fragments
    (`part.fragment`: the reductions of gradients accumulated over the
    micro-batches sit in the last backward's), takes the `part.all_reduce ...
    sum` ops -- after `part-spmd` on a data-parallel mesh these are mostly
    the reductions of gradients over `dp` -- and groups those over the same
    mesh axes and element type, in the order their operands are produced
    (backward produces gradients in reverse layer order), into buckets of at
    most `bytes` (a single larger tensor is a bucket of its own; PyTorch
    DDP's default of 25 MB). A bucket of two or more becomes one all_reduce
    of its operands flattened and concatenated, placed right after the last
    of them is produced, and sliced and reshaped back; a bucket of one is
    moved up to right after its operand. The runtime runs collectives on
    their own stream, so each bucket overlaps the rest of backward.

    The `part.reduce_scatter ... sum` ops of ZeRO (gradients scattered over
    dp) are bucketed the same way, apart from the all_reduces, by mesh
    axes, element type and group size: each operand of a bucket over `n`
    devices is reshaped to its `n` blocks (`[n, size / n]`), the blocks are
    concatenated side by side and flattened, so that device `i`'s share of
    the one reduce_scatter is its block of every operand in order, sliced
    and reshaped back. A reduce_scatter whose blocks are not contiguous (a
    dimension of size above one before the scattered one) is a bucket of
    its own.

    With `dtype=bf16` (or `f16`), f32 gradients are reduced in that type,
    as FSDP's `reduce_dtype` and Megatron's `--grad-reduce-in-bf16` do: each
    bucket (a single reduction too) is cast down before its collective and
    back to f32 after, which halves the bytes on the links; the sum is
    rounded to bf16 once per collective (the CPU backend adds in f32), so
    the result differs from an f32 reduction by bf16's rounding. The
    bucket's `part.origin` says `in bf16`.

    Ops that used a bucketed result and came before the bucket's all_reduce
    (the optimizer updates of earlier gradients) move below it, in their
    order. An all_reduce whose operand depends on the result of another one
    in the bucket closes the bucket instead. The bucket's all_reduce carries
    `part.origin = "bucket of N all_reduces (part-grad-buckets): o1; o2"`,
    listing the `part.origin` of every reduction it carries, in order.

    With `overlap=false` the reductions wait for the end of backward, as
    Megatron's data-parallel all-reduce of its whole gradient buffer does
    without `--overlap-grad-reduce` (and DeepSpeed's with
    `overlap_comm=false`): each sum that no layer's op (`part.layer`) and
    no other sum waits for, directly or through other ops -- a gradient's
    reduction, read by the update, or returned by a pipeline's backward
    fragment -- moves, in order, to the end of its function, and the ops
    that read it follow. Sums backward waits for (a tensor-parallel input
    gradient) stay.

    It is not part of `part-spmd`; add it after:
    `partition-opt --part-spmd="mesh=dp:2" --part-grad-buckets="bytes=4096"`.

    ```mlir
    // Before (bytes=64): two gradients of 32 bytes each
    %g1 = part.matmul ... : ... -> tensor<2x4xf32>
    %r1 = part.all_reduce %g1 on @mesh axes ["dp"] sum : tensor<2x4xf32>
    %u1 = part.sub %p1, %r1 : ...
    %g2 = part.matmul ... : ... -> tensor<8xf32>
    %x = part.matmul ...              // more backward
    %r2 = part.all_reduce %g2 on @mesh axes ["dp"] sum : tensor<8xf32>
    // After
    %g1 = part.matmul ...
    %g2 = part.matmul ...
    %f1 = part.reshape %g1 : tensor<2x4xf32> -> tensor<8xf32>
    %c = part.concat %f1, %g2 dim 0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    %r = part.all_reduce %c on @mesh axes ["dp"] sum {part.origin = "bucket of 2 ..."} : tensor<16xf32>
    %s1 = part.slice %r offsets [0] : tensor<16xf32> -> tensor<8xf32>
    %r1 = part.reshape %s1 : tensor<8xf32> -> tensor<2x4xf32>
    %r2 = part.slice %r offsets [8] : tensor<16xf32> -> tensor<8xf32>
    %u1 = part.sub %p1, %r1 : ...
    %x = part.matmul ...
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"bytes", "bytes", "int64_t",
           /*default=*/"::partition::part::kGradBucketBytes",
           "the most bytes in one bucket">,
    Option<"dtype", "dtype", "std::string", /*default=*/"",
           "the type f32 gradients are reduced in: bf16 or f16 (empty: "
           "their own)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "reduce each bucket beside the rest of backward (false: every "
           "gradient's reduction after the whole backward, as Megatron's "
           "DDP without --overlap-grad-reduce)">
  ];
}

def PartHtmlReportPass : Pass<"part-html-report", "::mlir::ModuleOp"> {
  let summary = "writes an HTML page that shows the per-device programs' plan";
  let description = [{
    Writes one self-contained HTML page (inline CSS and SVG, no script, no
    network; docs/design/2026-12-04-report-check-progress.md) about the
    module's per-device (`part.spmd`) programs, pipeline stages included:

    - each mesh as a grid of devices, with its axes, the groups along each
      axis and the node of every device on `cluster`;
    - per program, the bytes one device holds at its peak by category
      (parameters, gradients, optimizer state, activations, inputs) against
      the device's memory;
    - for pipelines, the stages' schedule as a timeline (F / B / W per
      micro-batch) under the cost model's step costs, with each stage's idle
      share;
    - the predicted time of each program, compute and communication;
    - every collective: kind, axes, group, bytes per device, predicted time
      and origin (which op needed it, and a link to the annotated argument
      that gave it its sharding); and the same by kind, slowest first;
    - the arguments (parameters, inputs, state) by layer: global shape,
      sharding, local shape, bytes per device.

    The IR is unchanged. `partition-opt --part-report=FILE` appends this
    pass to any pipeline.

    ```
    partition-opt gpt.mlir --part-spmd="mesh=dp:2,tp:2" \
      --part-html-report="output=report.html cluster=dgx-h100" -o /dev/null
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "the page to write">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"dgx-h100\"",
           "a cluster preset (dgx-a100, dgx-h100, h200) or cluster file, for "
           "nodes, memory capacity and predicted times">
  ];
  let dependentDialects = ["::partition::part::PartDialect"];
}

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD
