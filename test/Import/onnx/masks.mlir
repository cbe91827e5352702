// What exporters write for attention masks, positions and broadcasts:
// CumSum (exclusive, reverse, the axis a Constant or an initializer),
// Trilu (upper, lower, k), Range, Where / Equal / Not / And on bool values
// (a bool graph input arrives as i32 0 / 1), and Expand (a constant shape, a
// shape computed from Shape, broadcasting both ways, rank growth, a folded
// Expand of a constant). Inputs/masks_model.py writes the model with
// symbolic dimensions and onnxruntime's outputs; the import binds them, the
// program runs on the CPU backend and each output is compared.
//
// Exact except for the float CumSums: the run-time scan adds by doubling
// (log2(seq) steps) where onnxruntime adds left to right, so the sums are
// rounded in another order. Each is of at most 5 values in [-1, 1) with 4
// additions, each rounding by at most 2^-24 of a partial sum below 5:
// 4 * 5 * 2^-24 = 1.2e-6.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %ort_python %S/Inputs/masks_model.py %t
// RUN: partition-import %t/masks.onnx --dim batch=2 --dim seq=5 -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input mask=%t/mask.npy --input keep=%t/keep.npy \
// RUN:   --input x=%t/x.npy --input scores=%t/scores.npy --input v=%t/v.npy \
// RUN:   --input r=%t/r.npy --output-dir %t/out > /dev/null
// RUN: for n in positions csum_rev csum_batch triu tril tril0 range frange \
// RUN:          range_mask selected keep_eq kept expand_const expand_shape \
// RUN:          expand_rank expand_host expand_mask; do \
// RUN:   %python %S/../../e2e/Inputs/compare.py 0 0 %t/ref/$n.npy %t/out/$n.npy || exit 1; \
// RUN: done
// RUN: %python %S/../../e2e/Inputs/compare.py 1.2e-6 0 %t/ref/csum_ex.npy %t/out/csum_ex.npy
// RUN: %python %S/../../e2e/Inputs/compare.py 1.2e-6 0 %t/ref/csum_rev_ex.npy %t/out/csum_rev_ex.npy
//
// The bool input is i32; CumSum on a run-time value is a scan of shifted
// additions; Range folds once seq is bound.
// CHECK: func.func @main(%arg0: tensor<2x5xi64> {part.name = "mask"{{.*}}}, %arg1: tensor<2x5xi32> {part.name = "keep"
// CHECK: %[[S:.*]] = part.slice %arg0 offsets [0, 0] : tensor<2x5xi64> -> tensor<2x4xi64>
// CHECK: %[[P:.*]] = part.pad %[[S]] offsets [0, 1] : tensor<2x4xi64> -> tensor<2x5xi64>
// CHECK: part.add %arg0, %[[P]]
// CHECK: part.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK: part.select %arg1, %arg2
// CHECK: part.broadcast %arg4 : tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK: part.broadcast %arg5 : tensor<5xf32> -> tensor<2x2x5xf32>
// CHECK: part.constant dense<{{\[\[1, 1, 1, 1, 1\], \[2, 2, 2, 2, 2\]\]}}> : tensor<2x5xi64>
