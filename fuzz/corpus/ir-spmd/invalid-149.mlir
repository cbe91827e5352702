part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @axis_index_axis() -> tensor<i32> {
  %0 = part.axis_index on @mesh axes ["pp"] : tensor<i32>
  return %0 : tensor<i32>
}
