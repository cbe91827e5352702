func.func @stored_permutation_not_array(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 3, 2>, part.stored_permutation = [1, 0]}) {
  return
}
