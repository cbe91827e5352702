//===- StageBalance.h - cutting layers into pipeline stages -----*- C++ -*-===//
//
// Which pipeline group (virtual stage: stages x chunks) runs each layer of
// the forward program, from what the layers cost: by hand (explicit ranges,
// checked), by FLOPs, or by memory (the least largest footprint, by
// dynamic programming). Groups are contiguous runs of layers; what runs before the
// first layer (the embedding) counts on the first group and what runs after
// the last (the head and the loss) on the last, so a heavy embedding or
// head leaves its group fewer layers: stages need not be even (Llama 3 405B
// ran 126 layers on 16 stages, one layer fewer on the first and the last).
//
// No IR: part-pipeline measures the layers of the step and places its ops
// with the groups these functions return; the unit tests check the cuts.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_STAGEBALANCE_H
#define PARTITION_DIALECT_PART_ANALYSIS_STAGEBALANCE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partition::part::pipeline {

/// What a layer (or the ops before or after the layers) costs per
/// micro-batch: its FLOPs, the bytes it holds for the whole step (its
/// parameters, their gradients and optimizer state) and the bytes it holds
/// per micro-batch in flight (the activations backward reads).
struct LayerCost {
  int64_t layer = 0; ///< its `part.layer` (unused for leading and trailing)
  double flops = 0;
  double resident = 0;
  double perMicroBatch = 0;
};

/// The forward program's layers and what runs outside them.
struct LayerCosts {
  /// In ascending `layer` order, each layer once.
  std::vector<LayerCost> layers;
  /// Before the first layer (the embedding): on the first group.
  LayerCost leading;
  /// After the last layer (the head and the loss): on the last group.
  LayerCost trailing;
};

/// The pipeline's groups of layers: `stages` x `chunks` (several chunks per
/// stage under interleaved and V schedules).
struct StageGroups {
  int64_t stages = 1;
  int64_t chunks = 1;
  int64_t count() const { return stages * chunks; }
};

/// The group of each layer, by `part.layer`.
using LayerGroups = std::map<int64_t, int64_t>;

/// The most groups the layers of `costs` fill: a layer each, and at the
/// ends a group of their own for the ops before the first layer (the
/// embedding) and after the last (the head and the loss) where there are
/// such ops, as Megatron-Core's `account_for_embedding_in_pipeline_split`
/// and `account_for_loss_in_pipeline_split` count them (Llama 3 405B's 126
/// layers in 128 chunks: 16 stages of 8). Every cut below gives an end a
/// group of its own only where the groups outnumber the layers.
int64_t mostGroups(const LayerCosts &costs);

/// `ranges[g]` (first and last layer, inclusive) are group g's layers:
/// checks there is one range per group, that no layer is in two, and that
/// every layer of `costs` is in one. An empty range (first above last) is
/// the first or last group holding only the ops before or after the
/// layers. Layers a range names that `costs` does
/// not have are kept in the result. Errors name the layers and groups.
std::optional<LayerGroups>
groupsFromRanges(const LayerCosts &costs, StageGroups groups,
                 const std::vector<std::pair<int64_t, int64_t>> &ranges,
                 std::string *error);

/// Contiguous groups of about equal FLOPs: a layer goes to the next group
/// when more than half of it would pass the current group's share of the
/// total; every group gets at least one layer (or, with more groups than
/// layers, one layer or an end: `mostGroups`).
std::optional<LayerGroups> balanceFlops(const LayerCosts &costs,
                                        StageGroups groups, std::string *error);

/// A group's memory: resident bytes plus per-micro-batch bytes times the
/// micro-batches in flight on its stage.
double groupMemory(const LayerCost &load, int64_t inFlight);

/// The memory (`groupMemory`) of each group of `assignment`, the leading
/// costs on group 0 and the trailing on the last.
std::vector<double> groupMemories(const LayerCosts &costs,
                                  const LayerGroups &assignment,
                                  const std::vector<int64_t> &inFlight);

/// Contiguous groups with the least largest memory (`groupMemory`; every
/// group at least one layer), by dynamic programming over the cuts
/// (O(groups x layers^2)). `inFlight[g]`: the micro-batches in flight on
/// group g's stage, equal under GPipe and falling from stage to stage under
/// 1F1B (p - s). Of the best cuts, each group from the last starts as late
/// as the bound allows.
std::optional<LayerGroups> balanceMemory(const LayerCosts &costs,
                                         StageGroups groups,
                                         const std::vector<int64_t> &inFlight,
                                         std::string *error);

} // namespace partition::part::pipeline

#endif // PARTITION_DIALECT_PART_ANALYSIS_STAGEBALANCE_H
