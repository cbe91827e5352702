//===- GradBuckets.cpp - bucket gradient reductions over dp ---------------===//
//
// On a per-device (`part.spmd`) function, groups the `part.all_reduce ... sum`
// ops (and, apart, the `part.reduce_scatter ... sum` ops) over the same mesh
// axes and element type into buckets of at most `bytes`, in the order their
// operands are produced, and runs each bucket as one collective of the
// flattened, concatenated operands, placed right after the last of them is
// produced.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-grad-buckets"

namespace partition::part {
#define GEN_PASS_DEF_PARTGRADBUCKETSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// The op after which the reduction of `v` can run: its definition, or null
/// for a block argument (the top of the block).
static Operation *producer(Value v) { return v.getDefiningOp(); }

/// True if `a` is produced no later than `b` (null: the top of the block).
static bool producedNoLater(Operation *a, Operation *b) {
  if (!a)
    return true;
  if (!b)
    return false;
  return a == b || a->isBeforeInBlock(b);
}

/// Bytes of a statically shaped tensor.
static int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// The ops of `block` before `point` that (transitively) use a result of the
/// bucket's all_reduces: they must move below the bucket's all_reduce.
/// Fails when one of them produces an operand of the bucket (the bucket would
/// wait for its own result).
static FailureOr<SetVector<Operation *>>
usersToMove(Block &block, ArrayRef<Operation *> bucket, Operation *point) {
  SetVector<Operation *> moved;
  SmallVector<Value> work;
  for (Operation *op : bucket)
    work.push_back(op->getResult(0));
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      // Ops after the point keep their place (the point itself is in the
      // set: it then depends on the bucket).
      if (!op || !point || (op != point && !op->isBeforeInBlock(point)) ||
          moved.contains(op))
        continue;
      moved.insert(op);
      for (Value r : op->getResults())
        work.push_back(r);
    }
  }
  for (Operation *op : bucket)
    if (Operation *def = producer(op->getOperand(0));
        def && moved.contains(def))
      return failure();
  return moved;
}

/// A sum one bucket can carry: an all_reduce, or a reduce_scatter whose
/// blocks are contiguous (no dimension of size above one before the
/// scattered one), so that the bucket scatters the concatenation of each
/// operand's blocks, block by block.
struct Reduction {
  /// The reduce_scatter's group size; 0 for an all_reduce.
  int64_t parts = 0;
  RankedTensorType input;
};

/// An all_reduce or reduce_scatter that sums.
static bool isSum(Operation *op) {
  if (auto ar = dyn_cast<AllReduceOp>(op))
    return ar.getKind() == ReductionKind::Sum;
  if (auto rs = dyn_cast<ReduceScatterOp>(op))
    return rs.getKind() == ReductionKind::Sum;
  return false;
}

static std::optional<Reduction> bucketable(Operation *op) {
  if (!isSum(op))
    return std::nullopt;
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!input || !input.hasStaticShape())
    return std::nullopt;
  if (isa<AllReduceOp>(op))
    return Reduction{0, input};
  auto rs = cast<ReduceScatterOp>(op);
  int64_t parts = contiguousBlockCount(
      dyn_cast<RankedTensorType>(rs.getType()), input, rs.getDim());
  if (!parts)
    return std::nullopt;
  return Reduction{parts, input};
}

struct PartGradBucketsPass
    : public partition::part::impl::PartGradBucketsPassBase<
          PartGradBucketsPass> {
  using PartGradBucketsPassBase::PartGradBucketsPassBase;

  void runOnOperation() override {
    if (bytes <= 0) {
      getOperation().emitError()
          << "part-grad-buckets: bytes must be positive (the most bytes of "
             "gradients one all-reduce carries), got "
          << int64_t(bytes);
      return signalPassFailure();
    }
    if (dtype != "" && dtype != "bf16" && dtype != "f16") {
      getOperation().emitError()
          << "part-grad-buckets: dtype must be bf16 or f16 (the type "
             "gradients are reduced in; empty: their own), got \""
          << dtype << "\"";
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      // Per-device functions and a pipeline's fragments (part-pipeline's
      // micro-batch steps).
      if (function.isDeclaration() ||
          !(getSpmdMesh(function) ||
            function->hasAttr(PartDialect::getFragmentAttrName())))
        continue;
      runOnFunction(function);
      if (!overlap)
        sinkUnwaitedSums(function.getBody().front());
    }
  }

  void runOnFunction(func::FuncOp function);
  void emitBucket(Block &block, ArrayRef<Operation *> bucket, bool gradients);
  /// overlap=false: every sum that no layer's op and no other sum waits
  /// for (a gradient's reduction, read by the update or returned) moves
  /// to the end of `block`, in order, followed by the ops that read it:
  /// the whole backward runs before the first of them.
  void sinkUnwaitedSums(Block &block);
};

void PartGradBucketsPass::runOnFunction(func::FuncOp function) {
  Block &block = function.getBody().front();
  // Candidates grouped by (kind of collective, mesh, axes, element type,
  // group size, whether they are of gradients).
  llvm::MapVector<std::tuple<OperationName, Attribute, Attribute, Type,
                             int64_t, int64_t>,
                  SmallVector<Operation *>>
      groups;
  // The reductions the updated results (`part.updates`: new parameters and
  // optimizer state) are computed from are of gradients; the loss's is not.
  // A pipeline's backward fragments ("B", "Bi", "W", "B.1") return
  // gradients (accumulated, reduced in the last); its forward ones the
  // loss.
  auto fragment =
      function->getAttrOfType<StringAttr>(PartDialect::getFragmentAttrName());
  bool backwardFragment =
      fragment && (fragment.getValue().starts_with("B") ||
                   fragment.getValue().starts_with("W"));
  llvm::DenseSet<Operation *> feeding =
      opsFeedingResults(function, [&](unsigned i) {
        return backwardFragment ||
               bool(function.getResultAttr(
                   i, PartDialect::getUpdatesAttrName()));
      });
  for (Operation &op : block) {
    std::optional<Reduction> r = bucketable(&op);
    if (!r)
      continue;
    groups[{op.getName(), op.getAttr("mesh"), op.getAttr("axes"),
            r->input.getElementType(), r->parts,
            int64_t(feeding.contains(&op))}]
        .push_back(&op);
  }
  for (auto &[key, ops] : groups) {
    bool gradients = std::get<5>(key) != 0;
    // In the order their operands are produced (backward: reverse layers).
    llvm::stable_sort(ops, [](Operation *a, Operation *b) {
      Operation *x = producer(a->getOperand(0)),
                *y = producer(b->getOperand(0));
      return x != y && producedNoLater(x, y);
    });
    SmallVector<Operation *> bucket;
    int64_t bucketBytes = 0;
    for (Operation *op : ops) {
      int64_t size = tensorBytes(bucketable(op)->input);
      bool fits = bucket.empty() || bucketBytes + size <= int64_t(bytes);
      if (fits && !bucket.empty()) {
        // Joining must not make the bucket wait for its own results.
        SmallVector<Operation *> joined(bucket);
        joined.push_back(op);
        fits = succeeded(
            usersToMove(block, joined, producer(op->getOperand(0))));
      }
      if (!fits) {
        emitBucket(block, bucket, gradients);
        bucket.clear();
        bucketBytes = 0;
      }
      bucket.push_back(op);
      bucketBytes += size;
    }
    if (!bucket.empty())
      emitBucket(block, bucket, gradients);
  }
}

/// The bucket's operands flattened and concatenated: one vector for
/// all_reduces; for reduce_scatters over `parts` devices, [parts, n / parts]
/// blocks side by side, flattened, so that device i's share of every
/// operand is the i-th contiguous block of the whole.
static Value joinOperands(OpBuilder &b, ArrayRef<Operation *> bucket,
                          int64_t parts) {
  Type elementType = bucketable(bucket.front())->input.getElementType();
  SmallVector<Value> pieces;
  int64_t total = 0;
  for (Operation *op : bucket) {
    int64_t n = bucketable(op)->input.getNumElements();
    total += n;
    SmallVector<int64_t> shape =
        parts ? SmallVector<int64_t>{parts, n / parts} : SmallVector<int64_t>{n};
    Value v = op->getOperand(0);
    auto type = RankedTensorType::get(shape, elementType);
    if (v.getType() != type)
      v = ReshapeOp::create(b, op->getLoc(), type, v);
    pieces.push_back(v);
  }
  Location loc = bucket.front()->getLoc();
  if (pieces.size() == 1) {
    auto flat = RankedTensorType::get({total}, elementType);
    Value v = bucket.front()->getOperand(0);
    return v.getType() == flat ? v : ReshapeOp::create(b, loc, flat, v);
  }
  if (!parts)
    return ConcatOp::create(b, loc, RankedTensorType::get({total}, elementType),
                            pieces, /*dim=*/0);
  Value blocks = ConcatOp::create(
      b, loc, RankedTensorType::get({parts, total / parts}, elementType),
      pieces, /*dim=*/1);
  return ReshapeOp::create(b, loc, RankedTensorType::get({total}, elementType),
                           blocks);
}

void PartGradBucketsPass::emitBucket(Block &block,
                                     ArrayRef<Operation *> bucket,
                                     bool gradients) {
  // The last operand produced; the bucket runs right after it.
  Operation *point = nullptr;
  for (Operation *op : bucket)
    if (Operation *def = producer(op->getOperand(0));
        def && producedNoLater(point, def))
      point = def;
  OpBuilder b(&getContext());
  if (point)
    b.setInsertionPointAfter(point);
  else
    b.setInsertionPointToStart(&block);

  // The type the collective runs in: the operands' own, or for gradients
  // `dtype` where that is narrower (f32 gradients reduced in bf16).
  Type elementType = bucketable(bucket.front())->input.getElementType();
  Type reduceType = elementType;
  if (gradients && elementType.isF32() && dtype == "bf16")
    reduceType = b.getBF16Type();
  else if (gradients && elementType.isF32() && dtype == "f16")
    reduceType = b.getF16Type();

  if (bucket.size() == 1 && reduceType == elementType) {
    Operation *op = bucket.front();
    if (point)
      op->moveAfter(point);
    else
      op->moveBefore(&block, block.begin());
    LLVM_DEBUG(llvm::dbgs() << "bucket of one: " << *op << "\n");
    return;
  }

  FailureOr<SetVector<Operation *>> moved = usersToMove(block, bucket, point);
  assert(succeeded(moved) && "bucket checked when formed");

  Operation *first = bucket.front();
  Location loc = first->getLoc();
  int64_t parts = bucketable(first)->parts;
  Value joined = joinOperands(b, bucket, parts);
  int64_t total = cast<RankedTensorType>(joined.getType()).getNumElements();
  int64_t share = total / std::max<int64_t>(1, parts);
  if (reduceType != elementType)
    joined = CastOp::create(b, loc, RankedTensorType::get({total}, reduceType),
                            joined);
  auto joinedType = cast<RankedTensorType>(joined.getType());
  Value reduced;
  if (auto ar = dyn_cast<AllReduceOp>(first))
    reduced = AllReduceOp::create(b, loc, joinedType, joined,
                                  ar.getMeshAttr(), ar.getAxesAttr(),
                                  ar.getKindAttr());
  else {
    auto rs = cast<ReduceScatterOp>(first);
    reduced = ReduceScatterOp::create(
        b, loc, RankedTensorType::get({share}, reduceType), joined,
        rs.getMeshAttr(), rs.getAxesAttr(), b.getI64IntegerAttr(0),
        rs.getKindAttr());
  }
  Operation *collective = reduced.getDefiningOp();
  if (reduceType != elementType)
    reduced = CastOp::create(
        b, loc,
        RankedTensorType::get(
            cast<RankedTensorType>(reduced.getType()).getShape(), elementType),
        reduced);
  std::string origin = "bucket of " + std::to_string(bucket.size()) + " " +
                       first->getName().stripDialect().str() +
                       (bucket.size() == 1 ? "" : "s") + " (part-grad-buckets" +
                       (reduceType != elementType ? ", in " + dtype : "") +
                       "): ";
  for (auto [i, op] : llvm::enumerate(bucket)) {
    auto o = op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
    origin += (i ? "; " : "") +
              (o ? o.getValue().str() : op->getName().stripDialect().str());
  }
  collective->setAttr(PartDialect::getOriginAttrName(),
                      b.getStringAttr(origin));
  // Each result is its run of the reduced vector (of this device's blocks
  // for a reduce_scatter), reshaped back.
  int64_t offset = 0;
  for (Operation *op : bucket) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t n = type.getNumElements();
    Value v =
        SliceOp::create(b, op->getLoc(), RankedTensorType::get({n}, elementType),
                        reduced, b.getDenseI64ArrayAttr({offset}),
                        /*strides=*/DenseI64ArrayAttr());
    if (type.getRank() != 1)
      v = ReshapeOp::create(b, op->getLoc(), type, v);
    offset += n;
    op->getResult(0).replaceAllUsesWith(v);
  }
  // Users of the results that came before the bucket now follow it, in their
  // order.
  Operation *last = b.getInsertionPoint() == block.end()
                        ? &block.back()
                        : &*std::prev(b.getInsertionPoint());
  SmallVector<Operation *> toMove(moved->begin(), moved->end());
  llvm::sort(toMove,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *op : toMove) {
    op->moveAfter(last);
    last = op;
  }
  for (Operation *op : bucket)
    op->erase();
}

void PartGradBucketsPass::sinkUnwaitedSums(Block &block) {
  // The ops a layer's op or a sum reads, directly or through others: the
  // sums among them are backward's own (a tensor-parallel input gradient),
  // and stay where they are.
  llvm::DenseSet<Operation *> waited;
  for (Operation &op : llvm::reverse(block))
    for (Operation *user : op.getUsers()) {
      Operation *u = block.findAncestorOpInBlock(*user);
      if (u && (u->hasAttr(PartDialect::getLayerAttrName()) || isSum(u) ||
                waited.contains(u))) {
        waited.insert(&op);
        break;
      }
    }
  // The other sums (gradients, read by the update or returned), in their
  // order, then what reads them, in its order, at the end.
  SmallVector<Operation *> sums, readers;
  llvm::DenseSet<Operation *> sunk;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    bool reads = llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && sunk.contains(block.findAncestorOpInBlock(*def));
    });
    if (reads)
      readers.push_back(&op);
    else if (isSum(&op) && !waited.contains(&op))
      sums.push_back(&op);
    else
      continue;
    sunk.insert(&op);
  }
  Operation *end = block.getTerminator();
  for (Operation *op : sums)
    op->moveBefore(end);
  for (Operation *op : readers)
    op->moveBefore(end);
  LLVM_DEBUG(llvm::dbgs() << "after backward: " << sums.size() << " sums, "
                          << readers.size() << " readers\n");
}
} // namespace
