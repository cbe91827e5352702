part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_odd(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "part.collective_permute"(%x) {mesh = @mesh, axes = ["tp"], pairs = array<i64: 0, 1, 2>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
