// Hostile and malformed models: each is reported with the node or value and
// the numbers involved, never a crash, a hang or an out-of-memory abort.
// Inputs/make_hostile.py writes the models and says what is wrong with each.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_hostile.py %t/m
//
// --- not a model file: a directory, a FIFO (would block), /dev/zero (would
// never end) ---
// RUN: not partition-import %t/m -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: error: {{.*}}m: the model is a directory, not a regular file
// RUN: mkfifo %t/fifo.onnx
// RUN: not timeout 60 partition-import %t/fifo.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: error: {{.*}}fifo.onnx: the model is a FIFO, not a regular file
// RUN: not timeout 60 partition-import /dev/zero -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: /dev/zero: the model is a character device, not a regular file
//
// --- names that become file names ---
// RUN: not partition-import %t/m/escape-output.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ESC-OUT
// ESC-OUT: error: graph output '../../x/ESCAPE' has a '..' path component and would leave the directory it is written to; names from the model become file names
// RUN: not partition-import %t/m/escape-input.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ESC-IN
// ESC-IN: error: graph input '../in' has a '..' path component
// RUN: not partition-import %t/m/escape-init.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=ESC-INIT
// ESC-INIT: error: initializer '../../w' has a '..' path component
// RUN: not partition-import %t/m/dot-output.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=DOT
// DOT: error: graph output '..' has a '..' path component
// RUN: not partition-import %t/m/ctrl-output.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=CTRL
// CTRL: error: graph output 'y\x0Az' has the control character 0x0a at byte 1; names from the model become file names
// RUN: not partition-import %t/m/collide-names.onnx -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=COLLIDE
// COLLIDE: error: graph output 'a.b' and 'a/b' both become 'a.b' ('/' in a name becomes '.'); rename one
// Separators in exporters' names become '.':
// RUN: partition-import %t/m/slash-names.onnx --weights %t/slash.safetensors | FileCheck %s --check-prefix=SLASH
// SLASH: func.func @main({{.*}}part.name = "in.x"{{.*}}part.name = "dense.kernel"{{.*}} -> (tensor<2x4xf32> {part.name = "dense.MatMul:0"})
//
// --- external data stays inside the model's directory ---
// RUN: partition-import %t/m/ext-ok.onnx -o %t/ext-ok.mlir --weights %t/ext-ok.safetensors
// RUN: partition-import %t/m/ext-symlink-inside.onnx -o %t/ext-inside.mlir
// RUN: not partition-import %t/m/ext-absolute.onnx 2>&1 | FileCheck %s --check-prefix=EXT-ABS
// EXT-ABS: error: initializer 'w': external data location '{{.*}}w.bin' is an absolute path; it must be relative to the model's directory
// RUN: not partition-import %t/m/ext-dotdot.onnx 2>&1 | FileCheck %s --check-prefix=EXT-DOTDOT
// EXT-DOTDOT: error: initializer 'w': external data location 'data/../../outside/secret.bin' has a '..' component; it must stay inside the model's directory
// RUN: not partition-import %t/m/ext-symlink.onnx 2>&1 | FileCheck %s --check-prefix=EXT-LINK
// EXT-LINK: error: initializer 'w': external data location 'data/link.bin' resolves to {{.*}}outside/secret.bin, outside the model's directory {{.*}}m
// RUN: not partition-import %t/m/ext-dir.onnx 2>&1 | FileCheck %s --check-prefix=EXT-DIR
// EXT-DIR: error: initializer 'w': external data location 'data' is not a regular file
// RUN: not timeout 60 partition-import %t/m/ext-fifo.onnx 2>&1 | FileCheck %s --check-prefix=EXT-FIFO
// EXT-FIFO: error: initializer 'w': external data location 'data/fifo' is not a regular file
// RUN: not partition-import %t/m/ext-empty.onnx 2>&1 | FileCheck %s --check-prefix=EXT-EMPTY
// EXT-EMPTY: error: initializer 'w': external data location '' is empty
// RUN: not partition-import %t/m/ext-past-end.onnx 2>&1 | FileCheck %s --check-prefix=EXT-END
// EXT-END: error: initializer 'w': external data {{.*}}w.bin at offset 32 with length 48 does not hold the 48 bytes of float32[3, 4] (file size 64)
// RUN: not partition-import %t/m/ext-overflow.onnx 2>&1 | FileCheck %s --check-prefix=EXT-OVERFLOW
// EXT-OVERFLOW: error: initializer 'w': external data {{.*}}w.bin has 64 bytes; offset 9223372036854775800 is past its end
// RUN: not partition-import %t/m/ext-bad-offset.onnx 2>&1 | FileCheck %s --check-prefix=EXT-BADNUM
// EXT-BADNUM: error: initializer 'w': external data offset '16x' is not a non-negative integer
// RUN: not partition-import %t/m/ext-negative.onnx 2>&1 | FileCheck %s --check-prefix=EXT-NEG
// EXT-NEG: error: initializer 'w': external data offset '-16' is not a non-negative integer
//
// --- sizes: overflow-checked, folding within a budget ---
// RUN: not partition-import %t/m/cos-huge.onnx 2>&1 | FileCheck %s --check-prefix=COS-HUGE
// COS-HUGE: error: node '/cos' (ConstantOfShape): the folded result [1048576, 1048576] would have 1099511627776 elements; partition folds constants of at most 16777216 elements (--max-fold-elements)
// RUN: not partition-import %t/m/cos-negative.onnx 2>&1 | FileCheck %s --check-prefix=COS-NEG
// COS-NEG: error: node '/cos' (ConstantOfShape): the folded result would have the shape [2, -3], with a negative dimension
// RUN: not partition-import %t/m/cos-overflow.onnx 2>&1 | FileCheck %s --check-prefix=COS-OVERFLOW
// COS-OVERFLOW: error: node '/cos' (ConstantOfShape): the folded result [1099511627776, 1099511627776] would have more than 2^63 elements
// RUN: not partition-import %t/m/expand-huge.onnx 2>&1 | FileCheck %s --check-prefix=EXPAND
// EXPAND: error: node '/expand' (Expand): the folded result [262144, 262144] would have 68719476736 elements; partition folds constants of at most 16777216 elements
// RUN: not partition-import %t/m/range-huge.onnx 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: node '/range' (Range): Range from 0 to 1099511627776 by 1 would have 1099511627776 elements; partition folds constants of at most 16777216 elements
// RUN: not partition-import %t/m/range-nan.onnx 2>&1 | FileCheck %s --check-prefix=RANGE-NAN
// RANGE-NAN: error: node '/range' (Range): Range from 0 to 4 by nan has no finite length
// RUN: not partition-import %t/m/trilu-huge.onnx 2>&1 | FileCheck %s --check-prefix=TRILU
// TRILU: error: node '/trilu' (Trilu): the mask [1048576, 1048576] would have 1099511627776 elements; partition folds constants of at most 16777216 elements
// The budget is an option:
// RUN: not partition-import %t/m/cos-negative.onnx --max-fold-elements 0 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: --max-fold-elements must be positive, got 0
// RUN: partition-import %t/m/range-8.onnx | FileCheck %s --check-prefix=RANGE-8
// RANGE-8: part.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<8xf32>
// RUN: not partition-import %t/m/range-8.onnx --max-fold-elements 7 2>&1 | FileCheck %s --check-prefix=RANGE-7
// RANGE-7: error: node '/range' (Range): Range from 0 to 8 by 1 would have 8 elements; partition folds constants of at most 7 elements (--max-fold-elements)
// RUN: not partition-import %t/m/range-empty.onnx 2>&1 | FileCheck %s --check-prefix=EMPTY-RANGE
// EMPTY-RANGE: error: node '/range' (Range): start, limit and delta must be scalars; they have 0, 1 and 1 elements
// RUN: not partition-import %t/m/init-overflow.onnx 2>&1 | FileCheck %s --check-prefix=INIT-OVERFLOW
// INIT-OVERFLOW: error: initializer 'w' of shape [4294967296, 4294967296] has more than 2^63 bytes of float32
// RUN: not partition-import %t/m/init-short.onnx 2>&1 | FileCheck %s --check-prefix=INIT-SHORT
// INIT-SHORT: error: initializer 'w' has 20 bytes of data, expected 24 for float32[2, 3]
// RUN: not partition-import %t/m/init-few-values.onnx 2>&1 | FileCheck %s --check-prefix=INIT-FEW
// INIT-FEW: error: initializer 'w' has 5 values, expected 6 for float32[2, 3]
// RUN: not partition-import %t/m/trilu-empty-k.onnx 2>&1 | FileCheck %s --check-prefix=TRILU-K
// TRILU-K: error: node '/trilu' (Trilu): k must be a scalar; it has 0 elements
// RUN: not partition-import %t/m/init-negative.onnx 2>&1 | FileCheck %s --check-prefix=INIT-NEG
// INIT-NEG: error: initializer 'w' has a negative dimension: [2, -3]
// RUN: not partition-import %t/m/input-overflow.onnx 2>&1 | FileCheck %s --check-prefix=INPUT-OVERFLOW
// INPUT-OVERFLOW: error: input 'x' of shape [1099511627776, 1099511627776] has more than 2^63 elements
// RUN: not partition-import %t/m/input-symbolic.onnx --dim n=4294967296 2>&1 | FileCheck %s --check-prefix=DIM-HUGE
// DIM-HUGE: error: input 'x' of shape [4294967296, 4294967296] has more than 2^63 elements
//
// --- shape arithmetic ---
// RUN: not partition-import %t/m/div-zero.onnx 2>&1 | FileCheck %s --check-prefix=DIV
// DIV: error: node '/div' (Div): integer division by zero: the divisor 'zero' is [0, 1]
// RUN: not partition-import %t/m/mod-zero.onnx 2>&1 | FileCheck %s --check-prefix=MOD
// MOD: error: node '/mod' (Mod): integer modulo by zero: the divisor 'zero' is [1, 0]
// RUN: not partition-import %t/m/reshape-negative.onnx 2>&1 | FileCheck %s --check-prefix=RESHAPE-NEG
// RESHAPE-NEG: error: node '/reshape' (Reshape): shape [-2, -3] has the dimension -2 (only -1, inferred, may be negative)
// RUN: not partition-import %t/m/reshape-copy-past-rank.onnx 2>&1 | FileCheck %s --check-prefix=RESHAPE-COPY
// RESHAPE-COPY: error: node '/reshape' (Reshape): shape [0, 0, 0] copies dimension 2 of [1, 2]
// RUN: not partition-import %t/m/unsqueeze-duplicate.onnx 2>&1 | FileCheck %s --check-prefix=UNSQ
// UNSQ: error: node '/unsq' (Unsqueeze): axis 0 is given twice
// RUN: not partition-import %t/m/unsqueeze-duplicate-runtime.onnx 2>&1 | FileCheck %s --check-prefix=UNSQ-RT
// UNSQ-RT: error: node '/unsq' (Unsqueeze): axis 1 is given twice
// RUN: not partition-import %t/m/transpose-bad-perm.onnx 2>&1 | FileCheck %s --check-prefix=PERM
// PERM: error: node '/transpose' (Transpose): perm [0, 5] is not a permutation of rank 2
// RUN: not partition-import %t/m/concat-mismatch.onnx 2>&1 | FileCheck %s --check-prefix=CONCAT
// CONCAT: error: node '/concat' (Concat): operands of shapes [1, 2] and [2, 1] differ outside axis 0
// RUN: not partition-import %t/m/slice-lengths.onnx 2>&1 | FileCheck %s --check-prefix=SLICE
// SLICE: error: node '/slice' (Slice): starts, ends, axes and steps differ in length
// RUN: not partition-import %t/m/split-zero.onnx 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: error: node '/split' (Split): cannot split dimension 0 of [4] into 0 parts
// The most negative step reads one element from the end:
// RUN: partition-import %t/m/slice-min-step.onnx | FileCheck %s --check-prefix=MIN-STEP
// MIN-STEP: %[[IDX:.*]] = part.constant dense<4> : tensor<1xi64>
// MIN-STEP: part.gather %arg0, %[[IDX]] axis 0 : (tensor<5xf32>, tensor<1xi64>) -> tensor<1xf32>
//
// --- nodes without what they need ---
// RUN: not partition-import %t/m/add-one-input.onnx 2>&1 | FileCheck %s --check-prefix=ARITY
// ARITY: error: node '/add1' (Add): takes at least 2 inputs, but input 1 is missing
// RUN: not partition-import %t/m/range-two-inputs.onnx 2>&1 | FileCheck %s --check-prefix=ARITY-RANGE
// ARITY-RANGE: error: node '/range' (Range): takes at least 3 inputs, but input 2 is missing
// RUN: not partition-import %t/m/cast-no-to.onnx 2>&1 | FileCheck %s --check-prefix=CAST
// CAST: error: node '/cast' (Cast): a Cast needs the 'to' attribute
// RUN: not partition-import %t/m/no-outputs.onnx 2>&1 | FileCheck %s --check-prefix=NO-OUT
// NO-OUT: error: node '/neg' (Neg): has no output
//
// --- graph structure ---
// RUN: not partition-import %t/m/cycle.onnx 2>&1 | FileCheck %s --check-prefix=CYCLE
// CYCLE: 'b' (input of node '/a') is defined only later, by node '/b': the nodes are not in topological order or form a cycle
// RUN: not partition-import %t/m/duplicate-output.onnx 2>&1 | FileCheck %s --check-prefix=DUP
// DUP: error: values defined more than once (an ONNX graph defines each value once):
// DUP-NEXT: 'y' by node '/neg1' and by node '/neg2'
// RUN: not partition-import %t/m/duplicate-graph-output.onnx 2>&1 | FileCheck %s --check-prefix=DUP-OUT
// DUP-OUT: graph output 'y' is listed twice
// RUN: not partition-import %t/m/duplicate-input.onnx 2>&1 | FileCheck %s --check-prefix=DUP-IN
// DUP-IN: 'x' by graph input and by graph input
// RUN: not partition-import %t/m/input-shadows-node.onnx 2>&1 | FileCheck %s --check-prefix=SHADOW
// SHADOW: 'z' by graph input and by node '/neg'
//
// None of the failures above wrote anything:
// RUN: not ls %t/out.mlir
