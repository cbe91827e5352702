func.func private @unknown_role(%x: tensor<8xf32> {part.role = #part.role<weight>})
