// The two-layer GPT-2 example without its annotations, partitioned by the
// part-spmd pipeline alone.
// RUN: partition-opt %S/../../../Examples/gpt2.mlir --part-strip-sharding=remove-meshes > %t.mlir
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:4" | FileCheck %s --check-prefix=TP
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:2,tp:4" | FileCheck %s --check-prefix=DPTP
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:8" | FileCheck %s --check-prefix=DP
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:2,tp:4 sequence-parallel=true" | FileCheck %s --check-prefix=SP
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:2,tp:4" --mlir-print-ir-after=part-tensor-parallel -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGE
// A tp axis of one device splits nothing: the loss stays one fused op, as
// the same plan without the axis runs it (the planner's tp=1 probe compiles
// on "tp:1" and costs what "dp:8" runs).
// RUN: partition-opt %t.mlir --part-spmd="mesh=tp:1" | FileCheck %s --check-prefix=TP1
// TP1: part.softmax_cross_entropy
// TP1-NOT: vocabulary-parallel loss

// Megatron: two all-reduces over "tp" per layer in the forward pass (after
// the attention output projection and the second MLP matmul); the embedding
// table, split by rows, costs one all-reduce of the looked-up embeddings, and
// the tied output head's vocabulary-split logits three all-reduces of
// per-position scalars in the loss. Nothing is gathered.
// TP: part.mesh @mesh = <["tp"=4]>
// TP: attributes {part.spmd = @mesh}
// TP-NOT: part.all_gather
// TP: part.axis_index on @mesh axes ["tp"] {part.origin = "vocabulary-parallel lookup
// TP-COUNT-5: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "operand 0 of part.add
// TP: part.all_reduce {{.*}} axes ["tp"] max {part.origin = "vocabulary-parallel loss
// TP-COUNT-2: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "vocabulary-parallel loss
// TP-NOT: part.all_

// Data parallelism adds only the loss's mean over the batch.
// DPTP: part.mesh @mesh = <["dp"=2, "tp"=4]>
// DPTP-COUNT-8: part.all_reduce {{.*}} axes ["tp"]
// DPTP: part.all_reduce {{.*}} axes ["dp"] sum
// DPTP-NOT: part.all_

// DP: part.all_reduce {{.*}} axes ["dp"] sum
// DP-NOT: part.all_

// The IR after each stage can be inspected: here after the Megatron splits
// (the Q projection of layer 0 by columns, its output projection by rows).
// STAGE: IR Dump After PartTensorParallelPass
// STAGE: %arg6: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// STAGE: %arg12: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}

// Sequence parallelism: each block's all-reduce becomes a reduce-scatter of
// its output by sequence and an all-gather of the next block's input (the
// Q, K and V projections share one all-gather); the embeddings are
// reduce-scattered into the sequence-split residual stream.
// SP: attributes {part.spmd = @mesh}
// SP-NOT: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "operand
// SP-COUNT-5: part.reduce_scatter {{.*}} axes ["tp"] dim 1 sum
// SP-NOT: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "operand
// SP: part.all_reduce {{.*}} axes ["tp"] max {part.origin = "vocabulary-parallel loss
// SP: part.all_reduce {{.*}} axes ["dp"] sum
