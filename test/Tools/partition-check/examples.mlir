// partition-check on the GPT-2, Llama and BERT examples (their annotations
// for a 2 x 4 mesh are dropped; part-spmd chooses the shardings) on three
// meshes each: every output agrees with the one-device run (exit code 0).
//
// Tolerance: |partitioned - unpartitioned| <= 1e-5 + 1e-4 * max|unpartitioned|
// per output, the tool's default. With weights in [-1, 1) the largest errors
// measured were 1.1e-4 on Llama's outputs (largest magnitude 2e2: the bound is
// 2e-2) and 1e-6 on the losses; a dropped all-reduce moves them by orders of
// magnitude more (broken-rule.mlir).
//
// RUN: for f in gpt2 llama bert; do \
// RUN:   for m in dp:2 tp:2 dp:2,tp:2; do \
// RUN:     echo "== $f $m"; \
// RUN:     partition-check %S/../../Examples/$f.mlir --mesh $m || exit 1; \
// RUN:   done; \
// RUN: done > %t.log
// RUN: FileCheck %s < %t.log
//
// CHECK-LABEL: == gpt2 dp:2
// CHECK: gpt2.mlir on mesh dp:2 against one device
// CHECK: the model's sharding annotations are dropped
// CHECK: ranks: 2
// The token ids and labels below the vocabulary's 512 rows:
// CHECK: arg0 in [0, 512), arg1 in [0, 512)
// CHECK: tolerance: |partitioned - unpartitioned| <= 1e-05 + 0.0001 * max|unpartitioned| per output
// CHECK: output0 f32[]: max abs error
// CHECK-NEXT: PASS
// CHECK-LABEL: == gpt2 tp:2
// CHECK: PASS
// CHECK-LABEL: == gpt2 dp:2,tp:2
// CHECK: ranks: 4
// CHECK: PASS
// CHECK-LABEL: == llama dp:2
// CHECK: output0 f32[8, 16, 64]: max abs error
// CHECK-NEXT: PASS
// CHECK-LABEL: == llama tp:2
// CHECK: PASS
// CHECK-LABEL: == llama dp:2,tp:2
// CHECK: PASS
// CHECK-LABEL: == bert dp:2
// CHECK: PASS
// CHECK-LABEL: == bert tp:2
// CHECK: PASS
// CHECK-LABEL: == bert dp:2,tp:2
// CHECK: PASS
