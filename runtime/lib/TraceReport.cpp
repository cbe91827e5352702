//===- TraceReport.cpp - a run's traces as an HTML page -------------------===//

#include "partition/runtime/TraceReport.h"

#include <algorithm>
#include <cstdio>
#include <map>

using namespace partition::runtime;
using partition::report::Cell;

namespace {

std::string percent(double part, double whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%",
                whole > 0 ? 100 * part / whole : 0.0);
  return buffer;
}

std::string microseconds(double us) {
  return partition::report::formatSeconds(us * 1e-6);
}

/// The most spans the timeline draws (a page stays a few MB).
constexpr size_t kMaxSpans = 20000;

} // namespace

partition::report::Report
partition::runtime::traceReport(const std::vector<std::vector<TraceEvent>> &ranks,
                                const std::string &title) {
  report::Report page;
  page.title = "partition-run trace: " + title;
  double begin = 0, end = 0;
  bool any = false;
  int64_t steps = 0;
  for (const std::vector<TraceEvent> &events : ranks)
    for (const TraceEvent &e : events) {
      begin = any ? std::min(begin, e.startUs) : e.startUs;
      end = any ? std::max(end, e.startUs + e.durationUs)
                : e.startUs + e.durationUs;
      any = true;
      steps = std::max(steps, e.step + 1);
    }
  page.subtitle = std::to_string(ranks.size()) + " rank" +
                  (ranks.size() == 1 ? "" : "s") + ", " +
                  std::to_string(steps) + " step" + (steps == 1 ? "" : "s") +
                  " measured";
  page.summary.push_back({"ranks", std::to_string(ranks.size())});
  page.summary.push_back({"steps", std::to_string(steps)});
  page.summary.push_back({"wall time", microseconds(end - begin)});
  if (!any) {
    page.notes.push_back("the trace holds no events");
    return page;
  }

  // --- where each rank's time went ------------------------------------------
  report::BarChart where;
  where.id = "where";
  where.title = "Where each rank's time went (compute lane)";
  where.unit = "ms";
  report::Table perRank;
  perRank.id = "ranks";
  perRank.title = "Ranks";
  perRank.columns = {"rank",         "kernels", "collectives on compute",
                     "waits",        "idle",    "communication lane busy",
                     "hidden by compute"};
  // opcode, category -> count, microseconds
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, double>>
      byOpcode;
  for (size_t r = 0; r < ranks.size(); ++r) {
    double kernels = 0, collectivesOnCompute = 0, waits = 0, issue = 0,
           lane = 0;
    double first = 0, last = 0;
    bool seen = false;
    for (const TraceEvent &e : ranks[r]) {
      auto &row = byOpcode[{e.name, e.category}];
      ++row.first;
      row.second += e.durationUs;
      if (e.track == TraceTrack::Communication) {
        lane += e.durationUs;
        continue;
      }
      first = seen ? std::min(first, e.startUs) : e.startUs;
      last = seen ? std::max(last, e.startUs + e.durationUs)
                  : e.startUs + e.durationUs;
      seen = true;
      if (e.category == "kernel")
        kernels += e.durationUs;
      else if (e.category == "wait")
        waits += e.durationUs;
      else if (e.category == "issue")
        issue += e.durationUs;
      else
        collectivesOnCompute += e.durationUs;
    }
    double span = last - first;
    double idle = std::max(0.0, span - kernels - waits - issue -
                                    collectivesOnCompute);
    report::Bar bar;
    bar.label = "rank " + std::to_string(r);
    bar.parts = {{"kernel", kernels / 1e3},
                 {"collective", (collectivesOnCompute + issue) / 1e3},
                 {"wait", waits / 1e3},
                 {"idle", idle / 1e3}};
    bar.total = microseconds(span);
    where.bars.push_back(std::move(bar));
    // Communication the compute lane did not wait for ran beside it.
    double hidden = std::max(0.0, lane - waits);
    perRank.rows.push_back(
        {Cell::number(std::to_string(r)),
         Cell::number(microseconds(kernels) + " (" + percent(kernels, span) +
                      ")"),
         Cell::number(microseconds(collectivesOnCompute + issue)),
         Cell::number(microseconds(waits) + " (" + percent(waits, span) + ")"),
         Cell::number(microseconds(idle)),
         Cell::number(microseconds(lane)),
         Cell::number(percent(hidden, lane))});
  }
  where.caption = "Kernels, collectives run or issued on the compute lane, "
                  "waits for the communication lane, and gaps, from each "
                  "rank's first compute event to its last.";
  page.charts.push_back(std::move(where));

  // --- the measured timeline ----------------------------------------------
  report::Timeline t;
  t.title = steps > 1 ? "Measured timeline of step 0 (of " +
                            std::to_string(steps) + ")"
                      : "Measured timeline";
  t.unit = "ms";
  double stepBegin = end;
  for (const std::vector<TraceEvent> &events : ranks)
    for (const TraceEvent &e : events)
      if (e.step == 0)
        stepBegin = std::min(stepBegin, e.startUs);
  size_t drawn = 0, left = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    report::Lane compute, communication;
    compute.name = "rank " + std::to_string(r);
    communication.name = "rank " + std::to_string(r) + " comm";
    for (const TraceEvent &e : ranks[r]) {
      if (e.step != 0)
        continue;
      if (drawn >= kMaxSpans) {
        ++left;
        continue;
      }
      ++drawn;
      report::Span s{e.name, e.category, (e.startUs - stepBegin) / 1e3,
                     e.durationUs / 1e3};
      (e.track == TraceTrack::Communication ? communication : compute)
          .spans.push_back(std::move(s));
    }
    t.lanes.push_back(std::move(compute));
    if (!communication.spans.empty())
      t.lanes.push_back(std::move(communication));
  }
  t.caption = "Each rank's compute lane (kernels, collectives issued, waits) "
              "and, under it, its communication lane (collectives and "
              "transfers as they ran)." +
              (left ? " " + std::to_string(left) + " spans left out." : "");
  page.timelines.push_back(std::move(t));

  // --- the instructions that took the most time ---------------------------
  report::Table top;
  top.id = "instructions";
  top.title = "Time by opcode";
  top.columns = {"opcode", "category", "count", "total", "mean", "share"};
  std::vector<std::pair<std::pair<std::string, std::string>,
                        std::pair<int64_t, double>>>
      sorted(byOpcode.begin(), byOpcode.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](auto &a, auto &b) {
    return a.second.second > b.second.second;
  });
  double total = 0;
  for (auto &[key, row] : sorted)
    total += row.second;
  for (auto &[key, row] : sorted) {
    if (top.rows.size() == 40) {
      ++top.omitted;
      continue;
    }
    top.rows.push_back({key.first, key.second,
                        Cell::number(std::to_string(row.first)),
                        Cell::number(microseconds(row.second)),
                        Cell::number(microseconds(row.second / row.first)),
                        Cell::number(percent(row.second, total))});
  }
  top.caption = "Summed over every rank and step; the share is of all "
                "traced time (both lanes).";
  page.tables.push_back(std::move(top));
  page.tables.push_back(std::move(perRank));
  return page;
}
