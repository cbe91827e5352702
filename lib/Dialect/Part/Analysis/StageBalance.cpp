//===- StageBalance.cpp - cutting layers into pipeline stages -------------===//
//
// See StageBalance.h.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/StageBalance.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace partition::part::pipeline;

namespace {

/// Whether an end (the leading or the trailing ops) has work of its own.
bool hasWork(const LayerCost &end) {
  return end.flops > 0 || end.resident > 0 || end.perMicroBatch > 0;
}

/// Every group needs a layer or, at the ends, the embedding or the head.
bool enoughLayers(const LayerCosts &costs, StageGroups groups,
                  std::string *error) {
  if (mostGroups(costs) >= groups.count())
    return true;
  int64_t ends = mostGroups(costs) - int64_t(costs.layers.size());
  if (error)
    *error = std::to_string(groups.stages) + " stages" +
             (groups.chunks > 1
                  ? " of " + std::to_string(groups.chunks) + " chunks"
                  : "") +
             " need at least " + std::to_string(groups.count() - ends) +
             " layers (ops marked part.layer in the forward program" +
             (ends ? std::string("; the ops before the first layer and "
                                 "after the last fill a group each")
                   : std::string()) +
             "), and the step has " + std::to_string(costs.layers.size());
  return false;
}

/// `to` plus the memory of `f`.
void addMemory(LayerCost &to, const LayerCost &f) {
  to.resident += f.resident;
  to.perMicroBatch += f.perMicroBatch;
}

/// A group's FLOPs and memory.
LayerCost plus(LayerCost a, const LayerCost &b) {
  a.flops += b.flops;
  addMemory(a, b);
  return a;
}

/// More groups than layers: a layer per group, and an end alone in the
/// first or the last group (both where there are two more groups). With one
/// more, the end left alone is the one whose cut has the least largest
/// `load` (group, its costs); the head where they tie.
LayerGroups endsAlone(const LayerCosts &costs, int64_t count,
                      const std::function<double(int64_t, const LayerCost &)>
                          &load) {
  const int64_t n = int64_t(costs.layers.size());
  // The largest load with the layers from group `first` on.
  auto worst = [&](int64_t first) {
    double most = 0;
    for (int64_t g = 0; g < count; ++g) {
      LayerCost group;
      if (g == 0)
        group = plus(group, costs.leading);
      if (g == count - 1)
        group = plus(group, costs.trailing);
      if (g - first >= 0 && g - first < n)
        group = plus(group, costs.layers[g - first]);
      most = std::max(most, load(g, group));
    }
    return most;
  };
  // The group of the first layer: 1 where the embedding is alone.
  int64_t first = 1;
  if (count - n == 1) {
    bool leading = hasWork(costs.leading), trailing = hasWork(costs.trailing);
    first = leading && (!trailing || worst(1) < worst(0)) ? 1 : 0;
  }
  LayerGroups groupOf;
  for (int64_t i = 0; i < n; ++i)
    groupOf[costs.layers[i].layer] = first + i;
  return groupOf;
}

} // namespace

int64_t partition::part::pipeline::mostGroups(const LayerCosts &costs) {
  int64_t n = int64_t(costs.layers.size());
  if (n == 0)
    return 0;
  return n + int64_t(hasWork(costs.leading)) + int64_t(hasWork(costs.trailing));
}

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
  for (size_t g = 0; g < ranges.size(); ++g) {
    bool end = (g == 0 && hasWork(costs.leading)) ||
               (g + 1 == ranges.size() && hasWork(costs.trailing));
    if (ranges[g].first > ranges[g].second && !end)
      return fail("stage-layers gives group " + std::to_string(g) +
                  " no layers; only the first (the ops before the first "
                  "layer) or the last (those after the last) may have none");
    for (int64_t l = ranges[g].first; l <= ranges[g].second; ++l)
      if (auto [it, inserted] = groupOf.try_emplace(l, int64_t(g)); !inserted)
        return fail("stage-layers puts layer " + std::to_string(l) +
                    " in stages " + std::to_string(it->second) + " and " +
                    std::to_string(g));
  }
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
  if (count > int64_t(costs.layers.size()))
    return endsAlone(costs, count,
                     [](int64_t, const LayerCost &c) { return c.flops; });
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
  if (count > int64_t(costs.layers.size()))
    return endsAlone(costs, count, [&](int64_t g, const LayerCost &c) {
      return groupMemory(c, inFlight[g]);
    });
  // The least largest memory over contiguous cuts, by dynamic programming:
  // worst[g][i], the least largest memory of groups 0..g holding the first
  // i layers (each group at least one). Exact whatever the micro-batches in
  // flight per group (a fill up to a bound is not: the layer a group must
  // take can cost more there than in a later group).
  const std::vector<LayerCost> &layers = costs.layers;
  size_t n = layers.size();
  std::vector<LayerCost> prefix(n + 1);
  for (size_t i = 0; i < n; ++i) {
    prefix[i + 1] = prefix[i];
    addMemory(prefix[i + 1], layers[i]);
  }
  // Group g holding layers [j, i).
  auto cost = [&](int64_t g, size_t j, size_t i) {
    LayerCost load;
    load.resident = prefix[i].resident - prefix[j].resident;
    load.perMicroBatch = prefix[i].perMicroBatch - prefix[j].perMicroBatch;
    if (g == 0)
      addMemory(load, costs.leading);
    if (g == count - 1)
      addMemory(load, costs.trailing);
    return groupMemory(load, inFlight[g]);
  };
  const double none = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> worst(count,
                                         std::vector<double>(n + 1, none));
  for (size_t i = 1; i <= n; ++i)
    worst[0][i] = cost(0, 0, i);
  for (int64_t g = 1; g < count; ++g)
    for (size_t i = g + 1; i <= n; ++i)
      for (size_t j = g; j < i; ++j)
        worst[g][i] = std::min(worst[g][i],
                               std::max(worst[g - 1][j], cost(g, j, i)));
  // Back from the last group, each group starting as late as the best
  // bound allows.
  double bound = worst[count - 1][n];
  LayerGroups groupOf;
  size_t end = n;
  for (int64_t g = count - 1; g >= 0; --g) {
    size_t start = 0;
    if (g > 0)
      for (size_t j = end - 1; j >= size_t(g); --j)
        if (worst[g - 1][j] <= bound && cost(g, j, end) <= bound) {
          start = j;
          break;
        }
    for (size_t l = start; l < end; ++l)
      groupOf[layers[l].layer] = g;
    end = start;
  }
  return groupOf;
}
