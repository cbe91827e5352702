//===- GradBuckets.cpp - bucket gradient all-reduces over dp --------------===//
//
// On a per-device (`part.spmd`) function, groups the `part.all_reduce ... sum`
// ops over the same mesh axes and element type into buckets of at most
// `bytes`, in the order their operands are produced, and runs each bucket as
// one all_reduce of the flattened, concatenated operands, placed right after
// the last of them is produced.
//
//===----------------------------------------------------------------------===//

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
usersToMove(Block &block, ArrayRef<AllReduceOp> bucket, Operation *point) {
  SetVector<Operation *> moved;
  SmallVector<Value> work;
  for (AllReduceOp op : bucket)
    work.push_back(op.getResult());
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
  for (AllReduceOp op : bucket)
    if (Operation *def = producer(op.getInput()); def && moved.contains(def))
      return failure();
  return moved;
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
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() || !getSpmdMesh(function))
        continue;
      runOnFunction(function);
    }
  }

  void runOnFunction(func::FuncOp function);
  void emitBucket(Block &block, ArrayRef<AllReduceOp> bucket);
};

void PartGradBucketsPass::runOnFunction(func::FuncOp function) {
  Block &block = function.getBody().front();
  // Candidates grouped by (mesh, axes, element type).
  llvm::MapVector<std::tuple<Attribute, Attribute, Type>,
                  SmallVector<AllReduceOp>>
      groups;
  for (auto op : block.getOps<AllReduceOp>()) {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (op.getKind() != ReductionKind::Sum || !type || !type.hasStaticShape())
      continue;
    groups[{op.getMeshAttr(), op.getAxesAttr(), type.getElementType()}]
        .push_back(op);
  }
  for (auto &[key, ops] : groups) {
    // In the order their operands are produced (backward: reverse layers).
    llvm::stable_sort(ops, [](AllReduceOp a, AllReduceOp b) {
      Operation *x = producer(a.getInput()), *y = producer(b.getInput());
      return x != y && producedNoLater(x, y);
    });
    SmallVector<AllReduceOp> bucket;
    int64_t bucketBytes = 0;
    for (AllReduceOp op : ops) {
      int64_t size = tensorBytes(cast<RankedTensorType>(op.getType()));
      bool fits = bucket.empty() || bucketBytes + size <= int64_t(bytes);
      if (fits && !bucket.empty()) {
        // Joining must not make the bucket wait for its own results.
        SmallVector<AllReduceOp> joined(bucket);
        joined.push_back(op);
        fits = succeeded(usersToMove(block, joined, producer(op.getInput())));
      }
      if (!fits) {
        emitBucket(block, bucket);
        bucket.clear();
        bucketBytes = 0;
      }
      bucket.push_back(op);
      bucketBytes += size;
    }
    if (!bucket.empty())
      emitBucket(block, bucket);
  }
}

void PartGradBucketsPass::emitBucket(Block &block,
                                     ArrayRef<AllReduceOp> bucket) {
  // The last operand produced; the bucket runs right after it.
  Operation *point = nullptr;
  for (AllReduceOp op : bucket)
    if (Operation *def = producer(op.getInput());
        def && producedNoLater(point, def))
      point = def;
  OpBuilder b(&getContext());
  if (point)
    b.setInsertionPointAfter(point);
  else
    b.setInsertionPointToStart(&block);

  if (bucket.size() == 1) {
    AllReduceOp op = bucket.front();
    if (point)
      op->moveAfter(point);
    else
      op->moveBefore(&block, block.begin());
    LLVM_DEBUG(llvm::dbgs() << "bucket of one: " << op << "\n");
    return;
  }

  FailureOr<SetVector<Operation *>> moved = usersToMove(block, bucket, point);
  assert(succeeded(moved) && "bucket checked when formed");

  AllReduceOp first = bucket.front();
  Location loc = first.getLoc();
  Type elementType = first.getType().getElementType();
  SmallVector<Value> flat;
  SmallVector<Attribute> origins;
  int64_t total = 0;
  for (AllReduceOp op : bucket) {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t n = type.getNumElements();
    total += n;
    Value v = op.getInput();
    if (type.getRank() != 1)
      v = ReshapeOp::create(b, op.getLoc(),
                            RankedTensorType::get({n}, elementType), v);
    flat.push_back(v);
    auto origin =
        op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
    origins.push_back(origin ? origin : b.getStringAttr("all_reduce"));
  }
  auto flatType = RankedTensorType::get({total}, elementType);
  Value joined = ConcatOp::create(b, loc, flatType, flat, /*dim=*/0);
  auto reduced =
      AllReduceOp::create(b, loc, flatType, joined, first.getMeshAttr(),
                          first.getAxesAttr(), first.getKindAttr());
  std::string origin = "bucket of " + std::to_string(bucket.size()) +
                       " all_reduces (part-grad-buckets): ";
  for (auto [i, o] : llvm::enumerate(origins))
    origin += (i ? "; " : "") + cast<StringAttr>(o).getValue().str();
  reduced->setAttr(PartDialect::getOriginAttrName(), b.getStringAttr(origin));
  int64_t offset = 0;
  for (AllReduceOp op : bucket) {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t n = type.getNumElements();
    Value v =
        SliceOp::create(b, op.getLoc(), RankedTensorType::get({n}, elementType),
                        reduced, b.getDenseI64ArrayAttr({offset}),
                        /*strides=*/DenseI64ArrayAttr());
    if (type.getRank() != 1)
      v = ReshapeOp::create(b, op.getLoc(), type, v);
    offset += n;
    op.getResult().replaceAllUsesWith(v);
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
  for (AllReduceOp op : bucket)
    op.erase();
}
} // namespace
