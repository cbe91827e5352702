//===- Trace.cpp - Chrome trace event format writer -----------------------===//
//
// Complete ("X") events, one process per rank and one thread per track, and
// metadata ("M") events naming them. Loads in Perfetto and chrome://tracing.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Trace.h"
#include "partition/runtime/Files.h"

#include "Json.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace partition::runtime;

namespace {

/// `s` as a JSON string literal.
std::string quote(const std::string &s) {
  std::string out;
  detail::appendJsonString(out, s);
  return out;
}

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", x);
  return buffer;
}

} // namespace

Status partition::runtime::writeChromeTrace(
    const std::string &path,
    const std::vector<std::vector<TraceEvent>> &ranks) {
  double origin = 0;
  bool any = false;
  for (const auto &events : ranks)
    for (const TraceEvent &e : events) {
      double first =
          std::min(e.startUs, e.issuedUs > 0 ? e.issuedUs : e.startUs);
      origin = any ? std::min(origin, first) : first;
      any = true;
    }
  std::ostringstream out;
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  auto next = [&]() -> std::ostringstream & {
    out << (first ? "\n" : ",\n");
    first = false;
    return out;
  };
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    next() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << rank
           << ",\"args\":{\"name\":\"rank " << rank << "\"}}";
    next() << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << rank
           << ",\"args\":{\"sort_index\":" << rank << "}}";
    for (int track = 0; track < 2; ++track)
      next() << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << rank
             << ",\"tid\":" << track << ",\"args\":{\"name\":\""
             << (track == 0 ? "compute" : "communication") << "\"}}";
    for (const TraceEvent &e : ranks[rank]) {
      next() << "{\"name\":" << quote(e.name)
             << ",\"cat\":" << quote(e.category)
             << ",\"ph\":\"X\",\"ts\":" << number(e.startUs - origin)
             << ",\"dur\":" << number(e.durationUs) << ",\"pid\":" << rank
             << ",\"tid\":" << static_cast<int>(e.track)
             << ",\"args\":{\"instruction\":" << e.instruction
             << ",\"step\":" << e.step;
      if (!e.origin.empty())
        out << ",\"origin\":" << quote(e.origin);
      if (e.issuedUs > 0)
        out << ",\"issued\":" << number(e.issuedUs - origin)
            << ",\"queued_us\":" << number(e.startUs - e.issuedUs);
      out << "}}";
    }
  }
  out << "\n]}\n";
  PARTITION_ASSIGN_OR_RETURN(OutputFile file, checkOutputFile(path, "--trace"));
  return writeOutputFile(file, out.str());
}
