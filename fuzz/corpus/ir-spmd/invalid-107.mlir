func.func @concat_none() -> tensor<4xf32> {
  %0 = "part.concat"() {dim = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
