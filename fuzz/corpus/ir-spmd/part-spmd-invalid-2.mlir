func.func @heads(%x: tensor<4x8x24xf32>, %wq: tensor<24x24xf32> {part.role = #part.role<parameter>},
                 %wo: tensor<24x24xf32> {part.role = #part.role<parameter>}) -> tensor<4x8x24xf32> {
  %0 = part.matmul %x, %wq : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  %1 = part.reshape %0 : tensor<4x8x24xf32> -> tensor<4x8x6x4xf32>
  %2 = part.reshape %1 : tensor<4x8x6x4xf32> -> tensor<4x8x24xf32>
  %3 = part.matmul %2, %wo : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  return %3 : tensor<4x8x24xf32>
}
