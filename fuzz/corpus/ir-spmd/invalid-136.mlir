func.func private @empty_name(%x: tensor<8xf32> {part.name = ""})
