//===- Overlap.cpp - when compute must wait for collectives ---------------===//

#include "partition/runtime/Overlap.h"

#include <algorithm>
#include <set>

using namespace partition::runtime;

namespace {

bool anyOverlap(const std::vector<ByteRange> &a,
                const std::vector<ByteRange> &b) {
  for (const ByteRange &x : a)
    for (const ByteRange &y : b)
      if (x.overlaps(y))
        return true;
  return false;
}

/// Whether `later` must stay after `earlier`: one writes what the other
/// touches.
bool conflicts(const InstructionAccess &earlier,
               const InstructionAccess &later) {
  return anyOverlap(earlier.writes, later.reads) ||
         anyOverlap(earlier.writes, later.writes) ||
         anyOverlap(earlier.reads, later.writes);
}

} // namespace

std::vector<int> partition::runtime::planCollectiveWaits(
    const std::vector<InstructionAccess> &instructions) {
  std::vector<int> waits(instructions.size(), -1);
  // Asynchronous instructions issued and not yet waited for, in order.
  std::vector<int> inFlight;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const InstructionAccess &inst = instructions[i];
    if (inst.async) {
      inFlight.push_back(int(i));
      continue;
    }
    // The latest conflicting one; waiting for it retires every earlier one.
    size_t retire = 0;
    for (size_t k = 0; k < inFlight.size(); ++k) {
      const InstructionAccess &c = instructions[inFlight[k]];
      if (anyOverlap(inst.reads, c.writes) ||
          anyOverlap(inst.writes, c.writes) || anyOverlap(inst.writes, c.reads))
        retire = k + 1;
    }
    if (retire) {
      waits[i] = inFlight[retire - 1];
      inFlight.erase(inFlight.begin(), inFlight.begin() + retire);
    }
  }
  return waits;
}

std::vector<int> partition::runtime::scheduleForOverlap(
    const std::vector<InstructionAccess> &instructions) {
  int n = int(instructions.size());
  std::vector<std::vector<int>> successors(n);
  std::vector<int> waitingOn(n, 0); // predecessors not yet scheduled
  std::vector<int> marked(n, -1);   // the last j given an edge from i
  auto edge = [&](int i, int j) {
    if (i < 0 || i == j || marked[i] == j)
      return;
    marked[i] = j;
    successors[i].push_back(j);
    ++waitingOn[j];
  };
  // Elementary segments between every range's endpoints; per segment the
  // last writer and the readers since, which is all the edges need.
  std::vector<uintptr_t> points;
  for (const InstructionAccess &inst : instructions)
    for (const auto *ranges : {&inst.reads, &inst.writes})
      for (const ByteRange &r : *ranges)
        if (r.begin < r.end) {
          points.push_back(r.begin);
          points.push_back(r.end);
        }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto segments = [&](const ByteRange &r) {
    size_t first = std::lower_bound(points.begin(), points.end(), r.begin) -
                   points.begin();
    size_t last =
        std::lower_bound(points.begin(), points.end(), r.end) - points.begin();
    return std::make_pair(first, last); // segments [first, last)
  };
  std::vector<int> lastWriter(points.size(), -1);
  std::vector<std::vector<int>> readers(points.size());
  int previousAsync = -1;
  for (int j = 0; j < n; ++j) {
    const InstructionAccess &inst = instructions[j];
    if (inst.async)
      edge(previousAsync, j);
    for (const ByteRange &r : inst.reads) {
      if (r.begin >= r.end)
        continue;
      auto [first, last] = segments(r);
      for (size_t k = first; k < last; ++k)
        edge(lastWriter[k], j);
    }
    for (const ByteRange &r : inst.writes) {
      if (r.begin >= r.end)
        continue;
      auto [first, last] = segments(r);
      for (size_t k = first; k < last; ++k) {
        edge(lastWriter[k], j);
        for (int reader : readers[k])
          edge(reader, j);
      }
    }
    // Record after the edges, so that j's own reads and writes of the same
    // bytes (an in-place collective) do not order it after itself.
    for (const ByteRange &r : inst.reads) {
      if (r.begin >= r.end)
        continue;
      auto [first, last] = segments(r);
      for (size_t k = first; k < last; ++k)
        readers[k].push_back(j);
    }
    for (const ByteRange &r : inst.writes) {
      if (r.begin >= r.end)
        continue;
      auto [first, last] = segments(r);
      for (size_t k = first; k < last; ++k) {
        lastWriter[k] = j;
        readers[k].clear();
      }
    }
    if (inst.async)
      previousAsync = j;
  }

  std::vector<int> order;
  order.reserve(n);
  std::set<int> ready;
  for (int j = 0; j < n; ++j)
    if (!waitingOn[j])
      ready.insert(j);
  std::vector<int> inFlight; // as in planCollectiveWaits
  // How many of inFlight instruction `j` would retire by waiting (0: none).
  auto mustRetire = [&](int j) {
    size_t retire = 0;
    for (size_t k = 0; k < inFlight.size(); ++k)
      if (conflicts(instructions[inFlight[k]], instructions[j]))
        retire = k + 1;
    return retire;
  };
  while (!ready.empty()) {
    int pick = -1;
    for (int j : ready)
      if (instructions[j].async || !mustRetire(j)) {
        pick = j;
        break;
      }
    if (pick < 0) {
      pick = *ready.begin();
      inFlight.erase(inFlight.begin(), inFlight.begin() + mustRetire(pick));
    }
    if (instructions[pick].async)
      inFlight.push_back(pick);
    order.push_back(pick);
    ready.erase(pick);
    for (int s : successors[pick])
      if (!--waitingOn[s])
        ready.insert(s);
  }
  return order;
}
