//===- PageTest.cpp - the HTML report's writer ----------------------------===//
//
// What the browser tests of test/Report do not pin down: names from model
// files reach the page only as text (no markup, no script), numbers print
// in their units, each section appears when it has content and not when
// it has none, and links keep the text around them.
//
//===----------------------------------------------------------------------===//

#include "partition/report/Page.h"

#include <gtest/gtest.h>

using namespace partition::report;

namespace {

Report hostileReport() {
  Report r;
  r.title = "<script>alert(1)</script>";
  r.summary.push_back({"a\"b", "<img src=x onerror=alert(1)>"});
  MeshView m;
  m.name = "@m\"<";
  m.axes = {{"d<p", 2}, {"tp", 2}};
  r.meshes.push_back(m);
  MemoryRole role;
  role.role = "@f' onload='x";
  role.devices = "ranks 0-3";
  role.bytes = {{"parameters", 1024}, {"<u>", 2048}};
  role.capacity = 4096;
  r.memory.push_back(role);
  Table t;
  t.id = "x\"y";
  t.title = "t";
  t.columns = {"<th>"};
  Cell c("</td><script>");
  c.links.push_back({2, 3, "javascript:\"x"});
  t.rows.push_back({c});
  r.tables.push_back(t);
  return r;
}

TEST(ReportPage, NamesFromTheModelAreText) {
  std::string html = renderHtml(hostileReport());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<u>"), std::string::npos);
  EXPECT_EQ(html.find("onload='"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("data-mesh=\"@m&quot;&lt;\""), std::string::npos);
  // A link's text keeps what surrounds it.
  EXPECT_NE(html.find("&lt;/<a href=\"javascript:&quot;x\">td&gt;</a>&lt;script&gt;"),
            std::string::npos);
  // The page forbids scripts and network loads whatever it holds.
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

TEST(ReportPage, EscapeAndUnits) {
  EXPECT_EQ(escape("a&b<c>\"d'"), "a&amp;b&lt;c&gt;&quot;d&#39;");
  EXPECT_EQ(escape(std::string("x\x01y")), "x?y");
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(3.0 * (1 << 20)), "3.0 MiB");
  EXPECT_EQ(formatBytes(80.0 * (1ull << 30)), "80.00 GiB");
  EXPECT_EQ(formatSeconds(2.5), "2.500 s");
  EXPECT_EQ(formatSeconds(0.0123), "12.3 ms");
  EXPECT_EQ(formatSeconds(4.5e-5), "45 us");
}

TEST(ReportPage, SectionsOnlyWithContent) {
  Report empty;
  empty.title = "empty";
  std::string html = renderHtml(empty);
  EXPECT_EQ(html.find("id=\"meshes\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"memory\""), std::string::npos);
  EXPECT_EQ(html.find("class=\"timeline-section\""), std::string::npos);

  Report r = hostileReport();
  Timeline t;
  t.title = "schedule";
  t.unit = "ms";
  t.lanes.push_back({"stage 0", {{"F0", "F", 0, 1}, {"B0", "B", 1, 2}}, "idle 0%"});
  r.timelines.push_back(t);
  html = renderHtml(r);
  EXPECT_NE(html.find("id=\"meshes\""), std::string::npos);
  EXPECT_NE(html.find("id=\"memory\""), std::string::npos);
  EXPECT_NE(html.find("data-lane=\"stage 0\" data-spans=\"2\""),
            std::string::npos);
  EXPECT_NE(html.find("data-kind=\"B\" data-start=\"1\" data-duration=\"2\""),
            std::string::npos);
  // 4 devices of a 2 x 2 mesh, with their coordinates.
  EXPECT_NE(html.find("data-rank=\"3\" data-node=\"0\" data-coords=\"1,1\""),
            std::string::npos);
  // The memory role's total (3 KiB) against its capacity (4 KiB).
  EXPECT_NE(html.find("data-bytes=\"3072\">3.0 KiB of 4.0 KiB (75.0%)"),
            std::string::npos);
}

TEST(ReportPage, Deterministic) {
  EXPECT_EQ(renderHtml(hostileReport()), renderHtml(hostileReport()));
}

} // namespace
