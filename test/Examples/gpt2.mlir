// A two-layer GPT-2 language model (token and position embeddings, pre-LN blocks
// with causal multi-head attention and a tanh-GELU MLP, final LayerNorm, LM head
// tied to the token embedding, mean cross-entropy loss), annotated for a
// 2 x 4 mesh the Megatron way: batch over "dp"; Q/K/V and the first MLP layer
// column-parallel over "tp", the attention output and second MLP layer
// row-parallel, so their results are pending sums over "tp" (unreduced).
//
// The printed form is a fixed point, through the custom and the generic syntax:
// RUN: partition-opt %s > %t.custom
// RUN: partition-opt %t.custom | diff %t.custom -
// RUN: partition-opt %s --mlir-print-op-generic | partition-opt | diff %t.custom -
// Without its annotations it is the single-device reference program:
// Every op has a sharding rule that fits its types:
// RUN: partition-opt %s --part-print-sharding-rules -o /dev/null 2>/dev/null
// RUN: partition-opt %s --part-propagate-shardings -o /dev/null
// Partitioned, each layer's forward needs exactly two all-reduces over "tp"
// (after the attention output projection and the second MLP matmul), and the
// mean loss one over "dp". The vocabulary-split embedding and logits are
// never gathered: the lookup costs one all-reduce of the embeddings, the
// loss three of per-position scalars (max, sum of exponentials, the label's
// logit), as in Megatron's vocabulary-parallel embedding and loss:
// RUN: partition-opt %s --part-propagate-shardings --part-partition | FileCheck %s --check-prefix=SPMD
// SPMD: attributes {part.spmd = @mesh}
// SPMD-NOT: part.all_gather
// SPMD: part.axis_index on @mesh axes ["tp"] {part.origin = "vocabulary-parallel lookup of part.gather{{[^"]*}}"}
// SPMD: part.gather %{{.*}} : (tensor<128x64xf32>, tensor<4x16xi32>) -> tensor<4x16x64xf32>
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "operand 0 of part.add{{[^"]*}}"}
// SPMD-COUNT-4: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "operand 0 of part.add{{[^"]*}}"}
// SPMD: part.all_reduce {{.*}} axes ["tp"] max {part.origin = "vocabulary-parallel loss{{[^"]*}}"}
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "vocabulary-parallel loss{{[^"]*}}"}
// SPMD: part.all_reduce {{.*}} axes ["tp"] sum {part.origin = "vocabulary-parallel loss{{[^"]*}}"}
// SPMD: part.all_reduce {{.*}} axes ["dp"] sum {part.origin = "result 0 of func.return{{[^"]*}}"}
// SPMD-NOT: part.all_
// RUN: partition-opt %s --part-strip-sharding | FileCheck %s --check-prefix=STRIPPED
// STRIPPED-NOT: part.sharding
// RUN: FileCheck %s < %t.custom
// CHECK-LABEL: func.func @gpt2
// CHECK: part.gather
// CHECK-COUNT-2: part.attention {{.*}} causal
// CHECK: part.matmul {{.*}} transpose_b {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {"tp"}]>}
// CHECK: part.softmax_cross_entropy {{.*}} mean

part.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @gpt2(
    %tokens: tensor<8x16xi32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %labels: tensor<8x16xi32> {part.role = #part.role<label>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
    %wte: tensor<512x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %wpe: tensor<16x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {}]>},
    %h0_ln1_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h0_ln1_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h0_attn_wq: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h0_attn_bq: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h0_attn_wk: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h0_attn_bk: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h0_attn_wv: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h0_attn_bv: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h0_attn_wo: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %h0_attn_bo: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h0_ln2_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h0_ln2_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h0_mlp_w1: tensor<64x256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h0_mlp_b1: tensor<256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h0_mlp_w2: tensor<256x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %h0_mlp_b2: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_ln1_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_ln1_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_attn_wq: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h1_attn_bq: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h1_attn_wk: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h1_attn_bk: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h1_attn_wv: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h1_attn_bv: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h1_attn_wo: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %h1_attn_bo: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_ln2_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_ln2_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %h1_mlp_w1: tensor<64x256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %h1_mlp_b1: tensor<256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %h1_mlp_w2: tensor<256x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %h1_mlp_b2: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln_f_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln_f_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>})
    -> (tensor<f32> {part.sharding = #part.sharding<@mesh, []>}) {
  %tok_emb = part.gather %wte, %tokens axis 0 : (tensor<512x64xf32>, tensor<8x16xi32>) -> tensor<8x16x64xf32>
  %emb = part.add %tok_emb, %wpe : (tensor<8x16x64xf32>, tensor<16x64xf32>) -> tensor<8x16x64xf32>
  %h0_ln1 = part.layer_norm %emb, %h0_ln1_g, %h0_ln1_b : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_q_proj_mm = part.matmul %h0_ln1, %h0_attn_wq : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h0_q_proj = part.add %h0_q_proj_mm, %h0_attn_bq : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_q_split = part.reshape %h0_q_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h0_q = part.transpose %h0_q_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h0_k_proj_mm = part.matmul %h0_ln1, %h0_attn_wk : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h0_k_proj = part.add %h0_k_proj_mm, %h0_attn_bk : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_k_split = part.reshape %h0_k_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h0_k = part.transpose %h0_k_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h0_v_proj_mm = part.matmul %h0_ln1, %h0_attn_wv : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h0_v_proj = part.add %h0_v_proj_mm, %h0_attn_bv : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_v_split = part.reshape %h0_v_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h0_v = part.transpose %h0_v_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h0_attn = part.attention %h0_q, %h0_k, %h0_v causal : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
  %h0_attn_merged_t = part.transpose %h0_attn [0, 2, 1, 3] : tensor<8x4x16x16xf32> -> tensor<8x16x4x16xf32>
  %h0_attn_merged = part.reshape %h0_attn_merged_t : tensor<8x16x4x16xf32> -> tensor<8x16x64xf32>
  %h0_attn_out_mm = part.matmul %h0_attn_merged, %h0_attn_wo {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h0_attn_out = part.add %h0_attn_out_mm, %h0_attn_bo : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_res1 = part.add %emb, %h0_attn_out : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %h0_ln2 = part.layer_norm %h0_res1, %h0_ln2_g, %h0_ln2_b : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_fc1_mm = part.matmul %h0_ln2, %h0_mlp_w1 : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
  %h0_fc1 = part.add %h0_fc1_mm, %h0_mlp_b1 : (tensor<8x16x256xf32>, tensor<256xf32>) -> tensor<8x16x256xf32>
  %h0_gelu = part.gelu %h0_fc1 tanh : tensor<8x16x256xf32>
  %h0_fc2_mm = part.matmul %h0_gelu, %h0_mlp_w2 {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
  %h0_fc2 = part.add %h0_fc2_mm, %h0_mlp_b2 : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h0_res2 = part.add %h0_res1, %h0_fc2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %h1_ln1 = part.layer_norm %h0_res2, %h1_ln1_g, %h1_ln1_b : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_q_proj_mm = part.matmul %h1_ln1, %h1_attn_wq : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h1_q_proj = part.add %h1_q_proj_mm, %h1_attn_bq : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_q_split = part.reshape %h1_q_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h1_q = part.transpose %h1_q_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h1_k_proj_mm = part.matmul %h1_ln1, %h1_attn_wk : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h1_k_proj = part.add %h1_k_proj_mm, %h1_attn_bk : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_k_split = part.reshape %h1_k_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h1_k = part.transpose %h1_k_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h1_v_proj_mm = part.matmul %h1_ln1, %h1_attn_wv : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h1_v_proj = part.add %h1_v_proj_mm, %h1_attn_bv : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_v_split = part.reshape %h1_v_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %h1_v = part.transpose %h1_v_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %h1_attn = part.attention %h1_q, %h1_k, %h1_v causal : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
  %h1_attn_merged_t = part.transpose %h1_attn [0, 2, 1, 3] : tensor<8x4x16x16xf32> -> tensor<8x16x4x16xf32>
  %h1_attn_merged = part.reshape %h1_attn_merged_t : tensor<8x16x4x16xf32> -> tensor<8x16x64xf32>
  %h1_attn_out_mm = part.matmul %h1_attn_merged, %h1_attn_wo {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %h1_attn_out = part.add %h1_attn_out_mm, %h1_attn_bo : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_res1 = part.add %h0_res2, %h1_attn_out : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %h1_ln2 = part.layer_norm %h1_res1, %h1_ln2_g, %h1_ln2_b : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_fc1_mm = part.matmul %h1_ln2, %h1_mlp_w1 : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
  %h1_fc1 = part.add %h1_fc1_mm, %h1_mlp_b1 : (tensor<8x16x256xf32>, tensor<256xf32>) -> tensor<8x16x256xf32>
  %h1_gelu = part.gelu %h1_fc1 tanh : tensor<8x16x256xf32>
  %h1_fc2_mm = part.matmul %h1_gelu, %h1_mlp_w2 {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>} : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
  %h1_fc2 = part.add %h1_fc2_mm, %h1_mlp_b2 : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %h1_res2 = part.add %h1_res1, %h1_fc2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %ln_f = part.layer_norm %h1_res2, %ln_f_g, %ln_f_b : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %x_final = part.sharding_constraint %ln_f <@mesh, [{"dp"}, {}, {}]> : tensor<8x16x64xf32>
  %logits = part.matmul %x_final, %wte transpose_b {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {"tp"}]>} : (tensor<8x16x64xf32>, tensor<512x64xf32>) -> tensor<8x16x512xf32>
  %loss = part.softmax_cross_entropy %logits, %labels mean : (tensor<8x16x512xf32>, tensor<8x16xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
