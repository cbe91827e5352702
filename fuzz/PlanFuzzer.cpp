//===- PlanFuzzer.cpp - fuzz the plan loader ------------------------------===//
//
// Input: the size-prefixed FlatBuffer of a plan, without the checksum a
// plan file ends with: the target appends the right checksum, so mutations
// reach the FlatBuffers verifier and validatePlan instead of all stopping at
// the checksum (which a changed byte fails by design). Loads it and, when
// accepted, lists it; maps the blocks of parameters viewed in another shape
// than they are stored in (Binding.stored_shape, transposed by
// stored_permutation) onto the stored tensor as weight loading does,
// checking every piece lies inside both and the pieces tile the block; then prepares rank 0's part on a CPU device and loads its
// parameters from a source that checks each block it is asked for lies
// inside its tensor: memory is allocated but nothing runs. Communicators are
// never created (a stub factory refuses), so a plan whose rank 0 needs one
// stops there with an error.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Executor.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Sharding.h"
#include "partition/runtime/StoredShape.h"
#include "partition/runtime/cpu/CpuDevice.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

using namespace partition::runtime;
namespace plan = partition::plan;

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

/// Elements of `shape`.
int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// True when the block at `offsets` of `shape` lies inside `whole`.
bool inside(const std::vector<int64_t> &offsets,
            const std::vector<int64_t> &shape,
            const std::vector<int64_t> &whole) {
  if (offsets.size() != whole.size() || shape.size() != whole.size())
    return false;
  for (size_t d = 0; d < whole.size(); ++d)
    if (offsets[d] < 0 || shape[d] < 0 || offsets[d] > whole[d] - shape[d])
      return false;
  return true;
}

/// Serves a pattern for every block it is asked for, once it has checked
/// that the block lies inside the tensor.
class CheckingSource final : public ParameterSource {
public:
  Status read(const std::string &, DType dtype,
              const std::vector<int64_t> &globalShape,
              const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &localShape, void *dst) override {
    FUZZ_CHECK(inside(offsets, localShape, globalShape),
               "the executor asked for a block outside its tensor");
    std::memset(dst, 0x3c, size_t(elementsOf(localShape)) * dtypeSize(dtype));
    return Status::ok();
  }
};

/// The pieces of the stored tensor that make up each device's block of a
/// parameter with a stored shape (a few devices of its mesh): inside the
/// stored tensor and the block, as many elements each side, and as many
/// elements in all as the block.
void checkStoredPieces(const plan::Plan &root) {
  for (const plan::Program *program : *root.programs()) {
    if (!program->params())
      continue;
    const plan::Mesh &mesh = *root.meshes()->Get(program->mesh());
    for (const plan::Binding *b : *program->params()) {
      if (!b->stored_shape())
        continue;
      std::vector<int64_t> global(b->global_shape()->begin(),
                                  b->global_shape()->end());
      std::vector<int64_t> file(b->stored_shape()->begin(),
                                b->stored_shape()->end());
      std::vector<int64_t> perm;
      if (b->stored_permutation())
        perm.assign(b->stored_permutation()->begin(),
                    b->stored_permutation()->end());
      FUZZ_CHECK(perm.empty() || isPermutation(perm, file.size()),
                 "an accepted stored permutation is not a permutation");
      std::vector<int64_t> stored = permuteShape(file, perm);
      std::optional<std::vector<size_t>> groups = viewGroups(global, stored);
      FUZZ_CHECK(groups, "an accepted stored shape is not a view");
      const plan::Value &v = *program->values()->Get(b->value());
      std::vector<int64_t> local(v.shape()->begin(), v.shape()->end());
      int64_t devices = int64_t(mesh.ranks()->size());
      for (int64_t d : {int64_t(0), devices / 2, devices - 1}) {
        std::vector<int64_t> offsets =
            shardOffsets(mesh, *b->sharding(), meshCoordinates(mesh, d), local);
        std::vector<int64_t> block = clippedShape(global, offsets, local);
        if (elementsOf(block) > (1 << 16))
          continue; // one piece per row at most: bounded work
        int64_t covered = 0;
        for (const StoredPiece &p :
             storedPieces(global, stored, *groups, offsets, block)) {
          FUZZ_CHECK(inside(p.storedOffsets, p.storedShape, stored),
                     "a stored piece lies outside the stored tensor");
          if (!perm.empty()) {
            std::vector<int64_t> fileOffsets, fileShape;
            unpermuteBlock(perm, p.storedOffsets, p.storedShape, fileOffsets,
                           fileShape);
            FUZZ_CHECK(inside(fileOffsets, fileShape, file),
                       "a permuted piece lies outside the file's tensor");
          }
          FUZZ_CHECK(inside(p.blockOffsets, p.blockShape, block),
                     "a stored piece lands outside its block");
          FUZZ_CHECK(elementsOf(p.storedShape) == elementsOf(p.blockShape),
                     "a stored piece and its place differ in size");
          covered += elementsOf(p.blockShape);
        }
        FUZZ_CHECK(covered == elementsOf(block),
                   "the stored pieces do not tile the block");
      }
    }
  }
}
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
  checkStoredPieces(loaded->root());

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
  if (!executor.isOk())
    return 0;
  // Loading stages each parameter in host memory as well.
  int64_t paramBytes = 0;
  if (const plan::Program *program = (*executor)->program())
    if (program->params())
      for (const plan::Binding *b : *program->params()) {
        paramBytes += valueBytes(*program->values()->Get(b->value()));
        if (paramBytes > kMaxArenaBytes) // each is at most 2^50
          return 0;
      }
  CheckingSource source;
  Status read = (*executor)->loadParameters(source);
  FUZZ_CHECK(read.isOk() || !read.message().empty(), "error without a message");
  return 0;
}
