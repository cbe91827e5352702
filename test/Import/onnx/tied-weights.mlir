// Tied weights: an exporter folds a tied head's transpose into a second
// initializer. It becomes the one parameter transposed (the head a matmul
// with transpose_b of it) when its data is that parameter's transposed,
// bit for bit, and, with torch.export's metadata, its users read that
// parameter. One flipped bit, or data of one value (which any transpose of
// that shape matches), ties nothing. Inputs/make_tied.py describes the
// models.
//
// REQUIRES: current-transformers
// RUN: rm -rf %t && mkdir -p %t
// RUN: %current_python %S/Inputs/make_tied.py %t
//
// The legacy exporter's form: no metadata, the folded copy named onnx::.
// RUN: partition-import %t/legacy.onnx --report-parameters -o %t/legacy.mlir 2> %t/legacy.txt
// RUN: FileCheck %s --check-prefix=LEGACY < %t/legacy.mlir
// RUN: FileCheck %s --check-prefix=LEGACY-REPORT < %t/legacy.txt
// LEGACY-LABEL: func.func @main(
// LEGACY-SAME: %[[W:arg[0-9]+]]: tensor<6x4xf32> {part.name = "wte", part.role = #part.role<parameter>})
// LEGACY: part.gather %[[W]]
// LEGACY: part.matmul %{{[0-9]+}}, %[[W]] transpose_b
// LEGACY-REPORT: initializer 'wte' [6, 4]: parameter
// LEGACY-REPORT: initializer 'onnx::MatMul_9' [4, 6]: the transpose of parameter 'wte' (tied: its data is initializer 'wte' transposed, bit for bit)
//
// RUN: partition-import %t/legacy-near.onnx -o - | FileCheck %s --check-prefix=UNTIED
// RUN: partition-import %t/legacy-ones.onnx -o - | FileCheck %s --check-prefix=UNTIED
// UNTIED-LABEL: func.func @main(
// UNTIED-SAME: tensor<6x4xf32> {part.name = "wte", part.role = #part.role<parameter>}
// UNTIED-SAME: tensor<4x6xf32> {part.name = "onnx::MatMul_9", part.role = #part.role<parameter>, part.stored_permutation = array<i64: 1, 0>, part.stored_shape = array<i64: 6, 4>})
// UNTIED-NOT: transpose_b
//
// The dynamo exporter's form: the parameter takes the name torch's
// named_parameters() lists first (wte.weight, whose module reads the
// tensor torch.export lists last, as lm_head.weight).
// RUN: partition-import %t/dynamo.onnx --report-parameters -o %t/dynamo.mlir 2> %t/dynamo.txt
// RUN: FileCheck %s --check-prefix=DYNAMO < %t/dynamo.mlir
// RUN: FileCheck %s --check-prefix=DYNAMO-REPORT < %t/dynamo.txt
// DYNAMO-LABEL: func.func @main(
// DYNAMO-SAME: %[[W:arg[0-9]+]]: tensor<6x4xf32> {part.name = "wte.weight", part.role = #part.role<parameter>})
// DYNAMO: part.gather %[[W]]
// DYNAMO: part.matmul %{{[0-9]+}}, %[[W]] transpose_b
// DYNAMO-REPORT: initializer 'lm_head.weight' [6, 4]: parameter 'wte.weight' (tied: torch.export also lists it as 'lm_head.weight', and module 'wte' reads it under that name)
// DYNAMO-REPORT: initializer 'val_5' [4, 6]: the transpose of parameter 'wte.weight' (tied: its users read that parameter, and its data is initializer 'lm_head.weight' transposed, bit for bit)
//
// RUN: not partition-import %t/dynamo-near.onnx -o %t/near.mlir 2>&1 | FileCheck %s --check-prefix=NEAR
// NEAR: error: initializers the exporter folded from a parameter that another initializer holds are not its transpose, so they would not be trained:
// NEAR-NEXT: 'val_5': folded by the exporter from parameter 'lm_head.weight', which initializer 'lm_head.weight' holds, and not its transpose
// NEAR-NEXT: export with torch.onnx.export(..., dynamo=True, optimize=False) to train them, or pass --frozen with their names to import them as constants
//
// Folded parameters: the optimizer replaced norm.weight by 1 + norm.weight.
// RUN: not partition-import %t/folded.onnx -o %t/f.mlir 2>&1 | FileCheck %s --check-prefix=FOLDED
// FOLDED: error: parameters that torch.export lists were folded by the exporter's optimizer into values computed from them, from which they cannot be recovered exactly, so they would not be trained:
// FOLDED-NEXT: 'norm.weight' into 'add_3'
// FOLDED-NEXT: export with torch.onnx.export(..., dynamo=True, optimize=False) to train them, or pass --frozen with their names to import the folded values as constants
// --frozen (by the parameter's name) imports the folded value as a constant.
// RUN: partition-import %t/folded.onnx --frozen 'norm.*' --report-parameters -o %t/f.mlir 2> %t/frozen.txt
// RUN: FileCheck %s --check-prefix=FROZEN < %t/frozen.txt
// FROZEN-DAG: initializer 'add_3' [4]: constant: --frozen 'norm.*'
// FROZEN-DAG: remark: parameter 'norm.weight' into 'add_3' was folded by the exporter; constant: --frozen
