func.func @stored_shape_on_input(%x: tensor<2x3xf32> {part.stored_shape = array<i64: 6>}) {
  return
}
