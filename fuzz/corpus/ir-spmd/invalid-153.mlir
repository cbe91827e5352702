func.func @loss_scale_not_scalar(%s: tensor<2xf32> {part.role = #part.role<state>, part.loss_scale}) {
  return
}
