func.func @bytes_overflow(%a: tensor<4611686018427387904xf32>) {
  %0 = part.neg %a : tensor<4611686018427387904xf32>
  return
}
