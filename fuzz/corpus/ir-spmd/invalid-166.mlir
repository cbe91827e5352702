func.func @logical_rank(%x: tensor<4x8xf32> {part.logical_shape = array<i64: 3>}) {
  return
}
