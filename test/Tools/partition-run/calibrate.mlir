// partition-run --calibrate measures this machine and writes a cluster file
// for the cost model: GEMM throughput by size, elementwise bandwidth and
// all-reduce latency and bus bandwidth over the ranks.
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-run --calibrate -o %t/local.json --backend cpu --ranks 2 --seconds 0.02 | FileCheck %s
// CHECK: calibrating 2 cpu ranks: GEMM, memory bandwidth, all-reduce ...
// CHECK: GEMM n x n x n    FLOP/s   efficiency
// CHECK: n = 1024
// CHECK: elementwise: {{[0-9.e+]+}} bytes/s
// CHECK: links: latency {{[0-9.e+-]+}} s, bus bandwidth {{[0-9.e+]+}} bytes/s
// CHECK: communication hidden behind compute: {{[01]\.[0-9][0-9]}}
// CHECK: wrote {{.*}}local.json (local-cpu: 1 node of 2 devices)
//
// The file: every figure positive, the GEMM curve in increasing FLOPs with
// its best point at 1 (the peak is the best measured).
// RUN: %python -c "import json, sys; c = json.load(open('%t/local.json')); assert c['format'] == 'partition-cluster/1' and c['nodes'] == 1 and c['devices_per_node'] == 2; d = c['device']; assert d['peak_flops']['f32'] > 0 and d['memory_bytes'] > 0 and d['memory_bandwidth'] > 0 and 0 <= c['efficiency']['overlap'] <= 1; assert all(c[k]['bandwidth'] > 0 and c[k]['latency'] > 0 for k in ('intra_node', 'inter_node')); g = c['efficiency']['gemm']; assert [p[0] for p in g] == sorted(p[0] for p in g) and max(p[1] for p in g) == 1 and min(p[1] for p in g) > 0; print('ok')" | FileCheck %s --check-prefix=FILE
// FILE: ok
//
// Mistakes.
// RUN: not partition-run --calibrate 2>&1 | FileCheck %s --check-prefix=NO-OUT
// NO-OUT: partition-run: --calibrate needs -o FILE (the cluster file to write)
// RUN: not partition-run --calibrate -o %t/x.json --ranks 0 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not partition-run --calibrate -o %t/x.json --steps 3 2>&1 | FileCheck %s --check-prefix=OTHER
// RANKS: partition-run: --ranks needs 1 to 64, got "0"
// OTHER: partition-run: --calibrate takes -o FILE, --backend, --ranks and --seconds, not --steps
// RUN: not partition-run --calibrate -o %t/x.json --backend tpu 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: partition-run: calibration: unavailable: backend "tpu" is not compiled into this build
