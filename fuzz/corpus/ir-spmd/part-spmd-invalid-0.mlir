func.func @batch(%x: tensor<6x8xf32> {part.role = #part.role<input>}, %s: tensor<6xf32>) -> tensor<8x6xf32> {
  %0 = part.transpose %x [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %1 = part.layer_norm %0, %s : (tensor<8x6xf32>, tensor<6xf32>) -> tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}
