//===- Executor.cpp - runs a plan on one rank -----------------------------===//
//
// Collectives along a dimension other than the outermost are done on
// contiguous blocks: the executor moves the group's dimension outermost with
// the backend's Transpose kernel before or after the communicator call, so
// every communicator sees only flat, rank-major buffers.
//
// Collectives, sends and recvs run on a communication lane (CollectiveLane)
// unless ExecutorOptions::asyncCollectives is off: on a host device a thread
// per rank that runs them one after another in program order (so a Gloo
// context is never used from two threads at once, and every rank issues the
// same collectives in the same order); on a GPU a second stream, ordered
// after the compute stream's earlier work by an event, with one completion
// event per collective that the compute stream waits on. prepare() fixes,
// from the addresses the instructions use, the order they run in
// (scheduleForOverlap: compute that needs a collective as late as the
// memory allows, with the same results) and where compute waits
// (planCollectiveWaits), within each fragment of the program; the end of
// each schedule step waits for everything.
//
// A schedule step runs a fragment (or the whole program) on one
// micro-batch: before it runs, the operands and results that are a
// slotted value (Value.slots) or a micro-batched input are pointed at the
// micro-batch's copy or rows. The addresses the overlap order is computed
// from span every copy, so it holds for every micro-batch.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Executor.h"
#include "partition/runtime/CollectiveScratch.h"
#include "partition/runtime/DeviceGroups.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/Overlap.h"
#include "partition/runtime/Sharding.h"
#include "partition/runtime/StoredShape.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

using namespace partition::runtime;
namespace plan = partition::plan;
namespace fb = flatbuffers;

namespace {

std::vector<int64_t> toVector(const fb::Vector<int64_t> *v) {
  return v ? std::vector<int64_t>(v->begin(), v->end())
           : std::vector<int64_t>();
}

int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

ReduceOp toReduceOp(plan::ReduceOp op) {
  switch (op) {
  case plan::ReduceOp::Sum:
    return ReduceOp::Sum;
  case plan::ReduceOp::Max:
    return ReduceOp::Max;
  case plan::ReduceOp::Min:
    return ReduceOp::Min;
  case plan::ReduceOp::Avg:
    return ReduceOp::Avg;
  }
  return ReduceOp::Sum;
}

double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

namespace partition::runtime {

/// Where asynchronous instructions run. Slots number the program's
/// asynchronous instructions (0, 1, ... in program order); every step issues
/// each slot once, in order, and waits for all of them before it ends.
class CollectiveLane {
public:
  /// What a lane records of a slot for traces.
  struct Traced {
    const char *name = "";
    std::string category, origin;
    int64_t instruction = -1, step = 0;
  };
  using Task = std::function<Status(Stream &)>;

  virtual ~CollectiveLane() = default;
  /// Runs `task` (which enqueues on the stream it is given) after every
  /// task issued before it and after the compute work on `compute` so far.
  /// Returns an error that an earlier task already reported, if any.
  virtual Status issue(int slot, Task task, Stream &compute,
                       const Traced *traced) = 0;
  /// Orders the compute work enqueued on `compute` from now on after the
  /// task of `slot` (and so every earlier one); returns the first error any
  /// task reported.
  virtual Status waitFor(int slot, Stream &compute) = 0;
  /// As waitFor for the last slot issued; nothing remains in flight.
  virtual Status drain(Stream &compute) = 0;
  /// The communication track's events recorded since the last call.
  virtual std::vector<TraceEvent> takeTrace() = 0;
};

} // namespace partition::runtime

namespace {

/// A host thread that runs the tasks one after another. The compute thread
/// waits on a condition variable; every task is bounded by its
/// communicator's deadline (an error or timeout aborts the communicators),
/// so a wait cannot outlast the deadlines.
class ThreadLane final : public CollectiveLane {
public:
  ThreadLane(std::unique_ptr<Stream> stream, int slots)
      : stream_(std::move(stream)), slotSeq_(slots, -1),
        thread_([this] { loop(); }) {}

  ~ThreadLane() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    work_.notify_all();
    thread_.join();
  }

  Status issue(int slot, Task task, Stream &, const Traced *traced) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.isOk())
      return error_;
    slotSeq_[slot] = issued_++;
    Item item{std::move(task), {}, 0};
    if (traced) {
      item.traced = *traced;
      item.issuedUs = nowUs();
    }
    queue_.push_back(std::move(item));
    work_.notify_one();
    return Status::ok();
  }

  Status waitFor(int slot, Stream &) override {
    std::unique_lock<std::mutex> lock(mutex_);
    int64_t seq = slotSeq_[slot];
    done_.wait(lock, [&] { return completed_ > seq; });
    return error_;
  }

  Status drain(Stream &) override {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return completed_ == issued_; });
    return error_;
  }

  std::vector<TraceEvent> takeTrace() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(trace_, {});
  }

private:
  struct Item {
    Task task;
    Traced traced;
    double issuedUs;
  };

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty())
        return; // stopping, nothing left
      Item item = std::move(queue_.front());
      queue_.pop_front();
      // After an error (or when the executor goes away) the rest are
      // skipped: their peers are failing too.
      bool skip = !error_.isOk() || stop_;
      lock.unlock();
      Status status;
      double start = 0;
      if (!skip) {
        start = item.issuedUs ? nowUs() : 0;
        status = item.task(*stream_);
      }
      lock.lock();
      if (!status.isOk() && error_.isOk())
        error_ = status;
      if (!skip && item.issuedUs) {
        TraceEvent event;
        event.name = item.traced.name;
        event.category = item.traced.category;
        event.track = TraceTrack::Communication;
        event.startUs = start;
        event.durationUs = nowUs() - start;
        event.instruction = item.traced.instruction;
        event.origin = std::move(item.traced.origin);
        event.issuedUs = item.issuedUs;
        event.step = item.traced.step;
        trace_.push_back(std::move(event));
      }
      ++completed_;
      done_.notify_all();
    }
  }

  std::unique_ptr<Stream> stream_; // the tasks' stream (work runs at once)
  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<Item> queue_;
  /// Task sequence numbers: of each slot's latest issue, issued, completed.
  std::vector<int64_t> slotSeq_;
  int64_t issued_ = 0, completed_ = 0;
  /// The first error a task reported; every later call returns it.
  Status error_;
  bool stop_ = false;
  std::vector<TraceEvent> trace_;
  std::thread thread_; // last: starts once the members above exist
};

/// A second stream of the device. Issuing records an event on the compute
/// stream that the lane's stream waits for (the operands are ready), then
/// enqueues the task there and records the slot's completion event; waiting
/// makes the compute stream wait for that event. The host never blocks,
/// except when tracing (it then synchronises the completion events to time
/// them, so the communication track's spans end where the host saw them
/// finish, an upper bound). Errors of the enqueued work surface at the next
/// synchronisation of the device (the end of the step).
class StreamLane final : public CollectiveLane {
public:
  static StatusOr<std::unique_ptr<CollectiveLane>> create(Device &device,
                                                          int slots) {
    std::unique_ptr<StreamLane> lane(new StreamLane);
    PARTITION_ASSIGN_OR_RETURN(lane->stream_, device.createStream());
    PARTITION_ASSIGN_OR_RETURN(lane->ready_, device.createEvent());
    for (int i = 0; i < slots; ++i) {
      PARTITION_ASSIGN_OR_RETURN(auto event, device.createEvent());
      lane->done_.push_back(std::move(event));
    }
    lane->issuedUs_.assign(slots, 0);
    lane->traced_.resize(slots);
    return std::unique_ptr<CollectiveLane>(std::move(lane));
  }

  ~StreamLane() override { (void)stream_->synchronize(); }

  Status issue(int slot, Task task, Stream &compute,
               const Traced *traced) override {
    PARTITION_RETURN_IF_ERROR(ready_->record(compute));
    PARTITION_RETURN_IF_ERROR(ready_->waitOn(*stream_));
    if (traced) {
      traced_[slot] = *traced;
      issuedUs_[slot] = nowUs();
    }
    PARTITION_RETURN_IF_ERROR(task(*stream_));
    PARTITION_RETURN_IF_ERROR(done_[slot]->record(*stream_));
    last_ = slot;
    return Status::ok();
  }

  Status waitFor(int slot, Stream &compute) override {
    if (slot <= waited_)
      return Status::ok();
    PARTITION_RETURN_IF_ERROR(done_[slot]->waitOn(compute));
    PARTITION_RETURN_IF_ERROR(traceUpTo(slot));
    waited_ = slot;
    return Status::ok();
  }

  Status drain(Stream &compute) override {
    Status status = last_ >= 0 ? waitFor(last_, compute) : Status::ok();
    last_ = waited_ = -1;
    tracedUpTo_ = -1;
    return status;
  }

  std::vector<TraceEvent> takeTrace() override {
    return std::exchange(trace_, {});
  }

private:
  StreamLane() = default;

  Status traceUpTo(int slot) {
    for (int s = tracedUpTo_ + 1; s <= slot; ++s) {
      if (!issuedUs_[s])
        continue;
      PARTITION_RETURN_IF_ERROR(done_[s]->synchronize());
      double end = nowUs();
      TraceEvent event;
      event.name = traced_[s].name;
      event.category = traced_[s].category;
      event.track = TraceTrack::Communication;
      event.startUs = std::max(issuedUs_[s], previousEndUs_);
      event.durationUs = end - event.startUs;
      event.instruction = traced_[s].instruction;
      event.origin = traced_[s].origin;
      event.issuedUs = issuedUs_[s];
      event.step = traced_[s].step;
      trace_.push_back(std::move(event));
      previousEndUs_ = end;
      issuedUs_[s] = 0;
    }
    tracedUpTo_ = std::max(tracedUpTo_, slot);
    return Status::ok();
  }

  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Event> ready_;
  std::vector<std::unique_ptr<Event>> done_; // one per slot
  int last_ = -1, waited_ = -1;
  // Tracing only.
  std::vector<Traced> traced_;
  std::vector<double> issuedUs_;
  int tracedUpTo_ = -1;
  double previousEndUs_ = 0;
  std::vector<TraceEvent> trace_;
};

} // namespace

Executor::Executor(const LoadedPlan &plan, int worldRank, Device &device,
                   CommunicatorFactory &comms, ExecutorOptions options)
    : plan_(plan), worldRank_(worldRank), device_(device), comms_(comms),
      options_(options), tracing_(options.trace) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>>
Executor::create(const LoadedPlan &plan, int worldRank, Device &device,
                 CommunicatorFactory &comms, ExecutorOptions options) {
  std::unique_ptr<Executor> executor(
      new Executor(plan, worldRank, device, comms, options));
  PARTITION_RETURN_IF_ERROR(executor->prepare());
  return executor;
}

Status Executor::prepare() {
  const plan::Plan &root = plan_.root();
  // The first program whose mesh holds this rank. (Pipelines will give a rank
  // one program per stage it serves.)
  for (uint32_t p = 0; p < root.programs()->size() && !program_; ++p) {
    const plan::Program *program = root.programs()->Get(p);
    const plan::Mesh *mesh = root.meshes()->Get(program->mesh());
    for (uint32_t d = 0; d < mesh->ranks()->size(); ++d)
      if (mesh->ranks()->Get(d) == worldRank_) {
        program_ = program;
        programIndex_ = p;
        mesh_ = mesh;
        deviceIndex_ = d;
        coordinates_ = meshCoordinates(*mesh, d);
        break;
      }
  }
  PARTITION_ASSIGN_OR_RETURN(stream_, device_.createStream());
  if (!program_)
    return Status::ok();
  PARTITION_RETURN_IF_ERROR(allocateBuffers());
  PARTITION_RETURN_IF_ERROR(connectPeers());
  PARTITION_RETURN_IF_ERROR(decodeInstructions());
  planSteps();
  PARTITION_RETURN_IF_ERROR(allocateScratch());
  if (int slots = int(slotInstructions_.size())) {
    if (device_.isHost()) {
      PARTITION_ASSIGN_OR_RETURN(auto stream, device_.createStream());
      lane_ = std::make_unique<ThreadLane>(std::move(stream), slots);
    } else {
      PARTITION_ASSIGN_OR_RETURN(lane_, StreamLane::create(device_, slots));
    }
  }
  return stream_->synchronize();
}

Status Executor::allocateBuffers() {
  if (program_->arena_bytes()) {
    PARTITION_ASSIGN_OR_RETURN(arena_,
                               device_.allocate(program_->arena_bytes()));
    memoryUse_.arena += int64_t(arena_->size());
  }
  auto allocateBindings =
      [&](const fb::Vector<fb::Offset<plan::Binding>> *bindings,
          std::vector<std::unique_ptr<Buffer>> &buffers) -> Status {
    if (!bindings)
      return Status::ok();
    for (const plan::Binding *b : *bindings) {
      // A micro-batched input's buffer holds every micro-batch.
      int64_t bytes = valueBytes(*program_->values()->Get(b->value())) *
                      std::max<int64_t>(b->micro_batches(), 1);
      PARTITION_ASSIGN_OR_RETURN(auto buffer,
                                 device_.allocate(std::max<int64_t>(bytes, 1)));
      int64_t size = int64_t(buffer->size());
      switch (b->role()) {
      case plan::Role::Parameter:
        memoryUse_.parameters += size;
        break;
      case plan::Role::State:
        memoryUse_.state += size;
        break;
      case plan::Role::Constant:
        memoryUse_.constants += size;
        break;
      default: // Input, Label
        memoryUse_.inputs += size;
        break;
      }
      buffers.push_back(std::move(buffer));
    }
    return Status::ok();
  };
  PARTITION_RETURN_IF_ERROR(allocateBindings(program_->params(), params_));
  PARTITION_RETURN_IF_ERROR(allocateBindings(program_->inputs(), inputs_));

  // Constants are in the plan.
  if (program_->params())
    for (uint32_t i = 0; i < program_->params()->size(); ++i) {
      const plan::Binding *b = program_->params()->Get(i);
      if (b->role() == plan::Role::Constant)
        PARTITION_RETURN_IF_ERROR(
            device_.copyToDevice(params_[i]->data(), b->data()->data(),
                                 b->data()->size(), *stream_));
    }
  return Status::ok();
}

Status Executor::connectPeers() {
  // Point-to-point communicators first, one per direction and channel
  // (NCCL matches a communicator's sends and receives in order, so each is
  // a FIFO of its own: a send never waits behind a receive, and a schedule
  // table may take one channel's transfers in another order than
  // another's), all created in one global order -- by rank pair, direction,
  // channel -- so that the programs of different stages, which meet their
  // transfers in different orders, cannot wait on each other's creations.
  const plan::Plan &root = plan_.root();
  // (low, high, sender, channel)
  std::set<std::tuple<int, int, int, int64_t>> directions;
  for (const plan::Instruction *inst : *program_->instructions()) {
    bool isSend = inst->inst_type() == plan::Inst::SendInst;
    if (!isSend && inst->inst_type() != plan::Inst::RecvInst)
      continue;
    uint32_t peerProgram = isSend ? inst->inst_as_SendInst()->peer_program()
                                  : inst->inst_as_RecvInst()->peer_program();
    const plan::Mesh *peerMesh =
        root.meshes()->Get(root.programs()->Get(peerProgram)->mesh());
    int peer = peerMesh->ranks()->Get(deviceIndex_);
    int64_t channel = isSend ? inst->inst_as_SendInst()->channel()
                             : inst->inst_as_RecvInst()->channel();
    directions.insert({std::min(peer, worldRank_), std::max(peer, worldRank_),
                       isSend ? worldRank_ : peer, channel});
  }
  for (auto [low, high, sender, channel] : directions) {
    int peer = low == worldRank_ ? high : low;
    PARTITION_RETURN_IF_ERROR(
        peerOf(peer, sender == worldRank_, channel).status());
  }
  return Status::ok();
}

Executor::MicroBatchAddress Executor::microBatchAddress(uint32_t id) {
  const plan::Value *v = program_->values()->Get(id);
  while (v->storage() == plan::Storage::Alias)
    v = program_->values()->Get(v->index());
  MicroBatchAddress address;
  if (v->storage() == plan::Storage::Arena && v->slots() > 1) {
    address.stride = slotStride(valueBytes(*v));
    address.period = v->slots();
    address.copies = v->slots();
  } else if (v->storage() == plan::Storage::Input) {
    const plan::Binding &b = *program_->inputs()->Get(v->index());
    if (b.micro_batches()) {
      address.stride = uint64_t(valueBytes(*v));
      address.copies = b.micro_batches();
    }
  }
  address.base = static_cast<char *>(valuePtr(id));
  return address;
}

Status Executor::decodeInstructions() {
  // Buffers are fixed from here on, so every instruction's tensors are too
  // (but for the copy of a slotted value or the micro-batch of an input,
  // which runStep sets). Group communicators are created in instruction
  // order: every member of a group runs the same program, so reaches its
  // creation in the same order.
  const plan::Plan &root = plan_.root();
  const auto &instructions = *program_->instructions();
  for (uint32_t i = 0; i < instructions.size(); ++i) {
    const plan::Instruction *inst = instructions.Get(i);
    Decoded d;
    InstructionAccess access;
    // Each tensor, and the bytes it may touch: every copy of a value that
    // has one per micro-batch.
    auto decode = [&](const fb::Vector<uint32_t> *ids, bool results) {
      if (!ids)
        return;
      for (uint32_t k = 0; k < ids->size(); ++k) {
        TensorRef t = tensor(ids->Get(k));
        MicroBatchAddress address = microBatchAddress(ids->Get(k));
        size_t bytes = t.numBytes();
        if (address.copies) {
          address.instruction = i;
          address.result = results;
          address.position = k;
          microBatchAddresses_.push_back(address);
          bytes += address.stride * (address.copies - 1);
        }
        (results ? access.writes : access.reads)
            .push_back(ByteRange::of(t.data, bytes));
        (results ? d.out : d.in).push_back(std::move(t));
      }
    };
    decode(inst->operands(), false);
    decode(inst->results(), true);
    if (auto k = inst->inst_as_KernelInst()) {
      d.attrs = unpackKernelAttrs(*k);
      d.name = opKindName(k->op());
    } else if (auto c = inst->inst_as_CollectiveInst()) {
      d.name = plan::EnumNameCollectiveKind(c->kind());
      if (c->kind() != plan::CollectiveKind::AllSlice &&
          c->kind() != plan::CollectiveKind::AxisIndex) {
        PARTITION_ASSIGN_OR_RETURN(d.comm, groupOf(*c->axes()));
        d.async = true;
      }
    } else if (inst->inst_type() == plan::Inst::SendInst ||
               inst->inst_type() == plan::Inst::RecvInst) {
      bool isSend = inst->inst_type() == plan::Inst::SendInst;
      uint32_t peer = isSend ? inst->inst_as_SendInst()->peer_program()
                             : inst->inst_as_RecvInst()->peer_program();
      const plan::Mesh *peerMesh =
          root.meshes()->Get(root.programs()->Get(peer)->mesh());
      PARTITION_ASSIGN_OR_RETURN(
          d.comm, peerOf(peerMesh->ranks()->Get(deviceIndex_), isSend,
                         isSend ? inst->inst_as_SendInst()->channel()
                                : inst->inst_as_RecvInst()->channel()));
      d.name = isSend ? "Send" : "Recv";
      d.async = true;
    }
    d.async = d.async && options_.asyncCollectives;
    if (d.async) {
      d.slot = int(slotInstructions_.size());
      slotInstructions_.push_back(int64_t(i));
    }
    access.async = d.async;
    accesses_.push_back(std::move(access));
    decoded_.push_back(std::move(d));
  }
  return Status::ok();
}

void Executor::planSteps() {
  // The ranges the schedule runs: each fragment, or the whole program.
  std::vector<std::pair<uint32_t, uint32_t>> ranges; // [first, end)
  std::vector<std::string> names;
  if (program_->fragments() && program_->fragments()->size()) {
    for (const plan::Fragment *f : *program_->fragments()) {
      ranges.push_back({f->first(), f->first() + f->count()});
      names.push_back(f->name()->str());
    }
  } else {
    ranges.push_back({0, program_->instructions()->size()});
    names.push_back("");
  }
  // Within each range, with a lane, compute that would wait for a
  // collective runs as late as the memory the instructions touch allows;
  // without, in program order. No instruction leaves its range, and the
  // lane is drained at the end of each step, so waits stay inside it too.
  size_t address = 0;
  for (size_t r = 0; r < ranges.size(); ++r) {
    auto [first, end] = ranges[r];
    std::vector<InstructionAccess> accesses(accesses_.begin() + first,
                                            accesses_.begin() + end);
    bool async = std::any_of(accesses.begin(), accesses.end(),
                             [](const InstructionAccess &a) { return a.async; });
    std::vector<int> order;
    if (async) {
      order = scheduleForOverlap(accesses);
    } else {
      for (int i = 0; i < int(accesses.size()); ++i)
        order.push_back(i);
    }
    std::vector<InstructionAccess> ordered;
    for (int i : order)
      ordered.push_back(accesses[i]);
    std::vector<int> waits = planCollectiveWaits(ordered);
    Range range;
    range.name = names[r];
    range.orderBegin = order_.size();
    for (size_t k = 0; k < order.size(); ++k) {
      order_.push_back(first + uint32_t(order[k]));
      decoded_[first + order[k]].waitFor =
          waits[k] < 0 ? -1 : decoded_[first + order[waits[k]]].slot;
    }
    range.orderEnd = order_.size();
    range.addressBegin = address;
    while (address < microBatchAddresses_.size() &&
           microBatchAddresses_[address].instruction < end)
      ++address;
    range.addressEnd = address;
    ranges_.push_back(std::move(range));
  }
  accesses_.clear();
  tagMicroBatches_ = transferTagMicroBatches(plan_.root());
  // This rank's steps of the schedule, in order.
  for (const plan::ScheduleStep *step : *plan_.root().schedule()) {
    if (step->program() != programIndex_)
      continue;
    RankStep s;
    s.range = step->fragment() < 0 ? 0 : uint32_t(step->fragment());
    s.microBatch = step->micro_batch();
    s.transferMicroBatch = transferMicroBatch(*step);
    if (step->fragment() >= 0) {
      const std::string &name = ranges_[s.range].name;
      s.name = fragmentStepName(name, s.microBatch);
      s.context = s.name;
      if (name != "P" && name != "U")
        s.context += " (micro-batch " + std::to_string(s.microBatch) + ")";
    }
    rankSteps_.push_back(std::move(s));
  }
}

StatusOr<Communicator *>
Executor::groupOf(const fb::Vector<uint32_t> &axesVector) {
  std::vector<uint32_t> axes(axesVector.begin(), axesVector.end());
  auto it = groups_.find(axes);
  if (it != groups_.end())
    return it->second.get();
  // Members: every device whose coordinates equal ours off `axes`, in
  // group-index order (DeviceGroups.h).
  const auto &sizes = *mesh_->axis_sizes();
  int64_t size = groupSize(sizes, axes);
  std::vector<int> ranks;
  for (int64_t g = 0; g < size; ++g)
    ranks.push_back(mesh_->ranks()->Get(deviceIndex(
        sizes, groupMemberCoordinates(sizes, coordinates_, axes, g))));
  // The key names the mesh, the axes and the group (our coordinates off the
  // axes), so distinct groups never share rendezvous keys.
  std::string key = "mesh-" + std::to_string(program_->mesh()) + "/axes";
  for (uint32_t a : axes)
    key += "-" + std::to_string(a);
  key += "/group";
  for (size_t a = 0; a < coordinates_.size(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      key += "-" + std::to_string(coordinates_[a]);
  PARTITION_ASSIGN_OR_RETURN(auto comm, comms_.create(ranks, key));
  Communicator *raw = comm.get();
  groups_[axes] = std::move(comm);
  return raw;
}

StatusOr<Communicator *> Executor::peerOf(int peerRank, bool sends,
                                          int64_t channel) {
  auto it = peers_.find({peerRank, sends, channel});
  if (it != peers_.end())
    return it->second.get();
  // Group rank 0 sends, group rank 1 receives.
  std::vector<int> ranks = sends ? std::vector<int>{worldRank_, peerRank}
                                 : std::vector<int>{peerRank, worldRank_};
  std::string key = "p2p/" + std::to_string(ranks[0]) + "->" +
                    std::to_string(ranks[1]) + "/" + std::to_string(channel);
  PARTITION_ASSIGN_OR_RETURN(auto comm, comms_.create(ranks, key));
  Communicator *raw = comm.get();
  peers_[{peerRank, sends, channel}] = std::move(comm);
  return raw;
}

void *Executor::valuePtr(uint32_t id) {
  const plan::Value *v = program_->values()->Get(id);
  while (v->storage() == plan::Storage::Alias)
    v = program_->values()->Get(v->index());
  switch (v->storage()) {
  case plan::Storage::Arena:
    return static_cast<char *>(arena_->data()) + v->offset();
  case plan::Storage::Persistent:
    return params_[v->index()]->data();
  case plan::Storage::Input:
    return inputs_[v->index()]->data();
  default:
    return nullptr;
  }
}

TensorRef Executor::tensor(uint32_t id) {
  const plan::Value *v = program_->values()->Get(id);
  return TensorRef{valuePtr(id), toDType(v->dtype()), toVector(v->shape())};
}

StatusOr<void *> Executor::scratch(int slot, size_t bytes) {
  // Sized in prepare() (allocateScratch): a step never allocates.
  if (scratch_.size() <= size_t(slot) || !scratch_[slot] ||
      scratch_[slot]->size() < bytes)
    return PARTITION_ERROR(Internal, "collective staging buffer ", slot,
                           " holds fewer than the ", bytes, " bytes needed");
  return scratch_[slot]->data();
}

Status Executor::allocateScratch() {
  // The bytes of staging buffer 0 and 1 each collective needs: the
  // conditions are those of runCollective's transposes.
  size_t need[2] = {0, 0};
  for (size_t i = 0; i < decoded_.size(); ++i) {
    const plan::Instruction &inst = *program_->instructions()->Get(i);
    const plan::CollectiveInst *c = inst.inst_as_CollectiveInst();
    const Decoded &d = decoded_[i];
    if (!c || !d.comm)
      continue;
    const TensorRef &in = d.in[0], &out = d.out[0];
    int64_t dim = 0, split = 0, concat = 0;
    if (auto *a = c->attrs_as_CollectiveDimAttrs())
      dim = a->dim();
    if (auto *a = c->attrs_as_AllToAllAttrs()) {
      split = a->split_dim();
      concat = a->concat_dim();
    }
    std::array<int64_t, 2> bytes =
        collectiveScratch(c->kind(), in.shape, out.shape, dtypeSize(in.dtype),
                          dim, split, concat, d.comm->size());
    for (int slot = 0; slot < 2; ++slot)
      need[slot] = std::max(need[slot], size_t(bytes[slot]));
  }
  for (int slot = 0; slot < 2; ++slot) {
    if (!need[slot])
      continue;
    if (scratch_.size() <= size_t(slot))
      scratch_.resize(slot + 1);
    PARTITION_ASSIGN_OR_RETURN(scratch_[slot], device_.allocate(need[slot]));
    memoryUse_.scratch += int64_t(scratch_[slot]->size());
  }
  return Status::ok();
}

Status partition::runtime::readStoredBlock(
    ParameterSource &source, const std::string &name, DType dtype,
    const std::vector<int64_t> &global, const std::vector<int64_t> &stored,
    const std::vector<int64_t> &perm, const std::vector<int64_t> &offsets,
    const std::vector<int64_t> &block, void *dst) {
  if (!perm.empty() && !isPermutation(perm, stored.size()))
    return PARTITION_ERROR(InvalidArgument, "parameter \"", name,
                           "\": stored permutation ", formatShape(perm),
                           " does not permute stored shape ",
                           formatShape(stored));
  std::vector<int64_t> permuted = permuteShape(stored, perm);
  std::optional<std::vector<size_t>> groups = viewGroups(global, permuted);
  if (!groups)
    return PARTITION_ERROR(InvalidArgument, "parameter \"", name,
                           "\": global shape ", formatShape(global),
                           " does not view stored shape ",
                           formatShape(permuted));
  size_t bytes = dtypeSize(dtype);
  std::vector<char> piece, raw;
  std::vector<int64_t> rawOffsets, rawShape;
  for (const StoredPiece &p :
       storedPieces(global, permuted, *groups, offsets, block)) {
    int64_t count = 1;
    for (int64_t d : p.storedShape)
      count *= d;
    piece.resize(count * bytes);
    if (perm.empty()) {
      PARTITION_RETURN_IF_ERROR(source.read(name, dtype, stored,
                                            p.storedOffsets, p.storedShape,
                                            piece.data()));
    } else {
      // The piece of transpose(stored, perm) is a block of the stored
      // tensor, read whole and transposed.
      unpermuteBlock(perm, p.storedOffsets, p.storedShape, rawOffsets,
                     rawShape);
      raw.resize(count * bytes);
      PARTITION_RETURN_IF_ERROR(source.read(name, dtype, stored, rawOffsets,
                                            rawShape, raw.data()));
      transposeCopy(raw.data(), rawShape, perm, piece.data(), bytes);
    }
    insertBlock(dst, block, piece.data(), p.blockShape, p.blockOffsets, bytes);
  }
  return Status::ok();
}

Status Executor::loadParameters(ParameterSource &source) {
  if (!program_ || !program_->params())
    return Status::ok();
  for (uint32_t i = 0; i < program_->params()->size(); ++i) {
    const plan::Binding *b = program_->params()->Get(i);
    if (b->role() == plan::Role::Constant)
      continue;
    const plan::Value *v = program_->values()->Get(b->value());
    std::vector<int64_t> local = toVector(v->shape());
    std::vector<int64_t> offsets =
        shardOffsets(*mesh_, *b->sharding(), coordinates_, local);
    std::vector<char> host(valueBytes(*v));
    DType dtype = toDType(v->dtype());
    std::vector<int64_t> global = toVector(b->global_shape());
    // A block past the end of a padded dimension reads what lies inside the
    // tensor; its padding stays zero.
    std::vector<int64_t> inside = clippedShape(global, offsets, local);
    std::vector<char> staging;
    void *dst = host.data();
    if (inside != local) {
      int64_t count = 1;
      for (int64_t d : inside)
        count *= d;
      staging.resize(count * dtypeSize(dtype));
      dst = staging.data();
    }
    // A parameter viewed in another shape than its source stores it in is
    // read as the pieces of the stored tensor its block spans.
    std::vector<int64_t> stored = toVector(b->stored_shape()),
                         perm = toVector(b->stored_permutation());
    auto readBlock = [&](const std::string &name) -> Status {
      if (dst != host.data() && staging.empty())
        return Status::ok(); // all padding
      if (stored.empty() || !source.readsStoredShapes())
        return source.read(name, dtype, global, offsets, inside, dst);
      return readStoredBlock(source, name, dtype, global, stored, perm,
                             offsets, inside, dst);
    };
    Status read = readBlock(b->name()->str());
    // State the source (a checkpoint) lacks starts at its initial value:
    // another tensor of the source (a master copy from the weights it
    // copies) or a constant, zero by default.
    if (!read.isOk() && b->role() == plan::Role::State &&
        read.code() == StatusCode::NotFound) {
      if (b->init_from()) {
        read = readBlock(b->init_from()->str());
        if (!read.isOk())
          return Status(read.code(), "initial value of state \"" +
                                         b->name()->str() +
                                         "\": " + read.message());
      } else {
        read = Status::ok();
        if (b->init_value() != 0.0f) {
          if (!isFloat(dtype))
            return PARTITION_ERROR(InvalidArgument, "state \"",
                                   b->name()->str(), "\" is ", dtypeName(dtype),
                                   " but has the float initial value ",
                                   b->init_value());
          int64_t count = 1;
          for (int64_t d : local)
            count *= d;
          for (int64_t e = 0; e < count; ++e)
            storeFloat(host.data(), dtype, e, b->init_value());
        }
        dst = host.data(); // nothing staged
      }
    }
    if (!read.isOk())
      return read;
    if (dst != host.data())
      insertBlock(host.data(), local, staging.data(), inside,
                  std::vector<int64_t>(local.size(), 0), dtypeSize(dtype));
    PARTITION_RETURN_IF_ERROR(device_.copyToDevice(
        params_[i]->data(), host.data(), host.size(), *stream_));
  }
  return stream_->synchronize();
}

Status Executor::setInput(const std::string &name, const HostTensor &whole) {
  if (!program_ || !program_->inputs())
    return PARTITION_ERROR(NotFound, "the plan has no input \"", name, "\"");
  for (uint32_t i = 0; i < program_->inputs()->size(); ++i) {
    const plan::Binding *b = program_->inputs()->Get(i);
    if (b->name()->str() != name)
      continue;
    const plan::Value *v = program_->values()->Get(b->value());
    std::vector<int64_t> global = toVector(b->global_shape());
    if (whole.dtype != toDType(v->dtype()) || whole.shape != global)
      return PARTITION_ERROR(InvalidArgument, "input \"", name, "\" must be ",
                             dtypeName(toDType(v->dtype())),
                             formatShape(global), ", got ",
                             dtypeName(whole.dtype), formatShape(whole.shape));
    // A micro-batched input's block holds every micro-batch's rows.
    std::vector<int64_t> local = toVector(v->shape());
    int64_t copies = std::max<int64_t>(b->micro_batches(), 1);
    if (b->micro_batches())
      local[0] *= copies;
    std::vector<char> host(valueBytes(*v) * copies);
    extractBlock(whole.data.data(), global, host.data(), local,
                 shardOffsets(*mesh_, *b->sharding(), coordinates_, local),
                 dtypeSize(whole.dtype));
    PARTITION_RETURN_IF_ERROR(device_.copyToDevice(
        inputs_[i]->data(), host.data(), host.size(), *stream_));
    return stream_->synchronize();
  }
  return PARTITION_ERROR(NotFound, "the plan has no input \"", name, "\"");
}

StatusOr<HostTensor> Executor::output(const std::string &name) {
  if (program_ && program_->outputs())
    for (const plan::Binding *b : *program_->outputs()) {
      if (b->name()->str() != name)
        continue;
      const plan::Value *v = program_->values()->Get(b->value());
      HostTensor result{toDType(v->dtype()), toVector(v->shape()), {}};
      result.data.resize(valueBytes(*v));
      PARTITION_RETURN_IF_ERROR(
          device_.copyToHost(result.data.data(), valuePtr(b->value()),
                             result.data.size(), *stream_));
      PARTITION_RETURN_IF_ERROR(stream_->synchronize());
      return result;
    }
  return PARTITION_ERROR(NotFound, "the plan has no output \"", name, "\"");
}

StatusOr<HostTensor> Executor::parameter(const std::string &name) {
  if (program_ && program_->params())
    for (uint32_t i = 0; i < program_->params()->size(); ++i) {
      const plan::Binding *b = program_->params()->Get(i);
      if (b->name()->str() != name)
        continue;
      const plan::Value *v = program_->values()->Get(b->value());
      HostTensor result{toDType(v->dtype()), toVector(v->shape()), {}};
      result.data.resize(valueBytes(*v));
      PARTITION_RETURN_IF_ERROR(
          device_.copyToHost(result.data.data(), params_[i]->data(),
                             result.data.size(), *stream_));
      PARTITION_RETURN_IF_ERROR(stream_->synchronize());
      return result;
    }
  return PARTITION_ERROR(NotFound, "the plan has no parameter \"", name, "\"");
}

Status Executor::inContext(Status s, uint32_t index,
                           const std::string &step) const {
  const plan::Instruction &inst = *program_->instructions()->Get(index);
  std::string where = "instruction " + std::to_string(index);
  if (inst.loc() && inst.loc()->size())
    where += " (" + inst.loc()->str() + ")";
  if (!step.empty())
    where = step + ", " + where;
  return s.withContext("rank " + std::to_string(worldRank_) + ": " + where);
}

Status Executor::run() {
  if (!program_)
    return Status::ok();
  ++runs_;
  // An injected fault strikes at the first run of its instruction.
  faultPending_ =
      options_.fault && runs_ - 1 == options_.faultRun && !order_.empty();
  faultAt_ = options_.faultInstruction >= 0 ? options_.faultInstruction
             : order_.empty()               ? -1
                                            : order_[order_.size() / 2];
  for (const RankStep &step : rankSteps_)
    PARTITION_RETURN_IF_ERROR(runStep(step));
  // New values of parameters and optimizer state replace the old ones.
  if (program_->outputs())
    for (const plan::Binding *b : *program_->outputs()) {
      if (b->updates() < 0)
        continue;
      void *src = valuePtr(b->value());
      void *dst = params_[b->updates()]->data();
      if (src != dst)
        PARTITION_RETURN_IF_ERROR(device_.copy(
            dst, src, valueBytes(*program_->values()->Get(b->value())),
            *stream_));
    }
  return stream_->synchronize();
}

void Executor::traceEvent(const char *name, const char *category,
                          TraceTrack track, double start, int64_t instruction,
                          const std::string &stepName, int64_t step) {
  TraceEvent event;
  event.name = name;
  event.category = category;
  event.track = track;
  event.startUs = start;
  event.durationUs = nowUs() - start;
  event.instruction = instruction;
  event.origin = origin(instruction, stepName);
  event.step = step;
  trace_.push_back(std::move(event));
}

std::string Executor::origin(int64_t instruction,
                             const std::string &stepName) const {
  std::string loc;
  if (instruction >= 0) {
    const plan::Instruction &inst = *program_->instructions()->Get(instruction);
    if (inst.loc())
      loc = inst.loc()->str();
  }
  if (stepName.empty())
    return loc;
  return loc.empty() ? stepName : stepName + " " + loc;
}

Status Executor::runStep(const RankStep &rankStep) {
  const auto &instructions = *program_->instructions();
  const Range &range = ranges_[rankStep.range];
  // A fragment step belongs to the pass over the schedule; a whole-program
  // step counts passes over the program (as before fragments).
  int64_t step = rankStep.name.empty() ? steps_++ : runs_ - 1;
  const std::string &context = rankStep.context;
  // The copies and micro-batches this step's tensors address.
  for (size_t k = range.addressBegin; k < range.addressEnd; ++k) {
    const MicroBatchAddress &a = microBatchAddresses_[k];
    uint64_t copy = a.period ? rankStep.microBatch % a.period
                             : rankStep.microBatch;
    Decoded &d = decoded_[a.instruction];
    (a.result ? d.out : d.in)[a.position].data = a.base + copy * a.stride;
  }
  // Waits for everything in flight, then moves the lane's events into the
  // trace; `failed` is an error that comes first.
  auto finish = [&](Status failed) -> Status {
    if (!lane_)
      return failed;
    double start = tracing_ ? nowUs() : 0;
    Status drained = lane_->drain(*stream_);
    if (tracing_) {
      traceEvent("wait", "wait", TraceTrack::Compute, start, -1,
                 rankStep.name, step);
      for (TraceEvent &e : lane_->takeTrace())
        trace_.push_back(std::move(e));
    }
    return failed.isOk() ? drained : failed;
  };
  for (size_t k = range.orderBegin; k < range.orderEnd; ++k) {
    uint32_t i = order_[k];
    if (faultPending_ && int64_t(i) == faultAt_) {
      faultPending_ = false;
      if (Status s = options_.fault(); !s.isOk())
        return finish(inContext(s, i, context));
    }
    const plan::Instruction &inst = *instructions.Get(i);
    const Decoded &d = decoded_[i];
    if (lane_ && d.waitFor >= 0) {
      double start = tracing_ ? nowUs() : 0;
      Status s = lane_->waitFor(d.waitFor, *stream_);
      if (tracing_)
        traceEvent("wait", "wait", TraceTrack::Compute, start,
                   slotInstructions_[d.waitFor], rankStep.name, step);
      if (!s.isOk()) // already in the collective's context
        return finish(s);
    }
    double start = tracing_ ? nowUs() : 0;
    Status s;
    const char *category = "kernel";
    if (inst.inst_type() == plan::Inst::SendInst ||
        inst.inst_type() == plan::Inst::RecvInst)
      category = "transfer";
    else if (d.comm)
      category = "collective";
    if (lane_ && d.async) {
      CollectiveLane::Traced traced;
      if (tracing_) {
        traced.name = d.name;
        traced.category = category;
        traced.origin = origin(i, rankStep.name);
        traced.instruction = i;
        traced.step = step;
      }
      s = lane_->issue(
          d.slot,
          [this, &inst, &d, i, &rankStep](Stream &lane) {
            Status s = runInstruction(inst, d, rankStep, lane);
            return s.isOk() ? s : inContext(s, i, rankStep.context);
          },
          *stream_, tracing_ ? &traced : nullptr);
      category = "issue";
    } else {
      s = runInstruction(inst, d, rankStep, *stream_);
      if (!s.isOk())
        s = inContext(s, i, context);
    }
    if (!s.isOk())
      return finish(s);
    if (tracing_) {
      // Time the work, not just its enqueueing.
      if (Status synced = stream_->synchronize(); !synced.isOk())
        return finish(synced);
      // Synchronous collectives are communication, on its track.
      traceEvent(d.name, category,
                 d.comm && !d.async ? TraceTrack::Communication
                                    : TraceTrack::Compute,
                 start, i, rankStep.name, step);
    }
  }
  return finish(Status::ok());
}

Status Executor::runInstruction(const plan::Instruction &inst, const Decoded &d,
                                const RankStep &step, Stream &stream) {
  const std::vector<TensorRef> &in = d.in, &out = d.out;
  switch (inst.inst_type()) {
  case plan::Inst::KernelInst: {
    const plan::KernelInst &k = *inst.inst_as_KernelInst();
    return device_.kernels().run(k.op(), d.attrs, in, out, stream);
  }
  case plan::Inst::CollectiveInst: {
    const plan::CollectiveInst &c = *inst.inst_as_CollectiveInst();
    if (c.kind() == plan::CollectiveKind::AxisIndex) {
      // No communication: this device's index in its group over the axes.
      int32_t index =
          int32_t(groupIndex(*mesh_->axis_sizes(), coordinates_, *c.axes()));
      // The host value must outlive the asynchronous copy: it is kept, at a
      // fixed address, for the executor's lifetime (the same value each step).
      const int32_t &kept =
          axisIndices_.try_emplace(&inst, index).first->second;
      return device_.copyToDevice(out[0].data, &kept, sizeof(kept), stream);
    }
    return runCollective(c, d, stream);
  }
  // d.comm is the direction's own communicator: the sender is its rank 0.
  // Tagged by (channel, micro-batch) (transferTag).
  case plan::Inst::SendInst:
    return d.comm->send(in[0].data, in[0].numElements(), in[0].dtype, 1,
                        transferTag(inst.inst_as_SendInst()->channel(),
                                    step.transferMicroBatch, tagMicroBatches_),
                        stream);
  case plan::Inst::RecvInst:
    return d.comm->recv(out[0].data, out[0].numElements(), out[0].dtype, 0,
                        transferTag(inst.inst_as_RecvInst()->channel(),
                                    step.transferMicroBatch, tagMicroBatches_),
                        stream);
  default:
    return PARTITION_ERROR(Internal, "unknown instruction");
  }
}

Status Executor::runCollective(const plan::CollectiveInst &c,
                               const Decoded &decoded, Stream &stream) {
  const TensorRef &in = decoded.in[0], &out = decoded.out[0];
  Kernels &kernels = device_.kernels();
  if (c.kind() == plan::CollectiveKind::AllSlice) {
    // No communication: keep the block at this device's group index.
    int64_t index = groupIndex(*mesh_->axis_sizes(), coordinates_, *c.axes());
    int64_t d = c.attrs_as_CollectiveDimAttrs()->dim();
    std::vector<int64_t> offsets(in.rank(), 0);
    offsets[d] = index * out.shape[d];
    return kernels.run(plan::OpKind::Slice,
                       sliceAttrs(offsets, std::vector<int64_t>(in.rank(), 1)),
                       {in}, {out}, stream);
  }
  Communicator *comm = decoded.comm;
  int64_t g = comm->size();
  // Transposes `src` viewed as [a, b, rest] into `dst` as [b, a, rest].
  auto swapOuter = [&](void *src, void *dst, int64_t a, int64_t b,
                       int64_t rest) {
    TensorRef from{src, in.dtype, {a, b, rest}};
    TensorRef to{dst, in.dtype, {b, a, rest}};
    return kernels.run(plan::OpKind::Transpose, transposeAttrs({1, 0, 2}),
                       {from}, {to}, stream);
  };

  switch (c.kind()) {
  case plan::CollectiveKind::AllReduce:
    return comm->allReduce(in.data, out.data, in.numElements(), in.dtype,
                           toReduceOp(c.reduce()), stream);
  case plan::CollectiveKind::AllGather: {
    // in [A, n, B] -> gathered [G, A, n*B] -> out [A, G*n, B].
    size_t d = c.attrs_as_CollectiveDimAttrs()->dim();
    int64_t outer = product(in.shape, 0, d);
    if (outer == 1)
      return comm->allGather(in.data, out.data, in.numElements(), in.dtype,
                             stream);
    PARTITION_ASSIGN_OR_RETURN(void *tmp, scratch(0, out.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        comm->allGather(in.data, tmp, in.numElements(), in.dtype, stream));
    return swapOuter(tmp, out.data, g, outer, in.numElements() / outer);
  }
  case plan::CollectiveKind::ReduceScatter: {
    // in [A, G*n, B] viewed [A, G, n*B] -> [G, A, n*B] -> reduce-scatter.
    size_t d = c.attrs_as_CollectiveDimAttrs()->dim();
    int64_t outer = product(in.shape, 0, d);
    if (outer == 1)
      return comm->reduceScatter(in.data, out.data, out.numElements(), in.dtype,
                                 toReduceOp(c.reduce()), stream);
    PARTITION_ASSIGN_OR_RETURN(void *tmp, scratch(0, in.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        swapOuter(in.data, tmp, outer, g, in.numElements() / outer / g));
    return comm->reduceScatter(tmp, out.data, out.numElements(), in.dtype,
                               toReduceOp(c.reduce()), stream);
  }
  case plan::CollectiveKind::AllToAll: {
    size_t split = c.attrs_as_AllToAllAttrs()->split_dim();
    size_t concat = c.attrs_as_AllToAllAttrs()->concat_dim();
    int64_t block = in.numElements() / g;
    // Pack: in viewed [As, G, rest] -> [G, As, rest], so block i is
    // contiguous and goes to rank i.
    int64_t splitOuter = product(in.shape, 0, split);
    void *send = in.data;
    if (splitOuter != 1) {
      PARTITION_ASSIGN_OR_RETURN(send, scratch(0, in.numBytes()));
      PARTITION_RETURN_IF_ERROR(swapOuter(in.data, send, splitOuter, g,
                                          in.numElements() / splitOuter / g));
    }
    // Unpack: received [G, block] where each block has the input's shape with
    // `split` divided; block j goes to position j along `concat`.
    std::vector<int64_t> blockShape = in.shape;
    blockShape[split] /= g;
    int64_t concatOuter = product(blockShape, 0, concat);
    if (concatOuter == 1)
      return comm->allToAll(send, out.data, block, in.dtype, stream);
    PARTITION_ASSIGN_OR_RETURN(void *recv, scratch(1, out.numBytes()));
    PARTITION_RETURN_IF_ERROR(
        comm->allToAll(send, recv, block, in.dtype, stream));
    return swapOuter(recv, out.data, g, concatOuter, block / concatOuter);
  }
  case plan::CollectiveKind::AllSlice:
  case plan::CollectiveKind::AxisIndex:
    break; // handled without a communicator
  case plan::CollectiveKind::Permute: {
    std::vector<std::pair<int, int>> pairs;
    if (const auto *list = c.attrs_as_PermuteAttrs()->pairs())
      for (const plan::PermutePair *pair : *list)
        pairs.emplace_back(int(pair->source()), int(pair->target()));
    return comm->permute(in.data, out.data, in.numElements(), in.dtype, pairs,
                         stream);
  }
  }
  return PARTITION_ERROR(Internal, "unknown collective");
}
