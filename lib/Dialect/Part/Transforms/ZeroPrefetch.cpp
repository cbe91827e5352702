//===- ZeroPrefetch.cpp - issue ZeRO-3 parameter all-gathers a group ahead
//-===//
//
// On a per-device (`part.spmd`) function, moves each all-gather of a
// parameter (what ZeRO stage 3 puts before every use of a parameter) up to
// right before the compute of the previous group of gathers, so that the
// collective runs while that compute does, and no earlier: at most one group
// is gathered ahead of the one in use. With `flat` (the default), a group's
// gathers become one all-gather of their shards flattened and concatenated,
// as FSDP gathers a wrap unit's flat parameter.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "part-zero-prefetch"

namespace partition::part {
#define GEN_PASS_DEF_PARTZEROPREFETCHPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// The attribute that names an op's layer, where the importer or a generator
/// set it.
constexpr llvm::StringLiteral kLayerAttrName = "part.layer";

/// One parameter all-gather and the first op in the block that uses it.
struct Gather {
  AllGatherOp op;
  Operation *firstUser;
  /// The layer of its first user (null without `part.layer`).
  Attribute layer;
  /// Whether the first user is forward (a layer's backward is its own group).
  bool forward;
};

struct PartZeroPrefetchPass
    : public partition::part::impl::PartZeroPrefetchPassBase<
          PartZeroPrefetchPass> {
  using PartZeroPrefetchPassBase::PartZeroPrefetchPassBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isDeclaration() || !getSpmdMesh(function))
        continue;
      runOnFunction(function);
    }
  }

  void runOnFunction(func::FuncOp function);
  void flatten(ArrayRef<Gather> group,
               const llvm::DenseMap<Operation *, int64_t> &position);
};

/// True if `v` is an argument of `function` with role parameter.
static bool isParameter(func::FuncOp function, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &function.getBody().front())
    return false;
  auto role = function.getArgAttrOfType<ArgRoleAttr>(
      arg.getArgNumber(), PartDialect::getRoleAttrName());
  return role && role.getValue() == ArgRole::Parameter;
}

/// Each op of `block` with its index: order compared in O(1) however many
/// ops move (a move makes the block renumber itself at the next
/// isBeforeInBlock, which per move would be quadratic).
static llvm::DenseMap<Operation *, int64_t> positions(Block &block) {
  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation &op : block)
    position[&op] = int64_t(position.size());
  return position;
}

void PartZeroPrefetchPass::runOnFunction(func::FuncOp function) {
  Block &block = function.getBody().front();
  llvm::DenseSet<Operation *> forward = forwardProgram(function);
  // Moving gathers up leaves the other ops' order as it is: one numbering
  // serves the whole pass until the gathers are flattened.
  llvm::DenseMap<Operation *, int64_t> position = positions(block);
  auto before = [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  };
  // The parameter gathers, in the order of their first use.
  SmallVector<Gather> gathers;
  for (auto op : block.getOps<AllGatherOp>()) {
    if (!isParameter(function, op.getInput()) || op->use_empty())
      continue;
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *u = block.findAncestorOpInBlock(*user);
      if (u && (!first || before(u, first)))
        first = u;
    }
    if (!first)
      continue;
    gathers.push_back({op, first, first->getAttr(kLayerAttrName),
                       forward.contains(first)});
  }
  llvm::stable_sort(gathers, [&](const Gather &a, const Gather &b) {
    return before(a.firstUser, b.firstUser);
  });

  // Groups: consecutive gathers whose first users are in one layer, forward
  // or backward (part-autodiff labels a layer's backward with its layer);
  // each gather on its own where the ops carry no layer.
  SmallVector<SmallVector<Gather>> groups;
  for (const Gather &g : gathers) {
    if (groups.empty() || !g.layer || groups.back().front().layer != g.layer ||
        groups.back().front().forward != g.forward)
      groups.emplace_back();
    groups.back().push_back(g);
  }

  // The first use of a group's gathers.
  auto firstUse = [&](ArrayRef<Gather> group) {
    Operation *point = group.front().firstUser;
    for (const Gather &g : group)
      if (before(g.firstUser, point))
        point = g.firstUser;
    return point;
  };
  // Each group moves up to right before the first use of the previous
  // group's gathers (the compute it overlaps), never down; the first group
  // is issued together, before its own first use.
  for (unsigned k = 0; k < groups.size(); ++k) {
    Operation *point = firstUse(groups[k ? k - 1 : 0]);
    for (const Gather &g : groups[k]) {
      if (!before(point, g.op))
        continue; // already issued early enough
      g.op->moveBefore(point);
      auto origin =
          g.op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
      std::string text = origin ? origin.getValue().str() : "all_gather";
      text += k ? "; prefetched (part-zero-prefetch) above the compute of "
                  "the previous group, from before "
                : "; prefetched (part-zero-prefetch) with the first group, "
                  "from before ";
      text += g.firstUser->getName().getStringRef().str();
      if (auto loc = dyn_cast<FileLineColLoc>(g.firstUser->getLoc()))
        text += " at " + loc.getFilename().str() + ":" +
                std::to_string(loc.getLine());
      g.op->setAttr(PartDialect::getOriginAttrName(),
                    StringAttr::get(&getContext(), text));
      LLVM_DEBUG(llvm::dbgs() << "prefetched " << g.op << "\n");
    }
  }
  if (!flat)
    return;
  // Flattening adds ops but moves none: one numbering after the moves.
  position = positions(block);
  for (ArrayRef<Gather> group : groups)
    flatten(group, position);
}

/// The `part.name` of a parameter argument, or "argN".
static std::string parameterName(Value v) {
  auto arg = cast<BlockArgument>(v);
  auto function = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (auto name = function.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), PartDialect::getNameAttrName()))
    return name.getValue().str();
  return "arg" + std::to_string(arg.getArgNumber());
}

/// Replaces the gathers of `group` that share a mesh, axes, element type and
/// group size (two or more) by one: their shards flattened and concatenated,
/// gathered once over dimension 0 ([parts, n] rows: device i's shards), and
/// each parameter's columns sliced out and reshaped to its gathered shape.
/// A parameter gathered twice in the group (a layer's recomputed forward and
/// its backward) travels once, and its gathered value serves both. The
/// gather is placed where the earliest of them was, so it precedes every
/// use.
void PartZeroPrefetchPass::flatten(
    ArrayRef<Gather> group,
    const llvm::DenseMap<Operation *, int64_t> &position) {
  llvm::MapVector<std::tuple<Attribute, Attribute, Type, int64_t>,
                  SmallVector<AllGatherOp>>
      sets;
  for (const Gather &g : group) {
    AllGatherOp op = g.op;
    if (int64_t parts = contiguousBlockCount(
            dyn_cast<RankedTensorType>(op.getInput().getType()),
            dyn_cast<RankedTensorType>(op.getType()), op.getDim()))
      sets[{op.getMeshAttr(), op.getAxesAttr(), op.getType().getElementType(),
            parts}]
          .push_back(op);
  }
  for (auto &[key, ops] : sets) {
    if (ops.size() < 2)
      continue;
    AllGatherOp earliest = ops.front();
    for (AllGatherOp op : ops)
      if (position.lookup(op) < position.lookup(earliest))
        earliest = op;
    OpBuilder b(earliest);
    Type elementType = std::get<2>(key);
    int64_t parts = std::get<3>(key), total = 0;
    // Each parameter once, with its columns' offset in the flat gather.
    llvm::MapVector<Value, int64_t> offsets;
    for (AllGatherOp op : ops)
      offsets.insert({op.getInput(), 0});
    if (offsets.size() == 1) {
      // One parameter gathered twice: the earliest gather serves both.
      for (AllGatherOp op : ops)
        if (op != earliest) {
          op.getResult().replaceAllUsesWith(earliest.getResult());
          op.erase();
        }
      continue;
    }
    SmallVector<Value> pieces;
    // The parameters' names, then where the first was prefetched from.
    std::string origin = "flat all_gather of " +
                         std::to_string(offsets.size()) +
                         " parameters (part-zero-prefetch):";
    for (auto &[input, offset] : offsets) {
      int64_t n = cast<RankedTensorType>(input.getType()).getNumElements();
      offset = total;
      total += n;
      pieces.push_back(ReshapeOp::create(
          b, input.getLoc(), RankedTensorType::get({1, n}, elementType),
          input));
      origin += " " + parameterName(input);
    }
    if (auto o = earliest->getAttrOfType<StringAttr>(
            PartDialect::getOriginAttrName()))
      origin += "; first: " + o.getValue().str();
    Location loc = earliest.getLoc();
    Value joined = ConcatOp::create(
        b, loc, RankedTensorType::get({1, total}, elementType), pieces, 1);
    auto gathered = AllGatherOp::create(
        b, loc, RankedTensorType::get({parts, total}, elementType), joined,
        earliest.getMeshAttr(), earliest.getAxesAttr(), b.getI64IntegerAttr(0));
    gathered->setAttr(PartDialect::getOriginAttrName(),
                      b.getStringAttr(origin));
    // Each parameter's columns are sliced out right before its first use,
    // not after the gather: the compute stream runs in order, and a slice
    // there would wait for the gather that was prefetched to run beside
    // the previous group's compute.
    llvm::DenseMap<Value, Operation *> firstUse;
    Block *block = gathered->getBlock();
    for (AllGatherOp op : ops)
      for (Operation *user : op->getUsers()) {
        Operation *u = block->findAncestorOpInBlock(*user);
        Operation *&first = firstUse[op.getInput()];
        if (u && (!first || position.lookup(u) < position.lookup(first)))
          first = u;
      }
    llvm::DenseMap<Value, Value> sliced;
    for (AllGatherOp op : ops) {
      Value &value = sliced[op.getInput()];
      if (!value) {
        if (Operation *first = firstUse.lookup(op.getInput()))
          b.setInsertionPoint(first);
        else
          b.setInsertionPointAfter(gathered);
        int64_t n = cast<RankedTensorType>(op.getInput().getType())
                        .getNumElements();
        Value columns = SliceOp::create(
            b, op.getLoc(), RankedTensorType::get({parts, n}, elementType),
            gathered, b.getDenseI64ArrayAttr({0, offsets[op.getInput()]}),
            DenseI64ArrayAttr());
        value = ReshapeOp::create(b, op.getLoc(), op.getType(), columns);
      }
      op.getResult().replaceAllUsesWith(value);
    }
    for (AllGatherOp op : ops)
      op.erase();
  }
}
} // namespace
