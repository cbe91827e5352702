part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @layers(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = part.neg %x {part.layer = 3 : i64} : tensor<8xf32>
  %1 = part.neg %x {part.layer = 3 : i64, part.recomputed} : tensor<8xf32>
  %2 = part.add %0, %1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
