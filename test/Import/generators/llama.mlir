// partition-import --model llama: RMSNorm, grouped-query attention with
// rotary embeddings, a SwiGLU MLP, final RMSNorm and an untied LM head; its
// argument names and shapes, its rotary tables (computed in the program, as
// Hugging Face computes them: no parameters), its weights, and its Megatron
// partitioning.
//
// RUN: partition-import --model llama --layers 2 --hidden 64 --heads 8 --kv-heads 4 --vocab 128 --seq 16 --batch 4 --shapes-only -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=GLOBAL < %t.mlir
// RUN: partition-opt %t.mlir --part-print-sharding-rules -o /dev/null 2>/dev/null
// GLOBAL-NOT: part.mesh
// GLOBAL-NOT: part.sharding
//
// Head size 8, so k and v have 4 x 8 = 32 columns; the SwiGLU size defaults
// to 8 x 64 / 3 = 170, rounded up to a multiple of 8: 176.
// CHECK-LABEL: func.func @llama(
// CHECK-SAME: %[[TOK:arg[0-9]+]]: tensor<4x16xi32> {part.name = "tokens", part.role = #part.role<input>}
// CHECK-SAME: %[[EMB:arg[0-9]+]]: tensor<128x64xf32> {part.name = "embed_tokens.weight", part.role = #part.role<parameter>}
// CHECK-SAME: %[[N1:arg[0-9]+]]: tensor<64xf32> {part.name = "layers.0.input_layernorm.weight"
// CHECK-SAME: %[[WQ:arg[0-9]+]]: tensor<64x64xf32> {part.name = "layers.0.self_attn.q_proj.weight"
// CHECK-SAME: %[[WK:arg[0-9]+]]: tensor<64x32xf32> {part.name = "layers.0.self_attn.k_proj.weight"
// CHECK-SAME: %[[WV:arg[0-9]+]]: tensor<64x32xf32> {part.name = "layers.0.self_attn.v_proj.weight"
// CHECK-SAME: %[[WO:arg[0-9]+]]: tensor<64x64xf32> {part.name = "layers.0.self_attn.o_proj.weight"
// CHECK-SAME: %[[N2:arg[0-9]+]]: tensor<64xf32> {part.name = "layers.0.post_attention_layernorm.weight"
// CHECK-SAME: %[[WG:arg[0-9]+]]: tensor<64x176xf32> {part.name = "layers.0.mlp.gate_proj.weight"
// CHECK-SAME: %[[WU:arg[0-9]+]]: tensor<64x176xf32> {part.name = "layers.0.mlp.up_proj.weight"
// CHECK-SAME: %[[WD:arg[0-9]+]]: tensor<176x64xf32> {part.name = "layers.0.mlp.down_proj.weight"
// CHECK-SAME: {part.name = "layers.1.input_layernorm.weight"
// CHECK-SAME: %[[NF:arg[0-9]+]]: tensor<64xf32> {part.name = "norm.weight"
// CHECK-SAME: %[[HEAD:arg[0-9]+]]: tensor<64x128xf32> {part.name = "lm_head.weight", part.role = #part.role<parameter>})
// CHECK-SAME: -> (tensor<4x16x128xf32> {part.name = "logits"})
// The rotary tables: positions [16, 1] times the inverse frequencies
// 10000^(-2i/8), i < 4, each twice (rotate-half layout), then cos and sin.
// CHECK: %[[POS:.*]] = part.constant dense<{{\[\[}}0.000000e+00], [1.000000e+00], {{.*}}, [1.500000e+01]]> : tensor<16x1xf32>
// CHECK: %[[INV:.*]] = part.constant dense<{{\[\[}}1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03, 1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]]> : tensor<1x8xf32>
// CHECK: %[[ANGLE:.*]] = part.mul %[[POS]], %[[INV]] : (tensor<16x1xf32>, tensor<1x8xf32>) -> tensor<16x8xf32>
// CHECK: %[[COS:.*]] = part.cos %[[ANGLE]]
// CHECK: %[[SIN:.*]] = part.sin %[[ANGLE]]
// CHECK: %[[X0:.*]] = part.gather %[[EMB]], %[[TOK]] axis 0 : (tensor<128x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
// CHECK: %[[H:.*]] = part.rms_norm %[[X0]], %[[N1]] {{.*}}{part.layer = 0 : i64}
// CHECK: %[[QM:.*]] = part.matmul %[[H]], %[[WQ]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[QS:.*]] = part.reshape %[[QM]] {part.layer = 0 : i64} : tensor<4x16x64xf32> -> tensor<4x16x8x8xf32>
// CHECK: %[[Q:.*]] = part.transpose %[[QS]] [0, 2, 1, 3] {part.layer = 0 : i64} : tensor<4x16x8x8xf32> -> tensor<4x8x16x8xf32>
// CHECK: %[[KM:.*]] = part.matmul %[[H]], %[[WK]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x32xf32>) -> tensor<4x16x32xf32>
// CHECK: %[[KS:.*]] = part.reshape %[[KM]] {part.layer = 0 : i64} : tensor<4x16x32xf32> -> tensor<4x16x4x8xf32>
// CHECK: %[[K:.*]] = part.transpose %[[KS]] [0, 2, 1, 3] {part.layer = 0 : i64} : tensor<4x16x4x8xf32> -> tensor<4x4x16x8xf32>
// CHECK: %[[VM:.*]] = part.matmul %[[H]], %[[WV]]
// CHECK: %[[VS:.*]] = part.reshape %[[VM]]
// CHECK: %[[V:.*]] = part.transpose %[[VS]]
// CHECK: %[[QR:.*]] = part.rotary_embedding %[[Q]], %[[COS]], %[[SIN]] {part.layer = 0 : i64} : (tensor<4x8x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<4x8x16x8xf32>
// CHECK: %[[KR:.*]] = part.rotary_embedding %[[K]], %[[COS]], %[[SIN]] {part.layer = 0 : i64} : (tensor<4x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<4x4x16x8xf32>
// CHECK: %[[A:.*]] = part.attention %[[QR]], %[[KR]], %[[V]] causal {part.layer = 0 : i64} : (tensor<4x8x16x8xf32>, tensor<4x4x16x8xf32>, tensor<4x4x16x8xf32>) -> tensor<4x8x16x8xf32>
// CHECK: %[[AT:.*]] = part.transpose %[[A]] [0, 2, 1, 3]
// CHECK: %[[AM:.*]] = part.reshape %[[AT]] {part.layer = 0 : i64} : tensor<4x16x8x8xf32> -> tensor<4x16x64xf32>
// CHECK: %[[O:.*]] = part.matmul %[[AM]], %[[WO]]
// CHECK: %[[X1:.*]] = part.add %[[X0]], %[[O]]
// CHECK: %[[H2:.*]] = part.rms_norm %[[X1]], %[[N2]]
// CHECK: %[[GM:.*]] = part.matmul %[[H2]], %[[WG]] {part.layer = 0 : i64} : (tensor<4x16x64xf32>, tensor<64x176xf32>) -> tensor<4x16x176xf32>
// CHECK: %[[G:.*]] = part.silu %[[GM]]
// CHECK: %[[U:.*]] = part.matmul %[[H2]], %[[WU]]
// CHECK: %[[GU:.*]] = part.mul %[[G]], %[[U]]
// CHECK: %[[D:.*]] = part.matmul %[[GU]], %[[WD]] {part.layer = 0 : i64} : (tensor<4x16x176xf32>, tensor<176x64xf32>) -> tensor<4x16x64xf32>
// CHECK: %[[X2:.*]] = part.add %[[X1]], %[[D]]
// CHECK: part.rms_norm %[[X2]], {{.*}}{part.layer = 1 : i64}
// CHECK-COUNT-1: part.attention
// CHECK-NOT: part.attention
// CHECK: %[[XF:.*]] = part.rms_norm %{{.*}}, %[[NF]] : (
// CHECK: %[[L:.*]] = part.matmul %[[XF]], %[[HEAD]] : (tensor<4x16x64xf32>, tensor<64x128xf32>) -> tensor<4x16x128xf32>
// CHECK: return %[[L]]
//
// Without --kv-heads, every query head has its own key/value head:
// RUN: partition-import --model llama --layers 1 --hidden 64 --heads 8 --shapes-only | FileCheck %s --check-prefix=MHA
// MHA: tensor<64x64xf32> {part.name = "layers.0.self_attn.k_proj.weight"
// MHA: part.attention {{.*}} : (tensor<2x8x16x8xf32>, tensor<2x8x16x8xf32>, tensor<2x8x16x8xf32>)
// Llama-7B's sizes: SwiGLU 8 x 4096 / 3 = 10922, rounded up to 10928.
// RUN: partition-import --model llama --layers 1 --hidden 4096 --heads 32 --vocab 32000 --seq 8 --batch 1 --shapes-only | FileCheck %s --check-prefix=FFN
// FFN: tensor<4096x10928xf32> {part.name = "layers.0.mlp.gate_proj.weight"
//
// Partitioned over dp x tp = 2 x 4: 2 of the 8 query heads and 1 of the 4
// key/value heads per device, and Megatron's two all-reduces over tp per
// layer, plus one for the vocabulary-parallel embedding.
// RUN: partition-opt %t.mlir --part-spmd="mesh=dp:2,tp:4" | FileCheck %s --check-prefix=SPMD
// SPMD: func.func @llama(%{{.*}}: tensor<2x16xi32> {part.name = "tokens"
// SPMD-SAME: attributes {part.spmd = @mesh}
// SPMD: part.gather
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.attention {{.*}} : (tensor<2x2x16x8xf32>, tensor<2x1x16x8xf32>, tensor<2x1x16x8xf32>) -> tensor<2x2x16x8xf32>
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.silu
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.attention
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// SPMD: part.silu
// SPMD-NOT: part.all_
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_reduce
// SPMD: return
//
// The weights: norm scales 1, matrices normal(0, 0.02) (the printed
// standard deviations are the samples', fixed by the seed); no rotary
// tables (e2e-llama.mlir checks the program's against numpy's).
// RUN: partition-import --model llama --layers 1 --hidden 64 --heads 8 --kv-heads 4 --vocab 128 --seq 16 --batch 4 --seed 1 -o %t.weights.mlir --weights %t.safetensors
// RUN: %python %S/Inputs/safetensors_info.py %t.safetensors | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: embed_tokens.weight F32 [128x64] normal std=0.02
// WEIGHTS-NEXT: layers.0.input_layernorm.weight F32 [64] ones
// WEIGHTS-NEXT: layers.0.mlp.down_proj.weight F32 [176x64] normal std=0.02
// WEIGHTS-NEXT: layers.0.mlp.gate_proj.weight F32 [64x176] normal std=0.02
// WEIGHTS-NEXT: layers.0.mlp.up_proj.weight F32 [64x176] normal std=0.02
// WEIGHTS-NEXT: layers.0.post_attention_layernorm.weight F32 [64] ones
// WEIGHTS-NEXT: layers.0.self_attn.k_proj.weight F32 [64x32] normal std=0.02
// WEIGHTS-NEXT: layers.0.self_attn.o_proj.weight F32 [64x64] normal std=0.019
// WEIGHTS-NEXT: layers.0.self_attn.q_proj.weight F32 [64x64] normal std=0.02
// WEIGHTS-NEXT: layers.0.self_attn.v_proj.weight F32 [64x32] normal std=0.02
// WEIGHTS-NEXT: lm_head.weight F32 [64x128] normal std=0.02
// WEIGHTS-NEXT: norm.weight F32 [64] ones
// WEIGHTS-NOT: {{.}}
