//===- Page.cpp - the HTML report's writer ---------------------------------===//
//
// One self-contained page: a style sheet, then the report's sections, each
// picture an inline SVG whose marks carry their numbers as data- attributes
// and a <title> (the tooltip), with the same numbers as text beside it.
//
//===----------------------------------------------------------------------===//

#include "partition/report/Page.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cctype>
#include <map>
#include <sstream>

using namespace partition::report;

namespace {

const char *kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:#1d232a;margin:0;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:22px;margin:8px 0 2px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d5d9df;
  padding-bottom:4px}
h3{font-size:14px;margin:14px 0 6px}
.subtitle{color:#5b6470;margin:0 0 12px}
.summary{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));
  gap:8px;margin:12px 0}
.summary div{background:#fff;border:1px solid #dde1e6;border-radius:6px;
  padding:6px 10px}
.summary b{display:block;font-size:12px;color:#5b6470;font-weight:500}
.notes li{color:#39414b}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;
  padding:4px 16px 14px;margin:16px 0}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #eceff2;padding:3px 8px;text-align:left;
  vertical-align:top}
th{background:#f1f3f6;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td code,li code{font-size:12px}
tr:target,td:target{background:#fff3bf}
.caption{color:#5b6470;font-size:12px;margin:4px 0}
.legend{font-size:12px;color:#39414b;margin:4px 0}
.legend span{display:inline-block;width:11px;height:11px;border-radius:2px;
  margin:0 4px 0 12px;vertical-align:-1px}
svg{display:block;max-width:100%;height:auto}
svg text{font:11px system-ui,sans-serif;fill:#1d232a}
svg text.light{fill:#fff}
svg text.muted{fill:#5b6470}
)css";

/// Colours by category; anything else gets one from the cycle.
const std::map<std::string, std::string> &palette() {
  static const std::map<std::string, std::string> colours = {
      {"parameters", "#3b6fb6"},    {"gradients", "#e07b39"},
      {"optimizer state", "#6a9f3a"}, {"activations", "#b44b8a"},
      {"workspace", "#8c8c8c"},      {"inputs", "#c9a227"},
      {"compute", "#3b6fb6"},        {"exposed communication", "#d1495b"},
      {"communication", "#d1495b"},  {"bubble", "#c8ccd2"},
      {"F", "#4f86c6"},              {"B", "#e0893e"},
      {"Bi", "#e0893e"},             {"W", "#7aa95c"},
      {"kernel", "#4f86c6"},         {"collective", "#d1495b"},
      {"transfer", "#9b59b6"},       {"issue", "#a0b4cc"},
      {"wait", "#b8bec6"},           {"send", "#9b59b6"},
      {"idle", "#eceff2"},
      {"node0", "#dbe8f6"},          {"node1", "#fde5cf"},
      {"node2", "#dff0d5"},          {"node3", "#f3dcea"},
  };
  return colours;
}

std::string colourOf(const std::string &category) {
  auto it = palette().find(category);
  if (it != palette().end())
    return it->second;
  static const char *cycle[] = {"#5c7cfa", "#f59f00", "#37b24d", "#e64980",
                                "#15aabf", "#7950f2", "#fd7e14", "#868e96"};
  size_t h = std::hash<std::string>{}(category);
  return cycle[h % (sizeof(cycle) / sizeof(cycle[0]))];
}

std::string nodeColour(int64_t node) {
  static const char *cycle[] = {"#dbe8f6", "#fde5cf", "#dff0d5", "#f3dcea",
                                "#e5e0f7", "#fff3bf", "#d3f0ee", "#f1f3f5"};
  return cycle[node % 8];
}

/// A number for an attribute or a coordinate: fixed, no exponent, short.
std::string num(double v) {
  if (!std::isfinite(v))
    return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.10g", v);
  if (std::strchr(buffer, 'e')) // large byte counts: all digits
    std::snprintf(buffer, sizeof(buffer), "%.0f", v);
  return buffer;
}

/// An axis label: three significant digits.
std::string tick(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", v);
  return buffer;
}

std::string px(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

std::string legend(const std::vector<std::string> &categories) {
  std::string s = "<div class=\"legend\">";
  for (const std::string &c : categories)
    s += "<span style=\"background:" + colourOf(c) + "\"></span>" + escape(c);
  return s + "</div>\n";
}

std::string anchorOf(const std::string &text) {
  std::string id;
  for (char c : text)
    id += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(c))
                                                       : '-';
  return id;
}

//===- mesh ---------------------------------------------------------------===//

/// The last axis makes the columns of a block, the one before it its rows,
/// and the others (flattened) the blocks, side by side.
void renderMesh(std::ostringstream &os, const MeshView &mesh) {
  int64_t devices = 1;
  for (auto &[name, size] : mesh.axes)
    devices *= std::max<int64_t>(size, 1);
  size_t n = mesh.axes.size();
  int64_t cols = n >= 1 ? mesh.axes[n - 1].second : 1;
  int64_t rows = n >= 2 ? mesh.axes[n - 2].second : 1;
  int64_t blocks = devices / std::max<int64_t>(cols * rows, 1);
  bool large = devices > 64;
  double cell = large ? 14 : 62, cellH = large ? 14 : 40, gap = large ? 2 : 6;
  // Many rows (dp=128) wrap into chunks of rows drawn side by side.
  int64_t chunk = large ? std::min<int64_t>(rows, 16) : rows;
  int64_t chunks = (rows + chunk - 1) / std::max<int64_t>(chunk, 1);
  int64_t visual = blocks * chunks;
  double blockW = cols * (cell + gap) + gap, blockH = chunk * (cellH + gap) + gap;
  int64_t perLine = std::max<int64_t>(1, int64_t(1100 / (blockW + 16)));
  int64_t lines = (visual + perLine - 1) / perLine;
  double labelH = n > 2 || chunks > 1 ? 16 : 0;
  double width = std::min<int64_t>(visual, perLine) * (blockW + 16) + 40;
  double height = lines * (blockH + labelH + 10) + 24;

  std::string axesText;
  for (size_t i = 0; i < n; ++i)
    axesText += (i ? " x " : "") + mesh.axes[i].first + "=" +
                std::to_string(mesh.axes[i].second);
  os << "<h3 id=\"mesh-" << escape(anchorOf(mesh.name)) << "\">mesh "
     << escape(mesh.name) << ": " << escape(axesText) << ", " << devices
     << (devices == 1 ? " device" : " devices");
  if (!mesh.role.empty())
    os << " (" << escape(mesh.role) << ")";
  os << "</h3>\n";
  os << "<svg class=\"mesh\" data-mesh=\"" << escape(mesh.name)
     << "\" data-devices=\"" << devices << "\" width=\"" << px(width)
     << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " "
     << px(height) << "\" role=\"img\" aria-label=\"mesh " << escape(mesh.name)
     << "\">\n";
  if (n >= 1)
    os << "<text x=\"40\" y=\"12\" class=\"muted\">columns: "
       << escape(mesh.axes[n - 1].first)
       << (n >= 2 ? "; rows: " + escape(mesh.axes[n - 2].first) : "")
       << (n > 2 ? "; blocks: the other axes" : "") << "</text>\n";
  std::vector<int64_t> strides(n, 1);
  for (size_t i = n; i-- > 1;)
    strides[i - 1] = strides[i] * mesh.axes[i].second;
  for (int64_t v = 0; v < visual; ++v) {
    int64_t b = v / chunks, firstRow = (v % chunks) * chunk;
    int64_t endRow = std::min(rows, firstRow + chunk);
    double bx = 40 + (v % perLine) * (blockW + 16);
    double by = 20 + (v / perLine) * (blockH + labelH + 10);
    if (labelH > 0) {
      std::string label;
      int64_t rest = b * rows * cols;
      for (size_t i = 0; i + 2 < n; ++i)
        label += (i ? " " : "") + mesh.axes[i].first + "=" +
                 std::to_string((rest / strides[i]) % mesh.axes[i].second);
      if (chunks > 1)
        label += (label.empty() ? "" : " ") + mesh.axes[n - 2].first + " " +
                 std::to_string(firstRow) + "-" + std::to_string(endRow - 1);
      os << "<text x=\"" << px(bx) << "\" y=\"" << px(by + 11) << "\">"
         << escape(label) << "</text>\n";
    }
    double gy = by + labelH;
    os << "<rect x=\"" << px(bx) << "\" y=\"" << px(gy) << "\" width=\""
       << px(blockW) << "\" height=\"" << px(blockH)
       << "\" rx=\"4\" fill=\"none\" stroke=\"#aab2bd\"/>\n";
    for (int64_t r = firstRow; r < endRow; ++r) {
      // each row is a group of the last axis: outlined
      double ry = gy + (r - firstRow) * (cellH + gap);
      os << "<rect class=\"group\" x=\"" << px(bx + gap / 2) << "\" y=\""
         << px(ry + gap / 2) << "\" width=\""
         << px(cols * (cell + gap)) << "\" height=\"" << px(cellH + gap)
         << "\" rx=\"3\" fill=\"none\" stroke=\"#d0d5dc\""
         << " stroke-dasharray=\"3 2\"/>\n";
      for (int64_t c = 0; c < cols; ++c) {
        int64_t linear = b * rows * cols + r * cols + c;
        int64_t rank = linear < int64_t(mesh.ranks.size()) ? mesh.ranks[linear]
                                                            : linear;
        int64_t node =
            linear < int64_t(mesh.nodes.size()) ? mesh.nodes[linear] : 0;
        std::string coords;
        for (size_t i = 0; i < n; ++i)
          coords += (i ? "," : "") +
                    std::to_string((linear / strides[i]) % mesh.axes[i].second);
        double x = bx + gap + c * (cell + gap), y = ry + gap;
        os << "<g class=\"device\" data-rank=\"" << rank << "\" data-node=\""
           << node << "\" data-coords=\"" << coords << "\"><title>rank "
           << rank << " (" << escape(coords) << "), node " << node
           << "</title><rect x=\"" << px(x) << "\" y=\"" << px(y)
           << "\" width=\"" << px(cell) << "\" height=\"" << px(cellH)
           << "\" rx=\"3\" fill=\"" << nodeColour(node)
           << "\" stroke=\"#7d8793\"/>";
        if (!large)
          os << "<text x=\"" << px(x + 5) << "\" y=\"" << px(y + 15)
             << "\">rank " << rank << "</text><text x=\"" << px(x + 5)
             << "\" y=\"" << px(y + 31) << "\" class=\"muted\">(" << coords
             << ") n" << node << "</text>";
        os << "</g>\n";
      }
    }
  }
  os << "</svg>\n";
  // The groups in words: along each axis, the ranks that talk.
  os << "<ul class=\"groups\">";
  for (size_t a = 0; a < n; ++a) {
    std::vector<std::string> groups;
    for (int64_t linear = 0; linear < devices; ++linear) {
      if ((linear / strides[a]) % mesh.axes[a].second != 0)
        continue;
      // Long groups show their first and last members.
      std::string g = "{";
      int64_t size = mesh.axes[a].second;
      for (int64_t k = 0; k < size; ++k) {
        if (size > 12 && k == 6) {
          g += " ...";
          k = size - 3;
          continue;
        }
        int64_t l = linear + k * strides[a];
        g += (k ? " " : "") +
             std::to_string(l < int64_t(mesh.ranks.size()) ? mesh.ranks[l] : l);
      }
      groups.push_back(g + "}");
    }
    os << "<li><code>" << escape(mesh.axes[a].first) << "</code>: "
       << groups.size() << " groups of " << mesh.axes[a].second << ": ";
    for (size_t g = 0; g < groups.size() && g < 16; ++g)
      os << (g ? " " : "") << groups[g];
    if (groups.size() > 16)
      os << " ... (" << groups.size() - 16 << " more)";
    os << "</li>";
  }
  std::map<int64_t, int64_t> perNode;
  for (int64_t linear = 0; linear < devices; ++linear)
    ++perNode[linear < int64_t(mesh.nodes.size()) ? mesh.nodes[linear] : 0];
  os << "<li>nodes: " << perNode.size() << " (";
  size_t shown = 0;
  for (auto &[node, count] : perNode) {
    if (shown++ == 8) {
      os << ", ...";
      break;
    }
    os << (shown > 1 ? ", " : "") << "node " << node << ": " << count;
  }
  os << ")</li></ul>\n";
}

//===- memory -------------------------------------------------------------===//

void renderMemory(std::ostringstream &os,
                  const std::vector<MemoryRole> &roles) {
  std::vector<std::string> categories;
  double scale = 0;
  for (const MemoryRole &r : roles) {
    double total = 0;
    for (auto &[c, b] : r.bytes) {
      total += b;
      if (std::find(categories.begin(), categories.end(), c) ==
          categories.end())
        categories.push_back(c);
    }
    scale = std::max(scale, total);
  }
  // Bars against the capacity when they fill a visible part of it; else
  // against the largest total (the capacity is then only said).
  double capacity = 0;
  for (const MemoryRole &r : roles)
    capacity = std::max(capacity, r.capacity);
  bool toCapacity = capacity > 0 && scale >= 0.05 * capacity;
  if (toCapacity)
    scale = std::max(scale, capacity);
  if (scale <= 0)
    scale = 1;
  const double left = 190, width = 640, rowH = 34;
  double height = roles.size() * rowH + 10;
  os << legend(categories);
  os << "<svg class=\"memory\" width=\"" << px(left + width + 200)
     << "\" height=\"" << px(height) << "\" viewBox=\"0 0 "
     << px(left + width + 200) << " " << px(height) << "\">\n";
  for (size_t i = 0; i < roles.size(); ++i) {
    const MemoryRole &r = roles[i];
    double y = 6 + i * rowH, x = left, total = 0;
    os << "<g class=\"memory-role\" data-role=\"" << escape(r.role)
       << "\" data-capacity=\"" << num(r.capacity) << "\">";
    os << "<text x=\"0\" y=\"" << px(y + 12) << "\">" << escape(r.role)
       << "</text><text x=\"0\" y=\"" << px(y + 25) << "\" class=\"muted\">"
       << escape(r.devices) << "</text>";
    for (auto &[c, b] : r.bytes) {
      double w = b / scale * width;
      os << "<rect class=\"segment\" data-category=\"" << escape(c)
         << "\" data-bytes=\"" << num(b) << "\" x=\"" << px(x) << "\" y=\""
         << px(y + 2) << "\" width=\"" << px(std::max(w, 0.0))
         << "\" height=\"22\" fill=\"" << colourOf(c) << "\"><title>"
         << escape(c) << ": " << escape(formatBytes(b)) << "</title></rect>";
      x += w;
      total += b;
    }
    if (r.capacity > 0 && toCapacity) {
      double cx = left + r.capacity / scale * width;
      os << "<line x1=\"" << px(cx) << "\" x2=\"" << px(cx) << "\" y1=\""
         << px(y - 2) << "\" y2=\"" << px(y + 28)
         << "\" stroke=\"#d1495b\" stroke-width=\"2\"><title>capacity "
         << escape(formatBytes(r.capacity)) << "</title></line>";
    }
    os << "<text x=\"" << px(left + width + 8) << "\" y=\"" << px(y + 17)
       << "\" class=\"total\" data-bytes=\"" << num(total) << "\">"
       << escape(formatBytes(total));
    if (r.capacity > 0) {
      char pct[32];
      std::snprintf(pct, sizeof(pct), " (%.1f%%)", 100 * total / r.capacity);
      os << " of " << escape(formatBytes(r.capacity)) << pct;
    }
    os << "</text></g>\n";
  }
  os << "</svg>\n";
  if (capacity > 0 && !toCapacity)
    os << "<p class=\"caption\">Drawn to the largest total: every role "
          "holds under 5% of the device's "
       << escape(formatBytes(capacity)) << ".</p>\n";
  // The same figures as a table.
  os << "<table class=\"memory-table\"><tr><th>role</th><th>devices</th>";
  for (const std::string &c : categories)
    os << "<th>" << escape(c) << "</th>";
  os << "<th>total</th><th>capacity</th></tr>\n";
  for (const MemoryRole &r : roles) {
    os << "<tr><td>" << escape(r.role) << "</td><td>" << escape(r.devices)
       << "</td>";
    double total = 0;
    for (const std::string &c : categories) {
      double b = 0;
      for (auto &[k, v] : r.bytes)
        if (k == c)
          b += v;
      total += b;
      os << "<td class=\"num\" data-bytes=\"" << num(b) << "\">"
         << escape(formatBytes(b)) << "</td>";
    }
    os << "<td class=\"num\" data-bytes=\"" << num(total) << "\">"
       << escape(formatBytes(total)) << "</td><td class=\"num\">"
       << (r.capacity > 0 ? escape(formatBytes(r.capacity)) : "-")
       << "</td></tr>\n";
  }
  os << "</table>\n";
}

//===- timeline -----------------------------------------------------------===//

void renderTimeline(std::ostringstream &os, const Timeline &t) {
  double end = 0;
  size_t spans = 0;
  std::vector<std::string> kinds;
  for (const Lane &l : t.lanes)
    for (const Span &s : l.spans) {
      ++spans;
      end = std::max(end, s.start + s.duration);
      if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end())
        kinds.push_back(s.kind);
    }
  if (end <= 0)
    end = 1;
  const double left = 110, width = 820, laneH = 26;
  double height = t.lanes.size() * laneH + 30;
  os << "<h3>" << escape(t.title) << "</h3>\n" << legend(kinds);
  os << "<svg class=\"timeline\" data-end=\"" << num(end) << "\" width=\""
     << px(left + width + 130) << "\" height=\"" << px(height)
     << "\" viewBox=\"0 0 " << px(left + width + 130) << " " << px(height)
     << "\">\n";
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const Lane &l = t.lanes[i];
    double y = 4 + i * laneH;
    os << "<g class=\"lane\" data-lane=\"" << escape(l.name) << "\" data-spans=\""
       << l.spans.size() << "\"><text x=\"0\" y=\"" << px(y + 15) << "\">"
       << escape(l.name) << "</text><rect x=\"" << px(left) << "\" y=\""
       << px(y) << "\" width=\"" << px(width) << "\" height=\""
       << px(laneH - 4) << "\" fill=\"#f1f3f5\"/>";
    for (const Span &s : l.spans) {
      double x = left + s.start / end * width;
      double w = std::max(s.duration / end * width, 0.5);
      os << "<rect class=\"span\" data-kind=\"" << escape(s.kind)
         << "\" data-start=\"" << num(s.start) << "\" data-duration=\""
         << num(s.duration) << "\" x=\"" << px(x) << "\" y=\"" << px(y + 1)
         << "\" width=\"" << px(w) << "\" height=\"" << px(laneH - 6)
         << "\" fill=\"" << colourOf(s.kind)
         << "\" stroke=\"#fff\" stroke-width=\"0.5\">";
      // Tooltips while the page stays small (a 175B plan has 9216 spans).
      if (spans <= 2000)
        os << "<title>" << escape(s.label) << ": " << num(s.start) << " + "
           << num(s.duration) << " " << escape(t.unit) << "</title>";
      os << "</rect>";
      if (w > 7.0 * s.label.size() + 4)
        os << "<text x=\"" << px(x + 3) << "\" y=\"" << px(y + 15)
           << "\" class=\"light\">" << escape(s.label) << "</text>";
    }
    os << "<text x=\"" << px(left + width + 8) << "\" y=\"" << px(y + 15)
       << "\" class=\"note\">" << escape(l.note) << "</text></g>\n";
  }
  double axisY = t.lanes.size() * laneH + 18;
  for (int k = 0; k <= 4; ++k) {
    double x = left + k * width / 4;
    os << "<text x=\"" << px(x) << "\" y=\"" << px(axisY) << "\" class=\"muted\""
       << (k == 4 ? " text-anchor=\"end\"" : "") << ">" << tick(end * k / 4)
       << (k == 4 ? " " + escape(t.unit) : "") << "</text>";
  }
  os << "\n</svg>\n";
  if (!t.caption.empty())
    os << "<p class=\"caption\">" << escape(t.caption) << "</p>\n";
}

//===- bars ---------------------------------------------------------------===//

void renderBars(std::ostringstream &os, const BarChart &chart) {
  std::vector<std::string> categories;
  double scale = 0;
  for (const Bar &b : chart.bars) {
    double total = 0;
    for (auto &[c, v] : b.parts) {
      total += v;
      if (std::find(categories.begin(), categories.end(), c) ==
          categories.end())
        categories.push_back(c);
    }
    scale = std::max(scale, total);
  }
  if (scale <= 0)
    scale = 1;
  const double left = 300, width = 560, rowH = 24;
  double height = chart.bars.size() * rowH + 8;
  os << legend(categories);
  os << "<svg class=\"bars\" id=\"" << escape(chart.id) << "-chart\" width=\""
     << px(left + width + 220) << "\" height=\"" << px(height)
     << "\" viewBox=\"0 0 " << px(left + width + 220) << " " << px(height)
     << "\">\n";
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar &b = chart.bars[i];
    double y = 4 + i * rowH, x = left;
    os << "<g class=\"bar\" data-label=\"" << escape(b.label) << "\">";
    if (b.highlight)
      os << "<rect x=\"0\" y=\"" << px(y - 2) << "\" width=\""
         << px(left + width + 220) << "\" height=\"" << px(rowH)
         << "\" fill=\"#fff3bf\"/>";
    os << "<text x=\"0\" y=\"" << px(y + 13) << "\">" << escape(b.label)
       << "</text>";
    for (auto &[c, v] : b.parts) {
      double w = v / scale * width;
      os << "<rect class=\"segment\" data-category=\"" << escape(c)
         << "\" data-value=\"" << num(v) << "\" x=\"" << px(x) << "\" y=\""
         << px(y) << "\" width=\"" << px(std::max(w, 0.0))
         << "\" height=\"18\" fill=\"" << colourOf(c) << "\"><title>"
         << escape(c) << ": " << num(v) << " " << escape(chart.unit)
         << "</title></rect>";
      x += w;
    }
    os << "<text x=\"" << px(x + 6) << "\" y=\"" << px(y + 13) << "\">"
       << escape(b.total) << (b.note.empty() ? "" : " " + escape(b.note))
       << "</text></g>\n";
  }
  os << "</svg>\n";
  if (!chart.caption.empty())
    os << "<p class=\"caption\">" << escape(chart.caption) << "</p>\n";
}

//===- tables -------------------------------------------------------------===//

void renderTable(std::ostringstream &os, const Table &t) {
  os << "<table id=\"" << escape(t.id) << "-table\"><tr>";
  for (const std::string &c : t.columns)
    os << "<th>" << escape(c) << "</th>";
  os << "</tr>\n";
  for (const std::vector<Cell> &row : t.rows) {
    os << "<tr>";
    for (const Cell &c : row) {
      os << "<td";
      if (c.numeric)
        os << " class=\"num\"";
      if (!c.id.empty())
        os << " id=\"" << escape(c.id) << "\"";
      os << ">";
      if (!c.href.empty()) {
        os << "<a href=\"" << escape(c.href) << "\">" << escape(c.text)
           << "</a>";
      } else {
        size_t at = 0;
        for (const Link &l : c.links) {
          if (l.offset < at || l.offset + l.length > c.text.size())
            continue;
          os << escape(c.text.substr(at, l.offset - at)) << "<a href=\""
             << escape(l.href) << "\">"
             << escape(c.text.substr(l.offset, l.length)) << "</a>";
          at = l.offset + l.length;
        }
        os << escape(c.text.substr(at));
      }
      os << "</td>";
    }
    os << "</tr>\n";
  }
  os << "</table>\n";
  if (t.omitted > 0)
    os << "<p class=\"caption\">" << t.omitted
       << " more rows left out.</p>\n";
  if (!t.caption.empty())
    os << "<p class=\"caption\">" << escape(t.caption) << "</p>\n";
}

} // namespace

std::string partition::report::escape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default:
      // Control characters other than tab and newline have no place in text.
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
        out += "?";
      else
        out += c;
    }
  }
  return out;
}

std::string partition::report::formatBytes(double bytes) {
  char buffer[32];
  const double kib = 1024, mib = kib * 1024, gib = mib * 1024;
  if (bytes >= gib)
    std::snprintf(buffer, sizeof(buffer), "%.2f GiB", bytes / gib);
  else if (bytes >= mib)
    std::snprintf(buffer, sizeof(buffer), "%.1f MiB", bytes / mib);
  else if (bytes >= kib)
    std::snprintf(buffer, sizeof(buffer), "%.1f KiB", bytes / kib);
  else
    std::snprintf(buffer, sizeof(buffer), "%.0f B", bytes);
  return buffer;
}

std::string partition::report::formatCount(double n) {
  const char *units[] = {"", "K", "M", "B", "T"};
  int u = 0;
  while (n >= 1000 && u < 4) {
    n /= 1000;
    ++u;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%s", n, units[u]);
  return buffer;
}

std::string partition::report::formatSeconds(double seconds) {
  char buffer[32];
  if (seconds >= 1)
    std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.3g ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3g us", seconds * 1e6);
  return buffer;
}

std::string partition::report::renderHtml(const Report &report) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
     << "<meta name=\"viewport\" content=\"width=device-width\">"
     << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
        "'none'; style-src 'unsafe-inline'; img-src data:\">"
     << "<title>" << escape(report.title) << "</title><style>" << kStyle
     << "</style></head>\n<body><main>\n";
  os << "<h1>" << escape(report.title) << "</h1>\n";
  if (!report.subtitle.empty())
    os << "<p class=\"subtitle\">" << escape(report.subtitle) << "</p>\n";
  if (!report.summary.empty()) {
    os << "<div class=\"summary\" id=\"summary\">";
    for (auto &[k, v] : report.summary)
      os << "<div data-key=\"" << escape(k) << "\"><b>" << escape(k) << "</b>"
         << escape(v) << "</div>";
    os << "</div>\n";
  }
  if (!report.notes.empty()) {
    os << "<ul class=\"notes\">";
    for (const std::string &n : report.notes)
      os << "<li>" << escape(n) << "</li>";
    os << "</ul>\n";
  }
  // Ranked alternatives first when there are any (partition-plan's page is
  // about the choice), then the pictures of the plan, then the tables.
  for (const BarChart &c : report.charts) {
    os << "<section id=\"" << escape(c.id) << "\"><h2>" << escape(c.title)
       << "</h2>\n";
    renderBars(os, c);
    os << "</section>\n";
  }
  if (!report.meshes.empty()) {
    os << "<section id=\"meshes\"><h2>Devices</h2>\n";
    for (const MeshView &m : report.meshes)
      renderMesh(os, m);
    os << "</section>\n";
  }
  if (!report.memory.empty()) {
    os << "<section id=\"memory\"><h2>Memory per device</h2>\n";
    renderMemory(os, report.memory);
    os << "</section>\n";
  }
  for (size_t i = 0; i < report.timelines.size(); ++i) {
    os << "<section id=\"timeline" << (i ? std::to_string(i) : "")
       << "\" class=\"timeline-section\"><h2>Timeline</h2>\n";
    renderTimeline(os, report.timelines[i]);
    os << "</section>\n";
  }
  for (const Table &t : report.tables) {
    os << "<section id=\"" << escape(t.id) << "\"><h2>" << escape(t.title)
       << "</h2>\n";
    renderTable(os, t);
    os << "</section>\n";
  }
  os << "</main></body></html>\n";
  return os.str();
}
