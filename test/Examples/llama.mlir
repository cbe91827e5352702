// One Llama decoder block: RMSNorm, grouped-query attention (8 query heads,
// 4 key/value heads) with rotary position embeddings, and a SwiGLU MLP,
// annotated for a 2 x 4 mesh (batch over "dp", Megatron tensor parallelism over
// "tp").
//
// The printed form is a fixed point, through the custom and the generic syntax:
// RUN: partition-opt %s > %t.custom
// RUN: partition-opt %t.custom | diff %t.custom -
// RUN: partition-opt %s --mlir-print-op-generic | partition-opt | diff %t.custom -
// Without its annotations it is the single-device reference program:
// Every op has a sharding rule that fits its types:
// RUN: partition-opt %s --part-print-sharding-rules -o /dev/null 2>/dev/null
// RUN: partition-opt %s --part-propagate-shardings -o /dev/null
// Partitioned: Megatron's two all-reduces per block over "tp".
// RUN: partition-opt %s --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=SPMD
// SPMD: attributes {part.spmd = @mesh}
// SPMD-COUNT-2: part.all_reduce {{.*}} axes ["tp"] sum
// SPMD-NOT: part.all_
// RUN: partition-opt %s --part-strip-sharding | FileCheck %s --check-prefix=STRIPPED
// STRIPPED-NOT: part.sharding
// RUN: FileCheck %s < %t.custom
// CHECK-LABEL: func.func @llama_block
// CHECK: part.rms_norm
// CHECK-COUNT-2: part.rotary_embedding
// CHECK: part.attention {{.*}} causal : (tensor<8x8x16x8xf32>, tensor<8x4x16x8xf32>, tensor<8x4x16x8xf32>) -> tensor<8x8x16x8xf32>
// CHECK: part.silu

part.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @llama_block(
    %x: tensor<8x16x64xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>},
    %rope_cos: tensor<16x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {}]>},
    %rope_sin: tensor<16x8xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {}]>},
    %attn_norm: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %wq: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %wk: tensor<64x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %wv: tensor<64x32xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %wo: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %mlp_norm: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %w_gate: tensor<64x176xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %w_up: tensor<64x176xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %w_down: tensor<176x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x16x64xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>}) {
  %attn_in = part.rms_norm %x, %attn_norm epsilon 1.0e-5 : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %q_proj = part.matmul %attn_in, %wq : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %q_split = part.reshape %q_proj : tensor<8x16x64xf32> -> tensor<8x16x8x8xf32>
  %q = part.transpose %q_split [0, 2, 1, 3] : tensor<8x16x8x8xf32> -> tensor<8x8x16x8xf32>
  %k_proj = part.matmul %attn_in, %wk : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
  %k_split = part.reshape %k_proj : tensor<8x16x32xf32> -> tensor<8x16x4x8xf32>
  %k = part.transpose %k_split [0, 2, 1, 3] : tensor<8x16x4x8xf32> -> tensor<8x4x16x8xf32>
  %v_proj = part.matmul %attn_in, %wv : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
  %v_split = part.reshape %v_proj : tensor<8x16x32xf32> -> tensor<8x16x4x8xf32>
  %v = part.transpose %v_split [0, 2, 1, 3] : tensor<8x16x4x8xf32> -> tensor<8x4x16x8xf32>
  %q_rot = part.rotary_embedding %q, %rope_cos, %rope_sin : (tensor<8x8x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x8x16x8xf32>
  %k_rot = part.rotary_embedding %k, %rope_cos, %rope_sin : (tensor<8x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<8x4x16x8xf32>
  %attn = part.attention %q_rot, %k_rot, %v causal : (tensor<8x8x16x8xf32>, tensor<8x4x16x8xf32>, tensor<8x4x16x8xf32>) -> tensor<8x8x16x8xf32>
  %attn_merged_t = part.transpose %attn [0, 2, 1, 3] : tensor<8x8x16x8xf32> -> tensor<8x16x8x8xf32>
  %attn_merged = part.reshape %attn_merged_t : tensor<8x16x8x8xf32> -> tensor<8x16x64xf32>
  %attn_out = part.matmul %attn_merged, %wo {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %res1 = part.add %x, %attn_out : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %mlp_in = part.rms_norm %res1, %mlp_norm epsilon 1.0e-5 : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %gate_proj = part.matmul %mlp_in, %w_gate : (tensor<8x16x64xf32>, tensor<64x176xf32>) -> tensor<8x16x176xf32>
  %gate = part.silu %gate_proj : tensor<8x16x176xf32>
  %up_proj = part.matmul %mlp_in, %w_up : (tensor<8x16x64xf32>, tensor<64x176xf32>) -> tensor<8x16x176xf32>
  %swiglu = part.mul %gate, %up_proj : (tensor<8x16x176xf32>, tensor<8x16x176xf32>) -> tensor<8x16x176xf32>
  %down_proj = part.matmul %swiglu, %w_down {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x176xf32>, tensor<176x64xf32>) -> tensor<8x16x64xf32>
  %res2 = part.add %res1, %down_proj : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %res2 : tensor<8x16x64xf32>
}
