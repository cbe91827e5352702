part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @compare(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x1xi64>, %j: tensor<i64>, %h: tensor<4x8xbf16>) -> tensor<4x8xi32> {
  %0 = part.compare eq, %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi32>
  %1 = part.compare ne, %b, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  %2 = part.compare lt, %i, %j : (tensor<4x1xi64>, tensor<i64>) -> tensor<4x1xi32>
  %3 = part.compare le, %h, %h : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xi32>
  %4 = part.compare gt, %0, %1 : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %5 = part.compare ge, %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi32>
  return %5 : tensor<4x8xi32>
}
