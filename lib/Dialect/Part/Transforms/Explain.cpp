//===- Explain.cpp - why each collective is there and what it costs -------===//

#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

#define DEBUG_TYPE "part-explain"

namespace partition::part {
#define GEN_PASS_DEF_PARTEXPLAINPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

struct PartExplainPass
    : public partition::part::impl::PartExplainPassBase<PartExplainPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      FlatSymbolRefAttr meshName = getSpmdMesh(function);
      if (!meshName)
        continue;
      MeshAttr mesh = lookupMesh(function, meshName).getMesh();
      // (kind, axes) -> (count, bytes per device)
      std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>>
          table;
      int64_t total = 0, count = 0;
      function.walk([&](Operation *op) {
        std::optional<CollectiveCost> cost = collectiveCost(op, mesh);
        if (!cost)
          return;
        SmallVector<std::string> names;
        for (StringAttr axis : cost->axes)
          names.push_back("\"" + axis.getValue().str() + "\"");
        std::string axesText = llvm::join(names, ", ");
        auto origin =
            op->getAttrOfType<StringAttr>(PartDialect::getOriginAttrName());
        op->emitRemark() << cost->kind << " over " << axesText << " ("
                         << cost->groupSize << " devices) of "
                         << cost->operandBytes << " bytes moves "
                         << cost->movedBytes << " bytes per device; needed by "
                         << (origin ? origin.getValue()
                                    : StringRef("(written by hand)"));
        auto &row = table[{cost->kind, axesText}];
        ++row.first;
        row.second += cost->movedBytes;
        total += cost->movedBytes;
        ++count;
      });
      llvm::raw_ostream &os = llvm::outs();
      os << "func @" << function.getName() << " on " << meshName << ": "
         << count << " collective" << (count == 1 ? "" : "s") << ", " << total
         << " bytes per device\n";
      if (table.empty())
        continue;
      size_t kindWidth = 4, axesWidth = 4;
      for (auto &[key, row] : table) {
        kindWidth = std::max(kindWidth, key.first.size());
        axesWidth = std::max(axesWidth, key.second.size());
      }
      os << "  " << llvm::left_justify("kind", kindWidth + 2)
         << llvm::left_justify("axes", axesWidth + 2)
         << "count  bytes/device\n";
      for (auto &[key, row] : table)
        os << "  " << llvm::left_justify(key.first, kindWidth + 2)
           << llvm::left_justify(key.second, axesWidth + 2)
           << llvm::left_justify(std::to_string(row.first), 7) << row.second
           << "\n";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
