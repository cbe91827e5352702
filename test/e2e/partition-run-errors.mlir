// Every bad input to partition-run gets a message naming the place and the
// values, and a non-zero exit; none crashes or hangs.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/Inputs/mlp-1x2.mlir -o %t/2.plan
// RUN: %python -c "import numpy as np; np.save('%t/x_bad.npy', np.zeros((8, 15), np.float32)); np.save('%t/x_i32.npy', np.zeros((8, 16), np.int32))"
// RUN: %python -c "open('%t/cut.plan', 'wb').write(open('%t/2.plan', 'rb').read()[:100])"
// RUN: %python -c "import sys; sys.path.insert(0, '%S/Inputs'); import numpy as np, mlp_data as m; m.save_safetensors('%t/w_bad.safetensors', {'w1': np.zeros((16, 30), np.float32)}); m.save_safetensors('%t/w_missing.safetensors', {'w1': np.zeros((16, 32), np.float32)})"
//
// RUN: not partition-run 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: partition-run: no plan given (see --help)
// RUN: not partition-run %t/2.plan --frobnicate 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: partition-run: unknown option --frobnicate (see --help)
// RUN: not partition-run %t/2.plan --ranks zero 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: partition-run: --ranks needs a positive integer, got "zero"
// RUN: not partition-run %t/missing.plan 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: partition-run: not found: {{.*}}missing.plan: cannot open the plan file
// RUN: not partition-run %t/cut.plan 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: cut.plan: the plan declares {{[0-9]+}} bytes but the file has 100 (truncated or padded)
// RUN: not partition-run %t/2.plan --ranks 4 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: partition-run: the plan needs 2 ranks (its meshes hold 2 devices), but --ranks 4 was given
// RUN: not partition-run %t/2.plan --backend tpu 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: partition-run: backend "tpu" is not in this build (it has: cpu
// RUN: not partition-run %t/2.plan --backend cpu --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: rank 0: invalid argument: the plan has parameters; give them with --weights FILE.safetensors or --random-weights SEED
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: rank 0: invalid argument: input "x" is missing; give it with --input x=FILE.npy
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x_bad.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: rank 0: invalid argument: input "x" must be f32[8, 16], got f32[8, 15]
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x_i32.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: rank 0: invalid argument: input "x" must be f32[8, 16], got i32[8, 16]
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/w_bad.safetensors --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WSHAPE
// WSHAPE: rank 0: invalid argument: {{.*}}w_bad.safetensors: parameter "w1" is f32[16, 30] in the file but f32[16, 32] in the plan
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/w_missing.safetensors --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WMISSING
// WMISSING: rank 0: not found: {{.*}}w_missing.safetensors: parameter "b1" is missing (the file has: w1)
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/x.npy --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WFILE
// WFILE: rank 0: invalid argument: {{.*}}x.npy
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/nothere.npy 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: partition-run: {{.*}}nothere.npy
