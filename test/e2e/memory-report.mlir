// Memory report: `partition-translate --part-to-plan --part-memory-report`
// prints each per-device program's bytes by category, and `partition-run
// --memory-report` what each rank's executor allocated. On the generated
// MLP and GPT training steps of train.mlir (AdamW), in f32 and in mixed
// precision (bf16 parameters and gradients, f32 master copies and moments),
// partitioned on dp:2 with zero = 0, 1, 2, 3, memory_report.py checks that
// per device
//                 f32                 bf16
//   parameters  = 4 Psi, 4 Psi / N    2 Psi, 2 Psi / N   (zero 3)
//   gradients   = 4 Psi, 4 Psi / N    2 Psi, 2 Psi / N   (zero >= 1)
//   state       = 8 Psi, 8 Psi / N    12 Psi, 12 Psi / N (zero >= 1)
// -- mixed precision: 16 Psi, 2 Psi + 14 Psi / N (zero 1 and 2; stage 1
// reduce-scatters each gradient once like stage 2, below the ZeRO paper's
// 4 Psi + 12 Psi / N for stage 1), 16 Psi / N (zero 3) -- plus AdamW's scalar step count (4 bytes, which ZeRO leaves
// whole; every other tensor's dimension 0 is even here), with Psi the
// global parameter count and N = 2, and that every rank allocated exactly
// what the compiler planned, category by category (scratch apart).
// Gradients are arena values (the report's gradients row is part of the
// arena row), the operands where part-optimizer's update reads them.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/train_data.py %t 4 8 64
// RUN: for model in gpt mlp; do \
// RUN:   if [ $model = gpt ]; then \
// RUN:     partition-import --model gpt --layers 2 --hidden 32 --heads 4 --vocab 64 --seq 8 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input tokens=%t/tokens.npy --input labels=%t/labels.npy"; \
// RUN:   else \
// RUN:     partition-import --model mlp --layers 3 --hidden 16 --ffn 32 --batch 4 --seed 3 -o %t/$model.mlir --weights %t/$model.safetensors || exit 1; \
// RUN:     feed="--input x=%t/x.npy --input targets=%t/targets.npy"; \
// RUN:   fi; \
// RUN:   loss=cross-entropy; [ $model = mlp ] && loss=mse; \
// RUN:   for p in f32 bf16; do \
// RUN:     mp=""; [ $p = bf16 ] && mp="--part-mixed-precision"; \
// RUN:     partition-opt %t/$model.mlir --part-append-loss="kind=$loss" $mp --part-autodiff --part-optimizer="kind=adamw lr=1e-3" > %t/$model-$p-step.mlir || exit 1; \
// RUN:     for z in 0 1 2 3; do \
// RUN:       n=$model-zero$z; [ $p = bf16 ] && n=$model-bf16-zero$z; \
// RUN:       partition-opt %t/$model-$p-step.mlir --part-spmd="mesh=dp:2 zero=$z" | partition-translate --part-to-plan --part-memory-report -o %t/$n.plan 2> %t/$n.report || exit 1; \
// RUN:       partition-run %t/$n.plan --backend cpu --steps 2 --weights %t/$model.safetensors $feed --memory-report > %t/$n.log || exit 1; \
// RUN:       partition-run %t/$n.plan --dump > %t/$n.dump || exit 1; \
// RUN:       %python %S/Inputs/memory_report.py $z 2 %t/$n.report %t/$n.log %t/$n.dump $p || exit 1; \
// RUN:     done; \
// RUN:   done; \
// RUN: done
// RUN: FileCheck %s --check-prefix=MLP0 < %t/mlp-zero0.report
// RUN: FileCheck %s --check-prefix=MLP1 < %t/mlp-zero1.report
// RUN: FileCheck %s --check-prefix=MLP3 < %t/mlp-zero3.report
// RUN: FileCheck %s --check-prefix=RUN3 < %t/mlp-zero3.log
// RUN: FileCheck %s --check-prefix=GPT3 < %t/gpt-zero3.report
// RUN: FileCheck %s --check-prefix=BF16-0 < %t/mlp-bf16-zero0.report
// RUN: FileCheck %s --check-prefix=BF16-2 < %t/mlp-bf16-zero2.report
// New values are computed straight into their parameter's or state's
// buffer when nothing reads the old value afterwards (the plan dump says
// "in place"). The step count is read by the op that makes its successor:
// that op is fused with the ops that read the new count (one kernel, which
// reads each element before writing it), so the count is written in place
// too; with one kernel per op it is copied back after the step instead.
// RUN: FileCheck %s --check-prefix=INPLACE < %t/mlp-zero0.dump
// INPLACE: output "new.layers.0.weight" {{.*}} updates "layers.0.weight" in place
// INPLACE: output "new.adam.v.layers.0.weight" {{.*}} updates "adam.v.layers.0.weight" in place
// INPLACE: output "new.optimizer.step" {{.*}} updates "optimizer.step" in place
// RUN: partition-opt %t/mlp-f32-step.mlir --part-spmd="mesh=dp:2" | partition-translate --part-to-plan --part-fuse-elementwise=false -o %t/unfused.plan
// RUN: partition-run %t/unfused.plan --dump | FileCheck %s --check-prefix=COPIED
// COPIED: output "new.adam.v.layers.0.weight" {{.*}} updates "adam.v.layers.0.weight" in place
// COPIED: output "new.optimizer.step" {{.*}} updates "optimizer.step"{{$}}
// Without the flag there is no report:
// RUN: partition-opt %t/mlp-f32-step.mlir --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/plain.plan 2>&1 | FileCheck %s --allow-empty --check-prefix=PLAIN

// The MLP has Psi = 16*32 + 32 + 32*32 + 32 + 32*16 + 16 = 2128 parameters:
// 4 Psi = 8512 parameter bytes and 8 Psi + 4 = 17028 state bytes without
// ZeRO, state halved by ZeRO-1 (8 Psi / 2 + 4 = 8516), parameters too by
// ZeRO-3 (4 Psi / 2 = 4256).
// MLP0: memory report of @mlp on @mesh (2 devices), bytes per device:
// MLP0-NEXT: parameters 8512
// MLP0-NEXT: state 17028 (optimizer state)
// MLP0: all devices {{[0-9]+}} bytes; Psi 2128 parameter elements (global)

// MLP1: memory report of @mlp on @mesh (2 devices), bytes per device:
// MLP1-NEXT: parameters 8512
// MLP1-NEXT: state 8516 (optimizer state)
// MLP1: Psi 2128 parameter elements

// MLP3: memory report of @mlp on @mesh (2 devices), bytes per device:
// MLP3-NEXT: parameters 4256
// MLP3-NEXT: state 8516 (optimizer state)
// MLP3-NEXT: constants {{[0-9]+}}
// MLP3-NEXT: inputs 256 (inputs and labels)
// MLP3-NEXT: arena {{[0-9]+}} (peak of activations, gradients and temporaries, after reuse)
// MLP3-NEXT: total {{[0-9]+}}
// MLP3-NEXT: gradients 4256 (in the arena: the gradients as the optimizer reads them, reduced; each lives from its reduction to its update)
// MLP3-NEXT: all devices {{[0-9]+}} bytes; Psi 2128 parameter elements (global)

// RUN3: rank 0 memory: parameters 4256, state 8516, constants {{[0-9]+}}, inputs 256, arena {{[0-9]+}}, scratch {{[0-9]+}}, total
// RUN3: rank 1 memory: parameters 4256, state 8516,

// GPT3: memory report of @gpt on @mesh (2 devices), bytes per device:
// GPT3-NEXT: parameters {{[0-9]+}}
// GPT3-NEXT: state {{[0-9]+}} (optimizer state)

// In mixed precision: 2 Psi = 4256 bytes of bf16 parameters and of
// gradients, and 12 Psi + 4 = 25540 bytes of master copies, moments and the
// step without ZeRO, 16 Psi in all; with ZeRO-2 the gradients and state
// are halved: 2 Psi + 14 Psi / 2 = 9 Psi.
// BF16-0: parameters 4256
// BF16-0-NEXT: state 25540 (optimizer state)
// BF16-0: gradients 4256 (in the arena
// BF16-2: parameters 4256
// BF16-2-NEXT: state 12772 (optimizer state)
// BF16-2: gradients 2128 (in the arena

// PLAIN-NOT: memory report
