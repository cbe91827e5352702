//===- RemakeInBackward.cpp - remake cheap forward values in backward -----===//
//
// On a per-device (`part.spmd`) training function, backward's reads of an
// activation's all-gather (sequence parallelism's gathered matmul input)
// and of a widening cast (mixed precision's f32 copy) move to clones made
// in backward, so that forward keeps the shard and the narrow value, as
// Megatron-LM and fused norms keep them. See
// docs/design/2026-12-07-remake-in-backward.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <vector>

namespace partition::part {
#define GEN_PASS_DEF_PARTREMAKEINBACKWARDPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// Which ops carry which `part.layer`, by position: whether a value made at
/// one position and read at another outlives other layers' work.
class LayerSpans {
public:
  void add(int64_t position, IntegerAttr layer) {
    tagged.push_back((tagged.empty() ? 0 : tagged.back()) + (layer ? 1 : 0));
    if (layer)
      at[layer.getInt()].push_back(position);
  }
  /// Whether an op strictly between positions `from` and `to` carries a
  /// layer other than `reader`'s (any layer where it carries none).
  bool otherBetween(int64_t from, int64_t to, Operation *reader) const {
    if (to - from < 2)
      return false;
    int64_t all = tagged[to - 1] - tagged[from];
    auto layer =
        reader->getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName());
    if (!layer)
      return all > 0;
    auto it = at.find(layer.getInt());
    int64_t same = 0;
    if (it != at.end())
      same = std::lower_bound(it->second.begin(), it->second.end(), to) -
             std::upper_bound(it->second.begin(), it->second.end(), from);
    return all > same;
  }

private:
  std::vector<int64_t> tagged; ///< tagged ops at or before each position
  std::map<int64_t, std::vector<int64_t>> at; ///< a layer's ops' positions
};

/// Whether `v` is an argument of `function` that is a parameter or
/// optimizer state (not an activation: ZeRO-3's gathers are
/// part-zero-prefetch's).
bool isWeightOrState(func::FuncOp function, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &function.getBody().front())
    return false;
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      arg.getArgNumber(), PartDialect::getRoleAttrName());
  return role && (role.getValue() == ArgRole::Parameter ||
                  role.getValue() == ArgRole::State);
}

/// Whether `op` widens a float to a float of more bits.
bool widens(Operation *op) {
  auto cast = dyn_cast<CastOp>(op);
  if (!cast)
    return false;
  auto in = dyn_cast<RankedTensorType>(cast->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(cast->getResult(0).getType());
  return in && out && isa<FloatType>(in.getElementType()) &&
         isa<FloatType>(out.getElementType()) &&
         out.getElementTypeBitWidth() > in.getElementTypeBitWidth();
}

struct PartRemakeInBackwardPass
    : public partition::part::impl::PartRemakeInBackwardPassBase<
          PartRemakeInBackwardPass> {
  using PartRemakeInBackwardPassBase::PartRemakeInBackwardPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (!function.isDeclaration() && getSpmdMesh(function))
        runOnFunction(function);
  }

  void runOnFunction(func::FuncOp function) {
    Block &block = function.getBody().front();
    llvm::DenseSet<Operation *> forward = forwardProgram(function);
    // Positions, once: clones are inserted, nothing moves, and only the
    // original ops are compared.
    llvm::DenseMap<Operation *, int64_t> position;
    for (Operation &op : block)
      position[&op] = int64_t(position.size());
    // Which layers' ops lie where.
    layers = LayerSpans();
    for (Operation &op : block)
      layers.add(position[&op], op.getAttrOfType<IntegerAttr>(
                                    PartDialect::getLayerAttrName()));

    SmallVector<Operation *> candidates;
    for (Operation &op : block)
      if (forward.contains(&op) &&
          ((isa<AllGatherOp>(op) &&
            !isWeightOrState(function, op.getOperand(0))) ||
           widens(&op)))
        candidates.push_back(&op);
    for (Operation *op : candidates)
      remake(op, forward, position);
  }

  /// Gives `op`'s readers outside forward a clone of it (see the pass).
  void remake(Operation *op, const llvm::DenseSet<Operation *> &forward,
              const llvm::DenseMap<Operation *, int64_t> &position) {
    Block *block = op->getBlock();
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *u = block->findAncestorOpInBlock(*user);
      if (!u || forward.contains(u) || isa<func::ReturnOp>(u))
        continue;
      if (!first || position.lookup(u) < position.lookup(first))
        first = u;
    }
    // Kept only while no other layer runs (the loss's f32 logits, read as
    // backward begins): remaking it would hold the narrow value and the
    // clone at once for nothing.
    if (!first || !layers.otherBetween(position.lookup(op),
                                       position.lookup(first), first))
      return;
    Operation *at = first;
    // A gather is issued, as part of its reader's layer, above the GEMM of
    // that layer's backward before the reader (Megatron gathers again beside
    // the input gradient's matmul), or where the layer's backward begins.
    IntegerAttr layer;
    if (isa<AllGatherOp>(op))
      layer = first->getAttrOfType<IntegerAttr>(
          PartDialect::getLayerAttrName());
    if (layer)
      for (Operation *p = first->getPrevNode(); p; p = p->getPrevNode()) {
        auto known = position.find(p);
        if (known == position.end())
          continue; // a clone this pass made
        if (known->second <= position.lookup(op) || forward.contains(p))
          break;
        auto l = p->getAttrOfType<IntegerAttr>(PartDialect::getLayerAttrName());
        if (l && l != layer)
          break;
        at = p;
        if (isa<MatmulOp, BatchMatmulOp, AttentionOp, AttentionBlockOp,
                AttentionGradOp>(p))
          break;
      }
    OpBuilder b(at);
    Operation *clone = b.clone(*op);
    if (layer)
      clone->setAttr(PartDialect::getLayerAttrName(), layer);
    clone->setAttr(PartDialect::getOriginAttrName(),
                   b.getStringAttr(remakeOrigin(op)));
    op->getResult(0).replaceUsesWithIf(
        clone->getResult(0), [&](OpOperand &use) {
          Operation *u = block->findAncestorOpInBlock(*use.getOwner());
          return u && !forward.contains(u) && !isa<func::ReturnOp>(u);
        });
  }

  LayerSpans layers;

  /// The clone's origin: the original's, and why it was made again.
  static std::string remakeOrigin(Operation *op) {
    std::string text;
    if (auto o = op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName()))
      text = o.getValue().str() + "; ";
    return text + (isa<AllGatherOp>(op)
                       ? "gathered again for backward, which keeps the shard "
                         "(part-remake-in-backward)"
                       : "widened again for backward, which keeps the "
                         "narrow value (part-remake-in-backward)");
  }
};

} // namespace
