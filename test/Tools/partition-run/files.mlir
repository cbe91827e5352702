// partition-run checks --trace, --html and --metrics before the run: a FIFO
// nobody reads (which blocked the run forever), an output onto the plan, the
// weights or an input, two outputs onto one file: one line each, exit 1,
// never a hang (`timeout 20`). Written outputs check every write.
//
// RUN: rm -rf %t && mkdir -p %t && cd %t
// RUN: %python %S/../../e2e/Inputs/mlp_data.py %t
// RUN: partition-translate --part-to-plan %S/../../e2e/Inputs/mlp-1x2.mlir -o 2.plan
// RUN: cp 2.plan 2.orig && mkfifo fifo
// RUN: for args in "--trace fifo" "--html fifo" "--metrics fifo" "--html 2.plan" "--trace ./x.npy" \
// RUN:     "--metrics weights.safetensors" "--trace t.json --html ./t.json" "--html /dev/full"; do \
// RUN:   echo "== $args"; timeout 20 partition-run 2.plan --backend cpu --weights weights.safetensors --input x=x.npy $args 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > errors.log
// RUN: FileCheck %s < errors.log
// RUN: cmp 2.plan 2.orig && test -p fifo
//
// CHECK-LABEL: == --trace fifo
// CHECK-NEXT: partition-run: invalid argument: cannot write fifo (--trace): it is a FIFO that no process reads (writing it would wait forever)
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --html fifo
// CHECK-NEXT: partition-run: invalid argument: cannot write fifo (--html): it is a FIFO that no process reads
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --metrics fifo
// CHECK-NEXT: partition-run: invalid argument: cannot write fifo (--metrics): it is a FIFO that no process reads
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --html 2.plan
// CHECK-NEXT: partition-run: invalid argument: --html 2.plan and the plan 2.plan name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --trace ./x.npy
// CHECK-NEXT: partition-run: invalid argument: --trace ./x.npy and --input x x.npy name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --metrics weights.safetensors
// CHECK-NEXT: partition-run: invalid argument: --metrics weights.safetensors and --weights weights.safetensors name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --trace t.json --html ./t.json
// CHECK-NEXT: partition-run: invalid argument: --trace t.json and --html ./t.json name the same file
// CHECK-NEXT: exit 1
// CHECK-LABEL: == --html /dev/full
// CHECK: partition-run: cannot write /dev/full (--html): No space left on device
// CHECK-NEXT: exit 1
//
// An output of the plan (--output-dir) that is a FIFO nobody reads, and
// --calibrate -o onto one, are errors, not a hang:
// RUN: mkdir out && mkfifo out/y.npy
// RUN: not timeout 20 partition-run 2.plan --backend cpu --weights weights.safetensors --input x=x.npy --output-dir out 2>&1 | FileCheck %s --check-prefix=OUTDIR
// OUTDIR: partition-run: invalid argument: cannot write out/y.npy (--output-dir): it is a FIFO that no process reads (writing it would wait forever)
// An output of the plan onto an input (the run read x from y.npy and would
// replace it with y):
// RUN: cp x.npy y.npy && cp x.npy y.orig
// RUN: not timeout 20 partition-run 2.plan --backend cpu --weights weights.safetensors --input x=y.npy --output-dir . 2>&1 | FileCheck %s --check-prefix=ONTOINPUT
// ONTOINPUT: partition-run: invalid argument: --output-dir ./y.npy and --input x y.npy name the same file
// RUN: cmp y.npy y.orig
// RUN: not timeout 20 partition-run --calibrate -o fifo 2>&1 | FileCheck %s --check-prefix=CALIBRATE
// CALIBRATE: partition-run: cannot write fifo (-o): it is a FIFO that no process reads (writing it would wait forever)
