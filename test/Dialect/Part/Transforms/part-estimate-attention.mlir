// part-estimate on attention: as the decomposition runs it (every score
// computed, each block of scores through memory) or on a fused kernel
// (Inputs/round-cluster-attention.json: "attention": 0.5, as cuDNN's SDPA
// or FlashAttention: operands and results alone through memory, a causal
// mask's upper half skipped).
//
// Causal attention over 256 positions, 2 heads of 16: 2 x 2 x 256^2 x 16 x
// 2 = 8,388,608 FLOPs. Decomposed (Inputs/round-cluster-fused.json): at the
// GEMM efficiency 0.5 of 1e9 FLOP/s, 16.8 ms; its operands and result
// (131,072 bytes) and 16 bytes per score of f32 scores and probabilities
// (2,097,152) at 1e8 B/s, 22.3 ms: memory-bound.
// RUN: partition-opt %s --part-estimate=cluster=%S/Inputs/round-cluster-fused.json -o /dev/null | FileCheck %s --check-prefix=DECOMPOSED
// DECOMPOSED: @f on 1 device: compute 22.3 ms
//
// Fused: the 256 x 257 / 2 scores on and below the diagonal, 50.2% of them:
// 4,210,688 FLOPs at 0.5 x 1e9 FLOP/s, 8.42 ms (its 131,072 bytes would take
// 1.31 ms).
// RUN: partition-opt %s --part-estimate=cluster=%S/Inputs/round-cluster-attention.json -o /dev/null | FileCheck %s --check-prefix=FUSED
// FUSED: @f on 1 device: compute 8.42 ms
//
// A window of 16 keys keeps 16 x 17 / 2 + 240 x 16 = 3,976 scores per head
// of 65,536 (6.07%): 509,000 FLOPs, 1.02 ms; the bytes (1.31 ms) decide.
// RUN: sed -e 's/causal/causal window 16/' %s | partition-opt --part-estimate=cluster=%S/Inputs/round-cluster-attention.json -o /dev/null | FileCheck %s --check-prefix=WINDOW
// WINDOW: @f on 1 device: compute 1.31 ms
part.mesh @mesh = <[]>
func.func @f(%q: tensor<1x2x256x16xf32>, %k: tensor<1x2x256x16xf32>, %v: tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
    attributes {part.spmd = @mesh} {
  %0 = part.attention %q, %k, %v causal : (tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>) -> tensor<1x2x256x16xf32>
  return %0 : tensor<1x2x256x16xf32>
}
