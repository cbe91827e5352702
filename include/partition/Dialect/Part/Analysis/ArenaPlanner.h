//===- ArenaPlanner.h - offsets of values in a program's arena -*- C++ -*-===//
//
// Places the values a per-device program keeps in its arena (activations,
// gradients, temporaries): each value has a lifetime, the inclusive range of
// instructions [def, lastUse] during which its bytes must stay intact, and a
// size. Two values whose lifetimes intersect get disjoint byte ranges; the
// plan's peak is the end of the highest range.
//
// The placement is greedy by size: largest first (ties in input order), each
// at the lowest offset that overlaps no value placed before it whose lifetime
// intersects its own (first fit). That is the rule part-to-plan has always
// used, and every arena figure in the tests and docs comes from it.
//
// Finding that offset by scanning every placed value costs O(n^2 log n) for n
// values (725 s for an unrolled GPT-3 pipeline). Here a segment tree over
// time answers it: each node keeps, as a union of address ranges, the bytes
// taken at any instruction of its time range, and the bytes of the values
// whose lifetime covers its whole range. A lifetime splits into O(log n)
// nodes; placing a value adds its range to those nodes and their ancestors,
// and a query only looks at the same O(log n) nodes, jumping over the merged
// ranges that conflict until the candidate offset fits all of them. Ranges
// that touch merge, so the values packed below a candidate cost one jump, not
// one each. Each jump and each placement costs O(log n) range-set operations
// of O(log n) each; the jumps per value stay bounded when the values live at
// once do (1F1B, zero-bubble) and grow with them otherwise (GPipe holds every
// micro-batch's activations): bench/ArenaPlannerBench.cpp measures both. The
// result is the same offsets as the scan (the unit tests check that against
// the scan on random instances).
//
// No IR: part-to-plan resolves aliases and in-place updates, then hands the
// remaining values here.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_ARENAPLANNER_H
#define PARTITION_DIALECT_PART_ANALYSIS_ARENAPLANNER_H

#include <cstdint>
#include <vector>

namespace partition::part::arena {

/// One value to place.
struct Buffer {
  /// The instruction that writes it.
  int64_t def = 0;
  /// The last instruction that reads it; at least `def`.
  int64_t lastUse = 0;
  /// Its size; a value of 0 bytes still takes `alignment` bytes.
  uint64_t bytes = 0;
};

struct Plan {
  /// Byte offset of each buffer, in input order; multiples of the alignment.
  std::vector<uint64_t> offsets;
  /// The end of the highest placed range: the bytes the arena needs.
  uint64_t peak = 0;
  /// The range-set searches and additions the placement made: its work,
  /// apart from the caches (bench/ArenaPlannerBench.cpp reports it).
  uint64_t operations = 0;
};

/// The bytes a buffer of `bytes` takes: rounded up to `alignment`, at least
/// `alignment`.
uint64_t alignedSize(uint64_t bytes, uint64_t alignment);

/// Places `buffers` greedy by size, first fit (see above), every offset a
/// multiple of `alignment` (> 0).
Plan planArena(const std::vector<Buffer> &buffers, uint64_t alignment);

} // namespace partition::part::arena

#endif // PARTITION_DIALECT_PART_ANALYSIS_ARENAPLANNER_H
