//===- CollectiveScratch.h - staging bytes of the collectives ---*- C++ -*-===//
//
// A collective whose blocks are not contiguous in memory goes through a
// staging buffer: an all-gather or reduce-scatter along a dimension with
// others before it reorders through a buffer of the gathered (scattered)
// size, and an all-to-all packs its input (slot 0) and unpacks its result
// (slot 1) unless the split (concat) dimension is outermost. The executor
// allocates, per slot, the most any instruction of its program needs; the
// plan's memory report counts the same. Plain C++, one rule for both.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_COLLECTIVESCRATCH_H
#define PARTITION_RUNTIME_COLLECTIVESCRATCH_H

#include "partition/runtime/plan/plan_generated.h"

#include <array>
#include <cstdint>
#include <vector>

namespace partition::runtime {

/// Bytes of staging slots 0 and 1 the collective needs: `kind` with
/// `dim` (all-gather, reduce-scatter) or `splitDim` / `concatDim`
/// (all-to-all) on an operand of local shape `in` and a result of shape
/// `out`, `elementBytes` each, over a group of `group` devices.
inline std::array<int64_t, 2>
collectiveScratch(plan::CollectiveKind kind, const std::vector<int64_t> &in,
                  const std::vector<int64_t> &out, int64_t elementBytes,
                  int64_t dim, int64_t splitDim, int64_t concatDim,
                  int64_t group) {
  auto outer = [](const std::vector<int64_t> &shape, int64_t end) {
    int64_t n = 1;
    for (int64_t i = 0; i < end && i < int64_t(shape.size()); ++i)
      n *= shape[i];
    return n;
  };
  auto bytes = [&](const std::vector<int64_t> &shape) {
    return outer(shape, int64_t(shape.size())) * elementBytes;
  };
  std::array<int64_t, 2> need = {0, 0};
  switch (kind) {
  case plan::CollectiveKind::AllGather:
    if (outer(in, dim) != 1)
      need[0] = bytes(out);
    break;
  case plan::CollectiveKind::ReduceScatter:
    if (outer(in, dim) != 1)
      need[0] = bytes(in);
    break;
  case plan::CollectiveKind::AllToAll: {
    if (outer(in, splitDim) != 1)
      need[0] = bytes(in);
    std::vector<int64_t> block = in;
    if (splitDim < int64_t(block.size()) && group > 0)
      block[splitDim] /= group;
    if (outer(block, concatDim) != 1)
      need[1] = bytes(out);
    break;
  }
  default:
    break;
  }
  return need;
}

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_COLLECTIVESCRATCH_H
