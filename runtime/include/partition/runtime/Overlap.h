//===- Overlap.h - when compute must wait for collectives -------*- C++ -*-===//
//
// Collectives run on a communication lane (a thread on the CPU, a stream on
// a GPU), in program order, while compute goes on with the following
// instructions. The plan's arena reuses memory by liveness computed for
// sequential execution, so compute must wait for an in-flight collective
// before it touches that collective's memory. The rule is evaluated on the
// addresses the instructions actually use, once their buffers are fixed.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_OVERLAP_H
#define PARTITION_RUNTIME_OVERLAP_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace partition::runtime {

/// The bytes [begin, end) of some buffer.
struct ByteRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;

  static ByteRange of(const void *data, size_t bytes) {
    auto p = reinterpret_cast<uintptr_t>(data);
    return {p, p + bytes};
  }
  /// Whether the two share a byte (an empty range shares none).
  bool overlaps(const ByteRange &other) const {
    return begin < other.end && other.begin < end && begin < end &&
           other.begin < other.end;
  }
};

/// The memory one instruction reads and writes, and where it runs.
struct InstructionAccess {
  /// Runs on the communication lane (a collective, a send or a recv).
  bool async = false;
  std::vector<ByteRange> reads, writes;
};

/// For each instruction of a sequence executed in order, the index of the
/// latest asynchronous instruction that must have completed before it
/// starts, or -1 when it need not wait. The lane completes its instructions
/// in order, so waiting for one waits for every earlier one too.
///
/// Rule: an instruction that runs on compute waits for an in-flight
/// asynchronous one when it reads memory that one writes, or writes memory
/// that one reads or writes. An asynchronous instruction never waits: the
/// lane orders it after the earlier asynchronous ones and after the compute
/// issued before it. Whatever is still in flight at the end of the sequence
/// is left to the caller (the executor waits for everything at the end of
/// each step).
std::vector<int>
planCollectiveWaits(const std::vector<InstructionAccess> &instructions);

/// An order in which to run `instructions` (a permutation of their indices)
/// that gives exactly the results of program order, and that runs compute
/// which would wait for an in-flight asynchronous instruction as late as
/// that allows, so that independent compute (the rest of backward) runs
/// while the collective is in flight.
///
/// Constraints: two instructions keep their order when one writes a byte
/// the other reads or writes (each kernel's result depends only on the bytes
/// it reads, so any other exchange changes nothing), and the asynchronous
/// ones keep theirs (every rank issues its collectives in program order).
/// Among the instructions whose predecessors have run, the first in program
/// order that is asynchronous or touches no in-flight instruction's memory
/// (planCollectiveWaits' rule) goes next; only when there is none does the
/// first of them go, waiting.
std::vector<int>
scheduleForOverlap(const std::vector<InstructionAccess> &instructions);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_OVERLAP_H
