//===- ValueTable.h - an entry per value, kept densely ----------*- C++ -*-===//
//
// The analyses keep a sizeable entry (a layout, say) per value of large
// functions. A DenseMap<Value, T> holds T in its buckets: with T a few
// hundred bytes and tens of thousands of values, every lookup misses the
// cache. A ValueTable keeps a small map from value to index and the entries
// in a list in the order they were made (for a walk over a function, the
// values of neighbouring ops are neighbours). Entries never move, so
// references to them stay valid while others are added.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_ANALYSIS_VALUETABLE_H
#define PARTITION_DIALECT_PART_ANALYSIS_VALUETABLE_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>

namespace partition::part {

template <typename T> class ValueTable {
public:
  /// `v`'s entry, made (value-initialized) when it has none, and whether it
  /// was made now.
  std::pair<T &, bool> tryEmplace(mlir::Value v) {
    auto [it, inserted] = index.try_emplace(v, entries.size());
    if (inserted)
      entries.emplace_back();
    return {entries[it->second], inserted};
  }
  T &operator[](mlir::Value v) { return tryEmplace(v).first; }
  /// `v`'s entry, null when it has none.
  const T *find(mlir::Value v) const {
    auto it = index.find(v);
    return it == index.end() ? nullptr : &entries[it->second];
  }
  T *find(mlir::Value v) {
    auto it = index.find(v);
    return it == index.end() ? nullptr : &entries[it->second];
  }
  size_t size() const { return entries.size(); }

private:
  llvm::DenseMap<mlir::Value, unsigned> index;
  std::deque<T> entries;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_ANALYSIS_VALUETABLE_H
