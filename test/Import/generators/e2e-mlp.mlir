// A generated MLP run end to end, as e2e-gpt.mlir: three layers (64 -> 128
// -> 128 -> 64), partitioned for 1 rank and for 4 (dp x tp = 2 x 2), run on
// CPU ranks, and compared with a float64 numpy forward reading the same
// weights by name, with the generator's zero biases and with random ones.
//
// Tolerance 1e-5 + 1e-5 * |ref|: dot products of at most 128 f32 terms,
// 128 * 2^-24 = 7.6e-6 times the sum of the terms' magnitudes; He
// initialisation keeps the activations at unit scale, and outputs reach
// about 4, so the bound is a few 1e-5 at the largest outputs, which the
// relative term covers. Measured: at most 1.3e-6.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model mlp --layers 3 --hidden 64 --ffn 128 --batch 8 --seed 7 -o %t/mlp.mlir --weights %t/mlp.safetensors
// RUN: %python %S/Inputs/perturb.py %t/mlp.safetensors %t/perturbed.safetensors 1
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32))"
// RUN: for m in 1x1 2x2; do \
// RUN:   partition-opt %t/mlp.mlir --part-spmd="mesh=dp:${m%%x*},tp:${m#*x}" | partition-translate --part-to-plan -o %t/$m.plan 2>/dev/null || exit 1; \
// RUN:   for w in mlp perturbed; do \
// RUN:     mkdir -p %t/$w$m && \
// RUN:     partition-run %t/$m.plan --backend cpu --weights %t/$w.safetensors --input x=%t/x.npy --output-dir %t/$w$m > %t/$w$m.log || exit 1; \
// RUN:   done; \
// RUN: done
// RUN: %python %S/Inputs/reference.py mlp - %t/mlp.safetensors %t/x.npy %t/mlp.npy
// RUN: %python %S/Inputs/reference.py mlp - %t/perturbed.safetensors %t/x.npy %t/perturbed.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/mlp.npy %t/mlp1x1/y.npy %t/mlp2x2/y.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-5 1e-5 %t/perturbed.npy %t/perturbed1x1/y.npy %t/perturbed2x2/y.npy
// RUN: FileCheck %s < %t/mlp2x2.log
//
// CHECK: rank 3: setup
// CHECK: output y: f32[8, 64]
