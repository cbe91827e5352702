//===- LinkStage.cpp - a pipeline stage's fragments as one program --------===//

#include "LinkStage.h"

#include "partition/Dialect/Part/Analysis/FragmentTable.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/runtime/Plan.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <set>

using namespace mlir;
using namespace partition;
using namespace partition::part;

namespace {

StringAttr slotOf(func::FuncOp fn, unsigned index, bool result) {
  StringRef name = PartDialect::getSlotAttrName();
  return result ? fn.getResultAttrOfType<StringAttr>(index, name)
                : fn.getArgAttrOfType<StringAttr>(index, name);
}

/// The copies a stash needs: at each step that makes micro-batch m's value,
/// copy m mod S must hold no micro-batch whose readers have not all run.
/// Producers and readers are kinds of step (`kindOf` of a fragment: a final
/// fragment is of its ordinary one's kind).
int64_t stashSlots(const std::vector<std::pair<unsigned, uint32_t>> &steps,
                   ArrayRef<unsigned> kindOf,
                   const std::set<unsigned> &producers,
                   const std::set<unsigned> &readers,
                   int64_t microBatches) {
  for (int64_t slots = 1; slots < microBatches; ++slots) {
    std::map<int64_t, size_t> pending; // micro-batch -> readers left
    std::vector<int64_t> owner(slots, -1);
    bool clash = false;
    for (auto [fragment, m] : steps) {
      unsigned kind = kindOf[fragment];
      if (producers.count(kind)) {
        int64_t o = owner[m % slots];
        if (o >= 0 && pending.count(o)) {
          clash = true;
          break;
        }
        owner[m % slots] = m;
        pending[m] = readers.size();
      }
      if (readers.count(kind) && pending.count(m) && --pending[m] == 0)
        pending.erase(m);
    }
    if (!clash)
      return slots;
  }
  return std::max<int64_t>(1, microBatches);
}

} // namespace

/// The fragments of `stage` and the schedule's steps, by fragment index;
/// each fragment's kind of step in `kindOf` (the first fragment of its kind:
/// a final fragment is of its ordinary one's kind).
static LogicalResult readTable(func::FuncOp stage,
                               SmallVectorImpl<func::FuncOp> &fragments,
                               SmallVectorImpl<unsigned> &kindOf,
                               LinkedStage &out) {
  FailureOr<std::optional<FragmentTable>> table = readFragmentTable(
      stage, [](Operation *op) { return op->emitError(); });
  if (failed(table))
    return failure();
  if (!*table || (*table)->prologue < 0)
    return stage.emitError() << "a pipeline stage with fragments needs "
                                "'part.fragments' with a fragment \"P\"";
  for (const FragmentTable::Fragment &f : (*table)->fragments) {
    fragments.push_back(f.function);
    out.fragmentNames.push_back(
        f.final ? f.name + std::string(runtime::kFinalFragmentSuffix) : f.name);
    auto kind = llvm::find_if((*table)->fragments, [&](const auto &g) {
      return g.name == f.name;
    });
    kindOf.push_back(unsigned(kind - (*table)->fragments.begin()));
  }
  out.fragmentNames.push_back("U");
  kindOf.push_back(fragments.size());
  out.steps.push_back({unsigned((*table)->prologue), 0});
  for (const FragmentTable::Step &step : (*table)->steps)
    out.steps.push_back({step.fragment, uint32_t(step.step.microBatch)});
  out.steps.push_back({unsigned(fragments.size()), 0}); // U
  out.microBatches = (*table)->microBatches;
  return success();
}

FailureOr<LinkedStage> partition::linkStage(func::FuncOp stage,
                                            OpBuilder &top) {
  LinkedStage out;
  SmallVector<func::FuncOp> fragments;
  SmallVector<unsigned> kindOf;
  if (failed(readTable(stage, fragments, kindOf, out)))
    return failure();
  int64_t m = out.microBatches;

  // The stage's arguments but its accumulators; batched ones one
  // micro-batch each.
  SmallVector<int64_t> linkedArg(stage.getNumArguments(), -1);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (BlockArgument arg : stage.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (slotOf(stage, i, false))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (stage.getArgAttr(i, PartDialect::getMicroBatchesAttrName())) {
      SmallVector<int64_t> shape(type.getShape());
      if (shape.empty() || shape[0] % m)
        return stage.emitError() << "argument " << i << " of type " << type
                                 << " does not hold " << m
                                 << " micro-batches along dimension 0";
      shape[0] /= m;
      type = RankedTensorType::get(shape, type.getElementType());
    }
    linkedArg[i] = types.size();
    types.push_back(type);
    attrs.push_back(stage.getArgAttrDict(i));
  }
  out.linked = func::FuncOp::create(
      top, stage.getLoc(), (stage.getName() + "_linked").str(),
      FunctionType::get(stage.getContext(), types, stage.getResultTypes()));
  out.linked.setAllArgAttrs(attrs);
  out.linked.setAllResultAttrs(stage.getAllResultAttrs());
  for (NamedAttribute a : stage->getAttrs())
    if (a.getName().getValue().starts_with("part."))
      out.linked->setAttr(a.getName(), a.getValue());
  Block *entry = out.linked.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);

  llvm::StringMap<Value> current;
  llvm::StringMap<std::set<unsigned>> producers;
  llvm::StringMap<std::set<unsigned>> readers;
  llvm::StringMap<size_t> slotIndex;
  // Maps function `fn` (fragment `index`)'s arguments, then copies its body.
  auto place = [&](func::FuncOp fn, unsigned index) -> LogicalResult {
    IRMapping map;
    for (BlockArgument arg : fn.getArguments()) {
      unsigned i = arg.getArgNumber();
      StringAttr slot = slotOf(fn, i, false);
      auto [kind, number] =
          slot ? slot.getValue().split(':') : std::pair<StringRef, StringRef>();
      int64_t n = -1;
      if (kind == "arg" || (!slot && index == fragments.size()))
        n = slot ? (number.getAsInteger(10, n) ? -1 : n) : int64_t(i);
      if (n >= 0) {
        if (n >= int64_t(linkedArg.size()) || linkedArg[n] < 0)
          return fn.emitError() << "argument " << i << " reads argument " << n
                                << " of the stage, which it does not have";
        map.map(arg, entry->getArgument(linkedArg[n]));
        continue;
      }
      if (!slot || !current.count(slot.getValue()))
        return fn.emitError() << "argument " << i << " reads "
                              << (slot ? slot.getValue() : StringRef("?"))
                              << ", which no earlier fragment makes";
      map.map(arg, current[slot.getValue()]);
      readers[slot.getValue()].insert(kindOf[index]);
    }
    bool first = true;
    for (Operation &op : fn.getBody().front()) {
      if (isa<func::ReturnOp>(op) && index < fragments.size()) {
        for (auto [i, v] : llvm::enumerate(op.getOperands())) {
          StringAttr slot = slotOf(fn, i, true);
          if (!slot)
            return fn.emitError() << "result " << i << " has no 'part.slot'";
          Value now = map.lookupOrDefault(v);
          current[slot.getValue()] = now;
          producers[slot.getValue()].insert(kindOf[index]);
          auto [it, added] =
              slotIndex.try_emplace(slot.getValue(), out.slots.size());
          if (added)
            out.slots.push_back({slot.getValue().str(), {}, 1});
          out.slots[it->second].values.push_back(now);
        }
        continue;
      }
      Operation *copy = b.clone(op, map);
      out.fragmentOf[copy] = index;
      if (first)
        out.firstOps.insert(copy);
      first = false;
    }
    return success();
  };
  for (auto [i, fn] : llvm::enumerate(fragments))
    if (failed(place(fn, i)))
      return failure();
  if (failed(place(stage, fragments.size())))
    return failure();

  for (LinkedStage::Slot &slot : out.slots)
    if (StringRef(slot.key).starts_with("stash:"))
      slot.slots = stashSlots(out.steps, kindOf, producers[slot.key],
                              readers[slot.key], m);
  return out;
}
