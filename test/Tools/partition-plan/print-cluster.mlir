// --print-cluster writes a preset (or a checked cluster file) as a cluster
// file, a start for one's own: read back, it plans as the preset does; an
// edited field (here the memory bandwidth) is what the planner uses. No
// model or --devices is needed for it; without it, both are.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-plan --cluster dgx-h100 --print-cluster > %t/h100.json
// RUN: FileCheck %s --check-prefix=FILE < %t/h100.json
// FILE: "format": "partition-cluster/1",
// FILE: "name": "dgx-h100",
// FILE: "memory_bandwidth": 3350000000000
// FILE: "gemm": {{\[\[}}
// RUN: partition-import --model gpt --layers 2 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster dgx-h100 --devices 8 --top 1 --json %t/preset.json > /dev/null
// RUN: partition-plan %t/gpt.mlir --cluster %t/h100.json --devices 8 --top 1 --json %t/file.json > /dev/null
// RUN: sed 's/"memory_bandwidth": 3350000000000/"memory_bandwidth": 335000000000/' %t/h100.json > %t/slow.json
// RUN: partition-plan %t/gpt.mlir --cluster %t/slow.json --devices 8 --top 1 --json %t/slow-plan.json > /dev/null
// RUN: %python -c "import json, sys; s = [json.load(open(f))['plans'][0]['step_seconds'] for f in sys.argv[1:]]; print('same', s[0] == s[1], 'slower', s[2] > 1.2 * s[0])" %t/preset.json %t/file.json %t/slow-plan.json | FileCheck %s
// CHECK: same True slower True
// RUN: not partition-plan --cluster dgx-h100 --devices 8 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// NO-MODEL: partition-plan: no model given (<model.mlir>); see --help
// RUN: not partition-plan %t/gpt.mlir --cluster dgx-h100 2>&1 | FileCheck %s --check-prefix=NO-DEVICES
// NO-DEVICES: partition-plan: --devices is not given; see --help
// RUN: not partition-plan --cluster nowhere.json --print-cluster 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: partition-plan: {{.*}}nowhere.json
// A negative zero (an efficiency of -0.0) is written "0", and the file
// written again from that is the same file.
// RUN: sed 's/"overlap": 1,/"overlap": -0.0,/' %t/h100.json > %t/zero.json
// RUN: partition-plan --cluster %t/zero.json --print-cluster > %t/zero-again.json
// RUN: partition-plan --cluster %t/zero-again.json --print-cluster | diff - %t/zero-again.json
// RUN: FileCheck %s --check-prefix=ZERO < %t/zero-again.json
// ZERO: "overlap": 0,
