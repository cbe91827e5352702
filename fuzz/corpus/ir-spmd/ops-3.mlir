part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @normalisation_and_attention(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
    %q: tensor<2x4x16x8xf32>, %kv: tensor<2x2x16x8xf32>, %cos: tensor<16x8xf32>, %sin: tensor<16x8xf32>,
    %logits: tensor<2x16x1000xf32>, %labels: tensor<2x16xi32>) -> tensor<f32> {
  %0 = part.softmax %x dim 2 : tensor<2x16x64xf32>
  %1 = part.layer_norm %x, %g, %b : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %2 = part.layer_norm %x, %g epsilon 1.0e-5 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %3 = part.layer_norm %x, %g, %b epsilon 1.0e-12 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %4 = part.rms_norm %x, %g epsilon 1.0e-6 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %5 = part.rotary_embedding %q, %cos, %sin : (tensor<2x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16x8xf32>
  %6 = part.attention %5, %kv, %kv causal : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32>
  %7 = part.attention %q, %q, %q scale 0.125 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %win = part.attention %q, %q, %q causal window 4 scale 0.5 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %dq, %dk, %dv = part.attention_grad %5, %kv, %kv, %6 causal window 4 : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  %8 = part.softmax_cross_entropy %logits, %labels none : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<2x16xf32>
  %9 = part.softmax_cross_entropy %logits, %labels mean : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
  %10 = part.softmax_cross_entropy %logits, %labels sum : (tensor<2x16x1000xf32>, tensor<2x16xi32>) -> tensor<f32>
  return %9 : tensor<f32>
}
