//===- StageBalance.cpp - cutting layers into pipeline stages -------------===//
//
// See StageBalance.h.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/StageBalance.h"

#include <algorithm>

using namespace partition::part::pipeline;

namespace {

/// Every group needs a layer.
bool enoughLayers(const LayerCosts &costs, StageGroups groups,
                  std::string *error) {
  if (int64_t(costs.layers.size()) >= groups.count())
    return true;
  if (error)
    *error = std::to_string(groups.stages) + " stages" +
             (groups.chunks > 1
                  ? " of " + std::to_string(groups.chunks) + " chunks"
                  : "") +
             " need at least " + std::to_string(groups.count()) +
             " layers (ops marked part.layer in the forward program), and "
             "the step has " +
             std::to_string(costs.layers.size());
  return false;
}

/// `to` plus the memory of `f`.
void addMemory(LayerCost &to, const LayerCost &f) {
  to.resident += f.resident;
  to.perMicroBatch += f.perMicroBatch;
}

} // namespace

std::optional<LayerGroups> partition::part::pipeline::groupsFromRanges(
    const LayerCosts &costs, StageGroups groups,
    const std::vector<std::pair<int64_t, int64_t>> &ranges,
    std::string *error) {
  if (!enoughLayers(costs, groups, error))
    return std::nullopt;
  auto fail = [&](std::string message) -> std::optional<LayerGroups> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (int64_t(ranges.size()) != groups.count())
    return fail("stage-layers gives " + std::to_string(ranges.size()) +
                " groups of layers, the pipeline has " +
                std::to_string(groups.count()) +
                (groups.chunks > 1 ? " (stages x virtual stages)"
                                   : " stages"));
  LayerGroups groupOf;
  for (size_t g = 0; g < ranges.size(); ++g)
    for (int64_t l = ranges[g].first; l <= ranges[g].second; ++l)
      if (auto [it, inserted] = groupOf.try_emplace(l, int64_t(g)); !inserted)
        return fail("stage-layers puts layer " + std::to_string(l) +
                    " in stages " + std::to_string(it->second) + " and " +
                    std::to_string(g));
  for (const LayerCost &c : costs.layers)
    if (!groupOf.count(c.layer))
      return fail("stage-layers puts layer " + std::to_string(c.layer) +
                  " in no stage");
  return groupOf;
}

std::optional<LayerGroups>
partition::part::pipeline::balanceFlops(const LayerCosts &costs,
                                        StageGroups groups,
                                        std::string *error) {
  if (!enoughLayers(costs, groups, error))
    return std::nullopt;
  int64_t count = groups.count();
  double total = costs.leading.flops + costs.trailing.flops;
  for (const LayerCost &c : costs.layers)
    total += c.flops;
  double done = costs.leading.flops;
  int64_t g = 0, left = int64_t(costs.layers.size()), inGroup = 0;
  LayerGroups groupOf;
  for (const LayerCost &c : costs.layers) {
    double share = total * double(g + 1) / double(count);
    // Leave at least one layer for each group after this one; give each
    // group at least one.
    if (g + 1 < count && inGroup > 0 &&
        (left <= count - g - 1 || done + c.flops / 2 > share)) {
      ++g;
      inGroup = 0;
    }
    groupOf[c.layer] = g;
    done += c.flops;
    ++inGroup;
    --left;
  }
  return groupOf;
}

double partition::part::pipeline::groupMemory(const LayerCost &load,
                                              int64_t inFlight) {
  return load.resident + load.perMicroBatch * double(inFlight);
}

std::vector<double> partition::part::pipeline::groupMemories(
    const LayerCosts &costs, const LayerGroups &assignment,
    const std::vector<int64_t> &inFlight) {
  std::vector<LayerCost> loads(inFlight.size());
  if (loads.empty())
    return {};
  addMemory(loads.front(), costs.leading);
  for (const LayerCost &c : costs.layers)
    if (auto it = assignment.find(c.layer);
        it != assignment.end() && it->second >= 0 &&
        it->second < int64_t(loads.size()))
      addMemory(loads[it->second], c);
  addMemory(loads.back(), costs.trailing);
  std::vector<double> memory;
  for (size_t g = 0; g < loads.size(); ++g)
    memory.push_back(groupMemory(loads[g], inFlight[g]));
  return memory;
}

std::optional<LayerGroups> partition::part::pipeline::balanceMemory(
    const LayerCosts &costs, StageGroups groups,
    const std::vector<int64_t> &inFlight, std::string *error) {
  if (!enoughLayers(costs, groups, error))
    return std::nullopt;
  int64_t count = groups.count();
  if (int64_t(inFlight.size()) != count) {
    if (error)
      *error = "the micro-batches in flight are given for " +
               std::to_string(inFlight.size()) + " groups, the pipeline has " +
               std::to_string(count);
    return std::nullopt;
  }
  // Filling greedily is optimal for contiguous groups: a group taking more
  // leaves the later ones a subset of what they would get.
  const std::vector<LayerCost> &layers = costs.layers;
  auto cost = [&](const LayerCost &f, int64_t g) {
    return groupMemory(f, inFlight[g]);
  };
  auto place = [&](double bound, LayerGroups *out) {
    int64_t g = 0, inGroup = 0;
    LayerCost load;
    addMemory(load, costs.leading);
    bool ok = true;
    for (size_t i = 0; i < layers.size(); ++i) {
      LayerCost with = load;
      addMemory(with, layers[i]);
      int64_t left = int64_t(layers.size() - i); // this one included
      if (inGroup > 0 && g + 1 < count &&
          (cost(with, g) > bound || left <= count - g - 1)) {
        ok &= cost(load, g) <= bound;
        ++g;
        inGroup = 0;
        with = LayerCost();
        addMemory(with, layers[i]);
      }
      load = with;
      ++inGroup;
      if (out)
        (*out)[layers[i].layer] = g;
    }
    addMemory(load, costs.trailing);
    return ok && g == count - 1 && cost(load, g) <= bound;
  };
  double low = 0, high = 0;
  for (int64_t g = 0; g < count; ++g) {
    LayerCost all;
    addMemory(all, costs.leading);
    addMemory(all, costs.trailing);
    for (const LayerCost &c : layers)
      addMemory(all, c);
    high = std::max(high, cost(all, g));
  }
  for (int i = 0; i < 64 && high - low > 0.5; ++i) {
    double mid = (low + high) / 2;
    (place(mid, nullptr) ? high : low) = mid;
  }
  LayerGroups groupOf;
  place(high, &groupOf);
  return groupOf;
}
