func.func @stored_permutation_repeats(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 2, 3>, part.stored_permutation = array<i64: 1, 1>}) {
  return
}
