//===- Plan.h - loading and checking execution plans ------------*- C++ -*-===//
//
// A plan file is a FlatBuffer (runtime/plan/plan.fbs). Loading checks it in
// two layers: the FlatBuffers verifier (every offset inside the buffer), then
// validatePlan (every index, shape, dtype and attribute), so nothing that
// runs later can read out of bounds because of a bad file.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_PLAN_H
#define PARTITION_RUNTIME_PLAN_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Files.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Status.h"
#include "partition/runtime/plan/plan_generated.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace partition::runtime {

/// The plan format version this runtime reads (plan.fbs changes that an
/// older reader would misread bump it; the compiler writes the same number).
/// Version 5 added the checksum after the FlatBuffer; version 6 replaced the
/// positional integer and float attributes of kernels and collectives by
/// one table of named fields per kind (KernelAttrs, CollectiveAttrs);
/// version 7 added the Fused opcode (elementwise chains in one pass);
/// version 8 added Binding.stored_shape (a parameter viewed in another
/// shape than weights files store it in); version 9 added
/// AttentionAttrs.window (sliding-window attention); version 10 added
/// Binding.stored_permutation (a parameter weights files store transposed);
/// version 11 made the pipeline schedule data: Program.fragments,
/// ScheduleStep.fragment, Value.slots (stash slots per micro-batch in
/// flight) and Binding.micro_batches (an input fed whole, read one
/// micro-batch per step); version 12 added the AttentionGrad opcode
/// (attention's backward in blocks of query rows); version 13 added TopK,
/// ExpertDispatch and ExpertCombine (mixture-of-experts routing).
constexpr uint32_t kFormatVersion = 13;

/// Limits of what a plan describes, far from overflow in any arithmetic on
/// sizes: a dimension, the elements or bytes of a value (and of a binding's
/// global shape, and of an arena), and the ranks of a mesh and of the world.
/// The loader rejects a plan beyond them; the compiler does not write one.
constexpr int64_t kMaxPlanDim = int64_t(1) << 40;
constexpr int64_t kMaxPlanBytes = int64_t(1) << 50;
constexpr int64_t kMaxPlanRanks = int64_t(1) << 20;

/// Arena offsets are multiples of this (the compiler places values so; a
/// cache line, and at least every dtype's size, so kernels' loads are
/// aligned: device buffers start at least this aligned).
constexpr uint64_t kArenaAlignment = 64;

/// The most copies of an arena value (Value.slots) and the most
/// micro-batches of an input (Binding.micro_batches) a plan may ask for.
constexpr uint32_t kMaxSlots = uint32_t(1) << 20;

/// The largest tag a send or receive may carry (what every communicator
/// accepts: Gloo keeps 8 bits of its 64-bit slot for the kind of message).
constexpr int64_t kMaxTransferTag = (int64_t(1) << 56) - 1;

/// The suffix of a fragment that runs its kind's last step in the schedule
/// and completes the sums over the micro-batches there (the mean and the
/// data-parallel reduction of the gradients, overlapping that backward):
/// "B+reduce", "W.1+reduce".
inline constexpr std::string_view kFinalFragmentSuffix = "+reduce";

/// The kind of step a fragment runs: its name without the final suffix
/// ("B.1+reduce" -> "B.1"; "B.1" stays).
inline std::string_view fragmentKind(std::string_view fragment) {
  size_t n = kFinalFragmentSuffix.size();
  if (fragment.size() > n &&
      fragment.substr(fragment.size() - n) == kFinalFragmentSuffix)
    fragment.remove_suffix(n);
  return fragment;
}

/// The name of a schedule step that runs fragment `fragment` on micro-batch
/// `microBatch`, as traces and messages show it: the micro-batch inserted
/// before the chunk or final suffix ("F", 3 -> "F3"; "B.1", 2 -> "B2.1";
/// "Bi", 3 -> "Bi3"; "B+reduce", 7 -> "B7+reduce"); "P" and "U", which run
/// once per step, unchanged. Inline: the compiler, which links only the plan
/// format, may name steps too.
inline std::string fragmentStepName(std::string_view fragment,
                                    uint32_t microBatch) {
  if (fragment == "P" || fragment == "U")
    return std::string(fragment);
  size_t dot = std::min(fragment.find_first_of(".+"), fragment.size());
  return std::string(fragment.substr(0, dot)) + std::to_string(microBatch) +
         std::string(fragment.substr(dot));
}

/// The bytes from one copy of a slotted arena value (Value.slots) to the
/// next: its bytes rounded up to the arena alignment.
inline uint64_t slotStride(int64_t valueBytes) {
  return (uint64_t(valueBytes) + kArenaAlignment - 1) / kArenaAlignment *
         kArenaAlignment;
}

/// Transfers are identified by (channel, micro-batch): a fragment step's
/// by its micro-batch, a whole-program step's (fragment -1) by 0. The tag
/// is channel * tagMicroBatches + microBatch, where tagMicroBatches is
/// transferTagMicroBatches of the plan, so plans without fragment steps tag
/// by channel alone (as before format 11). The loader checks every tag is
/// at most kMaxTransferTag.
inline int64_t transferTag(int64_t channel, uint32_t microBatch,
                           uint64_t tagMicroBatches) {
  return channel * int64_t(tagMicroBatches) + int64_t(microBatch);
}

/// 1 + the highest micro-batch of the plan's fragment steps (1 when it has
/// none).
uint64_t transferTagMicroBatches(const plan::Plan &plan);

/// The micro-batch a schedule step's transfers are identified by.
inline uint32_t transferMicroBatch(const plan::ScheduleStep &step) {
  return step.fragment() < 0 ? 0 : step.micro_batch();
}

/// A plan file is the size-prefixed FlatBuffer followed by this many bytes:
/// the 64-bit FNV-1a (fnv1a64) of every byte before them, little-endian.
constexpr size_t kPlanChecksumBytes = 8;

/// Appends the checksum to a finished size-prefixed plan buffer (what every
/// writer of plan files does last; LoadedPlan checks and strips it).
inline void appendPlanChecksum(std::vector<uint8_t> &bytes) {
  uint64_t sum = fnv1a64(bytes.data(), bytes.size());
  for (size_t i = 0; i < kPlanChecksumBytes; ++i)
    bytes.push_back(uint8_t(sum >> (8 * i)));
}

/// A plan held in memory after it passed verification and validation.
class LoadedPlan {
public:
  /// Checks `bytes` (named `source` in messages: the size prefix, the
  /// checksum, then the contents) and keeps them.
  static StatusOr<LoadedPlan> fromBytes(std::vector<uint8_t> bytes,
                                        std::string source);
  /// Reads and checks the plan file at `path`.
  static StatusOr<LoadedPlan> fromFile(const std::string &path);

  const plan::Plan &root() const { return *root_; }
  const std::string &source() const { return *source_; }
  /// 1 + the highest rank any mesh uses.
  int worldSize() const { return worldSize_; }
  /// A readable listing of the plan: meshes, bindings, instructions, memory.
  std::string dump() const;

private:
  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::shared_ptr<const std::string> source_;
  const plan::Plan *root_ = nullptr;
  int worldSize_ = 0;
};

/// Checks a verified plan's contents; the message names the program, the
/// instruction or value and the numbers.
Status validatePlan(const plan::Plan &plan);

// The plan's dtypes are the runtime's (DType.h), number for number.
static_assert(int(plan::DType::F32) == int(DType::F32) &&
                  int(plan::DType::F16) == int(DType::F16) &&
                  int(plan::DType::BF16) == int(DType::BF16) &&
                  int(plan::DType::I32) == int(DType::I32) &&
                  int(plan::DType::I64) == int(DType::I64) &&
                  plan::DType::MAX == plan::DType::I64,
              "plan.fbs and DType.h disagree on the element types");

/// Runtime dtype of a plan dtype.
inline DType toDType(plan::DType type) { return static_cast<DType>(type); }

/// Plan dtype of a runtime dtype.
inline plan::DType toPlanDType(DType type) {
  return static_cast<plan::DType>(type);
}

/// Bytes of a plan value (elements times element size).
int64_t valueBytes(const plan::Value &value);

/// The attributes of a kernel of a validated plan, unpacked (none when it
/// has none).
KernelAttrs unpackKernelAttrs(const plan::KernelInst &kernel);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_PLAN_H
