// part-estimate on a causal attention with positions, as
// part-context-parallel leaves it on a device of cp:2 over a sequence of
// 256: its 128 queries are chunks 0 and 3 of the balanced order (positions
// 0-63 and 192-255), its keys the whole sequence. On a fused kernel
// (Inputs/round-cluster-attention.json: "attention": 0.5) the mask keeps
// 2080 + 14368 = 16,448 of the 32,768 scores per head (50.2%, the whole
// sequence's (256 + 1) / 512, as the balanced order means it to), not the
// 25.2% of the first 128 rows: 2 x 2 x 2 x 128 x 256 x 16 FLOPs x 0.502 =
// 2,105,344 at 0.5 x 1e9 FLOP/s, 4.21 ms (its 101,376 bytes would take
// 1.01 ms).
// RUN: partition-opt %s --part-estimate=cluster=%S/Inputs/round-cluster-attention.json -o /dev/null | FileCheck %s
// CHECK: @f on 1 device: compute 4.21 ms
part.mesh @mesh = <[]>
func.func @f(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x256x16xf32>, %v: tensor<1x2x256x16xf32>, %qp: tensor<128xi64>, %kp: tensor<256xi64>) -> tensor<1x2x128x16xf32>
    attributes {part.spmd = @mesh} {
  %0 = part.attention %q, %k, %v causal positions(%qp, %kp) : (tensor<1x2x128x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<128xi64>, tensor<256xi64>) -> tensor<1x2x128x16xf32>
  return %0 : tensor<1x2x128x16xf32>
}
