func.func @unknown_result_attr(%x: tensor<8xf32>) -> (tensor<8xf32> {part.role = #part.role<input>}) {
  return %x : tensor<8xf32>
}
