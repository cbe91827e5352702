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
// MISSING: partition-run: not found: {{.*}}missing.plan: cannot open the plan file: No such file or directory
// RUN: not partition-run %t/cut.plan 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: cut.plan: the plan declares {{[0-9]+}} bytes and a checksum of 8 but the file has 100 (truncated or padded)
// Only regular files are read: a folder, a device or a FIFO is an error at
// once (not an uncaught exception, an endless read or a hang).
// RUN: not partition-run %t 2>&1 | FileCheck %s --check-prefix=FOLDER
// FOLDER: partition-run: invalid argument: {{.*}}: the plan file is a directory, not a regular file
// RUN: not partition-run /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: partition-run: invalid argument: /dev/zero: the plan file is a character device, not a regular file
// RUN: mkfifo %t/fifo && not timeout 30 partition-run %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: partition-run: invalid argument: {{.*}}fifo: the plan file is a FIFO, not a regular file
// RUN: not timeout 30 partition-run %t/2.plan --backend cpu --weights %t/fifo --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WFIFO
// WFIFO: ranks 0-1: invalid argument: {{.*}}fifo: the safetensors file is a FIFO, not a regular file
// RUN: not timeout 30 partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/fifo 2>&1 | FileCheck %s --check-prefix=XFIFO
// XFIFO: partition-run: invalid argument: {{.*}}fifo: the .npy file is a FIFO, not a regular file
// RUN: not partition-run %t/2.plan --ranks 4 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: partition-run: the plan needs 2 ranks (its meshes hold 2 devices), but --ranks 4 was given
// RUN: not partition-run %t/2.plan --backend tpu 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: partition-run: backend "tpu" is not in this build (it has: cpu
// RUN: not partition-run %t/2.plan --backend cpu --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: partition-run: ranks 0-1: invalid argument: the plan has parameters; give them with --weights FILE.safetensors or --random-weights SEED
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: ranks 0-1: invalid argument: input "x" is missing; give it with --input x=FILE.npy
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x_bad.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: ranks 0-1: invalid argument: input "x" must be f32[8, 16], got f32[8, 15]
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x_i32.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: ranks 0-1: invalid argument: input "x" must be f32[8, 16], got i32[8, 16]
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/w_bad.safetensors --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WSHAPE
// WSHAPE: ranks 0-1: invalid argument: {{.*}}w_bad.safetensors: parameter "w1" is f32[16, 30] in the file but f32[16, 32] in the plan
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/w_missing.safetensors --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WMISSING
// WMISSING: ranks 0-1: not found: {{.*}}w_missing.safetensors: parameter "b1" is missing (the file has: w1)
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/x.npy --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WFILE
// WFILE: ranks 0-1: invalid argument: {{.*}}x.npy
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/nothere.npy 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: partition-run: {{.*}}nothere.npy
//
// Inputs and options that do not fit the plan are errors before any rank
// starts.
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --input z=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: partition-run: invalid argument: --input z={{.*}}x.npy: the plan has no input "z" (its inputs: x)
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --input x=%t/x_bad.npy 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: partition-run: --input x is given twice ({{.*}}x.npy and {{.*}}x_bad.npy)
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --fail-rank 99 2>&1 | FileCheck %s --check-prefix=FAILRANK
// FAILRANK: partition-run: invalid argument: --fail-rank 99 is outside the plan's world of 2 ranks (0 to 1)
// RUN: not partition-run %t/2.plan --backend "" 2>&1 | FileCheck %s --check-prefix=EMPTYBACKEND
// EMPTYBACKEND: partition-run: --backend needs a name (cpu or cuda), got ""
//
// --output-dir and --trace are made and checked before the first step.
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/2.plan/out 2>&1 | FileCheck %s --check-prefix=OUTDIR --implicit-check-not=setup
// OUTDIR: partition-run: invalid argument: --output-dir {{.*}}2.plan/out: cannot create the folder
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --trace %t/2.plan/t.json 2>&1 | FileCheck %s --check-prefix=TRACEDIR --implicit-check-not=setup
// TRACEDIR: partition-run: invalid argument: --trace {{.*}}2.plan: cannot create the folder
// RUN: not partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --trace %t 2>&1 | FileCheck %s --check-prefix=TRACEFOLDER --implicit-check-not=setup
// TRACEFOLDER: partition-run: invalid argument: --trace {{.*}}: is a folder; give a file name such as {{.*}}trace.json
// RUN: partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/new/out --trace %t/traces/t.json > /dev/null
// RUN: test -f %t/new/out/y.npy && test -f %t/traces/t.json
//
// Output names come from the model: one that would leave --output-dir (or is
// not a file name) is an error naming it, and nothing is written.
// RUN: sed 's/part.name = "y"/part.name = "..\/..\/escape"/' %S/Inputs/mlp-1x2.mlir | partition-translate --part-to-plan -o %t/escape.plan
// RUN: mkdir -p %t/deep/out
// RUN: not partition-run %t/escape.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/deep/out 2>&1 | FileCheck %s --check-prefix=ESCAPE --implicit-check-not=setup
// ESCAPE: partition-run: invalid argument: --output-dir: output "../../escape": the name has a '/' at byte 2, so as a file name it would leave the directory
// RUN: not test -e %t/escape.npy
// RUN: sed 's/part.name = "y"/part.name = ".."/' %S/Inputs/mlp-1x2.mlir | partition-translate --part-to-plan -o %t/dots.plan
// RUN: not partition-run %t/dots.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x.npy --output-dir %t/deep/out 2>&1 | FileCheck %s --check-prefix=DOTS
// DOTS: output "..": ".." cannot be a file name inside the directory
//
// NaN or Inf in weights or inputs: a warning naming the tensor, once.
// RUN: %python -c "import sys; sys.path.insert(0, '%S/Inputs'); import numpy as np, mlp_data as m; w = {'w1': np.zeros((16, 32), np.float32), 'b1': np.zeros(32, np.float32), 'w2': np.zeros((32, 12), np.float32), 'b2': np.zeros(12, np.float32)}; w['w1'][0, 0] = np.nan; w['b2'][:] = np.inf; m.save_safetensors('%t/w_nan.safetensors', w)"
// RUN: partition-run %t/2.plan --backend cpu --weights %t/w_nan.safetensors --input x=%t/x.npy 2>&1 | FileCheck %s --check-prefix=WNAN
// WNAN-DAG: partition-run: warning: parameter "w1" holds 1 NaN or Inf values of 256 (in this rank's block)
// WNAN-DAG: partition-run: warning: parameter "b2" holds 12 NaN or Inf values of 12 (in this rank's block)
// WNAN-NOT: warning
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy'); x[0, :3] = np.nan; x[1, 0] = np.inf; np.save('%t/x_nan.npy', x)"
// RUN: partition-run %t/2.plan --backend cpu --weights %t/weights.safetensors --input x=%t/x_nan.npy 2>&1 | FileCheck %s --check-prefix=NAN
// NAN: partition-run: warning: input "x" holds 4 NaN or Inf values of 128
// NAN-NOT: warning
