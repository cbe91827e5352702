// Hostile cluster files: a finite but extreme figure (a latency of 1.7e308
// s, a peak or an efficiency of 1e-300) gave infinite step times with exit
// status 0, `inf` in --json and `width="-nan"` in --html; a key given twice
// was read as its first; a file naming only int8's peak had it used for
// bf16 and f32, and one naming f32 and int8 had int8's used for bf16. Each
// is now refused naming the file, the field and its range, or the
// precision asked for that the file gives no peak for. A name with control characters is printed escaped, and --json
// stays valid JSON.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: partition-import --model gpt --layers 4 --hidden 64 --heads 4 --vocab 128 --seq 16 --batch 8 --shapes-only -o %t/gpt.mlir
// RUN: %python %S/Inputs/edit_cluster.py %S/Inputs/small-node.json %t
// RUN: not partition-plan %t/gpt.mlir --cluster %t/latency.json --devices 8 --json %t/l.json --html %t/l.html 2>&1 | FileCheck %s --check-prefix=LATENCY
// RUN: not test -e %t/l.json
// RUN: not partition-plan %t/gpt.mlir --cluster %t/peak.json --devices 8 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: not partition-plan %t/gpt.mlir --cluster %t/efficiency.json --devices 8 2>&1 | FileCheck %s --check-prefix=EFFICIENCY
// RUN: not partition-plan %t/gpt.mlir --cluster %t/gemm.json --devices 8 2>&1 | FileCheck %s --check-prefix=GEMM
// RUN: not partition-plan %t/gpt.mlir --cluster %t/bandwidth.json --devices 8 2>&1 | FileCheck %s --check-prefix=BANDWIDTH
// RUN: not partition-plan %t/gpt.mlir --cluster %t/memory.json --devices 8 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not partition-plan %t/gpt.mlir --cluster %t/int8.json --devices 8 2>&1 | FileCheck %s --check-prefix=INT8
// RUN: not partition-plan %t/gpt.mlir --cluster %t/no-bf16.json --devices 8 2>&1 | FileCheck %s --check-prefix=NO-BF16
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%t/no-bf16.json devices=8" 2>&1 | FileCheck %s --check-prefix=NO-BF16-PASS
// RUN: partition-plan %t/gpt.mlir --cluster %t/no-bf16.json --devices 8 --precision f32 --top 1 | FileCheck %s --check-prefix=F32
// RUN: not partition-plan %t/gpt.mlir --cluster %t/nodes.json --devices 8 2>&1 | FileCheck %s --check-prefix=NODES
// RUN: not partition-plan %t/gpt.mlir --cluster %t/twice.json --devices 8 2>&1 | FileCheck %s --check-prefix=TWICE
// The pass reads cluster files with the same reader.
// RUN: not partition-opt %t/gpt.mlir --part-auto-partition="cluster=%t/latency.json devices=8" 2>&1 | FileCheck %s --check-prefix=PASS
//
// Names with control characters: escaped in the text, valid in --json,
// absent from --html.
// RUN: partition-plan %t/gpt.mlir --cluster %t/name.json --devices 8 --top 1 --json %t/n.json --html %t/n.html > %t/n.txt
// RUN: FileCheck %s --check-prefix=NAME < %t/n.txt
// RUN: %python -c "import json, sys; d = json.load(open(sys.argv[1])); assert d['cluster'] == 'red\x1b[31m\x07'; print('json ok')" %t/n.json | FileCheck %s --check-prefix=NAME-JSON
// RUN: %python -c "import sys; t = open(sys.argv[1], 'rb').read(); bad = [c for c in t if c < 32 and c not in (9, 10, 13)]; print('html ok' if not bad else bad)" %t/n.html | FileCheck %s --check-prefix=NAME-HTML
// RUN: %python -c "import sys; t = open(sys.argv[1], 'rb').read(); print('text ok' if b'\x1b' not in t else 'escape left')" %t/n.txt | FileCheck %s --check-prefix=NAME-TEXT
// RUN: partition-plan %t/gpt.mlir --cluster %t/device-name.json --devices 8 --top 1 --html %t/d.html > /dev/null
// RUN: %python -c "import sys; t = open(sys.argv[1], 'rb').read(); print('html ok' if b'\x1b' not in t and b'\r\\\\x1b' not in t else 'escape left'); assert b'dev\\\\x0d\\\\x1b[2K' in t" %t/d.html | FileCheck %s --check-prefix=NAME-HTML
// RUN: partition-opt %t/gpt.mlir --part-auto-partition="cluster=%t/name.json devices=8" 2>&1 >/dev/null | FileCheck %s --check-prefix=NAME-PASS
//
// LATENCY: partition-plan: {{.*}}latency.json: "inter_node.latency" must be in [1e-10, 10] s, got 1.7e+308
// PEAK: partition-plan: {{.*}}peak.json: "device.peak_flops.bf16" must be in [1000, 1e+20] FLOP/s, got 1e-300
// EFFICIENCY: partition-plan: {{.*}}efficiency.json: "efficiency.elementwise" must be in [1e-06, 1], got 1e-300
// GEMM: partition-plan: {{.*}}gemm.json: "efficiency.gemm[0]" must be in [1e-06, 1], got 1e-300
// BANDWIDTH: partition-plan: {{.*}}bandwidth.json: "intra_node.bandwidth" must be in [1000, 1e+16] bytes/s, got 1e-300
// MEMORY: partition-plan: {{.*}}memory.json: "device.memory_bytes" must be in [1000, 1e+16] bytes, got 1e+300
// INT8: partition-plan: {{.*}}int8.json: "device.peak_flops" must name "f32", whose peak stands in for the dtypes it does not name
// NO-BF16: partition-plan: cluster "{{.*}}" gives no peak_flops for bf16, the precision asked for (it gives f32, int8): add "bf16" to its peak_flops or plan with --precision f32
// NO-BF16-PASS: error: part-auto-partition: cluster "{{.*}}" gives no peak_flops for bf16, the precision asked for (it gives f32, int8): add "bf16" to its peak_flops or plan with precision=f32
// F32: searched {{[0-9]+}} plans
// NODES: partition-plan: {{.*}}nodes.json: "nodes" must be an integer in [1, 1048576], got 9223372036854775807
// TWICE: partition-plan: {{.*}}twice.json: not valid JSON: duplicate key "nodes" at byte {{[0-9]+}}
// PASS: error: part-auto-partition: {{.*}}latency.json: "inter_node.latency" must be in [1e-10, 10] s, got 1.7e+308
// NAME: global batch 8; red\x1b[31m\x07, 8 devices
// NAME-JSON: json ok
// NAME-HTML: html ok
// NAME-TEXT: text ok
// NAME-PASS: remark: part-auto-partition chose {{.*}} predicted on red\x1b[31m\x07, of
