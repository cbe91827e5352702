// The communication of a whole training step: the generated GPT (4 layers,
// hidden 256, 8 heads, vocabulary 512, sequence 64, batch 8) with
// cross-entropy, SGD, on dp:2,tp:4. Megatron's schedule for this step, in
// part-explain's ring-weighted bytes per device (an all-reduce of B bytes
// over n devices moves 2(n-1)/n B):
// - per layer, an all-reduce of the activation [4, 64, 256] f32 (262,144
//   bytes, 393,216 moved) after each row-parallel layer in forward, and
//   after each column-parallel one in backward: 16 in all;
// - the vocabulary-parallel embedding (forward) and the tied head's input
//   gradient (backward): 2 more;
// - the vocabulary-parallel loss: 3 all-reduces of one value per position
//   ([4, 64, 1], 1,536 bytes moved each), and its backward softmax over the
//   split vocabulary: 2 more;
// - the dp all-reduce of every gradient.
// That is 18 x 393,216 + 5 x 1,536 = 7,085,568 bytes over "tp", and nothing
// else over "tp": tensor parallelism is chosen from the forward program
// only, a cotangent's pending sum is completed once, and the softmax of the
// loss's backward keeps its split. The step moved 26,223,364 bytes per
// device in 197 collectives before those three changes.
//
// RUN: partition-import --model gpt --layers 4 --hidden 256 --heads 8 --vocab 512 --seq 64 --batch 8 --loss cross-entropy --shapes-only -o %t.mlir
// RUN: partition-opt %t.mlir --part-autodiff --part-optimizer="kind=sgd lr=1e-3" --part-spmd="mesh=dp:2,tp:4" --part-explain -o /dev/null 2>/dev/null | FileCheck %s
//
// At most 10.5 MB per device (10,461,700 when written):
// CHECK: func @gpt on @mesh: {{[0-9]+}} collectives, {{(10[0-4][0-9][0-9][0-9][0-9][0-9]|[0-9]|[1-9][0-9]|[1-9][0-9][0-9]|[1-9][0-9][0-9][0-9]|[1-9][0-9][0-9][0-9][0-9]|[1-9][0-9][0-9][0-9][0-9][0-9]|[1-9][0-9][0-9][0-9][0-9][0-9][0-9])}} bytes per device
// CHECK-NEXT: kind
// CHECK-NEXT: all_reduce "dp"
// CHECK-NEXT: all_reduce "tp" 23 7085568
// CHECK-NEXT: all_slice "tp" {{[0-9]+}} 0
// CHECK-NOT: {{.}}

// Sequence parallelism moves what Megatron's moves: each all-reduce of the
// activation a reduce-scatter and an all-gather of half its bytes (18 of
// each, 196,608 moved each), the backward choosing the layouts the forward
// pass already made and gathering an activation rather than scattering a
// weight-sized sum; and, as Megatron keeps the shard of a gathered input
// and gathers it again for the weight gradient (part-remake-in-backward),
// one more all-gather per gathered input that backward reads after other
// layers ran (two per layer but the last, whose backward follows at once:
// 6, 24 in all). Without those 6 it moves no more than plain tensor
// parallelism.
// RUN: partition-opt %t.mlir --part-autodiff --part-optimizer="kind=sgd lr=1e-3" --part-spmd="mesh=dp:2,tp:4" --part-explain -o /dev/null 2>&1 | grep "^func @gpt" > %t.plain
// RUN: partition-opt %t.mlir --part-autodiff --part-optimizer="kind=sgd lr=1e-3" --part-spmd="mesh=dp:2,tp:4 sequence-parallel=true" --part-explain -o /dev/null 2>/dev/null > %t.sp
// RUN: FileCheck %s --check-prefix=SP < %t.sp
// RUN: %python -c "import re, sys; b = lambda f: int(re.search(r'(\d+) bytes per device', open(f).read()).group(1)); p, s = b('%t.plain'), b('%t.sp'); print('sequence-parallel', s, 'plain', p); sys.exit(s - 6 * 196608 > p)"
// SP: func @gpt on @mesh:
// SP-NEXT: kind
// SP-NEXT: all_gather "tp" 24 4718592
// SP-NEXT: all_reduce "dp"
// SP-NEXT: all_reduce "dp", "tp"
// SP-NEXT: all_reduce "tp" 5 7680
// SP-NEXT: all_slice "tp" {{[0-9]+}} 0
// SP-NEXT: reduce_scatter "tp" 18 3538944
// SP-NOT: {{.}}

// Optimizer state is laid out as the parameter it updates (part.state_of):
// the master copy and both moments of a column-split weight are split as it
// is, with or without sequence parallelism, whatever the gradient's layout
// (before, the update left them whole over tp: AdamW's state was 4x the
// parameters' share on tp:4, and doubled under sequence parallelism).
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 8 --vocab 512 --seq 16 --batch 2 --shapes-only -o %t.state.mlir
// RUN: partition-opt %t.state.mlir --part-append-loss=kind=cross-entropy --part-mixed-precision --part-autodiff --part-optimizer -o %t.state-step.mlir
// RUN: partition-opt %t.state-step.mlir --part-spmd="mesh=tp:4" | FileCheck %s --check-prefix=STATE
// RUN: partition-opt %t.state-step.mlir --part-spmd="mesh=tp:4 sequence-parallel=true" | FileCheck %s --check-prefix=STATE
// STATE: tensor<64x16xbf16> {part.name = "h.0.attn.q.weight", part.role = #part.role<parameter>
// STATE: tensor<64x16xf32> {part.init = "h.0.attn.q.weight", part.name = "master.h.0.attn.q.weight", part.role = #part.role<state>
// STATE: tensor<64x16xf32> {part.name = "adam.m.h.0.attn.q.weight", part.role = #part.role<state>
// STATE: tensor<64x16xf32> {part.name = "adam.v.h.0.attn.q.weight", part.role = #part.role<state>
