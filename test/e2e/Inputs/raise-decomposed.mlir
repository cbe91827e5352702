// Every pattern of part-raise in the decomposed form an ONNX exporter writes,
// as a one-device program: test/e2e/raise.mlir runs it before and after
// raising and compares the outputs.
part.mesh @mesh = <["x"=1]>

func.func @decomposed(
    %x: tensor<4x64xf32> {part.name = "x", part.role = #part.role<parameter>},
    %g: tensor<64xf32> {part.name = "g", part.role = #part.role<parameter>},
    %b: tensor<64xf32> {part.name = "b", part.role = #part.role<parameter>},
    %q: tensor<1x2x6x8xf32> {part.name = "q", part.role = #part.role<parameter>},
    %k: tensor<1x2x6x8xf32> {part.name = "k", part.role = #part.role<parameter>},
    %v: tensor<1x2x6x8xf32> {part.name = "v", part.role = #part.role<parameter>},
    %q4: tensor<1x4x6x8xf32> {part.name = "q4", part.role = #part.role<parameter>})
    -> (tensor<4x64xf32> {part.name = "gelu_erf"}, tensor<4x64xf32> {part.name = "gelu_tanh"}, tensor<4x64xf32> {part.name = "layer_norm"}, tensor<4x64xf32> {part.name = "rms_norm"}, tensor<4x64xf32> {part.name = "silu"}, tensor<1x2x6x8xf32> {part.name = "attention_add"}, tensor<1x2x6x8xf32> {part.name = "attention_select"}, tensor<1x4x6x8xf32> {part.name = "attention_grouped"}, tensor<1x4x6x8xf32> {part.name = "attention_window"}) attributes {part.spmd = @mesh} {
  // GELU, erf form (torch's export).
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %e0 = part.div %x, %sqrt2 : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %e1 = part.erf %e0 : tensor<4x64xf32>
  %e2 = part.add %e1, %one : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %e3 = part.mul %x, %e2 : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %gelu_erf = part.mul %e3, %half : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>

  // GELU, tanh form (HF's NewGELU).
  %beta = part.constant dense<0.797884583> : tensor<f32>
  %kappa = part.constant dense<4.471500e-02> : tensor<f32>
  %three = part.constant dense<3.000000e+00> : tensor<f32>
  %t0 = part.mul %half, %x : (tensor<f32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %t1 = part.pow %x, %three : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %t2 = part.mul %t1, %kappa : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %t3 = part.add %x, %t2 : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %t4 = part.mul %t3, %beta : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %t5 = part.tanh %t4 : tensor<4x64xf32>
  %t6 = part.add %t5, %one : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %gelu_tanh = part.mul %t0, %t6 : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>

  // Layer norm with bias (torch's export before opset 17).
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps5 = part.constant dense<9.99999974E-6> : tensor<f32>
  %l0 = part.reduce_mean %x dims [1] keep_dims : tensor<4x64xf32> -> tensor<4x1xf32>
  %l1 = part.sub %x, %l0 : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %l2 = part.pow %l1, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %l3 = part.reduce_mean %l2 dims [1] keep_dims : tensor<4x64xf32> -> tensor<4x1xf32>
  %l4 = part.add %l3, %eps5 : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %l5 = part.sqrt %l4 : tensor<4x1xf32>
  %l6 = part.div %l1, %l5 : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %l7 = part.mul %l6, %g : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %layer_norm = part.add %l7, %b : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>

  // RMS norm (torch's export of Llama's: a reciprocal of the square root).
  %eps6 = part.constant dense<9.99999997E-7> : tensor<f32>
  %r0 = part.pow %x, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %r1 = part.reduce_mean %r0 dims [1] keep_dims : tensor<4x64xf32> -> tensor<4x1xf32>
  %r2 = part.add %r1, %eps6 : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r3 = part.sqrt %r2 : tensor<4x1xf32>
  %r4 = part.div %one, %r3 : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %r5 = part.mul %x, %r4 : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %rms_norm = part.mul %g, %r5 : (tensor<64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>

  // SiLU.
  %s0 = part.sigmoid %x : tensor<4x64xf32>
  %silu = part.mul %s0, %x : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>

  // Causal attention, GPT style: scores / sqrt(D) plus an additive mask.
  %sqrt8 = part.constant dense<2.82842708> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<6x6xf32>
  %a0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x6xf32>
  %a1 = part.div %a0, %sqrt8 : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %a2 = part.add %a1, %mask : (tensor<1x2x6x6xf32>, tensor<6x6xf32>) -> tensor<1x2x6x6xf32>
  %a3 = part.softmax %a2 dim 3 : tensor<1x2x6x6xf32>
  %attention_add = part.batch_matmul %a3, %v : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>

  // Causal attention, HF GPT-2 style: where(causal, scores * s, finfo.min)
  // with the keys transposed by a part.transpose and another scale.
  %s = part.constant dense<2.500000e-01> : tensor<f32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = part.constant dense<[[[[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]]]]> : tensor<1x1x6x6xi32>
  %kt = part.transpose %k [0, 1, 3, 2] : tensor<1x2x6x8xf32> -> tensor<1x2x8x6xf32>
  %c0 = part.batch_matmul %q, %kt : (tensor<1x2x6x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x6x6xf32>
  %c1 = part.mul %c0, %s : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %c2 = part.select %causal, %c1, %min : (tensor<1x1x6x6xi32>, tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %c3 = part.softmax %c2 dim 3 : tensor<1x2x6x6xf32>
  %attention_select = part.batch_matmul %c3, %v : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>

  // Grouped-query attention, Llama style: repeat_kv on keys and values.
  %kr0 = part.reshape %k : tensor<1x2x6x8xf32> -> tensor<1x2x1x6x8xf32>
  %kr1 = part.broadcast %kr0 : tensor<1x2x1x6x8xf32> -> tensor<1x2x2x6x8xf32>
  %kr2 = part.reshape %kr1 : tensor<1x2x2x6x8xf32> -> tensor<1x4x6x8xf32>
  %vr0 = part.reshape %v : tensor<1x2x6x8xf32> -> tensor<1x2x1x6x8xf32>
  %vr1 = part.broadcast %vr0 : tensor<1x2x1x6x8xf32> -> tensor<1x2x2x6x8xf32>
  %vr2 = part.reshape %vr1 : tensor<1x2x2x6x8xf32> -> tensor<1x4x6x8xf32>
  %g0 = part.batch_matmul %q4, %kr2 transpose_b : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x6xf32>
  %g1 = part.div %g0, %sqrt8 : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %g2 = part.add %g1, %mask : (tensor<1x4x6x6xf32>, tensor<6x6xf32>) -> tensor<1x4x6x6xf32>
  %g3 = part.softmax %g2 dim 3 : tensor<1x4x6x6xf32>
  %attention_grouped = part.batch_matmul %g3, %vr2 : (tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>

  // Sliding-window attention (window 3) as torch 2.x's SDPA export writes
  // it: an additive band mask of finfo.min, then the NaN guard
  // where(isnan(p), 0, p) on the probabilities; grouped-query heads.
  %band = part.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [-3.40282347E+38, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [-3.40282347E+38, -3.40282347E+38, 0.0, 0.0, 0.0, -3.40282347E+38], [-3.40282347E+38, -3.40282347E+38, -3.40282347E+38, 0.0, 0.0, 0.0]]]]> : tensor<1x1x6x6xf32>
  %zero = part.constant dense<0.0> : tensor<f32>
  %w0 = part.batch_matmul %q4, %kr2 transpose_b : (tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x6xf32>
  %w1 = part.mul %w0, %s : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %w2 = part.add %w1, %band : (tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x4x6x6xf32>
  %w3 = part.softmax %w2 dim 3 : tensor<1x4x6x6xf32>
  %w4 = part.compare ne, %w3, %w3 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xi32>
  %w5 = part.select %w4, %zero, %w3 : (tensor<1x4x6x6xi32>, tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %attention_window = part.batch_matmul %w5, %vr2 : (tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>

  return %gelu_erf, %gelu_tanh, %layer_norm, %rms_norm, %silu, %attention_add, %attention_select, %attention_grouped, %attention_window : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32>
}
