// RUN: partition-opt %s --part-grad-buckets="bytes=4 overlap=false" | FileCheck %s

// overlap=false: a gradient's reduction over dp waits for the end of
// backward (Megatron's all-reduce of the whole gradient buffer after
// backward), and the updates that read it follow it, in their order. The
// tensor-parallel sum the next layer's backward reads stays where it is.
// CHECK-LABEL: func.func @after_backward
// CHECK: %[[G1:.*]] = part.mul %arg0, %arg0 {part.layer = 1 : i64}
// CHECK-NEXT: %[[X:.*]] = part.mul %arg0, %arg1 {part.layer = 1 : i64}
// CHECK-NEXT: %[[T:.*]] = part.all_reduce %[[X]] on @mesh axes ["tp"] sum {part.origin = "t"}
// CHECK-NEXT: %[[Y:.*]] = part.mul %[[T]], %[[T]] {part.layer = 0 : i64}
// CHECK-NEXT: %[[G0:.*]] = part.mul %[[Y]], %arg1 {part.layer = 0 : i64}
// CHECK-NEXT: %[[R1:.*]] = part.all_reduce %[[G1]] on @mesh axes ["dp"] sum {part.origin = "g1"}
// CHECK-NEXT: %[[R0:.*]] = part.all_reduce %[[G0]] on @mesh axes ["dp"] sum {part.origin = "g0"}
// CHECK-NEXT: %[[U1:.*]] = part.sub %arg2, %[[R1]]
// CHECK-NEXT: %[[U0:.*]] = part.sub %arg2, %[[R0]]
// CHECK-NEXT: return %[[U1]], %[[U0]], %[[Y]]
part.mesh @mesh = <["dp"=2, "tp"=2]>
func.func @after_backward(%a: tensor<4xf32>, %b: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) attributes {part.spmd = @mesh} {
  %g1 = part.mul %a, %a {part.layer = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r1 = part.all_reduce %g1 on @mesh axes ["dp"] sum {part.origin = "g1"} : tensor<4xf32>
  %u1 = part.sub %w, %r1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x = part.mul %a, %b {part.layer = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = part.all_reduce %x on @mesh axes ["tp"] sum {part.origin = "t"} : tensor<4xf32>
  %y = part.mul %t, %t {part.layer = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g0 = part.mul %y, %b {part.layer = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r0 = part.all_reduce %g0 on @mesh axes ["dp"] sum {part.origin = "g0"} : tensor<4xf32>
  %u0 = part.sub %w, %r0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u1, %u0, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A pipeline's last backward fragment: the accumulated gradient's
// all-reduce (a bucket of one) moves below the rest of the fragment.
// CHECK-LABEL: func.func private @stage0_B_final
// CHECK: %[[G:.*]] = part.mul %arg0, %arg0 {part.layer = 0 : i64}
// CHECK-NEXT: %[[ACC:.*]] = part.add %arg2, %[[G]]
// CHECK-NEXT: %[[H:.*]] = part.mul %arg0, %arg1 {part.layer = 0 : i64}
// CHECK-NEXT: %[[R:.*]] = part.all_reduce %[[ACC]] on @mesh axes ["dp"] sum
// CHECK-NEXT: return %[[R]], %[[H]]
func.func private @stage0_B_final(%a: tensor<4xf32>, %b: tensor<4xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {part.final, part.fragment = "B", part.stage = 0 : i64} {
  %g = part.mul %a, %a {part.layer = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = part.add %acc, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = part.all_reduce %s on @mesh axes ["dp"] sum : tensor<4xf32>
  %h = part.mul %a, %b {part.layer = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r, %h : tensor<4xf32>, tensor<4xf32>
}

// With the default (overlap=true) nothing waits: the first gradient's
// reduction stays right after it.
// RUN: partition-opt %s --part-grad-buckets="bytes=4" | FileCheck %s --check-prefix=OVERLAP
// OVERLAP-LABEL: func.func @after_backward
// OVERLAP: %[[G1:.*]] = part.mul %arg0, %arg0
// OVERLAP-NEXT: part.all_reduce %[[G1]] on @mesh axes ["dp"]
