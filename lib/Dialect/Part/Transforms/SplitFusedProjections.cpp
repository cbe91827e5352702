//===- SplitFusedProjections.cpp - one projection per fused block ---------===//
//
// A fused projection (GPT-2's c_attn producing [Q | K | V], a fused gate/up
// MLP) multiplies by one weight [in, k * n] and slices the result into k
// blocks of n features. Split by columns, that weight would give a rank
// part of Q and part of K; viewed as [in, k, n] and split on n, each rank
// holds the same features (whole heads) of every block. This pass rewrites
// the parameter to that view, and the matmul into one matmul per block.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "part-split-fused-projections"

namespace partition::part {
#define GEN_PASS_DEF_PARTSPLITFUSEDPROJECTIONSPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// One block of a fused projection: the op that reads features
/// [begin, end) of the projection (a slice, or a gather of consecutive
/// indices, along the first dimension the features span).
struct Block {
  Operation *reader;
  int64_t begin, end;
};

/// A fused projection found in a function: `weight` (and `bias`) are
/// parameters used only here; the matmul's result, plus the bias, and
/// reshaped (its leading dimensions, and its features into [h, d], as
/// Falcon views [Q | K | V] by heads) is read only by `blocks`, which cover
/// its features once, in order.
struct FusedProjection {
  MatmulOp matmul;
  BlockArgument weight;
  BlockArgument bias;  // null without one
  AddOp biasAdd;       // null without one
  ReshapeOp reshape;   // null without one
  SmallVector<Block> blocks;

  /// Whether every block has the same width: the weight is then viewed as
  /// [in, k, n] (see rewrite).
  bool equalBlocks() const {
    return llvm::all_of(blocks, [&](const Block &b) {
      return b.end - b.begin == blocks.front().end - blocks.front().begin;
    });
  }
};

bool isParameter(func::FuncOp function, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != function)
    return false;
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      arg.getArgNumber(), PartDialect::getRoleAttrName());
  return role && role.getValue() == ArgRole::Parameter &&
         !function.getArgAttr(arg.getArgNumber(),
                              PartDialect::getShardingAttrName());
}

int64_t lastDim(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape().back();
}

/// The dimension of `shape` where the `features` of a projection whose
/// leading dimensions hold `rows` elements begin: the products before it
/// and from it on are `rows` and `features` (the last such, so that
/// dimensions of size 1 count as leading).
std::optional<size_t> featureDim(ArrayRef<int64_t> shape, int64_t rows,
                                 int64_t features) {
  std::optional<size_t> found;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t before = 1, after = 1;
    for (size_t i = 0; i < shape.size(); ++i)
      (i < d ? before : after) *= shape[i];
    if (before == rows && after == features)
      found = d;
  }
  return found;
}

/// The features [begin, end) that `user` reads from `v`, whose features
/// begin at dimension `dim`: a slice of that dimension alone, or a gather
/// along it of consecutive constant indices.
std::optional<std::pair<int64_t, int64_t>> readRange(Operation *user, Value v,
                                                     size_t dim) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t inner = 1;
  for (int64_t n : shape.drop_front(dim + 1))
    inner *= n;
  if (auto slice = dyn_cast<SliceOp>(user)) {
    if (slice.getStrides())
      return std::nullopt;
    ArrayRef<int64_t> offsets = slice.getOffsets();
    ArrayRef<int64_t> out = slice.getType().getShape();
    for (size_t d = 0; d < shape.size(); ++d)
      if (d != dim && (offsets[d] != 0 || out[d] != shape[d]))
        return std::nullopt;
    return std::make_pair(offsets[dim] * inner,
                          (offsets[dim] + out[dim]) * inner);
  }
  auto gather = dyn_cast<GatherOp>(user);
  if (!gather || gather.getData() != v || gather.getIndices() == v ||
      gather.getAxis() != uint64_t(dim))
    return std::nullopt;
  auto constant = gather.getIndices().getDefiningOp<ConstantOp>();
  auto indices =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!indices || indices.getType().getRank() != 1 || indices.empty())
    return std::nullopt;
  int64_t first = (*indices.begin()).getSExtValue(), next = first;
  for (APInt index : indices)
    if (index.getSExtValue() != next++)
      return std::nullopt;
  if (first < 0 || next > shape[dim])
    return std::nullopt;
  return std::make_pair(first * inner, next * inner);
}

/// The fused projection whose matmul is `matmul`, if it is one.
std::optional<FusedProjection> match(func::FuncOp function, MatmulOp matmul) {
  FusedProjection p;
  p.matmul = matmul;
  if (matmul.getTransposeA() || !isParameter(function, matmul.getRhs()) ||
      !matmul.getRhs().hasOneUse())
    return std::nullopt;
  p.weight = cast<BlockArgument>(matmul.getRhs());
  int64_t features = lastDim(matmul.getResult());
  Value v = matmul.getResult();
  if (v.hasOneUse())
    if (auto add = dyn_cast<AddOp>(*v.getUsers().begin())) {
      Value other = add.getLhs() == v ? add.getRhs() : add.getLhs();
      auto type = cast<RankedTensorType>(other.getType());
      if (!isParameter(function, other) || !other.hasOneUse() ||
          type.getRank() != 1 || add.getType() != v.getType())
        return std::nullopt;
      p.bias = cast<BlockArgument>(other);
      p.biasAdd = add;
      v = add.getResult();
    }
  ArrayRef<int64_t> result = matmul.getType().getShape();
  int64_t rows = 1;
  for (int64_t n : result.drop_back())
    rows *= n;
  std::optional<size_t> dim = result.size() - 1;
  if (v.hasOneUse())
    if (auto reshape = dyn_cast<ReshapeOp>(*v.getUsers().begin())) {
      dim = featureDim(reshape.getType().getShape(), rows, features);
      if (!dim)
        return std::nullopt;
      p.reshape = reshape;
      v = reshape.getResult();
    }
  // Every use reads a block of consecutive features; together they read
  // each feature once.
  for (Operation *user : v.getUsers()) {
    std::optional<std::pair<int64_t, int64_t>> range =
        readRange(user, v, *dim);
    if (!range || range->first >= range->second)
      return std::nullopt;
    p.blocks.push_back({user, range->first, range->second});
  }
  llvm::sort(p.blocks,
             [](const Block &a, const Block &b) { return a.begin < b.begin; });
  int64_t covered = 0;
  for (const Block &block : p.blocks) {
    if (block.begin != covered)
      return std::nullopt;
    covered = block.end;
  }
  if (p.blocks.size() < 2 || covered != features)
    return std::nullopt;
  return p;
}

/// Views parameter `arg` of shape `stored` as `view` (same elements,
/// row-major): the argument's type changes, and `part.stored_shape` keeps
/// the shape weights files have. A parameter the files already hold in
/// another layout (a transposed Linear weight: its type is the stored
/// tensor permuted) keeps that layout, which the new view reshapes.
void viewParameter(func::FuncOp function, BlockArgument arg,
                   ArrayRef<int64_t> view) {
  auto type = cast<RankedTensorType>(arg.getType());
  unsigned index = arg.getArgNumber();
  if (!function.getArgAttr(index, PartDialect::getStoredShapeAttrName())) {
    FunctionAttrEditor attrs(function);
    attrs.setArg(index, PartDialect::getStoredShapeAttrName(),
                 DenseI64ArrayAttr::get(function.getContext(),
                                        type.getShape()));
  }
  arg.setType(type.clone(view));
}

/// Replaces the fused projection by one projection per block. Blocks of
/// one width read a view of the weight, [in, k, n] ([k, n, in] transposed),
/// which tensor parallelism splits on n: every rank holds the same features
/// of each block. Blocks of different widths (Phi-3's [Q | K | V] with fewer
/// key/value heads) have no such view: each reads its own slice of the
/// weight, and part-tensor-parallel splits the slices.
void rewrite(func::FuncOp function, FusedProjection &p) {
  MatmulOp matmul = p.matmul;
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  bool equal = p.equalBlocks();
  int64_t k = p.blocks.size(), n = p.blocks.front().end - p.blocks.front().begin;
  bool transposed = matmul.getTransposeB();
  auto weightType = cast<RankedTensorType>(p.weight.getType());
  // [in, k n] -> [in, k, n]; transposed, [k n, in] -> [k, n, in].
  int64_t in = weightType.getShape()[transposed ? 1 : 0];
  SmallVector<int64_t> view = transposed ? SmallVector<int64_t>{k, n, in}
                                         : SmallVector<int64_t>{in, k, n};
  if (equal) {
    viewParameter(function, p.weight, view);
    if (p.bias)
      viewParameter(function, p.bias, {k, n});
  }
  Type f = weightType.getElementType();
  auto copyLayer = [&](Operation *op) {
    StringRef name = PartDialect::getLayerAttrName();
    if (Attribute layer = matmul->getAttr(name))
      op->setAttr(name, layer);
    return op->getResult(0);
  };
  auto slice = [&](Value of, ArrayRef<int64_t> offsets,
                   ArrayRef<int64_t> shape) {
    return copyLayer(SliceOp::create(b, loc, RankedTensorType::get(shape, f),
                                     of, b.getDenseI64ArrayAttr(offsets),
                                     DenseI64ArrayAttr()));
  };
  auto reshape = [&](Value of, ArrayRef<int64_t> shape) {
    return copyLayer(
        ReshapeOp::create(b, loc, RankedTensorType::get(shape, f), of));
  };
  for (const Block &block : p.blocks) {
    int64_t begin = block.begin, width = block.end - block.begin;
    SmallVector<int64_t> flat = transposed ? SmallVector<int64_t>{width, in}
                                           : SmallVector<int64_t>{in, width};
    Value w;
    if (equal) {
      SmallVector<int64_t> one(view), offsets(3, 0);
      one[transposed ? 0 : 1] = 1;
      offsets[transposed ? 0 : 1] = begin / n;
      w = reshape(slice(p.weight, offsets, one), flat);
    } else {
      w = slice(p.weight,
                transposed ? SmallVector<int64_t>{begin, 0}
                           : SmallVector<int64_t>{0, begin},
                flat);
    }
    Value y = copyLayer(
        MatmulOp::create(b, loc, matmul.getLhs(), w, false, transposed));
    if (p.bias) {
      Value bias = equal
                       ? reshape(slice(p.bias, {begin / n, 0}, {1, n}), {n})
                       : slice(p.bias, {begin}, {width});
      bool biasFirst = p.biasAdd.getLhs() == p.bias;
      y = copyLayer(
          AddOp::create(b, loc, biasFirst ? bias : y, biasFirst ? y : bias));
    }
    auto type = cast<RankedTensorType>(block.reader->getResult(0).getType());
    if (y.getType() != type)
      y = reshape(y, type.getShape());
    block.reader->getResult(0).replaceAllUsesWith(y);
  }
  for (const Block &block : p.blocks) {
    Operation *indices = nullptr;
    if (auto gather = dyn_cast<GatherOp>(block.reader))
      indices = gather.getIndices().getDefiningOp();
    block.reader->erase();
    if (indices && indices->use_empty())
      indices->erase();
  }
  if (p.reshape)
    p.reshape.erase();
  if (p.biasAdd)
    p.biasAdd.erase();
  matmul.erase();
}

struct PartSplitFusedProjectionsPass
    : public partition::part::impl::PartSplitFusedProjectionsPassBase<
          PartSplitFusedProjectionsPass> {
  using PartSplitFusedProjectionsPassBase::PartSplitFusedProjectionsPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration())
        continue;
      SmallVector<FusedProjection> found;
      function.walk([&](MatmulOp matmul) {
        if (std::optional<FusedProjection> p = match(function, matmul))
          found.push_back(std::move(*p));
      });
      for (FusedProjection &p : found)
        rewrite(function, p);
      function.setType(FunctionType::get(
          function.getContext(), function.front().getArgumentTypes(),
          function.getResultTypes()));
    }
  }
};
} // namespace
