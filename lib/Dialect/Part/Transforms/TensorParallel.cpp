//===- TensorParallel.cpp - Megatron column/row splits --------------------===//
//
// A column-parallel linear layer followed, through ops a split of its output
// features passes through unchanged, by a row-parallel one: the pair needs
// one all-reduce of the second's partial sums and nothing in between.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/Analysis/ShardingProjection.h"
#include "partition/Dialect/Part/IR/FunctionAttrs.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Padding.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

#define DEBUG_TYPE "part-tensor-parallel"

namespace partition::part {
#define GEN_PASS_DEF_PARTTENSORPARALLELPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// The function argument `v` is, when it is a parameter.
std::optional<unsigned> parameterIndex(func::FuncOp function, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != function)
    return std::nullopt;
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      arg.getArgNumber(), PartDialect::getRoleAttrName());
  if (!role || role.getValue() != ArgRole::Parameter)
    return std::nullopt;
  return arg.getArgNumber();
}

/// Whether the loss reads `v` as its classes: `v` (through reshapes and
/// casts that keep its last dimension) is a softmax_cross_entropy's logits.
bool readAsLossClasses(Value v) {
  SmallVector<Value> work = {v};
  int64_t classes = cast<RankedTensorType>(v.getType()).getShape().back();
  while (!work.empty()) {
    Value x = work.pop_back_val();
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (isa<SoftmaxCrossEntropyOp>(user) && use.getOperandNumber() == 0)
        return true;
      if (!isa<ReshapeOp, CastOp>(user))
        continue;
      auto type = dyn_cast<RankedTensorType>(user->getResult(0).getType());
      if (type && type.getRank() && type.getShape().back() == classes)
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// When `v` is one block of a parameter (a slice of one index along a
/// dimension, then a reshape that drops it: a projection of a fused weight
/// after part-split-fused-projections), the parameter and that dimension.
std::optional<std::pair<unsigned, int64_t>>
parameterBlock(func::FuncOp function, Value v) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  auto slice = reshape ? reshape.getInput().getDefiningOp<SliceOp>() : SliceOp();
  if (!slice || slice.getStrides())
    return std::nullopt;
  std::optional<unsigned> index = parameterIndex(function, slice.getInput());
  ArrayRef<int64_t> in = slice.getType().getShape(),
                    out = reshape.getType().getShape();
  if (!index || in.size() != out.size() + 1)
    return std::nullopt;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 1 && in.take_front(d) == out.take_front(d) &&
        in.drop_front(d + 1) == out.drop_front(d))
      return std::make_pair(*index, int64_t(d));
  return std::nullopt;
}

/// When the weight `matmul` multiplies by is a slice of a parameter's
/// output features (a block of a fused projection whose blocks differ in
/// width, after part-split-fused-projections), the parameter.
std::optional<unsigned> parameterSlice(func::FuncOp function, MatmulOp matmul) {
  auto slice = matmul.getRhs().getDefiningOp<SliceOp>();
  if (!slice || slice.getStrides() || slice.getType().getRank() != 2)
    return std::nullopt;
  std::optional<unsigned> index = parameterIndex(function, slice.getInput());
  int64_t in = matmul.getTransposeB() ? 1 : 0;
  if (!index || slice.getOffsets()[in] != 0 ||
      slice.getType().getDimSize(in) != slice.getInput().getType().getDimSize(in))
    return std::nullopt;
  return index;
}

/// The layout of `user`'s result when its operand `operand` has `layout`
/// (an axis on its features) and nothing else is split: the split passes
/// through the op when the result is split by it too and is no pending sum.
/// None when it does not, or the op has no sharding rule or several results.
std::optional<Layout> passSplit(Operation *user, unsigned operand,
                                const Layout &layout,
                                function_ref<int64_t(StringAttr)> axisSize) {
  auto ruled = dyn_cast<ShardingRuleOpInterface>(user);
  if (!ruled || user->getNumResults() != 1)
    return std::nullopt;
  ShardingRule rule = ruled.getShardingRule();
  ValueProjection projection = projectOntoFactors(
      rule, rule.getOperandMappings()[operand], layout, axisSize);
  if (projection.hasLeftover() ||
      dropStridedSplits(rule, projection.factorAxes, axisSize))
    return std::nullopt;
  Layout result = layoutFromFactors(rule, rule.getResultMappings()[0],
                                    projection.factorAxes, /*isResult=*/true);
  if (!result.unreduced.empty() || result.numAxes() != layout.numAxes())
    return std::nullopt;
  return result;
}

/// The name of argument `index` of `function` (its part.name, or
/// "argument N").
std::string argumentName(func::FuncOp function, unsigned index) {
  if (auto name = function.getArgAttrOfType<StringAttr>(
          index, PartDialect::getNameAttrName()))
    return "'" + name.getValue().str() + "'";
  return "argument " + std::to_string(index);
}

/// Why the queries `query` of an attention carry no split from a
/// column-parallel projection: what computes them, followed back through
/// the ops between (reshapes, transposes, rotary embeddings, scalings).
std::string whyWhole(func::FuncOp function, Value query) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Value v = query;
  for (int step = 0; step < 64; ++step) {
    Operation *def = v.getDefiningOp();
    if (!def) {
      os << "its queries are " << argumentName(function,
                                               cast<BlockArgument>(v).getArgNumber())
         << " of @" << function.getName() << ", not a projection";
      return text;
    }
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      Value w = matmul.getRhs();
      if (parameterIndex(function, w) || parameterBlock(function, w) ||
          parameterSlice(function, matmul))
        os << "the query projection at " << matmul.getLoc()
           << " reaches no row-parallel layer (a matmul by a parameter "
              "contracting the heads' features) through ops that keep its "
              "features split";
      else
        os << "the query projection at " << matmul.getLoc()
           << " multiplies by a value that is not a parameter ("
           << (w.getDefiningOp() ? w.getDefiningOp()->getName().getStringRef()
                                 : StringRef("an argument"))
           << ")";
      return text;
    }
    if (auto slice = dyn_cast<SliceOp>(def)) {
      // Features of a projection read whole: a fused projection
      // part-split-fused-projections did not split.
      Value in = slice.getInput();
      for (int hop = 0; hop < 2 && in.getDefiningOp<ReshapeOp>(); ++hop)
        in = in.getDefiningOp<ReshapeOp>().getInput();
      if (auto add = in.getDefiningOp<AddOp>())
        in = parameterIndex(function, add.getRhs()) ? add.getLhs()
                                                    : add.getRhs();
      if (auto fused = in.getDefiningOp<MatmulOp>()) {
        auto out = cast<RankedTensorType>(slice.getInput().getType());
        os << "its queries are a slice (" << slice.getType() << " of " << out
           << ") of the fused projection at " << fused.getLoc()
           << ", which stays one projection: its result or weight is read "
              "other than as blocks covering its features once";
        return text;
      }
    }
    // Through the op's first operand computed by another op (a bias or
    // scale may come first).
    Value next;
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()) &&
          !operand.getDefiningOp<ConstantOp>() &&
          !parameterIndex(function, operand)) {
        next = operand;
        break;
      }
    if (!next) {
      os << "its queries are computed at " << def->getLoc() << " by "
         << def->getName() << " from parameters and constants, not by a "
         << "projection";
      return text;
    }
    v = next;
  }
  os << "its queries are not computed by a projection within 64 ops";
  return text;
}

/// When `softmax` normalises attention scores left decomposed (part-raise
/// did not rebuild a part.attention): the product of queries and keys it
/// reads, through the scaling, masking and casts between -- a matmul or
/// batch_matmul of two values computed at run time, neither a parameter nor
/// a constant (a router's softmax over a matmul by its weight is not
/// attention). Null otherwise.
Operation *decomposedScores(func::FuncOp function, SoftmaxOp softmax) {
  auto computed = [&](Value v) {
    return isa<RankedTensorType>(v.getType()) &&
           !v.getDefiningOp<ConstantOp>() && !parameterIndex(function, v);
  };
  Value v = softmax.getInput();
  for (int step = 0; step < 8; ++step) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return nullptr;
    if (isa<MatmulOp, BatchMatmulOp>(def))
      return llvm::all_of(def->getOperands(), computed) ? def : nullptr;
    auto operands = llvm::make_filter_range(def->getOperands(), computed);
    if (operands.empty())
      return nullptr;
    v = *operands.begin();
  }
  return nullptr;
}

struct PartTensorParallelPass
    : public partition::part::impl::PartTensorParallelPassBase<
          PartTensorParallelPass> {
  using PartTensorParallelPassBase::PartTensorParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<int64_t> size =
        lookupMeshAxisSize(module, meshName, axis, "split the layers over");
    if (failed(size))
      return signalPassFailure();
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isDeclaration() && !getSpmdMesh(function) &&
          failed(annotate(function, *size)))
        return signalPassFailure();
  }

  /// Sequence parallelism: after the residual add that takes each
  /// row-parallel layer's output, pin the residual stream [B, S, E] to a
  /// split of S over the axis (and of B as the batch of the inputs is split).
  /// With a context axis (the sequence split over it already), S is split
  /// over both, the context axis major: each device's tokens split again.
  LogicalResult splitSequence(func::FuncOp function,
                              ArrayRef<MatmulOp> rowParallel, int64_t size,
                              ArrayRef<StringRef> axes) {
    MLIRContext *ctx = function.getContext();
    int64_t contextSize = 1;
    if (!contextAxis.empty()) {
      FailureOr<int64_t> c =
          lookupMeshAxisSize(function->getParentOfType<ModuleOp>(), meshName,
                             contextAxis, "split the sequence over");
      if (failed(c))
        return failure();
      contextSize = *c;
    }
    // The batch split the data-parallel annotation gave the inputs.
    SmallVector<StringRef> batchAxes;
    for (unsigned i = 0; i < function.getNumArguments() && batchAxes.empty();
         ++i) {
      auto role = function.getArgAttrOfType<ArgRoleAttr>(
          i, PartDialect::getRoleAttrName());
      auto s = function.getArgAttrOfType<ShardingAttr>(
          i, PartDialect::getShardingAttrName());
      if (role && role.getValue() == ArgRole::Input && s && s.getRank() > 0)
        for (StringAttr axis : s.getDimAxes(0))
          batchAxes.push_back(axis.getValue());
    }
    llvm::SmallPtrSet<Operation *, 8> done;
    for (MatmulOp layer : rowParallel) {
      // Through an optional bias add to the residual add.
      Value v = layer.getResult();
      Operation *residual = nullptr;
      for (int step = 0; step < 2 && !residual && v.hasOneUse(); ++step) {
        auto add = dyn_cast<AddOp>(*v.getUsers().begin());
        if (!add)
          break;
        Value other = add.getLhs() == v ? add.getRhs() : add.getLhs();
        if (parameterIndex(function, other))
          v = add.getResult(); // the bias
        else
          residual = add;
      }
      if (!residual || !done.insert(residual).second)
        continue;
      auto type = cast<RankedTensorType>(residual->getResult(0).getType());
      if (type.getRank() != 3)
        continue;
      if (type.getDimSize(1) % (contextSize * size)) {
        InFlightDiagnostic d = residual->emitOpError()
                               << "has sequence length " << type.getDimSize(1)
                               << ", which " << axis << " (size " << size
                               << ")";
        if (contextSize > 1)
          d << " times " << contextAxis << " (size " << contextSize << ")";
        d << " does not divide for sequence parallelism";
        return d;
      }
      SmallVector<SmallVector<StringRef>> dims(3);
      dims[0].assign(batchAxes.begin(), batchAxes.end());
      if (contextSize > 1)
        dims[1].push_back(contextAxis);
      dims[1].append(axes.begin(), axes.end());
      OpBuilder b(ctx);
      b.setInsertionPointAfter(residual);
      Value result = residual->getResult(0);
      auto constraint =
          ShardingConstraintOp::create(b, residual->getLoc(), result,
                                       ShardingAttr::get(ctx, meshName, dims));
      result.replaceAllUsesExcept(constraint.getResult(), constraint);
    }
    return success();
  }

  /// Replaces the mesh axis `axis` (of `size`) by two: `axis` of
  /// `kvHeads`, one rank per key/value head, and a minor one of size
  /// size / kvHeads over which ranks share their key/value heads (a
  /// sub-axis, as Shardy would write "tp":(1)2 and "tp":(2)2). Query heads
  /// and every other split use both. Returns the minor axis' name.
  FailureOr<StringRef> splitAxis(func::FuncOp function, Operation *at,
                                 int64_t kvHeads, int64_t size) {
    MLIRContext *ctx = function.getContext();
    auto module = function->getParentOfType<ModuleOp>();
    auto meshOp = cast<MeshOp>(SymbolTable::lookupSymbolIn(module, meshName));
    MeshAttr mesh = meshOp.getMesh();
    std::string copies = axis + "_rep";
    while (mesh.getAxisIndex(copies))
      copies += "_";
    // A sharding written before this pass that names the axis would change
    // meaning with its size.
    Operation *named = nullptr;
    module.walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](ShardingAttr s) {
          SmallVector<StringAttr> used = s.getShardedAxes();
          llvm::append_range(used, s.getUnreduced());
          if (llvm::any_of(used, [&](StringAttr a) { return a == axis; }))
            named = op;
        });
      return named ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (named)
      return named->emitOpError()
             << "has a sharding over " << axis << ", which must become two "
             << "axes (" << kvHeads << " x " << size / kvHeads
             << ") to keep copies of the " << kvHeads
             << " key/value heads; leave " << axis
             << " to the tensor-parallel pass";
    SmallVector<StringAttr> names;
    SmallVector<int64_t> sizes;
    for (auto [name, n] : llvm::zip(mesh.getAxisNames(), mesh.getAxisSizes())) {
      names.push_back(name);
      sizes.push_back(name == axis ? kvHeads : n);
      if (name == axis) {
        names.push_back(StringAttr::get(ctx, copies));
        sizes.push_back(size / kvHeads);
      }
    }
    meshOp.setMeshAttr(MeshAttr::get(ctx, names, sizes));
    at->emitRemark()
        << "attention has " << kvHeads << " key/value heads for " << axis
        << " (size " << size << "): " << axis << " becomes \"" << axis
        << "\"=" << kvHeads << " x \"" << copies << "\"=" << size / kvHeads
        << "; each rank keeps the key/value head its query heads use, the "
        << size / kvHeads << " ranks along \"" << copies
        << "\" hold copies of it and sum its gradients";
    return StringAttr::get(ctx, copies).getValue();
  }

  /// Marks each attention of the forward program that no split reaches
  /// (`reached`) as replicated over the axis, with a remark and
  /// `part.replicated` saying why (--part-explain reports it).
  void explainReplicated(func::FuncOp function,
                         const llvm::DenseSet<Operation *> &forward,
                         const llvm::DenseSet<Value> &reached, int64_t size) {
    function.walk([&](AttentionOp attention) {
      if (!forward.contains(attention) ||
          reached.contains(attention.getResult()) ||
          llvm::any_of(attention->getOperands(),
                       [&](Value v) { return reached.contains(v); }))
        return;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "attention stays replicated over " << axis << " (size " << size
         << "): " << whyWhole(function, attention.getQuery());
      attention.emitRemark() << text;
      attention->setAttr(PartDialect::getReplicatedAttrName(),
                         StringAttr::get(function.getContext(), text));
    });
    // Attention part-raise left as ops: the split follows no heads into it.
    function.walk([&](SoftmaxOp softmax) {
      Operation *scores = decomposedScores(function, softmax);
      if (!scores || !forward.contains(softmax) ||
          reached.contains(softmax.getResult()) ||
          llvm::any_of(scores->getOperands(),
                       [&](Value v) { return reached.contains(v); }))
        return;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "attention stays replicated over " << axis << " (size " << size
         << "): it is decomposed (a softmax of the " << scores->getName()
         << " at " << scores->getLoc()
         << ", not a part.attention; partition-import --report-raising says "
            "why part-raise left it), and "
         << whyWhole(function, scores->getOperand(0));
      softmax.emitRemark() << text;
      softmax->setAttr(PartDialect::getReplicatedAttrName(),
                       StringAttr::get(function.getContext(), text));
    });
  }

  /// Pins each split slice of a parameter (`slicedSplits`: the dimension
  /// and the layer) by a sharding constraint over `axes`, or over the axis
  /// alone (`kvBlocks` key/value heads) for a slice feeding only keys or
  /// values: each rank computes its heads from its part of the whole
  /// weight.
  void constrainSlices(
      const llvm::MapVector<Value, std::pair<int64_t, Operation *>> &slicedSplits,
      ArrayRef<StringRef> axes, int64_t kvBlocks, int64_t size,
      function_ref<bool(Value)> keyValueOnly) {
    for (auto [sliced, split] : slicedSplits) {
      auto type = cast<RankedTensorType>(sliced.getType());
      int64_t blocks = keyValueOnly(sliced) ? kvBlocks : size;
      if (type.getDimSize(split.first) % blocks) {
        // No padding inside a weight: the block stays whole.
        split.second->emitRemark()
            << "the block of " << type.getDimSize(split.first)
            << " features of a fused projection stays whole: " << axis
            << " (size " << blocks << ") does not divide them";
        continue;
      }
      SmallVector<SmallVector<StringRef>> dims(type.getRank());
      if (keyValueOnly(sliced))
        dims[split.first].push_back(axis);
      else
        dims[split.first].assign(axes.begin(), axes.end());
      MLIRContext *ctx = sliced.getContext();
      OpBuilder b(ctx);
      b.setInsertionPointAfterValue(sliced);
      auto constraint = ShardingConstraintOp::create(
          b, sliced.getLoc(), sliced, ShardingAttr::get(ctx, meshName, dims));
      sliced.replaceAllUsesExcept(constraint.getResult(), constraint);
    }
  }

  LogicalResult annotate(func::FuncOp function, int64_t size) {
    MLIRContext *ctx = function.getContext();
    StringRef shardingName = PartDialect::getShardingAttrName();
    // Splits chosen per parameter, in argument order: (dimension, the layer).
    std::map<unsigned, std::pair<int64_t, Operation *>> splits;
    SmallVector<Operation *> heads; // reshapes into heads on some path
    SmallVector<MatmulOp> rowParallel;
    // Column-parallel weights whose split reaches the keys or values of an
    // attention, with the reshapes into heads on their paths: grouped-query
    // attention with fewer key/value heads than ranks keeps them whole per
    // rank, shared by the ranks whose query heads use them.
    // Keyed by the parameter, or by the slice of one that is split.
    llvm::MapVector<Value, SmallVector<Operation *>> keyValueWeights;
    // Slices of parameters split as a parameter would be (the blocks of a
    // fused projection of unequal widths): (dimension, the layer).
    llvm::MapVector<Value, std::pair<int64_t, Operation *>> slicedSplits;

    // The forward program: what the function's plain results (the loss, or
    // an inference's outputs) are computed from. Gradients, optimizer
    // updates and recomputed copies are not, and a split chosen from their
    // matmuls would not be Megatron's.
    llvm::DenseSet<Operation *> forward = forwardProgram(function);
    StringAttr axisName = StringAttr::get(ctx, axis);
    // A split (a value with a layout) from which an earlier walk found no
    // partner leads to none: a walk from a layer whose output joins the
    // residual stream would otherwise follow it to the end of the model, in
    // every layer (quadratic in the depth). Each walk explores every (op,
    // layout) it reaches, so what it found from a split does not depend on
    // where it came from.
    auto meshRef = FlatSymbolRefAttr::get(ctx, meshName);
    using Split = std::pair<Value, ShardingAttr>;
    llvm::DenseSet<Split> deadEnds;
    // The values a split with a partner reaches: an attention none of whose
    // operands is among them stays whole on every rank.
    llvm::DenseSet<Value> reached;
    WalkResult walk = function.walk([&](MatmulOp first) {
      if (!forward.contains(first))
        return WalkResult::advance();
      std::optional<unsigned> w1 = parameterIndex(function, first.getRhs());
      // The weight's column dimension; for a block of a fused weight, the
      // view's dimension past the one the block drops.
      int64_t columns = first.getTransposeB() ? 0 : 1;
      if (!w1)
        if (auto block = parameterBlock(function, first.getRhs())) {
          w1 = block->first;
          columns += columns >= block->second;
        }
      // A slice of a parameter is split itself (a sharding constraint):
      // the parameter stays whole.
      Value sliced;
      if (!w1)
        if ((w1 = parameterSlice(function, first)))
          sliced = first.getRhs();
      if (!w1)
        return WalkResult::advance();
      // Follow the output's split features forward, through every op whose
      // sharding rule carries them to its result, to row-parallel partners.
      // The split is followed structurally (an axis of size 1): whether tp
      // divides the heads a reshape makes is checked below, with a
      // diagnostic.
      SmallVector<std::pair<MatmulOp, unsigned>> partners;
      SmallVector<Operation *> pathHeads;
      bool reachesKeyValue = false;
      auto features = Layout::replicated(
          cast<RankedTensorType>(first.getResult().getType()).getRank());
      features.dims.back().push_back(axisName);
      SmallVector<std::pair<Value, Layout>, 4> work = {
          {first.getResult(), features}};
      // The splits this walk reached, each followed once.
      llvm::DenseSet<Split> seen;
      seen.insert({first.getResult(), features.toAttr(ctx, meshRef)});
      while (!work.empty()) {
        auto [v, layout] = work.pop_back_val();
        for (OpOperand &use : v.getUses()) {
          Operation *user = use.getOwner();
          if (!forward.contains(user))
            continue;
          if (auto second = dyn_cast<MatmulOp>(user)) {
            std::optional<unsigned> w2 =
                parameterIndex(function, second.getRhs());
            // A partner contracts the split features: they are its
            // operand's last dimension.
            if (w2 && use.getOperandNumber() == 0 && !second.getTransposeA() &&
                layout.dims.back().size() == 1 &&
                !llvm::is_contained(partners, std::make_pair(second, *w2)))
              partners.push_back({second, *w2});
            continue;
          }
          if (isa<AttentionOp>(user) && use.getOperandNumber() > 0)
            reachesKeyValue = true;
          std::optional<Layout> passed =
              passSplit(user, use.getOperandNumber(), layout,
                        [](StringAttr) -> int64_t { return 1; });
          if (!passed)
            continue;
          Split next = {user->getResult(0), passed->toAttr(ctx, meshRef)};
          if (deadEnds.contains(next) || !seen.insert(next).second)
            continue;
          if (auto reshape = dyn_cast<ReshapeOp>(user)) {
            auto in = reshape.getInput().getType();
            auto out = reshape.getType();
            if (out.getRank() == in.getRank() + 1 &&
                out.getShape().take_back(2) !=
                    ArrayRef<int64_t>{1, in.getShape().back()})
              pathHeads.push_back(reshape);
          }
          work.push_back({user->getResult(0), *passed});
        }
      }
      if (partners.empty()) {
        deadEnds.insert(seen.begin(), seen.end());
        return WalkResult::advance();
      }
      for (const Split &split : seen)
        reached.insert(split.first);
      if (sliced)
        slicedSplits[sliced] = {columns, first};
      else
        splits[*w1] = {columns, first};
      Value target = sliced ? sliced : function.getArgument(*w1);
      for (auto [second, w2] : partners) {
        splits[w2] = {second.getTransposeB() ? 1 : 0, second};
        rowParallel.push_back(second);
      }
      if (reachesKeyValue)
        llvm::append_range(keyValueWeights[target], pathHeads);
      else
        llvm::append_range(heads, pathHeads);
      return WalkResult::advance();
    });
    (void)walk;

    // A parameter table looked up along its rows (an embedding) is split by
    // rows: each device looks up the ids it holds (a vocabulary-parallel
    // embedding), and an output head that shares the table then yields
    // vocabulary-split logits for a vocabulary-parallel loss.
    function.walk([&](GatherOp lookup) {
      if (!forward.contains(lookup))
        return;
      std::optional<unsigned> table =
          parameterIndex(function, lookup.getData());
      if (!table || lookup.getAxis() != 0 || splits.count(*table))
        return;
      // Rows the axis does not divide are padded (as Megatron pads a
      // vocabulary) where everything that reads them allows it; otherwise
      // the table stays whole.
      auto type = cast<RankedTensorType>(lookup.getData().getType());
      if (type.getDimSize(0) % size) {
        Value data = lookup.getData();
        if (std::optional<PadBlocker> blocker =
                checkPadding(function, {data, 0, size})) {
          lookup.emitRemark()
              << "the table stays whole: " << axis << " (size " << size
              << ") does not divide its " << type.getDimSize(0)
              << " rows, and they cannot be padded because "
              << blocker->op->getName() << " at " << blocker->op->getLoc()
              << " reads them and " << blocker->reason;
          return;
        }
      }
      splits[*table] = {0, lookup};
    });

    // An output head of its own (Llama's lm_head; GPT's shares the table
    // above): a parameter matmul whose result the loss reads as its classes
    // is split by its output features, so the logits come out split by
    // vocabulary for the vocabulary-parallel loss (Megatron's column-
    // parallel output layer with parallel_output).
    function.walk([&](MatmulOp head) {
      if (!forward.contains(head) || !readAsLossClasses(head.getResult()))
        return;
      std::optional<unsigned> weight = parameterIndex(function, head.getRhs());
      if (!weight || splits.count(*weight))
        return;
      int64_t dim = head.getTransposeB() ? 0 : 1;
      auto type = cast<RankedTensorType>(head.getRhs().getType());
      if (type.getDimSize(dim) % size) {
        if (std::optional<PadBlocker> blocker = checkPadding(
                function, {function.getArgument(*weight), dim, size})) {
          head.emitRemark()
              << "the output head stays whole: " << axis << " (size " << size
              << ") does not divide its " << type.getDimSize(dim)
              << " classes, and they cannot be padded because "
              << blocker->op->getName() << " at " << blocker->op->getLoc()
              << " reads them and " << blocker->reason;
          return;
        }
      }
      splits[*weight] = {dim, head};
    });

    auto headsOf = [](Operation *op) {
      return cast<ReshapeOp>(op).getType().getShape().drop_back().back();
    };
    for (Operation *op : heads) {
      int64_t h = headsOf(op);
      if (h % size)
        return op->emitOpError()
               << "splits features into " << h << " heads, which " << axis
               << " (size " << size << ") does not divide";
    }
    // Grouped-query attention with fewer key/value heads than ranks: each
    // rank keeps a copy of the key/value heads its query heads use.
    Operation *foundAt = nullptr;
    FailureOr<int64_t> kvHeads = [&]() -> FailureOr<int64_t> {
      int64_t found = 0;
      for (auto &entry : keyValueWeights)
        for (Operation *op : entry.second) {
          int64_t h = headsOf(op);
          if (h % size == 0)
            continue;
          if (size % h)
            return op->emitOpError()
                   << "splits keys or values into " << h << " heads, which "
                   << axis << " (size " << size
                   << ") neither divides nor is a multiple of (each rank "
                      "would need part of a head)";
          if (found && found != h)
            return op->emitOpError()
                   << "splits keys or values into " << h
                   << " heads, and the reshape at " << foundAt->getLoc()
                   << " into " << found << ": copies of key/value heads over "
                   << axis << " (size " << size
                   << ") need one count everywhere";
          if (!found)
            foundAt = op;
          found = h;
        }
      return found;
    }();
    if (failed(kvHeads))
      return failure();
    SmallVector<StringRef, 2> axes = {axis};
    if (*kvHeads) {
      FailureOr<StringRef> copies = splitAxis(function, foundAt, *kvHeads, size);
      if (failed(copies))
        return failure();
      axes.push_back(*copies);
    }
    auto keyValueOnly = [&](Value target) {
      auto it = keyValueWeights.find(target);
      return *kvHeads && it != keyValueWeights.end() &&
             llvm::any_of(it->second,
                          [&](Operation *op) { return headsOf(op) % size; });
    };
    if (sequenceParallel &&
        failed(splitSequence(function, rowParallel, size, axes)))
      return failure();
    // Dimensions the axis does not divide (a vocabulary, an MLP width) are
    // padded to a multiple of it first, with what reads them masked.
    SmallVector<PadRequest> padding;
    for (auto [index, split] : splits) {
      if (function.getArgAttr(index, shardingName))
        continue; // the user's annotation stands
      auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
      int64_t blocks =
          keyValueOnly(function.getArgument(index)) ? *kvHeads : size;
      if (type.getDimSize(split.first) % blocks)
        padding.push_back({function.getArgument(index), split.first, blocks});
    }
    if (failed(padForSplits(function, padding)))
      return failure();
    FunctionAttrEditor attrs(function);
    for (auto [index, split] : splits) {
      if (attrs.getArg(index, shardingName))
        continue; // the user's annotation stands
      auto type = cast<RankedTensorType>(function.getArgumentTypes()[index]);
      int64_t dim = split.first;
      SmallVector<SmallVector<StringRef>> dims(type.getRank());
      if (keyValueOnly(function.getArgument(index)))
        dims[dim].push_back(axis);
      else
        dims[dim].assign(axes.begin(), axes.end());
      attrs.setArg(index, shardingName,
                   ShardingAttr::get(ctx, meshName, dims));
    }
    constrainSlices(slicedSplits, axes, *kvHeads ? *kvHeads : size, size,
                    keyValueOnly);
    if (size > 1)
      explainReplicated(function, forward, reached, size);
    return success();
  }
};
} // namespace
