//===- PartInterfaces.td - part op interfaces --------------*- tablegen -*-===//

#ifndef PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD
#define PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Part_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let description = [{
    An op whose operands and results may be sharded states how, as factors of
    its iteration space (see ShardingRule.h). Propagation and partitioning
    work only through this interface; an op without it cannot be
    partitioned, and saying so is an error, never silent replication.
  }];
  let cppNamespace = "::partition::part";
  let methods = [
    InterfaceMethod<"The op's factors and the factors of each dimension.",
      "::partition::part::ShardingRule", "getShardingRule">,
  ];
}

#endif // PARTITION_DIALECT_PART_IR_PARTINTERFACES_TD
