// The Gelu op of ONNX opset 20, at opsets 20 and 21 (make_models.py's
// gelu-opset*.onnx: y_default without the approximate attribute, y_none with
// approximate="none", y_tanh with approximate="tanh", all on one input x):
// imported as part.gelu in its erf and tanh forms, run on the CPU backend,
// and compared with a float64 numpy GELU (Inputs/gelu_reference.py: math.erf,
// and the tanh formula with sqrt(2/pi) and 0.044715).
//
// Input: 192 evenly spaced values in [-8, 8] (batch 3 x 64), so both tails
// and the region where the two forms differ are sampled.
//
// Tolerance 2e-6 absolute + 1e-6 relative. The CPU kernels compute in f32:
// the erf form as 0.5 x (1 + erf(x / sqrt 2)) with libm's erff, the tanh form
// as x / (1 + exp(-2u)). For x > 0 both are within a few ulp of y (2^-24 =
// 6e-8 relative; measured at most 4.1e-7 absolute, at x = 5.07: one ulp).
// For x < 0 the erf form's 1 + erf(x / sqrt 2) cancels: each ulp of erff's
// error near -1 (2^-24) costs 0.5 |x| 2^-24 absolute, at most 1.7e-7 before
// erf rounds to -1 (x = -5.6); the bound allows about 12 such ulps (measured
// 7.1e-8 for x < -3). The tanh form does not cancel: exp's relative error
// grows with |2u|, but y shrinks faster (measured 1.2e-9 for x < -3). The
// largest measured error of either form is 6% of the bound.
// The two forms differ by up to 4.7e-4 (at |x| = 2.7), and at 105 of the 192
// inputs by more than this bound: the last RUN lines check that each output
// fails against the other form's reference, so an importer that mixed up
// the approximations (or dropped the attribute, here or in the lowering to
// the plan) fails here, as would a tanh form with 0.0447 for 0.044715 (off
// by 8.7e-6 near |x| = 1.9) or an erf form without the 1/sqrt 2 (off by 0.08).
//
// RUN: rm -rf %t && mkdir -p %t/ref
// RUN: %python %S/Inputs/make_models.py %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.linspace(-8, 8, 192, dtype=np.float32).reshape(3, 64))"
// RUN: %python %S/Inputs/gelu_reference.py %t/x.npy %t/ref
// RUN: for o in 20 21; do \
// RUN:   partition-import %t/gelu-opset$o.onnx --dim batch=3 -o %t/m$o.mlir && \
// RUN:   FileCheck %s < %t/m$o.mlir && \
// RUN:   partition-opt %t/m$o.mlir --part-spmd="mesh=dp:1" | partition-translate --part-to-plan -o %t/$o.plan && \
// RUN:   mkdir -p %t/out$o && \
// RUN:   partition-run %t/$o.plan --backend cpu --input x=%t/x.npy --output-dir %t/out$o > /dev/null && \
// RUN:   for y in y_default y_none y_tanh; do \
// RUN:     %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/$y.npy %t/out$o/$y.npy || exit 1; \
// RUN:   done || exit 1; \
// RUN: done
// The tolerance tells the forms apart: each output is rejected by the other
// form's reference (one file per check: compare.py fails if any file does).
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_tanh.npy %t/out20/y_default.npy
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_tanh.npy %t/out20/y_none.npy
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_none.npy %t/out20/y_tanh.npy
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_tanh.npy %t/out21/y_default.npy
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_tanh.npy %t/out21/y_none.npy
// RUN: not %python %S/../../e2e/Inputs/compare.py 2e-6 1e-6 %t/ref/y_none.npy %t/out21/y_tanh.npy
//
// One op per node, nothing decomposed; no attribute means "none" (erf).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<3x64xf32> {part.name = "x", part.role = #part.role<input>})
// CHECK-SAME: -> (tensor<3x64xf32> {part.name = "y_default"}, tensor<3x64xf32> {part.name = "y_none"}, tensor<3x64xf32> {part.name = "y_tanh"})
// CHECK-NOT: part.erf
// CHECK-NOT: part.tanh
// CHECK: %[[D:.*]] = part.gelu %[[X]] erf : tensor<3x64xf32>
// CHECK-NOT: part.erf
// CHECK-NOT: part.tanh
// CHECK: %[[N:.*]] = part.gelu %[[X]] erf : tensor<3x64xf32>
// CHECK-NOT: part.erf
// CHECK-NOT: part.tanh
// CHECK: %[[T:.*]] = part.gelu %[[X]] tanh : tensor<3x64xf32>
// CHECK-NOT: part.erf
// CHECK-NOT: part.tanh
// CHECK: return %[[D]], %[[N]], %[[T]] :
