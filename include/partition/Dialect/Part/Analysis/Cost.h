//===- Cost.h - what a program moves, holds and computes per device -*- C++ -*-===//
//
// Cost queries of the sharding analysis library, on per-device programs
// (`part.spmd`, local shapes): the bytes each collective moves per device,
// the bytes resident per device by category, and the FLOPs of each op.
// part-explain and the plan's memory report print these figures.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_COST_H
#define PARTITION_DIALECT_PART_ANALYSIS_COST_H

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace partition::part {

/// One collective of a per-device program.
struct CollectiveCost {
  std::string kind;              ///< "all_reduce", "all_gather", ...
  llvm::SmallVector<mlir::StringAttr> axes;
  int64_t groupSize = 1;         ///< devices in each group
  int64_t operandBytes = 0;      ///< of one device's operand
  /// Bytes one device sends (and receives) with ring algorithms: an
  /// all-reduce 2(n-1)/n of its operand, an all-gather (n-1)/n of its
  /// result, a reduce-scatter or all-to-all (n-1)/n of its operand, a
  /// collective permute its operand, an all-slice nothing.
  int64_t movedBytes = 0;
  /// Latency-bound messages: 2(n-1) for an all-reduce, n-1 for the other
  /// ring collectives, 1 for a permute (runtime::ringCost).
  double steps = 0;
};

/// The cost of `op` when it is a collective over mesh axes; nullopt for any
/// other op.
std::optional<CollectiveCost> collectiveCost(mlir::Operation *op,
                                             MeshAttr mesh);

/// Bytes resident on each device for a per-device program's arguments, by
/// their role, and the gradients as the optimizer reads them.
struct ResidentBytes {
  int64_t parameters = 0; ///< `parameter` arguments
  int64_t state = 0;      ///< `state` arguments (optimizer state)
  int64_t inputs = 0;     ///< inputs and labels
  int64_t gradients = 0;  ///< operands marked `part.gradient` (in the arena)
  /// Parameter elements of the whole (global) model.
  int64_t globalParameterElements = 0;
  /// The most bytes of op results (activations, gradients, temporaries,
  /// constants) live at once, by liveness in program order: a value lives
  /// from its op to its last use (to the end when returned). Each result
  /// counts as its own buffer (a reshape as a copy), so this bounds the
  /// plan's arena from above up to alignment.
  int64_t livePeak = 0;
};

/// The resident bytes of `function` (a per-device program on `mesh`).
ResidentBytes residentBytes(mlir::func::FuncOp function, MeshAttr mesh);

/// Floating-point operations one device spends on `op` (local shapes): a
/// matmul 2MNK (times the batch), attention 4 B H Sq Sk D (its two batched
/// products), an op that reduces or maps elements one per element of its
/// largest operand or result; 0 for collectives, constants, reshapes and
/// other data movement. Saturates at INT64_MAX (an op beyond it).
int64_t flopsOf(mlir::Operation *op);

/// Whether `op` is a memory-bound compute op (not a GEMM or attention, a
/// collective, a transfer, a constant or a reshape): what a fusing stack
/// fuses with its neighbours.
bool isFusible(mlir::Operation *op);

/// The bytes `op` reads and writes: its operands and results (and
/// attention's blocks of scores, attentionScratchBytes); with `fuse`,
/// less each value that a fusible op hands to a single fusible user (that
/// value stays in registers: neither written by its producer nor read by
/// its user). Saturates at INT64_MAX.
int64_t memoryBytesOf(mlir::Operation *op, bool fuse);

/// The bytes attention's kernels move through memory for their blocks of
/// scores (part.attention, part.attention_grad; 0 for other ops): they
/// keep a block of query rows' scores and probabilities in scratch, not on
/// chip, so each score is written and read a few times.
int64_t attentionScratchBytes(mlir::Operation *op);

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_COST_H
