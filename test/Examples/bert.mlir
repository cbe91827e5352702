// One BERT encoder block: bidirectional attention written out as batch_matmul,
// scaling, an additive padding mask and softmax; post-LN residuals and an
// exact (erf) GELU MLP; annotated for a 2 x 4 mesh.
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
// CHECK-LABEL: func.func @bert_block
// CHECK: part.softmax {{.*}} dim 3
// CHECK: part.layer_norm
// CHECK: part.gelu {{.*}} erf
// CHECK: part.layer_norm

part.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @bert_block(
    %x: tensor<8x16x64xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>},
    %attn_mask: tensor<8x1x1x16xf32> {part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}, {}]>},
    %wq: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %bq: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %wk: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %bk: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %wv: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %bv: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %wo: tensor<64x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %bo: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln1_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln1_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %w1: tensor<64x256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
    %b1: tensor<256xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}]>},
    %w2: tensor<256x64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
    %b2: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln2_g: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>},
    %ln2_b: tensor<64xf32> {part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}]>})
    -> (tensor<8x16x64xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>}) {
  %q_proj_mm = part.matmul %x, %wq : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %q_proj = part.add %q_proj_mm, %bq : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %q_split = part.reshape %q_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %q = part.transpose %q_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %k_proj_mm = part.matmul %x, %wk : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %k_proj = part.add %k_proj_mm, %bk : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %k_split = part.reshape %k_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %k = part.transpose %k_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %v_proj_mm = part.matmul %x, %wv : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %v_proj = part.add %v_proj_mm, %bv : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %v_split = part.reshape %v_proj : tensor<8x16x64xf32> -> tensor<8x16x4x16xf32>
  %v = part.transpose %v_split [0, 2, 1, 3] : tensor<8x16x4x16xf32> -> tensor<8x4x16x16xf32>
  %scores = part.batch_matmul %q, %k transpose_b : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
  %scale = part.constant dense<2.500000e-01> : tensor<f32>
  %scores_scaled = part.mul %scores, %scale : (tensor<8x4x16x16xf32>, tensor<f32>) -> tensor<8x4x16x16xf32>
  %scores_masked = part.add %scores_scaled, %attn_mask : (tensor<8x4x16x16xf32>, tensor<8x1x1x16xf32>) -> tensor<8x4x16x16xf32>
  %probs = part.softmax %scores_masked dim 3 : tensor<8x4x16x16xf32>
  %ctx = part.batch_matmul %probs, %v : (tensor<8x4x16x16xf32>, tensor<8x4x16x16xf32>) -> tensor<8x4x16x16xf32>
  %ctx_merged_t = part.transpose %ctx [0, 2, 1, 3] : tensor<8x4x16x16xf32> -> tensor<8x16x4x16xf32>
  %ctx_merged = part.reshape %ctx_merged_t : tensor<8x16x4x16xf32> -> tensor<8x16x64xf32>
  %attn_out_mm = part.matmul %ctx_merged, %wo : (tensor<8x16x64xf32>, tensor<64x64xf32>) -> tensor<8x16x64xf32>
  %attn_out = part.add %attn_out_mm, %bo : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %res1 = part.add %x, %attn_out : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %ln1 = part.layer_norm %res1, %ln1_g, %ln1_b epsilon 9.99999996E-13 : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %fc1_mm = part.matmul %ln1, %w1 : (tensor<8x16x64xf32>, tensor<64x256xf32>) -> tensor<8x16x256xf32>
  %fc1 = part.add %fc1_mm, %b1 : (tensor<8x16x256xf32>, tensor<256xf32>) -> tensor<8x16x256xf32>
  %gelu = part.gelu %fc1 erf : tensor<8x16x256xf32>
  %fc2_mm = part.matmul %gelu, %w2 : (tensor<8x16x256xf32>, tensor<256x64xf32>) -> tensor<8x16x64xf32>
  %fc2 = part.add %fc2_mm, %b2 : (tensor<8x16x64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  %res2 = part.add %ln1, %fc2 : (tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %ln2 = part.layer_norm %res2, %ln2_g, %ln2_b epsilon 9.99999996E-13 : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
  return %ln2 : tensor<8x16x64xf32>
}
