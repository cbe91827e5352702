// part.cos and part.sin as a cosine learning-rate schedule (a scalar) and as
// rotary tables computed in the program from positions and frequencies
// (angles up to about 2000 radians), applied by part.rotary_embedding; and
// in f16. Positions, q and h are split by rows over "x".
part.mesh @mesh = <["x"=2]>

func.func @f(%t: tensor<f32> {part.name = "t", part.role = #part.role<input>},
             %pos: tensor<16x1xf32> {part.name = "pos", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"x"}, {}]>},
             %freq: tensor<8xf32> {part.name = "freq", part.role = #part.role<input>},
             %q: tensor<2x4x16x8xf32> {part.name = "q", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{}, {}, {"x"}, {}]>},
             %h: tensor<4x8xf16> {part.name = "h", part.role = #part.role<input>, part.sharding = #part.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<f32> {part.name = "lr"}, tensor<16x8xf32> {part.name = "c"},
        tensor<16x8xf32> {part.name = "s"}, tensor<2x4x16x8xf32> {part.name = "r"},
        tensor<4x8xf16> {part.name = "ch"}, tensor<4x8xf16> {part.name = "sh"}) {
  // lr = 0.5 * (1 + cos(pi * t / T)), T = 100.
  %pi = part.constant dense<3.14159274> : tensor<f32>
  %steps = part.constant dense<100.0> : tensor<f32>
  %half = part.constant dense<0.5> : tensor<f32>
  %one = part.constant dense<1.0> : tensor<f32>
  %pt = part.mul %pi, %t : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %u = part.div %pt, %steps : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %cu = part.cos %u : tensor<f32>
  %cu1 = part.add %cu, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %lr = part.mul %cu1, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // Rotary tables: angle[s, d] = pos[s] * freq[d].
  %angle = part.mul %pos, %freq : (tensor<16x1xf32>, tensor<8xf32>) -> tensor<16x8xf32>
  %c = part.cos %angle : tensor<16x8xf32>
  %s = part.sin %angle : tensor<16x8xf32>
  %r = part.rotary_embedding %q, %c, %s : (tensor<2x4x16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16x8xf32>
  %ch = part.cos %h : tensor<4x8xf16>
  %sh = part.sin %h : tensor<4x8xf16>
  return %lr, %c, %s, %r, %ch, %sh : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<2x4x16x8xf32>, tensor<4x8xf16>, tensor<4x8xf16>
}
