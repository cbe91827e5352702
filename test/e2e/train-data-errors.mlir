// Every bad use of partition-run's batch streams (--data, --synthetic,
// --checkpoint-every) gets a message naming the file, the array and both
// types, and a non-zero exit before any rank starts.
//
// RUN: rm -rf %t && mkdir -p %t/empty && cd %t
// RUN: %python %S/Inputs/train_data_stream.py bad %t
// RUN: %python %S/Inputs/train_data_stream.py linreg %t 3 1
// RUN: partition-opt %S/Inputs/linreg-grad.mlir --part-optimizer="kind=adamw lr=0.01" | partition-opt --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/2.plan 2>/dev/null
// RUN: partition-opt %S/Inputs/echo-batches.mlir --part-spmd="mesh=dp:2" | partition-translate --part-to-plan -o %t/echo.plan 2>/dev/null
//
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data no-y.safetensors 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: partition-run: not found: no-y.safetensors: no array "y" for input "y" (the file has: x)
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data y-shape.safetensors 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: partition-run: invalid argument: y-shape.safetensors: array "y" is f32[3, 8, 2] but input "y" takes f32[S, 8, 3], S >= 1 batches of f32[8, 3]
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data y-i32.safetensors 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: partition-run: invalid argument: y-i32.safetensors: array "y" is i32[3, 8, 3] but input "y" takes f32[S, 8, 3], S >= 1 batches of f32[8, 3]
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data unbatched.safetensors 2>&1 | FileCheck %s --check-prefix=UNBATCHED
// UNBATCHED: partition-run: invalid argument: unbatched.safetensors: array "x" is f32[8, 4] but input "x" takes f32[S, 8, 4], S >= 1 batches of f32[8, 4]
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data counts.safetensors 2>&1 | FileCheck %s --check-prefix=COUNTS
// COUNTS: partition-run: invalid argument: counts.safetensors: array "y" holds 2 batches but array "x" holds 3; every array needs the same number
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data nothere.safetensors 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: partition-run: not found: nothere.safetensors: cannot open
// Checked before the ranks start, with --processes too (one message):
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data no-y.safetensors --processes 2>&1 | FileCheck %s --check-prefix=ONCE
// ONCE: no array "y"
// ONCE-NOT: no array
//
// RUN: cd %t && not partition-run echo.plan --backend cpu --synthetic 3 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: partition-run: invalid argument: --synthetic: input "t" is i32[8, 6]; give the range of its values with --vocab N
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data data.safetensors --synthetic 3 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: partition-run: --data and --synthetic are two sources of batches; give one
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data data.safetensors --input x=x.npy 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: partition-run: --data feeds every input; it excludes --input
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --vocab 3 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: partition-run: --vocab is the range of --synthetic's integers; it needs --synthetic
// RUN: cd %t && not partition-run 2.plan --backend cpu --weights weights.safetensors --data data.safetensors --checkpoint-every 2 2>&1 | FileCheck %s --check-prefix=EVERY
// EVERY: partition-run: --checkpoint-every needs --checkpoint DIR
// A directory with neither a manifest nor a step-<n> checkpoint:
// RUN: cd %t && not partition-run 2.plan --backend cpu --data data.safetensors --resume empty 2>&1 | FileCheck %s --check-prefix=NOCKPT
// NOCKPT: partition-run: not found: checkpoint empty has no manifest.json (it is not a checkpoint, or its writing did not finish)
