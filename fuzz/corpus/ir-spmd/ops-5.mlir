part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @data_movement(%x: tensor<2x16x64xf32>, %b: tensor<64xf32>, %table: tensor<1000x64xf32>,
                         %ids: tensor<2x16xi32>, %ids64: tensor<3xi64>) -> tensor<2x4x16x16xf32> {
  %0 = part.reshape %x : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %1 = part.transpose %0 [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %2 = part.broadcast %b : tensor<64xf32> -> tensor<2x16x64xf32>
  %3 = part.slice %x offsets [0, 0, 32] : tensor<2x16x64xf32> -> tensor<2x16x32xf32>
  %4 = part.slice %x offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x16x64xf32> -> tensor<2x8x64xf32>
  %5 = part.concat %3, %3 dim 2 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x64xf32>
  %6 = part.gather %table, %ids axis 0 : (tensor<1000x64xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32>
  %7 = part.gather %table, %ids64 axis 1 : (tensor<1000x64xf32>, tensor<3xi64>) -> tensor<1000x3xf32>
  %8 = part.pad %3 offsets [0, 0, 32] : tensor<2x16x32xf32> -> tensor<2x16x64xf32>
  %9 = part.pad %4 offsets [0, 1, 0] strides [1, 2, 1] : tensor<2x8x64xf32> -> tensor<2x16x64xf32>
  %10 = part.scatter_add %6, %ids axis 0 : (tensor<2x16x64xf32>, tensor<2x16xi32>) -> tensor<1000x64xf32>
  %11 = part.scatter_add %7, %ids64 axis 1 : (tensor<1000x3xf32>, tensor<3xi64>) -> tensor<1000x64xf32>
  %top, %chosen = part.top_k %6 : (tensor<2x16x64xf32>) -> (tensor<2x16x2xf32>, tensor<2x16x2xi64>)
  %buf = part.expert_dispatch %6, %chosen : (tensor<2x16x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
  %slots = part.expert_combine %buf, %chosen : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32>
  return %1 : tensor<2x4x16x16xf32>
}
