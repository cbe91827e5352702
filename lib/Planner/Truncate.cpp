//===- Truncate.cpp - a model cut to its first layers ---------------------===//
//
// The planner costs a layer once: a model whose layers are alike is cut to
// its first three (the middle one is a layer with a layer on each side, as
// every layer but the first and last of the whole model), so that probing it
// takes the same time for 12 layers as for 128.
//
//===----------------------------------------------------------------------===//

#include "partition/Planner/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kLayer = "part.layer";

/// The op's attributes without its layer, uniqued: equal for two ops that do
/// the same thing in two layers.
DictionaryAttr attributesBesidesLayer(Operation *op) {
  NamedAttrList attrs(op->getAttrDictionary());
  attrs.erase(kLayer);
  return attrs.getDictionary(op->getContext());
}

bool alikeOps(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         a->getOperandTypes() == b->getOperandTypes() &&
         a->getResultTypes() == b->getResultTypes() &&
         attributesBesidesLayer(a) == attributesBesidesLayer(b);
}

} // namespace

int64_t partition::planner::truncateLayers(ModuleOp model, int64_t keep,
                                           bool *alike) {
  *alike = false;
  func::FuncOp function;
  for (auto f : model.getOps<func::FuncOp>())
    if (!f.isDeclaration()) {
      function = f;
      break;
    }
  if (!function)
    return 0;
  std::map<int64_t, std::vector<Operation *>> layers;
  llvm::DenseMap<Operation *, std::pair<int64_t, size_t>> where;
  for (Operation &op : function.getBody().front().without_terminator())
    if (auto layer = op.getAttrOfType<IntegerAttr>(kLayer)) {
      auto &ops = layers[layer.getInt()];
      where[&op] = {layer.getInt(), ops.size()};
      ops.push_back(&op);
    }
  int64_t count = int64_t(layers.size());
  if (count == 0 || layers.begin()->first != 0 ||
      layers.rbegin()->first != count - 1)
    return count;
  // Every layer the same ops as layer 0.
  const std::vector<Operation *> &first = layers[0];
  for (auto &[index, ops] : layers) {
    if (ops.size() != first.size())
      return count;
    for (size_t i = 0; i < ops.size(); ++i)
      if (!alikeOps(ops[i], first[i]))
        return count;
  }
  // A value of one layer read by another layer than the next: the layers
  // are not a chain to cut. Outside the layers any layer's may be read: the
  // last one's by the head, each one's by a loss over all layers (a
  // mixture of experts' load-balancing loss reads every router's).
  for (Operation &op : function.getBody().front()) {
    auto mine = where.find(&op);
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      auto from = def ? where.find(def) : where.end();
      if (from == where.end())
        continue;
      int64_t fromLayer = from->second.first;
      int64_t toLayer = mine == where.end() ? -1 : mine->second.first;
      if (toLayer == fromLayer || toLayer == fromLayer + 1)
        continue;
      if (toLayer == -1)
        continue;
      return count;
    }
  }
  if (count <= keep) {
    *alike = true;
    return count;
  }
  // What read an erased layer reads the last kept one: the head its
  // output, a loss over all layers that layer's terms once for each.
  const std::vector<Operation *> &kept = layers[keep - 1];
  for (Operation &op : function.getBody().front()) {
    if (where.count(&op))
      continue;
    for (OpOperand &use : op.getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      auto from = def ? where.find(def) : where.end();
      if (from == where.end() || from->second.first < keep)
        continue;
      use.set(kept[from->second.second]->getResult(
          cast<OpResult>(use.get()).getResultNumber()));
    }
  }
  // Erase the layers after, last op first.
  llvm::BitVector usedBefore(function.getNumArguments());
  for (BlockArgument arg : function.getArguments())
    usedBefore[arg.getArgNumber()] = !arg.use_empty();
  for (int64_t layer = count - 1; layer >= keep; --layer)
    for (auto it = layers[layer].rbegin(); it != layers[layer].rend(); ++it)
      (*it)->erase();
  // Ops outside the layers that only the erased ones read (a weight's cast).
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(
             llvm::reverse(function.getBody().front().without_terminator())))
      if (op.use_empty() && op.getNumResults() > 0 &&
          op.getNumRegions() == 0) {
        op.erase();
        erased = true;
      }
  }
  llvm::BitVector unused(function.getNumArguments());
  for (BlockArgument arg : function.getArguments())
    unused[arg.getArgNumber()] =
        usedBefore[arg.getArgNumber()] && arg.use_empty();
  (void)function.eraseArguments(unused);
  *alike = true;
  return count;
}
