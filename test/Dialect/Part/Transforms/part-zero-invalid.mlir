// RUN: not partition-opt %s --part-zero="stage=4" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not partition-opt %s --part-zero="stage=1 axis=data" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AXIS
// RUN: partition-opt %s --part-strip-sharding=remove-meshes | not partition-opt --part-spmd="mesh=tp:2 zero=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AXIS-DP
// STAGE: error: ZeRO stage 4 does not exist (expected 0 to 3)
// AXIS: error: mesh @mesh has no axis "data"
// AXIS-DP: error: mesh @mesh has no axis "dp"

// A step that updates arguments without part-optimizer's records of its
// gradients (this one has none: a hand-written update) is refused, naming
// what is missing, rather than guessed at.
// RUN: not partition-opt %s --part-zero="stage=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RECORDS
// RECORDS: error: part-zero needs part-optimizer's records of each gradient ('part.gradient_of' on the op that makes it, 'part.state_of' on state arguments); @step updates 2 arguments but has none

part.mesh @mesh = <["dp"=2, "tp"=2]>

func.func @step(%w: tensor<8xf32> {part.role = #part.role<parameter>},
                %m: tensor<8xf32> {part.role = #part.role<state>})
    -> (tensor<8xf32> {part.updates = 0 : i64}, tensor<8xf32> {part.updates = 1 : i64}) {
  %0 = part.add %m, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = part.sub %w, %0 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %1, %0 : tensor<8xf32>, tensor<8xf32>
}

