// Uneven splits: part-data-parallel and part-tensor-parallel pad a
// dimension their axis does not divide (with every dimension linked to it),
// mask what would read across the padding, and record the unpadded shape.
// RUN: partition-opt %s --split-input-file --part-define-mesh="shape=dp:4" --part-data-parallel | FileCheck %s --check-prefix=DP
// RUN: partition-opt %s --split-input-file --part-define-mesh="shape=tp:4" --part-tensor-parallel --verify-diagnostics | FileCheck %s --check-prefix=TP

// A batch of 6 on dp:4 is padded to 8; the mean over it masks the padded
// rows to zero and is rescaled by 8 / 6.
// DP-LABEL: func.func @batch
// DP-SAME: %arg0: tensor<8x8xf32> {part.logical_shape = array<i64: 6, 8>, part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>}
// DP: %[[Y:.*]] = part.matmul %arg0, %arg1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// DP: %[[ROWS:.*]] = part.constant dense<{{\[}}[1], [1], [1], [1], [1], [1], [0], [0]]> : tensor<8x1xi32>
// DP: %[[ZERO:.*]] = part.constant dense<0.000000e+00> : tensor<f32>
// DP: %[[M:.*]] = part.select %[[ROWS]], %[[Y]], %[[ZERO]]
// DP: %[[MEAN:.*]] = part.reduce_mean %[[M]] dims [0, 1] : tensor<8x8xf32> -> tensor<f32>
// DP: %[[SCALE:.*]] = part.constant dense<1.33333337> : tensor<f32>
// DP: %[[R:.*]] = part.mul %[[MEAN]], %[[SCALE]]
// DP: return %[[R]]
// TP-LABEL: func.func @batch
// TP-SAME: tensor<6x8xf32>
func.func @batch(%x: tensor<6x8xf32> {part.role = #part.role<input>},
                 %w: tensor<8x8xf32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.matmul %x, %w : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %1 = part.reduce_mean %0 dims [0, 1] : tensor<6x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// An MLP width of 6 on tp:4 is padded to 8 in both weights; the row-parallel
// matmul's contraction masks the padded columns of its activation.
// TP-LABEL: func.func @width
// TP-SAME: %arg1: tensor<8x8xf32> {part.logical_shape = array<i64: 8, 6>, part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}]>}
// TP-SAME: %arg2: tensor<8x8xf32> {part.logical_shape = array<i64: 6, 8>, part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}
// TP: %[[H:.*]] = part.relu %{{.*}} : tensor<4x8xf32>
// TP: %[[COLS:.*]] = part.constant dense<{{\[}}[1, 1, 1, 1, 1, 1, 0, 0]]> : tensor<1x8xi32>
// TP: %[[ZERO:.*]] = part.constant dense<0.000000e+00> : tensor<f32>
// TP: %[[M:.*]] = part.select %[[COLS]], %[[H]], %[[ZERO]]
// TP: part.matmul %[[M]], %arg2
func.func @width(%x: tensor<4x8xf32>, %w1: tensor<8x6xf32> {part.role = #part.role<parameter>},
                 %w2: tensor<6x8xf32> {part.role = #part.role<parameter>}) -> tensor<4x8xf32> {
  %0 = part.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = part.relu %0 : tensor<4x6xf32>
  %2 = part.matmul %1, %w2 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A vocabulary of 10 on tp:4 is padded to 12 (as Megatron pads one): the
// tied table, its lookup and the logits. The loss masks the padded logits
// to the lowest float, so they take no share of the softmax.
// TP-LABEL: func.func @vocab
// TP-SAME: %arg2: tensor<12x8xf32> {part.logical_shape = array<i64: 10, 8>, part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"tp"}, {}]>}
// TP: part.gather %arg2, %arg0 axis 0 : (tensor<12x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
// TP: %[[LOGITS:.*]] = part.matmul %{{.*}}, %arg2 transpose_b : (tensor<4x8xf32>, tensor<12x8xf32>) -> tensor<4x12xf32>
// TP: %[[CLASSES:.*]] = part.constant dense<{{\[}}[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]> : tensor<1x12xi32>
// TP: %[[LOWEST:.*]] = part.constant dense<-3.40282347E+38> : tensor<f32>
// TP: %[[M:.*]] = part.select %[[CLASSES]], %[[LOGITS]], %[[LOWEST]]
// TP: part.softmax_cross_entropy %[[M]], %arg1 mean
// The batch of 4 divides dp:4: nothing is padded.
// DP-LABEL: func.func @vocab
// DP-NOT: logical_shape
// DP-NOT: part.select
func.func @vocab(%ids: tensor<4xi32> {part.role = #part.role<input>},
                 %labels: tensor<4xi32> {part.role = #part.role<label>},
                 %table: tensor<10x8xf32> {part.role = #part.role<parameter>}) -> tensor<f32> {
  %0 = part.gather %table, %ids axis 0 : (tensor<10x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  %1 = part.matmul %0, %table transpose_b : (tensor<4x8xf32>, tensor<10x8xf32>) -> tensor<4x10xf32>
  %2 = part.softmax_cross_entropy %1, %labels mean : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// A batch of 6 on dp:4 through a cross-entropy mean: the per-position losses
// of the padded rows are masked out and the sum divided by the 6 real ones.
// DP-LABEL: func.func @loss_batch
// DP-SAME: tensor<8x10xf32> {part.logical_shape = array<i64: 6, 10>
// DP: %[[L:.*]] = part.softmax_cross_entropy %arg0, %arg1 none : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<8xf32>
// DP: %[[ROWS:.*]] = part.constant dense<[1, 1, 1, 1, 1, 1, 0, 0]> : tensor<8xi32>
// DP: %[[M:.*]] = part.select %[[ROWS]], %[[L]]
// DP: %[[SUM:.*]] = part.reduce_sum %[[M]] dims [0] : tensor<8xf32> -> tensor<f32>
// DP: %[[SIXTH:.*]] = part.constant dense<0.166666672> : tensor<f32>
// DP: %[[MEAN:.*]] = part.mul %[[SUM]], %[[SIXTH]]
// DP: return %[[MEAN]]
// DP-NOT: part.softmax_cross_entropy {{.*}} mean
func.func @loss_batch(%logits: tensor<6x10xf32> {part.role = #part.role<input>},
                      %labels: tensor<6xi32> {part.role = #part.role<label>}) -> tensor<f32> {
  %0 = part.softmax_cross_entropy %logits, %labels mean : (tensor<6x10xf32>, tensor<6xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A table whose rows something normalises over cannot be padded: it stays
// whole, and says why.
// TP-LABEL: func.func @stays_whole
// TP-SAME: %arg1: tensor<10x8xf32> {part.role = #part.role<parameter>},
func.func @stays_whole(%ids: tensor<4xi32> {part.role = #part.role<input>},
                       %table: tensor<10x8xf32> {part.role = #part.role<parameter>},
                       %scale: tensor<10xf32>) -> tensor<4x10xf32> {
  // expected-remark @+1 {{the table stays whole: tp (size 4) does not divide its 10 rows, and they cannot be padded because part.layer_norm at}}
  %0 = part.gather %table, %ids axis 0 : (tensor<10x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  %1 = part.matmul %0, %table transpose_b : (tensor<4x8xf32>, tensor<10x8xf32>) -> tensor<4x10xf32>
  %2 = part.layer_norm %1, %scale : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %2 : tensor<4x10xf32>
}
