// Every bad input gives one line on stderr and exit code 2.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %S/../../Examples/gpt2.mlir %t/gpt2.mlir
// RUN: echo 'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {' > %t/bad.mlir
// RUN: echo '  %0 = part.bogus %x' >> %t/bad.mlir
// A safetensors file without the model's parameters (one tensor "w"):
// RUN: %python -c "import json, struct; h = json.dumps({'w': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}).encode(); open('%t/w.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + bytes(8))"
// RUN: cd %t
// RUN: for args in "nosuch.mlir --mesh dp:2" "gpt2.mlir" "gpt2.mlir --mesh dp2" \
// RUN:     "gpt2.mlir --mesh xx:2" "gpt2.mlir --mesh tp:3" "gpt2.mlir --mesh dp:2 --steps 1 --spmd-options bogus=1" \
// RUN:     "gpt2.mlir --mesh tp:2 --weights nope.safetensors" "gpt2.mlir --mesh tp:2 --weights w.safetensors" \
// RUN:     "gpt2.mlir --mesh tp:2 --weights w.safetensors --random-weights 2" "bad.mlir --mesh dp:2" \
// RUN:     "gpt2.mlir --mesh pp:2 --steps 1" "gpt2.mlir --mesh tp:2 --steps x"; do \
// RUN:   echo "== $args"; partition-check $args 2>&1 >/dev/null; echo "exit $?"; \
// RUN: done > %t/errors.log
// RUN: FileCheck %s < %t/errors.log
//
// CHECK-LABEL: == nosuch.mlir --mesh dp:2
// CHECK-NEXT: partition-check: error: nosuch.mlir: cannot open the model: No such file or directory
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir
// CHECK-NEXT: partition-check: error: --mesh is required, e.g. --mesh dp:2,tp:2
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh dp2
// CHECK-NEXT: partition-check: error: --mesh "dp2": "dp2" is not AXIS:SIZE with a positive size (e.g. dp:2,tp:2)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh xx:2
// CHECK-NEXT: partition-check: error: part-spmd: unknown mesh axis "xx" in mesh="xx:2"; known axes: "dp" (data parallel), "tp" (tensor parallel), "ep" (expert parallel), "cp" (context parallel), "pp" (pipeline stages)
// CHECK-NEXT: exit 2
// A mesh that does not divide the model: the compiler's diagnostic.
// CHECK-LABEL: == gpt2.mlir --mesh tp:3
// CHECK-NEXT: partition-check: error: partitioning for mesh tp:3 failed: gpt2.mlir:90:17: error: 'part.reshape' op splits features into 4 heads, which tp (size 3) does not divide
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh dp:2 --steps 1 --spmd-options bogus=1
// CHECK-NEXT: partition-check: error: --spmd-options "bogus=1": no such option bogus (see partition-opt --help, --part-spmd)
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh tp:2 --weights nope.safetensors
// CHECK-NEXT: partition-check: error: --weights nope.safetensors: cannot open the weights file: No such file or directory
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh tp:2 --weights w.safetensors
// CHECK-NEXT: partition-check: error: the unpartitioned run failed: w.safetensors: parameter "arg{{[0-9]+}}" is missing
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh tp:2 --weights w.safetensors --random-weights 2
// CHECK-NEXT: partition-check: error: --weights and --random-weights are two sources of weights; give one
// CHECK-NEXT: exit 2
// CHECK-LABEL: == bad.mlir --mesh dp:2
// CHECK-NEXT: bad.mlir:2:8: error: custom op 'part.bogus' is unknown
// CHECK-NEXT: exit 2
// A pipeline needs layers (part.layer) the hand-written example does not mark:
// CHECK-LABEL: == gpt2.mlir --mesh pp:2 --steps 1
// CHECK-NEXT: partition-check: error: partitioning for mesh pp:2 failed: gpt2.mlir:45:1: error: part-pipeline: 2 stages need at least 2 layers
// CHECK-NEXT: exit 2
// CHECK-LABEL: == gpt2.mlir --mesh tp:2 --steps x
// CHECK-NEXT: partition-check: for the --steps option: 'x' value invalid for integer argument!
// CHECK-NEXT: exit 2
