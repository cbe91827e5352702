// Every diagnostic of the importer that errors.mlir and hostile.mlir do not
// reach: one model per case (Inputs/make_node_errors.py), each wrong in one
// way, and what the importer says about it. Node errors name the node and
// the values, and nothing is written.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_node_errors.py %t
//
// --- sequences and loops: what cannot be unrolled or indexed names the node ---
// RUN: not partition-import %t/seq-not-seq.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-NOT-SEQ
// SEQ-NOT-SEQ: error: node '/at' (SequenceAt): input 0 ('x') is not a sequence
// RUN: not partition-import %t/seq-not-tensor.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-NOT-TENSOR
// SEQ-NOT-TENSOR: error: node '/insert' (SequenceInsert): input 1 ('s') is not a tensor
// RUN: not partition-import %t/seq-pos-scalar.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-POS-SCALAR
// SEQ-POS-SCALAR: error: node '/at' (SequenceAt): the position must be a scalar; it has 2 elements
// RUN: not partition-import %t/seq-pos-range.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-POS-RANGE
// SEQ-POS-RANGE: error: node '/at' (SequenceAt): position 5 is out of range for a sequence of 3 tensors
// RUN: not partition-import %t/seq-split-zero.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-SPLIT-ZERO
// SEQ-SPLIT-ZERO: error: node '/split_seq' (SplitToSequence): split 0 is not positive
// RUN: not partition-import %t/seq-split-cover.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-SPLIT-COVER
// SEQ-SPLIT-COVER: error: node '/split_seq' (SplitToSequence): split sizes [1, 1] do not cover the dimension of size 3
// RUN: not partition-import %t/seq-split-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-SPLIT-AXIS
// SEQ-SPLIT-AXIS: error: node '/split_seq' (SplitToSequence): axis 4 is out of range for rank 2
// RUN: not partition-import %t/seq-empty.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-EMPTY
// SEQ-EMPTY: error: node '/cat' (ConcatFromSequence): the sequence is empty (partition has no empty tensors)
// RUN: not partition-import %t/seq-cat-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-CAT-AXIS
// SEQ-CAT-AXIS: error: node '/cat' (ConcatFromSequence): axis 3 is out of range for rank 2
// RUN: not partition-import %t/seq-cat-shapes.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-CAT-SHAPES
// SEQ-CAT-SHAPES: error: node '/cat' (ConcatFromSequence): elements of shapes [2, 3] and [3, 2] differ outside axis 0
// RUN: not partition-import %t/seq-as-tensor.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-AS-TENSOR
// SEQ-AS-TENSOR: error: node '/id' (Identity): input 0 ('s') is a sequence; only sequence ops take sequences
// RUN: not partition-import %t/seq-output.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SEQ-OUTPUT
// SEQ-OUTPUT: error: graph output 's' is a sequence; partition's outputs are tensors
// RUN: not partition-import %t/loop-cond-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-COND-RUNTIME
// LOOP-COND-RUNTIME: error: node '/loop' (Loop): the loop's condition is computed at run time; partition unrolls loops whose trip count and condition are known while importing
// RUN: not partition-import %t/loop-cond-elements.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-COND-ELEMENTS
// LOOP-COND-ELEMENTS: error: node '/loop' (Loop): the loop's condition has 2 elements, not one
// RUN: not partition-import %t/loop-trips-elements.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-TRIPS-ELEMENTS
// LOOP-TRIPS-ELEMENTS: error: node '/loop' (Loop): the trip count has 2 elements, not one
// RUN: not partition-import %t/loop-trips-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-TRIPS-RUNTIME
// LOOP-TRIPS-RUNTIME: error: node '/loop' (Loop): its trip count (input 0, 'm') is computed at run time; partition needs it as a constant (bind every symbolic dimension with --dim so that shape arithmetic folds)
// RUN: not partition-import %t/loop-body-cond-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-BODY-COND-RUNTIME
// LOOP-BODY-COND-RUNTIME: error: node '/loop' (Loop): the loop's condition is computed at run time; partition unrolls loops whose trip count and condition are known while importing
// RUN: not partition-import %t/loop-body-ghost.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-BODY-GHOST
// LOOP-BODY-GHOST: error: node '/loop' (Loop): the body's output 'ghost' has no value
// RUN: not partition-import %t/loop-scan-shape.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-SCAN-SHAPE
// LOOP-SCAN-SHAPE: error: node '/loop' (Loop): scan output 'scan' changes shape between iterations
// RUN: not partition-import %t/loop-body-arity.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-BODY-ARITY
// LOOP-BODY-ARITY: error: node '/loop' (Loop): the body takes 2 inputs and gives 1 outputs for 1 carried values and 1 loop outputs
// RUN: not partition-import %t/loop-no-body.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-NO-BODY
// LOOP-NO-BODY: error: node '/loop' (Loop): a Loop needs the 'body' graph attribute
// RUN: not partition-import %t/loop-too-long.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-TOO-LONG
// LOOP-TOO-LONG: error: node '/loop' (Loop): the loop runs more than 4096 iterations; partition unrolls at most 4096
// RUN: not partition-import %t/loop-no-iteration.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-NO-ITERATION
// LOOP-NO-ITERATION: error: node '/loop' (Loop): the loop runs no iteration, so its scan outputs would be empty (partition has no empty tensors)
// RUN: not partition-import %t/loop-carried-novalue.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LOOP-CARRIED-NOVALUE
// LOOP-CARRIED-NOVALUE: error: node '/loop' (Loop): input 2 ('mask') has no value
// RUN: not partition-import %t/if.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=IF
// IF: error: unsupported ONNX ops (opset 17):
// IF-NEXT: If (1 node): /branch
//
// --- elementwise ops and masks ---
// RUN: not partition-import %t/pow-int.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=POW-INT
// POW-INT: error: node '/pow' (Pow): integer base 'tensor<2x3xi64>': part.pow is floating point only
// RUN: not partition-import %t/gelu-approximate.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GELU-APPROXIMATE
// GELU-APPROXIMATE: error: node '/gelu' (Gelu): unknown approximate='fast' (expected 'none' or 'tanh')
// RUN: not partition-import %t/dropout-mask.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=DROPOUT-MASK
// DROPOUT-MASK: error: node '/drop' (Dropout): the mask output of Dropout is not supported (partition imports inference graphs)
// RUN: not partition-import %t/cast-string.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CAST-STRING
// CAST-STRING: error: node '/cast' (Cast): cast to string is not supported
// RUN: not partition-import %t/types.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TYPES
// TYPES: error: node '/add' (Add): operands have element types 'f32' and 'i64'
// RUN: not partition-import %t/broadcast.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=BROADCAST
// BROADCAST: error: node '/add' (Add): operand shapes [2, 3] and [4] do not broadcast
// RUN: not partition-import %t/where-broadcast.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=WHERE-BROADCAST
// WHERE-BROADCAST: error: node '/where' (Where): operand shapes [2, 3], [2, 3] and [4] do not broadcast
// RUN: not partition-import %t/trilu-rank-host.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TRILU-RANK-HOST
// TRILU-RANK-HOST: error: node '/trilu' (Trilu): Trilu needs rank at least 2, got [3]
// RUN: not partition-import %t/trilu-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TRILU-RANK
// TRILU-RANK: error: node '/trilu' (Trilu): Trilu needs rank at least 2, got [3]
// RUN: not partition-import %t/not-float.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NOT-FLOAT
// NOT-FLOAT: error: node '/softmax' (Softmax): operand of type 'tensor<2x3xi64>' is not a float tensor
// RUN: not partition-import %t/host-only.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=HOST-ONLY
// HOST-ONLY: error: node '/mod' (Mod): partition evaluates Mod only while importing, on constants; its inputs 'm' are computed at run time
// RUN: not partition-import %t/float64-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FLOAT64-RUNTIME
// FLOAT64-RUNTIME: error: value 'd' has element type float64 and is used by a run-time op; partition computes in float32, float16, bfloat16, int32 and int64
// RUN: not partition-import %t/variadic-missing.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=VARIADIC-MISSING
// VARIADIC-MISSING: error: node '/sum' (Sum): input 1 is missing
// RUN: not partition-import %t/takes-at-most.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TAKES-AT-MOST
// TAKES-AT-MOST: error: node '/id' (Identity): takes at most 1 input, got 2
// RUN: not partition-import %t/input-novalue.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-NOVALUE
// INPUT-NOVALUE: error: node '/id' (Identity): input 0 ('mask') has no value
//
// --- contractions, normalisation, reductions ---
// RUN: not partition-import %t/matmul-scalar.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MATMUL-SCALAR
// MATMUL-SCALAR: error: node '/matmul' (MatMul): MatMul of a scalar: operand shapes [] and [2, 3]
// RUN: not partition-import %t/matmul-contract.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MATMUL-CONTRACT
// MATMUL-CONTRACT: error: node '/matmul' (MatMul): contracting sizes differ: [2, 3] x [2, 3]
// RUN: not partition-import %t/matmul-batch.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=MATMUL-BATCH
// MATMUL-BATCH: error: node '/matmul' (MatMul): batch dimensions [2] and [3] do not broadcast
// RUN: not partition-import %t/gemm-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GEMM-RANK
// GEMM-RANK: error: node '/gemm' (Gemm): Gemm needs two matrices, got [2, 2, 3] and [2, 3]
// RUN: not partition-import %t/gemm-contract.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GEMM-CONTRACT
// GEMM-CONTRACT: error: node '/gemm' (Gemm): contracting sizes differ: [2, 3] x [2, 3]
// RUN: not partition-import %t/gemm-c.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GEMM-C
// GEMM-C: error: node '/gemm' (Gemm): C of shape [5] does not broadcast to the product's [2, 2]
// RUN: not partition-import %t/softmax-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SOFTMAX-AXIS
// SOFTMAX-AXIS: error: node '/softmax' (Softmax): axis 2 is out of range for rank 2
// RUN: not partition-import %t/layernorm-scale.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LAYERNORM-SCALE
// LAYERNORM-SCALE: error: node '/ln' (LayerNormalization): scale of shape [4] does not match the normalised dimensions [3]
// RUN: not partition-import %t/layernorm-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LAYERNORM-AXIS
// LAYERNORM-AXIS: error: node '/ln' (LayerNormalization): axis -3 is out of range for rank 2
// RUN: not partition-import %t/reduce-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=REDUCE-AXIS
// REDUCE-AXIS: error: node '/sum' (ReduceSum): axis 3 is out of range for rank 2
// RUN: not partition-import %t/reduceprod-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=REDUCEPROD-RANK
// REDUCEPROD-RANK: error: node '/prod' (ReduceProd): partition folds ReduceProd of rank 0 or 1 only; the operand has shape [2, 2]
// RUN: not partition-import %t/cumsum-axis-scalar.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CUMSUM-AXIS-SCALAR
// CUMSUM-AXIS-SCALAR: error: node '/cumsum' (CumSum): axis must be a scalar; it has 2 elements
// RUN: not partition-import %t/cumsum-axis-range.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CUMSUM-AXIS-RANGE
// CUMSUM-AXIS-RANGE: error: node '/cumsum' (CumSum): axis 5 is out of range for rank 2
//
// --- constants, shapes and data movement ---
// RUN: not partition-import %t/constant-novalue.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CONSTANT-NOVALUE
// CONSTANT-NOVALUE: error: node '/const' (Constant): a Constant needs value, value_float(s) or value_int(s) (sparse and string constants are not supported)
// RUN: not partition-import %t/range-delta-zero.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RANGE-DELTA-ZERO
// RANGE-DELTA-ZERO: error: node '/range' (Range): Range with delta 0
// RUN: not partition-import %t/reshape-allowzero.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESHAPE-ALLOWZERO
// RESHAPE-ALLOWZERO: error: node '/reshape' (Reshape): shape [0, 6] has a dimension 0 with allowzero (partition has no empty tensors)
// RUN: not partition-import %t/reshape-two-inferred.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESHAPE-TWO-INFERRED
// RESHAPE-TWO-INFERRED: error: node '/reshape' (Reshape): shape [-1, -1] has two -1 dimensions
// RUN: not partition-import %t/reshape-runtime-shape.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESHAPE-RUNTIME-SHAPE
// RESHAPE-RUNTIME-SHAPE: error: node '/reshape' (Reshape): its shape (input 1, 's') is computed at run time; partition needs it as a constant (bind every symbolic dimension with --dim so that shape arithmetic folds)
// RUN: not partition-import %t/squeeze.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SQUEEZE
// SQUEEZE: error: node '/squeeze' (Squeeze): cannot squeeze axis 0 of [2, 3]
// RUN: not partition-import %t/expand.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=EXPAND
// EXPAND: error: node '/expand' (Expand): cannot expand [2, 3] to [4]
// RUN: not partition-import %t/tile-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TILE-RANK
// TILE-RANK: error: node '/tile' (Tile): repeats [2] has 1 elements for an input of shape [2, 3]
// RUN: not partition-import %t/tile-zero.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TILE-ZERO
// TILE-ZERO: error: node '/tile' (Tile): repeats [0, 1] has the count 0 (partition has no empty tensors)
// RUN: not partition-import %t/tile-overflow.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TILE-OVERFLOW
// TILE-OVERFLOW: error: node '/tile' (Tile): repeats [4611686018427387904, 4611686018427387904] tile [2, 3] past 2^63 elements
// RUN: not partition-import %t/tile-runtime-repeats.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TILE-RUNTIME
// TILE-RUNTIME: error: node '/tile' (Tile): its repeats (input 1, 'r') is computed at run time
// RUN: not partition-import %t/slice-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SLICE-AXIS
// SLICE-AXIS: error: node '/slice' (Slice): axis 5 or step 1 is invalid for rank 2
// RUN: not partition-import %t/gather-index.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GATHER-INDEX
// GATHER-INDEX: error: node '/gather' (Gather): index 7 is out of range for dimension 0 of size 2
// RUN: not partition-import %t/gather-float-indices.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GATHER-FLOAT-INDICES
// GATHER-FLOAT-INDICES: error: node '/gather' (Gather): indices of type 'tensor<2xf32>' are not integers
// RUN: not partition-import %t/gather-elements-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GE-RANK
// GE-RANK: error: node '/ge' (GatherElements): indices of shape [1] and data of shape [2, 3] differ in rank
// RUN: not partition-import %t/gather-elements-shape.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GE-SHAPE
// GE-SHAPE: error: node '/ge' (GatherElements): indices of shape [3, 1] exceed data of shape [2, 3] in dimension 0
// RUN: not partition-import %t/gather-elements-index.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GE-INDEX
// GE-INDEX: error: node '/ge' (GatherElements): index 3 is out of range for dimension 1 of size 3
// RUN: not partition-import %t/gathernd-index.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-INDEX
// GND-INDEX: error: node '/gnd' (GatherND): index 5 at indices position [1, 1] is out of range for data dimension 1 of size 3 (data of shape [2, 3])
// RUN: not partition-import %t/gathernd-index-host.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-INDEX-HOST
// GND-INDEX-HOST: error: node '/gnd' (GatherND): index -3 at indices position [0, 0] is out of range for data dimension 0 of size 2 (data of shape [2, 2])
// RUN: not partition-import %t/gathernd-depth.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-DEPTH
// GND-DEPTH: error: node '/gnd' (GatherND): index tuples of length 3 (the last dimension of indices of shape [1, 3]) must be in [1, 2] for data of shape [2, 3] and batch_dims 0
// RUN: not partition-import %t/gathernd-batch.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-BATCH
// GND-BATCH: error: node '/gnd' (GatherND): batch dimension 0 of data of shape [2, 3] and indices of shape [3, 1] differ
// RUN: not partition-import %t/gathernd-batch-dims.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-BATCH-DIMS
// GND-BATCH-DIMS: error: node '/gnd' (GatherND): batch_dims 2 is outside [0, 2) for data of shape [2, 3] and indices of shape [2, 1]
// RUN: not partition-import %t/gathernd-float-indices.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-FLOAT
// GND-FLOAT: error: node '/gnd' (GatherND): indices of type float32 are not integers
// RUN: not partition-import %t/gathernd-runtime-indices.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=GND-RUNTIME
// GND-RUNTIME: error: node '/gnd' (GatherND): its indices ('idx') are computed at run time, with batch_dims 0 and index tuples of length 2 (indices of shape [2, 2]); partition translates run-time GatherND only with batch_dims 0 and tuples of length 1 (a gather along dimension 0)
// RUN: not partition-import %t/isnan-int.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ISNAN-INT
// ISNAN-INT: error: node '/isnan' (IsNaN): operand of type 'tensor<2x3xi64>' is not a float tensor
// RUN: not partition-import %t/topk-runtime-k.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TOPK-RUNTIME
// TOPK-RUNTIME: error: node '/topk' (TopK): its k (input 1, 'k') is computed at run time; partition needs it as a constant (bind every symbolic dimension with --dim so that shape arithmetic folds)
// RUN: not partition-import %t/topk-k.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=TOPK-K
// TOPK-K: error: node '/topk' (TopK): k 3 is outside [1, 2] for dimension 1 of shape [1, 2]
// RUN: not partition-import %t/nonzero-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NONZERO-RUNTIME
// NONZERO-RUNTIME: error: node '/nonzero' (NonZero): NonZero of 'x', which is computed at run time: its output size depends on run-time data (partition needs static shapes); it is supported only on values known while importing
// RUN: not partition-import %t/nonzero-empty.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NONZERO-EMPTY
// NONZERO-EMPTY: error: node '/nonzero' (NonZero): its input 'v' has no non-zero element, so the result would be empty (partition has no empty tensors)
// RUN: not partition-import %t/onehot-depth.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ONEHOT-DEPTH
// ONEHOT-DEPTH: error: node '/onehot' (OneHot): depth 0 is not positive (partition has no empty tensors)
// RUN: not partition-import %t/scatter-runtime.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SCATTER-RUNTIME
// SCATTER-RUNTIME: error: node '/scatter' (ScatterElements): partition evaluates ScatterElements only while importing, on constants; its inputs 'x', 'x' are computed at run time
// RUN: not partition-import %t/scatter-index.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SCATTER-INDEX
// SCATTER-INDEX: error: node '/scatter' (ScatterElements): index 2 at indices position [0, 0] is out of range for dimension 1 of data of shape [1, 2]
// RUN: not partition-import %t/split-cover.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT-COVER
// SPLIT-COVER: error: node '/split' (Split): split sizes [1, 1] do not cover dimension 1 of [2, 3] in 2 outputs
// RUN: not partition-import %t/concat-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CONCAT-AXIS
// CONCAT-AXIS: error: node '/concat' (Concat): axis 2 is out of range for rank 2
// RUN: not partition-import %t/concat-rank.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CONCAT-RANK
// CONCAT-RANK: error: node '/concat' (Concat): operands of shapes [2, 3] and [3] differ in rank
// RUN: not partition-import %t/reshape-count.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESHAPE-COUNT
// RESHAPE-COUNT: error: node '/reshape' (Reshape): cannot reshape [2, 3] (6 elements) to [5]
// RUN: not partition-import %t/result-overflow.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESULT-OVERFLOW
// RESULT-OVERFLOW: error: node '/expand' (Expand): result 'y' of shape [1099511627776, 1099511627776, 2, 3] has more than 2^63 elements
// RUN: not partition-import %t/split-num-outputs-opset17.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT-NUM-OUTPUTS
// SPLIT-NUM-OUTPUTS: error: nodes that do not match the declared opset 17:
// SPLIT-NUM-OUTPUTS-NEXT: '/split' (Split) has num_outputs only from opset 18
// RUN: not partition-import %t/flatten-axis.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FLATTEN-AXIS
// FLATTEN-AXIS: error: node '/flatten' (Flatten): axis 5 is out of range for rank 2
//
// --- the graph's boundary and the file ---
// RUN: not partition-import %t/input-sequence.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-SEQUENCE
// INPUT-SEQUENCE: error: input 's' is not a tensor (sequences, maps and optionals are not supported)
// RUN: not partition-import %t/input-no-shape.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-NO-SHAPE
// INPUT-NO-SHAPE: error: input 'x' has no shape
// RUN: not partition-import %t/input-zero-dim.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-ZERO-DIM
// INPUT-ZERO-DIM: error: input 'x', dimension 0 has size 0; partition has no empty tensors
// RUN: not partition-import %t/input-no-size.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-NO-SIZE
// INPUT-NO-SIZE: error: input 'x', dimension 0 has no size; partition needs static shapes
// RUN: not partition-import %t/input-uint8.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INPUT-UINT8
// INPUT-UINT8: error: input 'x' has element type uint8, which partition does not support as an input (float32, float16, bfloat16, int32, int64, bool)
// RUN: not partition-import %t/output-bool.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT-BOOL
// OUTPUT-BOOL: error: graph output 'y' has element type bool, which partition does not support as an output (float32, float16, bfloat16, int32, int64)
// RUN: not partition-import %t/output-shape.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT-SHAPE
// OUTPUT-SHAPE: error: graph output 'y' is computed with shape [2, 3], but the model declares another shape
// RUN: not partition-import %t/output-novalue.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT-NOVALUE
// OUTPUT-NOVALUE: error: graph output 'mask' has no value
// RUN: not partition-import %t/output-undefined.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT-UNDEFINED
// OUTPUT-UNDEFINED: error: values used but never defined (a missing initializer or input?):
// OUTPUT-UNDEFINED-NEXT: 'z' (a graph output)
// RUN: not partition-import %t/initializer-string.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=INITIALIZER-STRING
// INITIALIZER-STRING: error: initializer 'names' has element type string, which partition does not support
// RUN: not partition-import %t/no-ir-version.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NO-IR-VERSION
// NO-IR-VERSION: error: not a valid ONNX model: no ir_version (truncated or not an .onnx file)
// RUN: not partition-import %t/no-onnx-opset.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=NO-ONNX-OPSET
// NO-ONNX-OPSET: error: the model imports no 'ai.onnx' opset; partition supports opsets 13 to 21
// RUN: not partition-import %t/ext-nul.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=EXT-NUL
// EXT-NUL: error: initializer 'w': external data location 'w\x00.bin' has a NUL byte
// RUN: not partition-import %t/ext-missing.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=EXT-MISSING
// EXT-MISSING: error: initializer 'w': cannot read external data {{.*}}missing.bin: No such file or directory
// A model over 2 GiB (a sparse file: nothing is written to disk):
// RUN: truncate -s 2148000000 %t/big.onnx
// RUN: not partition-import %t/big.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: error: the file has 2148000000 bytes; ONNX models over 2 GiB keep their weights as external data
// RUN: rm %t/big.onnx
//
// RUN: not ls %t/out.mlir
