//===- ArenaPlanner.cpp - offsets of values in a program's arena ----------===//

#include "partition/Dialect/Part/Analysis/ArenaPlanner.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <numeric>

using namespace partition::part::arena;

namespace {

/// A union of half-open address ranges [begin, end): disjoint, and ranges
/// that touch are merged.
class RangeSet {
public:
  /// Adds [begin, end). Most additions fall inside a range or extend one
  /// (the values below are packed); those reuse its node.
  void add(uint64_t begin, uint64_t end) {
    auto next = ranges.upper_bound(begin);
    if (next != ranges.begin() && std::prev(next)->second >= begin) {
      auto range = std::prev(next);
      if (range->second >= end)
        return;
      range->second = absorb(next, end);
      return;
    }
    if (next == ranges.end() || next->first > end) {
      ranges.emplace_hint(next, begin, end);
      return;
    }
    // [begin, end) reaches `next`: move its node down to `begin`.
    auto node = ranges.extract(next++);
    node.key() = begin;
    node.mapped() = absorb(next, std::max(end, node.mapped()));
    ranges.insert(next, std::move(node));
  }

  /// The end of a range that intersects [offset, offset + size), or 0 if
  /// none does (a range's end is never 0).
  uint64_t conflictEnd(uint64_t offset, uint64_t size) const {
    auto it = ranges.upper_bound(offset);
    if (it != ranges.begin() && std::prev(it)->second > offset)
      return std::prev(it)->second;
    if (it != ranges.end() && it->first < offset + size)
      return it->second;
    return 0;
  }

private:
  /// Erases the ranges from `next` on that start at or below `end`; the
  /// end of their union with [.., end).
  uint64_t absorb(std::map<uint64_t, uint64_t>::iterator next, uint64_t end) {
    while (next != ranges.end() && next->first <= end) {
      end = std::max(end, next->second);
      next = ranges.erase(next);
    }
    return end;
  }

  std::map<uint64_t, uint64_t> ranges; // begin -> end
};

/// A segment tree over time steps [0, steps). Node 1 is the root, node i's
/// children are 2i and 2i + 1, leaf t is node `leaves + t`. A value whose
/// lifetime splits into nodes C (its canonical nodes) is in `covering` of
/// every node of C and in `touched` of every node of C and of their
/// ancestors: `covering(n)` holds the values live at every step of n's
/// range, `touched(n)` those live at some step of it.
class TimeTree {
public:
  explicit TimeTree(size_t steps) {
    leaves = 1;
    while (leaves < steps)
      leaves *= 2;
    coveringOf.assign(2 * leaves, kNone);
    touchedOf.assign(2 * leaves, kNone);
  }

  /// Marks [offset, offset + size) taken during steps [first, last].
  void add(size_t first, size_t last, uint64_t offset, uint64_t size) {
    split(first, last);
    for (size_t node : canonical) {
      set(coveringOf, node).add(offset, offset + size);
      set(touchedOf, node).add(offset, offset + size);
    }
    for (size_t node : ancestors)
      set(touchedOf, node).add(offset, offset + size);
    operations += 2 * canonical.size() + ancestors.size();
  }

  /// The lowest offset where `size` bytes are free during steps
  /// [first, last]: 0 or the end of a taken range. The values live at some
  /// of those steps are those in `touched` of the canonical nodes and in
  /// `covering` of their ancestors.
  uint64_t lowestFit(size_t first, size_t last, uint64_t size) {
    split(first, last);
    sets.clear();
    for (size_t node : canonical)
      if (touchedOf[node] != kNone)
        sets.push_back(&pool[touchedOf[node]]);
    for (size_t node : ancestors)
      if (coveringOf[node] != kNone)
        sets.push_back(&pool[coveringOf[node]]);
    // Every offset below `offset` conflicts with some set: move past each
    // conflicting range (asking the same set again) until every set in a
    // row accepts the same offset.
    uint64_t offset = 0;
    for (size_t i = 0, accepted = 0; accepted < sets.size();) {
      ++operations;
      if (uint64_t end = sets[i]->conflictEnd(offset, size)) {
        offset = end;
        accepted = 0;
        continue;
      }
      ++accepted;
      i = (i + 1) % sets.size();
    }
    return offset;
  }

  /// Range-set searches and additions made so far.
  uint64_t operations = 0;

private:
  static constexpr uint32_t kNone = ~uint32_t(0);

  RangeSet &set(std::vector<uint32_t> &of, size_t node) {
    if (of[node] == kNone) {
      of[node] = pool.size();
      pool.emplace_back();
    }
    return pool[of[node]];
  }

  /// Fills `canonical` with the nodes whose ranges tile [first, last] and
  /// `ancestors` with their strict ancestors, each once.
  void split(size_t first, size_t last) {
    canonical.clear();
    ancestors.clear();
    for (size_t lo = first + leaves, hi = last + leaves + 1; lo < hi;
         lo /= 2, hi /= 2) {
      if (lo & 1)
        canonical.push_back(lo++);
      if (hi & 1)
        canonical.push_back(--hi);
    }
    for (size_t node : canonical)
      for (size_t up = node / 2; up >= 1; up /= 2) {
        if (std::find(ancestors.begin(), ancestors.end(), up) !=
            ancestors.end())
          break;
        ancestors.push_back(up);
      }
  }

  size_t leaves;
  std::vector<uint32_t> coveringOf, touchedOf;
  std::vector<RangeSet> pool;
  std::vector<size_t> canonical, ancestors;
  std::vector<const RangeSet *> sets;
};

} // namespace

uint64_t partition::part::arena::alignedSize(uint64_t bytes,
                                             uint64_t alignment) {
  assert(alignment > 0 && "alignment must be positive");
  return (std::max<uint64_t>(bytes, 1) + alignment - 1) / alignment *
         alignment;
}

Plan partition::part::arena::planArena(const std::vector<Buffer> &buffers,
                                       uint64_t alignment) {
  // Time steps: the distinct defs and last uses, in order. Inclusive
  // lifetimes intersect exactly when their steps do.
  std::vector<int64_t> times;
  times.reserve(2 * buffers.size());
  for (const Buffer &b : buffers) {
    assert(b.def <= b.lastUse && "a lifetime ends before it starts");
    times.push_back(b.def);
    times.push_back(b.lastUse);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto step = [&](int64_t time) -> size_t {
    return std::lower_bound(times.begin(), times.end(), time) - times.begin();
  };

  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });

  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  TimeTree tree(std::max<size_t>(times.size(), 1));
  for (size_t id : order) {
    size_t first = step(buffers[id].def), last = step(buffers[id].lastUse);
    uint64_t size = alignedSize(buffers[id].bytes, alignment);
    uint64_t offset = tree.lowestFit(first, last, size);
    tree.add(first, last, offset, size);
    plan.offsets[id] = offset;
    plan.peak = std::max(plan.peak, offset + size);
  }
  plan.operations = tree.operations;
  return plan;
}
