part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_reduce_type(%x: tensor<8xf32>) -> tensor<8xf16> {
  %0 = "part.all_reduce"(%x) {mesh = @mesh, axes = ["tp"], kind = 0 : i32} : (tensor<8xf32>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}
