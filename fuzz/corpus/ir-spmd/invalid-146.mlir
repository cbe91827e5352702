func.func private @arg_origin_not_string(%x: tensor<8xf32> {part.sharding_origin = 3})
