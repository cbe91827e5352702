func.func @stored_shape_on_label(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 6>},
                                 %y: tensor<2x3xi32> {part.role = #part.role<label>, part.stored_shape = array<i64: 6>}) {
  return
}
