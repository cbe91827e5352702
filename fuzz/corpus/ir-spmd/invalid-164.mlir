func.func @bad_state_of(%w: tensor<8xf32> {part.role = #part.role<parameter>},
                        %m: tensor<8xf32> {part.role = #part.role<state>, part.state_of = 7 : i64}) {
  return
}
