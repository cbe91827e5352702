//===- ZeroPrefetch.cpp - issue ZeRO-3 parameter all-gathers a group ahead
//-===//
//
// On a per-device (`part.spmd`) function, moves each all-gather of a
// parameter (what ZeRO stage 3 puts before every use of a parameter) up to
// right before the compute of the previous group of gathers, so that the
// collective runs while that compute does, and no earlier: at most one group
// is gathered ahead of the one in use.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/ForwardProgram.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
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

void PartZeroPrefetchPass::runOnFunction(func::FuncOp function) {
  Block &block = function.getBody().front();
  llvm::DenseSet<Operation *> forward = forwardProgram(function);
  // The parameter gathers, in the order of their first use.
  SmallVector<Gather> gathers;
  for (auto op : block.getOps<AllGatherOp>()) {
    if (!isParameter(function, op.getInput()) || op->use_empty())
      continue;
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *u = block.findAncestorOpInBlock(*user);
      if (u && (!first || u->isBeforeInBlock(first)))
        first = u;
    }
    if (!first)
      continue;
    gathers.push_back({op, first, first->getAttr(kLayerAttrName),
                       forward.contains(first)});
  }
  llvm::stable_sort(gathers, [](const Gather &a, const Gather &b) {
    return a.firstUser != b.firstUser &&
           a.firstUser->isBeforeInBlock(b.firstUser);
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
  auto firstUse = [](ArrayRef<Gather> group) {
    Operation *point = group.front().firstUser;
    for (const Gather &g : group)
      if (g.firstUser->isBeforeInBlock(point))
        point = g.firstUser;
    return point;
  };
  // Each group moves up to right before the first use of the previous
  // group's gathers (the compute it overlaps), never down; the first group
  // is issued together, before its own first use.
  for (unsigned k = 0; k < groups.size(); ++k) {
    Operation *point = firstUse(groups[k ? k - 1 : 0]);
    for (const Gather &g : groups[k]) {
      if (!point->isBeforeInBlock(g.op))
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
}
} // namespace
