//===- StepMetrics.h - training figures of a plan's steps ------*- C++ -*-===//
//
// What partition-run reports about a training run: the model FLOPs and the
// tokens of one step, counted from the plan itself; the FLOP/s a cluster's
// devices could reach (for MFU); and the per-step figures as a progress
// line and as one JSON object (--metrics). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_STEPMETRICS_H
#define PARTITION_RUNTIME_STEPMETRICS_H

#include "partition/runtime/Cluster.h"
#include "partition/runtime/Plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partition::runtime {

/// The model FLOPs of one kernel instruction of `program`: 2*M*N*K per
/// product for Matmul and BatchMatmul (times the batch), Attention's
/// two products (q k^T and p v, counted whole: a causal mask does not halve
/// them, as model-FLOP counts do not) and AttentionGrad's five (q k^T
/// again, do v^T, p^T do, ds k, ds^T q). 0 for every other instruction.
double instructionFlops(const plan::Program &program,
                        const plan::Instruction &instruction);

/// The model FLOPs of one step, by operand dtype name ("f32", "f16",
/// "bf16").
struct StepFlops {
  std::map<std::string, double> byDType; ///< FLOPs by dtype name
  /// Whether the total is the plan's `model_flops` (the global program's
  /// count) rather than the per-device programs' products.
  bool ofGlobalProgram = false;
  double total() const; ///< over every dtype
};
/// The products of one step of `plan` (a validated plan) as its per-device
/// programs compute them: every program's products, times the devices of
/// its mesh, times the schedule steps that run it. Work that the
/// partitioning repeats on several devices counts on each.
StepFlops countStepFlops(const plan::Plan &plan);

/// The model FLOPs of one step of `plan` (a validated plan): the plan's
/// `model_flops` (the global program's products, counted by the compiler
/// before partitioning), split over dtypes in the shares that
/// countStepFlops finds (all "f32" when it finds none); without the field
/// (per-device programs written by hand), countStepFlops.
StepFlops modelStepFlops(const plan::Plan &plan);

/// The tokens one step consumes, from the plan's input bindings: the
/// elements (global shape) of the first integer input named input_ids,
/// tokens, token_ids or ids (case-insensitive); else of the first integer
/// input named labels or targets (a language model's next-token labels,
/// one per token); else unknown (`input` empty, `tokens` 0).
struct StepTokens {
  std::string input;  ///< the binding's name as the plan spells it
  int64_t tokens = 0; ///< elements of its global shape
};
/// The tokens of one step of `plan` (a validated plan).
StepTokens countStepTokens(const plan::Plan &plan);

/// Seconds that `flops` take on `devices` devices of `cluster` running at
/// their peak FLOP/s for each dtype (a dtype the cluster does not list runs
/// at its "f32" peak); none when the cluster lists neither.
std::optional<double> secondsAtPeak(const StepFlops &flops,
                                    const Cluster &cluster, int64_t devices);

/// The figures of one logged step. Unknown values are NaN.
struct StepFigures {
  int64_t step = 0;    ///< counted over resumed runs too, from 1
  int64_t ofSteps = 0; ///< the step this run ends at
  std::vector<std::pair<std::string, double>> scalars; ///< loss, ...
  double stepMs = 0;      ///< mean over the steps since the last logged one
  double tokensPerS = 0;  ///< NaN: no token input
  double mfu = 0;         ///< a fraction; NaN: no --cluster
  uint64_t peakBytes = 0; ///< the printing rank's device
  double etaS = 0;        ///< the steps left times the mean step time
};

/// One JSON object, no newline: step, each scalar output by name
/// ("output.NAME" for a name that a fixed field has), step_ms,
/// tokens_per_s, mfu, peak_bytes, eta_s. NaN and Inf are null.
std::string formatMetricsJson(const StepFigures &figures);

/// "[3/10] loss 3.55 | 212 ms | 151 tokens/s | MFU 0.1% | peak 1.2 MB |
/// ETA 1.5s" (tokens/s left out when unknown, "MFU -" without a cluster).
std::string formatProgress(const StepFigures &figures);

/// "1.2 MB", "512 B": bytes in powers of 1000, three significant digits.
std::string formatBytes(uint64_t bytes);
/// "0s", "4.2ms", "12ms", "0.4s" is "400ms", "1.5s", "12s", "3m05s",
/// "2h07m".
std::string formatDuration(double seconds);

/// Mean of `stepMs` leaving out the first step (it warms caches and
/// allocators) when there are several; 0 for none.
double meanStepMs(const std::vector<double> &stepMs);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_STEPMETRICS_H
