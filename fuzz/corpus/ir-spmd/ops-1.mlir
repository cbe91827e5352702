part.mesh @mesh = <["dp"=2, "tp"=4]>
part.mesh @stage0 = <["dp"=2]>
part.mesh @stage1 = <["dp"=2]>
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<4x8xi32>) -> tensor<4x8xf32> {
  %c = part.constant dense<1.0> : tensor<4x8xf32>
  %0 = part.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = part.sub %b, %0 : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = part.mul %1, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = part.div %2, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = part.max %3, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = part.min %4, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = part.pow %5, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ii = part.add %i, %i : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %7 = part.neg %6 : tensor<4x8xf32>
  %8 = part.exp %7 : tensor<4x8xf32>
  %9 = part.log %8 : tensor<4x8xf32>
  %10 = part.sqrt %9 : tensor<4x8xf32>
  %11 = part.rsqrt %10 : tensor<4x8xf32>
  %12 = part.tanh %11 : tensor<4x8xf32>
  %erf = part.erf %12 : tensor<4x8xf32>
  %cos = part.cos %12 : tensor<4x8xf32>
  %sin = part.sin %cos : tensor<4x8xf32>
  %13 = part.sigmoid %12 : tensor<4x8xf32>
  %14 = part.relu %13 : tensor<4x8xf32>
  %15 = part.silu %14 : tensor<4x8xf32>
  %16 = part.gelu %15 erf : tensor<4x8xf32>
  %17 = part.gelu %16 tanh : tensor<4x8xf32>
  %18 = part.cast %17 : tensor<4x8xf32> -> tensor<4x8xbf16>
  %19 = part.cast %18 : tensor<4x8xbf16> -> tensor<4x8xf32>
  %20 = part.cast %ii : tensor<4x8xi32> -> tensor<4x8xf16>
  %21 = part.select %i, %19, %b : (tensor<4x8xi32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %c64 = part.constant dense<[[1], [0], [1], [0]]> : tensor<4x1xi64>
  %i3 = part.reshape %ii : tensor<4x8xi32> -> tensor<2x2x8xi32>
  %i1 = part.slice %i3 offsets [0, 0, 0] : tensor<2x2x8xi32> -> tensor<2x1x8xi32>
  %zero = part.constant dense<0> : tensor<i32>
  %22 = part.select %c64, %i1, %zero : (tensor<4x1xi64>, tensor<2x1x8xi32>, tensor<i32>) -> tensor<2x4x8xi32>
  return %21 : tensor<4x8xf32>
}
