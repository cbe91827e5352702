// Returns its inputs: run with --data or --synthetic, its outputs are the
// batch of the last step, assembled from every rank's block (an input and a
// label, f32 and i32). Used by test/e2e/train-data.mlir.
func.func @echo(
    %x: tensor<8x4xf32> {part.name = "x", part.role = #part.role<input>},
    %t: tensor<8x6xi32> {part.name = "t", part.role = #part.role<label>})
    -> (tensor<8x4xf32> {part.name = "x.seen"},
        tensor<8x6xi32> {part.name = "t.seen"}) {
  return %x, %t : tensor<8x4xf32>, tensor<8x6xi32>
}
