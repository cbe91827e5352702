// With a deliberately broken sharding rule (the hidden, test-only
// --test-drop-matmul-reduction: part-partition leaves out the all-reduce
// that completes a matmul whose contracted dimension is split), the
// partitioned GPT-2 computes something else: partition-check exits 1 and
// bisects to the first such matmul, the attention output projection of the
// first block, with its operands' and result's shardings.
//
// RUN: partition-check %S/../../Examples/gpt2.mlir --mesh tp:2 --test-drop-matmul-reduction > %t.log 2>&1; echo "exit $?" >> %t.log
// RUN: FileCheck %s < %t.log
// The same on dp:2,tp:2, and for Llama, whose first such matmul is also
// the attention output projection:
// RUN: partition-check %S/../../Examples/gpt2.mlir --mesh dp:2,tp:2 --test-drop-matmul-reduction > %t.dptp 2>&1; echo "exit $?" >> %t.dptp
// RUN: FileCheck %s --check-prefix=DPTP < %t.dptp
// RUN: partition-check %S/../../Examples/llama.mlir --mesh tp:2 --test-drop-matmul-reduction > %t.llama 2>&1; echo "exit $?" >> %t.llama
// RUN: FileCheck %s --check-prefix=LLAMA < %t.llama
// Without --test-drop-matmul-reduction the same check passes
// (examples.mlir); on dp:2 alone no matmul's contraction is split, so the
// broken rule changes nothing:
// RUN: partition-check %S/../../Examples/gpt2.mlir --mesh dp:2 --test-drop-matmul-reduction | FileCheck %s --check-prefix=DP
//
// CHECK: output0 f32[]: MISMATCH at []: partitioned {{.*}} vs unpartitioned {{.*}} (abs error
// CHECK: FAIL: the partitioned program differs
// CHECK: bisecting the forward model (57 ops)
// CHECK: cut after op 56 (part.softmax_cross_entropy) at {{.*}}gpt2.mlir:142:11: differs
// CHECK: first differing op: op 18 part.matmul at {{.*}}gpt2.mlir:103:21
// CHECK-NEXT: source: %h0_attn_out_mm = part.matmul %h0_attn_merged, %h0_attn_wo
// CHECK-NEXT: operand 0 sharding: #part.sharding<@mesh, [{}, {}, {"tp"}]>
// CHECK-NEXT: operand 1 sharding: #part.sharding<@mesh, [{"tp"}, {}]>
// CHECK-NEXT: result 0 sharding: #part.sharding<@mesh, [{}, {}, {}], unreduced={"tp"}>
// CHECK-NEXT: result at [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}]: partitioned {{.*}} vs unpartitioned
// CHECK-NEXT: exit 1
//
// DPTP: first differing op: op 18 part.matmul at {{.*}}gpt2.mlir:103:21
// DPTP: operand 0 sharding: #part.sharding<@mesh, [{"dp"}, {}, {"tp"}]>
// DPTP-NEXT: operand 1 sharding: #part.sharding<@mesh, [{"tp"}, {}]>
// DPTP-NEXT: result 0 sharding: #part.sharding<@mesh, [{"dp"}, {}, {}], unreduced={"tp"}>
// DPTP: exit 1
//
// LLAMA: first differing op: op {{[0-9]+}} part.matmul at {{.*}}llama.mlir:59:15
// LLAMA-NEXT: source: %attn_out = part.matmul %attn_merged, %wo
// LLAMA: result 0 sharding: #part.sharding<@mesh, [{}, {}, {}], unreduced={"tp"}>
// LLAMA: exit 1
//
// DP: PASS
