//===- HoistReductions.cpp - issue sums as soon as their operand is made --===//
//
// On a per-device (`part.spmd`) function, moves each `part.all_reduce` and
// `part.reduce_scatter` up to right after the op that makes its operand.
// part-partition reshards an operand right before the op that reads it, so
// a sum pending over the tensor-parallel axis (a backward input gradient)
// was issued only where it is read, after independent work (the weight
// gradient, an interleaved update) that could have run beside it. Issued
// early, it runs on the communication lane while that work computes:
// Megatron's asynchronous input-gradient all-reduce. The work since the
// previous collective that a sum does not wait for is then deferred to
// right after it.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace partition::part {
#define GEN_PASS_DEF_PARTHOISTREDUCTIONSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// What the pass asks of an op of one per-device function: whether it
/// communicates (a collective over more than one device, as the cost model
/// counts it), and whether it is a sum the pass moves. Collectives over one
/// device (an axis of size 1 in the probe of a plan without it) have
/// nothing to run beside, so nothing moves for them.
class Collectives {
public:
  explicit Collectives(func::FuncOp function) {
    if (FlatSymbolRefAttr ref = getSpmdMesh(function))
      if (MeshOp mesh = lookupMesh(function, ref))
        meshes[ref] = mesh.getMesh();
  }
  bool communicates(Operation *op) {
    std::optional<CollectiveCost> c = collectiveCost(op, meshOf(op));
    return c && c->groupSize > 1 && !isa<AllSliceOp>(op);
  }
  bool isSum(Operation *op) {
    return isa<AllReduceOp, ReduceScatterOp>(op) && communicates(op);
  }

private:
  /// The mesh `op` names, looked up once per name.
  MeshAttr meshOf(Operation *op) {
    auto ref = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    if (!ref)
      return {};
    auto [it, fresh] = meshes.try_emplace(ref);
    if (fresh)
      if (MeshOp mesh = lookupMesh(op, ref))
        it->second = mesh.getMesh();
    return it->second;
  }
  llvm::DenseMap<Attribute, MeshAttr> meshes;
};

struct PartHoistReductionsPass
    : public partition::part::impl::PartHoistReductionsPassBase<
          PartHoistReductionsPass> {
  using PartHoistReductionsPassBase::PartHoistReductionsPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isDeclaration() && getSpmdMesh(function)) {
        Collectives collectives(function);
        hoist(function.getBody().front(), collectives);
        if (defer)
          deferIndependent(function.getBody().front(), collectives);
      }
  }

  /// Moves each sum of `block` right after its operand's op (after the sums
  /// already moved there, in their order). Moving an op up past ops that do
  /// not make its operand keeps every use dominated: its results are read
  /// only below its old place.
  static void hoist(Block &block, Collectives &collectives) {
    llvm::DenseMap<Operation *, Operation *> lastPlaced;
    SmallVector<Operation *> sums;
    for (Operation &op : block)
      if (collectives.isSum(&op))
        sums.push_back(&op);
    for (Operation *op : sums) {
      Operation *def = op->getOperand(0).getDefiningOp();
      if (!def || def->getBlock() != &block)
        continue;
      Operation *&after = lastPlaced[def];
      Operation *point = after ? after : def;
      if (point->getNextNode() != op)
        op->moveAfter(point);
      after = op;
    }
  }

  /// Defers, for each sum a layer's op reads, the layer's ops since the
  /// previous collective (or op with effects) that the sum does not wait
  /// for to right after it, in their order, with the ops that read them:
  /// the sum then runs beside them. In backward this puts a layer's
  /// input-gradient chain (and its sum) before its weight gradients and
  /// their updates, as Megatron issues the input gradient's all-reduce
  /// before the weight gradient's GEMM. Deferred ops read only ops before
  /// them or other deferred ops (an op the sum waits for reads only such
  /// ops), so the order stays valid.
  static void deferIndependent(Block &block, Collectives &collectives) {
    SmallVector<Operation *> window;
    llvm::DenseSet<Operation *> cone;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      bool communicates = collectives.communicates(&op);
      // Only sums a layer's compute waits for (a tensor-parallel input
      // gradient): a gradient's reduction over dp, read by the update
      // alone, is part-grad-buckets' to place, with backward after it.
      auto layerWaits = [&] {
        return llvm::any_of(op.getUsers(), [](Operation *u) {
          return u->hasAttr(PartDialect::getLayerAttrName());
        });
      };
      if (communicates && isa<AllReduceOp, ReduceScatterOp>(op) &&
          !window.empty() && layerWaits()) {
        // The ops of the window the sum waits for.
        cone.clear();
        cone.insert(&op);
        for (Operation *w : llvm::reverse(window))
          if (llvm::any_of(w->getUsers(), [&](Operation *u) {
                return cone.contains(block.findAncestorOpInBlock(*u));
              }))
            cone.insert(w);
        // A layer's ops (part.layer) move, and what reads them; untagged
        // ops that read none stay (where they are, between two layers, is
        // what names the section the planner's probe gives them).
        Operation *point = &op;
        llvm::DenseSet<Operation *> deferred;
        for (Operation *w : window) {
          if (cone.contains(w))
            continue;
          bool reads = llvm::any_of(w->getOperands(), [&](Value v) {
            return deferred.contains(v.getDefiningOp());
          });
          if (!reads && !w->hasAttr(PartDialect::getLayerAttrName()))
            continue;
          deferred.insert(w);
          w->moveAfter(point);
          point = w;
        }
      }
      if (communicates || !isMemoryEffectFree(&op)) {
        window.clear();
        continue;
      }
      window.push_back(&op);
    }
  }
};

} // namespace
