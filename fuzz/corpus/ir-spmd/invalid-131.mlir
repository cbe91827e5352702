part.mesh @stage0 = <["dp"=2]>
func.func @send_unknown_mesh(%x: tensor<8xf32>) {
  part.send %x to @stage1 channel 0 : tensor<8xf32>
  return
}
