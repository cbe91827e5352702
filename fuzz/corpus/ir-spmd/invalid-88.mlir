func.func @slice_overflow(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %0 = part.slice %x offsets [0, 1] strides [1, 9223372036854775807] : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
