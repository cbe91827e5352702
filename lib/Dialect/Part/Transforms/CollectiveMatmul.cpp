//===- CollectiveMatmul.cpp - tensor-parallel collectives in chunks -------===//
//
// On a per-device (`part.spmd`) function, splits each matmul that feeds a
// sum over the tensor-parallel axis, or reads a gather over it, into
// `chunks` matmuls of the rows, each with its own collective, so that one
// chunk's collective runs on the communication lane while the next chunk
// computes: Megatron-Core's tensor-parallel communication overlap
// (`--tp-comm-overlap`, its split-pipelined form) and XLA's collective
// matmul. See docs/design/2026-12-07-collective-matmul.md.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace partition::part {
#define GEN_PASS_DEF_PARTCOLLECTIVEMATMULPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// `type` with dimension `d` of size `size`.
RankedTensorType withDim(RankedTensorType type, int64_t d, int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[d] = size;
  return type.clone(shape);
}

/// `type` with dimension `d` replaced by `sizes`.
RankedTensorType splitDim(RankedTensorType type, int64_t d,
                          ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> shape(type.getShape().take_front(d));
  shape.append(sizes.begin(), sizes.end());
  shape.append(type.getShape().begin() + d + 1, type.getShape().end());
  return type.clone(shape);
}

/// Builds the chunks and their reassembly. Every op it makes carries the
/// attributes in `attrs` (the layer of the op it splits).
struct Chunker {
  OpBuilder &b;
  Location loc;
  int64_t chunks;
  ArrayRef<NamedAttribute> attrs;

  template <typename Op, typename... Args>
  Value make(Type type, Args &&...args) {
    auto op = Op::create(b, loc, type, std::forward<Args>(args)...);
    for (const NamedAttribute &a : attrs)
      op->setAttr(a.getName(), a.getValue());
    return op->getResult(0);
  }

  /// Rows [i r, (i + 1) r) of `x` along `d` (r = size / chunks).
  Value contiguous(Value x, int64_t d, int64_t i) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t r = type.getDimSize(d) / chunks;
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[d] = i * r;
    return make<SliceOp>(withDim(type, d, r), x,
                         b.getDenseI64ArrayAttr(offsets), DenseI64ArrayAttr());
  }

  /// Chunk i of `x` whose dimension `d` is laid out [parts, chunks, r]:
  /// rows (j, i, t) for every j and t, as [parts r].
  Value strided(Value x, int64_t d, int64_t parts, int64_t i) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t r = type.getDimSize(d) / (parts * chunks);
    Value v = make<ReshapeOp>(splitDim(type, d, {parts, chunks, r}), x);
    SmallVector<int64_t> offsets(type.getRank() + 2, 0);
    offsets[d + 1] = i;
    v = make<SliceOp>(splitDim(type, d, {parts, 1, r}), v,
                      b.getDenseI64ArrayAttr(offsets), DenseI64ArrayAttr());
    return make<ReshapeOp>(withDim(type, d, parts * r), v);
  }

  /// The inverse of `strided`: chunk i's [parts r] rows placed at (j, i, t).
  Value interleave(ArrayRef<Value> pieces, int64_t d, int64_t parts) {
    auto type = cast<RankedTensorType>(pieces.front().getType());
    int64_t r = type.getDimSize(d) / parts;
    SmallVector<Value> split;
    for (Value p : pieces)
      split.push_back(make<ReshapeOp>(splitDim(type, d, {parts, 1, r}), p));
    Value joined = make<ConcatOp>(splitDim(type, d, {parts, chunks, r}), split,
                                  b.getI64IntegerAttr(d + 1));
    return make<ReshapeOp>(withDim(type, d, parts * chunks * r), joined);
  }

  /// `matmul` on `lhs` (a chunk of its rows).
  Value matmul(MatmulOp op, Value lhs) {
    auto resultType = cast<RankedTensorType>(op.getType());
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    SmallVector<int64_t> shape(lhsType.getShape().drop_back());
    shape.push_back(resultType.getShape().back());
    Operation *copy = b.clone(*op);
    copy->setOperand(0, lhs);
    copy->getResult(0).setType(resultType.clone(shape));
    return copy->getResult(0);
  }
};

/// True if `op`'s axes include `axis` (with GQA's copies of kv heads the
/// tensor-parallel group is `axis` and its replica axis together).
bool overAxis(Operation *op, StringRef axis) {
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  return axes && llvm::any_of(axes, [&](Attribute a) {
           auto name = dyn_cast<StringAttr>(a);
           return name && name.getValue() == axis;
         });
}

/// The first row dimension of `type` (not the contracted last one) that
/// `parts * chunks` divides, or -1.
int64_t rowDim(RankedTensorType type, int64_t parts, int64_t chunks) {
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    if (type.getDimSize(d) >= parts * chunks &&
        type.getDimSize(d) % (parts * chunks) == 0)
      return d;
  return -1;
}

/// A matmul that can be split by its lhs rows: statically shaped, lhs not
/// transposed.
bool splittable(MatmulOp op) {
  auto lhs = dyn_cast<RankedTensorType>(op.getLhs().getType());
  return op && !op.getTransposeA() && lhs && lhs.hasStaticShape() &&
         lhs.getRank() >= 2;
}

struct PartCollectiveMatmulPass
    : public partition::part::impl::PartCollectiveMatmulPassBase<
          PartCollectiveMatmulPass> {
  using PartCollectiveMatmulPassBase::PartCollectiveMatmulPassBase;

  void runOnOperation() override {
    if (chunks < 2) {
      getOperation().emitError()
          << "part-collective-matmul: chunks must be at least 2, got "
          << int64_t(chunks);
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() || !getSpmdMesh(function))
        continue;
      Block &block = function.getBody().front();
      for (auto gather : llvm::make_early_inc_range(block.getOps<AllGatherOp>()))
        splitGather(gather);
      for (Operation &op : llvm::make_early_inc_range(block))
        if (isa<AllReduceOp, ReduceScatterOp>(op))
          splitSum(&op);
    }
  }

  void splitSum(Operation *sum);
  void splitGather(AllGatherOp gather);
};

/// matmul -> all_reduce (any row dimension) or reduce_scatter (over a row
/// dimension): chunk i's rows multiplied and summed while chunk i + 1's
/// multiply, the sums joined.
void PartCollectiveMatmulPass::splitSum(Operation *sum) {
  auto mm = sum->getOperand(0).getDefiningOp<MatmulOp>();
  if (!mm || !splittable(mm) || !mm->hasOneUse() || !overAxis(sum, axis))
    return;
  auto lhsType = cast<RankedTensorType>(mm.getLhs().getType());
  int64_t d, parts = 1;
  if (auto ar = dyn_cast<AllReduceOp>(sum)) {
    if (ar.getKind() != ReductionKind::Sum)
      return;
    d = rowDim(lhsType, 1, chunks);
  } else {
    auto rs = cast<ReduceScatterOp>(sum);
    d = rs.getDim();
    auto in = cast<RankedTensorType>(rs.getInput().getType());
    auto out = cast<RankedTensorType>(rs.getType());
    if (rs.getKind() != ReductionKind::Sum || d + 1 >= in.getRank() ||
        !out.hasStaticShape() || out.getDimSize(d) == 0)
      return;
    parts = in.getDimSize(d) / out.getDimSize(d);
    if (lhsType.getDimSize(d) % (parts * chunks) != 0)
      return;
  }
  if (d < 0)
    return;
  OpBuilder b(mm);
  SmallVector<NamedAttribute> attrs;
  if (Attribute layer = mm->getAttr(PartDialect::getLayerAttrName()))
    attrs.push_back(b.getNamedAttr(PartDialect::getLayerAttrName(), layer));
  Chunker c{b, sum->getLoc(), chunks, attrs};
  SmallVector<Value> sums;
  for (int64_t i = 0; i < chunks; ++i) {
    Value x = parts > 1 ? c.strided(mm.getLhs(), d, parts, i)
                        : c.contiguous(mm.getLhs(), d, i);
    Value y = c.matmul(mm, x);
    Operation *piece = b.clone(*sum);
    piece->setOperand(0, y);
    auto type = cast<RankedTensorType>(sum->getResult(0).getType());
    piece->getResult(0).setType(
        withDim(type, d, type.getDimSize(d) / chunks));
    sums.push_back(piece->getResult(0));
  }
  Value joined = c.make<ConcatOp>(sum->getResult(0).getType(), sums,
                                  b.getI64IntegerAttr(d));
  sum->getResult(0).replaceAllUsesWith(joined);
  sum->erase();
  mm->erase();
}

/// all_gather -> matmuls of the gathered rows: chunk i + 1 gathered while
/// chunk i multiplies; each product, and the gathered value for any other
/// reader, reassembled in row order.
void PartCollectiveMatmulPass::splitGather(AllGatherOp gather) {
  if (!overAxis(gather, axis) || isa<BlockArgument>(gather.getInput()))
    return;
  auto in = dyn_cast<RankedTensorType>(gather.getInput().getType());
  auto out = cast<RankedTensorType>(gather.getType());
  int64_t d = gather.getDim();
  if (!in || !in.hasStaticShape() || d + 1 >= in.getRank() ||
      in.getDimSize(d) < chunks || in.getDimSize(d) % chunks != 0)
    return;
  int64_t parts = out.getDimSize(d) / in.getDimSize(d);
  // Matmuls reading the gathered rows whose weight is there already.
  SmallVector<MatmulOp> users;
  bool others = false;
  for (Operation *user : gather->getUsers()) {
    auto mm = dyn_cast<MatmulOp>(user);
    Value rhs = mm ? mm.getRhs() : Value();
    bool ready = rhs && (isa<BlockArgument>(rhs)
                             ? rhs.getParentBlock() == gather->getBlock()
                             : rhs.getDefiningOp()->getBlock() ==
                                       gather->getBlock() &&
                                   rhs.getDefiningOp()->isBeforeInBlock(gather));
    if (mm && splittable(mm) && mm.getLhs() == gather.getResult() &&
        mm.getRhs() != gather.getResult() && ready &&
        mm->getBlock() == gather->getBlock())
      users.push_back(mm);
    else
      others = true;
  }
  if (users.empty())
    return;
  llvm::sort(users, [](MatmulOp a, MatmulOp b) {
    return a->isBeforeInBlock(b);
  });
  OpBuilder b(gather);
  SmallVector<NamedAttribute> attrs;
  if (Attribute layer = gather->getAttr(PartDialect::getLayerAttrName()))
    attrs.push_back(b.getNamedAttr(PartDialect::getLayerAttrName(), layer));
  Chunker c{b, gather.getLoc(), chunks, attrs};
  // Gather i + 1 is issued before chunk i's products.
  SmallVector<Value> gathered;
  auto gatherChunk = [&](int64_t i) {
    Value rows = c.contiguous(gather.getInput(), d, i);
    Operation *piece = b.clone(*gather);
    piece->setOperand(0, rows);
    piece->getResult(0).setType(withDim(out, d, parts * in.getDimSize(d) /
                                                    chunks));
    gathered.push_back(piece->getResult(0));
  };
  gatherChunk(0);
  SmallVector<SmallVector<Value>> products(users.size());
  for (int64_t i = 0; i < chunks; ++i) {
    if (i + 1 < chunks)
      gatherChunk(i + 1);
    for (auto [k, mm] : llvm::enumerate(users))
      products[k].push_back(c.matmul(mm, gathered[i]));
  }
  for (auto [k, mm] : llvm::enumerate(users)) {
    mm.getResult().replaceAllUsesWith(c.interleave(products[k], d, parts));
    mm->erase();
  }
  if (others)
    gather.getResult().replaceAllUsesWith(c.interleave(gathered, d, parts));
  gather->erase();
}

} // namespace
