//===- Probe.h - one partitioning of a cut model, costed per op -*- C++ -*-===//
//
// Internal to the planner: a probe is the model cut to its first layers
// (truncateLayers), trained and partitioned by the real passes for one
// tensor, context and expert parallel degree, sequence parallelism and
// recomputation, on pp:1 (one stage, so that part-pipeline labels each op
// forward, backward or update), and reduced to what the composition needs: each
// op's FLOPs, bytes and collective with its step, its layer and whether it
// grows with the batch; bytes per parameter; activations each layer keeps.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_PLANNER_PROBE_H
#define PARTITION_PLANNER_PROBE_H

#include "partition/Planner/Planner.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace partition::planner {

/// Where an op's cost goes: a layer (0, 1, ...) or outside the layers.
enum Section : int32_t { kPre = -1, kPost = -2, kUpdate = -3 };

struct ProbeOp {
  int32_t section = kPre;
  bool backward = false;  ///< else forward (update ops have kUpdate)
  bool scales = false;    ///< grows with the batch
  /// How its FLOPs run (part::kernelWorkOf): a GEMM, fused attention, or
  /// memory-bound.
  runtime::KernelKind kind = runtime::KernelKind::Elementwise;
  /// A backward op of the weight gradients only (zero-bubble's W, as
  /// part-pipeline splits a backward).
  bool weight = false;
  double flops = 0, bytes = 0;
  double peak = 0;        ///< FLOP/s of its dtype on the cluster
  /// A collective: bytes a device moves, and ring steps (latencies).
  double commBytes = 0, commSteps = 0;
  /// The consecutive ranks its groups span (its outermost axis's size times
  /// the sizes of the axes inside it: a tp group t, an ep group e x t, a cp
  /// group c x e x t, as PlanConfig::spmdOptions orders the mesh): the link
  /// it runs on.
  int64_t span = 1;
};

struct Probe {
  PlanConfig config; ///< tp, cp, ep, sp, recompute (pp:1, dp:1)
  /// The sequences one device's program runs: the model's batch, its share
  /// on each of ep devices (at least one): what `scales` ops saw. Under cp
  /// each of them is S / cp tokens of its sequence: every op's FLOPs,
  /// bytes and activations are a cp device's.
  int64_t batch = 0;
  int64_t probedLayers = 0; ///< layers in the probe
  std::vector<ProbeOp> ops;
  /// Local parameter elements: per probed layer, before and after them.
  std::vector<double> layerParams;
  double preParams = 0, postParams = 0;
  /// Parameter tensors, the same way: each is a collective of its own
  /// where gradients are not bucketed.
  std::vector<double> layerTensors;
  double preTensors = 0, postTensors = 0;
  /// Of those, what the embedding and the head both read (a tied
  /// embedding): counted before and after the layers, as the first and the
  /// last stage of a pipeline each hold a copy; one copy where one stage
  /// holds both.
  double tiedParams = 0, tiedTensors = 0;
  /// Of each probed layer's, its experts' (split over ep; their gradients
  /// reduced over dp only, the rest over dp x ep). Experts outside the
  /// layers count as dense.
  std::vector<double> layerExpertParams, layerExpertTensors;
  /// Bytes per local parameter element.
  double parameterBytes = 0, stateBytes = 0, gradientBytes = 0;
  /// Bytes forward keeps for backward, per probed layer and outside.
  std::vector<double> layerSaved;
  double preSaved = 0, postSaved = 0;
  /// Live bytes besides those and the gradients, in forward and backward:
  /// at each op, (bytes that do not grow with the batch, bytes that do, at
  /// `batch`), only the points that can be the most at some batch (the
  /// upper hull: a layer's weight casts at a small batch, its activations
  /// at a large one). workspaceAt(k) is the most at k times `batch`.
  std::vector<std::pair<double, double>> workspace;
  double workspaceAt(double k) const {
    double most = 0;
    for (auto [fixed, scaled] : workspace)
      most = std::max(most, fixed + k * scaled);
    return most;
  }
  /// The same in the update (no batch).
  double updateWorkspace = 0;
  double transferBytes = 0; ///< a layer's output as a stage sends it
  /// Of the probe's own communication in forward and in backward, the
  /// fraction its compiled program runs beside compute that does not wait
  /// for it (part-estimate's two lanes), at micro-batch sizes 1, 2, 4, ...
  /// (kHiddenSizes of them): the compute beside a collective grows with
  /// the micro-batch, its latencies do not.
  static constexpr int64_t kHiddenSizes = 7;
  std::vector<double> hiddenForward, hiddenBackward;
  /// The share at `microBatchSize`: interpolated between the powers of two
  /// around it, the first or last beyond them.
  double hiddenAt(bool backward, double microBatchSize) const {
    const std::vector<double> &s = backward ? hiddenBackward : hiddenForward;
    if (s.empty())
      return 0;
    double x = std::clamp(std::log2(std::max(1.0, microBatchSize)), 0.0,
                          double(s.size() - 1));
    size_t i = std::min(size_t(x), s.size() - 1);
    size_t j = std::min(i + 1, s.size() - 1);
    return s[i] + (x - double(i)) * (s[j] - s[i]);
  }
  /// Forward FLOPs per device (only the tp = 1 probe's are the model's).
  std::vector<double> layerForwardFlops;
  double outsideForwardFlops = 0;
};

/// Compiles and costs one probe of `cut` (the model cut by truncateLayers);
/// nullopt with the compiler's first error in `error`.
std::optional<Probe> runProbe(mlir::ModuleOp cut,
                              const TrainingOptions &training,
                              const PlanConfig &config,
                              const runtime::Cluster &cluster,
                              std::string *error);

} // namespace partition::planner

#endif // PARTITION_PLANNER_PROBE_H
