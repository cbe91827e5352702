//===- Trace.h - execution traces of the ranks ------------------*- C++ -*-===//
//
// What an Executor records when it traces (every instruction, every wait for
// a collective, every collective's run on the communication lane) and the
// Chrome trace event format writer for a whole run: one process per rank,
// one thread ("track") for compute and one for communication.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_TRACE_H
#define PARTITION_RUNTIME_TRACE_H

#include "partition/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::runtime {

/// The track of a trace event.
enum class TraceTrack : int { Compute = 0, Communication = 1 };

/// One timed span of work on a rank, for traces.
struct TraceEvent {
  /// The opcode ("Matmul", "AllReduce", "Send") or "wait".
  std::string name;
  /// "kernel": a kernel, or a collective without communication, on compute;
  /// "issue": a collective handed to the communication lane (compute track);
  /// "wait": compute waiting for the lane, up to instruction `instruction`;
  /// "collective" / "transfer": a collective or send/recv running (on the
  /// communication track, or on compute when collectives are synchronous).
  std::string category;
  TraceTrack track = TraceTrack::Compute;
  double startUs = 0;
  double durationUs = 0;
  /// Index of the instruction in its program (for a wait: the latest
  /// collective it waits for), or -1 (a wait at the end of a step).
  int64_t instruction = -1;
  /// Where the instruction came from: the plan's `loc` of the instruction,
  /// after the name of its schedule step when that runs a fragment ("F3
  /// file:line:col", fragmentStepName in Plan.h; unrolled plans have the
  /// step in the loc itself).
  std::string origin;
  /// For a collective on the communication track: when it was issued
  /// (before startUs when it queued behind an earlier one).
  double issuedUs = 0;
  /// The pass over the schedule (0, 1, ... over an Executor's run() calls;
  /// a program without fragments counts the steps that run it).
  int64_t step = 0;
};

/// Writes `ranks[r]`'s events as process r of a Chrome trace (JSON, trace
/// event format, microseconds from the earliest event), with thread names
/// "compute" and "communication" and each event's origin, instruction and
/// step as args.
Status writeChromeTrace(const std::string &path,
                        const std::vector<std::vector<TraceEvent>> &ranks);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_TRACE_H
