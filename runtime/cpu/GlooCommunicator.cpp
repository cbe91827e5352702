//===- GlooCommunicator.cpp - collectives over Gloo's TCP transport -------===//
//
// One gloo::rendezvous::Context per group, connected as a full mesh through
// the runtime's Store (under a key prefix per group and generation). The
// collectives are Gloo's new-style functions (allreduce, allgather,
// alltoall); reduce-scatter is an alltoall followed by a local reduction
// (the old-style ReduceScatterHalvingDoubling class ruins later operations on
// its context); permute, send and recv use unbound buffers directly.
//
// Gloo reports errors by throwing. Every call into Gloo goes through
// PARTITION_GLOO_CALL, which turns the exception into a Status and aborts
// the communicator: Gloo's context is unusable after an error anyway (a
// timeout closes all its connections), and resetting the connections makes
// the peers fail at once rather than after their own timeouts.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/cpu/GlooCommunicator.h"

#include "partition/runtime/Device.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace partition::runtime;
using namespace partition::runtime::cpu;

/// Runs the statements in `...`; if they throw (a Gloo error, or a store
/// failure raised inside Gloo), returns `onError(exception, file, line)`, a
/// Status. The one place where Gloo's exceptions become Status.
#define PARTITION_GLOO_CALL(onError, ...)                                      \
  do {                                                                         \
    try {                                                                      \
      __VA_ARGS__;                                                             \
    } catch (...) {                                                            \
      return (onError)(std::current_exception(), __FILE__, __LINE__);          \
    }                                                                          \
  } while (0)

namespace {

class GlooCommunicator;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// A store error raised through Gloo's rendezvous (which only knows
/// exceptions); carries the store's Status back out.
class StoreFailure : public std::runtime_error {
public:
  explicit StoreFailure(Status status)
      : std::runtime_error(status.toString()), status(std::move(status)) {}
  Status status;
};

bool mentionsTimeout(const std::string &message) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find("timed out") != std::string::npos ||
         lower.find("timeout") != std::string::npos;
}

/// The Status for an exception thrown by Gloo while doing `what`. I/O errors
/// that are timeouts become DeadlineExceeded; other I/O errors become
/// `ioCode` (Aborted for a peer that went away during an operation,
/// Unavailable while connecting), or Aborted when this side aborted first.
Status glooErrorToStatus(std::exception_ptr error, const std::string &what,
                         StatusCode ioCode, bool abortedHere, const char *file,
                         int line) {
  StatusCode code = StatusCode::Internal;
  std::string message;
  try {
    std::rethrow_exception(error);
  } catch (const StoreFailure &e) {
    return e.status.withContext(what);
  } catch (const gloo::IoException &e) {
    message = e.what();
    code = abortedHere                ? StatusCode::Aborted
           : mentionsTimeout(message) ? StatusCode::DeadlineExceeded
                                      : ioCode;
  } catch (const gloo::EnforceNotMet &e) {
    message = std::string("gloo check failed: ") + e.what();
    code = abortedHere ? StatusCode::Aborted : StatusCode::Internal;
  } catch (const std::exception &e) {
    message = e.what();
    code = abortedHere ? StatusCode::Aborted : StatusCode::Internal;
  } catch (...) {
    message = "unknown exception";
  }
  return Status(code, what + ": " + message, file, line);
}

//===----------------------------------------------------------------------===//
// Store adapter
//===----------------------------------------------------------------------===//

/// runtime::Store as Gloo's rendezvous store. Every lookup waits at most the
/// communicator timeout.
class StoreAdapter final : public gloo::rendezvous::Store {
public:
  StoreAdapter(partition::runtime::Store &store,
               std::chrono::milliseconds timeout)
      : store_(store), timeout_(timeout) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    Status status = store_.set(key, data);
    if (!status.isOk())
      throw StoreFailure(status);
  }

  std::vector<char> get(const std::string &key) override {
    StatusOr<std::vector<char>> value = store_.get(key, timeout_);
    if (!value.isOk())
      throw StoreFailure(value.status());
    return std::move(value).value();
  }

  void wait(const std::vector<std::string> &keys) override {
    wait(keys, timeout_);
  }

  /// Waits with this adapter's timeout whatever Gloo asks for (Gloo passes
  /// its context's timeout, which is shortened while connecting).
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &) override {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (const std::string &key : keys) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      StatusOr<std::vector<char>> value =
          store_.get(key, std::max(left, std::chrono::milliseconds(0)));
      if (!value.isOk())
        throw StoreFailure(value.status());
    }
  }

private:
  partition::runtime::Store &store_;
  std::chrono::milliseconds timeout_;
};

//===----------------------------------------------------------------------===//
// Element types and reductions
//===----------------------------------------------------------------------===//

/// Storage type T of a dtype, the type Acc its reductions compute in, and the
/// conversions between them (f16 and bf16 reduce in f32).
template <DType D>
struct Elem;
template <>
struct Elem<DType::F32> {
  using T = float;
  using Acc = float;
  static Acc load(T x) { return x; }
  static T store(Acc x) { return x; }
};
template <>
struct Elem<DType::F16> {
  using T = uint16_t;
  using Acc = float;
  static Acc load(T x) { return halfToFloat(x); }
  static T store(Acc x) { return floatToHalf(x); }
};
template <>
struct Elem<DType::BF16> {
  using T = uint16_t;
  using Acc = float;
  static Acc load(T x) { return bf16ToFloat(x); }
  static T store(Acc x) { return floatToBf16(x); }
};
template <>
struct Elem<DType::I32> {
  using T = int32_t;
  using Acc = int32_t;
  static Acc load(T x) { return x; }
  static T store(Acc x) { return x; }
};
template <>
struct Elem<DType::I64> {
  using T = int64_t;
  using Acc = int64_t;
  static Acc load(T x) { return x; }
  static T store(Acc x) { return x; }
};

/// Calls `f(Elem<dtype>{})`.
template <typename F>
decltype(auto) visitDType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F16:
    return f(Elem<DType::F16>{});
  case DType::BF16:
    return f(Elem<DType::BF16>{});
  case DType::I32:
    return f(Elem<DType::I32>{});
  case DType::I64:
    return f(Elem<DType::I64>{});
  case DType::F32:
    break;
  }
  return f(Elem<DType::F32>{});
}

/// a + b; integers wrap around (two's complement) instead of overflowing.
template <typename A>
A addValues(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

/// Whether `b` should replace `a` as the running max (min when `isMin`). A
/// NaN wins, so that it propagates like it does through a sum.
template <typename A>
bool replaces(A a, A b, bool isMin) {
  if constexpr (std::is_floating_point_v<A>) {
    if (b != b)
      return true;
    if (a != a)
      return false;
  }
  return isMin ? b < a : b > a;
}

/// Gloo's element-wise reduction `out = a op b` for dtype E. Sums of f16 and
/// bf16 are never reduced in place (they go through f32), so only max and
/// min see them here.
template <typename E>
gloo::AllreduceOptions::Func reduceFunction(ReduceOp op) {
  using T = typename E::T;
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    bool isMin = op == ReduceOp::Min;
    return [isMin](void *out, const void *a, const void *b, size_t n) {
      T *o = static_cast<T *>(out);
      const T *x = static_cast<const T *>(a);
      const T *y = static_cast<const T *>(b);
      for (size_t i = 0; i < n; ++i)
        o[i] = replaces(E::load(x[i]), E::load(y[i]), isMin) ? y[i] : x[i];
    };
  }
  return [](void *out, const void *a, const void *b, size_t n) {
    T *o = static_cast<T *>(out);
    const T *x = static_cast<const T *>(a);
    const T *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; ++i)
      o[i] = E::store(addValues(E::load(x[i]), E::load(y[i])));
  };
}

/// out[i] = op over b of blocks[b * count + i], for `n` blocks, reducing in
/// E::Acc and rounding once.
template <typename E>
void reduceBlocks(const void *blocks, int n, int64_t count, ReduceOp op,
                  void *out) {
  using T = typename E::T;
  using Acc = typename E::Acc;
  const T *in = static_cast<const T *>(blocks);
  T *o = static_cast<T *>(out);
  bool isMinMax = op == ReduceOp::Max || op == ReduceOp::Min;
  bool isMin = op == ReduceOp::Min;
  for (int64_t i = 0; i < count; ++i) {
    Acc acc = E::load(in[i]);
    for (int b = 1; b < n; ++b) {
      Acc v = E::load(in[b * count + i]);
      if (isMinMax)
        acc = replaces(acc, v, isMin) ? v : acc;
      else
        acc = addValues(acc, v);
    }
    if (op == ReduceOp::Avg)
      acc = acc / static_cast<Acc>(n);
    o[i] = E::store(acc);
  }
}

/// data[i] /= n in place, for the average of a sum over n ranks.
template <typename E>
void divideBy(void *data, int64_t count, int n) {
  using T = typename E::T;
  using Acc = typename E::Acc;
  T *d = static_cast<T *>(data);
  for (int64_t i = 0; i < count; ++i)
    d[i] = E::store(E::load(d[i]) / static_cast<Acc>(n));
}

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  case ReduceOp::Avg:
    return "avg";
  }
  return "?";
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bBytes && pb < pa + aBytes;
}

/// Slot prefixes for the operations built on unbound buffers; Gloo's own
/// collectives use prefixes 0x01..0x08 in the top byte.
constexpr uint64_t kSendRecvSlot = uint64_t(0xf0) << 56;
constexpr uint64_t kPermuteSlot = uint64_t(0xf1) << 56;
constexpr int64_t kMaxTag = (int64_t(1) << 56) - 1;

} // namespace

//===----------------------------------------------------------------------===//
// Shared factory state
//===----------------------------------------------------------------------===//

/// The device (one TCP event loop per rank), the generation of each group
/// key, and the live communicators, for abortAll().
struct GlooCommunicatorFactory::Shared {
  std::mutex mutex;
  std::shared_ptr<gloo::transport::Device> device;
  std::map<std::string, int> generations;
  std::set<GlooCommunicator *> live;

  /// Aborts every live communicator but `except`.
  void abortAll(GlooCommunicator *except, const std::string &reason);
};

namespace {

//===----------------------------------------------------------------------===//
// GlooCommunicator
//===----------------------------------------------------------------------===//

using Shared = GlooCommunicatorFactory::Shared;

/// What an operation is, for its error messages. Cheap to make: the text is
/// only formatted when something fails.
struct OpInfo {
  const char *name;
  int64_t count;
  DType dtype;
  /// The reduction, for the reducing collectives.
  const char *reduction = nullptr;
  /// The peer and tag of a send ("to") or recv ("from").
  const char *direction = nullptr;
  int peer = -1;
  int64_t tag = -1;
};

class GlooCommunicator final : public Communicator {
public:
  GlooCommunicator(int rank, int size, std::string name,
                   std::shared_ptr<gloo::Context> context,
                   std::chrono::milliseconds timeout,
                   std::shared_ptr<Shared> shared, bool abortAllOnError)
      : rank_(rank), size_(size), name_(std::move(name)),
        context_(std::move(context)), timeout_(timeout),
        shared_(std::move(shared)), abortAllOnError_(abortAllOnError) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->live.insert(this);
  }

  ~GlooCommunicator() override {
    // Sends still in flight finish first (their receivers are peers that
    // run to the end, or abort and cut the waits short).
    {
      std::lock_guard<std::mutex> lock(sendMutex_);
      stopSends_ = true;
    }
    sendReady_.notify_all();
    if (sendThread_.joinable())
      sendThread_.join();
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->live.erase(this);
    // Destroying the context closes the connections: peers waiting on this
    // rank see them close and fail.
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(const void *send, void *recv, int64_t count, DType dtype,
                   ReduceOp op, Stream &stream) override;
  Status allGather(const void *send, void *recv, int64_t count, DType dtype,
                   Stream &stream) override;
  Status reduceScatter(const void *send, void *recv, int64_t count, DType dtype,
                       ReduceOp op, Stream &stream) override;
  Status allToAll(const void *send, void *recv, int64_t count, DType dtype,
                  Stream &stream) override;
  Status permute(const void *send, void *recv, int64_t count, DType dtype,
                 const std::vector<std::pair<int, int>> &pairs,
                 Stream &stream) override;
  Status send(const void *data, int64_t count, DType dtype, int peer,
              int64_t tag, Stream &stream) override;
  Status recv(void *data, int64_t count, DType dtype, int peer, int64_t tag,
              Stream &stream) override;

  void abort() override { abortWith("aborted on request"); }

  /// Makes this communicator unusable: later calls return Aborted, waits on
  /// unbound buffers of permute/send/recv return at once, and the
  /// connections are reset so that peers fail at once. A Gloo collective
  /// already waiting in another thread returns when its timeout expires
  /// (Gloo's public API offers no way to wake it sooner).
  void abortWith(const std::string &reason);

  /// Checks the arguments shared by every operation and that the
  /// communicator is usable; waits for `stream`'s earlier work.
  Status begin(const OpInfo &info, Stream &stream,
               std::initializer_list<const void *> buffers);

  /// Turns an exception from Gloo during `info` into a Status and aborts.
  Status fail(std::exception_ptr error, const OpInfo &info, const char *file,
              int line);

private:
  /// Tag of the next collective; every member calls collectives in the same
  /// order, so the tags agree.
  uint32_t nextTag() { return tag_++; }
  /// "all-reduce (sum) of 13 x f32 over group 'rows' (rank 1 of 4)".
  std::string describe(const OpInfo &info) const;
  /// The Aborted status of an operation on an aborted communicator.
  Status abortedError(const OpInfo &info, const char *file, int line);
  /// An error handler for PARTITION_GLOO_CALL.
  auto onError(const OpInfo &info) {
    return [this, info](std::exception_ptr e, const char *file, int line) {
      return fail(e, info, file, line);
    };
  }
  /// In-place all-reduce of `count` elements of type E::T with `fn`.
  template <typename E>
  Status ringAllReduce(void *data, int64_t count,
                       gloo::AllreduceOptions::Func fn, const OpInfo &info,
                       uint32_t tag);
  /// Posts sends/receives on unbound buffers and waits for them; a wait cut
  /// short by abort() returns Aborted.
  struct Transfer {
    gloo::transport::UnboundBuffer *buffer;
    int peer;
    bool isSend;
  };
  Status runTransfers(const std::vector<Transfer> &transfers, uint64_t slot,
                      const OpInfo &info);

  /// Sends do not wait for their receivers: send() copies the data, posts
  /// it and returns, and a thread waits for each send in turn. Stages of a
  /// pipeline send to each other at once (1F1B's steady state: one sends
  /// forward while the next sends backward); a send that waited for its
  /// receiver would hold up the receive its peer is waiting for.
  struct PendingSend {
    std::vector<char> data;
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    OpInfo info;
  };
  void waitForSends();
  std::mutex sendMutex_;
  std::condition_variable sendReady_;
  std::deque<std::unique_ptr<PendingSend>> sends_;
  bool stopSends_ = false;
  Status sendError_;
  std::thread sendThread_;

  const int rank_;
  const int size_;
  const std::string name_;
  /// Null for a group of one.
  std::shared_ptr<gloo::Context> context_;
  const std::chrono::milliseconds timeout_;
  std::shared_ptr<Shared> shared_;
  const bool abortAllOnError_;

  /// Serializes operations (tags must be taken in call order).
  std::mutex opMutex_;
  uint32_t tag_ = 0;

  /// Guards the abort state and the unbound buffers being waited on.
  std::mutex stateMutex_;
  std::atomic<bool> aborted_{false};
  std::string abortReason_;
  std::set<gloo::transport::UnboundBuffer *> waiting_;
};

std::string GlooCommunicator::describe(const OpInfo &info) const {
  std::string text = info.name;
  if (info.reduction)
    text += std::string(" (") + info.reduction + ")";
  text += detail::concat(" of ", info.count, " x ", dtypeName(info.dtype));
  if (info.direction)
    text += detail::concat(" ", info.direction, " rank ", info.peer,
                           " with tag ", info.tag);
  return text + detail::concat(" over group '", name_, "' (rank ", rank_,
                               " of ", size_, ")");
}

Status GlooCommunicator::abortedError(const OpInfo &info, const char *file,
                                      int line) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  return Status(StatusCode::Aborted,
                describe(info) + ": communicator was aborted (" + abortReason_ +
                    ")",
                file, line);
}

void GlooCommunicator::abortWith(const std::string &reason) {
  std::lock_guard<std::mutex> lock(stateMutex_);
  if (aborted_.exchange(true))
    return;
  abortReason_ = reason;
  for (gloo::transport::UnboundBuffer *buffer : waiting_) {
    buffer->abortWaitSend();
    buffer->abortWaitRecv();
  }
  if (context_) {
    try {
      context_->closeConnections();
    } catch (...) {
      // Already closed by an error: nothing more to do.
    }
  }
}

Status GlooCommunicator::fail(std::exception_ptr error, const OpInfo &info,
                              const char *file, int line) {
  bool abortedBefore = aborted_.load();
  Status status = glooErrorToStatus(error, describe(info), StatusCode::Aborted,
                                    abortedBefore, file, line);
  if (abortedBefore) {
    std::lock_guard<std::mutex> lock(stateMutex_);
    status =
        status.withContext("communicator was aborted (" + abortReason_ + ")");
  }
  abortWith(status.toString());
  if (abortAllOnError_)
    shared_->abortAll(this,
                      "group '" + name_ + "' failed: " + status.message());
  return status;
}

Status GlooCommunicator::begin(const OpInfo &info, Stream &stream,
                               std::initializer_list<const void *> buffers) {
  if (aborted_.load())
    return abortedError(info, __FILE__, __LINE__);
  if (info.count < 0)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": negative element count");
  if (dtypeSize(info.dtype) == 0)
    return PARTITION_ERROR(InvalidArgument, describe(info), ": unknown dtype ",
                           static_cast<int>(info.dtype));
  // The largest buffer an operation touches is size() blocks of `count`.
  if (info.count > std::numeric_limits<int64_t>::max() / 8 / size_)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": element count too large");
  if (info.count > 0)
    for (const void *buffer : buffers)
      if (!buffer)
        return PARTITION_ERROR(InvalidArgument, describe(info),
                               ": null buffer");
  return stream.synchronize();
}

template <typename E>
Status GlooCommunicator::ringAllReduce(void *data, int64_t count,
                                       gloo::AllreduceOptions::Func fn,
                                       const OpInfo &info, uint32_t tag) {
  using T = typename E::T;
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler, {
    gloo::AllreduceOptions opts(context_);
    opts.setOutput<T>(static_cast<T *>(data), static_cast<size_t>(count));
    opts.setReduceFunction(std::move(fn));
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::allreduce(opts);
  });
  return Status::ok();
}

Status GlooCommunicator::allReduce(const void *send, void *recv, int64_t count,
                                   DType dtype, ReduceOp op, Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"all-reduce", count, dtype, reduceOpName(op)};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {send, recv}));
  uint32_t tag = nextTag();
  if (count == 0)
    return Status::ok();
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  if (send != recv)
    std::memmove(recv, send, bytes);
  if (size_ == 1)
    return Status::ok(); // The op over one rank is the identity, Avg too.

  return visitDType(dtype, [&](auto e) -> Status {
    using E = decltype(e);
    bool isSum = op == ReduceOp::Sum || op == ReduceOp::Avg;
    if constexpr (std::is_same_v<typename E::T, uint16_t>) {
      if (isSum) {
        // Sum f16/bf16 in f32 and round once: every rank gets the f32 sum
        // rounded, whatever the ring order.
        std::vector<float> wide(static_cast<size_t>(count));
        const auto *narrow = static_cast<const uint16_t *>(recv);
        for (int64_t i = 0; i < count; ++i)
          wide[i] = E::load(narrow[i]);
        PARTITION_RETURN_IF_ERROR(ringAllReduce<Elem<DType::F32>>(
            wide.data(), count, reduceFunction<Elem<DType::F32>>(ReduceOp::Sum),
            info, tag));
        auto *out = static_cast<uint16_t *>(recv);
        float scale = op == ReduceOp::Avg ? float(size_) : 1.0f;
        for (int64_t i = 0; i < count; ++i)
          out[i] = E::store(wide[i] / scale);
        return Status::ok();
      }
    }
    PARTITION_RETURN_IF_ERROR(ringAllReduce<E>(
        recv, count, reduceFunction<E>(isSum ? ReduceOp::Sum : op), info, tag));
    if (op == ReduceOp::Avg)
      divideBy<E>(recv, count, size_);
    return Status::ok();
  });
}

Status GlooCommunicator::allGather(const void *send, void *recv, int64_t count,
                                   DType dtype, Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"all-gather", count, dtype};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {send, recv}));
  uint32_t tag = nextTag();
  if (count == 0)
    return Status::ok();
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  char *out = static_cast<char *>(recv);
  char *mine = out + rank_ * bytes;
  if (send != mine)
    std::memmove(mine, send, bytes); // In place when send is our block.
  if (size_ == 1)
    return Status::ok();
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler, {
    gloo::AllgatherOptions opts(context_);
    opts.setOutput<char>(out, bytes * size_);
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  });
  return Status::ok();
}

Status GlooCommunicator::allToAll(const void *send, void *recv, int64_t count,
                                  DType dtype, Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"all-to-all", count, dtype};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {send, recv}));
  uint32_t tag = nextTag();
  if (count == 0)
    return Status::ok();
  size_t total = static_cast<size_t>(count) * dtypeSize(dtype) * size_;
  if (size_ == 1) {
    std::memmove(recv, send, total);
    return Status::ok();
  }
  // Gloo receives into `recv` while it still sends from `send`: copy an
  // input that overlaps the output first.
  std::vector<char> copy;
  if (overlaps(send, total, recv, total)) {
    copy.assign(static_cast<const char *>(send),
                static_cast<const char *>(send) + total);
    send = copy.data();
  }
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler, {
    gloo::AlltoallOptions opts(context_);
    opts.setInput<char>(const_cast<char *>(static_cast<const char *>(send)),
                        total);
    opts.setOutput<char>(static_cast<char *>(recv), total);
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::alltoall(opts);
  });
  return Status::ok();
}

Status GlooCommunicator::reduceScatter(const void *send, void *recv,
                                       int64_t count, DType dtype, ReduceOp op,
                                       Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"reduce-scatter", count, dtype, reduceOpName(op)};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {send, recv}));
  uint32_t tag = nextTag();
  if (count == 0)
    return Status::ok();
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  if (size_ == 1) {
    std::memmove(recv, send, bytes);
    return Status::ok();
  }
  // Block r of every rank's input lands in rank r's `gathered`, in rank
  // order; reduce it locally (in f32 for f16/bf16, rounding once).
  std::vector<char> gathered(bytes * size_);
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler, {
    gloo::AlltoallOptions opts(context_);
    opts.setInput<char>(const_cast<char *>(static_cast<const char *>(send)),
                        gathered.size());
    opts.setOutput<char>(gathered.data(), gathered.size());
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::alltoall(opts);
  });
  visitDType(dtype, [&](auto e) {
    reduceBlocks<decltype(e)>(gathered.data(), size_, count, op, recv);
  });
  return Status::ok();
}

Status GlooCommunicator::runTransfers(const std::vector<Transfer> &transfers,
                                      uint64_t slot, const OpInfo &info) {
  // Register the buffers so that abort() can cut their waits short, then
  // check for an abort that came before the registration.
  struct Registration {
    GlooCommunicator &comm;
    const std::vector<Transfer> &transfers;
    ~Registration() {
      std::lock_guard<std::mutex> lock(comm.stateMutex_);
      for (const Transfer &t : transfers)
        comm.waiting_.erase(t.buffer);
    }
  };
  {
    std::lock_guard<std::mutex> lock(stateMutex_);
    for (const Transfer &t : transfers)
      waiting_.insert(t.buffer);
  }
  Registration registration{*this, transfers};
  if (aborted_.load())
    return abortedError(info, __FILE__, __LINE__);

  auto handler = onError(info);
  bool completed = true;
  PARTITION_GLOO_CALL(handler, {
    for (const Transfer &t : transfers) {
      if (t.isSend)
        t.buffer->send(t.peer, slot);
      else
        t.buffer->recv(t.peer, slot);
    }
    for (const Transfer &t : transfers)
      completed &= t.isSend ? t.buffer->waitSend(timeout_)
                            : t.buffer->waitRecv(timeout_);
  });
  if (!completed || aborted_.load())
    return abortedError(info, __FILE__, __LINE__);
  return Status::ok();
}

Status GlooCommunicator::permute(const void *send, void *recv, int64_t count,
                                 DType dtype,
                                 const std::vector<std::pair<int, int>> &pairs,
                                 Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"permute", count, dtype};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {send, recv}));
  // Validate before taking a tag: invalid pairs fail on every member alike,
  // and the communicator stays usable.
  int source = -1, target = -1;
  std::vector<bool> isSource(size_), isTarget(size_);
  for (const auto &[from, to] : pairs) {
    if (from < 0 || from >= size_ || to < 0 || to >= size_)
      return PARTITION_ERROR(InvalidArgument, describe(info), ": pair (", from,
                             ", ", to, ") names a rank outside 0..", size_ - 1);
    if (isSource[from] || isTarget[to])
      return PARTITION_ERROR(InvalidArgument, describe(info), ": rank ",
                             isSource[from] ? from : to, " is the ",
                             isSource[from] ? "source" : "target",
                             " of more than one pair");
    isSource[from] = isTarget[to] = true;
    if (from == rank_)
      target = to;
    if (to == rank_)
      source = from;
  }
  uint32_t tag = nextTag();
  if (count == 0)
    return Status::ok();
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);

  // A pair (r, r) is a local copy; the rest go over the network.
  bool sendsRemote = target >= 0 && target != rank_;
  bool receivesRemote = source >= 0 && source != rank_;
  std::vector<char> copy;
  if (sendsRemote && receivesRemote && overlaps(send, bytes, recv, bytes)) {
    copy.assign(static_cast<const char *>(send),
                static_cast<const char *>(send) + bytes);
    send = copy.data();
  }
  if (sendsRemote || receivesRemote) {
    std::unique_ptr<gloo::transport::UnboundBuffer> out, in;
    std::vector<Transfer> transfers;
    auto handler = onError(info);
    PARTITION_GLOO_CALL(handler, {
      if (sendsRemote) {
        out = context_->createUnboundBuffer(const_cast<void *>(send), bytes);
        transfers.push_back({out.get(), target, true});
      }
      if (receivesRemote) {
        in = context_->createUnboundBuffer(recv, bytes);
        transfers.push_back({in.get(), source, false});
      }
    });
    PARTITION_RETURN_IF_ERROR(
        runTransfers(transfers, kPermuteSlot | (uint64_t(tag) << 8), info));
  }
  if (source == rank_ && send != recv)
    std::memmove(recv, send, bytes);
  else if (source < 0)
    std::memset(recv, 0, bytes); // After sending: send may alias recv.
  return Status::ok();
}

Status GlooCommunicator::send(const void *data, int64_t count, DType dtype,
                              int peer, int64_t tag, Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"send", count, dtype, nullptr, "to", peer, tag};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {data}));
  if (peer < 0 || peer >= size_ || peer == rank_)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": the peer must be another rank of the group");
  if (tag < 0 || tag > kMaxTag)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": tag outside 0..2^56-1");
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  {
    std::lock_guard<std::mutex> lock(sendMutex_);
    if (!sendError_.isOk())
      return sendError_;
  }
  auto pending = std::make_unique<PendingSend>();
  pending->data.assign(static_cast<const char *>(data),
                       static_cast<const char *>(data) + bytes);
  pending->info = info;
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler,
                      pending->buffer = context_->createUnboundBuffer(
                          pending->data.data(), bytes));
  if (aborted_.load())
    return abortedError(info, __FILE__, __LINE__);
  PARTITION_GLOO_CALL(handler, pending->buffer->send(
                                   peer, kSendRecvSlot | uint64_t(tag)));
  // Registered so that abort() cuts the wait short (an abort before this
  // closed the connections: the wait fails at once).
  {
    std::lock_guard<std::mutex> lock(stateMutex_);
    waiting_.insert(pending->buffer.get());
  }
  {
    std::lock_guard<std::mutex> lock(sendMutex_);
    sends_.push_back(std::move(pending));
    if (!sendThread_.joinable())
      sendThread_ = std::thread([this] { waitForSends(); });
  }
  sendReady_.notify_one();
  return Status::ok();
}

void GlooCommunicator::waitForSends() {
  for (;;) {
    std::unique_ptr<PendingSend> pending;
    {
      std::unique_lock<std::mutex> lock(sendMutex_);
      sendReady_.wait(lock, [&] { return stopSends_ || !sends_.empty(); });
      if (sends_.empty())
        return;
      pending = std::move(sends_.front());
      sends_.pop_front();
    }
    Status status;
    bool completed = true;
    try {
      completed = pending->buffer->waitSend(timeout_);
    } catch (...) {
      status = fail(std::current_exception(), pending->info, __FILE__,
                    __LINE__);
    }
    if (status.isOk() && (!completed || aborted_.load()))
      status = abortedError(pending->info, __FILE__, __LINE__);
    {
      std::lock_guard<std::mutex> lock(stateMutex_);
      waiting_.erase(pending->buffer.get());
    }
    if (!status.isOk()) {
      std::lock_guard<std::mutex> lock(sendMutex_);
      if (sendError_.isOk())
        sendError_ = status;
    }
  }
}

Status GlooCommunicator::recv(void *data, int64_t count, DType dtype, int peer,
                              int64_t tag, Stream &stream) {
  std::lock_guard<std::mutex> opLock(opMutex_);
  OpInfo info{"recv", count, dtype, nullptr, "from", peer, tag};
  PARTITION_RETURN_IF_ERROR(begin(info, stream, {data}));
  if (peer < 0 || peer >= size_ || peer == rank_)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": the peer must be another rank of the group");
  if (tag < 0 || tag > kMaxTag)
    return PARTITION_ERROR(InvalidArgument, describe(info),
                           ": tag outside 0..2^56-1");
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  {
    std::lock_guard<std::mutex> lock(sendMutex_);
    if (!sendError_.isOk())
      return sendError_;
  }
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  auto handler = onError(info);
  PARTITION_GLOO_CALL(handler,
                      buffer = context_->createUnboundBuffer(data, bytes));
  return runTransfers({{buffer.get(), peer, false}},
                      kSendRecvSlot | uint64_t(tag), info);
}

} // namespace

void GlooCommunicatorFactory::Shared::abortAll(GlooCommunicator *except,
                                               const std::string &reason) {
  std::lock_guard<std::mutex> lock(mutex);
  for (GlooCommunicator *comm : live)
    if (comm != except)
      comm->abortWith(reason);
}

//===----------------------------------------------------------------------===//
// GlooCommunicatorFactory
//===----------------------------------------------------------------------===//

/// Gloo writes to its sockets without MSG_NOSIGNAL, so a peer that leaves
/// mid-collective would kill this process with SIGPIPE instead of giving the
/// error Status the runtime promises. Ignore SIGPIPE unless the program has
/// installed a handler of its own (then it has decided).
static void ignoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 &&
        current.sa_handler == SIG_DFL)
      ::signal(SIGPIPE, SIG_IGN);
  });
}

GlooCommunicatorFactory::GlooCommunicatorFactory(int worldRank, int worldSize,
                                                 std::shared_ptr<Store> store,
                                                 GlooOptions options)
    : worldRank_(worldRank), worldSize_(worldSize), store_(std::move(store)),
      options_(std::move(options)), shared_(std::make_shared<Shared>()) {
  ignoreSigpipeOnce();
}

GlooCommunicatorFactory::~GlooCommunicatorFactory() = default;

void GlooCommunicatorFactory::abortAll() {
  shared_->abortAll(nullptr, "aborted on request (all communicators)");
}

StatusOr<std::unique_ptr<Communicator>>
GlooCommunicatorFactory::create(const std::vector<int> &ranks,
                                const std::string &key) {
  std::string what = "creating group '" + key + "' on world rank " +
                     std::to_string(worldRank_);
  if (worldSize_ < 1 || worldRank_ < 0 || worldRank_ >= worldSize_)
    return PARTITION_ERROR(InvalidArgument, what, ": world rank ", worldRank_,
                           " is outside a world of ", worldSize_);
  if (options_.timeout.count() <= 0)
    return PARTITION_ERROR(InvalidArgument, what, ": timeout of ",
                           options_.timeout.count(), " ms is not positive");
  int groupRank = -1;
  std::vector<bool> seen(worldSize_);
  for (size_t i = 0; i < ranks.size(); ++i) {
    int r = ranks[i];
    if (r < 0 || r >= worldSize_)
      return PARTITION_ERROR(InvalidArgument, what, ": rank ", r,
                             " is outside the world of ", worldSize_);
    if (seen[r])
      return PARTITION_ERROR(InvalidArgument, what, ": rank ", r,
                             " appears twice");
    seen[r] = true;
    if (r == worldRank_)
      groupRank = static_cast<int>(i);
  }
  if (groupRank < 0)
    return PARTITION_ERROR(InvalidArgument, what,
                           ": this rank is not a member of the group");
  int groupSize = static_cast<int>(ranks.size());
  if (groupSize == 1)
    return std::unique_ptr<Communicator>(
        new GlooCommunicator(0, 1, key, nullptr, options_.timeout, shared_,
                             options_.abortAllOnError));
  if (!store_)
    return PARTITION_ERROR(InvalidArgument, what, ": no rendezvous store");

  auto onError = [&](std::exception_ptr e, const char *file, int line) {
    return glooErrorToStatus(e, what, StatusCode::Unavailable, false, file,
                             line);
  };
  std::shared_ptr<gloo::transport::Device> device;
  int generation;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (!shared_->device) {
      gloo::transport::tcp::attr attr;
      if (!options_.interface.empty())
        attr.iface = options_.interface;
      else
        attr.hostname = options_.hostname;
      PARTITION_GLOO_CALL(
          onError, shared_->device = gloo::transport::tcp::CreateDevice(attr));
    }
    device = shared_->device;
    generation = shared_->generations[key]++;
  }

  // Connect the full mesh under a prefix that is unique per group key and
  // creation, so that keys left in the store by earlier groups never match.
  // Gloo waits up to five times the context timeout for a pair to connect;
  // connect with a fifth of ours so that a peer that dies halfway through
  // costs at most the timeout. (The store lookups use the full timeout: the
  // adapter ignores the one Gloo passes.)
  auto context =
      std::make_shared<gloo::rendezvous::Context>(groupRank, groupSize);
  context->setTimeout(
      std::max(options_.timeout / 5, std::chrono::milliseconds(1)));
  StoreAdapter adapter(*store_, options_.timeout);
  gloo::rendezvous::PrefixStore prefixed(
      "partition/gloo/" + key + "/" + std::to_string(generation), adapter);
  PARTITION_GLOO_CALL(onError, context->connectFullMesh(prefixed, device));
  context->setTimeout(options_.timeout);

  auto comm = std::make_unique<GlooCommunicator>(
      groupRank, groupSize, key, context, options_.timeout, shared_,
      options_.abortAllOnError);

  // Every member must have been given the same ranks: compare fingerprints
  // (this also proves every connection works).
  uint64_t fingerprint = 1469598103934665603ull; // FNV-1a
  for (int r : ranks)
    for (int b = 0; b < 4; ++b)
      fingerprint =
          (fingerprint ^ ((uint32_t(r) >> (8 * b)) & 0xff)) * 1099511628211ull;
  std::vector<uint64_t> all(groupSize);
  struct NoStream : Stream {
    Status synchronize() override { return Status::ok(); }
  } noStream;
  PARTITION_RETURN_IF_ERROR(
      comm->allGather(&fingerprint, all.data(), 1, DType::I64, noStream));
  for (int i = 0; i < groupSize; ++i)
    if (all[i] != fingerprint)
      return PARTITION_ERROR(InvalidArgument, what, ": group rank ", i,
                             " (world rank ", ranks[i],
                             ") was given a different list of ranks");
  return std::unique_ptr<Communicator>(std::move(comm));
}

//===----------------------------------------------------------------------===//
// Address choice
//===----------------------------------------------------------------------===//

StatusOr<GlooOptions>
partition::runtime::cpu::chooseGlooAddress(const std::string &masterAddr,
                                           const std::string &socketIfname,
                                           GlooOptions options) {
  if (!socketIfname.empty()) {
    // PyTorch accepts a comma-separated list; one device uses the first.
    options.interface = socketIfname.substr(0, socketIfname.find(','));
    return options;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo *addrs = nullptr;
  if (int rc = ::getaddrinfo(masterAddr.c_str(), "9", &hints, &addrs); rc != 0)
    return PARTITION_ERROR(Unavailable, "cannot resolve MASTER_ADDR '",
                           masterAddr,
                           "' to choose Gloo's address: ", ::gai_strerror(rc));
  std::string error = "no address";
  std::string local;
  for (addrinfo *ai = addrs; ai && local.empty(); ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    sockaddr_storage self{};
    socklen_t len = sizeof(self);
    char text[INET6_ADDRSTRLEN] = {};
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&self), &len) != 0)
      error = std::strerror(errno);
    else if (self.ss_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in *>(&self)->sin_addr,
                  text, sizeof(text));
    else
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6 *>(&self)->sin6_addr,
                  text, sizeof(text));
    local = text;
    ::close(fd);
  }
  ::freeaddrinfo(addrs);
  if (local.empty())
    return PARTITION_ERROR(
        Unavailable, "no local address reaches MASTER_ADDR '", masterAddr,
        "' for Gloo: ", error, " (name an interface with GLOO_SOCKET_IFNAME)");
  options.hostname = local;
  return options;
}
