// RUN: partition-translate --part-to-plan %s -o %t.plan
// RUN: partition-run %t.plan --dump | FileCheck %s
// RUN: rm -rf %t.out && mkdir -p %t.out
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8))"
// RUN: partition-run %t.plan --input x=%t.x.npy --output-dir %t.out > /dev/null
// RUN: %python -c "import numpy as np; x = np.load('%t.x.npy'); e = np.exp(x); assert np.allclose(np.load('%t.out/y.npy'), 2 * e, rtol=1e-6) and np.allclose(np.load('%t.out/z.npy'), e, rtol=1e-6)"

// Collectives over a group of one device move nothing: their results are
// their operands (no instruction, no copy). On a mesh with "dp"=1 the
// gradients' data-parallel all_reduce is one of these.
part.mesh @mesh = <["dp"=1, "tp"=2]>
func.func @f(%x: tensor<4x8xf32> {part.name = "x"}) -> (tensor<4x8xf32> {part.name = "y"}, tensor<4x8xf32> {part.name = "z"})
    attributes {part.spmd = @mesh} {
  %e = part.exp %x : tensor<4x8xf32>
  %0 = part.all_reduce %e on @mesh axes ["dp"] sum : tensor<4x8xf32>
  %1 = part.all_gather %0 on @mesh axes ["dp"] dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = part.all_reduce %1 on @mesh axes ["tp"] sum : tensor<4x8xf32>
  %3 = part.reduce_scatter %2 on @mesh axes ["dp"] dim 1 sum : tensor<4x8xf32> -> tensor<4x8xf32>
  return %3, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
// CHECK: program 0 @f on @mesh: 6 values, 2 instructions
// CHECK: %[[E:[0-9]+]] = Exp(%0)
// CHECK-NEXT: %[[R:[0-9]+]] = AllReduce Sum over {"tp"} (group of 2)(%[[G:[0-9]+]])
// CHECK-NEXT: %[[A:[0-9]+]] = alias of %[[E]]
// CHECK-NEXT: %[[G]] = alias of %[[A]]
// CHECK-NEXT: %[[S:[0-9]+]] = alias of %[[R]]
// CHECK-NEXT: output "y" %[[S]]
// CHECK-NEXT: output "z" %[[G]]
