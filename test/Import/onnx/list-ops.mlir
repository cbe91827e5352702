// partition-import --list-ops prints the importer's op table: one line per
// op with the opsets it takes and, where support is partial, what is not
// supported. Inputs/check_list_ops.py imports a one-node model of every
// listed op (each must import) and checks that an op the listing leaves out
// is reported unsupported with its node.
//
// RUN: partition-import --list-ops | FileCheck %s
// RUN: %python %S/Inputs/check_list_ops.py partition-import %t
//
// CHECK:      Abs                 13-21  constant inputs (folded)
// CHECK-NEXT: Add                 13-21
// CHECK-NEXT: And                 13-21  constant or run-time bool (i32 0 / 1)
// CHECK:      CumSum              13-21  constant axis
// CHECK:      GatherND            13-21  constant indices, or run-time indices with batch_dims 0 and tuples of length 1 (part.gather along dimension 0)
// CHECK:      Gelu                20-21
// CHECK:      IsNaN               13-21  float input; results are i32 0 / 1
// CHECK:      LayerNormalization  17-21
// CHECK:      Loop                13-21  unrolled: trip count and condition known while importing
// CHECK:      NonZero             13-21  constant input (folded): its size depends on the data
// CHECK:      Range               13-21  constant inputs (folded)
// CHECK:      Reshape             13-21  constant shape
// CHECK:      SplitToSequence     13-21  constant split
// CHECK:      Tile                13-21  constant repeats
// CHECK:      TopK                13-21  run-time values with a constant k: part.top_k
// CHECK:      Trilu               14-21  k constant
// CHECK:      Where               13-21
// CHECK-NEXT: Xor                 13-21  constant or run-time bool (i32 0 / 1)
// CHECK-NOT:  {{.}}
