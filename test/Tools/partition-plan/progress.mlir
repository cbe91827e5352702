// partition-plan --progress reports the search on stderr: each probe
// compiled (k of n, with the extra unpartitioned probe that --fix can add;
// with sequence parallelism, each also with tp-overlap),
// every tenth of the combinations evaluated, and the schedules simulated.
// Without the flag and with stderr not a terminal (as here) it says
// nothing, so that outputs captured with 2>&1 stay as they were; on a
// terminal each stage is one line redrawn in place.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --progress 2>&1 >/dev/null | FileCheck %s
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 --progress --fix tp=4,sp=0,recompute=none 2>&1 >/dev/null | FileCheck %s --check-prefix=FIXED
// RUN: partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 2>&1 | FileCheck %s --check-prefix=QUIET --implicit-check-not=compiled --implicit-check-not=simulated
// RUN: %python %S/Inputs/pty_transcript.py partition-plan %t/gpt.mlir --cluster %S/Inputs/small-node.json --devices 8 | FileCheck %s --check-prefix=TERMINAL
//
// CHECK:      partition-plan: probes compiled 1/21 (tp=1, {{[0-9.]+}} s)
// CHECK-NEXT: partition-plan: probes compiled 2/21 (tp=1 recompute=selective, {{[0-9.]+}} s)
// CHECK-NEXT: partition-plan: probes compiled 3/21 (tp=1 recompute=full, {{[0-9.]+}} s)
// CHECK-NEXT: partition-plan: probes compiled 4/21 (tp=2, {{[0-9.]+}} s)
// CHECK:      partition-plan: probes compiled 8/21 (tp=2 sp tp-overlap=4, {{[0-9.]+}} s)
// CHECK:      partition-plan: probes compiled 21/21 (tp=4 sp tp-overlap=4 recompute=full, {{[0-9.]+}} s)
// CHECK-NEXT: partition-plan: combinations evaluated 173/1725 ({{[0-9.]+}} s)
// CHECK-NEXT: partition-plan: combinations evaluated 345/1725
// CHECK-NEXT: partition-plan: combinations evaluated 518/1725
// CHECK-NEXT: partition-plan: combinations evaluated 690/1725
// CHECK-NEXT: partition-plan: combinations evaluated 863/1725
// CHECK-NEXT: partition-plan: combinations evaluated 1035/1725
// CHECK-NEXT: partition-plan: combinations evaluated 1208/1725
// CHECK-NEXT: partition-plan: combinations evaluated 1380/1725
// CHECK-NEXT: partition-plan: combinations evaluated 1553/1725
// CHECK-NEXT: partition-plan: combinations evaluated 1725/1725
// CHECK-NEXT: partition-plan: schedules simulated {{[1-9][0-9]*}} ({{[0-9.]+}} s)
// CHECK-NOT:  partition-plan:
//
// FIXED:      partition-plan: probes compiled 1/2 (tp=4, {{[0-9.]+}} s)
// FIXED-NEXT: partition-plan: probes compiled 2/2 (tp=1, {{[0-9.]+}} s)
// FIXED-NEXT: partition-plan: combinations evaluated {{[0-9]+}}/[[N:[0-9]+]]
// FIXED:      partition-plan: combinations evaluated [[N]]/[[N]]
// FIXED-NEXT: partition-plan: schedules simulated
//
// QUIET: model: 4 layers
//
// TERMINAL:      {{^}}\r\e[Kpartition-plan: probes compiled 1/21 (tp=1, {{.*}}\r\e[Kpartition-plan: probes compiled 21/21 (tp=4 sp tp-overlap=4 recompute=full, {{[0-9.]+}} s){{$}}
// TERMINAL-NEXT: {{^}}\r\e[Kpartition-plan: combinations evaluated 1/1725 {{.*}}\r\e[Kpartition-plan: combinations evaluated 1725/1725 ({{[0-9.]+}} s){{$}}
// TERMINAL-NEXT: {{^}}\r\e[Kpartition-plan: schedules simulated 1 {{.*}}\r\e[Kpartition-plan: schedules simulated {{[0-9]+}} ({{[0-9.]+}} s){{$}}
// TERMINAL-NEXT: model: 4 layers
