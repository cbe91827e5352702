func.func @stored_shape_not_array(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = [6]}) {
  return
}
