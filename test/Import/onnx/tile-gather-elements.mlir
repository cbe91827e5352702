// Tile, GatherElements and the shape arithmetic of GPT-J's and CodeGen's
// rotary embeddings: Tile with constant repeats and repeats from Shape,
// GatherElements with indices the same across every dimension but the
// gather axis (GPT-J's sin/cos rows picked by position), with constant
// indices that differ across rows (one negative), with indices computed at
// run time (int64 and int32), both folded on constants, and a Split of a
// Shape feeding Where(Equal(shape, -1), 1, shape) (CodeGen's expand).
// Inputs/tile_gather_model.py writes the model with symbolic dimensions and
// onnxruntime's outputs; the import binds them, the program runs on the CPU
// backend and each output must match exactly.
//
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %ort_python %S/Inputs/tile_gather_model.py %t
// RUN: partition-import %t/tile_gather.onnx --dim batch=2 --dim seq=5 -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input x=%t/x.npy --input table=%t/table.npy \
// RUN:   --input t=%t/t.npy --input idx=%t/idx.npy --input r=%t/r.npy \
// RUN:   --output-dir %t/out > /dev/null
// RUN: for n in tile_rows tile_both tile_shape tile_host ge_axis ge_const \
// RUN:          ge_runtime ge_runtime32 ge_host expand_split; do \
// RUN:   %python %S/../../e2e/Inputs/compare.py 0 0 %t/ref/$n.npy %t/out/$n.npy || exit 1; \
// RUN: done
//
// Tile: a unit dimension in front of each repeated one, broadcast to the
// count and merged with it.
// CHECK: %[[R:.*]] = part.reshape %arg0 : tensor<2x5xf32> -> tensor<1x2x5xf32>
// CHECK: %[[B:.*]] = part.broadcast %[[R]] : tensor<1x2x5xf32> -> tensor<2x2x5xf32>
// CHECK: part.reshape %[[B]] : tensor<2x2x5xf32> -> tensor<4x5xf32>
// CHECK: part.broadcast %{{.*}} : tensor<1x2x1x5xf32> -> tensor<3x2x2x5xf32>
// CHECK: part.reshape %{{.*}} : tensor<3x2x2x5xf32> -> tensor<6x10xf32>
//
// GPT-J's positions: the table cut to the indices' two features, one
// gather of the (reversed) positions along axis 1.
// CHECK: %[[T:.*]] = part.slice %arg1 offsets [0, 0, 0] : tensor<2x7x3xf32> -> tensor<2x7x2xf32>
// CHECK: %[[P:.*]] = part.constant dense<[4, 3, 2, 1, 0]> : tensor<5xi64>
// CHECK: part.gather %[[T]], %[[P]] axis 1 : (tensor<2x7x2xf32>, tensor<5xi64>) -> tensor<2x5x2xf32>
//
// Other constant indices: a gather from the flattened data at constant
// positions (-1 is 4 in row 0, 1 * 5 + i in row 1).
// CHECK: %[[I:.*]] = part.constant dense<{{\[\[0, 4, 4\], \[6, 6, 7\]\]}}> : tensor<2x3xi64>
// CHECK: %[[F:.*]] = part.reshape %arg0 : tensor<2x5xf32> -> tensor<10xf32>
// CHECK: part.gather %[[F]], %[[I]] axis 0 : (tensor<10xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
//
// Run-time indices: made non-negative, times the stride of axis 1 (3),
// plus each element's position in the other dimensions.
// CHECK: %[[S:.*]] = part.constant dense<3> : tensor<i64>
// CHECK: %[[M:.*]] = part.mul %{{.*}}, %[[S]]
// CHECK: %[[BASE:.*]] = part.constant dense<{{\[\[\[0, 1, 2\], \[0, 1, 2\]\], \[\[15, 16, 17\], \[15, 16, 17\]\]\]}}> : tensor<2x2x3xi64>
// CHECK: %[[SRC:.*]] = part.add %[[M]], %[[BASE]]
// CHECK: %[[TF:.*]] = part.reshape %arg2 : tensor<2x5x3xf32> -> tensor<30xf32>
// CHECK: part.gather %[[TF]], %[[SRC]] axis 0 : (tensor<30xf32>, tensor<2x2x3xi64>) -> tensor<2x2x3xf32>
// CHECK: part.gather %{{.*}}, %{{.*}} axis 0 : (tensor<30xf32>, tensor<2x2x3xi32>) -> tensor<2x2x3xf32>
//
// The Split shape folds: [2, -1, 5] becomes [2, 1, 5]; the host Tile and
// GatherElements are constants.
// CHECK: part.broadcast %arg4 : tensor<5xf32> -> tensor<2x1x5xf32>
// CHECK: part.constant dense<{{\[\[1, 2, 1, 2, 1, 2\], \[1, 2, 1, 2, 1, 2\]\]}}> : tensor<2x6xi64>
// CHECK: part.constant dense<{{\[\[3.500000e\+00, 2.500000e\+00\], \[1.500000e\+00, 2.500000e\+00\]\]}}> : tensor<2x2xf32>
// CHECK-NOT: part.gather
