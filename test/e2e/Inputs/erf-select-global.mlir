// part.erf and part.select (every operand broadcast, i32 and i64 conditions,
// f32, f16 and i64 values), partitioned over two devices by the rows of x.
part.mesh @mesh = <["x"=2]>

func.func @f(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"x"}, {}]>},
             %c: tensor<8xi32> {part.name = "c", part.role = #part.role<input>},
             %y: tensor<4x1xf32> {part.name = "y", part.role = #part.role<input>},
             %h: tensor<4x8xf16> {part.name = "h", part.role = #part.role<input>})
    -> (tensor<4x8xf32> {part.name = "e"}, tensor<2x4x8xf32> {part.name = "s"},
        tensor<4x8xf16> {part.name = "eh"}, tensor<4x8xi64> {part.name = "si"}) {
  %e = part.erf %x : tensor<4x8xf32>
  // c [8] picks per column between erf(x) [4, 8] and y [4, 1].
  %s0 = part.select %c, %e, %y : (tensor<8xi32>, tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // An i64 condition over a new leading dimension, against a scalar.
  %k = part.constant dense<[[[1]], [[0]]]> : tensor<2x1x1xi64>
  %big = part.constant dense<-1.0e9> : tensor<f32>
  %s = part.select %k, %s0, %big : (tensor<2x1x1xi64>, tensor<4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %eh = part.erf %h : tensor<4x8xf16>
  // 8-byte values: y truncated to i64 against a constant row.
  %yi = part.cast %y : tensor<4x1xf32> -> tensor<4x1xi64>
  %row = part.constant dense<[10, 20, 30, 40, 50, 60, 70, 80]> : tensor<8xi64>
  %si = part.select %c, %yi, %row : (tensor<8xi32>, tensor<4x1xi64>, tensor<8xi64>) -> tensor<4x8xi64>
  return %e, %s, %eh, %si : tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf16>, tensor<4x8xi64>
}
