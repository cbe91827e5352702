// Expert parallelism: a generated Mixtral (2 layers, 4 experts, top-2,
// the load-balancing loss added to the cross-entropy) trained 3 steps with
// partition-check on ep:2, ep:4, dp:2,ep:2, ep:2,tp:2 and pp:2,ep:2, each
// against one device (losses and every weight after the last step), with
// a capacity factor of 1 (8 slots per expert and sequence of 16: tokens
// are dropped) and with none (dropless). Each ep
// device holds its experts only; the tokens reach them and come back with
// all-to-alls, forward and backward. Tolerances: partition-check's
// defaults (1e-5 + 1e-4 |ref| for the losses, rtol 1e-3 for the weights).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: for f in 1 0; do \
// RUN:   partition-import --model mixtral --layers 2 --hidden 32 --heads 4 --kv-heads 2 --experts 4 --top-k 2 --vocab 64 --seq 16 --batch 4 --capacity-factor $f -o %t/m$f.mlir --weights %t/m$f.safetensors || exit 1; \
// RUN:   for m in ep:2 ep:4 dp:2,ep:2 ep:2,tp:2 pp:2,ep:2; do \
// RUN:     partition-check %t/m$f.mlir --mesh $m --steps 3 --weights %t/m$f.safetensors > %t/check$f-$m.log || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: cat %t/check1-*.log %t/check0-*.log | FileCheck %s --check-prefix=CHECK
// CHECK-COUNT-10: PASS
//
// With ZeRO: the experts' state (and with zero=3 their weights) split over
// ep and dp, every other parameter's over dp and ep, the whole group its
// gradients are summed over (as Megatron-Core's distributed optimizer
// shards the dense parameters over the data-parallel group with the
// expert-parallel ranks in it); on ep:4 over ep alone; and with ep across
// dp (ep:2,dp:2: the ep devices a node apart rather than beside each
// other).
// RUN: for m in "dp:2,ep:2 1" "dp:2,ep:2 3" "ep:4 1" "ep:2,dp:2 1"; do \
// RUN:   set -- $m; partition-check %t/m1.mlir --mesh $1 --steps 3 --weights %t/m1.safetensors --spmd-options zero=$2 > %t/zero-$1-$2.log || exit 1; \
// RUN: done
// RUN: cat %t/zero-*.log | FileCheck %s --check-prefix=ZERO
// ZERO-COUNT-4: PASS
// RUN: partition-opt %t/m1.mlir --part-append-loss --part-autodiff --part-optimizer="kind=adamw" --part-spmd="mesh=dp:2,ep:2 zero=3" -o - | FileCheck %s --check-prefix=ZERO3
// ZERO3-DAG: part.name = "layers.0.block_sparse_moe.experts.w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"ep", "dp"}, {}, {}]>
// ZERO3-DAG: part.name = "layers.0.self_attn.q_proj.weight", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"dp", "ep"}, {}]>
// ZERO3-DAG: part.name = "adam.m.layers.0.self_attn.q_proj.weight", part.role = #part.role<state>, part.sharding = #part.sharding<@mesh, [{"dp", "ep"}, {}]>
//
// The compiled program on ep:2: each device holds 2 of the 4 experts of
// each weight (and of its gradient); the dispatched buffer [4, 2, 8, 32]
// goes from split by sequence to split by expert and back, forward and
// backward: four all-to-alls per layer, none over another axis.
// RUN: partition-opt %t/m1.mlir --part-append-loss --part-autodiff --part-optimizer="kind=adamw" --part-spmd="mesh=ep:2" -o %t/ep2.mlir
// RUN: FileCheck %s --check-prefix=EP < %t/ep2.mlir
// EP: part.name = "layers.0.block_sparse_moe.experts.w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"ep"}, {}, {}]>
// EP: part.name = "adam.m.layers.0.block_sparse_moe.experts.w1"{{.*}}part.sharding = #part.sharding<@mesh, [{"ep"}, {}, {}]>
// EP-COUNT-2: part.all_to_all %{{.*}} on @mesh axes ["ep"] split_dim {{[01]}} concat_dim {{[01]}} {part.layer = 0
// EP-COUNT-2: part.all_to_all %{{.*}} on @mesh axes ["ep"] split_dim {{[01]}} concat_dim {{[01]}} {part.layer = 1
// EP-COUNT-4: part.all_to_all %{{.*}} on @mesh axes ["ep"]
// EP-NOT: part.all_to_all
//
// --part-explain names what each all-to-all carries: the local buffer of 2
// sequences (4 experts x 2 groups x 8 slots x 32 f32 = 8192 bytes), half of
// it leaving each device.
// RUN: partition-opt %t/ep2.mlir --part-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: all_to_all over "ep" (2 devices) of 8192 bytes moves 4096 bytes per device; needed by operand 0 of part.batch_matmul {{.*}}; to the experts: 8 slots per expert for each group of 16 tokens routed to 2 experts each (capacity factor 1)
// EXPLAIN: remark: all_to_all over "ep" (2 devices) of 8192 bytes moves 4096 bytes per device; needed by operand 0 of part.expert_combine {{.*}}; from the experts: 8 slots per expert for each group of 16 tokens routed to 2 experts each (capacity factor 1)
// EXPLAIN: all_to_all  "ep"  8      32768
//
// A model with no experts on an ep axis, experts the axis does not divide
// and a batch a pipeline cannot cut are errors.
// RUN: partition-import --model llama --layers 1 -o %t/llama.mlir
// RUN: not partition-opt %t/llama.mlir --part-spmd="mesh=ep:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOEXPERTS
// NOEXPERTS: error: mesh axis "ep" splits experts, but @llama has no part.expert_dispatch (no mixture-of-experts layer)
// RUN: not partition-opt %t/m1.mlir --part-spmd="mesh=ep:8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNEVEN
// UNEVEN: error: argument {{[0-9]+}} (layers.0.block_sparse_moe.experts.w1) holds 4 experts, which mesh axis "ep" of size 8 does not divide
// Under a pipeline the batch is not padded: the micro-batches times the ep
// devices must divide it.
// RUN: not partition-opt %t/m1.mlir --part-spmd="mesh=pp:2,ep:4 micro-batches=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MICRO
// MICRO: error: argument 0 has a batch of 4, which the micro-batches times the devices of "ep" (8) do not divide
