// RUN: partition-opt %s --part-raise | FileCheck %s
// RUN: partition-opt %s --part-raise=report=true -verify-diagnostics -o /dev/null

//===----------------------------------------------------------------------===//
// Experts gathered at the router's top-k ids (Hugging Face's batched_mm)
//===----------------------------------------------------------------------===//

// Mixtral as the dynamo exporter writes it, imported: 2 sequences of 3
// tokens, 3 experts, top 2 renormalised; each token repeated over its 2
// slots, the gate/up weights [3, 10, 4] and the down weights [3, 4, 5]
// gathered at the ids (under the importer's shift of negative indices), one
// matrix-vector product per slot. Raised: the tokens dispatched to
// [3 experts, 2 sequences, capacity 3, 4], the SwiGLU on the buffers with
// the weights whole, one combine; the routing weights and the sum over the
// slots as they were.
// CHECK-LABEL: func.func @mixtral
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[ROUTER:.*]]: tensor<3x4xf32>, %[[W1:.*]]: tensor<3x10x4xf32>, %[[W2:.*]]: tensor<3x4x5xf32>)
// CHECK: %[[VALUES:.*]], %[[IDS:.*]] = part.top_k
// CHECK-NEXT: %[[ROUTE:.*]] = part.reshape %[[IDS]] : tensor<6x2xi64> -> tensor<2x3x2xi64>
// CHECK: %[[BUF:.*]] = part.expert_dispatch %[[X]], %[[ROUTE]] : (tensor<2x3x4xf32>, tensor<2x3x2xi64>) -> tensor<3x2x3x4xf32>
// CHECK-NEXT: %[[ROWS:.*]] = part.reshape %[[BUF]] : tensor<3x2x3x4xf32> -> tensor<3x6x4xf32>
// CHECK-NEXT: %[[GU:.*]] = part.batch_matmul %[[ROWS]], %[[W1]] transpose_b : (tensor<3x6x4xf32>, tensor<3x10x4xf32>) -> tensor<3x6x10xf32>
// CHECK-NEXT: %[[GU4:.*]] = part.reshape %[[GU]] : tensor<3x6x10xf32> -> tensor<3x2x3x10xf32>
// CHECK-NEXT: %[[GATE:.*]] = part.slice %[[GU4]] offsets [0, 0, 0, 0] : tensor<3x2x3x10xf32> -> tensor<3x2x3x5xf32>
// CHECK-NEXT: %[[ACT:.*]] = part.silu %[[GATE]] : tensor<3x2x3x5xf32>
// CHECK-NEXT: %[[UP:.*]] = part.slice %[[GU4]] offsets [0, 0, 0, 5] : tensor<3x2x3x10xf32> -> tensor<3x2x3x5xf32>
// CHECK-NEXT: %[[H:.*]] = part.mul %[[ACT]], %[[UP]] : (tensor<3x2x3x5xf32>, tensor<3x2x3x5xf32>) -> tensor<3x2x3x5xf32>
// CHECK-NEXT: %[[HROWS:.*]] = part.reshape %[[H]] : tensor<3x2x3x5xf32> -> tensor<3x6x5xf32>
// CHECK-NEXT: %[[D:.*]] = part.batch_matmul %[[HROWS]], %[[W2]] transpose_b : (tensor<3x6x5xf32>, tensor<3x4x5xf32>) -> tensor<3x6x4xf32>
// CHECK-NEXT: %[[D4:.*]] = part.reshape %[[D]] : tensor<3x6x4xf32> -> tensor<3x2x3x4xf32>
// CHECK-NEXT: %[[SLOTS:.*]] = part.expert_combine %[[D4]], %[[ROUTE]] : (tensor<3x2x3x4xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x4xf32>
// CHECK-NEXT: %[[Y3:.*]] = part.reshape %[[SLOTS]] : tensor<2x3x2x4xf32> -> tensor<12x4x1xf32>
// CHECK-NEXT: %[[Y:.*]] = part.reshape %[[Y3]] : tensor<12x4x1xf32> -> tensor<12x4xf32>
// CHECK: part.mul %[[Y]], %{{.*}} : (tensor<12x4xf32>, tensor<12x1xf32>) -> tensor<12x4xf32>
// CHECK: part.reduce_sum %{{.*}} dims [1] : tensor<6x2x4xf32> -> tensor<6x4xf32>
// CHECK-NOT: part.gather
// CHECK: return
func.func @mixtral(%x: tensor<2x3x4xf32>, %router: tensor<3x4xf32>, %w1: tensor<3x10x4xf32>, %w2: tensor<3x4x5xf32>) -> tensor<2x3x4xf32> {
  %h = part.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %logits = part.matmul %h, %router transpose_b : (tensor<6x4xf32>, tensor<3x4xf32>) -> tensor<6x3xf32>
  %probs = part.softmax %logits dim 1 : tensor<6x3xf32>
  %values, %indices = part.top_k %probs : (tensor<6x3xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
  %total = part.reduce_sum %values dims [1] keep_dims : tensor<6x2xf32> -> tensor<6x1xf32>
  %weights = part.div %values, %total : (tensor<6x2xf32>, tensor<6x1xf32>) -> tensor<6x2xf32>
  %h1 = part.reshape %h : tensor<6x4xf32> -> tensor<6x1x4xf32>
  %repeated = part.broadcast %h1 : tensor<6x1x4xf32> -> tensor<6x2x4xf32>
  %slots = part.reshape %repeated : tensor<6x2x4xf32> -> tensor<12x4xf32>
  %flat = part.reshape %indices : tensor<6x2xi64> -> tensor<12xi64>
  %zero = part.constant dense<0> : tensor<i64>
  %one = part.constant dense<1> : tensor<i64>
  %negated = part.sub %zero, %flat : (tensor<i64>, tensor<12xi64>) -> tensor<12xi64>
  %positive = part.max %negated, %zero : (tensor<12xi64>, tensor<i64>) -> tensor<12xi64>
  %isNegative = part.min %positive, %one : (tensor<12xi64>, tensor<i64>) -> tensor<12xi64>
  %experts = part.constant dense<3> : tensor<i64>
  %shift = part.mul %isNegative, %experts : (tensor<12xi64>, tensor<i64>) -> tensor<12xi64>
  %ids = part.add %flat, %shift : (tensor<12xi64>, tensor<12xi64>) -> tensor<12xi64>
  %gu_w = part.gather %w1, %ids axis 0 : (tensor<3x10x4xf32>, tensor<12xi64>) -> tensor<12x10x4xf32>
  %column = part.reshape %slots : tensor<12x4xf32> -> tensor<12x4x1xf32>
  %gu3 = part.batch_matmul %gu_w, %column : (tensor<12x10x4xf32>, tensor<12x4x1xf32>) -> tensor<12x10x1xf32>
  %gu = part.reshape %gu3 : tensor<12x10x1xf32> -> tensor<12x10xf32>
  %gate = part.slice %gu offsets [0, 0] : tensor<12x10xf32> -> tensor<12x5xf32>
  %up = part.slice %gu offsets [0, 5] : tensor<12x10xf32> -> tensor<12x5xf32>
  %sig = part.sigmoid %gate : tensor<12x5xf32>
  %act = part.mul %gate, %sig : (tensor<12x5xf32>, tensor<12x5xf32>) -> tensor<12x5xf32>
  %hidden = part.mul %act, %up : (tensor<12x5xf32>, tensor<12x5xf32>) -> tensor<12x5xf32>
  %down_w = part.gather %w2, %ids axis 0 : (tensor<3x4x5xf32>, tensor<12xi64>) -> tensor<12x4x5xf32>
  %hcol = part.reshape %hidden : tensor<12x5xf32> -> tensor<12x5x1xf32>
  %down3 = part.batch_matmul %down_w, %hcol : (tensor<12x4x5xf32>, tensor<12x5x1xf32>) -> tensor<12x4x1xf32>
  %down = part.reshape %down3 : tensor<12x4x1xf32> -> tensor<12x4xf32>
  %wflat = part.reshape %weights : tensor<6x2xf32> -> tensor<12x1xf32>
  %weighted = part.mul %down, %wflat : (tensor<12x4xf32>, tensor<12x1xf32>) -> tensor<12x4xf32>
  %per_token = part.reshape %weighted : tensor<12x4xf32> -> tensor<6x2x4xf32>
  %sum = part.reduce_sum %per_token dims [1] : tensor<6x2x4xf32> -> tensor<6x4xf32>
  %out = part.reshape %sum : tensor<6x4xf32> -> tensor<2x3x4xf32>
  return %out : tensor<2x3x4xf32>
}

// The other orientation (transformers' is_transposed experts: a row per
// slot times weights [E, in, out]), a top-k of the router's logits over
// [B, S, E] with the softmax after it (the groups are then the indices'
// first dimension), and a GELU: the weights are not transposed in the
// raised product, and the tokens [2, 3, 4] are dispatched.
// CHECK-LABEL: func.func @row_times_weights
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %{{.*}}: tensor<4x3xf32>, %[[W:.*]]: tensor<3x4x6xf32>)
// CHECK: %{{.*}}, %[[IDS:.*]] = part.top_k %{{.*}} : (tensor<2x3x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
// CHECK: %[[BUF:.*]] = part.expert_dispatch %[[X]], %[[IDS]] : (tensor<2x3x4xf32>, tensor<2x3x2xi64>) -> tensor<3x2x3x4xf32>
// CHECK-NEXT: %[[ROWS:.*]] = part.reshape %[[BUF]] : tensor<3x2x3x4xf32> -> tensor<3x6x4xf32>
// CHECK-NEXT: %[[P:.*]] = part.batch_matmul %[[ROWS]], %[[W]] : (tensor<3x6x4xf32>, tensor<3x4x6xf32>) -> tensor<3x6x6xf32>
// CHECK-NEXT: %[[P4:.*]] = part.reshape %[[P]] : tensor<3x6x6xf32> -> tensor<3x2x3x6xf32>
// CHECK-NEXT: %[[C:.*]] = part.expert_combine %[[P4]], %[[IDS]] : (tensor<3x2x3x6xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x6xf32>
// CHECK-NEXT: %[[Y:.*]] = part.reshape %[[C]] : tensor<2x3x2x6xf32> -> tensor<12x1x6xf32>
// CHECK-NOT: part.gather
// CHECK: return
func.func @row_times_weights(%x: tensor<2x3x4xf32>, %router: tensor<4x3xf32>, %w: tensor<3x4x6xf32>) -> tensor<12x1x6xf32> {
  %logits = part.matmul %x, %router : (tensor<2x3x4xf32>, tensor<4x3xf32>) -> tensor<2x3x3xf32>
  %top, %indices = part.top_k %logits : (tensor<2x3x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
  %x1 = part.reshape %x : tensor<2x3x4xf32> -> tensor<6x1x4xf32>
  %repeated = part.broadcast %x1 : tensor<6x1x4xf32> -> tensor<6x2x4xf32>
  %rows = part.reshape %repeated : tensor<6x2x4xf32> -> tensor<12x1x4xf32>
  %ids = part.reshape %indices : tensor<2x3x2xi64> -> tensor<12xi64>
  %wg = part.gather %w, %ids axis 0 : (tensor<3x4x6xf32>, tensor<12xi64>) -> tensor<12x4x6xf32>
  %y = part.batch_matmul %rows, %wg : (tensor<12x1x4xf32>, tensor<12x4x6xf32>) -> tensor<12x1x6xf32>
  return %y : tensor<12x1x6xf32>
}

// An activation that does not keep zero rows zero (exp) between the two
// products: each product is raised with a dispatch and a combine of its
// own (still exact), not joined.
// CHECK-LABEL: func.func @not_joined
// CHECK-COUNT-2: part.expert_dispatch
// CHECK-NOT: part.gather
// CHECK: return
func.func @not_joined(%x: tensor<2x3x4xf32>, %router: tensor<4x3xf32>, %w1: tensor<3x5x4xf32>, %w2: tensor<3x4x5xf32>) -> tensor<12x4x1xf32> {
  %logits = part.matmul %x, %router : (tensor<2x3x4xf32>, tensor<4x3xf32>) -> tensor<2x3x3xf32>
  %top, %indices = part.top_k %logits : (tensor<2x3x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
  %x1 = part.reshape %x : tensor<2x3x4xf32> -> tensor<6x1x4xf32>
  %repeated = part.broadcast %x1 : tensor<6x1x4xf32> -> tensor<6x2x4xf32>
  %cols = part.reshape %repeated : tensor<6x2x4xf32> -> tensor<12x4x1xf32>
  %ids = part.reshape %indices : tensor<2x3x2xi64> -> tensor<12xi64>
  %w1g = part.gather %w1, %ids axis 0 : (tensor<3x5x4xf32>, tensor<12xi64>) -> tensor<12x5x4xf32>
  %a = part.batch_matmul %w1g, %cols : (tensor<12x5x4xf32>, tensor<12x4x1xf32>) -> tensor<12x5x1xf32>
  %e = part.exp %a : tensor<12x5x1xf32>
  %w2g = part.gather %w2, %ids axis 0 : (tensor<3x4x5xf32>, tensor<12xi64>) -> tensor<12x4x5xf32>
  %y = part.batch_matmul %w2g, %e : (tensor<12x4x5xf32>, tensor<12x5x1xf32>) -> tensor<12x4x1xf32>
  return %y : tensor<12x4x1xf32>
}

//===----------------------------------------------------------------------===//
// Left alone
//===----------------------------------------------------------------------===//

// Ids that are not a top-k's: an index could be anything (the gather's
// range check stays).
// CHECK-LABEL: func.func @ids_not_routed
// CHECK: part.gather
// CHECK-NOT: part.expert_dispatch
func.func @ids_not_routed(%w: tensor<3x4x6xf32>, %ids: tensor<12xi64>, %cols: tensor<12x6x1xf32>) -> tensor<12x4x1xf32> {
  %wg = part.gather %w, %ids axis 0 : (tensor<3x4x6xf32>, tensor<12xi64>) -> tensor<12x4x6xf32>
  // expected-remark @below {{not raised to part.expert_dispatch: the gather indices are not a part.top_k's indices}}
  %y = part.batch_matmul %wg, %cols : (tensor<12x4x6xf32>, tensor<12x6x1xf32>) -> tensor<12x4x1xf32>
  return %y : tensor<12x4x1xf32>
}

// A top-k over 4 scores reading 3 experts' weights: id 3 is out of range,
// which the gather reports at run time and a dispatch would not.
// CHECK-LABEL: func.func @more_scores_than_experts
// CHECK: part.gather
// CHECK-NOT: part.expert_dispatch
func.func @more_scores_than_experts(%scores: tensor<2x3x4xf32>, %w: tensor<3x4x6xf32>, %cols: tensor<12x6x1xf32>) -> tensor<12x4x1xf32> {
  %top, %indices = part.top_k %scores : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
  %ids = part.reshape %indices : tensor<2x3x2xi64> -> tensor<12xi64>
  %wg = part.gather %w, %ids axis 0 : (tensor<3x4x6xf32>, tensor<12xi64>) -> tensor<12x4x6xf32>
  // expected-remark @below {{not raised to part.expert_dispatch: the top-k chooses among 4 scores, not the 3 experts}}
  %y = part.batch_matmul %wg, %cols : (tensor<12x4x6xf32>, tensor<12x6x1xf32>) -> tensor<12x4x1xf32>
  return %y : tensor<12x4x1xf32>
}

// A router over [6, 3] scores with nothing above them that shows the
// batch: the groups are unknown.
// CHECK-LABEL: func.func @no_batch
// CHECK: part.gather
// CHECK-NOT: part.expert_dispatch
func.func @no_batch(%scores: tensor<6x3xf32>, %w: tensor<3x4x6xf32>, %cols: tensor<12x6x1xf32>) -> tensor<12x4x1xf32> {
  %top, %indices = part.top_k %scores : (tensor<6x3xf32>) -> (tensor<6x2xf32>, tensor<6x2xi64>)
  %ids = part.reshape %indices : tensor<6x2xi64> -> tensor<12xi64>
  %wg = part.gather %w, %ids axis 0 : (tensor<3x4x6xf32>, tensor<12xi64>) -> tensor<12x4x6xf32>
  // expected-remark @below {{not raised to part.expert_dispatch: no value above the router holds its 6 tokens as [batch, sequence, ...]}}
  %y = part.batch_matmul %wg, %cols : (tensor<12x4x6xf32>, tensor<12x6x1xf32>) -> tensor<12x4x1xf32>
  return %y : tensor<12x4x1xf32>
}

// Two columns per slot: not one vector per slot.
// CHECK-LABEL: func.func @two_columns
// CHECK: part.gather
// CHECK-NOT: part.expert_dispatch
func.func @two_columns(%scores: tensor<2x3x3xf32>, %w: tensor<3x4x6xf32>, %cols: tensor<12x6x2xf32>) -> tensor<12x4x2xf32> {
  %top, %indices = part.top_k %scores : (tensor<2x3x3xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xi64>)
  %ids = part.reshape %indices : tensor<2x3x2xi64> -> tensor<12xi64>
  %wg = part.gather %w, %ids axis 0 : (tensor<3x4x6xf32>, tensor<12xi64>) -> tensor<12x4x6xf32>
  // expected-remark @below {{not raised to part.expert_dispatch: the other operand is not one vector per slot}}
  %y = part.batch_matmul %wg, %cols : (tensor<12x4x6xf32>, tensor<12x6x2xf32>) -> tensor<12x4x2xf32>
  return %y : tensor<12x4x2xf32>
}
