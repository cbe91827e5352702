func.func @batch(%x: tensor<6x8xf32> {part.role = #part.role<input>}) -> tensor<6x8xf32> {
  return %x : tensor<6x8xf32>
}
