//===- PlanReport.h - the HTML report of partition-plan's search -*- C++ -*-===//
//
// The ranked plans of a search as a page (report/Page.h): each plan's
// predicted step as compute, exposed communication and bubble; and the first
// plan drawn -- its devices over the cluster's nodes, memory per pipeline
// stage against the device, its schedule's timeline under the composed
// costs, and a table per stage.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_REPORT_PLANREPORT_H
#define PARTITION_REPORT_PLANREPORT_H

#include "partition/Planner/Planner.h"
#include "partition/report/Page.h"

#include <string>
#include <vector>

namespace partition {

/// The page of `result`, searched with `options` for the model in `model`
/// (a file name, for the title); `top` plans are ranked on it, and `notes`
/// (the tool's explanation) are listed under the summary.
report::Report buildPlanReport(const planner::SearchResult &result,
                               const planner::SearchOptions &options,
                               const std::string &model, size_t top,
                               const std::vector<std::string> &notes);

} // namespace partition

#endif // PARTITION_REPORT_PLANREPORT_H
