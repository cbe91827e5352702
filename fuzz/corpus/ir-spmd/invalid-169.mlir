module attributes {part.model_flops = 0.5 : f64} {
}
