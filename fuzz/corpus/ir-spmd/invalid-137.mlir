func.func private @name_not_string(%x: tensor<8xf32>) -> (tensor<8xf32> {part.name = 3})
