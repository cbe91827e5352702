func.func @init_not_float_or_name(%s: tensor<4xf32> {part.role = #part.role<state>, part.init = 3}) {
  return
}
