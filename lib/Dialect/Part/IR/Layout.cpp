//===- Layout.cpp - how a value is split, as plain lists -----------------===//

#include "partition/Dialect/Part/IR/Layout.h"

using namespace mlir;
using namespace partition::part;

Layout Layout::of(ShardingAttr s, int64_t rank) {
  Layout l = replicated(rank);
  if (!s)
    return l;
  for (int64_t d = 0; d < rank; ++d)
    l.dims[d] = s.getDimAxes(d);
  l.unreduced.assign(s.getUnreduced().begin(), s.getUnreduced().end());
  return l;
}

ShardingAttr Layout::toAttr(MLIRContext *ctx, FlatSymbolRefAttr mesh) const {
  SmallVector<ArrayAttr> arrays;
  for (const auto &axes : dims)
    arrays.push_back(
        ArrayAttr::get(ctx, SmallVector<Attribute>(axes.begin(), axes.end())));
  return ShardingAttr::get(ctx, mesh, arrays, unreduced);
}

size_t Layout::numAxes() const {
  size_t n = unreduced.size();
  for (const auto &axes : dims)
    n += axes.size();
  return n;
}

SmallVector<int64_t> Layout::localShape(ArrayRef<int64_t> global,
                                        MeshAttr mesh) const {
  SmallVector<int64_t> shape(global);
  for (auto [d, axes] : llvm::enumerate(dims))
    shape[d] /= mesh.getGroupSize(axes);
  return shape;
}

llvm::hash_code partition::part::hash_value(const Layout &layout) {
  llvm::hash_code h = llvm::hash_value(layout.dims.size());
  for (const auto &axes : layout.dims)
    h = llvm::hash_combine(h, llvm::hash_combine_range(axes.begin(), axes.end()));
  return llvm::hash_combine(
      h, llvm::hash_combine_range(layout.unreduced.begin(),
                                  layout.unreduced.end()));
}
