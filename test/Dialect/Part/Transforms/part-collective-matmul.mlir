// RUN: partition-opt %s --split-input-file --part-collective-matmul="chunks=2" | FileCheck %s
// RUN: not partition-opt %s --split-input-file --part-collective-matmul="chunks=1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: part-collective-matmul: chunks must be at least 2, got 1

// Row-parallel: the product's rows in two chunks (dimension 1: dimension 0
// has one row), each all-reduced while the next multiplies, joined.
// CHECK-LABEL: func.func @row_parallel
// CHECK: %[[X0:.*]] = part.slice %arg0 offsets [0, 0, 0] {part.layer = 3 : i64} : tensor<1x8x16xf32> -> tensor<1x4x16xf32>
// CHECK-NEXT: %[[Y0:.*]] = part.matmul %[[X0]], %arg1 {part.layer = 3 : i64} : (tensor<1x4x16xf32>, tensor<16x32xf32>) -> tensor<1x4x32xf32>
// CHECK-NEXT: %[[S0:.*]] = part.all_reduce %[[Y0]] on @mesh axes ["tp"] sum {part.origin = "o"} : tensor<1x4x32xf32>
// CHECK-NEXT: %[[X1:.*]] = part.slice %arg0 offsets [0, 4, 0]
// CHECK-NEXT: %[[Y1:.*]] = part.matmul %[[X1]], %arg1
// CHECK-NEXT: %[[S1:.*]] = part.all_reduce %[[Y1]]
// CHECK-NEXT: %[[J:.*]] = part.concat %[[S0]], %[[S1]] dim 1 {part.layer = 3 : i64} : (tensor<1x4x32xf32>, tensor<1x4x32xf32>) -> tensor<1x8x32xf32>
// CHECK-NEXT: return %[[J]]
part.mesh @mesh = <["tp"=2]>
func.func @row_parallel(%x: tensor<1x8x16xf32>, %w: tensor<16x32xf32>) -> tensor<1x8x32xf32> attributes {part.spmd = @mesh} {
  %y = part.matmul %x, %w {part.layer = 3 : i64} : (tensor<1x8x16xf32>, tensor<16x32xf32>) -> tensor<1x8x32xf32>
  %s = part.all_reduce %y on @mesh axes ["tp"] sum {part.origin = "o"} : tensor<1x8x32xf32>
  return %s : tensor<1x8x32xf32>
}

// -----
// Sequence parallelism: the reduce_scatter over the 8 rows of 2 devices
// takes, in chunk i, part i of each device's block (rows viewed [2, 2, 2]).
// CHECK-LABEL: func.func @scatter
// CHECK: %[[V:.*]] = part.reshape %arg0 : tensor<8x16xf32> -> tensor<2x2x2x16xf32>
// CHECK-NEXT: %[[C:.*]] = part.slice %[[V]] offsets [0, 0, 0, 0] : tensor<2x2x2x16xf32> -> tensor<2x1x2x16xf32>
// CHECK-NEXT: %[[X0:.*]] = part.reshape %[[C]] : tensor<2x1x2x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[Y0:.*]] = part.matmul %[[X0]], %arg1 : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
// CHECK-NEXT: %[[S0:.*]] = part.reduce_scatter %[[Y0]] on @mesh axes ["tp"] dim 0 sum : tensor<4x32xf32> -> tensor<2x32xf32>
// CHECK: part.slice %{{.*}} offsets [0, 1, 0, 0]
// CHECK: %[[S1:.*]] = part.reduce_scatter
// CHECK-NEXT: part.concat %[[S0]], %[[S1]] dim 0 : (tensor<2x32xf32>, tensor<2x32xf32>) -> tensor<4x32xf32>
part.mesh @mesh = <["tp"=2]>
func.func @scatter(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<4x32xf32> attributes {part.spmd = @mesh} {
  %y = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %s = part.reduce_scatter %y on @mesh axes ["tp"] dim 0 sum : tensor<8x32xf32> -> tensor<4x32xf32>
  return %s : tensor<4x32xf32>
}

// -----
// A gather read by two matmuls and by a weight gradient: chunk 1 is
// gathered before chunk 0's products; each product and the gathered value
// (for the weight gradient) are reassembled in row order.
// CHECK-LABEL: func.func @gather
// CHECK: %[[X0:.*]] = part.slice %[[E:.*]] offsets [0, 0] : tensor<4x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[G0:.*]] = part.all_gather %[[X0]] on @mesh axes ["tp"] dim 0 : tensor<2x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[X1:.*]] = part.slice %[[E]] offsets [2, 0]
// CHECK-NEXT: %[[G1:.*]] = part.all_gather %[[X1]]
// CHECK-NEXT: %[[Q0:.*]] = part.matmul %[[G0]], %arg1
// CHECK-NEXT: %[[K0:.*]] = part.matmul %[[G0]], %arg2
// CHECK-NEXT: %[[Q1:.*]] = part.matmul %[[G1]], %arg1
// CHECK-NEXT: %[[K1:.*]] = part.matmul %[[G1]], %arg2
// CHECK-NEXT: %[[QA:.*]] = part.reshape %[[Q0]] : tensor<4x32xf32> -> tensor<2x1x2x32xf32>
// CHECK-NEXT: %[[QB:.*]] = part.reshape %[[Q1]] : tensor<4x32xf32> -> tensor<2x1x2x32xf32>
// CHECK-NEXT: %[[QJ:.*]] = part.concat %[[QA]], %[[QB]] dim 1 : (tensor<2x1x2x32xf32>, tensor<2x1x2x32xf32>) -> tensor<2x2x2x32xf32>
// CHECK-NEXT: %[[Q:.*]] = part.reshape %[[QJ]] : tensor<2x2x2x32xf32> -> tensor<8x32xf32>
// CHECK: %[[K:.*]] = part.reshape %{{.*}} : tensor<2x2x2x32xf32> -> tensor<8x32xf32>
// CHECK: %[[G:.*]] = part.reshape %{{.*}} : tensor<2x2x2x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[DW:.*]] = part.matmul %[[G]], %arg3 transpose_a
// CHECK-NEXT: return %[[Q]], %[[K]], %[[DW]]
part.mesh @mesh = <["tp"=2]>
func.func @gather(%x: tensor<4x16xf32>, %wq: tensor<16x32xf32>, %wk: tensor<16x32xf32>, %dy: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>, tensor<16x32xf32>) attributes {part.spmd = @mesh} {
  %e = part.exp %x : tensor<4x16xf32>
  %g = part.all_gather %e on @mesh axes ["tp"] dim 0 : tensor<4x16xf32> -> tensor<8x16xf32>
  %q = part.matmul %g, %wq : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %k = part.matmul %g, %wk : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %dw = part.matmul %g, %dy transpose_a : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  return %q, %k, %dw : tensor<8x32xf32>, tensor<8x32xf32>, tensor<16x32xf32>
}

// -----
// Left alone: a sum over another axis, a weight gradient's sum (transposed
// lhs), rows the chunks do not divide, a gather of an argument (ZeRO-3's),
// and a matmul whose product another op reads too.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: part.slice
// CHECK-NOT: part.concat
// CHECK: return
part.mesh @mesh = <["dp"=2, "tp"=2]>
func.func @untouched(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %odd: tensor<3x16xf32>, %p: tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<16x32xf32>, tensor<3x32xf32>, tensor<16x16xf32>, tensor<8x32xf32>, tensor<8x32xf32>) attributes {part.spmd = @mesh} {
  %a = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %ra = part.all_reduce %a on @mesh axes ["dp"] sum : tensor<8x32xf32>
  %b = part.matmul %x, %a transpose_a : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %rb = part.all_reduce %b on @mesh axes ["tp"] sum : tensor<16x32xf32>
  %c = part.matmul %odd, %w : (tensor<3x16xf32>, tensor<16x32xf32>) -> tensor<3x32xf32>
  %rc = part.all_reduce %c on @mesh axes ["tp"] sum : tensor<3x32xf32>
  %g = part.all_gather %p on @mesh axes ["tp"] dim 0 : tensor<8x16xf32> -> tensor<16x16xf32>
  %d = part.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %rd = part.all_reduce %d on @mesh axes ["tp"] sum : tensor<8x32xf32>
  %e = part.neg %d : tensor<8x32xf32>
  return %ra, %rb, %rc, %g, %rd, %e : tensor<8x32xf32>, tensor<16x32xf32>, tensor<3x32xf32>, tensor<16x16xf32>, tensor<8x32xf32>, tensor<8x32xf32>
}
