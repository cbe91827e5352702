//===- OpTable.cpp - the ONNX ops the importer translates -----------------===//
//
// One table, filled by each op family's registration, says which op types
// the importer takes at which opsets, how many operands they have, how they
// fold and translate, and which of their operands are host-only (shapes,
// masks). Everything that asks "is this supported?" reads it: the
// unsupported-op and opset diagnostics, the arity check and
// `partition-import --list-ops`.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <cassert>

using namespace partition::import::detail;

std::string OpHandler::opsetRange() const {
  return std::to_string(since) + "-" + std::to_string(until);
}

OpTable::Registration OpTable::onOp(llvm::StringRef opType, int64_t since,
                                    int64_t until) {
  assert(since >= kMinOpset && since <= until && until <= kMaxOpset &&
         "opsets outside the importer's range");
  // A handler that stops before the newest opset the importer takes needs a
  // diagnostic for models beyond it (opsetMismatches has none).
  assert(until == kMaxOpset && "no diagnostic for an op removed by an opset");
  auto [it, inserted] = table.emplace(opType.str(), OpHandler());
  assert(inserted && "an op type is registered once");
  (void)inserted;
  it->second.opType = opType.str();
  it->second.since = since;
  it->second.until = until;
  return Registration(it->second);
}

const OpHandler *OpTable::lookup(llvm::StringRef opType) const {
  auto it = table.find(opType.str());
  return it == table.end() ? nullptr : &it->second;
}

const OpTable &partition::import::detail::opTable() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseOps(t);
    registerLogicOps(t);
    registerShapeOps(t);
    registerReductionOps(t);
    registerNNOps(t);
    registerControlFlowOps(t);
    registerIndexingOps(t);
    return t;
  }();
  return table;
}
