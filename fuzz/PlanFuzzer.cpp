//===- PlanFuzzer.cpp - fuzz the plan loader ------------------------------===//
//
// Input: the size-prefixed FlatBuffer of a plan, without the checksum a
// plan file ends with: the target appends the right checksum, so mutations
// reach the FlatBuffers verifier and validatePlan instead of all stopping at
// the checksum (which a changed byte fails by design). Loads it and, when accepted, lists it and prepares rank 0's part on a
// CPU device: memory is allocated but nothing runs. Communicators are never
// created (a stub factory refuses), so a plan whose rank 0 needs one stops
// there with an error.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Executor.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/cpu/CpuDevice.h"

#include <memory>
#include <vector>

using namespace partition::runtime;

namespace {
/// Refuses every communicator: the fuzzer runs one rank and no collectives.
class NoCommunicators final : public CommunicatorFactory {
public:
  explicit NoCommunicators(int worldSize) : worldSize_(worldSize) {}
  int worldRank() const override { return 0; }
  int worldSize() const override { return worldSize_; }
  StatusOr<std::unique_ptr<Communicator>> create(const std::vector<int> &,
                                                 const std::string &) override {
    return PARTITION_ERROR(Unimplemented, "no communicators in the fuzzer");
  }

private:
  int worldSize_;
};

/// The most memory a plan may ask of the CPU device here: larger plans are
/// valid, but allocating them would only measure the machine.
constexpr int64_t kMaxArenaBytes = int64_t(256) << 20;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  appendPlanChecksum(bytes);
  StatusOr<LoadedPlan> loaded =
      LoadedPlan::fromBytes(std::move(bytes), "fuzz.plan");
  FUZZ_CHECK(loaded.isOk() || !loaded.status().message().empty(),
             "error without a message");
  if (!loaded.isOk())
    return 0;
  FUZZ_CHECK(loaded->worldSize() >= 1, "an accepted plan has no rank");
  std::string listing = loaded->dump();
  FUZZ_CHECK(!listing.empty(), "an accepted plan lists as nothing");

  if (const auto *programs = loaded->root().programs())
    for (const partition::plan::Program *program : *programs)
      if (program->arena_bytes() > uint64_t(kMaxArenaBytes))
        return 0;
  static std::unique_ptr<Device> device = cpu::createCpuDevice(1);
  NoCommunicators comms(loaded->worldSize());
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(*loaded, 0, *device, comms);
  FUZZ_CHECK(executor.isOk() || !executor.status().message().empty(),
             "error without a message");
  return 0;
}
