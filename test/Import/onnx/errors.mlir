// Bad inputs to partition-import: each is reported by name with the values
// involved, the tool exits non-zero, and no output file is left behind.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_models.py %t
//
// RUN: not partition-import %t/truncated.onnx --dim batch=2 -o %t/out.mlir --weights %t/out.safetensors 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: truncated.onnx: error: not a valid ONNX model: the protobuf message does not parse ({{[0-9]+}} bytes; truncated or not an .onnx file)
// RUN: not partition-import %t/garbage.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: garbage.onnx: error: not a valid ONNX model: the protobuf message does not parse (37 bytes
// RUN: not partition-import %t/empty.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: empty.onnx: error: the file is empty, not an ONNX model
// RUN: not partition-import %t/no-such-file.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: {{.*}}no-such-file.onnx: cannot open the model: No such file or directory
// RUN: not partition-import %t/no-graph.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NOGRAPH
// NOGRAPH: error: not a valid ONNX model: it has no graph or the graph has no outputs
//
// RUN: not partition-import %t/opset12.onnx --dim batch=2 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OPSET12
// OPSET12: error: the model uses opset 12; partition supports 13 to 21 (convert it with onnx.version_converter.convert_version)
// RUN: not partition-import %t/opset22.onnx --dim batch=2 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OPSET22
// OPSET22: error: the model uses opset 22; partition supports 13 to 21
//
// Every unsupported op type at once, with its nodes, custom domains named:
// RUN: not partition-import %t/unknown-op.onnx --dim batch=2 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unsupported ONNX ops (opset 17):
// UNKNOWN-NEXT: Celu (2 nodes): celu_a, celu_b
// UNKNOWN-NEXT: HardSwish (1 node): hswish
// UNKNOWN-NEXT: com.example.FusedThing (1 node): custom
//
// RUN: not partition-import %t/good.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: input 'x', dimension 0: symbolic size 'batch' is not bound; pass --dim batch=N, or --shape x=SIZExSIZE... to give the input's sizes by position
// RUN: not partition-import %t/good.onnx --dim batch=2 --dim sequence=4 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TYPO
// TYPO: error: --dim sequence=4 names no symbolic dimension of the model's inputs (they are: batch)
// RUN: not partition-import %t/good.onnx --dim batch=0 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=BADDIM
// BADDIM: --dim batch=0: expected name=value with a positive integer value
//
// RUN: not partition-import %t/missing-init.onnx --dim batch=2 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: values used but never defined (a missing initializer or input?):
// MISSING-NEXT: 'fc2.weight' (input of node '/fc2/MatMul')
//
// RUN: not partition-import %t/bad-reshape.onnx --dim batch=2 -o %t/out.mlir --weights %t/out.safetensors 2>&1 | FileCheck %s --check-prefix=RESHAPE
// RESHAPE: error: node '/bad/Reshape' (Reshape): cannot reshape [2, 3] to [5, -1]
//
// Nothing half-written by any of the failures above:
// RUN: not ls %t/out.mlir
// RUN: not ls %t/out.safetensors
// RUN: not ls %t/out.mlir.tmp-* %t/out.safetensors.tmp-*
//
// An output that cannot be written leaves nothing either (the weights file
// goes first and would be renamed into place only after the IR succeeded):
// RUN: not partition-import %t/good.onnx --dim batch=2 -o %t/no-dir/out.mlir --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: partition-import: cannot write {{.*}}no-dir/out.mlir
// RUN: not ls %t/w.safetensors
//
// Nodes of another opset than the model declares, all listed at once:
// RUN: %python %S/Inputs/make_wrong_opset.py %t/wrong
// RUN: not partition-import %t/wrong/gelu-opset19.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GELU19
// GELU19: error: nodes that do not match the declared opset 19:
// GELU19-NEXT: 'gelu' (Gelu) exists from opset 20
// RUN: not partition-import %t/wrong/reduce-input-axes-opset17.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=AXES17
// AXES17: 'mean' (ReduceMean) takes axes as an attribute before opset 18, not as an input
// RUN: not partition-import %t/wrong/reduce-attr-axes-opset18.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=AXES18
// AXES18: 'mean' (ReduceMean) takes axes as an input from opset 18, not as an attribute
