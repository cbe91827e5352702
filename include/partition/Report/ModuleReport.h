//===- ModuleReport.h - the HTML report of a partitioned module -*- C++ -*-===//
//
// Fills a report page (report/include/partition/report/Page.h) from a module's
// per-device programs (`part.spmd`, pipeline stages included): the meshes and
// the node of each device, memory per program by category (Cost.h's
// residentBytes), the pipeline schedule under the cost model's step costs,
// every collective with its bytes, predicted time and `part.origin`, and the
// parameters with their shardings by layer.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_REPORT_MODULEREPORT_H
#define PARTITION_REPORT_MODULEREPORT_H

#include "partition/report/Page.h"
#include "partition/runtime/Cluster.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace partition {

/// The report of `module` on `cluster`; nullopt with `error` when the module
/// has no per-device program.
std::optional<report::Report>
buildModuleReport(mlir::ModuleOp module, const runtime::Cluster &cluster,
                  std::string *error);

} // namespace partition

#endif // PARTITION_REPORT_MODULEREPORT_H
