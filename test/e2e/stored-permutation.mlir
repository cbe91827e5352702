// A parameter the weights file holds transposed (part.stored_permutation):
// the linear regression of optimizer.mlir with its weight stored [3, 4], as
// torch keeps a Linear's weight, while the program multiplies by [4, 3].
// 5 AdamW steps on dp:1, dp:2 and dp:2 with ZeRO-3 (each rank's block of
// the [4, 3] view is 2 of the file's 4 columns, read as one block of the
// file and transposed) equal the numpy reference (optimizer.mlir's
// tolerances, 1e-5 + 1e-5 |ref|), and the new weight is written as the
// file holds it, [3, 4]. 3 steps, a checkpoint and 2 resumed steps equal 5
// straight steps bit for bit: the checkpoint holds the view, and the
// optimizer state (adam.m.w, adam.v.w) has the parameter's layout.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/linreg_reference.py %t adamw 5 --lr 0.01
// RUN: %python %S/Inputs/transpose_weights.py %t/weights.safetensors %t/stored.safetensors w
// RUN: %python -c "import numpy as np; np.save('%t/wt.npy', np.load('%t/w.npy').T)"
// RUN: sed 's/part.name = "w", part.role = #part.role<parameter>/part.name = "w", part.role = #part.role<parameter>, part.stored_shape = array<i64: 3, 4>, part.stored_permutation = array<i64: 1, 0>/' %S/Inputs/linreg-grad.mlir | partition-opt --part-optimizer="kind=adamw lr=0.01" > %t/step.mlir
// RUN: FileCheck %s --check-prefix=STEP < %t/step.mlir
// RUN: cd %t && for m in "dp:1" "dp:2" "dp:2 zero=3"; do \
// RUN:   d=$(echo "$m" | tr -d ': ='); \
// RUN:   partition-opt step.mlir --part-spmd="mesh=$m" | partition-translate --part-to-plan -o $d.plan 2>/dev/null && \
// RUN:   mkdir -p out-$d && \
// RUN:   partition-run $d.plan --backend cpu --steps 5 --weights stored.safetensors --input x=x.npy --input y=y.npy --output-dir out-$d > $d.log || exit 1; \
// RUN:   %python %S/Inputs/losses_agree.py 1e-5 1e-5 losses.txt $d.log || exit 1; \
// RUN:   %python %S/Inputs/compare.py 1e-5 1e-5 wt.npy out-$d/new.w.npy || exit 1; \
// RUN:   %python %S/Inputs/compare.py 1e-5 1e-5 b.npy out-$d/new.b.npy || exit 1; \
// RUN: done
// RUN: partition-run %t/dp2zero3.plan --dump | FileCheck %s --check-prefix=DUMP
// RUN: cd %t && mkdir -p resumed && feed="--backend cpu --input x=x.npy --input y=y.npy" && \
// RUN: partition-run dp2zero3.plan $feed --steps 3 --weights stored.safetensors --checkpoint ckpt > first.log && \
// RUN: partition-run dp2zero3.plan $feed --steps 2 --resume ckpt --output-dir resumed > resumed.log && \
// RUN: cat first.log resumed.log > split.log
// RUN: %python %S/Inputs/losses_agree.py 0 0 %t/dp2zero3.log %t/split.log
// RUN: %python %S/Inputs/compare_dirs.py 0 0 %t/out-dp2zero3 %t/resumed
//
// STEP-LABEL: func.func @linreg(
// STEP-SAME: {part.name = "w", part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 3, 4>}
// STEP-SAME: {part.name = "adam.m.w", part.role = #part.role<state>, part.state_of = 2 : i64}
//
// DUMP: param "w" %{{[0-9]+}} : f32[2, 3] of global [4, 3] sharded [{"dp"}, {}] stored as [3, 4] permuted [1, 0]
// DUMP: param "adam.m.w" %{{[0-9]+}} : f32[2, 3] of global [4, 3] sharded [{"dp"}, {}] stored as [3, 4] permuted [1, 0]
// DUMP: output "new.w" %{{[0-9]+}} : f32[2, 3] of global [4, 3] sharded [{"dp"}, {}] stored as [3, 4] permuted [1, 0] updates "w" in place
