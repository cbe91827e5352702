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

/// A fused projection found in a function: `weight` (and `bias`) are
/// parameters used only here; `blocks[i]` slices features [i n, (i + 1) n)
/// of `sliced`, which is the matmul's result, plus the bias, and reshaped
/// over its leading dimensions only.
struct FusedProjection {
  MatmulOp matmul;
  BlockArgument weight;
  BlockArgument bias;  // null without one
  AddOp biasAdd;       // null without one
  ReshapeOp reshape;   // null without one
  SmallVector<SliceOp> blocks;
  int64_t width = 0;   // n
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
  if (v.hasOneUse())
    if (auto reshape = dyn_cast<ReshapeOp>(*v.getUsers().begin())) {
      if (lastDim(reshape.getResult()) != features)
        return std::nullopt;
      p.reshape = reshape;
      v = reshape.getResult();
    }
  // Every use is a slice of the last dimension alone, all of one width, at
  // 0, n, 2 n, ...: each block once.
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<SliceOp> byOffset;
  for (Operation *user : v.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice || slice.getStrides())
      return std::nullopt;
    ArrayRef<int64_t> offsets = slice.getOffsets();
    ArrayRef<int64_t> shape = slice.getType().getShape();
    if (!llvm::all_of(offsets.drop_back(), [](int64_t o) { return o == 0; }) ||
        shape.drop_back() != type.getShape().drop_back())
      return std::nullopt;
    int64_t width = shape.back();
    if (p.width && width != p.width)
      return std::nullopt;
    p.width = width;
    if (width == 0 || offsets.back() % width)
      return std::nullopt;
    size_t index = offsets.back() / width;
    if (byOffset.size() <= index)
      byOffset.resize(index + 1);
    if (byOffset[index])
      return std::nullopt;
    byOffset[index] = slice;
  }
  if (byOffset.size() < 2 || int64_t(byOffset.size()) * p.width != features ||
      llvm::any_of(byOffset, [](SliceOp s) { return !s; }))
    return std::nullopt;
  p.blocks = std::move(byOffset);
  return p;
}

/// Views parameter `arg` of shape `stored` as `view` (same elements,
/// row-major): the argument's type changes, and `part.stored_shape` keeps
/// the shape weights files and checkpoints have.
void viewParameter(func::FuncOp function, BlockArgument arg,
                   ArrayRef<int64_t> view) {
  auto type = cast<RankedTensorType>(arg.getType());
  FunctionAttrEditor attrs(function);
  attrs.setArg(arg.getArgNumber(), PartDialect::getStoredShapeAttrName(),
               DenseI64ArrayAttr::get(function.getContext(), type.getShape()));
  arg.setType(type.clone(view));
}

void rewrite(func::FuncOp function, FusedProjection &p) {
  MatmulOp matmul = p.matmul;
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  int64_t k = p.blocks.size(), n = p.width;
  bool transposed = matmul.getTransposeB();
  auto weightType = cast<RankedTensorType>(p.weight.getType());
  // [in, k n] -> [in, k, n]; transposed, [k n, in] -> [k, n, in].
  int64_t in = weightType.getShape()[transposed ? 1 : 0];
  SmallVector<int64_t> view = transposed ? SmallVector<int64_t>{k, n, in}
                                         : SmallVector<int64_t>{in, k, n};
  viewParameter(function, p.weight, view);
  if (p.bias)
    viewParameter(function, p.bias, {k, n});
  Type f = weightType.getElementType();
  auto copyLayer = [&](Operation *op) {
    StringRef name = PartDialect::getLayerAttrName();
    if (Attribute layer = matmul->getAttr(name))
      op->setAttr(name, layer);
    return op;
  };
  for (auto [i, slice] : llvm::enumerate(p.blocks)) {
    int64_t block = int64_t(i);
    SmallVector<int64_t> one(view), offsets(3, 0);
    one[transposed ? 0 : 1] = 1;
    offsets[transposed ? 0 : 1] = block;
    auto w = copyLayer(SliceOp::create(b, loc, RankedTensorType::get(one, f),
                                       p.weight,
                                       b.getDenseI64ArrayAttr(offsets),
                                       DenseI64ArrayAttr()));
    SmallVector<int64_t> flat = transposed ? SmallVector<int64_t>{n, in}
                                           : SmallVector<int64_t>{in, n};
    auto wi = copyLayer(ReshapeOp::create(b, loc, RankedTensorType::get(flat, f),
                                          w->getResult(0)));
    Value y = copyLayer(MatmulOp::create(b, loc, matmul.getLhs(),
                                         wi->getResult(0), false, transposed))
                  ->getResult(0);
    if (p.bias) {
      auto bs = copyLayer(SliceOp::create(
          b, loc, RankedTensorType::get({1, n}, f), p.bias,
          b.getDenseI64ArrayAttr({block, 0}), DenseI64ArrayAttr()));
      auto bi = copyLayer(ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, f), bs->getResult(0)));
      bool biasFirst = p.biasAdd.getLhs() == p.bias;
      y = copyLayer(AddOp::create(b, loc, biasFirst ? bi->getResult(0) : y,
                                  biasFirst ? y : bi->getResult(0)))
              ->getResult(0);
    }
    if (p.reshape)
      y = copyLayer(ReshapeOp::create(b, loc, slice.getType(), y))
              ->getResult(0);
    slice.getResult().replaceAllUsesWith(y);
  }
  for (SliceOp slice : p.blocks)
    slice.erase();
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
