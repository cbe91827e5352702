// partition-import --model gpt: the structure of the generated GPT-2 (token
// and position embeddings, pre-LN blocks with causal multi-head attention
// and a tanh-GELU MLP, final LayerNorm, LM head tied to the token
// embedding), its argument names and shapes, its weights, and its Megatron
// partitioning.
//
// A global program: no mesh, no sharding, and it verifies on its own.
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 4 --shapes-only -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=GLOBAL < %t.mlir
// RUN: partition-opt %t.mlir --part-print-sharding-rules -o /dev/null 2>/dev/null
// GLOBAL-NOT: part.mesh
// GLOBAL-NOT: part.sharding
// GLOBAL-NOT: part.spmd
//
// CHECK-LABEL: func.func @gpt(
// CHECK-SAME: %[[TOK:arg[0-9]+]]: tensor<4x16xi32> {part.name = "tokens", part.role = #part.role<input>}
// CHECK-SAME: %[[WTE:arg[0-9]+]]: tensor<128x64xf32> {part.name = "wte", part.role = #part.role<parameter>}
// CHECK-SAME: %[[WPE:arg[0-9]+]]: tensor<16x64xf32> {part.name = "wpe", part.role = #part.role<parameter>}
// CHECK-SAME: %[[G1:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.ln_1.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[B1:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.ln_1.bias", part.role = #part.role<parameter>}
// CHECK-SAME: %[[WQ:arg[0-9]+]]: tensor<64x64xf32> {part.name = "h.0.attn.q.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[BQ:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.attn.q.bias", part.role = #part.role<parameter>}
// CHECK-SAME: %[[WK:arg[0-9]+]]: tensor<64x64xf32> {part.name = "h.0.attn.k.weight"
// CHECK-SAME: %[[BK:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.attn.k.bias"
// CHECK-SAME: %[[WV:arg[0-9]+]]: tensor<64x64xf32> {part.name = "h.0.attn.v.weight"
// CHECK-SAME: %[[BV:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.attn.v.bias"
// CHECK-SAME: %[[WO:arg[0-9]+]]: tensor<64x64xf32> {part.name = "h.0.attn.proj.weight"
// CHECK-SAME: %[[BO:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.attn.proj.bias"
// CHECK-SAME: %[[G2:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.ln_2.weight"
// CHECK-SAME: %[[B2:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.ln_2.bias"
// CHECK-SAME: %[[W1:arg[0-9]+]]: tensor<64x256xf32> {part.name = "h.0.mlp.fc.weight"
// CHECK-SAME: %[[C1:arg[0-9]+]]: tensor<256xf32> {part.name = "h.0.mlp.fc.bias"
// CHECK-SAME: %[[W2:arg[0-9]+]]: tensor<256x64xf32> {part.name = "h.0.mlp.proj.weight"
// CHECK-SAME: %[[C2:arg[0-9]+]]: tensor<64xf32> {part.name = "h.0.mlp.proj.bias"
// CHECK-SAME: {part.name = "h.1.ln_1.weight"
// CHECK-SAME: {part.name = "h.1.mlp.proj.bias"
// CHECK-SAME: %[[GF:arg[0-9]+]]: tensor<64xf32> {part.name = "ln_f.weight"
// CHECK-SAME: %[[BF:arg[0-9]+]]: tensor<64xf32> {part.name = "ln_f.bias", part.role = #part.role<parameter>})
// CHECK-SAME: -> (tensor<4x16x128xf32> {part.name = "logits"})
// CHECK: %[[TE:.*]] = part.gather %[[WTE]], %[[TOK]] axis 0 : (tensor<128x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
// CHECK: %[[X0:.*]] = part.add %[[TE]], %[[WPE]] : (tensor<4x16x64xf32>, tensor<16x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[H:.*]] = part.layer_norm %[[X0]], %[[G1]], %[[B1]] {part.layer = 0 : i64} :
// CHECK: %[[QM:.*]] = part.matmul %[[H]], %[[WQ]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[QB:.*]] = part.add %[[QM]], %[[BQ]]
// CHECK: %[[QS:.*]] = part.reshape %[[QB]] {part.layer = 0 : i64} : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
// CHECK: %[[Q:.*]] = part.transpose %[[QS]] [0, 2, 1, 3] {part.layer = 0 : i64} : tensor<4x16x4x16xf32> -> tensor<4x4x16x16xf32>
// CHECK: %[[KM:.*]] = part.matmul %[[H]], %[[WK]]
// CHECK: %[[KB:.*]] = part.add %[[KM]], %[[BK]]
// CHECK: %[[KS:.*]] = part.reshape %[[KB]]
// CHECK: %[[K:.*]] = part.transpose %[[KS]] [0, 2, 1, 3]
// CHECK: %[[VM:.*]] = part.matmul %[[H]], %[[WV]]
// CHECK: %[[VB:.*]] = part.add %[[VM]], %[[BV]]
// CHECK: %[[VS:.*]] = part.reshape %[[VB]]
// CHECK: %[[V:.*]] = part.transpose %[[VS]] [0, 2, 1, 3]
// CHECK: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal {part.layer = 0 : i64} : (tensor<4x4x16x16xf32>, tensor<4x4x16x16xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xf32>
// CHECK: %[[AT:.*]] = part.transpose %[[A]] [0, 2, 1, 3] {part.layer = 0 : i64} : tensor<4x4x16x16xf32> -> tensor<4x16x4x16xf32>
// CHECK: %[[AM:.*]] = part.reshape %[[AT]] {part.layer = 0 : i64} : tensor<4x16x4x16xf32> -> tensor<4x16x64xf32>
// CHECK: %[[OM:.*]] = part.matmul %[[AM]], %[[WO]]
// CHECK: %[[OB:.*]] = part.add %[[OM]], %[[BO]]
// CHECK: %[[X1:.*]] = part.add %[[X0]], %[[OB]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[H2:.*]] = part.layer_norm %[[X1]], %[[G2]], %[[B2]]
// CHECK: %[[FM:.*]] = part.matmul %[[H2]], %[[W1]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x256xf32>) -> tensor<4x16x256xf32>
// CHECK: %[[FB:.*]] = part.add %[[FM]], %[[C1]]
// CHECK: %[[GE:.*]] = part.gelu %[[FB]] tanh {part.layer = 0 : i64} : tensor<4x16x256xf32>
// CHECK: %[[PM:.*]] = part.matmul %[[GE]], %[[W2]] {part.layer = 0 : i64} : (tensor<4x16x256xf32>, tensor<256x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[PB:.*]] = part.add %[[PM]], %[[C2]]
// CHECK: %[[X2:.*]] = part.add %[[X1]], %[[PB]]
// CHECK: part.layer_norm %[[X2]], {{.*}}{part.layer = 1 : i64}
// CHECK-COUNT-1: part.attention
// CHECK-NOT: part.attention
// CHECK: %[[XF:.*]] = part.layer_norm %{{.*}}, %[[GF]], %[[BF]] : (
// CHECK: %[[L:.*]] = part.matmul %[[XF]], %[[WTE]] transpose_b : (tensor<4x16x64xf32>, tensor<128x64xf32>) -> tensor<4x16x128xf32>
// CHECK: return %[[L]] : tensor<4x16x128xf32>
//
// FFN defaults to 4 x hidden and can be set:
// RUN: partition-import --model gpt --layers 1 --hidden 32 --heads 2 --shapes-only | FileCheck %s --check-prefix=FFN4
// FFN4: tensor<32x128xf32> {part.name = "h.0.mlp.fc.weight"
// RUN: partition-import --model gpt --layers 1 --hidden 32 --heads 2 --ffn 48 --shapes-only | FileCheck %s --check-prefix=FFN48
// FFN48: tensor<32x48xf32> {part.name = "h.0.mlp.fc.weight"
//
// Partitioned over dp x tp = 2 x 4: batch over dp, the vocabulary-parallel
// embedding (one all-reduce over tp after the lookup), then exactly
// Megatron's two all-reduces over tp per layer (after the attention output
// projection and after the second MLP matmul), and none between layers.
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:2,tp:4" | FileCheck %s --check-prefix=SPMD
// SPMD: part.mesh @mesh = <["dp"=2, "tp"=4]>
// SPMD: func.func @gpt(%{{.*}}: tensor<2x16xi32> {part.name = "tokens"{{.*}}, %{{.*}}: tensor<32x64xf32> {part.name = "wte"
// SPMD-SAME: tensor<64x16xf32> {part.name = "h.0.attn.q.weight"
// SPMD-SAME: tensor<16x64xf32> {part.name = "h.0.attn.proj.weight"
// SPMD-SAME: tensor<64x64xf32> {part.name = "h.0.mlp.fc.weight"
// SPMD-SAME: tensor<64x64xf32> {part.name = "h.0.mlp.proj.weight"
// SPMD-SAME: attributes {part.spmd = @mesh}
// SPMD: part.gather
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.attention {{.*}} -> tensor<2x1x16x16xf32>
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.gelu
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.attention {{.*}} -> tensor<2x1x16x16xf32>
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.gelu
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_reduce
// SPMD: return
//
// The weights: one f32 tensor per parameter, named as its part.name, with
// GPT-2's initialisation (norm scales 1, biases 0, matrices normal(0, 0.02),
// wpe 0.01, residual projections 0.02 / sqrt(2 x layers); the printed
// standard deviations are those of the samples, fixed by the seed); the IR
// is the same with and without data.
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 4 --seed 1 -o %t.weights.mlir --weights %t.safetensors
// RUN: diff %t.mlir %t.weights.mlir
// RUN: %python %S/Inputs/safetensors_info.py %t.safetensors | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: h.0.attn.k.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.attn.k.weight F32 [64x64] normal std=0.02
// WEIGHTS-NEXT: h.0.attn.proj.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.attn.proj.weight F32 [64x64] normal std=0.0099
// WEIGHTS-NEXT: h.0.attn.q.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.attn.q.weight F32 [64x64] normal std=0.02
// WEIGHTS-NEXT: h.0.attn.v.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.attn.v.weight F32 [64x64] normal std=0.02
// WEIGHTS-NEXT: h.0.ln_1.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.ln_1.weight F32 [64] ones
// WEIGHTS-NEXT: h.0.ln_2.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.ln_2.weight F32 [64] ones
// WEIGHTS-NEXT: h.0.mlp.fc.bias F32 [256] zeros
// WEIGHTS-NEXT: h.0.mlp.fc.weight F32 [64x256] normal std=0.02
// WEIGHTS-NEXT: h.0.mlp.proj.bias F32 [64] zeros
// WEIGHTS-NEXT: h.0.mlp.proj.weight F32 [256x64] normal std=0.01
// WEIGHTS-NEXT: h.1.attn.k.bias F32 [64] zeros
// WEIGHTS: h.1.mlp.proj.weight F32 [256x64] normal std=0.01
// WEIGHTS-NEXT: ln_f.bias F32 [64] zeros
// WEIGHTS-NEXT: ln_f.weight F32 [64] ones
// WEIGHTS-NEXT: wpe F32 [16x64] normal std=0.0094
// WEIGHTS-NEXT: wte F32 [128x64] normal std=0.02
// WEIGHTS-NOT: {{.}}
