// A NaN or an infinity in either run's outputs, losses or weights is a
// result of its own (exit code 3, a NON-FINITE line naming the output, the
// step or element and the side), never PASS and never a MISMATCH: no
// tolerance can say whether two NaNs agree.
//
// RUN: rm -rf %t && mkdir -p %t
// One weight of w is NaN (the rest 0.5):
// RUN: %python -c "import json, struct; h = json.dumps({'w': {'dtype': 'F32', 'shape': [8, 8], 'data_offsets': [0, 256]}}).encode(); h += b' ' * (-len(h) %% 8); open('%t/nan.safetensors', 'wb').write(struct.pack('<Q', len(h)) + h + struct.pack('<64f', float('nan'), *[0.5] * 63))"
//
// RUN: partition-check %s --mesh dp:2 --weights %t/nan.safetensors > %t/forward.log; echo "exit $?" >> %t/forward.log
// RUN: FileCheck %s --check-prefix=FORWARD < %t/forward.log
// FORWARD: output0 f32[]: NON-FINITE: the unpartitioned run has NaN; the partitioned run has NaN
// FORWARD-NOT: PASS
// FORWARD-NOT: MISMATCH
// FORWARD-NOT: differ
// FORWARD: NON-FINITE: 1 value is NaN or infinite (first: output0 in both runs)
// FORWARD-NEXT: exit 3
//
// Trained: the loss of each step and the weights after the last.
// RUN: partition-check %s --mesh dp:2 --weights %t/nan.safetensors --steps 2 > %t/train.log; echo "exit $?" >> %t/train.log
// RUN: FileCheck %s --check-prefix=TRAIN < %t/train.log
// TRAIN: step 1: output0 partitioned NaN vs unpartitioned NaN  NON-FINITE in both runs
// TRAIN: step 2: output0 partitioned NaN vs unpartitioned NaN  NON-FINITE in both runs
// TRAIN: new.w f32[8, 8]: NON-FINITE: the unpartitioned run has NaN at [0, 0] (64 of 64 elements not finite); the partitioned run has NaN at [0, 0] (64 of 64 elements not finite)
// TRAIN-NOT: PASS
// TRAIN-NOT: MISMATCH
// TRAIN-NOT: differ
// TRAIN-NOT: agree
// TRAIN: NON-FINITE: 4 values are NaN or infinite (first: step 1 output0 in both runs)
// TRAIN-NEXT: exit 3
//
// The same model with finite weights passes.
// RUN: partition-check %s --mesh dp:2 | FileCheck %s --check-prefix=FINITE
// FINITE: PASS

func.func @main(%x: tensor<4x8xf32> {part.role = #part.role<input>, part.name = "x"},
                %labels: tensor<4xi32> {part.role = #part.role<label>, part.name = "labels"},
                %w: tensor<8x8xf32> {part.role = #part.role<parameter>, part.name = "w"}) -> tensor<f32> {
  %h = part.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = part.softmax_cross_entropy %h, %labels mean : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
