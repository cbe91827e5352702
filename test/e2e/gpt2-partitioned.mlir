// The two-layer GPT-2 of test/Examples/gpt2.mlir (annotated Megatron-style:
// batch over "dp", attention and MLP over "tp"), with its mesh resized to
// dp x tp = 1x1, 2x1, 1x2, 2x2, 4x2, 2x4, 8x1 and 1x4, partitioned
// automatically, lowered and run on that many CPU ranks with the same
// weights (--random-weights: a fixed function of name and global index); the
// loss of every run must equal the 1-rank run's, and the 1-rank run must
// equal an independent float64 numpy forward of the same model with the
// same weights (Inputs/gpt2_reference.py; measured difference 3e-7).
//
// Tolerance: the loss (about 12.6) is a mean over 128 positions of f32
// log-sum-exps whose sums the splits reorder; 1e-5 is ten units in the last
// place at that size. (Measured: at most one unit, 9.5e-7.) With weights in
// [-1, 1) the logits are far from uniform, so a wrong partition moves the
// loss by orders of magnitude more than that.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); np.save('%t/tokens.npy', r.integers(0, 512, (8, 16)).astype(np.int32)); np.save('%t/labels.npy', r.integers(0, 512, (8, 16)).astype(np.int32))"
// RUN: for m in 1x1 2x1 1x2 2x2 4x2 2x4 8x1 1x4; do \
// RUN:   sed "s/\"dp\"=2, \"tp\"=4/\"dp\"=${m%%x*}, \"tp\"=${m#*x}/" %S/../Examples/gpt2.mlir > %t/$m.mlir && \
// RUN:   partition-opt %t/$m.mlir --part-propagate-shardings --part-partition | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null && \
// RUN:   mkdir -p %t/$m && \
// RUN:   partition-run %t/$m.plan --backend cpu --random-weights 1 --random-scale 1 --input arg0=%t/tokens.npy --input arg1=%t/labels.npy --output-dir %t/$m > %t/$m.log || exit 1; \
// RUN: done
// The same model without any annotation, partitioned by the part-spmd
// pipeline alone (data parallel on "dp", Megatron splits on "tp"):
// RUN: partition-opt %S/../Examples/gpt2.mlir --part-strip-sharding=remove-meshes > %t/plain.mlir
// RUN: for m in 2x4 1x4 8x1 4x2; do \
// RUN:   partition-opt %t/plain.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/auto$m.plan 2>/dev/null && \
// RUN:   partition-opt %t/plain.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x} sequence-parallel=true" | partition-translate --part-to-plan -o %t/sp$m.plan 2>/dev/null && \
// RUN:   mkdir -p %t/sp$m && \
// RUN:   partition-run %t/sp$m.plan --backend cpu --random-weights 1 --random-scale 1 --input arg0=%t/tokens.npy --input arg1=%t/labels.npy --output-dir %t/sp$m > /dev/null && \
// RUN:   mkdir -p %t/auto$m && \
// RUN:   partition-run %t/auto$m.plan --backend cpu --random-weights 1 --random-scale 1 --input arg0=%t/tokens.npy --input arg1=%t/labels.npy --output-dir %t/auto$m > /dev/null || exit 1; \
// RUN: done
// RUN: %python %S/Inputs/compare.py 1e-5 0 %t/1x1/output0.npy %t/auto2x4/output0.npy %t/auto1x4/output0.npy %t/auto8x1/output0.npy %t/auto4x2/output0.npy
// ... and with sequence parallelism:
// RUN: %python %S/Inputs/compare.py 1e-5 0 %t/1x1/output0.npy %t/sp2x4/output0.npy %t/sp1x4/output0.npy %t/sp8x1/output0.npy %t/sp4x2/output0.npy
// RUN: %python %S/Inputs/gpt2_reference.py 1 1 %t/tokens.npy %t/labels.npy %t/reference.npy
// RUN: %python %S/Inputs/compare.py 1e-5 0 %t/reference.npy %t/1x1/output0.npy %t/2x4/output0.npy
// RUN: FileCheck %s < %t/2x4.log
// RUN: %python %S/Inputs/compare.py 1e-5 0 %t/1x1/output0.npy %t/2x1/output0.npy %t/1x2/output0.npy %t/2x2/output0.npy %t/4x2/output0.npy %t/2x4/output0.npy %t/8x1/output0.npy %t/1x4/output0.npy
//
// CHECK: rank 7: setup
// CHECK: output output0: f32[]
