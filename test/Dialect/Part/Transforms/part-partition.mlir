// RUN: partition-opt %s --part-propagate-shardings --part-partition -split-input-file | FileCheck %s

// Megatron MLP: one all_reduce over "tp" completes the row-parallel matmul's
// pending sum where the bias add needs it; nothing else moves.
part.mesh @mesh = <["dp"=2, "tp"=4]>
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32> {{.*}}, %[[W1:.*]]: tensor<16x8xf32> {{.*}}, %[[B1:.*]]: tensor<8xf32> {{.*}}, %[[W2:.*]]: tensor<8x16xf32> {{.*}}, %[[B2:.*]]: tensor<16xf32>)
// CHECK-SAME: -> (tensor<4x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>})
// CHECK-SAME: attributes {part.spmd = @mesh}
func.func @mlp(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
               %w1: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
               %b1: tensor<32xf32>,
               %w2: tensor<32x16xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
               %b2: tensor<16xf32>) -> (tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) {
  // CHECK-NEXT: %[[H:.*]] = part.matmul %[[X]], %[[W1]] : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK-NEXT: %[[A:.*]] = part.add %[[H]], %[[B1]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = part.add %0, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  // CHECK-NEXT: %[[R:.*]] = part.relu %[[A]] : tensor<4x8xf32>
  %2 = part.relu %1 : tensor<8x32xf32>
  // CHECK-NEXT: %[[P:.*]] = part.matmul %[[R]], %[[W2]] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %3 = part.matmul %2, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // Its origin names the op that needed it and the annotations behind it.
  // CHECK-NEXT: %[[S:.*]] = part.all_reduce %[[P]] on @mesh axes ["tp"] sum {part.origin = "operand 0 of part.add at {{.*}}part-partition.mlir:{{[0-9]+}}, sharded by annotation on argument 0 of @mlp; annotation on argument 1 of @mlp; annotation on argument 3 of @mlp"} : tensor<4x16xf32>
  // CHECK-NEXT: %[[Y:.*]] = part.add %[[S]], %[[B2]]
  %4 = part.add %3, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  // CHECK-NEXT: return %[[Y]] : tensor<4x16xf32>
  return %4 : tensor<8x16xf32>
}

// -----

// Reshards. Propagation puts the softmax on the constraint's split (rows over
// "x"), so its operand, split by columns, moves "x" from dimension 1 to 0
// with one all_to_all. The argument the user pinned as replicated is sliced
// to meet the split add; the unannotated result is gathered back.
part.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @reshards
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xf32> {{.*}}, %[[B:.*]]: tensor<4x8xf32> {{.*}}) -> tensor<4x8xf32>
func.func @reshards(%a: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>},
                    %b: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>}) -> tensor<4x8xf32> {
  // CHECK: %[[T:.*]] = part.all_to_all %[[A]] on @mesh axes ["x"] split_dim 0 concat_dim 1 {part.origin = "operand 0 of part.softmax{{[^"]*}}"} : tensor<4x4xf32> -> tensor<2x8xf32>
  // CHECK: %[[SM:.*]] = part.softmax %[[T]] dim 1 : tensor<2x8xf32>
  %0 = part.softmax %a dim 1 : tensor<4x8xf32>
  %1 = part.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x8xf32>
  // CHECK: %[[BS:.*]] = part.all_slice %[[B]] on @mesh axes ["x"] dim 0 {part.origin = "operand 1 of part.add{{[^"]*}}"} : tensor<4x8xf32> -> tensor<2x8xf32>
  // CHECK: %[[S:.*]] = part.add %[[SM]], %[[BS]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = part.add %1, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[W:.*]] = part.all_gather %[[S]] on @mesh axes ["x"] dim 0 {part.origin = "result 0 of func.return{{[^"]*}}"} : tensor<2x8xf32> -> tensor<4x8xf32>
  // CHECK: return %[[W]]
  return %2 : tensor<4x8xf32>
}

// -----

// A pending sum whose consumer wants it split: one reduce_scatter (each
// device receives only its block of the sum) instead of an all-reduce.
part.mesh @mesh = <["tp"=4]>
// CHECK-LABEL: func.func @sequence_parallel
func.func @sequence_parallel(%h: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                             %w: tensor<16x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}) {
  // CHECK: %[[P:.*]] = part.matmul %{{.*}}, %{{.*}} : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // CHECK: %[[R:.*]] = part.reduce_scatter %[[P]] on @mesh axes ["tp"] dim 0 sum {part.origin = "operand 0 of part.softmax{{[^"]*}}"} : tensor<8x8xf32> -> tensor<2x8xf32>
  // CHECK-NOT: part.all_reduce
  %0 = part.matmul %h, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = part.softmax %0 dim 1 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

// A mean over a split dimension becomes each device's share of the sum; the
// pending sum is completed where the result must be whole.
part.mesh @mesh = <["dp"=4]>
// CHECK-LABEL: func.func @mean
func.func @mean(%x: tensor<8x3xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<3xf32> {
  // CHECK: %[[M:.*]] = part.reduce_mean %{{.*}} dims [0] : tensor<2x3xf32> -> tensor<3xf32>
  // CHECK: %[[Q:.*]] = part.constant dense<2.500000e-01> : tensor<f32>
  // CHECK: %[[P:.*]] = part.mul %[[M]], %[[Q]]
  // CHECK: part.all_reduce %[[P]] on @mesh axes ["dp"] sum {part.origin = "result 0 of func.return{{[^"]*}}"} : tensor<3xf32>
  %0 = part.reduce_mean %x dims [0] : tensor<8x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A function without annotations is not partitioned.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: part.spmd
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A lookup in a table split by rows (a vocabulary-parallel embedding): each
// device looks up the ids in its rows, zeros the others, and the result is a
// pending sum over the table's axis; the table is never gathered.
part.mesh @mesh = <["tp"=4]>
// CHECK-LABEL: func.func @split_lookup
// CHECK-SAME: (%[[T:.*]]: tensor<25x8xf32> {{.*}}, %[[I:.*]]: tensor<6xi64>)
func.func @split_lookup(%table: tensor<100x8xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
                        %ids: tensor<6xi64>) -> tensor<6x8xf32> {
  // CHECK: %[[AI:.*]] = part.axis_index on @mesh axes ["tp"]
  // CHECK: %[[AC:.*]] = part.cast %[[AI]] : tensor<i32> -> tensor<i64>
  // CHECK: %[[R:.*]] = part.constant dense<25> : tensor<i64>
  // CHECK: %[[OFF:.*]] = part.mul %[[AC]], %[[R]]
  // CHECK: %[[L:.*]] = part.sub %[[I]], %[[OFF]]
  // CHECK: %[[G:.*]] = part.gather %[[T]], %{{.*}} axis 0 : (tensor<25x8xf32>, tensor<6xi64>) -> tensor<6x8xf32>
  // CHECK: %[[M:.*]] = part.reshape %{{.*}} : tensor<6xf32> -> tensor<6x1xf32>
  // CHECK: %[[Z:.*]] = part.mul %[[G]], %[[M]]
  // CHECK: part.all_reduce %[[Z]] on @mesh axes ["tp"] sum
  // CHECK-NOT: part.all_gather
  %0 = part.gather %table, %ids axis 0 : (tensor<100x8xf32>, tensor<6xi64>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// Cross-entropy over class-split logits (a vocabulary-parallel loss): the
// log-sum-exp from each device's maximum and sum, the label's logit from the
// device holding it; the logits are never gathered.
part.mesh @mesh = <["tp"=2]>
// CHECK-LABEL: func.func @split_loss
func.func @split_loss(%logits: tensor<4x10xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                      %labels: tensor<4xi32>) -> tensor<f32> {
  // CHECK-NOT: part.all_gather
  // CHECK: %[[MAX:.*]] = part.reduce_max %{{.*}} dims [1] keep_dims : tensor<4x5xf32> -> tensor<4x1xf32>
  // CHECK: part.all_reduce %[[MAX]] on @mesh axes ["tp"] max
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["tp"] sum
  // CHECK: part.axis_index on @mesh axes ["tp"]
  // CHECK: part.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>
  // CHECK: part.all_reduce %{{.*}} on @mesh axes ["tp"] sum
  // CHECK: part.reduce_mean %{{.*}} dims [0] : tensor<4xf32> -> tensor<f32>
  // CHECK-NOT: part.all_
  %0 = part.softmax_cross_entropy %logits, %labels mean : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A softmax along a split dimension that the result keeps (the backward of
// a vocabulary-parallel loss): each device normalises its block with the
// maximum and the sum of exponentials of the whole row, two all-reduces of
// one value per row; the rows are never gathered.
part.mesh @mesh = <["tp"=4]>
// CHECK-LABEL: func.func @split_softmax
func.func @split_softmax(%x: tensor<6x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<6x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}) {
  // CHECK: %[[MX:.*]] = part.reduce_max %{{.*}} dims [1] keep_dims : tensor<6x8xf32> -> tensor<6x1xf32>
  // CHECK: %[[M:.*]] = part.all_reduce %[[MX]] on @mesh axes ["tp"] max {part.origin = "softmax over a split dimension{{[^"]*}}"} : tensor<6x1xf32>
  // CHECK: %[[D:.*]] = part.sub %{{.*}}, %[[M]]
  // CHECK: %[[E:.*]] = part.exp %[[D]]
  // CHECK: %[[SE:.*]] = part.reduce_sum %[[E]] dims [1] keep_dims : tensor<6x8xf32> -> tensor<6x1xf32>
  // CHECK: %[[S:.*]] = part.all_reduce %[[SE]] on @mesh axes ["tp"] sum
  // CHECK: %[[Y:.*]] = part.div %[[E]], %[[S]]
  // CHECK-NOT: part.all_gather
  // CHECK: return %[[Y]]
  %0 = part.softmax %x dim 1 : tensor<6x32xf32>
  return %0 : tensor<6x32xf32>
}

// -----

// A pending sum with two uses is completed once, where it stands: keeping
// it pending through the multiplication would reduce the product as well.
// With one use, it stays pending through the multiplication by a whole value
// and is reduced once, after it.
part.mesh @mesh = <["tp"=2]>
// CHECK-LABEL: func.func @pending_uses
func.func @pending_uses(%x: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                        %w: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
                        %g: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>) {
  // CHECK: %[[P:.*]] = part.matmul
  // CHECK: %[[R:.*]] = part.all_reduce %[[P]] on @mesh axes ["tp"] sum
  // CHECK: part.mul %[[R]], %{{.*}}
  // CHECK: part.reduce_sum %[[R]]
  // CHECK: %[[Q:.*]] = part.matmul
  // CHECK: %[[QG:.*]] = part.mul %[[Q]], %{{.*}}
  // CHECK: part.all_reduce %[[QG]] on @mesh axes ["tp"] sum
  // CHECK-NOT: part.all_reduce
  // CHECK: return
  %0 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = part.mul %0, %g : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %2 = part.reduce_sum %0 dims [0] : tensor<4x4xf32> -> tensor<4xf32>
  %3 = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %4 = part.mul %3, %g : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %1, %2, %4 : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>
}

// -----

// A weight gradient's reshapes that merge [B, S] into rows: the activation
// split over "dp" on its sequence (as by a position table split on its
// dimension 0) is strided in the rows, so it is moved to a batch split
// before the reshape (an all_to_all) instead of being taken for a split of
// the rows: every device then contracts the same rows of both operands.
part.mesh @mesh = <["dp"=2]>
// CHECK-LABEL: func.func @merge_minor_split
// CHECK-SAME: (%[[A:.*]]: tensor<4x16x64xf32> {{.*}}, %[[B:.*]]: tensor<8x8x32xf32>
func.func @merge_minor_split(%a: tensor<8x16x64xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}, {}]>},
                             %b: tensor<8x16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"dp"}, {}]>})
    -> (tensor<64x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {}]>}) {
  // CHECK: %[[RA:.*]] = part.reshape %[[A]] : tensor<4x16x64xf32> -> tensor<64x64xf32>
  // CHECK: %[[T:.*]] = part.all_to_all %[[B]] on @mesh axes ["dp"] split_dim 0 concat_dim 1 {{.*}} : tensor<8x8x32xf32> -> tensor<4x16x32xf32>
  // CHECK: %[[RB:.*]] = part.reshape %[[T]] : tensor<4x16x32xf32> -> tensor<64x32xf32>
  // CHECK: %[[G:.*]] = part.matmul %[[RA]], %[[RB]] transpose_a
  // CHECK: part.all_reduce %[[G]] on @mesh axes ["dp"] sum
  %0 = part.reshape %a : tensor<8x16x64xf32> -> tensor<128x64xf32>
  %1 = part.reshape %b {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>} : tensor<8x16x32xf32> -> tensor<128x32xf32>
  %2 = part.matmul %0, %1 transpose_a : (tensor<128x64xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  return %2 : tensor<64x32xf32>
}
