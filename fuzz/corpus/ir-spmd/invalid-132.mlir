part.mesh @stage0 = <["dp"=2]>
func.func @recv_channel() -> tensor<8xf32> {
  %0 = part.recv from @stage0 channel -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
