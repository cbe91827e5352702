func.func @constant_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "part.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<8xf32>
  return %x : tensor<4xf32>
}
