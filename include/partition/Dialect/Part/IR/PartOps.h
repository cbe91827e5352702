//===- PartOps.h - part ops -------------------------------------*- C++ -*-===//
//
// Declares the ops of the `part` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_PARTOPS_H
#define PARTITION_DIALECT_PART_IR_PARTOPS_H

#include "partition/Dialect/Part/IR/PartAttrs.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/Dialect/Part/IR/Padding.h"
#include "partition/Dialect/Part/IR/PartitionContext.h"
#include "partition/Dialect/Part/IR/ShardingRule.h"
#include "partition/runtime/DType.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "partition/Dialect/Part/IR/PartInterfaces.h.inc"

namespace partition::part {

/// The runtime element type of `elementType` (f32, f16, bf16, i32, i64), or
/// none when the runtime has no such type: the compiler's one mapping of
/// MLIR element types onto the runtime's (byte sizes, plan dtypes).
std::optional<runtime::DType> getRuntimeDType(mlir::Type elementType);

/// The bytes of a static tensor of `type` as the runtime stores it, computed
/// with overflow checks: reports through `emitError` (when given) and fails
/// when the element count or the byte size does not fit in int64. Element
/// sizes of the runtime's types are the runtime's (runtime::dtypeSize);
/// other types take their bit width rounded up to bytes (at least one).
mlir::FailureOr<int64_t>
getTensorBytes(mlir::RankedTensorType type,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError = {});

/// Checks every static ranked tensor among `op`'s operand and result types
/// with getTensorBytes.
mlir::LogicalResult verifyTensorSizes(mlir::Operation *op);

namespace PartOpTrait {
/// Part ops verify that their tensors' sizes fit in int64 before their own
/// verifiers compute with those sizes.
template <typename ConcreteType>
class BoundedTensorSizes
    : public mlir::OpTrait::TraitBase<ConcreteType, BoundedTensorSizes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyTensorSizes(op);
  }
};
} // namespace PartOpTrait

} // namespace partition::part

#define GET_OP_CLASSES
#include "partition/Dialect/Part/IR/PartOps.h.inc"

namespace partition::part {

/// Looks up the `part.mesh` called `name` from `from`'s nearest symbol table;
/// returns null when there is none.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name,
                  mlir::SymbolTableCollection *symbolTable = nullptr);

/// The size of `axis` of the `part.mesh` called `meshName` in `module`, for a
/// pass that splits something over that axis (`purpose` completes "to ...").
/// Reports a missing mesh or axis on the module or mesh and fails.
mlir::FailureOr<int64_t> lookupMeshAxisSize(mlir::ModuleOp module,
                                            llvm::StringRef meshName,
                                            llvm::StringRef axis,
                                            llvm::StringRef purpose);

/// The mesh a `part.spmd` function is the per-device program of, or null when
/// `op` is not (inside) such a function.
mlir::FlatSymbolRefAttr getSpmdMesh(mlir::Operation *op);

/// For an all-gather or reduce-scatter along `dim` between a device's
/// `block` and the `whole` (static shapes): the group size when each
/// device's block is one contiguous run of the whole (no dimension of size
/// above one before `dim`), so that blocks of several tensors can travel
/// side by side in one flat collective; 0 otherwise.
int64_t contiguousBlockCount(mlir::RankedTensorType block,
                             mlir::RankedTensorType whole, int64_t dim);

/// Checks `sharding` against the mesh it names (looked up from `from`) and
/// against `type`, which is a per-device type when `from` is or is inside a
/// `part.spmd` function; reports through `emitError`.
mlir::LogicalResult
verifyShardingFor(mlir::Operation *from, ShardingAttr sharding, mlir::Type type,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                  mlir::SymbolTableCollection *symbolTable = nullptr);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_PARTOPS_H
