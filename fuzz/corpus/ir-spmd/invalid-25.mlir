func.func private @unknown_arg_attr(%x: tensor<8xf32> {part.rol = #part.role<input>})
