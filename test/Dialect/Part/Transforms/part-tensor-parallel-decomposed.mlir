// Attention that part-raise left as ops (partition-import --no-raise, or a
// form it does not rebuild): a softmax of the product of queries and keys.
// Tensor parallelism splits no heads into it, so it stays replicated, with
// a remark and a line of --part-explain saying so. A router's softmax over
// a matmul by its weight is no attention: no remark.
// RUN: partition-opt %s --part-spmd="mesh=tp:2" --part-explain -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: partition-opt %s --part-spmd="mesh=tp:2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// EXPLAIN: func @decomposed: attention stays replicated over tp (size 2): it is decomposed (a softmax of the part.batch_matmul at loc({{.*}}:[[@LINE+18]]:{{[0-9]+}}), not a part.attention; partition-import --report-raising says why part-raise left it), and its queries are a slice (tensor<4x8x16xf32> of tensor<4x8x48xf32>) of the fused projection at loc({{.*}}:[[@LINE+8]]:{{[0-9]+}}), which stays one projection
// EXPLAIN-NOT: stays replicated
// REMARK: [[@LINE+19]]:{{[0-9]+}}: remark: attention stays replicated over tp (size 2): it is decomposed
// REMARK-NOT: stays replicated
func.func @decomposed(%x: tensor<4x8x16xf32>,
                      %w: tensor<16x48xf32> {part.name = "c_attn.weight", part.role = #part.role<parameter>},
                      %wo: tensor<16x16xf32> {part.name = "c_proj.weight", part.role = #part.role<parameter>},
                      %wr: tensor<16x4xf32> {part.name = "router.weight", part.role = #part.role<parameter>}) -> (tensor<4x8x16xf32>, tensor<4x8x4xf32>) {
  %0 = part.matmul %x, %w : (tensor<4x8x16xf32>, tensor<16x48xf32>) -> tensor<4x8x48xf32>
  %q0 = part.slice %0 offsets [0, 0, 0] : tensor<4x8x48xf32> -> tensor<4x8x16xf32>
  %k0 = part.slice %0 offsets [0, 0, 16] : tensor<4x8x48xf32> -> tensor<4x8x16xf32>
  %v0 = part.slice %0 offsets [0, 0, 32] : tensor<4x8x48xf32> -> tensor<4x8x16xf32>
  %q1 = part.reshape %q0 : tensor<4x8x16xf32> -> tensor<4x8x4x4xf32>
  %q = part.transpose %q1 [0, 2, 1, 3] : tensor<4x8x4x4xf32> -> tensor<4x4x8x4xf32>
  %k1 = part.reshape %k0 : tensor<4x8x16xf32> -> tensor<4x8x4x4xf32>
  %k = part.transpose %k1 [0, 2, 1, 3] : tensor<4x8x4x4xf32> -> tensor<4x4x8x4xf32>
  %v1 = part.reshape %v0 : tensor<4x8x16xf32> -> tensor<4x8x4x4xf32>
  %v = part.transpose %v1 [0, 2, 1, 3] : tensor<4x8x4x4xf32> -> tensor<4x4x8x4xf32>
  %s0 = part.batch_matmul %q, %k transpose_b : (tensor<4x4x8x4xf32>, tensor<4x4x8x4xf32>) -> tensor<4x4x8x8xf32>
  %half = part.constant dense<0.5> : tensor<4x4x8x8xf32>
  %s = part.mul %s0, %half : (tensor<4x4x8x8xf32>, tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %p = part.softmax %s dim 3 : tensor<4x4x8x8xf32>
  %a = part.batch_matmul %p, %v : (tensor<4x4x8x8xf32>, tensor<4x4x8x4xf32>) -> tensor<4x4x8x4xf32>
  %t = part.transpose %a [0, 2, 1, 3] : tensor<4x4x8x4xf32> -> tensor<4x8x4x4xf32>
  %r = part.reshape %t : tensor<4x8x4x4xf32> -> tensor<4x8x16xf32>
  %o = part.matmul %r, %wo : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
  %g = part.matmul %x, %wr : (tensor<4x8x16xf32>, tensor<16x4xf32>) -> tensor<4x8x4xf32>
  %gp = part.softmax %g dim 2 : tensor<4x8x4xf32>
  return %o, %gp : tensor<4x8x16xf32>, tensor<4x8x4xf32>
}
