//===- Passes.td - part dialect passes ----------------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD
#define PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartStripShardingPass : Pass<"part-strip-sharding", "::mlir::ModuleOp"> {
  let summary = "removes every sharding annotation, leaving the unpartitioned program";
  let description = [{
    Drops `part.sharding` from function arguments, function results and op
    results, and replaces each `part.sharding_constraint` by its operand. The
    result computes the same function on a single device: it is the
    reference that every partitioned plan of the module is checked against.
    Meshes stay, since collectives and other annotations may still name them;
    with `remove-meshes` they are erased too when nothing refers to them.

    Before:
    ```mlir
    func.func @f(%x: tensor<8x16xf32> {part.sharding = #part.sharding<@mesh, [{"dp"}, {}] # "}]" # [{>}) -> tensor<8x16xf32> {
      %0 = part.sharding_constraint %x <@mesh, [{}, {"tp"}] # "}]" # [{> : tensor<8x16xf32>
      return %0 : tensor<8x16xf32>
    }
    ```
    After:
    ```mlir
    func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
      return %x : tensor<8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::partition::part::PartDialect"];
  let options = [
    Option<"removeMeshes", "remove-meshes", "bool", /*default=*/"false",
           "also erase part.mesh ops that nothing refers to any more">
  ];
}

#endif // PARTITION_DIALECT_PART_TRANSFORMS_PASSES_TD
