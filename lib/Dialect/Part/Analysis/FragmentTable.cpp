//===- FragmentTable.cpp - a pipeline stage's fragments and table ---------===//

#include "partition/Dialect/Part/Analysis/FragmentTable.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/SymbolTable.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace partition;
using namespace partition::part;
namespace pl = partition::part::pipeline;

int64_t FragmentTable::runs(unsigned index) const {
  if (int(index) == prologue)
    return 1;
  int64_t n = 0;
  for (const Step &s : steps)
    n += s.fragment == index;
  return n;
}

/// A kind of step (action, chunk), and whether its fragment is the final one.
using KindKey = std::tuple<std::string, int64_t, bool>;

/// The fragments of `stage`, by kind for the ordinary and the final ones.
static LogicalResult
readFragments(func::FuncOp stage, ArrayAttr refs, FragmentTable &out,
              std::map<KindKey, unsigned> &byKind,
              function_ref<InFlightDiagnostic(Operation *)> emitError) {
  for (Attribute a : refs) {
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        stage, cast<FlatSymbolRefAttr>(a));
    if (!fn || fn.isDeclaration())
      return emitError(stage) << "fragment " << a << " is not a function";
    auto name =
        fn->getAttrOfType<StringAttr>(PartDialect::getFragmentAttrName());
    if (!name)
      return emitError(stage) << "fragment @" << fn.getName()
                              << " of a pipeline stage has no 'part.fragment'";
    bool final = fn->hasAttr(PartDialect::getFinalAttrName());
    unsigned index = out.fragments.size();
    out.fragments.push_back({fn, name.getValue().str(), final});
    if (name.getValue() == "P") {
      out.prologue = int(index);
      continue;
    }
    auto [action, chunk] = name.getValue().split('.');
    int64_t c = 0;
    if (!chunk.empty() && chunk.getAsInteger(10, c))
      return emitError(fn) << "fragment name \"" << name.getValue()
                           << "\" is not a step kind with a chunk (\"F.1\")";
    if (!byKind.try_emplace({action.str(), c, final}, index).second)
      return emitError(stage) << "two fragments of kind \"" << name.getValue()
                              << "\"" << (final ? " (final)" : "");
  }
  return success();
}

FailureOr<std::optional<FragmentTable>> partition::part::readFragmentTable(
    func::FuncOp stage,
    function_ref<InFlightDiagnostic(Operation *)> emitError) {
  auto refs =
      stage->getAttrOfType<ArrayAttr>(PartDialect::getFragmentsAttrName());
  if (!refs)
    return std::optional<FragmentTable>();
  FragmentTable out;
  std::map<KindKey, unsigned> byKind;
  if (failed(readFragments(stage, refs, out, byKind, emitError)))
    return failure();
  auto schedule = stage->getAttrOfType<StringAttr>("part.schedule");
  if (!schedule)
    return emitError(stage) << "a pipeline stage with fragments needs "
                               "'part.schedule' (its table)";
  SmallVector<StringRef> texts;
  schedule.getValue().split(texts, ' ', -1, /*KeepEmpty=*/false);
  std::map<std::pair<std::string, int64_t>, size_t> lastOfKind;
  for (StringRef text : texts) {
    std::optional<pl::Step> step = pl::parseStepText(text.str());
    auto it = step ? byKind.find({pl::actionName(step->action), step->chunk,
                                  false})
                   : byKind.end();
    if (it == byKind.end())
      return emitError(stage)
             << "step \"" << text << "\" of part.schedule has no fragment";
    lastOfKind[{pl::actionName(step->action), step->chunk}] = out.steps.size();
    out.steps.push_back({text.str(), *step, it->second});
    out.microBatches = std::max(out.microBatches, step->microBatch + 1);
    out.chunks = std::max(out.chunks, step->chunk + 1);
  }
  for (auto &[key, index] : byKind) {
    auto &[action, chunk, final] = key;
    if (!final)
      continue;
    auto last = lastOfKind.find({action, chunk});
    if (last == lastOfKind.end())
      return emitError(out.fragments[index].function)
             << "final fragment \"" << out.fragments[index].name
             << "\" runs no step of the table";
    out.steps[last->second].fragment = index;
  }
  return std::optional<FragmentTable>(std::move(out));
}

SmallVector<std::pair<Operation *, int64_t>>
partition::part::getProgramParts(Operation *function) {
  SmallVector<std::pair<Operation *, int64_t>> parts = {{function, 1}};
  auto fn = dyn_cast<func::FuncOp>(function);
  if (!fn)
    return parts;
  FailureOr<std::optional<FragmentTable>> table =
      readFragmentTable(fn, [](Operation *) { return InFlightDiagnostic(); });
  if (failed(table) || !*table)
    return parts;
  for (auto [i, fragment] : llvm::enumerate((*table)->fragments))
    parts.push_back({fragment.function, (*table)->runs(i)});
  return parts;
}
