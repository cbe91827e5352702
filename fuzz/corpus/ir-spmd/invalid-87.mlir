func.func @slice_bounds(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = part.slice %x offsets [0, 3] strides [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
