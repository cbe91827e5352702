func.func @stored_permutation_alone(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>}) {
  return
}
