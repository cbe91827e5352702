func.func @stored_shape_not_a_view(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 3, 2>}) {
  return
}
