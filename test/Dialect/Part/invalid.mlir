// RUN: partition-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect
// One case per diagnostic the part dialect can emit.

//===----------------------------------------------------------------------===//
// Meshes
//===----------------------------------------------------------------------===//

// expected-error @+1 {{mesh axis name must not be empty}}
part.mesh @mesh = <[""=2]>

// -----

// expected-error @+1 {{mesh axis "tp" is declared more than once}}
part.mesh @mesh = <["tp"=2, "tp"=4]>

// -----

// expected-error @+1 {{mesh axis "dp" has size 0, but sizes must be at least 1}}
part.mesh @mesh = <["dp"=0]>

// -----

// 2^40 x 2^40 devices: the product overflows int64 and is not a mesh.
// expected-error @+1 {{mesh of "dp"=1099511627776 x "tp"=1099511627776 has more than 16777216 devices (the product reaches axis "dp")}}
part.mesh @mesh = <["dp"=1099511627776, "tp"=1099511627776]>

// -----

// expected-error @+1 {{mesh of "dp"=4096 x "tp"=4096 x "pp"=2 has more than 16777216 devices (the product reaches axis "pp")}}
part.mesh @mesh = <["dp"=4096, "tp"=4096, "pp"=2]>

// -----

func.func @mesh_outside_module() {
  // expected-error @+1 {{'part.mesh' op expects parent op 'builtin.module'}}
  part.mesh @inner = <["dp"=2]>
  return
}

//===----------------------------------------------------------------------===//
// Sharding attribute
//===----------------------------------------------------------------------===//

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{expected a mesh name such as @mesh}}
func.func private @no_mesh_name(%x: tensor<8xf32> {part.sharding = #part.sharding<"mesh", [{}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{mesh axis "dp" is used twice: in dimension 0 and in dimension 1}}
func.func private @axis_twice(%x: tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"dp"}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{mesh axis "tp" is used twice: in dimension 1 and in the unreduced set}}
func.func private @axis_sharded_and_unreduced(%x: tensor<8x8xf32> {part.sharding = #part.sharding<@mesh, [{}, {"tp"}], unreduced={"tp"}>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: sharding refers to @nomesh, which is not a part.mesh}}
func.func private @unknown_mesh(%x: tensor<8xf32> {part.sharding = #part.sharding<@nomesh, [{"dp"}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: mesh @mesh has no axis "pp"}}
func.func private @unknown_axis(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{"pp"}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: mesh @mesh has no axis "ep"}}
func.func private @unknown_unreduced_axis(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{}], unreduced={"ep"}>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: sharding has rank 2 but the value of type 'tensor<8xf32>' has rank 1}}
func.func private @wrong_rank(%x: tensor<8xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: dimension 1 of size 6 is not divisible by its 4 shards over mesh axes "tp"}}
func.func private @does_not_divide(%x: tensor<8x6xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {"tp"}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: dimension 0 of size 4 is not divisible by its 8 shards over mesh axes "dp", "tp"}}
func.func private @two_axes_do_not_divide(%x: tensor<4xf32> {part.sharding = #part.sharding<@mesh, [{"dp", "tp"}]>})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: a sharding applies to ranked tensors, not 'i32'}}
func.func private @not_a_tensor(%x: i32 {part.sharding = #part.sharding<@mesh, []>})

//===----------------------------------------------------------------------===//
// part.* attributes where they are attached
//===----------------------------------------------------------------------===//

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on result 0: dimension 0 of size 2 is not divisible by its 4 shards over mesh axes "tp"}}
func.func @bad_result_sharding(%x: tensor<2xf32>) -> (tensor<2xf32> {part.sharding = #part.sharding<@mesh, [{"tp"}]>}) {
  return %x : tensor<2xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @bad_op_sharding(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'part.matmul' op has an invalid sharding on its result: mesh @mesh has no axis "x"}}
  %0 = part.matmul %x, %w {part.sharding = #part.sharding<@mesh, [{"x"}, {}]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @op_sharding_not_a_sharding(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.sharding' on its result must be a #part.sharding, got "dp"}}
  %0 = part.neg %x {part.sharding = "dp"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @multi_result_needs_array(%x: tensor<8xf32>) {
  // expected-error @+1 {{'test.two' op has 2 results, so 'part.sharding' must be an array of as many #part.sharding}}
  %0:2 = "test.two"() {part.sharding = #part.sharding<@mesh, [{"dp"}]>} : () -> (tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @multi_result_bad_entry(%x: tensor<8xf32>) {
  // expected-error @+1 {{'test.two' op has an invalid sharding on result 1: dimension 0 of size 6 is not divisible by its 4 shards over mesh axes "tp"}}
  %0:2 = "test.two"() {part.sharding = [#part.sharding<@mesh, [{"dp"}]>, #part.sharding<@mesh, [{"tp"}]>]} : () -> (tensor<8xf32>, tensor<6xf32>)
  return
}

// -----

func.func @role_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.role' belongs on function arguments, not on an op}}
  %0 = part.neg %x {part.role = #part.role<parameter>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @unknown_op_attr(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op has unknown attribute 'part.shard'}}
  %0 = part.neg %x {part.shard = 1} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'part.role' on argument 0 must be #part.role<parameter|input|label>, got "weight"}}
func.func private @bad_role(%x: tensor<8xf32> {part.role = "weight"})

// -----

// expected-error @+2 {{expected ::partition::part::ArgRole to be one of: parameter, input, label}}
// expected-error @+1 {{failed to parse Part_ArgRoleAttr parameter 'value'}}
func.func private @unknown_role(%x: tensor<8xf32> {part.role = #part.role<weight>})

// -----

// expected-error @+1 {{'func.func' op has unknown attribute 'part.rol' on argument 0}}
func.func private @unknown_arg_attr(%x: tensor<8xf32> {part.rol = #part.role<input>})

// -----

// expected-error @+1 {{'func.func' op has unknown attribute 'part.role' on result 0}}
func.func @unknown_result_attr(%x: tensor<8xf32>) -> (tensor<8xf32> {part.role = #part.role<input>}) {
  return %x : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// part.sharding_constraint
//===----------------------------------------------------------------------===//

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @constraint_unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.sharding_constraint' op sharding refers to @other, which is not a part.mesh}}
  %0 = part.sharding_constraint %x <@other, [{"dp"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @constraint_does_not_divide(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'part.sharding_constraint' op dimension 0 of size 6 is not divisible by its 4 shards over mesh axes "tp"}}
  %0 = part.sharding_constraint %x <@mesh, [{"tp"}]> : tensor<6xf32>
  return %0 : tensor<6xf32>
}

//===----------------------------------------------------------------------===//
// Constants, casts, elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @constant_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'part.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "part.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<8xf32>
  return %x : tensor<4xf32>
}

// -----

func.func @cast_shape(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'part.cast' op changes the shape from [4, 8] to [8, 4]; a cast only converts the element type}}
  %0 = part.cast %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'part.neg' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = part.neg %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @binary_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+2 {{'part.add' op element types differ: lhs has 'f32' and rhs has 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @binary_broadcast(%a: tensor<4x8xf32>, %b: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{'part.mul' op shapes [4, 8] and [3] do not broadcast: aligned dimension 1 has sizes 8 and 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.mul %a, %b : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @binary_result(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{'part.sub' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @select_condition_type(%c: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'part.select' op operand #0 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = part.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_element_types(%c: tensor<4xi32>, %a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+2 {{'part.select' op element types differ: true_value has 'f32' and false_value has 'bf16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.select %c, %a, %b : (tensor<4xi32>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+2 {{'part.compare' op element types differ: lhs has 'f32' and rhs has 'i32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.compare lt, %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @compare_broadcast(%a: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4x3xi32> {
  // expected-error @+2 {{'part.compare' op shapes [4, 3] and [4] do not broadcast: aligned dimension 1 has sizes 3 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.compare eq, %a, %b : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

func.func @compare_result_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'part.compare' op result #0 must be statically shaped tensor of 32-bit signless integer values}}
  %0 = part.compare eq, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_direction(%a: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{custom op 'part.compare' expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = part.compare less, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @select_broadcast(%c: tensor<4x1xi32>, %a: tensor<8xf32>, %b: tensor<3x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{'part.select' op shapes [4, 1], [8] and [3, 1] do not broadcast: aligned dimension 0 has sizes 4, 1 and 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.select %c, %a, %b : (tensor<4x1xi32>, tensor<8xf32>, tensor<3x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_lhs_rank(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'part.matmul' op lhs must have rank at least 2, got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_rhs_rank(%a: tensor<2x8xf32>, %b: tensor<2x8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'part.matmul' op rhs must have rank 2, got [2, 8, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<2x8xf32>, %b: tensor<8x4xbf16>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'part.matmul' op element types differ: lhs has 'f32' and rhs has 'bf16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xbf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<2x8xf32>, %b: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{'part.matmul' op contracting sizes differ: lhs [2, 8] has 8, rhs [4, 8] has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.matmul %a, %b : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @batch_matmul_rank(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'part.batch_matmul' op operands must have one rank of at least 3, got [2, 8] and [8, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.batch_matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_matmul_element_types(%a: tensor<3x2x8xf16>, %b: tensor<3x8x4xf32>) -> tensor<3x2x4xf16> {
  // expected-error @+2 {{'part.batch_matmul' op element types differ: lhs has 'f16' and rhs has 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.batch_matmul %a, %b : (tensor<3x2x8xf16>, tensor<3x8x4xf32>) -> tensor<3x2x4xf16>
  return %0 : tensor<3x2x4xf16>
}

// -----

func.func @batch_matmul_batch(%a: tensor<3x2x8xf32>, %b: tensor<5x8x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+2 {{'part.batch_matmul' op batch dimensions differ: lhs [3, 2, 8], rhs [5, 8, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.batch_matmul %a, %b : (tensor<3x2x8xf32>, tensor<5x8x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

func.func @batch_matmul_contracting(%a: tensor<3x2x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x2x8xf32> {
  // expected-error @+2 {{'part.batch_matmul' op contracting sizes differ: lhs [3, 2, 8] has 8, rhs [3, 8, 4] has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.batch_matmul %a, %b transpose_b : (tensor<3x2x8xf32>, tensor<3x8x4xf32>) -> tensor<3x2x8xf32>
  return %0 : tensor<3x2x8xf32>
}

//===----------------------------------------------------------------------===//
// Softmax, normalisation, rotary embedding, attention, loss
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.softmax' op dim 2 is out of range for rank 2}}
  %0 = part.softmax %x dim 2 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<4x8xf32>, %g: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.layer_norm' op scale has shape [4] but must be [8], the last dimension of the input [4, 8]}}
  %0 = part.layer_norm %x, %g : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_bias_type(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.layer_norm' op bias has element type 'bf16' but the input has 'f32'}}
  %0 = part.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'part.layer_norm' op scale has shape [1] but must be [0], the last dimension of the input []}}
  %0 = part.layer_norm %x, %g : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @layer_norm_result(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'part.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = part.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @rms_norm_scale(%x: tensor<4x8xf32>, %g: tensor<8x1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.rms_norm' op scale has shape [8, 1] but must be [8], the last dimension of the input [4, 8]}}
  %0 = part.rms_norm %x, %g : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @rotary_rank(%x: tensor<8xf32>, %c: tensor<1x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.rotary_embedding' op input must have rank at least 2, got [8]}}
  %0 = part.rotary_embedding %x, %c, %c : (tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @rotary_odd(%x: tensor<4x7xf32>, %c: tensor<4x7xf32>) -> tensor<4x7xf32> {
  // expected-error @+1 {{'part.rotary_embedding' op last dimension of the input must be even to rotate halves, got 7}}
  %0 = part.rotary_embedding %x, %c, %c : (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

func.func @rotary_table_shape(%x: tensor<2x4x8xf32>, %c: tensor<4x8xf32>, %s: tensor<8x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'part.rotary_embedding' op sin table has shape [8, 8] but must be [4, 8], the last two dimensions of the input}}
  %0 = part.rotary_embedding %x, %c, %s : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @rotary_table_type(%x: tensor<4x8xf32>, %c: tensor<4x8xf16>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.rotary_embedding' op cos table has element type 'f16' but the input has 'f32'}}
  %0 = part.rotary_embedding %x, %c, %c : (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @attention_rank(%q: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op query, key and value must have rank 4 [batch, heads, seq, head_dim], got [4, 16, 8], [4, 16, 8] and [4, 16, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %q, %q : (tensor<4x16x8xf32>, tensor<4x16x8xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}

// -----

// Zero key/value heads divided the query heads by zero.
func.func @attention_no_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x0x8x16xf32>) {
  // expected-error @+2 {{'part.attention' op key/value heads must be at least 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k : (tensor<2x4x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>) -> tensor<2x4x8x16xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op element types differ: query has 'f32' and key has 'bf16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_grad_result_grad(%q: tensor<2x4x16x8xf32>, %dy: tensor<2x4x16x4xf32>) {
  // expected-error @+2 {{'part.attention_grad' op result_grad has shape [2, 4, 16, 4] but the attention's result has [2, 4, 16, 8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %dq, %dk, %dv = part.attention_grad %q, %q, %q, %dy : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
  return
}

// -----

func.func @attention_grad_no_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x0x8x16xf32>) {
  // expected-error @+2 {{'part.attention_grad' op key/value heads must be at least 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %dq, %dk, %dv = part.attention_grad %q, %k, %k, %q : (tensor<2x4x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x0x8x16xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
  return
}

// -----

func.func @attention_window_zero(%q: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op window must be at least 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %q, %q causal window 0 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_window_not_causal(%q: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op window 4 needs causal: a sliding window ends at the query's own position}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %q, %q window 4 : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x4x16x8xf32>, %k: tensor<3x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op batch sizes differ: query 2, key 3, value 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<3x4x16x8xf32>, tensor<3x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_kv_mismatch(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x12x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op key [2, 4, 16, 8] and value [2, 4, 12, 8] must have the same heads and sequence length}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %v : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_heads(%q: tensor<2x4x16x8xf32>, %k: tensor<2x3x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+2 {{'part.attention' op key/value heads (3) must divide query heads (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x3x16x8xf32>, tensor<2x3x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @attention_head_size(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32> {
  // expected-error @+2 {{'part.attention' op head sizes differ: query 8, key 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>, tensor<2x4x16x4xf32>) -> tensor<2x4x16x4xf32>
  return %0 : tensor<2x4x16x4xf32>
}

// -----

func.func @attention_causal_lengths(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x1x8xf32> {
  // expected-error @+2 {{'part.attention' op causal attention needs equal query and key sequence lengths (or positions), got 1 and 16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k causal : (tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// -----

func.func @attention_positions_shapes(%q: tensor<2x4x8x8xf32>, %k: tensor<2x4x16x8xf32>, %qp: tensor<8xi64>, %kp: tensor<8xi64>) -> tensor<2x4x8x8xf32> {
  // expected-error @+2 {{'part.attention' op query and key positions must have shapes [8] and [16], got [8] and [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %k, %k causal positions(%qp, %kp) : (tensor<2x4x8x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<8xi64>, tensor<8xi64>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

func.func @attention_positions_types(%q: tensor<2x4x8x8xf32>, %qp: tensor<8xi32>, %kp: tensor<8xi64>) -> tensor<2x4x8x8xf32> {
  // expected-error @+2 {{'part.attention' op query and key positions must have one element type, got 'i32' and 'i64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %q, %q causal positions(%qp, %kp) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<8xi32>, tensor<8xi64>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

func.func @attention_positions_not_causal(%q: tensor<2x4x8x8xf32>, %p: tensor<8xi64>) -> tensor<2x4x8x8xf32> {
  // expected-error @+2 {{'part.attention' op positions need causal: they only place the causal mask}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.attention %q, %q, %q positions(%p, %p) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<8xi64>, tensor<8xi64>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

func.func @attention_grad_lse_shape(%q: tensor<2x4x8x8xf32>, %p: tensor<8xi64>, %l: tensor<2x4x8xf32>, %d: tensor<2x4xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error @+2 {{'part.attention_grad' op lse and delta must be f32 [2, 4, 8], got [2, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = part.attention_grad %q, %q, %q, %q causal positions(%p, %p) lse(%l, %d) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<8xi64>, tensor<8xi64>, tensor<2x4x8xf32>, tensor<2x4xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  return %0#0 : tensor<2x4x8x8xf32>
}

// -----

func.func @attention_grad_lse_without_positions(%q: tensor<2x4x8x8xf32>, %l: tensor<2x4x8xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error @+2 {{'part.attention_grad' op lse and delta come together, with positions}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = part.attention_grad %q, %q, %q, %q causal lse(%l, %l) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  return %0#0 : tensor<2x4x8x8xf32>
}

// -----

func.func @cross_entropy_labels(%l: tensor<2x16x100xf32>, %y: tensor<2x8xi32>) -> tensor<f32> {
  // expected-error @+2 {{'part.softmax_cross_entropy' op labels have shape [2, 8] but must be the logits' shape [2, 16, 100] without its last (class) dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.softmax_cross_entropy %l, %y mean : (tensor<2x16x100xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @cross_entropy_float_labels(%l: tensor<2x100xf32>, %y: tensor<2xf32>) -> tensor<f32> {
  // expected-error @+1 {{'part.softmax_cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = part.softmax_cross_entropy %l, %y mean : (tensor<2x100xf32>, tensor<2xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_no_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{'part.reduce_sum' op dims must not be empty}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.reduce_sum %x dims [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_dim_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'part.reduce_mean' op reduced dimension 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.reduce_mean %x dims [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_dim_twice(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'part.reduce_max' op reduced dimension 1 is listed twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.reduce_max %x dims [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'part.reshape' op cannot reshape [4, 8] (32 elements) to [4, 4] (16 elements)}}
  %0 = part.reshape %x : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{'part.reshape' op changes the element type from 'f32' to 'f16'; use part.cast}}
  %0 = part.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

func.func @transpose_size(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+2 {{'part.transpose' op permutation [1, 0, 2] has 3 entries but the input has rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.transpose %x [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+2 {{'part.transpose' op [1, 1] is not a permutation of [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.transpose %x [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @broadcast_element_type(%x: tensor<8xf32>) -> tensor<4x8xf16> {
  // expected-error @+1 {{'part.broadcast' op changes the element type from 'f32' to 'f16'}}
  %0 = part.broadcast %x : tensor<8xf32> -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

func.func @broadcast_rank(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.broadcast' op cannot broadcast [4, 8] to the lower-rank [8]}}
  %0 = part.broadcast %x : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @broadcast_dim(%x: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.broadcast' op cannot broadcast [3] to [4, 8]: operand dimension 0 has size 3, result dimension 1 has size 8}}
  %0 = part.broadcast %x : tensor<3xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @slice_rank(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'part.slice' op result 'tensor<4xf32>' must have the rank and element type of the input 'tensor<4x8xf32>'}}
  %0 = part.slice %x offsets [0, 0] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_offsets(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'part.slice' op needs one offset and one stride per dimension (2), got 1 offsets and 2 strides}}
  %0 = part.slice %x offsets [0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_stride(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'part.slice' op dimension 1 has offset 0 and stride 0; offsets must be >= 0 and strides >= 1}}
  %0 = part.slice %x offsets [0, 0] strides [1, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @slice_bounds(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'part.slice' op dimension 1 reads element 9 (offset 3, size 4, stride 2) but the input has only 8}}
  %0 = part.slice %x offsets [0, 3] strides [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A stride whose window end overflows int64 wrapped negative and passed.
func.func @slice_overflow(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'part.slice' op dimension 1 has offset 1, size 2 and stride 9223372036854775807, whose last element overflows int64}}
  %0 = part.slice %x offsets [0, 1] strides [1, 9223372036854775807] : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @pad_rank(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.pad' op result 'tensor<8xf32>' must have the rank and element type of the input 'tensor<4x8xf32>'}}
  %0 = part.pad %x offsets [0, 0] : tensor<4x8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @pad_offsets(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'part.pad' op needs one offset and one stride per dimension (2), got 1 offsets and 2 strides}}
  %0 = part.pad %x offsets [0] : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @pad_offset_negative(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'part.pad' op dimension 1 has offset -1 and stride 1; offsets must be >= 0 and strides >= 1}}
  %0 = part.pad %x offsets [0, -1] : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @pad_bounds(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'part.pad' op dimension 1 writes element 16 (offset 2, size 8, stride 2) but the result has only 16}}
  %0 = part.pad %x offsets [0, 2] strides [1, 2] : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @scatter_add_axis(%u: tensor<4x8xf32>, %i: tensor<4xi32>) -> tensor<100x8xf32> {
  // expected-error @+1 {{'part.scatter_add' op scatter axis 2 is out of range for the result's rank 2}}
  %0 = part.scatter_add %u, %i axis 2 : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}

// -----

func.func @scatter_add_element_type(%u: tensor<4x8xf16>, %i: tensor<4xi32>) -> tensor<100x8xf32> {
  // expected-error @+1 {{'part.scatter_add' op updates have element type 'f16' but the result has 'f32'}}
  %0 = part.scatter_add %u, %i axis 0 : (tensor<4x8xf16>, tensor<4xi32>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}

// -----

func.func @scatter_add_shape(%u: tensor<2x8xf32>, %i: tensor<2x3xi64>) -> tensor<100x8xf32> {
  // expected-error @+1 {{'part.scatter_add' op updates have shape [2, 8] but must be [2, 3, 8] for indices [2, 3], result [100, 8] and axis 0}}
  %0 = part.scatter_add %u, %i axis 0 : (tensor<2x8xf32>, tensor<2x3xi64>) -> tensor<100x8xf32>
  return %0 : tensor<100x8xf32>
}

// -----

func.func @scatter_add_integers(%u: tensor<4xi32>, %i: tensor<4xi32>) -> tensor<10xi32> {
  // expected-error @+1 {{'part.scatter_add' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = part.scatter_add %u, %i axis 0 : (tensor<4xi32>, tensor<4xi32>) -> tensor<10xi32>
  return %0 : tensor<10xi32>
}

// -----

func.func @top_k_k(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'part.top_k' op takes K = 9 of 8 entries; K must be in [1, 8]}}
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x9xi64>)
  return
}

// -----

func.func @top_k_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'part.top_k' op results have shapes [4, 2] and [3, 2] but both must be the input's [4, 8] with the last dimension K}}
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<3x2xi64>)
  return
}

// -----

func.func @top_k_index_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'part.top_k' op indices must be i64, not 'i32'}}
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  return
}

// -----

func.func @top_k_value_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'part.top_k' op values have element type 'f16' but the input has 'f32'}}
  %v, %i = part.top_k %x : (tensor<4x8xf32>) -> (tensor<4x2xf16>, tensor<4x2xi64>)
  return
}

// -----

func.func @expert_dispatch_slots(%x: tensor<2x16x3x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32> {
  // expected-error @+1 {{'part.expert_dispatch' op input has shape [2, 16, 3, 64] but must be [2, 16, 2, 64] (or [2, 16, 64]) for indices [2, 16, 2] and buffer [4, 2, 8, 64]}}
  %0 = part.expert_dispatch %x, %i : (tensor<2x16x3x64xf32>, tensor<2x16x2xi64>) -> tensor<4x2x8x64xf32>
  return %0 : tensor<4x2x8x64xf32>
}

// -----

func.func @expert_dispatch_groups(%x: tensor<2x16x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<4x3x8x64xf32> {
  // expected-error @+1 {{'part.expert_dispatch' op buffer [4, 3, 8, 64] has 3 groups but the indices have 2}}
  %0 = part.expert_dispatch %x, %i : (tensor<2x16x64xf32>, tensor<2x16x2xi64>) -> tensor<4x3x8x64xf32>
  return %0 : tensor<4x3x8x64xf32>
}

// -----

func.func @expert_dispatch_rank(%x: tensor<2x16x64xf32>, %i: tensor<32x2xi64>) -> tensor<4x2x8x64xf32> {
  // expected-error @+1 {{'part.expert_dispatch' op needs a buffer [E, G, C, H] and indices [G, S, K], not [4, 2, 8, 64] and [32, 2]}}
  %0 = part.expert_dispatch %x, %i : (tensor<2x16x64xf32>, tensor<32x2xi64>) -> tensor<4x2x8x64xf32>
  return %0 : tensor<4x2x8x64xf32>
}

// -----

func.func @expert_combine_empty(%y: tensor<4x2x0x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32> {
  // expected-error @+1 {{'part.expert_combine' op buffer [4, 2, 0, 64] needs at least one expert and one slot}}
  %0 = part.expert_combine %y, %i : (tensor<4x2x0x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xf32>
  return %0 : tensor<2x16x2x64xf32>
}

// -----

func.func @expert_combine_tokens(%y: tensor<4x2x8x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'part.expert_combine' op result has shape [2, 16, 64] but must be [2, 16, 2, 64] for indices [2, 16, 2] and buffer [4, 2, 8, 64]}}
  %0 = part.expert_combine %y, %i : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}

// -----

func.func @expert_combine_type(%y: tensor<4x2x8x64xf32>, %i: tensor<2x16x2xi64>) -> tensor<2x16x2x64xbf16> {
  // expected-error @+1 {{'part.expert_combine' op element types differ: 'f32' and 'bf16'}}
  %0 = part.expert_combine %y, %i : (tensor<4x2x8x64xf32>, tensor<2x16x2xi64>) -> tensor<2x16x2x64xbf16>
  return %0 : tensor<2x16x2x64xbf16>
}

// -----

func.func @concat_none() -> tensor<4xf32> {
  // expected-error @+2 {{'part.concat' op needs at least one operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "part.concat"() {dim = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_dim(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+2 {{'part.concat' op concatenation dimension 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.concat %x, %x dim 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concat_element_types(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) -> tensor<4x16xf32> {
  // expected-error @+2 {{'part.concat' op element types differ: operand 0 has 'f32' and operand 1 has 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.concat %x, %y dim 1 : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @concat_shapes(%x: tensor<4x8xf32>, %y: tensor<2x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+2 {{'part.concat' op operand 1 has shape [2, 8], which does not match operand 0 [4, 8] outside dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.concat %x, %y dim 1 : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @gather_axis(%t: tensor<100x8xf32>, %i: tensor<4xi32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{'part.gather' op gather axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = part.gather %t, %i axis 2 : (tensor<100x8xf32>, tensor<4xi32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @collective_unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.all_reduce' op refers to @other, which is not a part.mesh}}
  %0 = part.all_reduce %x on @other axes ["tp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @collective_no_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.all_reduce' op needs at least one mesh axis}}
  %0 = part.all_reduce %x on @mesh axes [] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @collective_unknown_axis(%x: tensor<8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'part.all_gather' op mesh @mesh has no axis "pp"}}
  %0 = part.all_gather %x on @mesh axes ["pp"] dim 0 : tensor<8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @collective_axis_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.all_reduce' op lists mesh axis "tp" twice}}
  %0 = part.all_reduce %x on @mesh axes ["tp", "tp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_reduce_type(%x: tensor<8xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{'part.all_reduce' op requires the same type for all operands and results}}
  %0 = "part.all_reduce"(%x) {mesh = @mesh, axes = ["tp"], kind = 0 : i32} : (tensor<8xf32>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_element_type(%x: tensor<8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{'part.all_gather' op result 'tensor<32xf16>' must have the rank and element type of the operand 'tensor<8xf32>'}}
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<8xf32> -> tensor<32xf16>
  return %0 : tensor<32xf16>
}

// -----

// 2^62 bytes per device, but gathered over 4 devices the dimension is 2^63.
part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_overflow(%x: tensor<2305843009213693952xf16>) {
  // expected-error @+1 {{'part.all_gather' op operand dimension 0 of size 2305843009213693952 times the group size 4 overflows int64}}
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<2305843009213693952xf16> -> tensor<8xf16>
  return
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_dim(%x: tensor<8xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'part.all_gather' op dim 1 is out of range for rank 1}}
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 1 : tensor<8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_gather_shape(%x: tensor<8x2xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{'part.all_gather' op result shape [16, 2] must be [32, 2] for operand [8, 2] and group size 4}}
  %0 = part.all_gather %x on @mesh axes ["tp"] dim 0 : tensor<8x2xf32> -> tensor<16x2xf32>
  return %0 : tensor<16x2xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @reduce_scatter_divisible(%x: tensor<6xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'part.reduce_scatter' op operand dimension 0 of size 6 is not divisible by the group size 4}}
  %0 = part.reduce_scatter %x on @mesh axes ["tp"] dim 0 sum : tensor<6xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @reduce_scatter_shape(%x: tensor<16xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.reduce_scatter' op result shape [8] must be [2] for operand [16] and group size 8}}
  %0 = part.reduce_scatter %x on @mesh axes ["dp", "tp"] dim 0 sum : tensor<16xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_to_all_rank(%x: tensor<8x4xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'part.all_to_all' op result 'tensor<32xf32>' must have the rank and element type of the operand 'tensor<8x4xf32>'}}
  %0 = part.all_to_all %x on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<8x4xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_to_all_dims(%x: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'part.all_to_all' op concat_dim 2 is out of range for rank 2}}
  %0 = part.all_to_all %x on @mesh axes ["tp"] split_dim 0 concat_dim 2 : tensor<8x4xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_to_all_divisible(%x: tensor<6x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'part.all_to_all' op operand dimension 0 of size 6 is not divisible by the group size 4}}
  %0 = part.all_to_all %x on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<6x4xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_to_all_shape(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'part.all_to_all' op result shape [8, 4] must be [2, 16] for operand [8, 4] and group size 4}}
  %0 = part.all_to_all %x on @mesh axes ["tp"] split_dim 0 concat_dim 1 : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_odd(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.collective_permute' op pairs must hold [source, target] pairs, got 3 indices}}
  %0 = "part.collective_permute"(%x) {mesh = @mesh, axes = ["tp"], pairs = array<i64: 0, 1, 2>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.collective_permute' op pair [1, 4] is out of range for group size 4}}
  %0 = part.collective_permute %x on @mesh axes ["tp"] pairs [[0, 1], [1, 4]] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_source_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.collective_permute' op device 0 is the source of more than one pair}}
  %0 = part.collective_permute %x on @mesh axes ["tp"] pairs [[0, 1], [0, 2]] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @permute_target_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.collective_permute' op device 2 is the target of more than one pair}}
  %0 = part.collective_permute %x on @mesh axes ["tp"] pairs [[0, 2], [1, 2]] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @stage0 = <["dp"=2]>
func.func @send_unknown_mesh(%x: tensor<8xf32>) {
  // expected-error @+1 {{'part.send' op refers to @stage1, which is not a part.mesh}}
  part.send %x to @stage1 channel 0 : tensor<8xf32>
  return
}

// -----

part.mesh @stage0 = <["dp"=2]>
func.func @recv_channel() -> tensor<8xf32> {
  // expected-error @+1 {{'part.recv' op channel must be non-negative, got -1}}
  %0 = part.recv from @stage0 channel -1 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// part.spmd and part.name
//===----------------------------------------------------------------------===//

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @spmd_not_a_mesh(%x: tensor<8xf32>) -> tensor<8xf32> attributes {part.spmd = @other} {
  return %x : tensor<8xf32>
}
// expected-error @-3 {{'func.func' op 'part.spmd' refers to @other, which is not a part.mesh}}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @spmd_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.spmd' belongs on a function and names a part.mesh}}
  %0 = part.neg %x {part.spmd = @mesh} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
// expected-error @+1 {{'func.func' op has an invalid sharding on argument 0: mesh @mesh has no axis "pp"}}
func.func private @spmd_checks_axes(%x: tensor<3xf32> {part.sharding = #part.sharding<@mesh, [{"pp"}]>}) attributes {part.spmd = @mesh}

// -----

// expected-error @+1 {{'func.func' op 'part.name' on argument 0 must be a non-empty string, got ""}}
func.func private @empty_name(%x: tensor<8xf32> {part.name = ""})

// -----

// expected-error @+1 {{'func.func' op 'part.name' on result 0 must be a non-empty string, got 3 : i64}}
func.func private @name_not_string(%x: tensor<8xf32>) -> (tensor<8xf32> {part.name = 3})

// -----

// expected-error @+1 {{'func.func' op 'part.grad_of' on result 1 must be an i64 argument index, got "w"}}
func.func private @grad_of_not_index(%w: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32> {part.grad_of = "w"})

// -----

// expected-error @+1 {{'func.func' op 'part.grad_of' on result 1 is 1, but the function has 1 arguments}}
func.func private @grad_of_range(%w: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32> {part.grad_of = 1 : i64})

// -----

// expected-error @+1 {{'func.func' op 'part.loss_weight' on result 1 must be a finite float, got "0.1"}}
func.func private @loss_weight_not_float(%w: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32> {part.loss_weight = "0.1"})

// -----

func.func @grad_of_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.grad_of' belongs on function results, not on an op}}
  %0 = part.neg %x {part.grad_of = 0 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @layer_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.layer' must be a non-negative i64 layer index, got -1 : i64}}
  %0 = part.neg %x {part.layer = -1 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @layer_not_integer(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.layer' must be a non-negative i64 layer index, got "h.0"}}
  %0 = part.neg %x {part.layer = "h.0"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @recomputed_not_unit(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.recomputed' is a unit attribute, got true}}
  %0 = part.neg %x {part.recomputed = true} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @name_on_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.name' belongs on function arguments, not on an op}}
  %0 = part.neg %x {part.name = "y"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @origin_not_string(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.sharding_origin' must be a string}}
  %0 = part.neg %x {part.sharding_origin = 3} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'part.sharding_origin' on argument 0 must be a string}}
func.func private @arg_origin_not_string(%x: tensor<8xf32> {part.sharding_origin = 3})

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @all_slice_shape(%x: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'part.all_slice' op result shape [4, 2] must be [2, 2] for operand [8, 2] and group size 4}}
  %0 = part.all_slice %x on @mesh axes ["tp"] dim 0 : tensor<8x2xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @softmax_negative_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'part.softmax' op dim -1 is out of range for rank 2}}
  %0 = part.softmax %x dim -1 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

part.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @axis_index_axis() -> tensor<i32> {
  // expected-error @+1 {{'part.axis_index' op mesh @mesh has no axis "pp"}}
  %0 = part.axis_index on @mesh axes ["pp"] : tensor<i32>
  return %0 : tensor<i32>
}

// -----

// expected-error @+1 {{'part.init' on argument 0 belongs on a #part.role<state> argument}}
func.func @init_on_parameter(%w: tensor<4xf32> {part.role = #part.role<parameter>, part.init = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'part.init' on argument 0 is the float 1.000000e+00, but the argument is 'tensor<4xi32>'}}
func.func @float_init_on_integers(%s: tensor<4xi32> {part.role = #part.role<state>, part.init = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'part.init' on argument 0 must be a float or the name of a parameter, got 3 : i64}}
func.func @init_not_float_or_name(%s: tensor<4xf32> {part.role = #part.role<state>, part.init = 3}) {
  return
}

// -----

// expected-error @+1 {{'part.loss_scale' on argument 0 must be a unit attribute on a tensor<f32> state argument, got unit on 'tensor<2xf32>'}}
func.func @loss_scale_not_scalar(%s: tensor<2xf32> {part.role = #part.role<state>, part.loss_scale}) {
  return
}

// -----

// Weights files hold parameters and state only: the plan loader rejects a
// stored shape on an input.
// expected-error @+1 {{'part.stored_shape' on argument 0 belongs on a #part.role<parameter> or #part.role<state> argument, not on an input argument}}
func.func @stored_shape_on_input(%x: tensor<2x3xf32> {part.stored_shape = array<i64: 6>}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_shape' on argument 1 belongs on a #part.role<parameter> or #part.role<state> argument, not on a #part.role<label> argument}}
func.func @stored_shape_on_label(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 6>},
                                 %y: tensor<2x3xi32> {part.role = #part.role<label>, part.stored_shape = array<i64: 6>}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_shape' on argument 0 must be an array<i64> on a function, got [6]}}
func.func @stored_shape_not_array(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = [6]}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_shape' on argument 0 is array<i64: 3, 2>, which the argument's shape 'tensor<2x3xf32>' does not view (each stored dimension must be the product of consecutive dimensions of the argument)}}
func.func @stored_shape_not_a_view(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 3, 2>}) {
  return
}

// -----

// A file holding the weight [out, in] as torch does, viewed [in, out]: the
// view is of the permuted shape [3, 2], which [2, 3] is not.
// expected-error @+1 {{'part.stored_shape' on argument 0 is array<i64: 2, 3> permuted by array<i64: 1, 0>, which the argument's shape 'tensor<2x3xf32>' does not view (each stored dimension must be the product of consecutive dimensions of the argument)}}
func.func @stored_permutation_not_a_view(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 2, 3>, part.stored_permutation = array<i64: 1, 0>}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_permutation' on argument 0 must be an array<i64> on a function, got [1, 0]}}
func.func @stored_permutation_not_array(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 3, 2>, part.stored_permutation = [1, 0]}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_permutation' on argument 0 needs a 'part.stored_shape' on the argument (the shape weights files hold it in)}}
func.func @stored_permutation_alone(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>}) {
  return
}

// -----

// expected-error @+1 {{'part.stored_permutation' on argument 0 is array<i64: 1, 1>, which does not permute the 2 dimensions of its 'part.stored_shape' array<i64: 2, 3>}}
func.func @stored_permutation_repeats(%w: tensor<2x3xf32> {part.role = #part.role<parameter>, part.stored_shape = array<i64: 2, 3>, part.stored_permutation = array<i64: 1, 1>}) {
  return
}

//===----------------------------------------------------------------------===//
// Tensor sizes
//===----------------------------------------------------------------------===//

// -----

func.func @elements_overflow(%a: tensor<1099511627776x1099511627776xf32>) {
  // expected-error @+1 {{'part.neg' op tensor too large: the dimensions of 'tensor<1099511627776x1099511627776xf32>' multiply to more than 9223372036854775807 elements}}
  %0 = part.neg %a : tensor<1099511627776x1099511627776xf32>
  return
}

// -----

func.func @bytes_overflow(%a: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'part.neg' op tensor too large: 'tensor<4611686018427387904xf32>' has 4611686018427387904 elements of 4 bytes, which overflows int64}}
  %0 = part.neg %a : tensor<4611686018427387904xf32>
  return
}

// -----

// part-optimizer's records for part-zero are checked where they stand.
// expected-error @+1 {{'part.state_of' on argument 1 belongs on a #part.role<state> argument and names an argument (its parameter), got 7 : i64}}
func.func @bad_state_of(%w: tensor<8xf32> {part.role = #part.role<parameter>},
                        %m: tensor<8xf32> {part.role = #part.role<state>, part.state_of = 7 : i64}) {
  return
}

// -----

func.func @bad_gradient_of(%w: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.gradient_of' belongs on an op of one result and names an argument of the function (the parameter whose gradient the result is), got -1 : i64}}
  %0 = part.add %w, %w {part.gradient_of = -1 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'part.logical_shape' on argument 0 must be an array<i64> of the value's rank, got array<i64: 3>}}
func.func @logical_rank(%x: tensor<4x8xf32> {part.logical_shape = array<i64: 3>}) {
  return
}

// -----

// The unpadded shape is at most the padded one.
// expected-error @+1 {{'func.func' op 'part.logical_shape' on result 0 has dimension 1 of size 9, which is not in [1, 8]}}
func.func @logical_size(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {part.logical_shape = array<i64: 4, 9>}) {
  return %x : tensor<4x8xf32>
}

// -----

// part.model_flops: an integer of at least 0, on a module.
// expected-error @+1 {{'builtin.module' op 'part.model_flops' belongs on a module and is an integer of at least 0 (the model FLOPs of one step), got -1 : i64}}
module attributes {part.model_flops = -1 : i64} {
}

// -----

// expected-error @+1 {{'builtin.module' op 'part.model_flops' belongs on a module and is an integer of at least 0 (the model FLOPs of one step), got 5.000000e-01 : f64}}
module attributes {part.model_flops = 0.5 : f64} {
}

// -----

func.func @model_flops_on_an_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'part.neg' op 'part.model_flops' belongs on a module and is an integer of at least 0 (the model FLOPs of one step), got 12 : i64}}
  %0 = part.neg %x {part.model_flops = 12 : i64} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
