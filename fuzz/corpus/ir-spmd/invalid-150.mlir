func.func @init_on_parameter(%w: tensor<4xf32> {part.role = #part.role<parameter>, part.init = 1.0 : f32}) {
  return
}
