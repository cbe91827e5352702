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

// A sharded argument's global shape is its local shape times the shards.
part.mesh @mesh = <["dp"=8]>
// expected-error @+1 {{global dimension 0 of x (1152921504606846976 x 8 shards) overflows int64}}
func.func @f(%x: tensor<1152921504606846976xi32> {part.name = "x", part.sharding = #part.sharding<@mesh, [{"dp"}]>}) attributes {part.spmd = @mesh} {
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
