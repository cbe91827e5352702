// RUN: partition-opt %s --part-propagate-shardings -split-input-file | FileCheck %s

// A Megatron MLP: the batch split over "dp" and the two weights' splits over
// "tp" reach every value; the second matmul contracts over the "tp"-split
// dimension, so its result is a pending sum over "tp". The first bias takes
// the column split; the second stays as it was (its dimension is whole).
part.mesh @mesh = <["dp"=2, "tp"=4]>
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<32xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}]>, part.sharding_origin = "annotation on argument 0 of @mlp; annotation on argument 1 of @mlp"}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<16xf32>)
func.func @mlp(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>},
               %w1: tensor<16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
               %b1: tensor<32xf32>,
               %w2: tensor<32x16xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>},
               %b2: tensor<16xf32>) -> tensor<8x16xf32> {
  // CHECK: part.matmul {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>
  %0 = part.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  // CHECK: part.add {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>
  %1 = part.add %0, %b1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  // CHECK: part.relu {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>
  %2 = part.relu %1 : tensor<8x32xf32>
  // CHECK: part.matmul {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {}], unreduced={"tp"}>, part.sharding_origin = "annotation on argument 0 of @mlp; annotation on argument 1 of @mlp; annotation on argument 3 of @mlp"
  %3 = part.matmul %2, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK: part.add {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>
  %4 = part.add %3, %b2 : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}

// -----

// Backward: an annotation on the result reaches the arguments.
part.mesh @mesh = <["dp"=2]>
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%{{[a-z0-9]+}}: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.sharding_origin = "annotation on result 0 of @backward"}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>
func.func @backward(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>)
    -> (tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) {
  %0 = part.sub %a, %b : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK: part.exp {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>, part.sharding_origin = "annotation on result 0 of @backward"
  %1 = part.exp %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// User annotations in the middle of a function are seeds too. Here they
// disagree on %1: the constraint below it wants "tp" on dimension 0, the
// annotation above it on dimension 1; an axis shards one dimension, and at
// equal priority the major dimension is served first.
part.mesh @mesh = <["dp"=2, "tp"=2]>
// CHECK-LABEL: func.func @priority
func.func @priority(%x: tensor<8x4xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<8x4xf32> {
  // CHECK: part.neg {{.*}}{part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>} :
  %0 = part.neg %x {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>} : tensor<8x4xf32>
  // CHECK: part.exp {{.*}}part.sharding = #part.sharding<@mesh, [{"dp", "tp"}, {}]>, part.sharding_origin = "sharding_constraint at
  %1 = part.exp %0 : tensor<8x4xf32>
  // CHECK: part.sharding_constraint {{.*}} <@mesh, [{"dp", "tp"}, {}]>
  %2 = part.sharding_constraint %1 <@mesh, [{"dp", "tp"}, {}]> : tensor<8x4xf32>
  // CHECK: part.tanh {{.*}}part.sharding = #part.sharding<@mesh, [{"dp", "tp"}, {}]>
  %3 = part.tanh %2 : tensor<8x4xf32>
  return %3 : tensor<8x4xf32>
}

// -----

// Equal priorities that disagree: the first operand's split is kept; the
// axis cannot shard two dimensions at once.
part.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @conflict
func.func @conflict(%a: tensor<4x4xf32> {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>},
                    %b: tensor<4x4xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>}) -> tensor<4x4xf32> {
  // CHECK: part.add {{.*}}part.sharding = #part.sharding<@mesh, [{"x"}, {}]>
  %0 = part.add %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Need-replication factors take no axes: softmax's dimension and
// layer_norm's normalised dimension stay whole, the others follow.
part.mesh @mesh = <["dp"=2, "tp"=2]>
// CHECK-LABEL: func.func @replicated_factors
func.func @replicated_factors(%x: tensor<4x8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>},
                              %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // CHECK: part.softmax {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>
  %0 = part.softmax %x dim 1 : tensor<4x8xf32>
  // CHECK: part.rms_norm {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>
  %1 = part.rms_norm %0, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Through reshapes: splitting [B, H*D] into heads carries a split of H*D to
// H when the axes divide H; a split that would cut heads apart does not
// pass (it is left to the partitioner to reshard).
part.mesh @mesh = <["tp"=4, "x"=8]>
// CHECK-LABEL: func.func @heads
func.func @heads(%a: tensor<2x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>},
                 %b: tensor<2x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>})
    -> (tensor<2x4x16xf32>, tensor<2x4x16xf32>) {
  // CHECK: part.reshape {{.*}}part.sharding = #part.sharding<@mesh, [{}, {"tp"}, {}]>
  %0 = part.reshape %a : tensor<2x64xf32> -> tensor<2x4x16xf32>
  // CHECK: part.reshape
  // CHECK-NOT: part.sharding
  // CHECK-SAME: -> tensor<2x4x16xf32>
  %1 = part.reshape %b : tensor<2x64xf32> -> tensor<2x4x16xf32>
  return %0, %1 : tensor<2x4x16xf32>, tensor<2x4x16xf32>
}

// -----

// Through reshapes that merge dimensions: a split of the minor dimension
// alone is strided in the merged one ([8, 16] split over "dp" on its 16
// holds 8 runs of 8 of the 128 rows, not a block of 64) and does not pass;
// a minor split after a complete major one does ([2, 16] split over "dp"
// and "tp" is [32] split over both); a minor split after a partial major one
// does not (the major's split alone passes).
part.mesh @mesh = <["dp"=2, "tp"=2]>
// CHECK-LABEL: func.func @merge_minor
func.func @merge_minor(%x: tensor<8x16x32xf32> {part.sharding = #part.sharding<@mesh, [{}, {"dp"}, {}]>},
                       %y: tensor<2x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>},
                       %z: tensor<4x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>})
    -> (tensor<128x32xf32>, tensor<32xf32>, tensor<64xf32>) {
  // CHECK: part.reshape
  // CHECK-NOT: part.sharding
  // CHECK-SAME: -> tensor<128x32xf32>
  %0 = part.reshape %x : tensor<8x16x32xf32> -> tensor<128x32xf32>
  // CHECK: part.reshape {{.*}}part.sharding = #part.sharding<@mesh, [{"dp", "tp"}]>
  %1 = part.reshape %y : tensor<2x16xf32> -> tensor<32xf32>
  // CHECK: part.reshape {{.*}}part.sharding = #part.sharding<@mesh, [{"dp"}]>
  %2 = part.reshape %z : tensor<4x16xf32> -> tensor<64xf32>
  return %0, %1, %2 : tensor<128x32xf32>, tensor<32xf32>, tensor<64xf32>
}

// -----

// A function without annotations is left as it is.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: part.sharding
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = part.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Equal priorities that disagree on values of different sizes: the axis goes
// to the larger value's dimension (resharding the smaller one is cheaper),
// whatever the order of factors or operands.
part.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @cost
func.func @cost(%big: tensor<8x64xf32> {part.sharding = #part.sharding<@mesh, [{}, {"x"}]>},
                %small: tensor<8x1xf32> {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x64xf32> {
  // CHECK: part.add {{.*}}part.sharding = #part.sharding<@mesh, [{}, {"x"}]>
  %0 = part.add %small, %big : (tensor<8x1xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}
