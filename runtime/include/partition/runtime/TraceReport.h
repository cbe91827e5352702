//===- TraceReport.h - a run's traces as an HTML page -----------*- C++ -*-===//
//
// What partition-run --trace recorded, summarised in the report's page style
// (report/Page.h): the measured timeline per rank (compute and communication
// lanes), where each rank's time went (kernels, collectives and transfers,
// waits, idle), and the instructions that took the most time. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_TRACEREPORT_H
#define PARTITION_RUNTIME_TRACEREPORT_H

#include "partition/report/Page.h"
#include "partition/runtime/Trace.h"

#include <string>
#include <vector>

namespace partition::runtime {

/// The page of `ranks[r]`'s events; `title` names the plan. The timeline
/// shows the first step when the run has several (every step's spans would
/// not fit), the tables sum all of them.
report::Report traceReport(const std::vector<std::vector<TraceEvent>> &ranks,
                           const std::string &title);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_TRACEREPORT_H
