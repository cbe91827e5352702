//===- Reshard.cpp - the collectives that take one layout to another ------===//

#include "partition/Dialect/Part/Analysis/Reshard.h"

using namespace mlir;
using namespace partition::part;

StringRef partition::part::stringifyReshardKind(ReshardStep::Kind kind) {
  switch (kind) {
  case ReshardStep::Kind::ReduceScatter:
    return "reduce_scatter";
  case ReshardStep::Kind::AllReduce:
    return "all_reduce";
  case ReshardStep::Kind::AllToAll:
    return "all_to_all";
  case ReshardStep::Kind::AllGather:
    return "all_gather";
  case ReshardStep::Kind::AllSlice:
    return "all_slice";
  }
  return "";
}

FailureOr<ReshardPlan> partition::part::planReshard(
    const Layout &from, const Layout &target, ArrayRef<int64_t> localShape,
    function_ref<int64_t(ArrayRef<StringAttr>)> groupSize,
    std::string *error) {
  // The target's pending axes stay pending; the others are completed.
  for (StringAttr axis : target.unreduced)
    if (!llvm::is_contained(from.unreduced, axis)) {
      if (error)
        *error = "would need a pending sum it does not have";
      return failure();
    }
  ReshardPlan plan;
  Layout current = from;
  llvm::erase_if(current.unreduced, [&](StringAttr a) {
    return llvm::is_contained(target.unreduced, a);
  });
  SmallVector<int64_t> shape(localShape);
  auto step = [&](ReshardStep::Kind kind, ArrayRef<StringAttr> axes,
                  int64_t dim, int64_t concatDim,
                  ArrayRef<int64_t> resultShape) {
    // Gathering, slicing or exchanging over one device moves nothing (an
    // axis of size 1: a single micro-batch, a batch of one); pending sums
    // are still completed, since a pipeline accumulates at them.
    if (kind != ReshardStep::Kind::AllReduce &&
        kind != ReshardStep::Kind::ReduceScatter && groupSize(axes) == 1)
      return;
    ReshardStep s;
    s.kind = kind;
    s.axes.assign(axes.begin(), axes.end());
    s.dim = dim;
    s.concatDim = concatDim;
    s.operandShape = shape;
    s.resultShape.assign(resultShape.begin(), resultShape.end());
    plan.steps.push_back(std::move(s));
    shape.assign(resultShape.begin(), resultShape.end());
  };
  auto prefixOf = [](ArrayRef<StringAttr> a, ArrayRef<StringAttr> b) {
    return a.size() <= b.size() && a == b.take_front(a.size());
  };
  auto single = [](StringAttr axis) { return SmallVector<StringAttr>{axis}; };

  // 1. Complete pending sums: reduce-scatter where the target splits a
  //    dimension with some of the pending axes next, all-reduce the rest.
  for (auto [d, axes] : llvm::enumerate(current.dims)) {
    if (current.unreduced.empty() || !prefixOf(axes, target.dims[d]))
      continue;
    SmallVector<StringAttr> run;
    for (StringAttr axis :
         ArrayRef<StringAttr>(target.dims[d]).drop_front(axes.size())) {
      if (!llvm::is_contained(current.unreduced, axis))
        break;
      run.push_back(axis);
    }
    if (run.empty() || shape[d] % groupSize(run))
      continue;
    SmallVector<int64_t> next(shape);
    next[d] /= groupSize(run);
    step(ReshardStep::Kind::ReduceScatter, run, d, -1, next);
    llvm::append_range(axes, run);
    llvm::erase_if(current.unreduced,
                   [&](StringAttr a) { return llvm::is_contained(run, a); });
  }
  if (!current.unreduced.empty())
    step(ReshardStep::Kind::AllReduce, current.unreduced, -1, -1, shape);
  current.unreduced = target.unreduced;
  // 2. Move an axis from one dimension to another with an all-to-all when it
  //    is the minor axis of the first and the next axis the second needs.
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t j = 0; j < current.dims.size() && !moved; ++j) {
      auto &to = current.dims[j];
      if (!prefixOf(to, target.dims[j]) || to.size() == target.dims[j].size())
        continue;
      StringAttr axis = target.dims[j][to.size()];
      for (size_t i = 0; i < current.dims.size() && !moved; ++i) {
        auto &fromDim = current.dims[i];
        if (i == j || fromDim.empty() || fromDim.back() != axis)
          continue;
        int64_t n = groupSize(single(axis));
        if (shape[j] % n)
          continue;
        SmallVector<int64_t> next(shape);
        next[j] /= n;
        next[i] *= n;
        step(ReshardStep::Kind::AllToAll, single(axis), j, i, next);
        fromDim.pop_back();
        to.push_back(axis);
        moved = true;
      }
    }
  }
  // 3. Drop the axes that are not a prefix of the target's, gathering them.
  for (auto [d, axes] : llvm::enumerate(current.dims)) {
    size_t p = 0;
    while (p < axes.size() && p < target.dims[d].size() &&
           axes[p] == target.dims[d][p])
      ++p;
    if (p == axes.size())
      continue;
    SmallVector<StringAttr> drop(axes.begin() + p, axes.end());
    SmallVector<int64_t> next(shape);
    next[d] *= groupSize(drop);
    step(ReshardStep::Kind::AllGather, drop, d, -1, next);
    axes.resize(p);
  }
  // 4. Add the target's remaining axes by keeping this device's block.
  for (auto [d, axes] : llvm::enumerate(current.dims)) {
    if (axes.size() == target.dims[d].size())
      continue;
    SmallVector<StringAttr> add(target.dims[d].begin() + axes.size(),
                                target.dims[d].end());
    SmallVector<int64_t> next(shape);
    next[d] /= groupSize(add);
    step(ReshardStep::Kind::AllSlice, add, d, -1, next);
    axes = target.dims[d];
  }
  plan.reached = std::move(current);
  return plan;
}

int64_t partition::part::reshardBytes(
    const ReshardPlan &plan, int64_t elementBytes,
    llvm::function_ref<int64_t(llvm::ArrayRef<StringAttr>)> groupSize) {
  auto bytes = [&](ArrayRef<int64_t> shape) {
    int64_t n = elementBytes;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  int64_t total = 0;
  for (const ReshardStep &step : plan.steps) {
    int64_t n = groupSize(step.axes);
    switch (step.kind) {
    case ReshardStep::Kind::AllReduce:
      total += 2 * (n - 1) * bytes(step.operandShape) / n;
      break;
    case ReshardStep::Kind::AllGather:
      total += (n - 1) * bytes(step.resultShape) / n;
      break;
    case ReshardStep::Kind::ReduceScatter:
    case ReshardStep::Kind::AllToAll:
      total += (n - 1) * bytes(step.operandShape) / n;
      break;
    case ReshardStep::Kind::AllSlice:
      break;
    }
  }
  return total;
}
