part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @gradients(%x: tensor<8xf32> {part.role = #part.role<input>},
                     %w: tensor<8xf32> {part.name = "w", part.role = #part.role<parameter>})
    -> (tensor<f32> {part.name = "loss"}, tensor<8xf32> {part.grad_of = 1 : i64, part.name = "grad.w"}) {
  %0 = part.reduce_sum %x dims [0] : tensor<8xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<8xf32>
}
