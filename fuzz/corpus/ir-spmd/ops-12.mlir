part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @axis_index() -> tensor<i32> {
  %0 = part.axis_index on @mesh axes ["dp", "tp"] : tensor<i32>
  return %0 : tensor<i32>
}
