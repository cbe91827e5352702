func.func @logical_size(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {part.logical_shape = array<i64: 4, 9>}) {
  return %x : tensor<4x8xf32>
}
