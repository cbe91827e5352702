//===- Recompute.cpp - recompute layer activations in backward ------------===//
//
// Activation recomputation per layer: in a training program (part-autodiff's
// or part-optimizer's output), backward's uses of a layer's internal forward
// values move to clones of the layer's forward ops placed right before those
// uses, so that only the layer's inputs stay live from forward to backward.
// See docs/design/2026-12-02-training.md, "Recomputation".
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <set>

#define DEBUG_TYPE "part-recompute"

namespace partition::part {
#define GEN_PASS_DEF_PARTRECOMPUTEPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// The layer index an op carries, if any.
std::optional<int64_t> layerOf(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName());
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

/// Whether a clone of `op` computes what `op` computes, anywhere later in
/// the block: no side effects, no regions. Ops without operands (constants)
/// are persistent data, not activations, and are not cloned either.
bool isRecomputable(Operation *op) {
  return op->getNumOperands() != 0 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op);
}

/// Whether `selective` recomputation keeps `op`'s results from forward
/// instead of recomputing them: the compute-bound ops (matmuls, attention),
/// whose outputs are worth their memory, as torchtitan's op-level selective
/// checkpointing saves them.
bool isKept(Operation *op, bool selective) {
  return selective && isa<MatmulOp, BatchMatmulOp, AttentionOp>(op);
}

/// Recomputes in backward the internal values of one layer, made of the
/// forward ops `members` (in block order), but for those `isKept`. Returns
/// the number of clones.
unsigned recomputeLayer(int64_t layer, ArrayRef<Operation *> members,
                        const llvm::DenseSet<Operation *> &forward,
                        bool selective) {
  llvm::SmallPtrSet<Operation *, 32> inLayer(members.begin(), members.end());
  // A value of the layer is internal when no forward op outside the layer
  // uses it; the others are the layer's outputs, the next layer's inputs.
  auto isInternal = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !inLayer.contains(def))
      return false;
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      return !forward.contains(user) || inLayer.contains(user);
    });
  };
  auto isBackwardUse = [&](Operation *user) { return !forward.contains(user); };

  // The ops to clone: those defining an internal value that backward uses,
  // and, through internal operands, what they need; a kept op's results are
  // read from forward, as the layer's inputs are.
  llvm::SmallPtrSet<Operation *, 32> toClone;
  SmallVector<Operation *> worklist;
  for (Operation *op : members)
    for (Value result : op->getResults())
      if (!isKept(op, selective) && isInternal(result) &&
          llvm::any_of(result.getUsers(), isBackwardUse))
        worklist.push_back(op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!toClone.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (isInternal(operand) && !isKept(operand.getDefiningOp(), selective))
        worklist.push_back(operand.getDefiningOp());
  }
  if (toClone.empty())
    return 0;
  SmallVector<Operation *> order;
  for (Operation *op : members)
    if (toClone.contains(op))
      order.push_back(op);

  // Where each clone goes: right before the first backward use of its
  // results, or before the first clone that needs it, whichever is earlier.
  llvm::DenseMap<Operation *, Operation *> point;
  auto earlier = [](Operation *a, Operation *b) {
    if (!a)
      return b;
    return b && b->isBeforeInBlock(a) ? b : a;
  };
  for (Operation *op : llvm::reverse(order)) {
    Operation *first = nullptr;
    for (Value result : op->getResults()) {
      bool internal = isInternal(result);
      for (Operation *user : result.getUsers()) {
        if (toClone.contains(user))
          first = earlier(first, point.lookup(user));
        else if (internal && isBackwardUse(user))
          first = earlier(first, user);
      }
    }
    assert(first && "a cloned op has a backward use or a cloned user");
    point[op] = first;
  }

  // Clone in forward order: clones that share a point keep their order.
  MLIRContext *ctx = members.front()->getContext();
  StringAttr recomputedName =
      StringAttr::get(ctx, PartDialect::getRecomputedAttrName());
  StringAttr origin = StringAttr::get(
      ctx, std::string(selective ? "selective " : "") + "recomputation of layer " +
               std::to_string(layer) + " for backward (part-recompute)");
  StringAttr locName = StringAttr::get(ctx, "recomputed");
  IRMapping mapping;
  llvm::SmallPtrSet<Operation *, 32> clones;
  for (Operation *op : order) {
    OpBuilder b(point[op]);
    Operation *clone = b.clone(*op, mapping);
    clone->setAttr(recomputedName, UnitAttr::get(ctx));
    clone->setAttr(PartDialect::getOriginAttrName(), origin);
    clone->setLoc(NameLoc::get(locName, op->getLoc()));
    clones.insert(clone);
  }
  // Backward now reads the clones.
  for (Operation *op : order)
    for (Value result : op->getResults())
      if (isInternal(result))
        result.replaceUsesWithIf(mapping.lookup(result), [&](OpOperand &use) {
          return isBackwardUse(use.getOwner()) &&
                 !clones.contains(use.getOwner());
        });
  LLVM_DEBUG(llvm::dbgs() << "part-recompute: layer " << layer << ": "
                          << order.size() << " ops recomputed\n");
  return order.size();
}

struct PartRecomputePass
    : public partition::part::impl::PartRecomputePassBase<PartRecomputePass> {
  using PartRecomputePassBase::PartRecomputePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "full" && mode != "selective") {
      module.emitError() << "part-recompute: mode=\"" << mode
                         << "\" is not full or selective";
      return signalPassFailure();
    }
    bool selective = mode == "selective";
    // The layers asked for; empty with `all`.
    std::set<int64_t> wanted;
    bool all = StringRef(layers).trim() == "all";
    if (!all) {
      SmallVector<StringRef> parts;
      StringRef(layers).split(parts, ',', -1, /*KeepEmpty=*/true);
      for (StringRef part : parts) {
        int64_t index;
        if (part.trim().getAsInteger(10, index) || index < 0) {
          module.emitError()
              << "layers=\"" << layers << "\": \"" << part.trim()
              << "\" is not a layer index (expected all, or a "
                 "comma-separated list of non-negative integers such as 0,2)";
          return signalPassFailure();
        }
        wanted.insert(index);
      }
    }

    std::set<int64_t> present;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      if (getSpmdMesh(function)) {
        function.emitError()
            << "@" << function.getName()
            << " is a per-device program; part-recompute works on the "
               "global training program (run it before part-spmd)";
        return signalPassFailure();
      }
      bool training = false;
      for (unsigned i = 0; i < function.getNumResults(); ++i)
        training |=
            function.getResultAttr(i, PartDialect::getGradOfAttrName()) ||
            function.getResultAttr(i, PartDialect::getUpdatesAttrName());
      if (!training || !function.getBody().hasOneBlock()) {
        function.emitError()
            << "@" << function.getName()
            << " is not a training program of one block returning the loss "
               "and gradients (part.grad_of) or updates (part.updates); run "
               "part-recompute after part-autodiff";
        return signalPassFailure();
      }

      llvm::DenseSet<Operation *> forward = forwardProgram(function);
      std::map<int64_t, SmallVector<Operation *>> members;
      for (Operation &op : function.getBody().front()) {
        std::optional<int64_t> layer = layerOf(&op);
        if (!layer || !forward.contains(&op))
          continue;
        present.insert(*layer);
        if ((all || wanted.count(*layer)) && isRecomputable(&op))
          members[*layer].push_back(&op);
      }
      unsigned cloned = 0;
      for (auto &[layer, ops] : members)
        cloned += recomputeLayer(layer, ops, forward, selective);
      LLVM_DEBUG(llvm::dbgs() << "part-recompute: @" << function.getName()
                              << ": " << cloned << " clones\n");
    }

    for (int64_t layer : wanted)
      if (!present.count(layer)) {
        InFlightDiagnostic diag = module.emitError()
                                  << "layer " << layer
                                  << " has no forward ops (part.layer) in "
                                     "the module; its layers are ";
        if (present.empty())
          diag << "none";
        else
          llvm::interleaveComma(present, diag);
        return signalPassFailure();
      }
    if (all && present.empty())
      module.emitWarning()
          << "no forward op has a part.layer attribute: nothing to recompute";
  }
};

} // namespace
