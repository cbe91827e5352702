// RUN: partition-opt %s --part-raise | FileCheck %s
// With `report`, every candidate left alone says why (and nothing else does:
// -verify-diagnostics rejects unexpected remarks).
// RUN: partition-opt %s --part-raise=report=true -verify-diagnostics -o /dev/null

//===----------------------------------------------------------------------===//
// GELU, erf form
//===----------------------------------------------------------------------===//

// torch.nn.functional.gelu as exported: ((x * (erf(x / sqrt2) + 1)) * 0.5.
// CHECK-LABEL: func.func @gelu_erf_torch
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = part.gelu %[[X]] erf : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %3, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// HF's `0.5 * x * (1 + erf(x * (1 / sqrt2)))` with shape-[1] constants.
// CHECK-LABEL: func.func @gelu_erf_hf
// CHECK-NEXT: part.gelu %{{.*}} erf
// CHECK-NEXT: return
func.func @gelu_erf_hf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = part.constant dense<0.707106769> : tensor<1xf32>
  %one = part.constant dense<1.000000e+00> : tensor<1xf32>
  %half = part.constant dense<5.000000e-01> : tensor<1xf32>
  %0 = part.mul %half, %x : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.mul %c, %x : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.erf %1 : tensor<4x8xf32>
  %3 = part.add %one, %2 : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %0, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// x * (0.5 * (1 + erf)), with splat constants of the full shape.
// CHECK-LABEL: func.func @gelu_erf_right_association
// CHECK-NEXT: part.gelu %{{.*}} erf
// CHECK-NEXT: return
func.func @gelu_erf_right_association(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<4x8xf32>
  %one = part.constant dense<1.000000e+00> : tensor<4x8xf32>
  %half = part.constant dense<5.000000e-01> : tensor<4x8xf32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %one, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.mul %half, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %x, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// bf16 constants cannot hold sqrt2 to 1e-6: one bf16 ulp is allowed. The
// input is itself a product (a gated unit's other half), which stays.
// CHECK-LABEL: func.func @gelu_erf_bf16_of_product
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xbf16>, %[[B:.*]]: tensor<4x8xbf16>)
// CHECK-NEXT: %[[X:.*]] = part.mul %[[A]], %[[B]]
// CHECK-NEXT: %[[G:.*]] = part.gelu %[[X]] erf : tensor<4x8xbf16>
// CHECK-NEXT: return %[[G]]
func.func @gelu_erf_bf16_of_product(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %sqrt2 = part.constant dense<1.414060e+00> : tensor<bf16>
  %one = part.constant dense<1.000000e+00> : tensor<bf16>
  %half = part.constant dense<5.000000e-01> : tensor<bf16>
  %x = part.mul %a, %b : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %1 = part.erf %0 : tensor<4x8xbf16>
  %2 = part.add %1, %one : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %3 = part.mul %x, %half : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %4 = part.mul %3, %2 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %4 : tensor<4x8xbf16>
}

// GEGLU: gelu(x) * gate. The GELU is raised; the gating product stays.
// CHECK-LABEL: func.func @geglu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[GATE:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = part.gelu %[[X]] erf
// CHECK-NEXT: part.mul %[[G]], %[[GATE]]
func.func @geglu(%x: tensor<4x8xf32>, %gate: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = part.mul %3, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = part.mul %4, %gate : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// Near misses: each stays decomposed.
// CHECK-LABEL: func.func @gelu_erf_wrong_half
// CHECK-NOT: part.gelu
// CHECK: part.erf
func.func @gelu_erf_wrong_half(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %quarter = part.constant dense<2.500000e-01> : tensor<f32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the constant factor is 0.25, not 0.5}}
  %4 = part.mul %3, %quarter : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_erf_wrong_divisor
// CHECK-NOT: part.gelu
// CHECK: part.erf
func.func @gelu_erf_wrong_divisor(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = part.constant dense<1.5> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.div %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the argument of erf is x / 1.5, not x / sqrt(2)}}
  %4 = part.mul %3, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// erf of another value than the one multiplied.
// CHECK-LABEL: func.func @gelu_erf_other_value
// CHECK-NOT: part.gelu
// CHECK: part.erf
func.func @gelu_erf_other_value(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.div %y, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the other factor is not the x inside erf}}
  %4 = part.mul %3, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// x * 0.5 is also returned: raising would leave it to be computed anyway.
// CHECK-LABEL: func.func @gelu_erf_intermediate_used
// CHECK-NOT: part.gelu
// CHECK: part.erf
func.func @gelu_erf_intermediate_used(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the intermediate 'part.mul' is also used by 'func.return', outside the pattern}}
  %4 = part.mul %3, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// A constant of a larger shape broadcasts the result beyond x.
// CHECK-LABEL: func.func @gelu_erf_broadcasting_constant
// CHECK-NOT: part.gelu
// CHECK: part.erf
func.func @gelu_erf_broadcasting_constant(%x: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %sqrt2 = part.constant dense<1.41421354> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<2x4x8xf32>
  %0 = part.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.erf %0 : tensor<4x8xf32>
  %2 = part.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = part.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: a constant broadcasts the result beyond the shape of x}}
  %4 = part.mul %3, %half : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}

//===----------------------------------------------------------------------===//
// GELU, tanh form
//===----------------------------------------------------------------------===//

// torch's export: 0.5 * (x * (1 + tanh(beta * (x + kappa * (x * (x * x)))))).
// CHECK-LABEL: func.func @gelu_tanh_torch
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = part.gelu %[[X]] tanh : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_tanh_torch(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %beta = part.constant dense<0.797884583> : tensor<f32>
  %kappa = part.constant dense<4.471500e-02> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.mul %kappa, %1 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.add %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %beta, %3 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = part.tanh %4 : tensor<4x8xf32>
  %6 = part.add %one, %5 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = part.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = part.mul %half, %7 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// HF's NewGELU: 0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3)))).
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-NEXT: part.gelu %{{.*}} tanh
// CHECK-NEXT: return
func.func @gelu_tanh_pow(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %beta = part.constant dense<0.797884583> : tensor<1xf32>
  %kappa = part.constant dense<4.471500e-02> : tensor<1xf32>
  %three = part.constant dense<3.000000e+00> : tensor<1xf32>
  %one = part.constant dense<1.000000e+00> : tensor<1xf32>
  %half = part.constant dense<5.000000e-01> : tensor<1xf32>
  %0 = part.mul %half, %x : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.pow %x, %three : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %2 = part.mul %1, %kappa : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %3 = part.add %2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %3, %beta : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %5 = part.tanh %4 : tensor<4x8xf32>
  %6 = part.add %5, %one : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %7 = part.mul %0, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}

// kappa * x * x * x, left-associated.
// CHECK-LABEL: func.func @gelu_tanh_left_products
// CHECK-NEXT: part.gelu %{{.*}} tanh
// CHECK-NEXT: return
func.func @gelu_tanh_left_products(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %beta = part.constant dense<0.797884583> : tensor<f32>
  %kappa = part.constant dense<4.471500e-02> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.mul %kappa, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = part.mul %0, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.mul %1, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.add %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.mul %3, %beta : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = part.tanh %4 : tensor<4x8xf32>
  %6 = part.add %5, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = part.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %8 = part.mul %7, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_tanh_wrong_kappa
// CHECK-NOT: part.gelu
// CHECK: part.tanh
func.func @gelu_tanh_wrong_kappa(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %beta = part.constant dense<0.797884583> : tensor<f32>
  %kappa = part.constant dense<4.400000e-02> : tensor<f32>
  %three = part.constant dense<3.000000e+00> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.pow %x, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.mul %kappa, %0 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.add %x, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.mul %beta, %2 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.tanh %3 : tensor<4x8xf32>
  %5 = part.add %one, %4 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = part.mul %x, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the cubic term's coefficient is 0.044, not 0.044715}}
  %7 = part.mul %half, %6 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}

// x^2 where x^3 belongs.
// CHECK-LABEL: func.func @gelu_tanh_square
// CHECK-NOT: part.gelu
// CHECK: part.tanh
func.func @gelu_tanh_square(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %beta = part.constant dense<0.797884583> : tensor<f32>
  %kappa = part.constant dense<4.471500e-02> : tensor<f32>
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %half = part.constant dense<5.000000e-01> : tensor<f32>
  %0 = part.pow %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = part.mul %kappa, %0 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.add %x, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.mul %beta, %2 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.tanh %3 : tensor<4x8xf32>
  %5 = part.add %one, %4 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = part.mul %x, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.gelu: the sum inside tanh is not x + 0.044715 * x^3}}
  %7 = part.mul %half, %6 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

// The torch export of nn.LayerNorm before opset 17, BERT's epsilon.
// CHECK-LABEL: func.func @layer_norm_torch
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.layer_norm %[[X]], %[[G]], %[[B]] epsilon 9.99999996E-13 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @layer_norm_torch(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999996E-13> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %8 = part.add %7, %b : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %8 : tensor<2x16x64xf32>
}

// Without a bias, with the operands of every commutative op swapped and the
// square as a product; the default epsilon is not printed.
// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.layer_norm %[[X]], %[[G]] : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @layer_norm_no_bias(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %eps = part.constant dense<9.99999974E-6> : tensor<1xf32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.mul %1, %1 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %eps, %3 : (tensor<1xf32>, tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %7 = part.mul %g, %6 : (tensor<64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %7 : tensor<2x16x64xf32>
}

// The bias first, and the normalisation as a product with rsqrt.
// CHECK-LABEL: func.func @layer_norm_rsqrt_bias_first
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.layer_norm %[[X]], %[[G]], %[[B]] epsilon 9.99999997E-7
// CHECK-NEXT: return %[[N]]
func.func @layer_norm_rsqrt_bias_first(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.rsqrt %4 : tensor<2x16x1xf32>
  %6 = part.mul %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %8 = part.add %b, %7 : (tensor<64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %8 : tensor<2x16x64xf32>
}

// The variance over the sequence dimension instead of the features.
// CHECK-LABEL: func.func @layer_norm_variance_other_axis
// CHECK-NOT: part.layer_norm
// CHECK: part.sqrt
func.func @layer_norm_variance_other_axis(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999974E-6> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [1] keep_dims : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  %4 = part.add %3, %eps : (tensor<2x1x64xf32>, tensor<f32>) -> tensor<2x1x64xf32>
  %5 = part.sqrt %4 : tensor<2x1x64xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the mean of squares is over dims [1], not the last dimension 2}}
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %7 : tensor<2x16x64xf32>
}

// The centring mean over the sequence dimension.
// CHECK-LABEL: func.func @layer_norm_centre_other_axis
// CHECK-NOT: part.layer_norm
// CHECK-NOT: part.rms_norm
// CHECK: part.sqrt
func.func @layer_norm_centre_other_axis(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999974E-6> : tensor<f32>
  %0 = part.reduce_mean %x dims [1] keep_dims : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x1x64xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the mean subtracted is over dims [1], not the last dimension 2}}
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %7 : tensor<2x16x64xf32>
}

// A scale of shape [1, 64].
// CHECK-LABEL: func.func @layer_norm_scale_shape
// CHECK-NOT: part.layer_norm
// CHECK: part.sqrt
func.func @layer_norm_scale_shape(%x: tensor<2x16x64xf32>, %g: tensor<1x64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999974E-6> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the scale has shape [1, 64], not [64] (the last dimension of the input)}}
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
  return %7 : tensor<2x16x64xf32>
}

// A bias of shape [1, 64]: the layer norm is raised, the bias add stays.
// CHECK-LABEL: func.func @layer_norm_bias_shape
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>, %[[B:.*]]: tensor<1x64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.layer_norm %[[X]], %[[G]] :
// CHECK-NEXT: part.add %[[N]], %[[B]]
func.func @layer_norm_bias_shape(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<1x64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999974E-6> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %8 = part.add %7, %b : (tensor<2x16x64xf32>, tensor<1x64xf32>) -> tensor<2x16x64xf32>
  return %8 : tensor<2x16x64xf32>
}

// A power of 3 under the mean.
// CHECK-LABEL: func.func @layer_norm_cube
// CHECK-NOT: part.layer_norm
// CHECK: part.sqrt
func.func @layer_norm_cube(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %three = part.constant dense<3.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999974E-6> : tensor<f32>
  %0 = part.reduce_mean %x dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %1 = part.sub %x, %0 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %2 = part.pow %1, %three : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %3 = part.reduce_mean %2 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %4 = part.add %3, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %5 = part.sqrt %4 : tensor<2x16x1xf32>
  %6 = part.div %1, %5 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the mean is of a power 3, not 2}}
  %7 = part.mul %6, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %7 : tensor<2x16x64xf32>
}

//===----------------------------------------------------------------------===//
// RMS norm
//===----------------------------------------------------------------------===//

// torch's export of Llama's RMSNorm: Reciprocal(Sqrt(...)) is div(1, sqrt).
// CHECK-LABEL: func.func @rms_norm_torch
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.rms_norm %[[X]], %[[G]] epsilon 9.99999997E-7 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_torch(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %one = part.constant dense<1.000000e+00> : tensor<f32>
  %0 = part.pow %x, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.sqrt %2 : tensor<2x16x1xf32>
  %4 = part.div %one, %3 : (tensor<f32>, tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
  %5 = part.mul %x, %4 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %6 = part.mul %g, %5 : (tensor<64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %6 : tensor<2x16x64xf32>
}

// rsqrt, the square as a product, and (x * scale) * rsqrt.
// CHECK-LABEL: func.func @rms_norm_rsqrt
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>, %[[G:.*]]: tensor<64xf32>)
// CHECK-NEXT: %[[N:.*]] = part.rms_norm %[[X]], %[[G]] epsilon 9.99999997E-7
// CHECK-NEXT: return %[[N]]
func.func @rms_norm_rsqrt(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %0 = part.mul %x, %x : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.rsqrt %2 : tensor<2x16x1xf32>
  %4 = part.mul %x, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %5 = part.mul %4, %3 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  return %5 : tensor<2x16x64xf32>
}

// x / sqrt(mean(x^2) + eps) * scale.
// CHECK-LABEL: func.func @rms_norm_quotient
// CHECK-NEXT: part.rms_norm
// CHECK-NEXT: return
func.func @rms_norm_quotient(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %0 = part.pow %x, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.sqrt %2 : tensor<2x16x1xf32>
  %4 = part.div %x, %3 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  %5 = part.mul %4, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %5 : tensor<2x16x64xf32>
}

// No scale: there is nothing to raise to, and the remark says so.
// CHECK-LABEL: func.func @rms_norm_no_scale
// CHECK-NOT: part.rms_norm
// CHECK: part.rsqrt
func.func @rms_norm_no_scale(%x: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %0 = part.pow %x, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.rsqrt %2 : tensor<2x16x1xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: there is no scale factor}}
  %4 = part.mul %x, %3 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  return %4 : tensor<2x16x64xf32>
}

// An epsilon that is not a constant.
// CHECK-LABEL: func.func @rms_norm_epsilon_argument
// CHECK-NOT: part.rms_norm
// CHECK: part.rsqrt
func.func @rms_norm_epsilon_argument(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %eps: tensor<f32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %0 = part.pow %x, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.rsqrt %2 : tensor<2x16x1xf32>
  %4 = part.mul %x, %3 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the epsilon added to the mean is not a constant}}
  %5 = part.mul %4, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %5 : tensor<2x16x64xf32>
}

// The mean of another value's squares.
// CHECK-LABEL: func.func @rms_norm_other_value
// CHECK-NOT: part.rms_norm
// CHECK: part.rsqrt
func.func @rms_norm_other_value(%x: tensor<2x16x64xf32>, %y: tensor<2x16x64xf32>, %g: tensor<64xf32>) -> tensor<2x16x64xf32> {
  %two = part.constant dense<2.000000e+00> : tensor<f32>
  %eps = part.constant dense<9.99999997E-7> : tensor<f32>
  %0 = part.pow %y, %two : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16x64xf32>
  %1 = part.reduce_mean %0 dims [2] keep_dims : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  %2 = part.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = part.rsqrt %2 : tensor<2x16x1xf32>
  %4 = part.mul %x, %3 : (tensor<2x16x64xf32>, tensor<2x16x1xf32>) -> tensor<2x16x64xf32>
  // expected-remark @+1 {{not raised to part.layer_norm or part.rms_norm: the product is not x * rsqrt(mean(x^2) + eps) * scale with one x}}
  %5 = part.mul %4, %g : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return %5 : tensor<2x16x64xf32>
}

//===----------------------------------------------------------------------===//
// SiLU
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xbf16>)
// CHECK-NEXT: %[[A:.*]] = part.silu %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = part.silu %[[Y]] : tensor<4x8xbf16>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @silu(%x: tensor<4x8xf32>, %y: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %0 = part.sigmoid %x : tensor<4x8xf32>
  %1 = part.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.sigmoid %y : tensor<4x8xbf16>
  %3 = part.mul %2, %y : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xbf16>
}

// A gate (x * sigmoid(y)) is no SiLU and no candidate: no remark.
// CHECK-LABEL: func.func @sigmoid_gate
// CHECK-NOT: part.silu
// CHECK: part.sigmoid
func.func @sigmoid_gate(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = part.sigmoid %y : tensor<4x8xf32>
  %1 = part.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @silu_sigmoid_used
// CHECK-NOT: part.silu
// CHECK: part.sigmoid
func.func @silu_sigmoid_used(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = part.sigmoid %x : tensor<4x8xf32>
  // expected-remark @+1 {{not raised to part.silu: the intermediate 'part.sigmoid' is also used by 'func.return', outside the pattern}}
  %1 = part.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// GPT style: scores / sqrt(D) plus an additive -inf causal mask, keys given
// with transpose_b. The scale is the default 1 / sqrt(8): not printed.
// CHECK-LABEL: func.func @attention_additive_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_additive_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// HF GPT-2: where(causal, scores, finfo.min) with a 0 / 1 condition, keys
// transposed by a separate part.transpose, a scale other than 1 / sqrt(D).
// CHECK-LABEL: func.func @attention_select_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal scale 1.250000e-01
// CHECK-NEXT: return %[[A]]
func.func @attention_select_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<1.250000e-01> : tensor<f32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = part.constant dense<[[[[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]]]> : tensor<1x1x4x4xi32>
  %kt = part.transpose %k [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %0 = part.batch_matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.mul %0, %s : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.select %causal, %1, %min : (tensor<1x1x4x4xi32>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// masked_fill(mask, -1e9) with the strictly upper mask: select(mask, -1e9,
// scores); the keys transposed straight from [B, S, H, D].
// CHECK-LABEL: func.func @attention_masked_fill
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x4x2x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[KH:.*]] = part.transpose %[[K]] [0, 2, 1, 3] : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[KH]], %[[V]] causal :
// CHECK-NEXT: return %[[A]]
func.func @attention_masked_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %big = part.constant dense<-1.000000e+09> : tensor<f32>
  %upper = part.constant dense<[[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]> : tensor<4x4xi32>
  %kt = part.transpose %k [0, 2, 3, 1] : tensor<1x4x2x8xf32> -> tensor<1x2x8x4xf32>
  %0 = part.batch_matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.select %upper, %big, %1 : (tensor<4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// No mask and no scale: non-causal attention with scale 1.
// CHECK-LABEL: func.func @attention_plain
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x3xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] scale 1.000000e+00 : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_plain(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %1 = part.softmax %0 dim 3 : tensor<1x2x4x6xf32>
  %2 = part.batch_matmul %1, %v : (tensor<1x2x4x6xf32>, tensor<1x2x6x3xf32>) -> tensor<1x2x4x3xf32>
  return %2 : tensor<1x2x4x3xf32>
}

// torch's scaled_dot_product_attention export: sqrt(scale) on the queries and
// on the transposed keys, an all-zero additive mask (non-causal).
// CHECK-LABEL: func.func @attention_sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] :
// CHECK-NEXT: return %[[A]]
func.func @attention_sdpa(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.594603539> : tensor<f32>
  %zero = part.constant dense<0.0> : tensor<1x1x4x4xf32>
  %qs = part.mul %q, %s : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %kt = part.transpose %k [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %ks = part.mul %kt, %s : (tensor<1x2x8x4xf32>, tensor<f32>) -> tensor<1x2x8x4xf32>
  %0 = part.batch_matmul %qs, %ks : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %zero : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// Llama's repeat_kv (reshape, broadcast, reshape) on keys and values: the
// attention reads the 2 key/value heads directly (grouped-query attention).
// CHECK-LABEL: func.func @attention_grouped_query
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_grouped_query(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %k1 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %k2 = part.broadcast %k1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %k3 = part.reshape %k2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %v1 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %v2 = part.broadcast %v1 : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %v3 = part.reshape %v2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %kt = part.transpose %k3 [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %0 = part.batch_matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x4x4x4xf32>
  %4 = part.batch_matmul %3, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %4 : tensor<1x4x4x8xf32>
}

// Heads repeated the other way round (each head's copies not adjacent:
// broadcast over a leading group dimension) are not repeat_kv: the
// attention takes the repeated keys and values as they are.
// CHECK-LABEL: func.func @attention_tiled_heads
// CHECK: %[[K:.*]] = part.reshape %{{.*}} : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK: %[[V:.*]] = part.reshape %{{.*}} : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
// CHECK-NEXT: part.attention %{{.*}}, %[[K]], %[[V]] causal : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
func.func @attention_tiled_heads(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %k1 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<1x1x2x4x8xf32>
  %k2 = part.broadcast %k1 : tensor<1x1x2x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %k3 = part.reshape %k2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %v1 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<1x1x2x4x8xf32>
  %v2 = part.broadcast %v1 : tensor<1x1x2x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %v3 = part.reshape %v2 : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %0 = part.batch_matmul %q, %k3 transpose_b : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x4x4x4xf32>, tensor<4x4xf32>) -> tensor<1x4x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x4x4x4xf32>
  %4 = part.batch_matmul %3, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %4 : tensor<1x4x4x8xf32>
}

// A mask that lets row 0 see key 1: not causal.
// CHECK-LABEL: func.func @attention_mask_not_causal
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_mask_not_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %mask = part.constant dense<[[0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %mask : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the additive mask is neither causal nor a sliding window: entry [0, 1] above the diagonal is 0, not -inf or at most -1e4}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A padding mask [1, 1, 1, S] is not causal either.
// CHECK-LABEL: func.func @attention_padding_mask
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_padding_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %mask = part.constant dense<[[[[0.0, 0.0, 0.0, -1.0e+04]]]]> : tensor<1x1x1x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the additive mask is neither causal nor a sliding window: its last two dimensions [1, 4] are not a square [S, S] block}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A select whose condition keeps the upper triangle.
// CHECK-LABEL: func.func @attention_select_not_causal
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_select_not_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %min = part.constant dense<0xFF800000> : tensor<f32>
  %upper = part.constant dense<[[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]> : tensor<4x4xi32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.select %upper, %0, %min : (tensor<4x4xi32>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the select's condition is neither causal nor a sliding window: row 3 masks every key}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A mask that is an argument (a padding mask computed at run time).
// CHECK-LABEL: func.func @attention_mask_argument
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_mask_argument(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the mask added to the scores is not a constant}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A mask that is a parameter (an initializer the importer did not fold, as
// the dynamo exporter writes the causal mask): the remark names it and says
// how to make it a constant.
// CHECK-LABEL: func.func @attention_mask_parameter
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_mask_parameter(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xf32> {part.name = "val_223", part.role = #part.role<parameter>}) -> tensor<1x2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the mask added to the scores is parameter 'val_223', not a constant; mark it constant (partition-import --frozen 'val_223')}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// torch's SDPA export: where(isnan(p), 0, p) after the softmax, imported as
// select(compare ne(p, p), 0, p). Under a causal mask every row keeps a key,
// so the guard is a no-op and the attention absorbs it.
// CHECK-LABEL: func.func @attention_nan_guard_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_nan_guard_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %zero = part.constant dense<0.0> : tensor<f32>
  %mask = part.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %nan = part.compare ne, %3, %3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
  %4 = part.select %nan, %zero, %3 : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{raised to part.attention; the NaN guard after the softmax is a no-op and is dropped: the causal mask keeps a key in every row, so the softmax of finite scores is never NaN}}
  %5 = part.batch_matmul %4, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %5 : tensor<1x2x4x8xf32>
}

// The guard without a mask (non-causal SDPA) is absorbed as well.
// CHECK-LABEL: func.func @attention_nan_guard_no_mask
// CHECK-NEXT: %[[A:.*]] = part.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.000000e+00 :
// CHECK-NEXT: return %[[A]]
func.func @attention_nan_guard_no_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %zero = part.constant dense<0.0> : tensor<1x2x4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.softmax %0 dim 3 : tensor<1x2x4x4xf32>
  %same = part.compare eq, %1, %1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
  %2 = part.select %same, %1, %zero : (tensor<1x2x4x4xi32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{raised to part.attention; the NaN guard after the softmax is a no-op and is dropped: the absent mask keeps a key in every row, so the softmax of finite scores is never NaN}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A mask that masks every key of row 0: the softmax is NaN there and the
// guard turns that row into zeros, which part.attention does not compute.
// The guard stays, and so does the attention, with the reason.
// CHECK-LABEL: func.func @attention_nan_guard_empty_row
// CHECK-NOT: part.attention
// CHECK: %[[P:.*]] = part.softmax
// CHECK-NEXT: %[[NAN:.*]] = part.compare ne, %[[P]], %[[P]]
// CHECK-NEXT: part.select %[[NAN]], %{{.*}}, %[[P]]
func.func @attention_nan_guard_empty_row(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %zero = part.constant dense<0.0> : tensor<f32>
  %mask = part.constant dense<[[0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %0, %mask : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  %nan = part.compare ne, %2, %2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
  %3 = part.select %nan, %zero, %2 : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the additive mask masks every key of row 0: where the masked scores are -inf the softmax is NaN there and the NaN guard after it gives 0, so the guard is not a no-op and stays}}
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// A guard over a parameter mask stays with the attention, and the remark
// says both.
// CHECK-LABEL: func.func @attention_nan_guard_mask_parameter
// CHECK-NOT: part.attention
// CHECK: part.compare ne
func.func @attention_nan_guard_mask_parameter(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xf32> {part.name = "val_223", part.role = #part.role<parameter>}) -> tensor<1x2x4x8xf32> {
  %zero = part.constant dense<0.0> : tensor<f32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.add %mask, %0 : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  %nan = part.compare ne, %2, %2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
  %3 = part.select %nan, %zero, %2 : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the mask added to the scores is parameter 'val_223', not a constant; mark it constant (partition-import --frozen 'val_223'); the NaN guard after the softmax stays}}
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// Sliding-window attention (Mistral's sliding_window 2 over 4 positions): an
// additive band mask, query i keeping the keys j with 0 <= i - j < 2.
// CHECK-LABEL: func.func @attention_window_additive
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal window 2 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_window_additive(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %d = part.constant dense<2.82842708> : tensor<f32>
  %zero = part.constant dense<0.0> : tensor<f32>
  %mask = part.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [-3.40282347E+38, 0.0, 0.0, -3.40282347E+38], [-3.40282347E+38, -3.40282347E+38, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %nan = part.compare ne, %3, %3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi32>
  %4 = part.select %nan, %zero, %3 : (tensor<1x2x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{raised to part.attention; the NaN guard after the softmax is a no-op and is dropped: the sliding-window mask keeps a key in every row, so the softmax of finite scores is never NaN}}
  %5 = part.batch_matmul %4, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %5 : tensor<1x2x4x8xf32>
}

// The band as a select condition (legacy exports) over 5 positions.
// CHECK-LABEL: func.func @attention_window_select
// CHECK: part.attention %{{.*}}, %{{.*}}, %{{.*}} causal window 3 scale 1.250000e-01 :
func.func @attention_window_select(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %s = part.constant dense<1.250000e-01> : tensor<f32>
  %min = part.constant dense<0xFF800000> : tensor<f32>
  %band = part.constant dense<[[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]]> : tensor<5x5xi32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x5xf32>
  %1 = part.mul %0, %s : (tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  %2 = part.select %band, %1, %min : (tensor<5x5xi32>, tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x5x5xf32>
  %4 = part.batch_matmul %3, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %4 : tensor<1x2x5x8xf32>
}

// A band whose rows disagree (row 3 keeps 3 keys, the last row 2): neither
// causal nor one window.
// CHECK-LABEL: func.func @attention_window_uneven
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_window_uneven(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32> {
  %min = part.constant dense<0xFF800000> : tensor<f32>
  %band = part.constant dense<[[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 1, 1]]> : tensor<5x5xi32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x5xf32>
  %1 = part.select %band, %0, %min : (tensor<5x5xi32>, tensor<1x2x5x5xf32>, tensor<f32>) -> tensor<1x2x5x5xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x5x5xf32>
  // expected-remark @+1 {{not raised to part.attention: the select's condition is neither causal nor a sliding window: entry [2, 0], 2 keys before its query, is kept (the last row keeps 2 keys, a sliding window of 2)}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x5x5xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x5x8xf32>
  return %3 : tensor<1x2x5x8xf32>
}

// A band mask that differs between the sequences of the batch (the second
// one padded): not one pattern.
// CHECK-LABEL: func.func @attention_window_per_sequence
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_window_per_sequence(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32> {
  %mask = part.constant dense<[[[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0xFF800000, 0.0, 0.0]]], [[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0xFF800000, 0.0, 0xFF800000]]]]> : tensor<2x1x3x3xf32>
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x3xf32>
  %1 = part.add %0, %mask : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %2 = part.softmax %1 dim 3 : tensor<2x2x3x3xf32>
  // expected-remark @+1 {{not raised to part.attention: the additive mask is neither causal nor a sliding window: entry [2, 2] on or below the diagonal is -inf, not 0 (the last row keeps 2 keys, a sliding window of 2)}}
  %3 = part.batch_matmul %2, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32>
  return %3 : tensor<2x2x3x8xf32>
}

// The softmax over the query dimension.
// CHECK-LABEL: func.func @attention_softmax_dim
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_softmax_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.softmax %0 dim 2 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the softmax is over dim 2, not the last (key) dimension 3}}
  %2 = part.batch_matmul %1, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %2 : tensor<1x2x4x8xf32>
}

// The probabilities are also returned (attention weights as an output).
// CHECK-LABEL: func.func @attention_probabilities_used
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_probabilities_used(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.softmax %0 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the intermediate 'part.softmax' is also used by 'func.return', outside the pattern}}
  %2 = part.batch_matmul %1, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %2, %1 : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// Rank-3 probabilities that are no merge of [B, H, S, S] scores: no heads
// to give part.attention.
// CHECK-LABEL: func.func @attention_rank3
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_rank3(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.softmax %0 dim 2 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: attention needs rank-4 [batch, heads, seq, head_dim] operands; the probabilities have rank 3 and are not a softmax of rank-4 [B, H, Sq, Sk] scores reshaped to [B * H, Sq, Sk]}}
  %2 = part.batch_matmul %1, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %2 : tensor<2x4x8xf32>
}

// GPT-NeoX: baddbmm(zeros, Q, Kt, alpha = s) over [B * H, S, D], the scores
// reshaped back to [B, H, S, S] and masked by where(causal, scores, min).
// The zero added and the reshapes go; the scale is the default 1 / sqrt(8).
// CHECK-LABEL: func.func @attention_baddbmm
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_baddbmm(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %zero = part.constant dense<0.0> : tensor<2x4x4xf32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %causal = part.constant dense<[[[[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]]]> : tensor<1x1x4x4xi32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %kt = part.transpose %k3 [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %0 = part.batch_matmul %q3, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %1 = part.mul %0, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %2 = part.add %1, %zero : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %3 = part.reshape %2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %4 = part.select %causal, %3, %min : (tensor<1x1x4x4xi32>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %5 = part.softmax %4 dim 3 : tensor<1x2x4x4xf32>
  %6 = part.batch_matmul %5, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %6 : tensor<1x2x4x8xf32>
}

// The same over [B * H, S, D] with the keys transposed before their heads
// are merged, an additive causal mask and no zero.
// CHECK-LABEL: func.func @attention_merged_heads_keys_transposed
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x4x8xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal scale 1.250000e-01 :
// CHECK-NEXT: return %[[A]]
func.func @attention_merged_heads_keys_transposed(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %d = part.constant dense<8.0> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %q3 = part.reshape %q : tensor<2x2x4x8xf32> -> tensor<4x4x8xf32>
  %kt = part.transpose %k [0, 1, 3, 2] : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %kt3 = part.reshape %kt : tensor<2x2x8x4xf32> -> tensor<4x8x4xf32>
  %0 = part.batch_matmul %q3, %kt3 : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %1 = part.div %0, %d : (tensor<4x4x4xf32>, tensor<f32>) -> tensor<4x4x4xf32>
  %2 = part.reshape %1 : tensor<4x4x4xf32> -> tensor<2x2x4x4xf32>
  %3 = part.add %2, %mask : (tensor<2x2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
  %4 = part.softmax %3 dim 3 : tensor<2x2x4x4xf32>
  %5 = part.batch_matmul %4, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %5 : tensor<2x2x4x8xf32>
}

// BLOOM-style baddbmm(bias, Q, Kt): a bias that is not zero (ALiBi) is no
// part of part.attention.
// CHECK-LABEL: func.func @attention_baddbmm_bias
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_baddbmm_bias(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %bias = part.constant dense<-5.000000e-01> : tensor<2x4x4xf32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.mul %0, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %2 = part.add %1, %bias : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %3 = part.reshape %2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %4 = part.softmax %3 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the scores are not a batch_matmul of queries and keys scaled by a constant}}
  %5 = part.batch_matmul %4, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %5 : tensor<1x2x4x8xf32>
}

// Scores split as [1, 2] (batch, heads) from a product whose queries merged
// [2, 1]: the rows of the product are not the heads the scores say.
// CHECK-LABEL: func.func @attention_merged_heads_mismatch
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_merged_heads_mismatch(%q: tensor<2x1x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %q3 = part.reshape %q : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the score product is over [B * H, S, D], but its operands are not [B, H, S, D] queries and keys reshaped with B, H = [1, 2]}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// OPT: queries scaled, the product over [B * H, S, D], the scores split to
// [B, H, S, S] for an additive finfo.min mask and the clamp
// max(., finfo.min), then merged again for the softmax (dim 2) and the
// product with the values [B * H, S, D]. The split of that product into
// heads becomes the attention; the clamp and the reshapes go.
// CHECK-LABEL: func.func @attention_opt
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal {part.layer = 3 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_opt(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %mask = part.constant dense<[[[[0.0, 0xFF7FFFFF, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %qs = part.mul %q3, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %kt = part.transpose %k3 [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %0 = part.batch_matmul %qs, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.max %2, %min : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %4 = part.reshape %3 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %5 = part.softmax %4 dim 2 : tensor<2x4x4xf32>
  %6 = part.batch_matmul %5, %v3 {part.layer = 3 : i64} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %7 = part.reshape %6 {part.layer = 3 : i64} : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %7 : tensor<1x2x4x8xf32>
}

// The same with the product over [B * H, S, D] returned as it is: the
// attention, reshaped to it.
// CHECK-LABEL: func.func @attention_opt_merged_result
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = part.reshape %[[A]] : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @attention_opt_merged_result(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %mask = part.constant dense<[[[[0.0, 0xFF7FFFFF, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %qs = part.mul %q3, %s : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %qs, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.max %min, %2 : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = part.reshape %3 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %5 = part.softmax %4 dim 2 : tensor<2x4x4xf32>
  %6 = part.batch_matmul %5, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %6 : tensor<2x4x8xf32>
}

// The probabilities merged after a softmax over [B, H, S, S] (BLOOM's
// order), here without a bias: raised.
// CHECK-LABEL: func.func @attention_probabilities_merged
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = part.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT: return %[[A]]
func.func @attention_probabilities_merged(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = part.constant dense<[[[[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]]]> : tensor<1x1x4x4xi32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.mul %0, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %2 = part.reshape %1 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %3 = part.select %masked, %min, %2 : (tensor<1x1x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = part.softmax %3 dim 3 : tensor<1x2x4x4xf32>
  %5 = part.reshape %4 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %6 = part.batch_matmul %5, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %7 = part.reshape %6 : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %7 : tensor<1x2x4x8xf32>
}

// BLOOM: baddbmm(alibi, Q, Kt, alpha = s) over [B * H, S, D] with a
// per-head linear bias [B * H, 1, S], masked by where(causal, finfo.min),
// softmax over [B, H, S, S] merged again for the values. part.attention has
// no bias: left alone.
// CHECK-LABEL: func.func @attention_alibi
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_alibi(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = part.constant dense<0.353553385> : tensor<f32>
  %alibi = part.constant dense<[[[0.0, 0.25, 0.5, 0.75]], [[0.0, 0.0625, 0.125, 0.1875]]]> : tensor<2x1x4xf32>
  %min = part.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = part.constant dense<[[[[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]]]]> : tensor<1x1x4x4xi32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.mul %0, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %2 = part.add %1, %alibi : (tensor<2x4x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  %3 = part.reshape %2 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %4 = part.select %masked, %min, %3 : (tensor<1x1x4x4xi32>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %5 = part.softmax %4 dim 3 : tensor<1x2x4x4xf32>
  %6 = part.reshape %5 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the scores are not a batch_matmul of queries and keys scaled by a constant}}
  %7 = part.batch_matmul %6, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %8 = part.reshape %7 : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %8 : tensor<1x2x4x8xf32>
}

// A clamp by a bound that unmasked scores can fall below changes the
// probabilities.
// CHECK-LABEL: func.func @attention_clamp_bound
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_clamp_bound(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %mask = part.constant dense<[[[[0.0, 0xFF7FFFFF, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %bound = part.constant dense<-1.000000e+02> : tensor<f32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.max %2, %bound : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %4 = part.reshape %3 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %5 = part.softmax %4 dim 2 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the scores are clamped below by -100, not by -inf or a value at most -1e4}}
  %6 = part.batch_matmul %5, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %7 = part.reshape %6 : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %7 : tensor<1x2x4x8xf32>
}

// Probabilities merged from [B, H] = [1, 2] against values merged from
// [2, 1]: row i of the product pairs different heads.
// CHECK-LABEL: func.func @attention_values_merged_otherwise
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_values_merged_otherwise(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<2x1x4x8xf32>) -> tensor<2x4x8xf32> {
  %mask = part.constant dense<[[[[0.0, 0xFF7FFFFF, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.reshape %2 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %4 = part.softmax %3 dim 2 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the probabilities are over [B * H, Sq, Sk], but the values are not [B, H, Sk, D] values reshaped with B, H = [1, 2]}}
  %5 = part.batch_matmul %4, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}

// Rank-3 scores reshaped from a rank-2 value, not split from heads.
// CHECK-LABEL: func.func @attention_merged_scores_not_heads
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_merged_scores_not_heads(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %2 = part.reshape %1 : tensor<8x4xf32> -> tensor<2x4x4xf32>
  %3 = part.softmax %2 dim 2 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: attention needs rank-4 [batch, heads, seq, head_dim] operands; the probabilities have rank 3 and are not a softmax of rank-4 [B, H, Sq, Sk] scores reshaped to [B * H, Sq, Sk]}}
  %4 = part.batch_matmul %3, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}

// Probabilities reshaped, but not by merging batch and heads.
// CHECK-LABEL: func.func @attention_probabilities_reshaped_otherwise
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_probabilities_reshaped_otherwise(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<1x8x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.softmax %0 dim 3 : tensor<1x2x4x4xf32>
  %2 = part.reshape %1 : tensor<1x2x4x4xf32> -> tensor<1x8x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the probabilities are reshaped from [1, 2, 4, 4] to [1, 8, 4], not from [B, H, Sq, Sk] to [B * H, Sq, Sk]}}
  %3 = part.batch_matmul %2, %v : (tensor<1x8x4xf32>, tensor<1x4x8xf32>) -> tensor<1x8x8xf32>
  return %3 : tensor<1x8x8xf32>
}

// Probabilities of rank 5.
// CHECK-LABEL: func.func @attention_rank5
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_rank5(%q: tensor<1x1x2x4x8xf32>, %k: tensor<1x1x2x4x8xf32>, %v: tensor<1x1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x1x2x4x8xf32>, tensor<1x1x2x4x8xf32>) -> tensor<1x1x2x4x4xf32>
  %1 = part.softmax %0 dim 4 : tensor<1x1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: attention needs rank-4 [batch, heads, seq, head_dim] operands, the probabilities have rank 5}}
  %2 = part.batch_matmul %1, %v : (tensor<1x1x2x4x4xf32>, tensor<1x1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32>
  return %2 : tensor<1x1x2x4x8xf32>
}

// Scores clamped by a value computed at run time.
// CHECK-LABEL: func.func @attention_clamp_not_constant
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_clamp_not_constant(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %bound: tensor<f32>) -> tensor<1x2x4x8xf32> {
  %0 = part.batch_matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.max %0, %bound : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.softmax %1 dim 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the scores are clamped by a non-constant value}}
  %3 = part.batch_matmul %2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %3 : tensor<1x2x4x8xf32>
}

// A clamp whose bound broadcasts one head's scores to two.
// CHECK-LABEL: func.func @attention_clamp_broadcasts
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_clamp_broadcasts(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32> {
  %min = part.constant dense<-3.40282347E+38> : tensor<1x2x4x4xf32>
  %q3 = part.reshape %q : tensor<1x1x4x8xf32> -> tensor<1x4x8xf32>
  %k3 = part.reshape %k : tensor<1x1x4x8xf32> -> tensor<1x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x4xf32>
  %1 = part.reshape %0 : tensor<1x4x4xf32> -> tensor<1x1x4x4xf32>
  %2 = part.max %1, %min : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.reshape %2 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %4 = part.softmax %3 dim 2 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the clamp broadcasts the scores to a larger shape}}
  %5 = part.batch_matmul %4, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %5 : tensor<2x4x8xf32>
}

// A softmax over merged scores along the query dimension.
// CHECK-LABEL: func.func @attention_merged_softmax_dim
// CHECK-NOT: part.attention
// CHECK: part.softmax
func.func @attention_merged_softmax_dim(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<2x4x8xf32> {
  %q3 = part.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = part.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %v3 = part.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %0 = part.batch_matmul %q3, %k3 transpose_b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %1 = part.reshape %0 : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = part.reshape %1 : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %3 = part.softmax %2 dim 1 : tensor<2x4x4xf32>
  // expected-remark @+1 {{not raised to part.attention: the softmax is over dim 1, not the last (key) dimension 2}}
  %4 = part.batch_matmul %3, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %4 : tensor<2x4x8xf32>
}

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

// Llama's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin with tables
// [1, 1, S, D] (cos[position_ids].unsqueeze(1), folded): the tables become
// [S, D] constants.
// CHECK-LABEL: func.func @rotary_llama
// CHECK-SAME: (%[[X:.*]]: tensor<2x2x4x4xf32>)
// CHECK-NEXT: %[[C:.*]] = part.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [5.000000e-01, {{.*}}]]> : tensor<4x4xf32>
// CHECK-NEXT: %[[S:.*]] = part.constant dense<{{\[\[}}0.000000e+00, {{.*}}]]> : tensor<4x4xf32>
// CHECK-NEXT: %[[R:.*]] = part.rotary_embedding %[[X]], %[[C]], %[[S]] : (tensor<2x2x4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @rotary_llama(%x: tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> {
  %cos = part.constant dense<[[[[1.0, 1.0, 1.0, 1.0], [0.5, 0.75, 0.5, 0.75], [0.25, 0.5, 0.25, 0.5], [0.0, 0.25, 0.0, 0.25]]]]> : tensor<1x1x4x4xf32>
  %sin = part.constant dense<[[[[0.0, 0.0, 0.0, 0.0], [0.5, 0.25, 0.5, 0.25], [0.75, 0.5, 0.75, 0.5], [1.0, 0.75, 1.0, 0.75]]]]> : tensor<1x1x4x4xf32>
  %0 = part.mul %x, %cos : (tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %1 = part.slice %x offsets [0, 0, 0, 0] : tensor<2x2x4x4xf32> -> tensor<2x2x4x2xf32>
  %2 = part.slice %x offsets [0, 0, 0, 2] : tensor<2x2x4x4xf32> -> tensor<2x2x4x2xf32>
  %3 = part.neg %2 : tensor<2x2x4x2xf32>
  %4 = part.concat %3, %1 dim 3 : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>) -> tensor<2x2x4x4xf32>
  %5 = part.mul %4, %sin : (tensor<2x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %6 = part.add %0, %5 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  return %6 : tensor<2x2x4x4xf32>
}

// GPT-NeoX and Phi: rotary embeddings on the first half of each head's
// dimensions (rotary_pct, partial_rotary_factor), the rest passed through,
// on queries and keys, then attention. Each rotated slice becomes a
// part.rotary_embedding, both reading one pair of [S, D / 2] tables (the
// products in either order), and the attention is raised on the
// concatenations.
// CHECK-LABEL: func.func @rotary_partial_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-DAG: %[[QR:.*]] = part.slice %[[Q]] offsets [0, 0, 0, 0] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
// CHECK-DAG: %[[QP:.*]] = part.slice %[[Q]] offsets [0, 0, 0, 4] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
// CHECK-DAG: %[[KR:.*]] = part.slice %[[K]] offsets [0, 0, 0, 0] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
// CHECK-DAG: %[[KP:.*]] = part.slice %[[K]] offsets [0, 0, 0, 4] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
// CHECK-DAG: %[[C:.*]] = part.constant {{.*}} : tensor<4x4xf32>
// CHECK-DAG: %[[S:.*]] = part.constant {{.*}} : tensor<4x4xf32>
// CHECK-DAG: %[[QE:.*]] = part.rotary_embedding %[[QR]], %[[C]], %[[S]] :
// CHECK-DAG: %[[KE:.*]] = part.rotary_embedding %[[KR]], %[[C]], %[[S]] :
// CHECK-DAG: %[[QC:.*]] = part.concat %[[QE]], %[[QP]] dim 3
// CHECK-DAG: %[[KC:.*]] = part.concat %[[KE]], %[[KP]] dim 3
// CHECK: %[[A:.*]] = part.attention %[[QC]], %[[KC]], %[[V]] causal :
// CHECK-NEXT: return %[[A]]
func.func @rotary_partial_attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %cos = part.constant dense<[[[[1.0, 1.0, 1.0, 1.0], [0.5, 0.75, 0.5, 0.75], [0.25, 0.5, 0.25, 0.5], [0.0, 0.25, 0.0, 0.25]]]]> : tensor<1x1x4x4xf32>
  %sin = part.constant dense<[[[[0.0, 0.0, 0.0, 0.0], [0.5, 0.25, 0.5, 0.25], [0.75, 0.5, 0.75, 0.5], [1.0, 0.75, 1.0, 0.75]]]]> : tensor<1x1x4x4xf32>
  %qr = part.slice %q offsets [0, 0, 0, 0] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %qp = part.slice %q offsets [0, 0, 0, 4] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %kr = part.slice %k offsets [0, 0, 0, 0] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %kp = part.slice %k offsets [0, 0, 0, 4] : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %q0 = part.mul %qr, %cos : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %q1 = part.slice %qr offsets [0, 0, 0, 0] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %q2 = part.slice %qr offsets [0, 0, 0, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %q3 = part.neg %q2 : tensor<1x2x4x2xf32>
  %q4 = part.concat %q3, %q1 dim 3 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %q5 = part.mul %q4, %sin : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %q6 = part.add %q0, %q5 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k0 = part.mul %cos, %kr : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k1 = part.slice %kr offsets [0, 0, 0, 0] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %k2 = part.slice %kr offsets [0, 0, 0, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %k3 = part.neg %k2 : tensor<1x2x4x2xf32>
  %k4 = part.concat %k3, %k1 dim 3 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %k5 = part.mul %sin, %k4 : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k6 = part.add %k5, %k0 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %qe = part.concat %q6, %qp dim 3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %ke = part.concat %k6, %kp dim 3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %d = part.constant dense<2.82842708> : tensor<f32>
  %mask = part.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %0 = part.batch_matmul %qe, %ke transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.div %0, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = part.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %3 = part.softmax %2 dim 3 : tensor<1x2x4x4xf32>
  %4 = part.batch_matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %4 : tensor<1x2x4x8xf32>
}

// Tables computed at run time ([1, 1, S, D] arguments) are reshaped to
// [S, D].
// CHECK-LABEL: func.func @rotary_table_arguments
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[COS:.*]]: tensor<1x1x4x4xf32>, %[[SIN:.*]]: tensor<1x1x4x4xf32>)
// CHECK-NEXT: %[[C:.*]] = part.reshape %[[COS]] : tensor<1x1x4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[S:.*]] = part.reshape %[[SIN]] : tensor<1x1x4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[R:.*]] = part.rotary_embedding %[[X]], %[[C]], %[[S]] :
// CHECK-NEXT: return %[[R]]
func.func @rotary_table_arguments(%x: tensor<1x2x4x4xf32>, %cos: tensor<1x1x4x4xf32>, %sin: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = part.mul %x, %cos : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.slice %x offsets [0, 0, 0, 0] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %2 = part.slice %x offsets [0, 0, 0, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %3 = part.neg %2 : tensor<1x2x4x2xf32>
  %4 = part.concat %3, %1 dim 3 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %5 = part.mul %4, %sin : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %6 = part.add %0, %5 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %6 : tensor<1x2x4x4xf32>
}

// The lower half negated and put first: concat(-x1, x2) rotates the other
// way, which part.rotary_embedding does not.
// CHECK-LABEL: func.func @rotary_wrong_half_negated
// CHECK-NOT: part.rotary_embedding
// CHECK: part.neg
func.func @rotary_wrong_half_negated(%x: tensor<1x2x4x4xf32>, %cos: tensor<4x4xf32>, %sin: tensor<4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = part.mul %x, %cos : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.slice %x offsets [0, 0, 0, 0] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %2 = part.slice %x offsets [0, 0, 0, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %3 = part.neg %1 : tensor<1x2x4x2xf32>
  %4 = part.concat %3, %2 dim 3 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %5 = part.mul %4, %sin : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.rotary_embedding: the negated slice is not the upper half x[..., 2:] of the last dimension}}
  %6 = part.add %0, %5 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %6 : tensor<1x2x4x4xf32>
}

// Tables with a row per sequence of the batch (positions that differ
// between sequences) are not one [S, D] table.
// CHECK-LABEL: func.func @rotary_table_per_sequence
// CHECK-NOT: part.rotary_embedding
// CHECK: part.neg
func.func @rotary_table_per_sequence(%x: tensor<2x2x4x4xf32>, %cos: tensor<2x1x4x4xf32>, %sin: tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32> {
  %0 = part.mul %x, %cos : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %1 = part.slice %x offsets [0, 0, 0, 0] : tensor<2x2x4x4xf32> -> tensor<2x2x4x2xf32>
  %2 = part.slice %x offsets [0, 0, 0, 2] : tensor<2x2x4x4xf32> -> tensor<2x2x4x2xf32>
  %3 = part.neg %2 : tensor<2x2x4x2xf32>
  %4 = part.concat %3, %1 dim 3 : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>) -> tensor<2x2x4x4xf32>
  %5 = part.mul %4, %sin : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.rotary_embedding: the cos table has shape [2, 1, 4, 4], not [4, 4] (the input's last two dimensions) after leading 1s}}
  %6 = part.add %0, %5 : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  return %6 : tensor<2x2x4x4xf32>
}

// The cosine term of a different value than the one rotated.
// CHECK-LABEL: func.func @rotary_other_value
// CHECK-NOT: part.rotary_embedding
// CHECK: part.neg
func.func @rotary_other_value(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x4x4xf32>, %cos: tensor<4x4xf32>, %sin: tensor<4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = part.mul %y, %cos : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = part.slice %x offsets [0, 0, 0, 0] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %2 = part.slice %x offsets [0, 0, 0, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x2xf32>
  %3 = part.neg %2 : tensor<1x2x4x2xf32>
  %4 = part.concat %3, %1 dim 3 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %5 = part.mul %4, %sin : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{not raised to part.rotary_embedding: the other product is not of the rotated value x}}
  %6 = part.add %0, %5 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %6 : tensor<1x2x4x4xf32>
}

//===----------------------------------------------------------------------===//
// What raising keeps
//===----------------------------------------------------------------------===//

// A sharding annotation on the root is kept on the raised op, and a
// hand-written layer norm without bias followed by a bias add is completed.
part.mesh @mesh = <["tp"=2]>
// CHECK-LABEL: func.func @keeps_annotations
// CHECK-NEXT: part.silu %{{.*}} {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// CHECK-NEXT: part.layer_norm %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK-NEXT: return
func.func @keeps_annotations(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = part.sigmoid %x : tensor<4x8xf32>
  %1 = part.mul %x, %0 {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = part.add %2, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
