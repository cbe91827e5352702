// RUN: partition-opt %s --part-grad-buckets="bytes=64" | FileCheck %s

// bytes=64: g1, g2, g3 (16 + 16 + 32 bytes) form one bucket, placed right
// after g3 and before the later backward ops; the update of g1 that used its
// reduction moves below the bucket. g4 (128 bytes) is a bucket of its own,
// moved up to right after g4. g5 and g6 form the second bucket.
// CHECK-LABEL: func.func @buckets
// CHECK: %[[G1:.*]] = part.mul %arg0, %arg0
// CHECK-NEXT: %[[G2:.*]] = part.mul %arg1, %arg1
// CHECK-NEXT: %[[G3:.*]] = part.mul %arg2, %arg2
// CHECK-NEXT: %[[F1:.*]] = part.reshape %[[G1]] : tensor<2x2xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = part.concat %[[F1]], %[[G2]], %[[G3]] dim 0 : (tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[R:.*]] = part.all_reduce %[[C]] on @mesh axes ["dp"] sum {part.origin = "bucket of 3 all_reduces (part-grad-buckets): g1; g2; g3"} : tensor<16xf32>
// CHECK-NEXT: %[[S1:.*]] = part.slice %[[R]] offsets [0] : tensor<16xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R1:.*]] = part.reshape %[[S1]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[R2:.*]] = part.slice %[[R]] offsets [4] : tensor<16xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R3:.*]] = part.slice %[[R]] offsets [8] : tensor<16xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[U1:.*]] = part.sub %arg0, %[[R1]]
// CHECK-NEXT: %[[T1:.*]] = part.add %arg2, %arg2
// CHECK-NEXT: %[[G4:.*]] = part.mul %arg3, %arg3
// CHECK-NEXT: %[[R4:.*]] = part.all_reduce %[[G4]] on @mesh axes ["dp"] sum {part.origin = "g4"} : tensor<32xf32>
// CHECK-NEXT: %[[T2:.*]] = part.add %arg3, %arg3
// CHECK-NEXT: %[[G5:.*]] = part.add %arg1, %arg1
// CHECK-NEXT: %[[G6:.*]] = part.add %arg2, %[[T1]]
// CHECK-NEXT: %[[C2:.*]] = part.concat %[[G5]], %[[G6]] dim 0 : (tensor<4xf32>, tensor<8xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[B2:.*]] = part.all_reduce %[[C2]] on @mesh axes ["dp"] sum {part.origin = "bucket of 2 all_reduces (part-grad-buckets): g5; g6"} : tensor<12xf32>
// CHECK-NEXT: %[[R5:.*]] = part.slice %[[B2]] offsets [0] : tensor<12xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R6:.*]] = part.slice %[[B2]] offsets [4] : tensor<12xf32> -> tensor<8xf32>
// CHECK-NEXT: %[[T3:.*]] = part.mul %[[T2]], %[[T2]]
// CHECK-NEXT: return %[[U1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[T3]]
part.mesh @mesh = <["dp"=2]>
func.func @buckets(%a: tensor<2x2xf32>, %b: tensor<4xf32>, %c: tensor<8xf32>, %d: tensor<32xf32>) -> (tensor<2x2xf32>, tensor<4xf32>, tensor<8xf32>, tensor<32xf32>, tensor<4xf32>, tensor<8xf32>, tensor<32xf32>) attributes {part.spmd = @mesh} {
  %g1 = part.mul %a, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r1 = part.all_reduce %g1 on @mesh axes ["dp"] sum {part.origin = "g1"} : tensor<2x2xf32>
  %u1 = part.sub %a, %r1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %g2 = part.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g3 = part.mul %c, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t1 = part.add %c, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g4 = part.mul %d, %d : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %t2 = part.add %d, %d : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %g5 = part.add %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g6 = part.add %c, %t1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t3 = part.mul %t2, %t2 : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %r2 = part.all_reduce %g2 on @mesh axes ["dp"] sum {part.origin = "g2"} : tensor<4xf32>
  %r3 = part.all_reduce %g3 on @mesh axes ["dp"] sum {part.origin = "g3"} : tensor<8xf32>
  %r4 = part.all_reduce %g4 on @mesh axes ["dp"] sum {part.origin = "g4"} : tensor<32xf32>
  %r5 = part.all_reduce %g5 on @mesh axes ["dp"] sum {part.origin = "g5"} : tensor<4xf32>
  %r6 = part.all_reduce %g6 on @mesh axes ["dp"] sum {part.origin = "g6"} : tensor<8xf32>
  return %u1, %r2, %r3, %r4, %r5, %r6, %t3 : tensor<2x2xf32>, tensor<4xf32>, tensor<8xf32>, tensor<32xf32>, tensor<4xf32>, tensor<8xf32>, tensor<32xf32>
}

// An all_reduce whose operand depends on another's result closes the bucket;
// other kinds (max) and other axes are left alone.
// CHECK-LABEL: func.func @dependent
// CHECK: %[[R1:.*]] = part.all_reduce %{{.*}} on @mesh axes ["dp"] sum {part.origin = "h1"} : tensor<4xf32>
// CHECK-NEXT: %[[H2:.*]] = part.mul %[[R1]], %[[R1]]
// CHECK-NEXT: part.all_reduce %[[H2]] on @mesh axes ["dp"] sum {part.origin = "h2"} : tensor<4xf32>
// CHECK-NOT: part.concat
// CHECK: part.all_reduce %{{.*}} on @mesh axes ["dp"] max
func.func @dependent(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {part.spmd = @mesh} {
  %h1 = part.mul %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r1 = part.all_reduce %h1 on @mesh axes ["dp"] sum {part.origin = "h1"} : tensor<4xf32>
  %h2 = part.mul %r1, %r1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r2 = part.all_reduce %h2 on @mesh axes ["dp"] sum {part.origin = "h2"} : tensor<4xf32>
  %m = part.all_reduce %r2 on @mesh axes ["dp"] max : tensor<4xf32>
  return %r1, %m : tensor<4xf32>, tensor<4xf32>
}

// Reduce-scatters (ZeRO-1/2/3's gradients) are bucketed apart from
// all-reduces: each operand is cut into its two devices' blocks ([2, n/2]),
// the blocks laid side by side, so that device i's share of the flat
// reduce_scatter is its block of every operand, in order. One whose blocks
// are not contiguous (scattered over dimension 1 of a 2x4) and one over
// another group size are not joined (a bucket of one moves up to right
// after its operand: an argument's, to the top).
// CHECK-LABEL: func.func @scatters
// CHECK: part.reduce_scatter %arg3 on @mesh2 axes ["dp", "tp"] dim 0 sum {part.origin = "s4"}
// CHECK-NEXT: %[[G1:.*]] = part.mul %arg0, %arg0
// CHECK-NEXT: %[[G2:.*]] = part.mul %arg1, %arg1
// CHECK-NEXT: %[[B1:.*]] = part.reshape %[[G1]] : tensor<4x2xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[B2:.*]] = part.reshape %[[G2]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[C:.*]] = part.concat %[[B1]], %[[B2]] dim 1 : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
// CHECK-NEXT: %[[F:.*]] = part.reshape %[[C]] : tensor<2x6xf32> -> tensor<12xf32>
// CHECK-NEXT: %[[R:.*]] = part.reduce_scatter %[[F]] on @mesh2 axes ["dp"] dim 0 sum {part.origin = "bucket of 2 reduce_scatters (part-grad-buckets): s1; s2"} : tensor<12xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[S1:.*]] = part.slice %[[R]] offsets [0] : tensor<6xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[R1:.*]] = part.reshape %[[S1]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[R2:.*]] = part.slice %[[R]] offsets [4] : tensor<6xf32> -> tensor<2xf32>
// CHECK-NEXT: part.reduce_scatter %arg2 on @mesh2 axes ["dp"] dim 1 sum {part.origin = "s3"}
// CHECK-NEXT: return %[[R1]], %[[R2]]
part.mesh @mesh2 = <["dp"=2, "tp"=2]>
func.func @scatters(%a: tensor<4x2xf32>, %b: tensor<4xf32>, %c: tensor<2x4xf32>, %d: tensor<8xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>) attributes {part.spmd = @mesh2} {
  %g1 = part.mul %a, %a : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %g2 = part.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s1 = part.reduce_scatter %g1 on @mesh2 axes ["dp"] dim 0 sum {part.origin = "s1"} : tensor<4x2xf32> -> tensor<2x2xf32>
  %s2 = part.reduce_scatter %g2 on @mesh2 axes ["dp"] dim 0 sum {part.origin = "s2"} : tensor<4xf32> -> tensor<2xf32>
  %s3 = part.reduce_scatter %c on @mesh2 axes ["dp"] dim 1 sum {part.origin = "s3"} : tensor<2x4xf32> -> tensor<2x2xf32>
  %s4 = part.reduce_scatter %d on @mesh2 axes ["dp", "tp"] dim 0 sum {part.origin = "s4"} : tensor<8xf32> -> tensor<2xf32>
  return %s1, %s2, %s3, %s4 : tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>
}
