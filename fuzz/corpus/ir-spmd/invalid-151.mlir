func.func @float_init_on_integers(%s: tensor<4xi32> {part.role = #part.role<state>, part.init = 1.0 : f32}) {
  return
}
