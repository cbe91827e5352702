//===- PartToPlan.h - lower per-device part programs to a plan --*- C++ -*-===//
//
// Lowers every `part.spmd` function of a module to a program of the runtime's
// execution plan (runtime/plan/plan.fbs): values with static memory planning,
// kernel and collective instructions, parameter/input/output bindings.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_CONVERSION_PARTTOPLAN_PARTTOPLAN_H
#define PARTITION_CONVERSION_PARTTOPLAN_PARTTOPLAN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition {

/// Memory figures of one lowered program, per device.
struct ProgramMemory {
  std::string name;
  /// Peak bytes of per-step scratch (the arena), after liveness-based reuse.
  uint64_t arenaBytes = 0;
  /// Bytes the arena would need without reuse (every value its own slot).
  uint64_t unplannedBytes = 0;
  /// Bytes of parameters and constants kept across steps.
  uint64_t persistentBytes = 0;
  /// Bytes of the per-step inputs (fed from outside).
  uint64_t inputBytes = 0;
  /// Bytes of the collectives' staging buffers (CollectiveScratch.h).
  uint64_t scratchBytes = 0;
  /// Everything the runtime allocates for the program on one device.
  uint64_t peakBytes() const {
    return arenaBytes + persistentBytes + inputBytes + scratchBytes;
  }
};

/// How part-to-plan lowers.
struct PlanOptions {
  /// Chains of elementwise float ops become one Fused kernel each
  /// (Fusion.h); off, every op is its own kernel.
  bool fuseElementwise = true;
};

/// Lowers `module` to a serialized plan in `bytes`. Emits diagnostics at the
/// offending op and fails on anything the runtime cannot run.
mlir::LogicalResult lowerToPlan(mlir::ModuleOp module,
                                std::vector<uint8_t> &bytes,
                                std::vector<ProgramMemory> *memory = nullptr,
                                const PlanOptions &options = {});

/// Registers the `--part-to-plan` translation (module -> plan file).
void registerPartToPlanTranslation();

} // namespace partition

#endif // PARTITION_CONVERSION_PARTTOPLAN_PARTTOPLAN_H
