func.func @elements_overflow(%a: tensor<1099511627776x1099511627776xf32>) {
  %0 = part.neg %a : tensor<1099511627776x1099511627776xf32>
  return
}
