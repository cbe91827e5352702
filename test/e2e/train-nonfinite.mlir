// Training from --random-weights: only the parameters are made up; the
// optimizer state starts at its initial value (zero), as with --weights.
// After one AdamW step from zero moments, m = (1 - beta1) g and
// v = (1 - beta2) g^2, so v (1 - beta1)^2 / (1 - beta2) = m^2 (to f32
// rounding, 1e-5 relative), and the step count is 1; random moments break
// both (and a negative v made the loss NaN from step 2).
//
// RUN: rm -rf %t && mkdir -p %t/one %t/ten
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/adamw.plan
// RUN: partition-run %t/adamw.plan --backend cpu --steps 1 --random-weights 1 --synthetic 7 --output-dir %t/one > %t/one.log
// RUN: %python -c "import numpy as np; d = '%t/one/new.'; m = np.load(d + 'adam.m.w.npy'); v = np.load(d + 'adam.v.w.npy'); s = np.load(d + 'optimizer.step.npy'); assert s == 1, s; assert np.abs(m).max() > 0; assert np.allclose(v * 0.01 / 0.001, m * m, rtol=1e-5, atol=0), (v, m)"
//
// The README's example, on a small plan: ten steps of finite losses, the
// step count ten, and a summary instead of one line per output.
// RUN: partition-run %t/adamw.plan --backend cpu --steps 10 --random-weights 1 --synthetic 7 --output-dir %t/ten > %t/ten.log
// RUN: FileCheck %s --check-prefix=TEN --implicit-check-not=nan --implicit-check-not="output " < %t/ten.log
// RUN: %python -c "import numpy as np; s = np.load('%t/ten/new.optimizer.step.npy'); assert s == 10, s; assert (np.load('%t/ten/new.adam.v.w.npy') >= 0).all()"
// TEN: step 1: loss
// TEN: step 10: loss {{[0-9]}}
// TEN: trained 10 steps (steps 1 to 10); 8 outputs ({{[0-9]+}} bytes) written to {{.*}}ten
//
// A non-finite loss stops the run with an error naming the step and the
// output (here NaN in the input from step 1).
// RUN: %python -c "import numpy as np; x = np.ones((8, 4), np.float32); x[2, 1] = np.nan; np.save('%t/x.npy', x); np.save('%t/y.npy', np.ones((8, 3), np.float32))"
// RUN: not partition-run %t/adamw.plan --backend cpu --steps 3 --random-weights 1 --input x=%t/x.npy --input y=%t/y.npy > %t/nan.log 2>&1
// RUN: FileCheck %s --check-prefix=NAN < %t/nan.log
// NAN: warning: input "x" holds 1 NaN or Inf values of 32
// NAN: step 1: loss nan
// NAN: partition-run: ranks 0-1: invalid argument: step 1: output "loss" is nan; training diverged (or the weights or inputs hold NaN or Inf), so the run stops here
// NAN-NOT: step 2
