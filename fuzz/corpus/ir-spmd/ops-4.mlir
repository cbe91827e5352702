part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @reductions(%x: tensor<4x8x16xf32>) -> tensor<4xf32> {
  %0 = part.reduce_sum %x dims [1, 2] : tensor<4x8x16xf32> -> tensor<4xf32>
  %1 = part.reduce_mean %x dims [2] keep_dims : tensor<4x8x16xf32> -> tensor<4x8x1xf32>
  %2 = part.reduce_max %x dims [0] : tensor<4x8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<4xf32>
}
