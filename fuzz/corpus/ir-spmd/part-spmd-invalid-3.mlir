func.func @width(%x: tensor<4x8xf32>, %w1: tensor<8x6xf32> {part.role = #part.role<parameter>},
                 %w2: tensor<6x8xf32> {part.role = #part.role<parameter>}) -> tensor<4x8xf32> {
  %0 = part.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = part.relu %0 : tensor<4x6xf32>
  %2 = part.matmul %1, %w2 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
