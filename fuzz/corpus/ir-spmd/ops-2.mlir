part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @contractions(%x: tensor<2x16x64xf32>, %w: tensor<64x256xf32>, %e: tensor<1000x64xf32>,
                        %q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %t: tensor<64x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = part.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  %1 = part.matmul %x, %e transpose_b : (tensor<2x16x64xf32>, tensor<1000x64xf32>) -> tensor<2x16x1000xf32>
  %2 = part.matmul %t, %w transpose_a : (tensor<64x16xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %3 = part.batch_matmul %q, %k transpose_b : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %4 = part.batch_matmul %q, %k transpose_a : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  return %3 : tensor<2x4x16x16xf32>
}
