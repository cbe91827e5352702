module attributes {part.model_flops = -1 : i64} {
}
