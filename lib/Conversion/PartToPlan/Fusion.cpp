//===- Fusion.cpp - elementwise chains lowered as one kernel --------------===//
//
// Greedy producer-consumer grouping in block order, as XLA's loop fusion
// does after SPMD partitioning: an op joins the groups of the members that
// define its operands when running the grown group at this op delays no
// reader of any member.
//
//===----------------------------------------------------------------------===//

#include "partition/Conversion/PartToPlan/Fusion.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace partition;

bool partition::isCyclicBroadcast(ArrayRef<int64_t> operand,
                                  ArrayRef<int64_t> result) {
  while (!operand.empty() && operand.front() == 1)
    operand = operand.drop_front();
  return operand.size() <= result.size() &&
         operand == result.take_back(operand.size());
}

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         (tensor.getElementType().isF32() || tensor.getElementType().isF16() ||
          tensor.getElementType().isBF16());
}

/// `op` computes one float tensor elementwise from float tensors that repeat
/// into its shape.
bool isElementwiseChainOp(Operation *op,
                          function_ref<bool(Operation *)> fusible) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      op->getNumRegions() != 0 || !isFloatTensor(op->getResult(0).getType()) ||
      !fusible(op))
    return false;
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getNumElements() == 0)
    return false;
  for (Value operand : op->getOperands())
    if (!isFloatTensor(operand.getType()) ||
        !isCyclicBroadcast(cast<RankedTensorType>(operand.getType()).getShape(),
                           result.getShape()))
      return false;
  return true;
}

/// The operands and results a set of members would have as one kernel.
void boundary(ArrayRef<Operation *> ops,
              const llvm::SmallPtrSetImpl<Operation *> &members,
              SmallVectorImpl<Value> *operands, SmallVectorImpl<Value> *results,
              function_ref<bool(Value)> kept) {
  llvm::SetVector<Value> in;
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      if (!members.count(v.getDefiningOp()))
        in.insert(v);
  if (operands)
    operands->assign(in.begin(), in.end());
  if (results) {
    results->clear();
    for (Operation *op : ops)
      if ((kept && kept(op->getResult(0))) ||
          llvm::any_of(op->getUsers(),
                       [&](Operation *u) { return !members.count(u); }))
        results->push_back(op->getResult(0));
  }
}

} // namespace

void partition::addInternalValues(const FusionGroup &group,
                                  llvm::DenseSet<Value> &values) {
  llvm::SmallPtrSet<Value, 8> outside(group.results.begin(),
                                      group.results.end());
  for (Operation *member : group.ops)
    if (!outside.count(member->getResult(0)))
      values.insert(member->getResult(0));
}

std::vector<FusionGroup>
partition::findFusionGroups(Block &block,
                            function_ref<bool(Operation *)> fusible,
                            FusionLimits limits,
                            function_ref<bool(Operation *)> startsSegment,
                            function_ref<bool(Value)> kept) {
  // An op's position, and the position of the last barrier at or before
  // it: an op outside any chain with a result of more than one element (a
  // matmul, a reduction, a collective). A group never grows across one:
  // moving a member past it would keep the member's operands alive while
  // the barrier allocates (a forward op joined to its backward user would
  // keep its operands for the whole backward pass), so an operand's life
  // is only ever extended across other elementwise ops.
  llvm::DenseMap<Operation *, size_t> position;
  std::vector<int64_t> lastBarrier;
  for (auto [index, op] : llvm::enumerate(block)) {
    position[&op] = index;
    bool barrier = !isElementwiseChainOp(&op, fusible) &&
                   llvm::any_of(op.getResultTypes(), [](Type t) {
                     auto tensor = dyn_cast<RankedTensorType>(t);
                     return !tensor || !tensor.hasStaticShape() ||
                            tensor.getNumElements() > 1;
                   });
    barrier |= startsSegment && startsSegment(&op);
    lastBarrier.push_back(barrier ? int64_t(index)
                          : index   ? lastBarrier.back()
                                    : -1);
  }

  // Each chain op's group, by index into `groups`; members in block order.
  std::vector<SmallVector<Operation *>> groups;
  llvm::DenseMap<Operation *, size_t> groupOf;
  for (Operation &op : block) {
    if (!isElementwiseChainOp(&op, fusible))
      continue;
    auto shape = cast<RankedTensorType>(op.getResult(0).getType()).getShape();
    size_t here = position[&op];
    SmallVector<Operation *> current = {&op};
    llvm::SmallPtrSet<Operation *, 16> members = {&op};
    // The groups of the members that define an operand read whole.
    llvm::SetVector<size_t> candidates;
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      auto it = def ? groupOf.find(def) : groupOf.end();
      if (it != groupOf.end() &&
          cast<RankedTensorType>(v.getType()).getShape() == shape)
        candidates.insert(it->second);
    }
    for (size_t candidate : candidates) {
      SmallVector<Operation *> &group = groups[candidate];
      if (group.empty() || current.size() + group.size() > limits.steps ||
          lastBarrier[here] > int64_t(position[group.front()]))
        continue;
      llvm::SmallPtrSet<Operation *, 16> grown = members;
      grown.insert(group.begin(), group.end());
      // Running the group here must not delay a reader of a member: every
      // reader outside the group comes after this op.
      bool delays = false;
      for (Operation *member : group)
        for (Operation *user : member->getUsers())
          if (!grown.count(user) && position[user] < here)
            delays = true;
      if (delays)
        continue;
      SmallVector<Operation *> ops(group.begin(), group.end());
      ops.append(current.begin(), current.end());
      llvm::sort(ops, [&](Operation *a, Operation *b) {
        return position[a] < position[b];
      });
      SmallVector<Value> operands, results;
      boundary(ops, grown, &operands, &results, kept);
      if (operands.size() > limits.operands || results.size() > limits.results)
        continue;
      current = std::move(ops);
      members = std::move(grown);
      group.clear();
    }
    for (Operation *member : current)
      groupOf[member] = groups.size();
    groups.push_back(std::move(current));
  }

  std::vector<FusionGroup> fused;
  for (SmallVector<Operation *> &ops : groups) {
    if (ops.size() < 2)
      continue;
    FusionGroup group;
    group.ops = std::move(ops);
    llvm::SmallPtrSet<Operation *, 16> members(group.ops.begin(),
                                               group.ops.end());
    boundary(group.ops, members, &group.operands, &group.results, kept);
    // A chain nobody reads stays as it was (one dead kernel per op).
    if (!group.results.empty())
      fused.push_back(std::move(group));
  }
  return fused;
}
