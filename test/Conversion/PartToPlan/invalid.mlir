// RUN: partition-translate --part-to-plan %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -o /dev/null

// expected-error @+1 {{no per-device program to lower: mark the function with 'part.spmd = @mesh'}}
module {
  part.mesh @mesh = <["tp"=2]>
  func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}

// -----

part.mesh @mesh = <["tp"=2]>
func.func @a() attributes {part.spmd = @mesh} {
  return
}
// expected-error @+1 {{a second per-device program for @mesh; each mesh runs one program}}
func.func @b() attributes {part.spmd = @mesh} {
  return
}

// -----

part.mesh @mesh = <["tp"=2]>
part.mesh @other = <["tp"=2]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> attributes {part.spmd = @mesh} {
  // expected-error @+1 {{'part.all_reduce' op runs on @other but its program is the per-device program of @mesh}}
  %0 = part.all_reduce %x on @other axes ["tp"] sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["tp"=2]>
part.mesh @idle = <["tp"=2]>
func.func @f(%x: tensor<8xf32>) attributes {part.spmd = @mesh} {
  // expected-error @+1 {{'part.send' op names @idle, but no part.spmd function runs on it}}
  part.send %x to @idle channel 0 : tensor<8xf32>
  return
}

// -----

part.mesh @mesh = <["tp"=2]>
part.mesh @other = <["tp"=2]>
// expected-error @+1 {{sharding names mesh @other but the program runs on @mesh}}
func.func @f(%x: tensor<8xf32> {part.sharding = #part.sharding<@other, [{"tp"}]>}) attributes {part.spmd = @mesh} {
  return
}

// -----

part.mesh @mesh = <["tp"=2]>
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> attributes {part.spmd = @mesh} {
  // expected-error @+1 {{'test.op' op has no runtime lowering (no kernel, collective or transfer)}}
  %0 = "test.op"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

part.mesh @mesh = <["tp"=2]>
// expected-error @+1 {{the runtime cannot hold a value of type 'f64' (static tensors of f32, f16, bf16, i32 or i64 only)}}
func.func @f(%x: f64) attributes {part.spmd = @mesh} {
  return
}

// -----

// An element count that overflows int64 wrapped to 0 and planned an arena of
// 128 bytes; the run then wrote far past it.
part.mesh @mesh = <["dp"=1]>
// expected-error @+1 {{tensor too large: the dimensions of 'tensor<1099511627776x1099511627776xf32>' multiply to more than 9223372036854775807 elements}}
func.func @f(%a: tensor<1099511627776x1099511627776xf32>) -> tensor<1099511627776x1099511627776xf32> attributes {part.spmd = @mesh} {
  return %a : tensor<1099511627776x1099511627776xf32>
}

// -----

// Each value fits, their sum does not.
part.mesh @mesh = <["dp"=1]>
// expected-error @+1 {{the values of @f total more than 9223372036854775807 bytes}}
func.func @f(%a: tensor<1152921504606846976xf32>, %b: tensor<1152921504606846976xf32>) attributes {part.spmd = @mesh} {
  return
}

// -----

// A sharded argument's global shape is its local shape times the shards:
// each block fits, the whole value is more than the runtime holds.
part.mesh @mesh = <["dp"=1024]>
// expected-error @+1 {{global value x has 4503599627370496 bytes; the runtime holds at most 1125899906842624}}
func.func @f(%x: tensor<1099511627776xi32> {part.name = "x", part.sharding = #part.sharding<@mesh, [{"dp"}]>}) attributes {part.spmd = @mesh} {
  return
}

// -----

// A 4 GiB splat constant would be expanded into the plan (and allocated
// while writing it).
part.mesh @mesh = <["dp"=1]>
func.func @f() -> tensor<1073741824xf32> attributes {part.spmd = @mesh} {
  // expected-error @+1 {{'part.constant' op makes the plan's constants 4294967296 bytes, more than the 1073741824 a plan file holds; pass large tensors as parameters}}
  %0 = part.constant dense<1.0> : tensor<1073741824xf32>
  return %0 : tensor<1073741824xf32>
}

// -----

// The runtime finds bindings by name: the plan loader refuses a repeated one
// (here two parameters), and so does the lowering.
part.mesh @mesh = <["dp"=1]>
// expected-error @+1 {{two parameters (with state and constants) of @f are named "w"; the runtime finds each by its name}}
func.func @f(%x: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>},
             %y: tensor<4xf32> {part.name = "w", part.role = #part.role<parameter>}) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  %0 = part.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An input named as the default name of another ("arg1").
part.mesh @mesh = <["dp"=1]>
// expected-error @+1 {{two inputs (with labels) of @f are named "arg1"; the runtime finds each by its name}}
func.func @f(%x: tensor<4xf32> {part.name = "arg1"}, %y: tensor<4xf32>) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  %0 = part.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

part.mesh @mesh = <["dp"=1]>
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {part.name = "y"}, tensor<4xf32> {part.name = "y"}) attributes {part.spmd = @mesh} {
  // expected-error @+1 {{two outputs of @f are named "y"; the runtime finds each by its name}}
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// Beyond what the plan loader accepts: a value of 2^51 bytes.
part.mesh @mesh = <["dp"=1]>
// expected-error @+1 {{the runtime holds values of at most 1125899906842624 bytes and dimensions of at most 1099511627776, not 'tensor<562949953421312xf32>'}}
func.func @f(%x: tensor<562949953421312xf32>) -> tensor<562949953421312xf32> attributes {part.spmd = @mesh} {
  return %x : tensor<562949953421312xf32>
}

// -----

// A mesh of more ranks than a plan numbers (the dialect allows 2^24).
// expected-error @+1 {{'part.mesh' op has 2097152 devices after 0 ranks of earlier meshes; a plan numbers at most 1048576 ranks}}
part.mesh @mesh = <["dp"=2097152]>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {part.spmd = @mesh} {
  return %x : tensor<4xf32>
}
