func.func @kv_heads(%x: tensor<4x8x24xf32>, %wq: tensor<24x24xf32> {part.role = #part.role<parameter>},
                    %wk: tensor<24x6xf32> {part.role = #part.role<parameter>},
                    %wv: tensor<24x6xf32> {part.role = #part.role<parameter>},
                    %wo: tensor<24x24xf32> {part.role = #part.role<parameter>}) -> tensor<4x8x24xf32> {
  %q0 = part.matmul %x, %wq : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  %q1 = part.reshape %q0 : tensor<4x8x24xf32> -> tensor<4x8x12x2xf32>
  %q = part.transpose %q1 [0, 2, 1, 3] : tensor<4x8x12x2xf32> -> tensor<4x12x8x2xf32>
  %k0 = part.matmul %x, %wk : (tensor<4x8x24xf32>, tensor<24x6xf32>) -> tensor<4x8x6xf32>
  %k1 = part.reshape %k0 : tensor<4x8x6xf32> -> tensor<4x8x3x2xf32>
  %k = part.transpose %k1 [0, 2, 1, 3] : tensor<4x8x3x2xf32> -> tensor<4x3x8x2xf32>
  %v0 = part.matmul %x, %wv : (tensor<4x8x24xf32>, tensor<24x6xf32>) -> tensor<4x8x6xf32>
  %v1 = part.reshape %v0 : tensor<4x8x6xf32> -> tensor<4x8x3x2xf32>
  %v = part.transpose %v1 [0, 2, 1, 3] : tensor<4x8x3x2xf32> -> tensor<4x3x8x2xf32>
  %a = part.attention %q, %k, %v : (tensor<4x12x8x2xf32>, tensor<4x3x8x2xf32>, tensor<4x3x8x2xf32>) -> tensor<4x12x8x2xf32>
  %t = part.transpose %a [0, 2, 1, 3] : tensor<4x12x8x2xf32> -> tensor<4x8x12x2xf32>
  %r = part.reshape %t : tensor<4x8x12x2xf32> -> tensor<4x8x24xf32>
  %o = part.matmul %r, %wo : (tensor<4x8x24xf32>, tensor<24x24xf32>) -> tensor<4x8x24xf32>
  return %o : tensor<4x8x24xf32>
}
