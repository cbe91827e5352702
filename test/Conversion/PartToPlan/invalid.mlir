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
