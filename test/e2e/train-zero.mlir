// ZeRO end to end: the generated GPT and MLP of train.mlir, an AdamW step
// (part-optimizer's default: each update interleaved with backward),
// partitioned with `part-spmd="mesh=... zero=N"` for N = 1, 2, 3 on meshes
// (dp, tp) = (1,1), (1,2), (2,1), (2,2) and (4,2) (8 ranks; on (1,1) and
// (1,2) the dp group is one device, so ZeRO has nothing to split), and at
// N = 3 also with
// `part-zero-prefetch` after it ("3p": each layer's parameters gathered as
// one flat bucket, a layer ahead), with `part-grad-buckets` too ("3b":
// FSDP's form, gradients reduce-scattered in buckets), and at N = 2 with
// the buckets ("2b"), and run for 5 steps. Every run must
// give the per-step losses and final weights and optimizer state of the
// single-rank run of the step with its updates at the end
// (interleave=false); partition-run writes each result whole, so a state or
// parameter sharded over dp is compared as one tensor.
//
// Tolerance: as train.mlir (losses 2e-5 + 2e-5 |ref|; weights and state
// 1e-5 + 1e-3 |ref|), for the same reason: ZeRO only changes where sums are
// completed (a reduce-scatter instead of an all-reduce adds the same dp
// partial sums in the same per-element order), so the per-step error stays a
// relative 1e-6 on gradients and AdamW turns it into ~1e-9 on updates of
// size lr. A shard updated with another shard's gradient, a gradient left
// unreduced, or a parameter not gathered before a use moves weights by ~lr
// (1e-3) or losses by far more.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: for model in gpt mlp; do \
// RUN:   if [ $model = gpt ]; then \
// RUN:     partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input tokens=%t/tokens.npy --input labels=%t/labels.npy"; \
// RUN:   else \
// RUN:     partition-import --model mlp --layers 3 --hidden 16 --ffn 32 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input x=%t/x.npy --input targets=%t/targets.npy"; \
// RUN:   fi; \
// RUN:   loss=cross-entropy; [ $model = mlp ] && loss=mse; \
// RUN:   partition-opt %t/$model.mlir --part-append-loss="kind=$loss" --part-autodiff --part-optimizer="kind=adamw lr=1e-3" > %t/$model-step.mlir || exit 1; \
// RUN:   partition-opt %t/$model.mlir --part-append-loss="kind=$loss" --part-autodiff --part-optimizer="kind=adamw lr=1e-3 interleave=false" > %t/$model-step-end.mlir || exit 1; \
// RUN:   runs=""; \
// RUN:   for cfg in dp:1/0 $(for m in dp:1 dp:1,tp:2 dp:2 dp:2,tp:2 dp:4,tp:2; do for z in 1 2 2b 3 3p 3b; do echo $m/$z; done; done); do \
// RUN:     m=${cfg%%/*}; z=${cfg#*/}; n=$model-$m-zero$z; step=%t/$model-step.mlir; [ $cfg = dp:1/0 ] && step=%t/$model-step-end.mlir; \
// RUN:     after=""; case $z in 3p) after=--part-zero-prefetch;; 3b) after="--part-zero-prefetch --part-grad-buckets=bytes=4096";; 2b) after=--part-grad-buckets=bytes=4096;; esac; \
// RUN:     partition-opt $step --part-spmd="mesh=$m zero=${z%%[pb]}" 2>/dev/null | partition-opt $after -o %t/$n.mlir || exit 1; \
// RUN:     partition-translate --part-to-plan %t/$n.mlir -o %t/$n.plan 2>/dev/null || exit 1; \
// RUN:     mkdir -p %t/$n && \
// RUN:     partition-run %t/$n.plan --backend cpu --steps 5 --weights %t/$model.safetensors $feed --output-dir %t/$n > %t/$n.log || exit 1; \
// RUN:     [ $cfg = dp:1/0 ] || runs="$runs $n"; \
// RUN:   done; \
// RUN:   %python %S/Inputs/losses_agree.py 2e-5 2e-5 %t/$model-dp:1-zero0.log $(for r in $runs; do echo %t/$r.log; done) || exit 1; \
// RUN:   %python %S/Inputs/compare_dirs.py 1e-5 1e-3 %t/$model-dp:1-zero0 $(for r in $runs; do echo %t/$r; done) || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/losses_agree.py --falling %t/gpt-dp:2,tp:2-zero3.log
//
// Memory: on an MLP whose parameters dominate (8 layers of 256x256, batch 4),
// each stage-3 gathered copy must be used once and its arena bytes reused
// after that use (gathers_freed.py on the plan: no gather shared by forward
// and backward, none kept to the end of the step), with or without
// prefetch: 8 weights and 8 biases in forward, 7 weights again in backward.
// And the planned arena of zero=3 is below zero=1's (whose peak, at the end
// of the step, holds the whole new parameters). A gather shared by forward
// and backward keeps the arena below zero=1's here too; the plan check is
// the one that sees it. Compile only.
// RUN: partition-import --model mlp --layers 8 --hidden 256 --ffn 256 --batch 4 --seed 3 -o %t/wide.mlir --weights %t/wide.safetensors
// RUN: partition-opt %t/wide.mlir --part-append-loss="kind=mse" --part-autodiff --part-optimizer="kind=adamw" -o %t/wide-step.mlir
// RUN: for z in 1 3 3p; do \
// RUN:   prefetch=""; [ $z = 3p ] && prefetch=--part-zero-prefetch; \
// RUN:   partition-opt %t/wide-step.mlir --part-spmd="mesh=dp:2 zero=${z%%p}" 2>/dev/null | partition-opt $prefetch | \
// RUN:     partition-translate --part-to-plan --part-memory-report -o %t/wide$z.plan 2>&1 | sed -n 's/^  arena *\([0-9]*\) .*/\1/p' > %t/wide-arena$z || exit 1; \
// RUN:   [ $z = 1 ] || { partition-run %t/wide$z.plan --dump > %t/wide$z.dump && %python %S/Inputs/gathers_freed.py %t/wide$z.dump 23; } || exit 1; \
// RUN: done
// RUN: a1=$(cat %t/wide-arena1); a3=$(cat %t/wide-arena3); a3p=$(cat %t/wide-arena3p); \
// RUN: echo "arena zero=1 $a1 zero=3 $a3 zero=3+prefetch $a3p"; [ "$a3" -lt "$a1" ] && [ "$a3p" -lt "$a1" ]
//
// The partitioned MLP on dp:2 (layers.0.weight is 16x32, argument 1; its
// AdamW moments are arguments 9 and 10; the loss is the only all-reduce,
// issued as soon as the loss is made, before backward: part-hoist-reductions).
// RUN: FileCheck %s --check-prefix=ZERO1 --implicit-check-not=part.all_reduce < %t/mlp-dp:2-zero1.mlir
// RUN: FileCheck %s --check-prefix=ZERO2 --implicit-check-not=part.all_reduce < %t/mlp-dp:2-zero2.mlir
// RUN: FileCheck %s --check-prefix=ZERO3 --implicit-check-not=part.all_reduce < %t/mlp-dp:2-zero3.mlir
// RUN: FileCheck %s --check-prefix=PREFETCH < %t/mlp-dp:2-zero3p.mlir
// One reduction over dp per gradient, in every partitioned program of both
// models: as many reduce-scatters and all-reduces over dp as parameters, plus
// the loss's all-reduce (AdamW used to reduce a gradient once per moment;
// with tp, a moment laid out otherwise than its parameter did too); a
// bucket of N (part-grad-buckets) counts as the N it carries:
// RUN: for f in %t/*-dp:[2-9]*-zero[1-3]*.mlir; do \
// RUN:   p=$(grep -o 'part.role<parameter>' $f | wc -l); \
// RUN:   r=$(grep -e 'part.reduce_scatter .*axes \[[^]]*"dp"' -e 'part.all_reduce .*axes \[[^]]*"dp"' $f | \
// RUN:       sed -n 's/.*"bucket of \([0-9]*\) .*/\1/p; t; s/.*/1/p' | awk '{ n += $1 } END { print n }'); \
// RUN:   [ "$r" -eq $((p + 1)) ] || { echo "$f: $r reductions over dp for $p parameters"; exit 1; }; \
// RUN: done
// With tensor parallelism, dp splits the tp-local shard (layers.0.bias: 32
// split over tp, then each half over dp):
// RUN: FileCheck %s --check-prefix=TP < %t/mlp-dp:2,tp:2-zero1.mlir
// RUN: FileCheck %s --check-prefix=TP3 < %t/mlp-dp:2,tp:2-zero3.mlir

// ZERO1-LABEL: func.func @mlp(
// ZERO1-SAME: %arg1: tensor<16x32xf32> {part.name = "layers.0.weight", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {}]>}
// ZERO1-SAME: %arg9: tensor<8x32xf32> {part.name = "adam.m.layers.0.weight", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.state_of = 1 : i64}
// ZERO1-SAME: %arg10: tensor<8x32xf32> {part.name = "adam.v.layers.0.weight", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.state_of = 1 : i64}
// The new parameter stays replicated; the new moments are shards:
// ZERO1-SAME: -> (tensor<f32> {part.name = "loss"}, tensor<16x32xf32> {part.name = "new.layers.0.weight", {{.*}}}, tensor<8x32xf32> {part.name = "new.adam.m.layers.0.weight",
// ZERO1: part.all_reduce {{.*}} : tensor<f32>
// The gradient (the last matmul of backward, a pending sum over dp) is
// reduce-scattered once, right where it is produced (the bias's update,
// which it does not wait for, runs beside it), for both moments:
// ZERO1: %[[G:.*]] = part.matmul %arg0, %{{.*}} transpose_a {{.*}}: (tensor<2x16xf32>, tensor<2x32xf32>) -> tensor<16x32xf32>
// ZERO1-NEXT: %[[S:.*]] = part.reduce_scatter %[[G]] on @mesh axes ["dp"] dim 0 sum {{.*}} : tensor<16x32xf32> -> tensor<8x32xf32>
// ZERO1: part.mul %[[S]], %{{.*}} : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
// ZERO1-NOT: part.reduce_scatter
// ZERO1: part.mul %[[S]], %[[S]] : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// ZERO1-NOT: part.reduce_scatter
// The new parameter, updated shard by shard, is all-gathered:
// ZERO1: part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {{.*}} : tensor<8x32xf32> -> tensor<16x32xf32>

// ZERO2-LABEL: func.func @mlp(
// ZERO2-SAME: %arg9: tensor<8x32xf32> {part.name = "adam.m.layers.0.weight", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.state_of = 1 : i64}
// One reduce-scatter per gradient, before any use in the update (the same
// program as stage 1):
// ZERO2: part.all_reduce {{.*}} : tensor<f32>
// ZERO2: %[[G:.*]] = part.matmul %arg0, %{{.*}} transpose_a {{.*}}: (tensor<2x16xf32>, tensor<2x32xf32>) -> tensor<16x32xf32>
// ZERO2-NEXT: %[[S:.*]] = part.reduce_scatter %[[G]] on @mesh axes ["dp"] dim 0 sum {{.*}} : tensor<16x32xf32> -> tensor<8x32xf32>
// ZERO2: part.mul %[[S]], %{{.*}} : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
// ZERO2-NOT: part.reduce_scatter %[[G]]
// ZERO2: part.mul %[[S]], %[[S]] : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// ZERO2: part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {{.*}} : tensor<8x32xf32> -> tensor<16x32xf32>

// ZERO3-LABEL: func.func @mlp(
// ZERO3-SAME: %arg1: tensor<8x32xf32> {part.name = "layers.0.weight", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}
// ZERO3-SAME: %arg9: tensor<8x32xf32> {part.name = "adam.m.layers.0.weight", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.state_of = 1 : i64}
// Each use of a parameter gathers it first: the forward matmul of layer 0,
// and layer 1's weight (argument 3) in the forward and again in backward.
// ZERO3: %[[W0:.*]] = part.all_gather %arg1 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<8x32xf32> -> tensor<16x32xf32>
// ZERO3-NEXT: part.matmul %arg0, %[[W0]]
// ZERO3: %[[W1:.*]] = part.all_gather %arg3 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<16x32xf32> -> tensor<32x32xf32>
// ZERO3-NEXT: part.matmul %{{.*}}, %[[W1]] {part.layer = 1 : i64} :
// ZERO3: part.all_reduce {{.*}} : tensor<f32>
// ZERO3: %[[W1B:.*]] = part.all_gather %arg3 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<16x32xf32> -> tensor<32x32xf32>
// ZERO3: part.matmul %{{.*}}, %[[W1B]] transpose_b
// The update works on shards, parameters included, and nothing is gathered
// after it: the new parameters are returned as shards.
// ZERO3: part.reduce_scatter {{.*}} axes ["dp"] dim 0 sum {{.*}} : tensor<16x32xf32> -> tensor<8x32xf32>
// ZERO3-NOT: part.all_gather
// ZERO3: return
// ZERO3-SAME: tensor<f32>, tensor<8x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>,

// Prefetched: the generator tags each block's ops with part.layer, so the
// gathers move as one group per layer, each group up above the compute of
// the previous one: forward, layer 1's weight and bias (arguments 3, 4)
// are gathered before layer 0's matmul; a layer's backward (part-autodiff
// labels it with the layer) is a group of its own, after the layer's
// forward group (layer 1's weight, argument 3, above the backward matmul
// that uses layer 2's); each still has a single use.
// PREFETCH-LABEL: func.func @mlp(
// The slices of a flat gather sit right before their parameter's first use,
// after the next group's gather: the compute stream does not wait for it.
// PREFETCH: %[[F0:.*]] = part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): layers.0.weight layers.0.bias; first:
// PREFETCH-NOT: part.slice
// PREFETCH: part.all_gather %{{.*}} on @mesh axes ["dp"] dim 0 {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): layers.1.weight layers.1.bias; first: {{.*}}; prefetched (part-zero-prefetch) above the compute of the previous group
// PREFETCH-NEXT: %[[W0:.*]] = part.slice %[[F0]] offsets [0, 0] : tensor<2x272xf32> -> tensor<2x256xf32>
// PREFETCH-NEXT: %[[W0R:.*]] = part.reshape %[[W0]]
// PREFETCH-NEXT: part.matmul %arg0, %[[W0R]] {part.layer = 0 : i64}
// Layer 2's weight and bias gathered for forward, its weight again for
// backward (a group of one, as it is: backward needs no bias):
// PREFETCH: part.all_gather %{{.*}} {part.origin = "flat all_gather of 2 parameters (part-zero-prefetch): layers.2.weight layers.2.bias; first: {{.*}}; prefetched
// PREFETCH: %[[W2B:.*]] = part.all_gather %arg5 on @mesh axes ["dp"] dim 0 {part.origin = "{{.*}}; prefetched
// PREFETCH: %[[W1B:.*]] = part.all_gather %arg3 on @mesh axes ["dp"] dim 0 {part.origin = "{{.*}}; prefetched
// PREFETCH-NEXT: part.matmul %{{.*}}, %[[W2B]] transpose_b
// PREFETCH: part.matmul %{{.*}}, %[[W1B]] transpose_b

// TP-LABEL: func.func @mlp(
// TP-SAME: %arg11: tensor<8xf32> {part.name = "adam.m.layers.0.bias", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"tp", "dp"}]>, part.state_of = 2 : i64}
// TP: part.reduce_scatter {{.*}} on @mesh axes ["dp"] dim 0 sum {{.*}} : tensor<16xf32> -> tensor<8xf32>

// TP3-LABEL: func.func @mlp(
// TP3-SAME: %arg2: tensor<8xf32> {part.name = "layers.0.bias", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp", "dp"}]>}
// TP3: part.all_gather %arg2 on @mesh axes ["dp"] dim 0 {{.*}} : tensor<8xf32> -> tensor<16xf32>
