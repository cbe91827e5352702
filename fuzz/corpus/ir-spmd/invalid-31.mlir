func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = part.neg %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
