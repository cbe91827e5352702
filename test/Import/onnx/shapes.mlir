// Binding the inputs' shapes: --shape gives an input's sizes by position
// whatever the exporter named its dimensions (torch's dynamo exporter: s72,
// s70), --dim a symbol by name; both are checked against each other, the
// input's rank and the sizes the model fixes. A model with fixed input
// shapes says that the file serves only those (models in
// Inputs/shapes_models.py).
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/shapes_models.py %t
//
// By position: input_ids binds s72 and s70, which attention_mask shares;
// positions' first dimension has no name, only --shape reaches it.
// RUN: partition-import %t/dynamo.onnx --shape input_ids=2x16 --shape positions=3x16 -o - | FileCheck %s --check-prefix=SHAPE
// SHAPE-LABEL: func.func @main
// SHAPE-SAME: (%{{.*}}: tensor<2x16xi64> {part.name = "input_ids"{{[^}]*}}}, %{{.*}}: tensor<2x16xi64> {part.name = "attention_mask"{{[^}]*}}}, %{{.*}}: tensor<3x16xi64> {part.name = "positions"{{[^}]*}}})
// SHAPE-SAME: -> (tensor<2x16xf32> {{.*}}, tensor<3x16xf32>
//
// '?' and '_' leave a dimension to --dim (or another input's --shape):
// RUN: partition-import %t/dynamo.onnx --shape input_ids=?x16 --dim s72=4 --shape positions=5x_ -o - | FileCheck %s --check-prefix=MIXED
// MIXED: (%{{.*}}: tensor<4x16xi64> {{.*}}, %{{.*}}: tensor<4x16xi64> {{.*}}, %{{.*}}: tensor<5x16xi64>
// The same sizes twice are no conflict:
// RUN: partition-import %t/dynamo.onnx --shape input_ids=4x16 --shape attention_mask=4x16 --dim s70=16 --shape positions=1x16 -o /dev/null
//
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2x16 --dim s72=4 --shape positions=2x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=DIMCONFLICT
// DIMCONFLICT: dynamo.onnx: error: --shape input_ids=2x16 binds 's72' (input 'input_ids', dimension 0) to 2, but --dim s72=4 binds it to 4
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2x16 --shape attention_mask=2x8 --shape positions=2x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: --shape input_ids=2x16 binds 's70' (input 'input_ids', dimension 1) to 16, but --shape attention_mask=2x8 (input 'attention_mask', dimension 1) binds it to 8
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2x16x1 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: --shape input_ids=2x16x1 gives 3 dimensions, but input 'input_ids' has 2
// RUN: not partition-import %t/dynamo.onnx --shape ids=2x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: error: --shape ids=2x16 names no input of the model (its inputs are: 'attention_mask', 'input_ids', 'positions')
//
// Unbound dimensions say how to bind them:
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: input 'positions', dimension 0 has no size; partition needs static shapes: pass --shape positions=SIZExSIZE...
// RUN: not partition-import %t/dynamo.onnx --shape positions=2x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNBOUNDSYM
// UNBOUNDSYM: error: input 'input_ids', dimension 0: symbolic size 's72' is not bound; pass --dim s72=N, or --shape input_ids=SIZExSIZE... to give the input's sizes by position
//
// Malformed bindings:
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2xq -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=BADSIZE
// BADSIZE: partition-import: --shape input_ids=2xq: expected input=SIZExSIZE..., each size a positive integer, or '?' or '_' to leave it
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=0x16 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: partition-import: --shape input_ids=0x16: expected input=SIZExSIZE...
// RUN: not partition-import %t/dynamo.onnx --shape input_ids -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NOEQ
// NOEQ: partition-import: --shape input_ids: expected input=SIZExSIZE...
// RUN: not partition-import %t/dynamo.onnx --shape input_ids=2x16 --shape input_ids=2x8 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: partition-import: --shape input_ids=2x8: input 'input_ids' has another --shape
//
// A model exported with fixed shapes (its causal mask folded for batch 2
// and sequence 16) serves only those: asking for another size is an error
// that says so and how to export dynamic shapes; the same sizes import.
// RUN: partition-import %t/fixed.onnx --shape input_ids=2x16 -o /dev/null
// RUN: not partition-import %t/fixed.onnx --shape input_ids=4x? -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FIXED
// FIXED: fixed.onnx: error: --shape input_ids=4x?: input 'input_ids', dimension 0 is fixed at 2 by the model, not 4; the model's inputs are fixed at input_ids [2, 16], and the file serves only these shapes (an exporter folds fixed sizes into constants, a causal mask of the sequence length, say); to serve others, export with dynamic shapes: torch.onnx.export(..., dynamic_shapes=...), or dynamic_axes=... with the TorchScript exporter
// RUN: not partition-import %t/fixed.onnx --dim batch=4 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FIXEDDIM
// FIXEDDIM: error: --dim batch=4 names no symbolic dimension of the model's inputs; the model's inputs are fixed at input_ids [2, 16], and the file serves only these shapes {{.*}} torch.onnx.export(..., dynamic_shapes=...)
// The parameter report states it too:
// RUN: partition-import %t/fixed.onnx --report-parameters -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORTFIXED
// REPORTFIXED: fixed.onnx: remark: the model's inputs are fixed at input_ids [2, 16], and the file serves only these shapes {{.*}} dynamic_shapes=...
// RUN: partition-import %t/dynamo.onnx --shape input_ids=2x16 --shape positions=3x_ --report-parameters -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORTDYN
// REPORTDYN: dynamo.onnx: remark: the model's inputs are input_ids [s72=2, s70=16], attention_mask [s72=2, s70=16], positions [?=3, s70=16]{{$}}
//
// Partly fixed: the batch is, the sequence is not.
// RUN: partition-import %t/partial.onnx --shape x=2x32 -o - | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: tensor<2x32xf32>
// RUN: not partition-import %t/partial.onnx --shape x=4x32 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=PARTIALFIXED
// PARTIALFIXED: error: --shape x=4x32: input 'x', dimension 0 is fixed at 2 by the model, not 4; the model's inputs are x [2, seq=32], and the file serves only the sizes given as numbers (an exporter
//
// RUN: not ls %t/out.mlir
