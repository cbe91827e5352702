//===- Executor.h - runs a plan on one rank ---------------------*- C++ -*-===//
//
// An Executor holds one rank's share of a plan: the arena, the persistent
// parameters, the inputs, and the communicators of every group the rank's
// program uses. run() walks the schedule's steps of the rank's program, each
// a fragment of its instructions (or all of them) on one micro-batch; by
// default collectives run asynchronously on a communication lane (a thread
// on the CPU, a second stream with events on a GPU), and compute waits for
// one only where it touches its memory (Overlap.h).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_EXECUTOR_H
#define PARTITION_RUNTIME_EXECUTOR_H

#include "partition/runtime/Communicator.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Overlap.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/Tensor.h"
#include "partition/runtime/Trace.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace partition::runtime {

/// Where a rank's parameter slices come from (a safetensors file, random
/// initialisation, a checkpoint).
class ParameterSource {
public:
  virtual ~ParameterSource() = default;
  /// Fills `hostDst` with the block at `offsets` of shape `localShape` of
  /// parameter `name`, whose whole value has `globalShape` and `dtype`.
  virtual Status read(const std::string &name, DType dtype,
                      const std::vector<int64_t> &globalShape,
                      const std::vector<int64_t> &offsets,
                      const std::vector<int64_t> &localShape,
                      void *hostDst) = 0;
  /// Whether tensors are stored in the shape weights files have
  /// (Binding.stored_shape, where a plan gives one): the executor then asks
  /// for the pieces of that shape a block of the program's view spans.
  /// False for a source that stores the program's own view (a checkpoint).
  virtual bool readsStoredShapes() const { return true; }
};

/// Reads the block at `offsets` of shape `block` of parameter `name`, which
/// the program views as `global` and `source` stores as `stored`, into
/// `dst` (row-major, `block`): the view reshapes the stored tensor, or
/// transpose(stored, perm) when `perm` is not empty (StoredShape.h). One
/// read of the stored tensor per piece of it the block spans, each
/// transposed into the view's order. An error when `global` does not view
/// the stored layout.
Status readStoredBlock(ParameterSource &source, const std::string &name,
                       DType dtype, const std::vector<int64_t> &global,
                       const std::vector<int64_t> &stored,
                       const std::vector<int64_t> &perm,
                       const std::vector<int64_t> &offsets,
                       const std::vector<int64_t> &block, void *dst);

/// A tensor in host memory.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// How an Executor runs.
struct ExecutorOptions {
  /// Record a TraceEvent per instruction, wait and collective (trace()).
  bool trace = false;
  /// Run collectives, sends and recvs on a communication lane while compute
  /// goes on; false runs each one to completion where it stands in the
  /// program (the results are bitwise the same either way).
  bool asyncCollectives = true;
  /// Fault injection (partition-run --fail-step): `fault` is called before
  /// instruction `faultInstruction` (its index in the program; when
  /// negative, the middle one of the order they run in) in run() number
  /// `faultRun` (0 for the first), the first time that run reaches it (a
  /// fragment runs once per micro-batch). Its error ends that run() as the
  /// instruction's own would: in the instruction's context, with everything
  /// already issued completed.
  std::function<Status()> fault;
  int64_t faultRun = -1;
  int64_t faultInstruction = -1;
};

class CollectiveLane;

/// Bytes an Executor allocated on its device, by what they hold.
struct MemoryUse {
  int64_t parameters = 0; ///< `parameter` bindings
  int64_t state = 0;      ///< `state` bindings (optimizer state)
  int64_t constants = 0;  ///< `constant` bindings
  int64_t inputs = 0;     ///< `input` and `label` bindings
  int64_t arena = 0;      ///< the program's arena (activations, temporaries)
  int64_t scratch = 0;    ///< collectives' staging buffers (their largest need)
  /// Everything but scratch: what the plan itself asks for.
  int64_t planned() const {
    return parameters + state + constants + inputs + arena;
  }
  int64_t total() const { return planned() + scratch; }
};

class Executor {
public:
  ~Executor();

  /// Prepares `worldRank`'s part of `plan` on `device`: allocates memory and
  /// creates the communicators of every group its program uses (a collective
  /// step: every rank of the world must call create).
  static StatusOr<std::unique_ptr<Executor>>
  create(const LoadedPlan &plan, int worldRank, Device &device,
         CommunicatorFactory &comms, ExecutorOptions options = {});
  /// As above, with default options but for `trace`.
  static StatusOr<std::unique_ptr<Executor>>
  create(const LoadedPlan &plan, int worldRank, Device &device,
         CommunicatorFactory &comms, bool trace) {
    ExecutorOptions options;
    options.trace = trace;
    return create(plan, worldRank, device, comms, options);
  }

  /// True when some program of the plan runs on this rank.
  bool hasProgram() const { return program_ != nullptr; }
  /// Mesh coordinates of this rank in its program's mesh.
  const std::vector<int64_t> &coordinates() const { return coordinates_; }
  const plan::Program *program() const { return program_; }
  const plan::Mesh *mesh() const { return mesh_; }

  /// Loads this rank's slice of every parameter; constants come from the plan.
  Status loadParameters(ParameterSource &source);
  /// Copies this rank's block of input `name` out of the whole value (of a
  /// micro-batched input, every micro-batch's rows).
  Status setInput(const std::string &name, const HostTensor &whole);
  /// Runs the schedule once: this rank's steps in order, each its
  /// fragment's instructions (or the whole program's) on its micro-batch,
  /// then the updates of parameters and state. Every collective it issued
  /// has completed when it returns, also on error.
  Status run();
  /// This rank's block of output `name`.
  StatusOr<HostTensor> output(const std::string &name);
  /// This rank's block of persistent value `name` (a parameter, state or
  /// constant binding), as it is now: after run(), with its updates applied.
  StatusOr<HostTensor> parameter(const std::string &name);

  /// Every event recorded so far (with ExecutorOptions::trace).
  const std::vector<TraceEvent> &trace() const { return trace_; }
  /// The number of instructions of this rank's program.
  size_t instructionCount() const { return order_.size(); }
  /// The bytes this executor has allocated, by category.
  const MemoryUse &memoryUse() const { return memoryUse_; }
  Device &device() { return device_; }

private:
  Executor(const LoadedPlan &plan, int worldRank, Device &device,
           CommunicatorFactory &comms, ExecutorOptions options);
  Status prepare();
  Status allocateBuffers();
  Status connectPeers();
  /// Decodes every instruction (decoded_, accesses_, microBatchAddresses_).
  Status decodeInstructions();
  /// Fixes the run order of each fragment (order_, ranges_) and this
  /// rank's steps of the schedule (rankSteps_).
  void planSteps();
  StatusOr<Communicator *> groupOf(const flatbuffers::Vector<uint32_t> &axes);
  /// The communicator of this rank's sends to `peerRank` (`sends`) or of
  /// its receives from it on `channel`: its group is (sender, receiver).
  StatusOr<Communicator *> peerOf(int peerRank, bool sends,
                                   int64_t channel);
  void *valuePtr(uint32_t id);
  TensorRef tensor(uint32_t id);
  /// Staging buffer `slot` of at least `bytes` (allocated in prepare()).
  StatusOr<void *> scratch(int slot, size_t bytes);
  /// An instruction's operands, results and (a kernel's) attributes,
  /// decoded from the plan once in prepare() rather than on every step.
  struct Decoded {
    std::vector<TensorRef> in, out;
    KernelAttrs attrs;
    /// The communicator of a collective, send or recv (null otherwise).
    Communicator *comm = nullptr;
    /// Runs on the communication lane (when there is one).
    bool async = false;
    /// The opcode, for traces.
    const char *name = "";
    /// The async instruction's position among the program's async ones.
    int slot = -1;
    /// The async instruction to wait for before this one, or -1.
    int waitFor = -1;
  };
  /// Sizes the collectives' staging buffers for every instruction, so that
  /// no step allocates (and no buffer a lane still uses is ever freed).
  Status allocateScratch();
  /// A tensor of an instruction whose address depends on the micro-batch:
  /// an operand or result (`position`) that is a slotted arena value
  /// (copy m mod `period`) or a micro-batched input (micro-batch m).
  struct MicroBatchAddress {
    uint32_t instruction = 0;
    bool result = false;
    uint32_t position = 0;
    char *base = nullptr;  // copy 0
    uint64_t stride = 0;   // bytes from one copy to the next
    uint32_t period = 0;   // slots; 0: the micro-batch itself
    uint32_t copies = 0;   // 0: the address is fixed
  };
  MicroBatchAddress microBatchAddress(uint32_t id);
  /// A range of instructions the schedule runs (a fragment, or the whole
  /// program): its run order order_[orderBegin, orderEnd) and its tensors
  /// that depend on the micro-batch,
  /// microBatchAddresses_[addressBegin, addressEnd).
  struct Range {
    std::string name; // the fragment's; empty for the whole program
    size_t orderBegin = 0, orderEnd = 0, addressBegin = 0, addressEnd = 0;
  };
  /// One step of the schedule this rank runs.
  struct RankStep {
    uint32_t range = 0;
    uint32_t microBatch = 0;
    /// What identifies its transfers with their channel (transferTag).
    uint32_t transferMicroBatch = 0;
    /// "F3" (fragmentStepName), the prefix of its trace events' origins;
    /// empty for a whole-program step.
    std::string name;
    /// "F3 (micro-batch 3)", how errors name the step; empty likewise.
    std::string context;
  };
  /// Runs one step of the schedule: its range's instructions on its
  /// micro-batch.
  Status runStep(const RankStep &step);
  Status runInstruction(const plan::Instruction &inst, const Decoded &d,
                        const RankStep &step, Stream &stream);
  /// An instruction's trace origin: its loc after the step's name.
  std::string origin(int64_t instruction, const std::string &stepName) const;
  void traceEvent(const char *name, const char *category, TraceTrack track,
                  double start, int64_t instruction,
                  const std::string &stepName, int64_t step);
  Status runCollective(const plan::CollectiveInst &c, const Decoded &decoded,
                       Stream &stream);
  /// The error of instruction `index`, with the rank, the step (a
  /// RankStep's context) and its location.
  Status inContext(Status s, uint32_t index, const std::string &step) const;

  LoadedPlan plan_;
  int worldRank_;
  Device &device_;
  CommunicatorFactory &comms_;
  ExecutorOptions options_;
  bool tracing_;
  const plan::Program *program_ = nullptr;
  uint32_t programIndex_ = 0;
  const plan::Mesh *mesh_ = nullptr;
  int64_t deviceIndex_ = 0;
  std::vector<int64_t> coordinates_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Buffer> arena_;
  std::vector<std::unique_ptr<Buffer>> params_, inputs_;
  std::vector<std::unique_ptr<Buffer>> scratch_;
  std::map<std::vector<uint32_t>, std::unique_ptr<Communicator>> groups_;
  /// Point-to-point communicators, one per direction and channel: (peer,
  /// true, c) carries this rank's sends to the peer on channel c, (peer,
  /// false, c) the peer's sends to it.
  std::map<std::tuple<int, bool, int64_t>, std::unique_ptr<Communicator>>
      peers_;
  /// Host copies of each axis_index instruction's value, at stable addresses,
  /// so that their asynchronous uploads need no host synchronisation.
  std::map<const plan::Instruction *, int32_t> axisIndices_;
  std::vector<Decoded> decoded_; // one per instruction of program_
  /// What each instruction reads and writes (prepare() only).
  std::vector<InstructionAccess> accesses_;
  std::vector<MicroBatchAddress> microBatchAddresses_;
  /// The order in which the instructions run, range by range
  /// (scheduleForOverlap within each with a lane, program order without).
  std::vector<uint32_t> order_;
  std::vector<Range> ranges_;
  std::vector<RankStep> rankSteps_;
  /// transferTagMicroBatches of the plan.
  uint64_t tagMicroBatches_ = 1;
  /// The fault still to inject in this run(), before instruction faultAt_.
  bool faultPending_ = false;
  int64_t faultAt_ = -1;
  /// The instruction of each lane slot.
  std::vector<int64_t> slotInstructions_;
  std::vector<TraceEvent> trace_;
  int64_t steps_ = 0; // whole-program steps so far, for traces
  int64_t runs_ = 0;  // calls of run() so far
  MemoryUse memoryUse_;
  /// Last member: destroyed (its thread joined) before the buffers and
  /// communicators its work uses. Null when collectives are synchronous.
  std::unique_ptr<CollectiveLane> lane_;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_EXECUTOR_H
