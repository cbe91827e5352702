//===- NcclCommunicator.cpp - collectives over NCCL -----------------------===//
//
// Each communicator owns a communication stream. An operation
//   1. records an event on the caller's stream and makes the communication
//      stream wait for it (the operands are ready),
//   2. issues the NCCL calls on the communication stream (point-to-point
//      calls inside ncclGroupStart/End),
//   3. polls ncclCommGetAsyncError with a deadline while NCCL reports the
//      enqueue as still in progress (non-blocking communicators),
//   4. records a completion event on the communication stream and makes the
//      caller's stream wait for it (later work sees the results),
//   5. hands the completion event and its deadline to the factory's watchdog.
// A send (point-to-point) instead copies its operand into a buffer of its
// own on the caller's stream and does not make the caller wait: sends are
// buffered, as the compiler's deadlock proof assumes.
// The host never waits for the device. The watchdog thread polls every
// communicator's completion events and asynchronous error; on an error or a
// missed deadline it aborts every communicator of the factory and records the
// error on the device, whose next synchronization returns it.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/cuda/NcclCommunicator.h"
#include "CudaBackend.h"
#include "partition/runtime/DType.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <set>
#include <thread>

using namespace partition::runtime;
using namespace partition::runtime::cuda;

namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  case ReduceOp::Avg:
    return ncclAvg; // integer types divide after the sum
  }
  return ncclSum;
}

/// Polls `comm` until NCCL no longer reports work in progress, `stop` turns
/// true, or `timeout` passes. `what` names the operation in errors.
Status waitWhileInProgress(ncclComm_t comm, const std::atomic<bool> *stop,
                           std::chrono::milliseconds timeout,
                           const std::string &what) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (int spin = 0;; ++spin) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess)
      return ncclErrorStatus(result, "ncclCommGetAsyncError", __FILE__,
                             __LINE__, comm)
          .withContext(what);
    if (state == ncclSuccess)
      return Status::ok();
    if (state != ncclInProgress)
      return ncclErrorStatus(state, "ncclCommGetAsyncError", __FILE__, __LINE__,
                             comm)
          .withContext(what);
    if (stop && stop->load())
      return PARTITION_ERROR(Aborted, what, ": the communicator was aborted");
    if (Clock::now() > deadline)
      return PARTITION_ERROR(DeadlineExceeded, what,
                             ": NCCL still in progress "
                             "after ",
                             timeout.count(), " ms");
    if (spin < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// A send's operand and the copy of it that is sent (CommState::enqueue).
struct Staging {
  const void *data;
  size_t bytes;
  const void *copy = nullptr;
};

/// One enqueued operation the watchdog follows.
struct PendingOp {
  cudaEvent_t done;
  Clock::time_point deadline;
  const char *what;
};

/// The NCCL communicator, its stream and its pending operations. Shared by
/// the Communicator the caller holds and, while it polls, the watchdog.
class CommState {
public:
  CommState(std::shared_ptr<DeviceState> device, ncclComm_t comm,
            cudaStream_t stream, cudaEvent_t ready, int rank, int size,
            std::string name, std::chrono::milliseconds timeout)
      : device_(std::move(device)), comm_(comm), stream_(stream), ready_(ready),
        rank_(rank), size_(size), name_(std::move(name)), timeout_(timeout) {}

  ~CommState() {
    (void)device_->makeCurrent();
    {
      std::lock_guard<std::mutex> lock(opMutex_);
      if (comm_) {
        // Flush with a deadline; a communicator that cannot finish (a peer
        // is gone) is aborted instead of hanging the destructor.
        ncclResult_t result = ncclCommFinalize(comm_);
        Status status =
            result == ncclSuccess || result == ncclInProgress
                ? waitWhileInProgress(comm_, nullptr, timeout_, name_)
                : ncclErrorStatus(result, "ncclCommFinalize", __FILE__,
                                  __LINE__);
        if (status.isOk())
          (void)ncclCommDestroy(comm_);
        else
          (void)ncclCommAbort(comm_);
        comm_ = nullptr;
      }
    }
    std::lock_guard<std::mutex> lock(pendingMutex_);
    for (PendingOp &op : pending_)
      (void)cudaEventDestroy(op.done);
    for (cudaEvent_t event : freeEvents_)
      (void)cudaEventDestroy(event);
    (void)cudaEventDestroy(ready_);
    (void)cudaStreamDestroy(stream_);
  }

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string &name() const { return name_; }
  DeviceState &device() const { return *device_; }

  /// Runs `issue` (the NCCL calls, on stream()) ordered after the work on
  /// `compute` and before the work enqueued on it later. An error that leaves
  /// the communicator unusable is returned with `fatal` set.
  ///
  /// With `staging` (a send), the caller is not held up: `staging->bytes`
  /// at `staging->data` are copied, on the caller's stream, into a buffer of
  /// their own (`staging->copy`, what `issue` sends), which the
  /// communication stream frees once sent, and the caller's stream does not
  /// wait for the receiver (as with Gloo's buffered sends): the order of a
  /// pipeline's transfers is proved deadlock-free by the compiler's
  /// simulation under exactly that assumption, with a blocking receive and
  /// a FIFO per direction. The watchdog still follows the send.
  template <typename Fn>
  Status enqueue(const char *what, Stream &compute, Fn &&issue, bool &fatal,
                 Staging *staging = nullptr) {
    fatal = false;
    PARTITION_ASSIGN_OR_RETURN(CudaStream * computeStream,
                               asCudaStream(compute, what));
    std::lock_guard<std::mutex> lock(opMutex_);
    if (aborted_.load() || !comm_)
      return abortedError(what);
    PARTITION_RETURN_IF_ERROR(device_->makeCurrent());
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
    if (result != ncclSuccess ||
        (state != ncclSuccess && state != ncclInProgress)) {
      fatal = true;
      return ncclErrorStatus(result != ncclSuccess ? result : state,
                             "ncclCommGetAsyncError", __FILE__, __LINE__, comm_)
          .withContext(detail::concat(what, " on ", name_));
    }

    if (staging) {
      void *copy = nullptr;
      PARTITION_CUDA_CHECK(
          cudaMallocAsync(&copy, staging->bytes, computeStream->get()));
      staging->copy = copy;
      PARTITION_CUDA_CHECK(cudaMemcpyAsync(copy, staging->data, staging->bytes,
                                           cudaMemcpyDeviceToDevice,
                                           computeStream->get()));
    }
    PARTITION_CUDA_CHECK(cudaEventRecord(ready_, computeStream->get()));
    PARTITION_CUDA_CHECK(cudaStreamWaitEvent(stream_, ready_, 0));
    result = issue(comm_, stream_);
    if (result != ncclSuccess && result != ncclInProgress) {
      fatal = true;
      return ncclErrorStatus(result, what, __FILE__, __LINE__, comm_)
          .withContext(name_);
    }
    if (result == ncclInProgress) {
      Status status = waitWhileInProgress(comm_, &aborted_, timeout_,
                                          detail::concat(what, " on ", name_));
      if (!status.isOk()) {
        fatal = true;
        return status;
      }
    }

    if (staging) // freed in stream order, once the send has read it
      PARTITION_CUDA_CHECK(
          cudaFreeAsync(const_cast<void *>(staging->copy), stream_));
    PARTITION_ASSIGN_OR_RETURN(cudaEvent_t done, takeEvent());
    cudaError_t error = cudaEventRecord(done, stream_);
    if (error == cudaSuccess && !staging)
      error = cudaStreamWaitEvent(computeStream->get(), done, 0);
    if (error != cudaSuccess) {
      returnEvent(done);
      return cudaErrorStatus(error,
                             "ordering the caller's stream after the "
                             "collective",
                             __FILE__, __LINE__);
    }
    std::lock_guard<std::mutex> pendingLock(pendingMutex_);
    pending_.push_back({done, Clock::now() + timeout_, what});
    return Status::ok();
  }

  /// Called by the watchdog: retires finished operations and returns an
  /// error when NCCL reports one or an operation missed its deadline.
  Status poll(Clock::time_point now) {
    if (aborted_.load())
      return Status::ok();
    (void)device_->makeCurrent();
    // The asynchronous error, unless an operation is being enqueued right
    // now (that path checks it itself).
    {
      std::unique_lock<std::mutex> lock(opMutex_, std::try_to_lock);
      if (lock.owns_lock() && comm_) {
        ncclResult_t state = ncclSuccess;
        if (ncclCommGetAsyncError(comm_, &state) == ncclSuccess &&
            state != ncclSuccess && state != ncclInProgress)
          return ncclErrorStatus(state, "asynchronous NCCL error", __FILE__,
                                 __LINE__, comm_)
              .withContext(name_);
      }
    }
    std::lock_guard<std::mutex> lock(pendingMutex_);
    while (!pending_.empty()) {
      PendingOp &op = pending_.front();
      cudaError_t error = cudaEventQuery(op.done);
      if (error == cudaSuccess) {
        freeEvents_.push_back(op.done);
        pending_.pop_front();
        continue;
      }
      if (error != cudaErrorNotReady)
        return cudaErrorStatus(error, "cudaEventQuery", __FILE__, __LINE__)
            .withContext(detail::concat(op.what, " on ", name_));
      if (now > op.deadline)
        return PARTITION_ERROR(DeadlineExceeded, op.what, " on ", name_,
                               " did not finish within ", timeout_.count(),
                               " ms");
      break;
    }
    return Status::ok();
  }

  /// Aborts the NCCL communicator (once); every later call returns Aborted
  /// naming `reason`.
  void abort(const Status &reason) {
    if (aborted_.exchange(true))
      return;
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      abortReason_ = reason;
    }
    // An enqueue in progress sees aborted_ and returns, releasing the lock.
    std::lock_guard<std::mutex> lock(opMutex_);
    (void)device_->makeCurrent();
    if (comm_) {
      (void)ncclCommAbort(comm_);
      comm_ = nullptr;
    }
    // Aborted kernels exit, so the events complete; stop following them.
    std::lock_guard<std::mutex> pendingLock(pendingMutex_);
    for (PendingOp &op : pending_)
      freeEvents_.push_back(op.done);
    pending_.clear();
  }

  bool aborted() const { return aborted_.load(); }

private:
  Status abortedError(const char *what) {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    return PARTITION_ERROR(Aborted, what, " on ", name_,
                           ": the communicator was aborted (",
                           abortReason_.isOk() ? std::string("no reason given")
                                               : abortReason_.toString(),
                           ")");
  }

  StatusOr<cudaEvent_t> takeEvent() {
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      if (!freeEvents_.empty()) {
        cudaEvent_t event = freeEvents_.back();
        freeEvents_.pop_back();
        return event;
      }
    }
    cudaEvent_t event = nullptr;
    PARTITION_CUDA_CHECK(
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    return event;
  }

  void returnEvent(cudaEvent_t event) {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    freeEvents_.push_back(event);
  }

  std::shared_ptr<DeviceState> device_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  cudaEvent_t ready_;
  int rank_, size_;
  std::string name_;
  std::chrono::milliseconds timeout_;

  /// Serialises NCCL calls on comm_ with each other and with the abort.
  std::mutex opMutex_;
  std::atomic<bool> aborted_{false};
  /// Guards pending_, freeEvents_ and abortReason_.
  std::mutex pendingMutex_;
  std::deque<PendingOp> pending_;
  std::vector<cudaEvent_t> freeEvents_;
  Status abortReason_;
};

/// The communicators of one factory and the watchdog thread that follows
/// them. On any failure it aborts all of them.
class Registry {
public:
  Registry() : thread_([this] { watch(); }) {}
  ~Registry() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void add(const std::shared_ptr<CommState> &comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    comms_.push_back(comm);
  }

  /// Aborts every live communicator and records `reason` on their devices.
  void abortAll(const Status &reason) {
    std::vector<std::shared_ptr<CommState>> live;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto &weak : comms_)
        if (auto comm = weak.lock())
          live.push_back(std::move(comm));
    }
    for (auto &comm : live) {
      comm->device().reportAsyncError(
          reason.withContext("NCCL communicators aborted"));
      comm->abort(reason);
    }
  }

private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(10));
      if (stop_)
        break;
      std::vector<std::shared_ptr<CommState>> live;
      comms_.erase(std::remove_if(comms_.begin(), comms_.end(),
                                  [&](std::weak_ptr<CommState> &weak) {
                                    auto comm = weak.lock();
                                    if (!comm)
                                      return true;
                                    live.push_back(std::move(comm));
                                    return false;
                                  }),
                   comms_.end());
      lock.unlock();
      Clock::time_point now = Clock::now();
      for (auto &comm : live) {
        Status status = comm->poll(now);
        if (!status.isOk()) {
          abortAll(status);
          break;
        }
      }
      live.clear(); // may destroy a communicator: not under the lock
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<std::weak_ptr<CommState>> comms_;
  std::thread thread_; // last: started once the members above exist
};

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(std::shared_ptr<Registry> registry,
                   std::shared_ptr<CommState> state)
      : registry_(std::move(registry)), state_(std::move(state)) {}
  ~NcclCommunicator() override {
    // The state may outlive this object for a moment in the watchdog; the
    // NCCL communicator is destroyed with the last reference.
    state_.reset();
  }

  int rank() const override { return state_->rank(); }
  int size() const override { return state_->size(); }

  Status allReduce(const void *send, void *recv, int64_t count, DType dtype,
                   ReduceOp op, Stream &stream) override {
    if (count == 0)
      return Status::ok();
    return run("allReduce", stream, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllReduce(send, recv, static_cast<size_t>(count),
                           ncclType(dtype), ncclOp(op), comm, s);
    });
  }

  Status allGather(const void *send, void *recv, int64_t count, DType dtype,
                   Stream &stream) override {
    if (count == 0)
      return Status::ok();
    return run("allGather", stream, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclAllGather(send, recv, static_cast<size_t>(count),
                           ncclType(dtype), comm, s);
    });
  }

  Status reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                       ReduceOp op, Stream &stream) override {
    if (count == 0)
      return Status::ok();
    return run("reduceScatter", stream, [&](ncclComm_t comm, cudaStream_t s) {
      return ncclReduceScatter(send, recv, static_cast<size_t>(count),
                               ncclType(dtype), ncclOp(op), comm, s);
    });
  }

  Status allToAll(const void *send, void *recv, int64_t count, DType dtype,
                  Stream &stream) override {
    if (count == 0)
      return Status::ok();
    size_t blockBytes = static_cast<size_t>(count * dtypeSize(dtype));
    int n = size();
    return run("allToAll", stream, [&](ncclComm_t comm, cudaStream_t s) {
      ncclResult_t result = ncclGroupStart();
      for (int peer = 0; peer < n && result == ncclSuccess; ++peer) {
        result = ncclSend(static_cast<const char *>(send) + peer * blockBytes,
                          static_cast<size_t>(count), ncclType(dtype), peer,
                          comm, s);
        if (result == ncclSuccess)
          result = ncclRecv(static_cast<char *>(recv) + peer * blockBytes,
                            static_cast<size_t>(count), ncclType(dtype), peer,
                            comm, s);
      }
      return endGroup(result);
    });
  }

  Status permute(const void *send, void *recv, int64_t count, DType dtype,
                 const std::vector<std::pair<int, int>> &pairs,
                 Stream &stream) override {
    int me = rank(), n = size();
    int target = -1, source = -1;
    std::set<int> sources, targets;
    for (auto [from, to] : pairs) {
      if (from < 0 || from >= n || to < 0 || to >= n)
        return PARTITION_ERROR(InvalidArgument, "permute: pair (", from, ", ",
                               to, ") is outside the group of ", n);
      if (!sources.insert(from).second || !targets.insert(to).second)
        return PARTITION_ERROR(InvalidArgument, "permute: rank ",
                               sources.count(from) ? from : to,
                               " appears twice as a source or target");
      if (from == me)
        target = to;
      if (to == me)
        source = from;
    }
    if (count == 0)
      return Status::ok();
    size_t bytes = static_cast<size_t>(count * dtypeSize(dtype));
    return run("permute", stream, [&](ncclComm_t comm, cudaStream_t s) {
      // A rank that is no target receives zeros.
      if (source < 0 && cudaMemsetAsync(recv, 0, bytes, s) != cudaSuccess)
        return ncclUnhandledCudaError;
      if (source < 0 && target < 0)
        return ncclSuccess;
      ncclResult_t result = ncclGroupStart();
      if (result == ncclSuccess && target >= 0)
        result = ncclSend(send, static_cast<size_t>(count), ncclType(dtype),
                          target, comm, s);
      if (result == ncclSuccess && source >= 0)
        result = ncclRecv(recv, static_cast<size_t>(count), ncclType(dtype),
                          source, comm, s);
      return endGroup(result);
    });
  }

  Status send(const void *data, int64_t count, DType dtype, int peer,
              int64_t /*tag*/, Stream &stream) override {
    PARTITION_RETURN_IF_ERROR(checkPeer("send", peer));
    if (count == 0)
      return Status::ok();
    Staging staging{data, static_cast<size_t>(count) * dtypeSize(dtype)};
    return run(
        "send", stream,
        [&](ncclComm_t comm, cudaStream_t s) {
          ncclResult_t result = ncclGroupStart();
          if (result == ncclSuccess)
            result = ncclSend(staging.copy, static_cast<size_t>(count),
                              ncclType(dtype), peer, comm, s);
          return endGroup(result);
        },
        &staging);
  }

  Status recv(void *data, int64_t count, DType dtype, int peer, int64_t /*tag*/,
              Stream &stream) override {
    PARTITION_RETURN_IF_ERROR(checkPeer("recv", peer));
    if (count == 0)
      return Status::ok();
    return run("recv", stream, [&](ncclComm_t comm, cudaStream_t s) {
      ncclResult_t result = ncclGroupStart();
      if (result == ncclSuccess)
        result = ncclRecv(data, static_cast<size_t>(count), ncclType(dtype),
                          peer, comm, s);
      return endGroup(result);
    });
  }

  void abort() override {
    state_->abort(
        PARTITION_ERROR(Aborted, "abort() was called on ", state_->name()));
  }

private:
  /// Closes a group opened by the caller; an error inside still closes it.
  static ncclResult_t endGroup(ncclResult_t inner) {
    ncclResult_t end = ncclGroupEnd();
    return inner != ncclSuccess ? inner : end;
  }

  Status checkPeer(const char *what, int peer) const {
    if (peer < 0 || peer >= size())
      return PARTITION_ERROR(InvalidArgument, what, ": peer ", peer,
                             " is outside the group of ", size());
    return Status::ok();
  }

  template <typename Fn>
  Status run(const char *what, Stream &stream, Fn &&issue,
             Staging *staging = nullptr) {
    bool fatal = false;
    Status status = state_->enqueue(what, stream, issue, fatal, staging);
    // Outside the communicator's locks: aborting takes them.
    if (fatal)
      registry_->abortAll(status);
    return status;
  }

  std::shared_ptr<Registry> registry_;
  std::shared_ptr<CommState> state_;
};

class NcclCommunicatorFactory final : public CommunicatorFactory {
public:
  NcclCommunicatorFactory(Store &store, int worldRank, int worldSize,
                          std::shared_ptr<DeviceState> device,
                          NcclOptions options)
      : store_(store), worldRank_(worldRank), worldSize_(worldSize),
        device_(std::move(device)), options_(std::move(options)),
        registry_(std::make_shared<Registry>()) {}

  int worldRank() const override { return worldRank_; }
  int worldSize() const override { return worldSize_; }

  StatusOr<std::unique_ptr<Communicator>>
  create(const std::vector<int> &ranks, const std::string &key) override {
    int n = static_cast<int>(ranks.size());
    int me = -1;
    std::set<int> seen;
    for (int i = 0; i < n; ++i) {
      if (ranks[i] < 0 || ranks[i] >= worldSize_ ||
          !seen.insert(ranks[i]).second)
        return PARTITION_ERROR(
            InvalidArgument, "NCCL group \"", key, "\": rank ", ranks[i],
            " is repeated or outside the world of ", worldSize_);
      if (ranks[i] == worldRank_)
        me = i;
    }
    if (me < 0)
      return PARTITION_ERROR(InvalidArgument, "NCCL group \"", key,
                             "\" does not contain world rank ", worldRank_);
    std::string name = detail::concat("NCCL group \"", key, "\" (rank ", me,
                                      " of ", n, " on ", device_->name(), ")");

    // The group's first rank makes the unique id and publishes it.
    ncclUniqueId id;
    std::string storeKey = options_.keyPrefix + "/" + key;
    if (me == 0) {
      PARTITION_NCCL_CHECK(ncclGetUniqueId(&id));
      std::vector<char> bytes(sizeof(id));
      std::memcpy(bytes.data(), &id, sizeof(id));
      PARTITION_RETURN_IF_ERROR(store_.set(storeKey, bytes).withContext(name));
    } else {
      StatusOr<std::vector<char>> bytes =
          store_.get(storeKey, options_.rendezvousTimeout);
      if (!bytes.isOk())
        return bytes.status().withContext(
            detail::concat(name, ": waiting for the unique id"));
      if (bytes->size() != sizeof(id))
        return PARTITION_ERROR(InvalidArgument, name, ": store key \"",
                               storeKey, "\" holds ", bytes->size(),
                               " bytes, not an NCCL unique id of ", sizeof(id));
      std::memcpy(&id, bytes->data(), sizeof(id));
    }

    PARTITION_RETURN_IF_ERROR(device_->makeCurrent());
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; // every wait below has a deadline
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclCommInitRankConfig(&comm, n, id, me, &config);
    Status status;
    if (result != ncclSuccess && result != ncclInProgress)
      status = ncclErrorStatus(result, "ncclCommInitRankConfig", __FILE__,
                               __LINE__, comm);
    else
      status = waitWhileInProgress(comm, nullptr, options_.timeout,
                                   detail::concat(name, ": initialisation"));
    if (!status.isOk()) {
      if (comm)
        (void)ncclCommAbort(comm);
      return status;
    }

    // The communication stream gets the highest priority, so collectives
    // start as soon as their operands are ready even under heavy compute.
    int leastPriority = 0, greatestPriority = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t ready = nullptr;
    cudaError_t error =
        cudaDeviceGetStreamPriorityRange(&leastPriority, &greatestPriority);
    if (error == cudaSuccess)
      error = cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking,
                                           greatestPriority);
    if (error == cudaSuccess)
      error = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    if (error != cudaSuccess) {
      if (stream)
        (void)cudaStreamDestroy(stream);
      (void)ncclCommAbort(comm);
      return cudaErrorStatus(error, "creating the communication stream",
                             __FILE__, __LINE__)
          .withContext(name);
    }
    auto state = std::make_shared<CommState>(device_, comm, stream, ready, me,
                                             n, name, options_.timeout);
    registry_->add(state);
    return std::unique_ptr<Communicator>(
        new NcclCommunicator(registry_, std::move(state)));
  }

private:
  Store &store_;
  int worldRank_, worldSize_;
  std::shared_ptr<DeviceState> device_;
  NcclOptions options_;
  std::shared_ptr<Registry> registry_;
};

} // namespace

StatusOr<std::unique_ptr<CommunicatorFactory>>
cuda::createNcclCommunicatorFactory(Store &store, int worldRank, int worldSize,
                                    Device &device, NcclOptions options) {
  std::shared_ptr<DeviceState> state = cudaDeviceState(device);
  if (!state)
    return PARTITION_ERROR(InvalidArgument, "NCCL needs a CUDA device, got ",
                           device.name());
  if (worldSize < 1 || worldRank < 0 || worldRank >= worldSize)
    return PARTITION_ERROR(InvalidArgument, "world rank ", worldRank,
                           " is outside a world of ", worldSize);
  return std::unique_ptr<CommunicatorFactory>(new NcclCommunicatorFactory(
      store, worldRank, worldSize, std::move(state), std::move(options)));
}
