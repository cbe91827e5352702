// part-to-plan lowers chains of elementwise float ops as one Fused kernel
// each (lib/Conversion/PartToPlan/Fusion.cpp): what joins a chain and what
// stops one, the AdamW update of a parameter as one kernel writing the
// parameter and its moment in place, and the same bits as the unfused plan,
// here and for whole training steps.
//
// RUN: rm -rf %t && mkdir -p %t/fused %t/unfused
// RUN: partition-translate --part-to-plan %s -o %t/fused.plan --part-memory-report 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: partition-translate --part-to-plan %s -o %t/unfused.plan --part-fuse-elementwise=false
// RUN: partition-run %t/fused.plan --dump | FileCheck %s
// RUN: partition-run %t/unfused.plan --dump | FileCheck %s --check-prefix=UNFUSED
//
// Fusion keeps intermediates out of memory: an arena of 576 bytes, 1024
// without reuse (unfused: 640 and 1664).
// MEMORY: remark: per-device memory of @f: arena 576 bytes (1024 without reuse)
// UNFUSED-NOT: Fused
// UNFUSED: = Exp(
//
// The same bits as one kernel per op, on random inputs, three steps (the
// update writes b and m in place, so steps 2 and 3 read what the fused
// kernel wrote):
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); np.save('%t/x.npy', r.standard_normal((4, 8)).astype(np.float32)); np.save('%t/col.npy', r.standard_normal((4, 1)).astype(np.float32))"
// RUN: for v in fused unfused; do partition-run %t/$v.plan --random-weights 3 --input x=%t/x.npy --input col=%t/col.npy --steps 3 --output-dir %t/$v --checkpoint %t/$v/ckpt > /dev/null || exit 1; done
// RUN: for f in y s z h; do cmp %t/fused/$f.npy %t/unfused/$f.npy || exit 1; done
// RUN: cmp %t/fused/ckpt/rank-0.safetensors %t/unfused/ckpt/rank-0.safetensors
//
// Whole AdamW training steps of a generated GPT, f32 and bf16 mixed
// precision, on one rank and on dp:2,tp:2: the fused plan's losses and
// final weights and moments are the unfused plan's, bit for bit.
// RUN: %python %S/../../e2e/Inputs/train_data.py %t 4 8 64
// RUN: partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/gpt.mlir --weights %t/gpt.safetensors
// RUN: for p in f32 bf16; do for mesh in dp:1 dp:2,tp:2; do \
// RUN:   mp=""; [ $p = bf16 ] && mp="--part-mixed-precision"; \
// RUN:   partition-opt %t/gpt.mlir --part-append-loss="kind=cross-entropy" $mp --part-autodiff --part-optimizer="kind=adamw lr=1e-2" --part-spmd="mesh=$mesh" -o %t/step.mlir || exit 1; \
// RUN:   for v in fused unfused; do \
// RUN:     flag=""; [ $v = unfused ] && flag="--part-fuse-elementwise=false"; \
// RUN:     partition-translate --part-to-plan $flag %t/step.mlir -o %t/$v-step.plan || exit 1; \
// RUN:     partition-run %t/$v-step.plan --backend cpu --steps 3 --weights %t/gpt.safetensors --input tokens=%t/tokens.npy --input labels=%t/labels.npy --checkpoint %t/$v-$p-$mesh > %t/$v-$p-$mesh.log || exit 1; \
// RUN:   done; \
// RUN:   grep loss %t/fused-$p-$mesh.log > %t/a.txt; grep loss %t/unfused-$p-$mesh.log > %t/b.txt; \
// RUN:   test -s %t/a.txt && cmp %t/a.txt %t/b.txt || exit 1; \
// RUN:   for r in %t/fused-$p-$mesh/rank-*.safetensors; do cmp $r %t/unfused-$p-$mesh/$(basename $r) || exit 1; done; \
// RUN:   partition-run %t/fused-step.plan --dump | grep -c " = Fused " > %t/count-$p-$mesh.txt; \
// RUN: done; done
// RUN: cat %t/count-f32-dp:1.txt | FileCheck %s --check-prefix=COUNT
// COUNT: {{^[1-9][0-9]+$}}

part.mesh @mesh = <["dp"=1]>
func.func @f(%x: tensor<4x8xf32> {part.name = "x", part.role = #part.role<input>},
             %w: tensor<8x8xf32> {part.name = "w", part.role = #part.role<parameter>},
             %b: tensor<8xf32> {part.name = "b", part.role = #part.role<parameter>},
             %m: tensor<8xf32> {part.name = "m", part.role = #part.role<state>, part.state_of = 2 : i64},
             %col: tensor<4x1xf32> {part.name = "col", part.role = #part.role<input>})
    -> (tensor<4x8xf32> {part.name = "y"}, tensor<f32> {part.name = "s"}, tensor<4x8xf32> {part.name = "z"}, tensor<4x8xf32> {part.name = "h"},
        tensor<8xf32> {part.name = "new.b", part.updates = 2 : i64}, tensor<8xf32> {part.name = "new.m", part.updates = 3 : i64})
    attributes {part.spmd = @mesh} {
  %a = part.exp %x : tensor<4x8xf32>
  %mm = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %c = part.add %a, %mm : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %biased = part.add %c, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %d = part.tanh %biased : tensor<4x8xf32>
  %e = part.neg %d : tensor<4x8xf32>
  %s = part.reduce_sum %e dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %f = part.mul %e, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = part.mul %f, %col : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %k = part.cast %f : tensor<4x8xf32> -> tensor<4x8xbf16>
  %l = part.gelu %k tanh : tensor<4x8xbf16>
  %z = part.cast %l : tensor<4x8xbf16> -> tensor<4x8xf32>
  %g = part.reduce_sum %h dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %beta = part.constant dense<0.9> : tensor<f32>
  %one_minus = part.constant dense<0.1> : tensor<f32>
  %lr = part.constant dense<0.01> : tensor<f32>
  %mpart = part.mul %m, %beta : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %gpart = part.mul %g, %one_minus : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %newm = part.add %mpart, %gpart : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %step = part.mul %newm, %lr : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %newb = part.sub %b, %step : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %d, %s, %z, %h, %newb, %newm : tensor<4x8xf32>, tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Exp does not join the add: the matmul between them would keep x alive.
// CHECK: %[[EXP:[0-9]+]] = Exp(%0) : f32[4, 8] @arena
// CHECK: %[[MM:[0-9]+]] = Matmul
// The adds (the bias repeating along rows), tanh and neg form one kernel;
// tanh's value is a result (an output), and so is neg's (read by the
// reduction):
// CHECK: %[[D:[0-9]+]], %[[E:[0-9]+]] = Fused {steps=[Add($0, $1), Add($3, $2), Tanh($4), Neg($5)], outputs=[$5, $6]}(%[[EXP]], %[[MM]], %2) : f32[4, 8] @arena+{{[0-9]+}}, f32[4, 8] @arena+{{[0-9]+}}
// The reduction reads neg's value before the mul does, so the mul cannot
// join neg's kernel (it would run after its reader); a [4, 1] operand does
// not repeat along leading dimensions, so that mul is its own kernel too:
// CHECK: %[[S:[0-9]+]] = ReduceSum {dims=[0, 1]}(%[[E]])
// CHECK: %[[F:[0-9]+]] = Mul(%[[E]], %[[E]])
// CHECK: %[[H:[0-9]+]] = Mul(%[[F]], %4)
// A bf16 round trip: each step rounds as the unfused op's result would.
// CHECK: = Fused {steps=[Cast($0) BF16, Gelu($1) Tanh BF16, Cast($2)], outputs=[$3]}(%[[F]])
// The update of b and its moment m: one kernel, reading b and m and writing
// them in place (the kernel reads each element before writing it).
// CHECK: = Fused {steps=[Mul($0, $1), Mul($2, $3), Add($6, $7), Mul($8, $4), Sub($5, $9)], outputs=[$8, $10]}(%3, {{.*}}, %2) : f32[8] @param 2, f32[8] @param 1
// CHECK: output "new.b" {{.*}} updates "b" in place
// CHECK: output "new.m" {{.*}} updates "m" in place
