// Grouped-query attention's key/value heads repeated with
// torch.repeat_interleave, exported by torch.onnx.export at opset 17 with
// dynamic batch, head and sequence dimensions: torch writes a Loop over a
// sequence (SplitToSequence, SequenceEmpty, SequenceAt / SequenceInsert in
// the body, ConcatFromSequence). With every dimension bound the trip count
// is known, the loop is unrolled and no sequence reaches the IR; the
// program is checked against torch.
//
// Tolerance 1e-6 + 1e-6 |ref|: softmax(q kᵀ / √8) v over 5 positions and a
// head size of 8 in float32, summed in another order than torch's (its own
// onnxruntime run differs from it by 2.4e-7).
//
// REQUIRES: transformers
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %ort_python %S/Inputs/repeat_interleave.py %t
// RUN: %ort_python -c "import onnx, sys; ops = {n.op_type for n in onnx.load('%t/gqa.onnx').graph.node}; sys.exit(not {'Loop', 'SplitToSequence', 'SequenceEmpty', 'ConcatFromSequence'} <= ops)"
// RUN: partition-import %t/gqa.onnx --dim batch=2 --dim heads=4 --dim kv_heads=2 --dim seq=5 -o %t/m.mlir
// RUN: FileCheck %s < %t/m.mlir
// RUN: partition-opt %t/m.mlir --part-spmd=mesh=dp:1 | partition-translate --part-to-plan -o %t/p.plan
// RUN: partition-run %t/p.plan --input q=%t/q.npy --input k=%t/k.npy --input v=%t/v.npy --output-dir %t/out > /dev/null
// RUN: %python %S/../../e2e/Inputs/compare.py 1e-6 1e-6 %t/ref.npy %t/out/y.npy
//
// Each of the two loops is unrolled into one slice per key/value head and
// their concatenation:
// CHECK-COUNT-2: part.concat %{{.*}}, %{{.*}} dim 1
// CHECK: part.attention %arg0, %{{.*}}, %{{.*}} : (tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x5x8xf32>
