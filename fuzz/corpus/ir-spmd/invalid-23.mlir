func.func private @bad_role(%x: tensor<8xf32> {part.role = "weight"})
