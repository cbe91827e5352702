// The data- and tensor-parallel passes name the mesh and axis they could not
// find.
// RUN: partition-opt %s --split-input-file --verify-diagnostics --part-data-parallel -o /dev/null
// RUN: partition-opt %s --split-input-file --verify-diagnostics --part-tensor-parallel -o /dev/null
// RUN: not partition-opt %s --split-input-file --part-data-parallel="mesh=stage" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DP
// RUN: not partition-opt %s --split-input-file --part-tensor-parallel="mesh=stage" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TP
// DP: error: no part.mesh @stage to split the batch over
// TP: error: no part.mesh @stage to split the layers over

// expected-error @+1 {{mesh @mesh has no axis}}
part.mesh @mesh = <["pp"=2]>
func.func @f(%x: tensor<8x16xf32> {part.role = #part.role<input>}) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}
