//===- HtmlReport.cpp - the plan of per-device programs as an HTML page ----===//
//
// part-html-report writes what lib/Report/ModuleReport.cpp reads from the
// module as one page (report/Page.h). partition-opt --part-report=FILE
// appends it to the pipeline.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Transforms/Passes.h"
#include "partition/Report/ModuleReport.h"
#include "partition/runtime/Files.h"

namespace partition::part {
#define GEN_PASS_DEF_PARTHTMLREPORTPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

#define DEBUG_TYPE "part-html-report"

using namespace mlir;

namespace {

struct PartHtmlReportPass
    : public partition::part::impl::PartHtmlReportPassBase<PartHtmlReportPass> {
  using PartHtmlReportPassBase::PartHtmlReportPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (output.empty()) {
      module.emitError() << "part-html-report needs output=FILE";
      return signalPassFailure();
    }
    auto loaded = partition::runtime::Cluster::load(cluster);
    if (!loaded.isOk()) {
      module.emitError() << "part-html-report: "
                         << loaded.status().message();
      return signalPassFailure();
    }
    std::string error;
    std::optional<partition::report::Report> page =
        partition::buildModuleReport(module, *loaded, &error);
    if (!page) {
      module.emitError() << "part-html-report: " << error;
      return signalPassFailure();
    }
    // The tools' one writer of outputs: a FIFO nobody reads, a directory or
    // a full disk is an error, never a hang or a partial page.
    partition::runtime::StatusOr<partition::runtime::OutputFile> file =
        partition::runtime::checkOutputFile(output, "part-html-report");
    partition::runtime::Status written =
        file.isOk() ? partition::runtime::writeOutputFile(
                          *file, partition::report::renderHtml(*page))
                    : file.status();
    if (!written.isOk()) {
      module.emitError() << "part-html-report: " << written.message();
      return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
