//===- Overlap.cpp - when compute must wait for collectives ---------------===//

#include "partition/runtime/Overlap.h"

using namespace partition::runtime;

namespace {

bool anyOverlap(const std::vector<ByteRange> &a,
                const std::vector<ByteRange> &b) {
  for (const ByteRange &x : a)
    for (const ByteRange &y : b)
      if (x.overlaps(y))
        return true;
  return false;
}

} // namespace

std::vector<int> partition::runtime::planCollectiveWaits(
    const std::vector<InstructionAccess> &instructions) {
  std::vector<int> waits(instructions.size(), -1);
  // Asynchronous instructions issued and not yet waited for, in order.
  std::vector<int> inFlight;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const InstructionAccess &inst = instructions[i];
    if (inst.async) {
      inFlight.push_back(int(i));
      continue;
    }
    // The latest conflicting one; waiting for it retires every earlier one.
    size_t retire = 0;
    for (size_t k = 0; k < inFlight.size(); ++k) {
      const InstructionAccess &c = instructions[inFlight[k]];
      if (anyOverlap(inst.reads, c.writes) ||
          anyOverlap(inst.writes, c.writes) ||
          anyOverlap(inst.writes, c.reads))
        retire = k + 1;
    }
    if (retire) {
      waits[i] = inFlight[retire - 1];
      inFlight.erase(inFlight.begin(), inFlight.begin() + retire);
    }
  }
  return waits;
}
