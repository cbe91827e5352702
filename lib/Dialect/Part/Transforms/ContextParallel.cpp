//===- ContextParallel.cpp - split the sequence over a mesh axis ----------===//
//
// part-context-parallel: every sequence-indexed value split over a mesh
// axis, in the balanced chunk order that gives each device as much causal
// attention work as any other. See docs/design/2026-12-07-context-parallel.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/DimensionClasses.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <numeric>

#define DEBUG_TYPE "part-context-parallel"

namespace partition::part {
#define GEN_PASS_DEF_PARTCONTEXTPARALLELPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

std::vector<int64_t> partition::part::balancedSequenceOrder(int64_t length,
                                                            int64_t devices) {
  // Chunks 0, 2cp-1, 1, 2cp-2, ...: device r holds chunks r and 2cp-1-r.
  int64_t chunks = 2 * devices, chunk = length / chunks;
  std::vector<int64_t> order;
  order.reserve(length);
  for (int64_t r = 0; r < devices; ++r)
    for (int64_t c : {r, chunks - 1 - r})
      for (int64_t i = 0; i < chunk; ++i)
        order.push_back(c * chunk + i);
  return order;
}

namespace {
/// The sequence dimensions of a function: the classes of its attentions'
/// query and key positions.
struct SequenceDims {
  llvm::DenseSet<unsigned> classes;
  int64_t length = 0;

  /// The dimensions of `v` in the sequence's classes.
  SmallVector<unsigned> of(Value v, const DimensionClasses &dims) const {
    SmallVector<unsigned> found;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return found;
    for (unsigned d = 0; d < type.getRank(); ++d)
      if (std::optional<unsigned> c = dims.classOf(v, d);
          c && classes.contains(*c) && type.getDimSize(d) == length)
        found.push_back(d);
    return found;
  }
};

struct PartContextParallelPass
    : public partition::part::impl::PartContextParallelPassBase<
          PartContextParallelPass> {
  using PartContextParallelPassBase::PartContextParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> size =
        lookupMeshAxisSize(module, meshName, axis, "split the sequence over");
    if (failed(size))
      return signalPassFailure();
    if (attention != "all-gather" && attention != "all-to-all" &&
        attention != "ring") {
      module.emitError() << "part-context-parallel: attention=" << attention
                         << " is not a form of context-parallel attention "
                            "(all-gather, ring or all-to-all)";
      return signalPassFailure();
    }
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isDeclaration() || getSpmdMesh(function))
        continue;
      if (failed(splitSequence(function, *size)))
        return signalPassFailure();
    }
  }

  /// The sequence of `function`'s attentions, or an error naming what
  /// context parallelism cannot split.
  FailureOr<SequenceDims> findSequence(func::FuncOp function,
                                       const DimensionClasses &dims,
                                       int64_t size) {
    SequenceDims seq;
    Operation *first = nullptr;
    auto add = [&](Operation *op, Value q, Value k) -> LogicalResult {
      int64_t sq = cast<RankedTensorType>(q.getType()).getDimSize(2);
      int64_t sk = cast<RankedTensorType>(k.getType()).getDimSize(2);
      if (sq != sk || (first && sq != seq.length))
        return op->emitError()
               << "context parallelism over \"" << axis
               << "\" needs one sequence length in every attention, got "
               << sq << " queries and " << sk << " keys here"
               << (first ? " and " + std::to_string(seq.length) + " before"
                         : std::string());
      first = first ? first : op;
      seq.length = sq;
      for (Value v : {q, k})
        if (std::optional<unsigned> c = dims.classOf(v, 2))
          seq.classes.insert(*c);
      return success();
    };
    WalkResult walk = function.walk([&](Operation *op) {
      if (auto a = dyn_cast<AttentionOp>(op))
        return failed(add(op, a.getQuery(), a.getKey())) ? WalkResult::interrupt()
                                                          : WalkResult::advance();
      if (auto g = dyn_cast<AttentionGradOp>(op))
        return failed(add(op, g.getQuery(), g.getKey())) ? WalkResult::interrupt()
                                                          : WalkResult::advance();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (!first)
      return function.emitError()
             << "mesh axis \"" << axis << "\" splits the sequence, but @"
             << function.getName()
             << " has no part.attention (part-raise makes one of an "
                "attention written as ops)";
    if (seq.length % (2 * size))
      return first->emitError()
             << "context parallelism over \"" << axis << "\" of size " << size
             << " cuts the sequence into " << 2 * size
             << " chunks (two per device, for the causal balance), which "
                "do not divide its length "
             << seq.length;
    return seq;
  }

  /// An error at the first op that moves values along the sequence (a
  /// slice, pad or concatenation of it): those see the sequence in the
  /// balanced order, not in its own.
  LogicalResult checkPositionwise(func::FuncOp function,
                                  const DimensionClasses &dims,
                                  const SequenceDims &seq) {
    WalkResult walk = function.walk([&](Operation *op) {
      if (!isa<SliceOp, PadOp, ConcatOp>(op))
        return WalkResult::advance();
      Value in = op->getOperand(0), out = op->getResult(0);
      auto inType = cast<RankedTensorType>(in.getType());
      auto outType = cast<RankedTensorType>(out.getType());
      for (unsigned d : seq.of(in, dims)) {
        if (isa<ConcatOp>(op) &&
            cast<ConcatOp>(op).getDim() != static_cast<int64_t>(d))
          continue;
        if (inType.getDimSize(d) == outType.getDimSize(d) &&
            !isa<ConcatOp>(op))
          continue;
        op->emitError() << "context parallelism over \"" << axis
                        << "\" cannot split a " << op->getName()
                        << " along the sequence (dimension " << d << ", "
                        << seq.length
                        << " positions): each device holds its own chunks "
                           "of the sequence (shift labels outside the model)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// An error for an input or label with a dimension of the sequence's
  /// length that the sharding rules do not join to the attentions' (an op
  /// between them folds the sequence into another dimension, as a reshape
  /// of [B, S, H] into [B S, H] rows does): it would not be put in the
  /// balanced order while the attentions' operands are.
  LogicalResult checkInputsReached(func::FuncOp function,
                                   const DimensionClasses &dims,
                                   const SequenceDims &seq) {
    for (BlockArgument arg : function.getArguments()) {
      auto role = function.getArgAttrOfType<ArgRoleAttr>(
          arg.getArgNumber(), PartDialect::getRoleAttrName());
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!role || !type ||
          (role.getValue() != ArgRole::Input &&
           role.getValue() != ArgRole::Label) ||
          !llvm::is_contained(type.getShape(), seq.length) ||
          !seq.of(arg, dims).empty())
        continue;
      auto name = function.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), PartDialect::getNameAttrName());
      return function.emitError()
             << "context parallelism over \"" << axis
             << "\" cannot follow the sequence (" << seq.length
             << " positions) from the attentions to argument "
             << arg.getArgNumber() << (name ? " (" + name.str() + ")" : "")
             << " of shape [" << llvm::make_range(type.getShape().begin(),
                                                  type.getShape().end())
             << "]: an op between them folds the sequence into another "
                "dimension (a part.reshape of [batch, sequence, features] "
                "into rows), so its positions could not be put in the "
                "order of the attentions'";
    }
    return success();
  }

  LogicalResult splitSequence(func::FuncOp function, int64_t size) {
    DimensionClasses dims(function);
    FailureOr<SequenceDims> seq = findSequence(function, dims, size);
    if (failed(seq) || failed(checkPositionwise(function, dims, *seq)) ||
        failed(checkInputsReached(function, dims, *seq)))
      return failure();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&function.getBody().front());
    Location loc = function.getLoc();
    std::vector<int64_t> order = balancedSequenceOrder(seq->length, size);
    std::vector<int64_t> inverse(order.size());
    for (auto [i, p] : llvm::enumerate(order))
      inverse[p] = static_cast<int64_t>(i);
    auto indexType = RankedTensorType::get({seq->length}, b.getI64Type());
    auto positions =
        ConstantOp::create(b, loc, DenseElementsAttr::get(
                                       indexType, ArrayRef<int64_t>(order)));
    SmallVector<SmallVector<StringRef>> split = {{axis}};
    // Named: propagation gives this as the origin of every split of the
    // sequence, and the partitioner as the reason of their collectives.
    Location why = NameLoc::get(
        StringAttr::get(ctx, "context parallelism over \"" + axis +
                                 "\" (each device's chunks of the sequence)"),
        loc);
    Value local = ShardingConstraintOp::create(
        b, why, positions, ShardingAttr::get(ctx, meshName, split, {}));
    contractSequenceInPlace(function, dims, *seq);
    reorderSources(function, dims, *seq, positions, local);
    givePositions(function, positions, local,
                  attention == "all-to-all" ? StringAttr::get(ctx, axis)
                                            : StringAttr());
    restoreResults(function, dims, *seq, inverse);
    if (attention == "ring")
      useBlocks(function, StringAttr::get(ctx, axis));
    return success();
  }

  /// The ring form: each causal attention becomes a part.attention_block,
  /// whose rows' log-sum-exp its gradient takes with delta = rowsum(dO O),
  /// both tagged for the partitioner's ring. A gradient whose attention is
  /// not in the program (recomputed) gets its own block before it.
  static void useBlocks(func::FuncOp function, StringAttr axis) {
    StringRef tag = PartDialect::getContextRingAttrName();
    using Key = std::tuple<Value, Value, Value>;
    llvm::DenseMap<Key, AttentionBlockOp> blocks;
    auto blockOf = [&](OpBuilder &b, auto op) {
      auto block = AttentionBlockOp::create(
          b, op.getLoc(), op.getQuery(), op.getKey(), op.getValue(),
          op.getQueryPositions(), op.getKeyPositions(), op.getCausal(),
          op.getScaleAttr(), op.getWindowAttr());
      if (Attribute layer = op->getAttr(PartDialect::getLayerAttrName()))
        block->setAttr(PartDialect::getLayerAttrName(), layer);
      block->setAttr(tag, axis);
      blocks[{op.getQuery(), op.getKey(), op.getValue()}] = block;
      return block;
    };
    SmallVector<AttentionOp> forward;
    SmallVector<AttentionGradOp> backward;
    function.walk([&](AttentionOp a) {
      if (a.getQueryPositions())
        forward.push_back(a);
    });
    function.walk([&](AttentionGradOp g) {
      if (g.getQueryPositions())
        backward.push_back(g);
    });
    for (AttentionOp a : forward) {
      OpBuilder b(a);
      AttentionBlockOp block = blockOf(b, a);
      a.replaceAllUsesWith(block.getResult());
      a.erase();
    }
    for (AttentionGradOp g : backward) {
      OpBuilder b(g);
      auto it = blocks.find({g.getQuery(), g.getKey(), g.getValue()});
      AttentionBlockOp block = it != blocks.end() ? it->second : blockOf(b, g);
      Value delta = rowDot(b, g.getLoc(), g.getResultGrad(), block.getResult());
      if (Attribute layer = g->getAttr(PartDialect::getLayerAttrName()))
        delta.getDefiningOp()->setAttr(PartDialect::getLayerAttrName(), layer);
      auto with = AttentionGradOp::create(
          b, g.getLoc(), g.getQuery(), g.getKey(), g.getValue(),
          g.getResultGrad(), g.getQueryPositions(), g.getKeyPositions(),
          block.getLse(), delta, g.getCausal(), g.getScaleAttr(),
          g.getWindowAttr());
      with->setDiscardableAttrs(g->getDiscardableAttrDictionary());
      with->removeAttr(PartDialect::getContextHeadsAttrName());
      with->setAttr(tag, axis);
      g.replaceAllUsesWith(with.getResults());
      g.erase();
    }
  }

  /// rowsum(dy * o) over the last dimension, in f32: [B, H, S].
  static Value rowDot(OpBuilder &b, Location loc, Value dy, Value o) {
    auto f32 = [&](Value v) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      if (t.getElementType().isF32())
        return v;
      return CastOp::create(b, loc, t.clone(b.getF32Type()), v);
    };
    Value dy32 = f32(dy);
    Value o32 = f32(o);
    Value product = MulOp::create(b, loc, dy32, o32);
    int64_t last = cast<RankedTensorType>(product.getType()).getRank() - 1;
    return ReduceSumOp::create(b, loc, product, ArrayRef<int64_t>{last},
                               /*keepDims=*/false);
  }

  /// Autodiff writes a weight's gradient as A^T dy with A and dy's leading
  /// dimensions folded into rows ([B, S, K] -> [B S, K]). With the
  /// sequence split and the batch not, a device's rows are not a block of
  /// B S, so that fold would gather the whole sequence. Where the rows
  /// hold the sequence, the product is written per batch row instead (a
  /// batch_matmul contracting the sequence, then a sum over the batch):
  /// each device sums its own positions, and the sum over cp follows.
  void contractSequenceInPlace(func::FuncOp function,
                               const DimensionClasses &dims,
                               const SequenceDims &seq) {
    SmallVector<MatmulOp> products;
    function.walk([&](MatmulOp m) {
      auto a = m.getLhs().getDefiningOp<ReshapeOp>();
      auto g = m.getRhs().getDefiningOp<ReshapeOp>();
      if (!m.getTransposeA() || m.getTransposeB() || !a || !g)
        return;
      auto aType = cast<RankedTensorType>(a.getInput().getType());
      auto gType = cast<RankedTensorType>(g.getInput().getType());
      if (aType.getRank() < 3 ||
          aType.getShape().drop_back() != gType.getShape().drop_back() ||
          cast<RankedTensorType>(m.getLhs().getType()).getDimSize(1) !=
              aType.getShape().back() ||
          cast<RankedTensorType>(m.getRhs().getType()).getDimSize(1) !=
              gType.getShape().back())
        return;
      SmallVector<unsigned> inA = seq.of(a.getInput(), dims);
      if (llvm::is_contained(inA, unsigned(aType.getRank() - 2)))
        products.push_back(m);
    });
    for (MatmulOp m : products) {
      OpBuilder b(m);
      Value a = m.getLhs().getDefiningOp<ReshapeOp>().getInput();
      Value g = m.getRhs().getDefiningOp<ReshapeOp>().getInput();
      Value perRow = BatchMatmulOp::create(b, m.getLoc(), a, g,
                                           /*transpose_a=*/true,
                                           /*transpose_b=*/false);
      int64_t batchDims = cast<RankedTensorType>(a.getType()).getRank() - 2;
      SmallVector<int64_t> batch(batchDims);
      std::iota(batch.begin(), batch.end(), 0);
      Value sum = ReduceSumOp::create(b, m.getLoc(), perRow, batch,
                                      /*keepDims=*/false);
      // The sum is the gradient (part.gradient_of and the rest); both are
      // of the product's layer.
      sum.getDefiningOp()->setDiscardableAttrs(
          m->getDiscardableAttrDictionary());
      if (Attribute layer = m->getAttr(PartDialect::getLayerAttrName()))
        perRow.getDefiningOp()->setAttr(PartDialect::getLayerAttrName(),
                                        layer);
      m.replaceAllUsesWith(sum);
      SmallVector<Operation *> folds = {m.getLhs().getDefiningOp(),
                                        m.getRhs().getDefiningOp()};
      m.erase();
      for (Operation *fold : folds)
        if (fold->use_empty())
          fold->erase();
    }
  }

  /// `v` with each of its sequence dimensions `seqDims` gathered in the
  /// order `positions` (the first split, as the queries; the others whole,
  /// as keys).
  static Value gatherSequence(OpBuilder &b, Location loc, Value v,
                              ArrayRef<unsigned> seqDims, Value local,
                              Value positions) {
    for (auto [i, d] : llvm::enumerate(seqDims)) {
      Value indices = i == 0 ? local : positions;
      v = GatherOp::create(b, loc, v.getType(), v, indices,
                           b.getI64IntegerAttr(d));
    }
    return v;
  }

  /// Puts the arguments and constants indexed by the sequence in the
  /// balanced order, where they enter the function: inputs, labels and
  /// masks, but also a parameter of one row per position (GPT-2's learned
  /// position table) and its optimizer state, whose new values
  /// restoreResults puts back in the sequence's order.
  void reorderSources(func::FuncOp function, const DimensionClasses &dims,
                      const SequenceDims &seq, Value positions, Value local) {
    OpBuilder b(&getContext());
    Block &entry = function.getBody().front();
    b.setInsertionPointAfter(local.getDefiningOp());
    for (BlockArgument arg : entry.getArguments())
      replaceSource(b, arg, seq.of(arg, dims), local, positions);
    SmallVector<ConstantOp> constants;
    function.walk([&](ConstantOp c) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (c.getResult() != positions && !(dense && dense.isSplat()))
        constants.push_back(c);
    });
    for (ConstantOp c : constants) {
      b.setInsertionPointAfter(c);
      replaceSource(b, c.getResult(), seq.of(c.getResult(), dims), local,
                    positions);
    }
  }

  /// Replaces the uses of `source` by it gathered in the balanced order,
  /// at the builder's insertion point (after the positions).
  static void replaceSource(OpBuilder &b, Value source,
                            ArrayRef<unsigned> seqDims, Value local,
                            Value positions) {
    if (seqDims.empty())
      return;
    Value reordered =
        gatherSequence(b, source.getLoc(), source, seqDims, local, positions);
    Operation *first = reordered.getDefiningOp();
    while (first->getOperand(0) != source)
      first = first->getOperand(0).getDefiningOp();
    source.replaceAllUsesExcept(reordered, first);
  }

  /// Gives every causal attention the positions of the balanced order: its
  /// queries' own (split with them) and the keys' (whole); with
  /// `headsAxis`, tagged for the all-to-all form over it.
  static void givePositions(func::FuncOp function, Value positions,
                            Value local, StringAttr headsAxis) {
    StringRef tag = PartDialect::getContextHeadsAttrName();
    function.walk([&](Operation *op) {
      OpBuilder b(op);
      if (auto a = dyn_cast<AttentionOp>(op)) {
        if (!a.getCausal() || a.getQueryPositions())
          return;
        auto with = AttentionOp::create(
            b, a.getLoc(), a.getType(), a.getQuery(), a.getKey(), a.getValue(),
            local, positions, a.getCausal(), a.getScaleAttr(),
            a.getWindowAttr());
        with->setDiscardableAttrs(a->getDiscardableAttrDictionary());
        if (headsAxis)
          with->setAttr(tag, headsAxis);
        a.replaceAllUsesWith(with.getResult());
        a.erase();
      } else if (auto g = dyn_cast<AttentionGradOp>(op)) {
        if (!g.getCausal() || g.getQueryPositions())
          return;
        auto with = AttentionGradOp::create(
            b, g.getLoc(), g.getQuery(), g.getKey(), g.getValue(),
            g.getResultGrad(), local, positions, /*lse=*/Value(),
            /*delta=*/Value(), g.getCausal(),
            g.getScaleAttr(), g.getWindowAttr());
        with->setDiscardableAttrs(g->getDiscardableAttrDictionary());
        if (headsAxis)
          with->setAttr(tag, headsAxis);
        g.replaceAllUsesWith(with.getResults());
        g.erase();
      }
    });
  }

  /// Puts the results indexed by the sequence (logits) back in its order.
  void restoreResults(func::FuncOp function, const DimensionClasses &dims,
                      const SequenceDims &seq, ArrayRef<int64_t> inverse) {
    auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
    OpBuilder b(ret);
    Value order;
    for (OpOperand &operand : ret->getOpOperands()) {
      SmallVector<unsigned> seqDims = seq.of(operand.get(), dims);
      if (seqDims.empty())
        continue;
      if (!order) {
        auto type = RankedTensorType::get({seq.length}, b.getI64Type());
        order = ConstantOp::create(
            b, ret.getLoc(), DenseElementsAttr::get(type, inverse));
      }
      Value v = operand.get();
      for (unsigned d : seqDims)
        v = GatherOp::create(b, ret.getLoc(), v.getType(), v, order,
                             b.getI64IntegerAttr(d));
      operand.set(v);
    }
  }
};
} // namespace
