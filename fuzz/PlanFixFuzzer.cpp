//===- PlanFixFuzzer.cpp - fuzz partition-plan's --fix parser -------------===//
//
// Input: the text of `--fix` (PlanConstraint::parse). A refused text must
// say why in one line starting "--fix: "; an accepted one must hold each
// choice within its bounds, read again the same when written back as
// key=value pairs, and admit the plan made of its own choices.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/Planner/Planner.h"

#include <string>

using namespace partition::planner;

namespace {

/// The constraint as --fix text, in the order PlanConstraint::choices
/// lists the keys.
std::string textOf(const PlanConstraint &c) {
  PlanConfig none;
  std::string text;
  for (const PlanConstraint::Choice &x : c.choices(none))
    text += (text.empty() ? "" : ",") + x.key + "=" + x.fixed;
  return text;
}

/// The plan with every fixed choice of `c` (the rest as PlanConfig has it).
PlanConfig planOf(const PlanConstraint &c) {
  PlanConfig p;
  p.dp = c.dp.value_or(p.dp);
  p.tp = c.tp.value_or(p.tp);
  p.pp = c.pp.value_or(p.pp);
  p.ep = c.ep.value_or(p.ep);
  p.cp = c.cp.value_or(p.cp);
  p.virtualStages = c.virtualStages.value_or(p.virtualStages);
  p.microBatchSize = c.microBatchSize.value_or(p.microBatchSize);
  p.schedule = c.schedule.value_or(p.schedule);
  p.zero = c.zero.value_or(p.zero);
  p.recompute = c.recompute.value_or(p.recompute);
  p.sequenceParallel = c.sequenceParallel.value_or(p.sequenceParallel);
  p.syncPerStep = c.syncPerStep.value_or(p.syncPerStep);
  p.tpOverlap = c.tpOverlap.value_or(p.tpOverlap);
  p.dpOverlap = c.dpOverlap.value_or(p.dpOverlap);
  return p;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::optional<PlanConstraint> fix = PlanConstraint::parse(text, &error);
  if (!fix) {
    FUZZ_CHECK(error.rfind("--fix: ", 0) == 0, "an error without --fix: ");
    return 0;
  }
  for (const std::optional<int64_t> &n :
       {fix->dp, fix->tp, fix->pp, fix->ep, fix->cp, fix->virtualStages})
    FUZZ_CHECK(!n || (*n >= 1 && *n <= kMaxDevices), "a degree's bounds");
  FUZZ_CHECK(!fix->microBatchSize ||
                 (*fix->microBatchSize >= 1 &&
                  *fix->microBatchSize <= kMaxGlobalBatch),
             "the micro-batch size's bounds");
  FUZZ_CHECK(!fix->zero || (*fix->zero >= 0 && *fix->zero <= 3),
             "a ZeRO stage");

  std::string written = textOf(*fix);
  std::optional<PlanConstraint> again = PlanConstraint::parse(written, &error);
  FUZZ_CHECK(again.has_value(), "a written --fix does not parse");
  FUZZ_CHECK(textOf(*again) == written, "--fix changed in a write and read");
  FUZZ_CHECK(!fix->tpOverlap ||
                 (*fix->tpOverlap != 1 && *fix->tpOverlap >= 0 &&
                  *fix->tpOverlap <= 64),
             "tp-overlap's bounds (0, or 2 to 64 chunks)");
  FUZZ_CHECK(fix->admits(planOf(*fix)),
             "a constraint does not admit its own choices");
  return 0;
}
