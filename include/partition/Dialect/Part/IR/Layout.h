//===- Layout.h - how a value is split, as plain lists ----------*- C++ -*-===//
//
// The sharding analysis library (docs/design/2026-12-03-sharding-analysis.md)
// and the partitioner work on layouts; ops' own partitionings
// (PartitionContext.h) see them too.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_LAYOUT_H
#define PARTITION_DIALECT_PART_IR_LAYOUT_H

#include "partition/Dialect/Part/IR/PartAttrs.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"

#include <unordered_set>

namespace partition::part {

/// A sharding as plain lists: the mesh axes that split each dimension
/// (major to minor), and the axes over which the value is a pending sum.
struct Layout {
  llvm::SmallVector<llvm::SmallVector<mlir::StringAttr>, 4> dims;
  llvm::SmallVector<mlir::StringAttr> unreduced;

  /// Replicated (no axes) over `rank` dimensions.
  static Layout replicated(int64_t rank) {
    Layout l;
    l.dims.resize(rank);
    return l;
  }
  /// `s` as lists; replicated when `s` is null.
  static Layout of(ShardingAttr s, int64_t rank);
  /// The attribute of this layout on `mesh`.
  ShardingAttr toAttr(mlir::MLIRContext *ctx, mlir::FlatSymbolRefAttr mesh) const;

  /// The number of axes it uses, splits and pending sums together.
  size_t numAxes() const;
  /// The shape of one device's block of a value of `global` shape.
  llvm::SmallVector<int64_t> localShape(llvm::ArrayRef<int64_t> global,
                                        MeshAttr mesh) const;

  bool operator==(const Layout &other) const {
    return dims == other.dims && unreduced == other.unreduced;
  }
  bool operator!=(const Layout &other) const { return !(*this == other); }
};

llvm::hash_code hash_value(const Layout &layout);

/// Each distinct layout once. Analyses of large functions keep a pointer per
/// value instead of a copy: a function has few distinct layouts, and a copy
/// per value is a few hundred bytes the cache would have to hold.
class LayoutInterner {
public:
  /// The one copy of `layout`; it lives as long as the interner.
  const Layout *intern(const Layout &layout) {
    return &*layouts.insert(layout).first;
  }
  /// Replicated over `rank` dimensions.
  const Layout *replicated(int64_t rank) {
    return intern(Layout::replicated(rank));
  }

private:
  struct Hash {
    size_t operator()(const Layout &l) const { return hash_value(l); }
  };
  std::unordered_set<Layout, Hash> layouts; // nodes never move
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_LAYOUT_H
