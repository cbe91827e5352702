//===- Page.h - the HTML report as data, and its writer ---------*- C++ -*-===//
//
// What a partition report shows (docs/design/2026-12-04-report-check-progress.md):
// meshes with each device's node, memory by category per device role against
// its capacity, a timeline of lanes (pipeline stages, or a trace's ranks),
// tables (collectives, shardings by layer, where time went) and ranked
// alternatives. `renderHtml` writes one self-contained page: inline CSS and
// SVG, anchors for links, no script, no network. Each number a picture shows
// is also text in the DOM (and a data- attribute on its mark).
//
// No MLIR: partition-opt, partition-plan and partition-run fill it.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_REPORT_PAGE_H
#define PARTITION_REPORT_PAGE_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partition::report {

/// A device mesh: its axes (outermost first) and, per device in row-major
/// order of its coordinates, its world rank and node.
struct MeshView {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> axes;
  std::vector<int64_t> ranks; ///< by linear index; empty: 0, 1, ...
  std::vector<int64_t> nodes; ///< by linear index; empty: all on node 0
  std::string role;           ///< what its devices run ("stage 0", ...)
};

/// Bytes one device of a role holds at its peak, by category, against the
/// device's capacity (0: unknown).
struct MemoryRole {
  std::string role;    ///< "@gpt_stage0", "stage 1", ...
  std::string devices; ///< "ranks 0-3"
  std::vector<std::pair<std::string, double>> bytes; ///< category, bytes
  double capacity = 0;
};

/// A labelled span of a lane; `kind` picks its colour ("F", "B", "Bi", "W",
/// "send", "kernel", "collective", "wait", ...).
struct Span {
  std::string label;
  std::string kind;
  double start = 0, duration = 0; ///< in the timeline's unit
};

struct Lane {
  std::string name;
  std::vector<Span> spans;
  std::string note; ///< printed after the lane ("idle 12.5%")
};

struct Timeline {
  std::string title;
  std::string unit; ///< "ms", "us", "unit costs"
  std::vector<Lane> lanes;
  std::string caption;
};

/// A part of a cell's text that links elsewhere: `length` characters from
/// `offset`, to `href` ("#arg-gpt2-6").
struct Link {
  size_t offset = 0, length = 0;
  std::string href;
};

/// A table cell: text, an optional link target for all of it ("#op-12") or
/// links on parts of it, and an optional id (the anchor others link to).
struct Cell {
  std::string text;
  std::string href;
  std::vector<Link> links; ///< in order, not overlapping
  std::string id;
  bool numeric = false;
  Cell() = default;
  Cell(std::string text) : text(std::move(text)) {}
  Cell(const char *text) : text(text) {}
  static Cell number(std::string text) {
    Cell c(std::move(text));
    c.numeric = true;
    return c;
  }
  static Cell link(std::string text, std::string href) {
    Cell c(std::move(text));
    c.href = std::move(href);
    return c;
  }
};

struct Table {
  std::string id; ///< the section's anchor and the table's CSS id
  std::string title;
  std::string caption;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  /// Rows left out (the table keeps the first `rows`); said under it.
  int64_t omitted = 0;
};

/// One bar of a ranked list: its parts (stacked, in order) and a total.
struct Bar {
  std::string label;
  std::vector<std::pair<std::string, double>> parts; ///< category, value
  std::string total; ///< printed after the bar ("12.4 ms")
  std::string note;  ///< after the total ("does not fit")
  bool highlight = false;
};

struct BarChart {
  std::string id;
  std::string title;
  std::string unit;
  std::vector<Bar> bars;
  std::string caption;
};

struct Report {
  std::string title;
  std::string subtitle;
  std::vector<std::pair<std::string, std::string>> summary;
  std::vector<MeshView> meshes;
  std::vector<MemoryRole> memory;
  std::vector<Timeline> timelines;
  std::vector<BarChart> charts;
  std::vector<Table> tables;
  /// Lines under the summary, in order ("why", what was left out).
  std::vector<std::string> notes;
};

/// The page. Deterministic: the same report gives the same bytes.
std::string renderHtml(const Report &report);

/// (The tools write the page with the runtime's checked outputs,
/// partition/runtime/Files.h, as every output file of theirs.)

/// "1.5 GiB", "310 MiB", "12 KiB", "512 B".
std::string formatBytes(double bytes);
/// "1.234 s", "12.3 ms", "45.6 us".
std::string formatSeconds(double seconds);
/// "216.4K", "175.2B", "1.0T": a count in thousands.
std::string formatCount(double n);
/// HTML text with &, <, >, " and ' escaped.
std::string escape(const std::string &text);

} // namespace partition::report

#endif // PARTITION_REPORT_PAGE_H
