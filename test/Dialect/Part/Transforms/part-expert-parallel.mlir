// RUN: partition-opt %s --split-input-file --part-expert-parallel -verify-diagnostics | FileCheck %s

// The experts' weights are the parameters the sharding rules join to a
// dispatch buffer's first dimension (through the reshape and the batch
// matmul's batch dimension): split over ep, in front of a split they have.
// The router's weight and the tokens are left to part-data-parallel.
// CHECK-LABEL: func.func @moe(
// CHECK-SAME: %{{.*}}: tensor<2x8x16xf32> {part.name = "x", part.role = #part.role<input>}
// CHECK-SAME: %{{.*}}: tensor<16x4xf32> {part.name = "router", part.role = #part.role<parameter>}
// CHECK-SAME: %{{.*}}: tensor<4x16x32xf32> {part.name = "w1", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"ep"}, {}, {}]>}
// CHECK-SAME: %{{.*}}: tensor<4x32x16xf32> {part.name = "w2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{"ep"}, {"tp"}, {}]>}
part.mesh @mesh = <["ep"=2, "tp"=2]>
func.func @moe(%x: tensor<2x8x16xf32> {part.name = "x", part.role = #part.role<input>},
               %router: tensor<16x4xf32> {part.name = "router", part.role = #part.role<parameter>},
               %w1: tensor<4x16x32xf32> {part.name = "w1", part.role = #part.role<parameter>},
               %w2: tensor<4x32x16xf32> {part.name = "w2", part.role = #part.role<parameter>, part.sharding = #part.sharding<@mesh, [{}, {"tp"}, {}]>})
    -> (tensor<2x8x2x16xf32> {part.name = "y"}) {
  %logits = part.matmul %x, %router : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
  %top, %chosen = part.top_k %logits : (tensor<2x8x4xf32>) -> (tensor<2x8x2xf32>, tensor<2x8x2xi64>)
  %buffer = part.expert_dispatch %x, %chosen : (tensor<2x8x16xf32>, tensor<2x8x2xi64>) -> tensor<4x2x4x16xf32>
  %rows = part.reshape %buffer : tensor<4x2x4x16xf32> -> tensor<4x8x16xf32>
  %h = part.batch_matmul %rows, %w1 : (tensor<4x8x16xf32>, tensor<4x16x32xf32>) -> tensor<4x8x32xf32>
  %o = part.batch_matmul %h, %w2 : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  %back = part.reshape %o : tensor<4x8x16xf32> -> tensor<4x2x4x16xf32>
  %y = part.expert_combine %back, %chosen : (tensor<4x2x4x16xf32>, tensor<2x8x2xi64>) -> tensor<2x8x2x16xf32>
  return %y : tensor<2x8x2x16xf32>
}

// -----

part.mesh @mesh = <["ep"=2]>
// expected-error @+1 {{mesh axis "ep" splits experts, but @dense has no part.expert_dispatch (no mixture-of-experts layer)}}
func.func @dense(%x: tensor<2x16xf32> {part.role = #part.role<input>},
                 %w: tensor<16x16xf32> {part.role = #part.role<parameter>}) -> tensor<2x16xf32> {
  %y = part.matmul %x, %w : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

part.mesh @mesh = <["ep"=4]>
// expected-error @+1 {{argument 1 (w1) holds 2 experts, which mesh axis "ep" of size 4 does not divide}}
func.func @uneven(%x: tensor<2x8x16xf32> {part.role = #part.role<input>},
                  %w1: tensor<2x16x16xf32> {part.name = "w1", part.role = #part.role<parameter>},
                  %chosen: tensor<2x8x1xi64> {part.role = #part.role<input>}) -> tensor<2x2x8x16xf32> {
  %buffer = part.expert_dispatch %x, %chosen : (tensor<2x8x16xf32>, tensor<2x8x1xi64>) -> tensor<2x2x8x16xf32>
  %rows = part.reshape %buffer : tensor<2x2x8x16xf32> -> tensor<2x16x16xf32>
  %h = part.batch_matmul %rows, %w1 : (tensor<2x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %out = part.reshape %h : tensor<2x16x16xf32> -> tensor<2x2x8x16xf32>
  return %out : tensor<2x2x8x16xf32>
}
