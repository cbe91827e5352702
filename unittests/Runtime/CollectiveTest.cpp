//===- CollectiveTest.cpp - stores, Gloo collectives, failure handling ----===//
//
// Ranks are threads of this process with an InProcessStore (or a TcpStore
// where the store itself is under test). Inputs are small integers, so sums
// are exact in every dtype and results are compared bit for bit; averages of
// floats are the f32 sum divided by the group size, rounded once.
//
// Every test is bounded in time: communicators use short timeouts, and a
// watchdog ends the binary when a test runs past kTestBound.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Communicator.h"
#include "partition/runtime/Device.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/cpu/GlooCommunicator.h"

#include <gtest/gtest.h>

#include <fstream>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

using namespace partition::runtime;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cpu::GlooCommunicatorFactory;
using cpu::GlooOptions;

namespace {

//===----------------------------------------------------------------------===//
// Harness
//===----------------------------------------------------------------------===//

/// The longest any test may run before the watchdog ends the binary.
constexpr auto kTestBound = 120s;

/// Ends the process when a test runs past kTestBound, so that a hang is a
/// failure naming the test rather than a stuck job.
class Watchdog final : public ::testing::EmptyTestEventListener {
public:
  Watchdog() {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stopping_) {
        if (armed_ && Clock::now() >= deadline_) {
          std::fprintf(stderr, "FATAL: test %s ran past its bound of %lld s\n",
                       name_.c_str(),
                       static_cast<long long>(kTestBound.count()));
          std::fflush(stderr);
          std::_Exit(124);
        }
        changed_.wait_for(lock, 200ms);
      }
    });
  }
  /// GoogleTest deletes its listeners at exit: stop the thread first, or it
  /// would read the members after they are freed.
  ~Watchdog() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void OnTestStart(const ::testing::TestInfo &info) override {
    std::lock_guard<std::mutex> lock(mutex_);
    name_ = std::string(info.test_suite_name()) + "." + info.name();
    deadline_ = Clock::now() + kTestBound;
    armed_ = true;
  }
  void OnTestEnd(const ::testing::TestInfo &) override {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
  Clock::time_point deadline_;
  std::string name_;
  std::thread thread_;
};

const bool watchdogInstalled = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new Watchdog());
  return true;
}();

/// The CPU's streams run work when it is enqueued, so there is never anything
/// to wait for. (The CPU device is tested on its own.)
class NoopStream final : public Stream {
public:
  Status synchronize() override { return Status::ok(); }
};

/// Runs `body(rank)` on `n` threads and joins them.
void runRanks(int n, const std::function<void(int)> &body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(body, r);
  for (std::thread &t : threads)
    t.join();
}

/// Lets threads wait until `count` of them have arrived. The wait is bounded,
/// so that a rank that failed before arriving does not hang the others.
class Latch {
public:
  explicit Latch(int count) : count_(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--count_ == 0)
      changed_.notify_all();
    if (!changed_.wait_for(lock, 30s, [&] { return count_ <= 0; }))
      ADD_FAILURE() << "a rank never reached the latch";
  }

private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int count_;
};

std::vector<int> iota(int n, int first = 0, int step = 1) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = first + i * step;
  return v;
}

/// Bounds of tests that check that something fails rather than waits:
/// generous for a loaded two-core machine (the suite must never flake), yet
/// below the waits they rule out (20 s timeouts and more).
constexpr double kHangBound = 15.0;
/// Scheduling slack on top of a timeout.
constexpr double kSlackSeconds = 10.0;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

GlooOptions testOptions(std::chrono::milliseconds timeout = 20s) {
  GlooOptions options;
  options.timeout = timeout;
  return options;
}

/// A communicator over `ranks`, or a test failure.
std::unique_ptr<Communicator> connect(GlooCommunicatorFactory &factory,
                                      const std::vector<int> &ranks,
                                      const std::string &key) {
  StatusOr<std::unique_ptr<Communicator>> comm = factory.create(ranks, key);
  EXPECT_TRUE(comm.isOk()) << "rank " << factory.worldRank() << ": "
                           << comm.status().toString();
  return comm.isOk() ? std::move(comm).value() : nullptr;
}

//===----------------------------------------------------------------------===//
// Typed data
//===----------------------------------------------------------------------===//

const DType kDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32,
                         DType::I64};
const ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min,
                         ReduceOp::Avg};

const char *opName(ReduceOp op) {
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

/// Bytes of one element of `dtype` holding `x` (rounded to nearest).
void encode(DType dtype, double x, char *out) {
  switch (dtype) {
  case DType::F32: {
    float v = static_cast<float>(x);
    std::memcpy(out, &v, 4);
    return;
  }
  case DType::F16: {
    uint16_t v = floatToHalf(static_cast<float>(x));
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::BF16: {
    uint16_t v = floatToBf16(static_cast<float>(x));
    std::memcpy(out, &v, 2);
    return;
  }
  case DType::I32: {
    int32_t v = static_cast<int32_t>(x);
    std::memcpy(out, &v, 4);
    return;
  }
  case DType::I64: {
    int64_t v = static_cast<int64_t>(x);
    std::memcpy(out, &v, 8);
    return;
  }
  }
}

double decode(DType dtype, const char *in) {
  switch (dtype) {
  case DType::F32: {
    float v;
    std::memcpy(&v, in, 4);
    return v;
  }
  case DType::F16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return halfToFloat(v);
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return bf16ToFloat(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, in, 4);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, in, 8);
    return static_cast<double>(v);
  }
  }
  return 0;
}

/// Element `i` of rank `rank`'s input: a small integer in -8..8 (exact sums
/// in every dtype), shifted by multiples of 2^33 for i64 to exercise the
/// upper bits.
double inputValue(DType dtype, int rank, int64_t i, int salt = 0) {
  double v = static_cast<double>((rank * 7 + i * 3 + salt * 5) % 17 - 8);
  if (dtype == DType::I64)
    v += static_cast<double>((rank % 3) + 1) * 8589934592.0;
  return v;
}

/// A buffer of `count` elements of rank `rank`'s input.
std::vector<char> makeInput(DType dtype, int rank, int64_t count,
                            int salt = 0) {
  std::vector<char> buf(count * dtypeSize(dtype));
  for (int64_t i = 0; i < count; ++i)
    encode(dtype, inputValue(dtype, rank, i, salt),
           buf.data() + i * dtypeSize(dtype));
  return buf;
}

/// The expected bytes of `op` over `values` (one per rank) in `dtype`,
/// computed the way the communicator is specified to: exact sums, averages
/// of floats divided in f32, of integers truncated.
void expectedReduction(DType dtype, ReduceOp op,
                       const std::vector<double> &values, char *out) {
  double acc = values[0];
  for (size_t r = 1; r < values.size(); ++r) {
    if (op == ReduceOp::Max)
      acc = std::max(acc, values[r]);
    else if (op == ReduceOp::Min)
      acc = std::min(acc, values[r]);
    else
      acc += values[r];
  }
  if (op == ReduceOp::Avg) {
    int n = static_cast<int>(values.size());
    if (isFloat(dtype))
      acc = static_cast<float>(acc) / static_cast<float>(n);
    else
      acc = static_cast<double>(static_cast<int64_t>(acc) / n);
  }
  encode(dtype, acc, out);
}

/// Checks `actual` against `expected` element by element; reports the first
/// mismatch only.
void expectSameElements(DType dtype, const std::vector<char> &actual,
                        const std::vector<char> &expected,
                        const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int64_t size = dtypeSize(dtype);
  for (size_t i = 0; i < actual.size() / size; ++i) {
    if (std::memcmp(actual.data() + i * size, expected.data() + i * size,
                    size) != 0) {
      ADD_FAILURE() << what << ": element " << i << " is "
                    << decode(dtype, actual.data() + i * size) << ", expected "
                    << decode(dtype, expected.data() + i * size);
      return;
    }
  }
}

std::string label(const char *what, DType dtype, int64_t count, int rank,
                  int size, const char *op = nullptr) {
  return std::string(what) + " " + dtypeName(dtype) + (op ? " " : "") +
         (op ? op : "") + " count " + std::to_string(count) + " rank " +
         std::to_string(rank) + "/" + std::to_string(size);
}

//===----------------------------------------------------------------------===//
// Checked collectives (used by the sweeps below)
//===----------------------------------------------------------------------===//

void checkAllReduce(Communicator &comm, DType dtype, ReduceOp op, int64_t count,
                    bool inPlace, int salt = 0) {
  NoopStream stream;
  int n = comm.size(), rank = comm.rank();
  int64_t size = dtypeSize(dtype);
  std::vector<char> send = makeInput(dtype, rank, count, salt);
  std::vector<char> recv(send.size(), 0x5a);
  if (inPlace)
    recv = send;
  Status status = comm.allReduce(inPlace ? recv.data() : send.data(),
                                 recv.data(), count, dtype, op, stream);
  std::string what = label(inPlace ? "all-reduce (in place)" : "all-reduce",
                           dtype, count, rank, n, opName(op));
  ASSERT_TRUE(status.isOk()) << what << ": " << status.toString();
  std::vector<char> expected(send.size());
  std::vector<double> values(n);
  for (int64_t i = 0; i < count; ++i) {
    for (int r = 0; r < n; ++r)
      values[r] = inputValue(dtype, r, i, salt);
    expectedReduction(dtype, op, values, expected.data() + i * size);
  }
  expectSameElements(dtype, recv, expected, what);
}

void checkAllGather(Communicator &comm, DType dtype, int64_t count,
                    bool inPlace) {
  NoopStream stream;
  int n = comm.size(), rank = comm.rank();
  int64_t bytes = count * dtypeSize(dtype);
  std::vector<char> send = makeInput(dtype, rank, count);
  std::vector<char> recv(bytes * n, 0x5a);
  const void *input = send.data();
  if (inPlace) {
    std::memcpy(recv.data() + rank * bytes, send.data(), bytes);
    input = recv.data() + rank * bytes;
  }
  Status status = comm.allGather(input, recv.data(), count, dtype, stream);
  std::string what = label(inPlace ? "all-gather (in place)" : "all-gather",
                           dtype, count, rank, n);
  ASSERT_TRUE(status.isOk()) << what << ": " << status.toString();
  std::vector<char> expected;
  for (int r = 0; r < n; ++r) {
    std::vector<char> block = makeInput(dtype, r, count);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  expectSameElements(dtype, recv, expected, what);
}

void checkReduceScatter(Communicator &comm, DType dtype, ReduceOp op,
                        int64_t count) {
  NoopStream stream;
  int n = comm.size(), rank = comm.rank();
  int64_t size = dtypeSize(dtype);
  // Block b of rank r's input is inputValue(r, b * count + i).
  std::vector<char> send = makeInput(dtype, rank, count * n);
  std::vector<char> recv(count * size, 0x5a);
  Status status =
      comm.reduceScatter(send.data(), recv.data(), count, dtype, op, stream);
  std::string what = label("reduce-scatter", dtype, count, rank, n, opName(op));
  ASSERT_TRUE(status.isOk()) << what << ": " << status.toString();
  std::vector<char> expected(count * size);
  std::vector<double> values(n);
  for (int64_t i = 0; i < count; ++i) {
    for (int r = 0; r < n; ++r)
      values[r] = inputValue(dtype, r, rank * count + i);
    expectedReduction(dtype, op, values, expected.data() + i * size);
  }
  expectSameElements(dtype, recv, expected, what);
}

void checkAllToAll(Communicator &comm, DType dtype, int64_t count,
                   bool inPlace) {
  NoopStream stream;
  int n = comm.size(), rank = comm.rank();
  int64_t bytes = count * dtypeSize(dtype);
  std::vector<char> send = makeInput(dtype, rank, count * n);
  std::vector<char> recv(send.size(), 0x5a);
  if (inPlace)
    recv = send;
  Status status = comm.allToAll(inPlace ? recv.data() : send.data(),
                                recv.data(), count, dtype, stream);
  std::string what = label(inPlace ? "all-to-all (in place)" : "all-to-all",
                           dtype, count, rank, n);
  ASSERT_TRUE(status.isOk()) << what << ": " << status.toString();
  // recv block j = block `rank` of rank j's input.
  std::vector<char> expected;
  for (int j = 0; j < n; ++j) {
    std::vector<char> input = makeInput(dtype, j, count * n);
    expected.insert(expected.end(), input.begin() + rank * bytes,
                    input.begin() + (rank + 1) * bytes);
  }
  expectSameElements(dtype, recv, expected, what);
}

/// Runs a permute with `pairs` and checks every rank's result: the source's
/// input, or zeros for a rank that is no target.
void checkPermute(Communicator &comm, DType dtype, int64_t count,
                  const std::vector<std::pair<int, int>> &pairs, bool inPlace) {
  NoopStream stream;
  int n = comm.size(), rank = comm.rank();
  std::vector<char> send = makeInput(dtype, rank, count, /*salt=*/1);
  std::vector<char> recv(send.size(), 0x5a);
  if (inPlace)
    recv = send;
  Status status = comm.permute(inPlace ? recv.data() : send.data(), recv.data(),
                               count, dtype, pairs, stream);
  std::string what =
      label(inPlace ? "permute (in place)" : "permute", dtype, count, rank, n);
  ASSERT_TRUE(status.isOk()) << what << ": " << status.toString();
  std::vector<char> expected(send.size(), 0);
  for (const auto &[from, to] : pairs)
    if (to == rank)
      expected = makeInput(dtype, from, count, /*salt=*/1);
  expectSameElements(dtype, recv, expected, what);
}

//===----------------------------------------------------------------------===//
// Stores
//===----------------------------------------------------------------------===//

std::vector<char> bytesOf(const std::string &s) {
  return std::vector<char>(s.begin(), s.end());
}
std::string stringOf(const std::vector<char> &v) {
  return std::string(v.begin(), v.end());
}

TEST(InProcessStore, SetThenGetAndOverwrite) {
  InProcessStore store;
  ASSERT_TRUE(store.set("a", bytesOf("one")).isOk());
  StatusOr<std::vector<char>> value = store.get("a", 0ms);
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "one");
  ASSERT_TRUE(store.set("a", bytesOf("")).isOk());
  value = store.get("a", 0ms);
  ASSERT_TRUE(value.isOk());
  EXPECT_TRUE(value->empty());
}

TEST(InProcessStore, GetWaitsForALaterSet) {
  InProcessStore store;
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(store.set("late", bytesOf("here")).isOk());
  });
  StatusOr<std::vector<char>> value = store.get("late", 5s);
  setter.join();
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "here");
}

TEST(InProcessStore, GetTimesOut) {
  InProcessStore store;
  auto start = Clock::now();
  StatusOr<std::vector<char>> value = store.get("missing", 100ms);
  double elapsed = secondsSince(start);
  ASSERT_FALSE(value.isOk());
  EXPECT_EQ(value.status().code(), StatusCode::DeadlineExceeded);
  EXPECT_NE(value.status().message().find("missing"), std::string::npos);
  EXPECT_GE(elapsed, 0.09);
  EXPECT_LT(elapsed, kHangBound);
}

/// A TcpStore serving on a free loopback port.
std::unique_ptr<TcpStore> serveStore() {
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", 0, /*serve=*/true);
  EXPECT_TRUE(store.isOk()) << store.status().toString();
  return store.isOk() ? std::move(store).value() : nullptr;
}

/// A TcpStore serving on a free loopback port with `options`.
std::unique_ptr<TcpStore> serveStore(const TcpStoreOptions &options) {
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", 0, /*serve=*/true, options);
  EXPECT_TRUE(store.isOk()) << store.status().toString();
  return store.isOk() ? std::move(store).value() : nullptr;
}

/// A client of the store on `port`.
std::unique_ptr<TcpStore> storeClient(int port,
                                      std::chrono::milliseconds connect = 5s) {
  TcpStoreOptions options;
  options.connectTimeout = connect;
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", port, /*serve=*/false, options);
  EXPECT_TRUE(store.isOk()) << store.status().toString();
  return store.isOk() ? std::move(store).value() : nullptr;
}

/// A raw TCP connection to the store on 127.0.0.1:`port` (a stranger, or a
/// client that speaks the protocol by hand); -1 when it cannot connect.
int connectRaw(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(uint16_t(port));
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(TcpStore, ServesSeveralClients) {
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  EXPECT_TRUE(server->isServer());
  EXPECT_GT(server->port(), 0);
  constexpr int kClients = 6;
  // Each client sets its key, then reads every other client's key (most of
  // which are set later, so the gets wait on the server).
  runRanks(kClients, [&](int rank) {
    std::unique_ptr<TcpStore> client =
        rank == 0 ? nullptr : storeClient(server->port());
    TcpStore &store = rank == 0 ? *server : *client;
    ASSERT_TRUE(store
                    .set("key" + std::to_string(rank),
                         bytesOf("value" + std::to_string(rank)))
                    .isOk());
    for (int other = 0; other < kClients; ++other) {
      StatusOr<std::vector<char>> value =
          store.get("key" + std::to_string(other), 10s);
      ASSERT_TRUE(value.isOk()) << value.status().toString();
      EXPECT_EQ(stringOf(*value), "value" + std::to_string(other));
    }
  });
}

TEST(TcpStore, GetWaitsForALaterSetFromAnotherThread) {
  // One client shared by two threads: the waiting get must not hold up the
  // set.
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  std::thread setter([&] {
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(server->set("late", bytesOf("here")).isOk());
  });
  auto start = Clock::now();
  StatusOr<std::vector<char>> value = server->get("late", 10s);
  setter.join();
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "here");
}

TEST(TcpStore, GetTimesOut) {
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  std::unique_ptr<TcpStore> client = storeClient(server->port());
  ASSERT_TRUE(client);
  auto start = Clock::now();
  StatusOr<std::vector<char>> value = client->get("missing", 200ms);
  double elapsed = secondsSince(start);
  ASSERT_FALSE(value.isOk());
  EXPECT_EQ(value.status().code(), StatusCode::DeadlineExceeded)
      << value.status().toString();
  EXPECT_GE(elapsed, 0.19);
  EXPECT_LT(elapsed, kHangBound);
  // The connection is still good after a timeout.
  ASSERT_TRUE(client->set("missing", bytesOf("now")).isOk());
  value = client->get("missing", 1s);
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "now");
}

TEST(TcpStore, LargeAndEmptyValuesAndOverwrite) {
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  std::unique_ptr<TcpStore> client = storeClient(server->port());
  ASSERT_TRUE(client);
  std::vector<char> big(3 * 1024 * 1024 + 7);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>(i * 131 + 7);
  ASSERT_TRUE(client->set("big", big).isOk());
  ASSERT_TRUE(client->set("empty", {}).isOk());
  StatusOr<std::vector<char>> value = server->get("big", 1s);
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_TRUE(*value == big);
  value = server->get("empty", 1s);
  ASSERT_TRUE(value.isOk());
  EXPECT_TRUE(value->empty());
  ASSERT_TRUE(server->set("big", bytesOf("small")).isOk());
  value = client->get("big", 1s);
  ASSERT_TRUE(value.isOk());
  EXPECT_EQ(stringOf(*value), "small");
}

/// A loopback port bound by a socket that never listens: connecting to it is
/// refused, and while the socket is open no other test (in this process or a
/// parallel shard) can take the port. It is bound with SO_REUSEADDR, as the
/// store's server binds, so that a server may still listen on it.
struct RefusingPort {
  RefusingPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (fd >= 0)
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
  }
  ~RefusingPort() {
    if (fd >= 0)
      ::close(fd);
  }
  int fd = -1;
  int port = 0;
};

TEST(TcpStore, RefusedConnectionIsUnavailableAfterBoundedRetries) {
  RefusingPort refusing;
  int port = refusing.port;
  ASSERT_GT(port, 0);
  TcpStoreOptions options;
  options.connectTimeout = 300ms;
  auto start = Clock::now();
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", port, /*serve=*/false, options);
  double elapsed = secondsSince(start);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), StatusCode::Unavailable);
  EXPECT_NE(store.status().message().find("cannot reach the store"),
            std::string::npos)
      << store.status().toString();
  EXPECT_NE(store.status().message().find("refused"), std::string::npos)
      << store.status().toString();
  EXPECT_GE(elapsed, 0.29);
  EXPECT_LT(elapsed, kHangBound);
}

TEST(TcpStore, ClientMayStartBeforeTheServer) {
  // The port stays reserved for the test until the server listens on it.
  RefusingPort reserved;
  int port = reserved.port;
  ASSERT_GT(port, 0);
  std::unique_ptr<TcpStore> client;
  std::thread early([&] {
    client = storeClient(port, /*connect=*/10s);
    if (client) {
      EXPECT_TRUE(client->set("early", bytesOf("bird")).isOk());
    }
  });
  std::this_thread::sleep_for(300ms);
  StatusOr<std::unique_ptr<TcpStore>> server =
      TcpStore::create("127.0.0.1", port, /*serve=*/true);
  StatusOr<std::vector<char>> value =
      server.isOk() ? (*server)->get("early", 10s)
                    : StatusOr<std::vector<char>>(server.status());
  early.join();
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "bird");
}

TEST(TcpStore, ServerShutdownFailsAWaitingClient) {
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  std::unique_ptr<TcpStore> client = storeClient(server->port());
  ASSERT_TRUE(client);
  auto start = Clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(100ms);
    server.reset();
  });
  StatusOr<std::vector<char>> value = client->get("never", 30s);
  double elapsed = secondsSince(start);
  stopper.join();
  ASSERT_FALSE(value.isOk());
  EXPECT_EQ(value.status().code(), StatusCode::Unavailable)
      << value.status().toString();
  EXPECT_LT(elapsed, kHangBound) << "the client waited out its get";
}

TEST(TcpStore, ABrokenPledgeIsReportedAtOnce) {
  // A client that pledged a key and goes away without setting it (as a
  // killed process does) makes the server set the broken-pledge key, which
  // a waiting get sees at once.
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  std::unique_ptr<TcpStore> client = storeClient(server->port());
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->pledge("result/2").isOk());
  std::thread dies([&] {
    std::this_thread::sleep_for(100ms);
    client.reset();
  });
  auto start = Clock::now();
  StatusOr<std::vector<char>> broken =
      server->get(TcpStore::kBrokenPledgeKey, 30s);
  dies.join();
  ASSERT_TRUE(broken.isOk()) << broken.status().toString();
  EXPECT_EQ(stringOf(*broken), "result/2");
  EXPECT_LT(secondsSince(start), kHangBound) << "the get waited it out";
}

/// Sends `bytes` on `fd` and reads a reply of the store (code, length,
/// bytes); the code, or -1 when the connection fails.
int rawRequest(int fd, const std::vector<char> &bytes) {
  if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
      ssize_t(bytes.size()))
    return -1;
  char header[9];
  size_t got = 0;
  while (got < sizeof(header)) {
    ssize_t n = ::recv(fd, header + got, sizeof(header) - got, 0);
    if (n <= 0)
      return -1;
    got += size_t(n);
  }
  uint64_t size = 0;
  std::memcpy(&size, header + 1, 8);
  std::vector<char> rest(size);
  for (size_t at = 0; at < size;) {
    ssize_t n = ::recv(fd, rest.data() + at, size - at, 0);
    if (n <= 0)
      return -1;
    at += size_t(n);
  }
  return header[0];
}

/// A request of the store's wire format: op, key, and its u64 argument.
std::vector<char> wireRequest(uint8_t op, const std::string &key,
                              uint64_t arg) {
  std::vector<char> out(1, char(op));
  uint32_t keySize = uint32_t(key.size());
  out.insert(out.end(), reinterpret_cast<char *>(&keySize),
             reinterpret_cast<char *>(&keySize) + 4);
  out.insert(out.end(), key.begin(), key.end());
  out.insert(out.end(), reinterpret_cast<char *>(&arg),
             reinterpret_cast<char *>(&arg) + 8);
  return out;
}

TEST(TcpStore, APledgeWhoseHeartbeatStopsIsBroken) {
  // A pledger whose process is stopped keeps its connection open but sends
  // no more heartbeats: the server breaks its pledge once the limit it
  // asked for has passed, and says why. A raw connection stands in for the
  // stopped process: it pledges with a limit of 500 ms and then says
  // nothing.
  TcpStoreOptions options;
  options.token = "t";
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  int fd = connectRaw(server->port());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(rawRequest(fd, wireRequest(3, "t", 1)), 0);
  auto start = Clock::now();
  ASSERT_EQ(rawRequest(fd, wireRequest(4, "result/2", 500)), 0);
  StatusOr<std::vector<char>> broken =
      server->get(TcpStore::kBrokenPledgeKey, 30s);
  double elapsed = secondsSince(start);
  ASSERT_TRUE(broken.isOk()) << broken.status().toString();
  EXPECT_EQ(stringOf(*broken), "result/2");
  EXPECT_GE(elapsed, 0.49);
  StatusOr<std::vector<char>> why =
      server->get(TcpStore::kBrokenPledgeReasonKey, 0ms);
  ASSERT_TRUE(why.isOk()) << why.status().toString();
  EXPECT_EQ(stringOf(*why), "it sent no heartbeat for 500 ms: the process is "
                            "stopped or hung");
  ::close(fd);
}

TEST(TcpStore, HeartbeatsKeepAPledge) {
  // A client that lives (its heartbeat thread runs) keeps its pledge past
  // the limit; when it goes away, the pledge breaks as before. The limit is
  // long beside the heartbeat period (a quarter of it): a loaded machine
  // stalls a thread for seconds (a 2 s limit broke once here, the client's
  // heartbeat thread silent for 2 s), and then the reason below would be
  // the heartbeat's, not the closed connection's.
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  TcpStoreOptions options;
  options.heartbeatLimit = 8s;
  StatusOr<std::unique_ptr<TcpStore>> client =
      TcpStore::create("127.0.0.1", server->port(), /*serve=*/false, options);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  ASSERT_TRUE((*client)->pledge("result/1").isOk());
  StatusOr<std::vector<char>> broken =
      server->get(TcpStore::kBrokenPledgeKey, 9s);
  EXPECT_EQ(broken.status().code(), StatusCode::DeadlineExceeded)
      << "the pledge broke while its heartbeats ran";
  // Still kept right before the client goes.
  broken = server->get(TcpStore::kBrokenPledgeKey, 0ms);
  ASSERT_EQ(broken.status().code(), StatusCode::DeadlineExceeded)
      << "the pledge broke while its heartbeats ran";
  client->reset();
  broken = server->get(TcpStore::kBrokenPledgeKey, 30s);
  ASSERT_TRUE(broken.isOk()) << broken.status().toString();
  StatusOr<std::vector<char>> why =
      server->get(TcpStore::kBrokenPledgeReasonKey, 0ms);
  ASSERT_TRUE(why.isOk());
  EXPECT_EQ(stringOf(*why), "its connection to the store closed: the process "
                            "died or was killed");
}

/// A store server whose process has stopped after the hello: it answers
/// the first connection's hello, then nothing, on that connection or any
/// other (later connections wait in the listen backlog, accepted by the
/// kernel alone, as for a stopped process).
class StoppedStoreServer {
public:
  StoppedStoreServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (listener_ < 0 ||
        ::bind(listener_, reinterpret_cast<sockaddr *>(&addr), len) != 0 ||
        ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr *>(&addr), &len) !=
            0)
      return;
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      int fd = ::accept(listener_, nullptr, nullptr);
      char hello[14]; // op, key length, token "t", version
      size_t got = 0;
      while (fd >= 0 && got < sizeof(hello)) {
        ssize_t n = ::recv(fd, hello + got, sizeof(hello) - got, 0);
        if (n <= 0)
          break;
        got += size_t(n);
      }
      const char ok[9] = {0};
      (void)!::send(fd, ok, sizeof(ok), MSG_NOSIGNAL);
      // Then silence, until the client gives up and closes.
      char byte;
      while (fd >= 0 && ::recv(fd, &byte, 1, 0) > 0) {
      }
      ::close(fd);
    });
  }
  /// Call after the client has closed its connections.
  ~StoppedStoreServer() {
    if (thread_.joinable())
      thread_.join();
    if (listener_ >= 0)
      ::close(listener_);
  }
  /// 0 when the listener could not be set up.
  int port() const { return port_; }

private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(TcpStore, AServerThatStopsAnsweringIsUnavailable) {
  // The process that serves the store is stopped: its sockets stay open
  // but nothing answers. A fake server answers the hello and then nothing;
  // a get of 100 ms fails as Unavailable once answerTimeout has passed as
  // well (StoreWatch takes that for rank 0 being gone), not as the
  // DeadlineExceeded of a key that was not set.
  StoppedStoreServer server;
  ASSERT_NE(server.port(), 0);
  TcpStoreOptions options;
  options.token = "t";
  options.answerTimeout = 500ms;
  StatusOr<std::unique_ptr<TcpStore>> client = TcpStore::create(
      "127.0.0.1", server.port(), /*serve=*/false, options);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  auto start = Clock::now();
  StatusOr<std::vector<char>> value = (*client)->get("done", 100ms);
  double elapsed = secondsSince(start);
  client->reset();
  ASSERT_FALSE(value.isOk());
  EXPECT_EQ(value.status().code(), StatusCode::Unavailable)
      << value.status().toString();
  EXPECT_NE(value.status().message().find("did not answer within 600 ms"),
            std::string::npos)
      << value.status().toString();
  EXPECT_GE(elapsed, 0.59);
}

TEST(TcpStore, AStoppedServerIsUnavailableOnANewConnectionToo) {
  // A client with no idle connection left (its last one failed) connects
  // anew to a stopped server: the kernel accepts the connection, the
  // process never answers the hello. That is the same "did not answer"
  // within answerTimeout as an unanswered request, not a retried connect
  // that waits out the connect window (10 s and more) and says "cannot
  // reach": which of the two a rank meets depends on timing, and both must
  // name a stopped server alike.
  StoppedStoreServer server;
  ASSERT_NE(server.port(), 0);
  TcpStoreOptions options;
  options.token = "t";
  options.answerTimeout = 500ms;
  StatusOr<std::unique_ptr<TcpStore>> client = TcpStore::create(
      "127.0.0.1", server.port(), /*serve=*/false, options);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  // The first get fails on the connection the client had, and closes it.
  EXPECT_FALSE((*client)->get("done", 100ms).isOk());
  auto start = Clock::now();
  StatusOr<std::vector<char>> value = (*client)->get("done", 100ms);
  double elapsed = secondsSince(start);
  client->reset();
  ASSERT_FALSE(value.isOk());
  EXPECT_EQ(value.status().code(), StatusCode::Unavailable)
      << value.status().toString();
  EXPECT_NE(value.status().message().find("did not answer within 500 ms"),
            std::string::npos)
      << value.status().toString();
  // Well below the connect window it would otherwise wait out.
  EXPECT_LT(elapsed, 8.0);
}

TEST(TcpStore, AKeptPledgeIsNotReported) {
  // Clients that set their pledged key before going away break nothing; the
  // first broken pledge is the one recorded.
  std::unique_ptr<TcpStore> server = serveStore();
  ASSERT_TRUE(server);
  for (int rank = 1; rank <= 3; ++rank) {
    std::unique_ptr<TcpStore> client = storeClient(server->port());
    ASSERT_TRUE(client);
    std::string key = "result/" + std::to_string(rank);
    ASSERT_TRUE(client->pledge(key).isOk());
    if (rank != 3) {
      ASSERT_TRUE(client->set(key, bytesOf("done")).isOk());
    }
  }
  StatusOr<std::vector<char>> broken =
      server->get(TcpStore::kBrokenPledgeKey, 10s);
  ASSERT_TRUE(broken.isOk()) << broken.status().toString();
  EXPECT_EQ(stringOf(*broken), "result/3");
  std::unique_ptr<TcpStore> late = storeClient(server->port());
  ASSERT_TRUE(late);
  ASSERT_TRUE(late->pledge("result/4").isOk());
  late.reset();
  std::this_thread::sleep_for(200ms);
  broken = server->get(TcpStore::kBrokenPledgeKey, 1s);
  ASSERT_TRUE(broken.isOk()) << broken.status().toString();
  EXPECT_EQ(stringOf(*broken), "result/3");
}

TEST(TcpStore, RejectsBadPorts) {
  StatusOr<std::unique_ptr<TcpStore>> store =
      TcpStore::create("127.0.0.1", 0, /*serve=*/false);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), StatusCode::InvalidArgument);
  store = TcpStore::create("127.0.0.1", 70000, /*serve=*/true);
  ASSERT_FALSE(store.isOk());
  EXPECT_EQ(store.status().code(), StatusCode::InvalidArgument);
}

TEST(TcpStore, RefusesAWrongToken) {
  TcpStoreOptions options;
  options.token = "job-secret";
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  ASSERT_TRUE(server->set("gloo/address", bytesOf("secret")).isOk());
  for (std::string token : {"", "job-secreT", "job-secret-and-more"}) {
    TcpStoreOptions wrong;
    wrong.token = token;
    wrong.connectTimeout = 60s;
    auto start = Clock::now();
    StatusOr<std::unique_ptr<TcpStore>> client =
        TcpStore::create("127.0.0.1", server->port(), /*serve=*/false, wrong);
    ASSERT_FALSE(client.isOk()) << "token \"" << token << "\" was accepted";
    EXPECT_EQ(client.status().code(), StatusCode::Unavailable);
    EXPECT_NE(client.status().message().find("wrong store token"),
              std::string::npos)
        << client.status().toString();
    EXPECT_LT(secondsSince(start), kHangBound)
        << "a refused token is not retried";
  }
  TcpStoreOptions right;
  right.token = "job-secret";
  StatusOr<std::unique_ptr<TcpStore>> client =
      TcpStore::create("127.0.0.1", server->port(), /*serve=*/false, right);
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  StatusOr<std::vector<char>> value = (*client)->get("gloo/address", 1s);
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(stringOf(*value), "secret");
}

TEST(TcpStore, RefusesARequestWithoutHello) {
  // A raw client that skips the hello and asks for a key gets an error and
  // the connection closed, not the value.
  TcpStoreOptions options;
  options.token = "job-secret";
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  ASSERT_TRUE(server->set("k", bytesOf("secret")).isOk());
  int fd = connectRaw(server->port());
  ASSERT_GE(fd, 0);
  // op 2 (get), key "k", timeout 0.
  const char request[] = {2, 1, 0, 0, 0, 'k', 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(::send(fd, request, sizeof(request), 0), ssize_t(sizeof(request)));
  std::string answer;
  char buffer[256];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;)
    answer.append(buffer, size_t(n));
  ::close(fd);
  ASSERT_GE(answer.size(), 9u);
  EXPECT_EQ(answer[0], 2) << "the reply is not an error";
  EXPECT_EQ(answer.find("secret"), std::string::npos);
  EXPECT_NE(answer.find("did not present the job's token"), std::string::npos)
      << answer;
}

TEST(TcpStore, BoundsTheJobsConnections) {
  // Two connections of the job allowed: the server's own client holds one,
  // a second client the other. A third is kept out (it retries until its
  // connect timeout); once the second leaves, it gets in.
  TcpStoreOptions options;
  options.maxConnections = 2;
  options.token = "t";
  StatusOr<std::unique_ptr<TcpStore>> server =
      TcpStore::create("127.0.0.1", 0, /*serve=*/true, options);
  ASSERT_TRUE(server.isOk()) << server.status().toString();
  TcpStoreOptions client;
  client.token = "t";
  client.connectTimeout = 30s;
  StatusOr<std::unique_ptr<TcpStore>> second =
      TcpStore::create("127.0.0.1", (*server)->port(), /*serve=*/false, client);
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  client.connectTimeout = 500ms;
  StatusOr<std::unique_ptr<TcpStore>> refused =
      TcpStore::create("127.0.0.1", (*server)->port(), /*serve=*/false, client);
  ASSERT_FALSE(refused.isOk()) << "a third connection was served";
  EXPECT_EQ(refused.status().code(), StatusCode::Unavailable);
  second->reset();
  client.connectTimeout = 30s;
  StatusOr<std::unique_ptr<TcpStore>> admitted =
      TcpStore::create("127.0.0.1", (*server)->port(), /*serve=*/false, client);
  ASSERT_TRUE(admitted.isOk()) << admitted.status().toString();
  EXPECT_TRUE((*admitted)->set("k", bytesOf("v")).isOk());
}

/// Holds `count` idle connections to 127.0.0.1:`port` from a thread, as a
/// stranger who floods the store would: each one the server closes is
/// opened again (after a millisecond), until destroyed.
class Flood {
public:
  Flood(int port, int count) {
    thread_ = std::thread([this, port, count] {
      std::vector<int> fds;
      while (!stop_) {
        // Drop the connections the server closed.
        for (int &fd : fds) {
          char byte;
          if (fd >= 0 && ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0) {
            ::close(fd);
            fd = -1;
          }
        }
        fds.erase(std::remove(fds.begin(), fds.end(), -1), fds.end());
        if (int(fds.size()) < count) {
          int fd = connectRaw(port);
          if (fd >= 0) {
            fds.push_back(fd);
            ++opened_;
          }
        }
        std::this_thread::sleep_for(1ms);
      }
      for (int fd : fds)
        ::close(fd);
    });
  }
  ~Flood() {
    stop_ = true;
    thread_.join();
  }
  /// The connections opened so far.
  int opened() const { return opened_; }

private:
  std::atomic<bool> stop_{false};
  std::atomic<int> opened_{0};
  std::thread thread_;
};

TEST(TcpStore, StrangersNeverKeepTheJobOut) {
  // A stranger holds 100 idle connections, more than the job's bound (8)
  // and the bound of connections before their hello (the default) together,
  // reopening each the server closes. Clients of the job still get in and
  // work, long before the stranger's first connections would have timed out
  // (a hello had 10 s: an 8 s connect timeout rules out waiting for that).
  TcpStoreOptions options;
  options.maxConnections = 8;
  options.token = "t";
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  Flood flood(server->port(), 100);
  // The stranger has taken every place the store had for him, and more.
  while (flood.opened() < 200)
    std::this_thread::sleep_for(1ms);
  runRanks(4, [&](int rank) {
    TcpStoreOptions client;
    client.token = "t";
    client.connectTimeout = 8s;
    StatusOr<std::unique_ptr<TcpStore>> store =
        TcpStore::create("127.0.0.1", server->port(), /*serve=*/false, client);
    ASSERT_TRUE(store.isOk())
        << "rank " << rank << ": " << store.status().toString();
    std::string key = "k" + std::to_string(rank);
    ASSERT_TRUE((*store)->set(key, bytesOf("v")).isOk());
    StatusOr<std::vector<char>> value = (*store)->get("k0", 30s);
    ASSERT_TRUE(value.isOk()) << value.status().toString();
  });
}

TEST(TcpStore, ANewConnectionHasTheHelloTimeoutToShowTheToken) {
  // A stranger that connects and says nothing is closed once helloTimeout
  // has passed (not kept for as long as a started request may take).
  TcpStoreOptions options;
  options.token = "t";
  options.helloTimeout = 200ms;
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  int fd = connectRaw(server->port());
  ASSERT_GE(fd, 0);
  auto start = Clock::now();
  char byte;
  EXPECT_EQ(::recv(fd, &byte, 1, 0), 0) << "the server did not close it";
  ::close(fd);
  double elapsed = secondsSince(start);
  EXPECT_GE(elapsed, 0.19);
  EXPECT_LT(elapsed, 9.0) << "the connection was kept for the request grace";
}

TEST(TcpStore, BoundsValuesAndTheirTotal) {
  TcpStoreOptions options;
  options.maxValueBytes = 1000;
  options.maxTotalBytes = 2500;
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  // A client with a larger limit of its own: the server still refuses.
  std::unique_ptr<TcpStore> client = storeClient(server->port());
  ASSERT_TRUE(client);
  Status s = client->set("big", std::vector<char>(1001, 'x'));
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("1001 bytes for key 'big' exceeds the limit of "
                             "1000 bytes"),
            std::string::npos)
      << s.toString();
  // Under the total: two values of 1000 bytes (and their keys).
  ASSERT_TRUE(client->set("a", std::vector<char>(1000, 'a')).isOk());
  ASSERT_TRUE(client->set("b", std::vector<char>(1000, 'b')).isOk());
  s = client->set("c", std::vector<char>(1000, 'c'));
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::ResourceExhausted);
  EXPECT_NE(s.message().find("key 'c' would bring the store to 3003 bytes, "
                             "over its limit of 2500"),
            std::string::npos)
      << s.toString();
  // The connection survives a refusal; replacing a value frees its bytes.
  ASSERT_TRUE(client->set("a", std::vector<char>(10, 'a')).isOk());
  ASSERT_TRUE(client->set("c", std::vector<char>(1000, 'c')).isOk());
  StatusOr<std::vector<char>> value = client->get("c", 1s);
  ASSERT_TRUE(value.isOk()) << value.status().toString();
  EXPECT_EQ(value->size(), 1000u);
  // A client's own limit is checked before anything is sent.
  TcpStoreOptions small;
  small.maxValueBytes = 10;
  StatusOr<std::unique_ptr<TcpStore>> limited =
      TcpStore::create("127.0.0.1", server->port(), /*serve=*/false, small);
  ASSERT_TRUE(limited.isOk());
  EXPECT_EQ((*limited)->set("d", std::vector<char>(11)).code(),
            StatusCode::InvalidArgument);
}

namespace {
/// Resident bytes of this process.
int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}
} // namespace

TEST(TcpStore, AnnouncingAValueCostsNothingUntilItsBytesArrive) {
  // An authenticated client announces a 200 MiB value and sends 10 bytes of
  // it: the server must not allocate (and touch) 200 MiB for it.
  TcpStoreOptions options;
  options.token = "t";
  std::unique_ptr<TcpStore> server = serveStore(options);
  ASSERT_TRUE(server);
  int fd = connectRaw(server->port());
  ASSERT_GE(fd, 0);
  // hello: op 3, token "t", protocol version 1; then set: op 1, key "k",
  // value of 200 MiB, of which 10 bytes follow.
  std::vector<char> request = {3, 1, 0, 0, 0, 't', 1, 0, 0, 0, 0, 0, 0, 0,
                               1, 1, 0, 0, 0, 'k'};
  uint64_t announced = 200ull << 20;
  for (int i = 0; i < 8; ++i)
    request.push_back(char((announced >> (8 * i)) & 0xff));
  request.insert(request.end(), 10, 'x');
  int64_t before = residentBytes();
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0),
            ssize_t(request.size()));
  std::this_thread::sleep_for(500ms);
  int64_t grown = residentBytes() - before;
  ::close(fd);
  EXPECT_LT(grown, int64_t(50) << 20)
      << "the server allocated the announced value before its bytes arrived";
  // The connection's end freed its reservation: a normal set still works.
  ASSERT_TRUE(server->set("k", bytesOf("v")).isOk());
}

TEST(TcpStore, CarriesGlooRendezvous) {
  // Rank 0 serves the store, as it does across processes.
  constexpr int kRanks = 4;
  std::atomic<int> port{0};
  Latch served(kRanks), done(kRanks);
  runRanks(kRanks, [&](int rank) {
    std::shared_ptr<TcpStore> store;
    if (rank == 0) {
      store = serveStore();
      port = store ? store->port() : -1;
    }
    served.arriveAndWait();
    if (rank != 0 && port.load() > 0)
      store = storeClient(port.load());
    if (store) {
      GlooCommunicatorFactory factory(rank, kRanks, store, testOptions(5s));
      std::unique_ptr<Communicator> comm = connect(factory, iota(kRanks), "w");
      if (comm)
        checkAllReduce(*comm, DType::F32, ReduceOp::Sum, 1000, false);
    }
    // Rank 0's store serves until every rank is done with it.
    done.arriveAndWait();
  });
}

//===----------------------------------------------------------------------===//
// Collectives on 1..8 ranks
//===----------------------------------------------------------------------===//

/// Element counts that do not divide evenly over the ranks.
const int64_t kCounts[] = {1, 13};

class Collectives : public ::testing::TestWithParam<int> {
protected:
  /// Runs `body(comm)` on every rank of a world of GetParam() ranks.
  void onEveryRank(const std::function<void(Communicator &)> &body) {
    int n = GetParam();
    auto store = std::make_shared<InProcessStore>();
    runRanks(n, [&](int rank) {
      GlooCommunicatorFactory factory(rank, n, store, testOptions());
      std::unique_ptr<Communicator> comm = connect(factory, iota(n), "world");
      ASSERT_TRUE(comm);
      EXPECT_EQ(comm->rank(), rank);
      EXPECT_EQ(comm->size(), n);
      body(*comm);
    });
  }
};

TEST_P(Collectives, AllReduce) {
  onEveryRank([](Communicator &comm) {
    for (int64_t count : kCounts)
      for (DType dtype : kDTypes)
        for (ReduceOp op : kOps)
          checkAllReduce(comm, dtype, op, count,
                         /*inPlace=*/op == ReduceOp::Max);
  });
}

TEST_P(Collectives, AllGather) {
  onEveryRank([](Communicator &comm) {
    for (int64_t count : kCounts)
      for (DType dtype : kDTypes)
        for (bool inPlace : {false, true})
          checkAllGather(comm, dtype, count, inPlace);
  });
}

TEST_P(Collectives, ReduceScatter) {
  onEveryRank([](Communicator &comm) {
    for (int64_t count : kCounts)
      for (DType dtype : kDTypes)
        for (ReduceOp op : kOps)
          checkReduceScatter(comm, dtype, op, count);
  });
}

TEST_P(Collectives, AllToAll) {
  onEveryRank([](Communicator &comm) {
    for (int64_t count : kCounts)
      for (DType dtype : kDTypes)
        for (bool inPlace : {false, true})
          checkAllToAll(comm, dtype, count, inPlace);
  });
}

TEST_P(Collectives, PermuteRing) {
  onEveryRank([](Communicator &comm) {
    int n = comm.size();
    std::vector<std::pair<int, int>> ring, backwards;
    for (int r = 0; r < n; ++r) {
      ring.push_back({r, (r + 1) % n});
      backwards.push_back({r, (r + n - 1) % n});
    }
    for (DType dtype : kDTypes) {
      checkPermute(comm, dtype, 13, ring, /*inPlace=*/false);
      checkPermute(comm, dtype, 13, backwards, /*inPlace=*/true);
    }
  });
}

TEST_P(Collectives, ZeroElementsIsANoOp) {
  onEveryRank([](Communicator &comm) {
    NoopStream stream;
    EXPECT_TRUE(
        comm.allReduce(nullptr, nullptr, 0, DType::F32, ReduceOp::Sum, stream)
            .isOk());
    EXPECT_TRUE(comm.allGather(nullptr, nullptr, 0, DType::F16, stream).isOk());
    EXPECT_TRUE(comm.reduceScatter(nullptr, nullptr, 0, DType::I64,
                                   ReduceOp::Max, stream)
                    .isOk());
    EXPECT_TRUE(comm.allToAll(nullptr, nullptr, 0, DType::I32, stream).isOk());
    // Operations still line up afterwards.
    checkAllReduce(comm, DType::I32, ReduceOp::Sum, 13, false);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Range(1, 9),
                         [](const ::testing::TestParamInfo<int> &info) {
                           return "Ranks" + std::to_string(info.param);
                         });

//===----------------------------------------------------------------------===//
// Large buffers (Gloo splits them into segments)
//===----------------------------------------------------------------------===//

/// Runs `body(comm)` on every rank of a world of `n` ranks.
void onWorld(int n, const std::function<void(Communicator &)> &body,
             GlooOptions options = testOptions()) {
  auto store = std::make_shared<InProcessStore>();
  runRanks(n, [&](int rank) {
    GlooCommunicatorFactory factory(rank, n, store, options);
    std::unique_ptr<Communicator> comm = connect(factory, iota(n), "world");
    ASSERT_TRUE(comm);
    body(*comm);
  });
}

TEST(CollectivesLarge, AllReduceOfAMillionAndThreeElements) {
  for (int n : {3, 8})
    onWorld(n, [](Communicator &comm) {
      checkAllReduce(comm, DType::F32, ReduceOp::Sum, 1000003, false);
      checkAllReduce(comm, DType::BF16, ReduceOp::Avg, 1000003, true);
      checkAllReduce(comm, DType::I64, ReduceOp::Max, 1000003, false);
    });
}

TEST(CollectivesLarge, GatherScatterAndAllToAll) {
  onWorld(4, [](Communicator &comm) {
    constexpr int64_t kBlock = 250007;
    checkAllGather(comm, DType::F32, kBlock, false);
    checkReduceScatter(comm, DType::F16, ReduceOp::Sum, kBlock);
    checkReduceScatter(comm, DType::I32, ReduceOp::Min, kBlock);
    checkAllToAll(comm, DType::BF16, kBlock, true);
    std::vector<std::pair<int, int>> ring;
    for (int r = 0; r < comm.size(); ++r)
      ring.push_back({r, (r + 1) % comm.size()});
    checkPermute(comm, DType::I64, kBlock, ring, false);
  });
}

//===----------------------------------------------------------------------===//
// Permute, send and recv
//===----------------------------------------------------------------------===//

TEST(Permute, PartialPairingZeroesNonTargets) {
  onWorld(4, [](Communicator &comm) {
    // 0 <-> 2 swap, 1 keeps its own, 3 is no target and gets zeros.
    for (DType dtype : kDTypes) {
      checkPermute(comm, dtype, 13, {{0, 2}, {2, 0}, {1, 1}}, false);
      checkPermute(comm, dtype, 13, {{0, 2}, {2, 0}, {1, 1}}, true);
    }
    // 3 sends to 0 but receives nothing; 1 and 2 get zeros.
    checkPermute(comm, DType::F32, 1000003, {{3, 0}}, false);
    // No pairs at all: every rank gets zeros.
    checkPermute(comm, DType::I32, 7, {}, false);
  });
}

TEST(Permute, RejectsInvalidPairsAndStaysUsable) {
  onWorld(3, [](Communicator &comm) {
    NoopStream stream;
    std::vector<float> send(4, 1.0f), recv(4);
    for (const auto &pairs : std::vector<std::vector<std::pair<int, int>>>{
             {{0, 1}, {2, 1}}, // two sources for target 1
             {{0, 1}, {0, 2}}, // rank 0 sends twice
             {{0, 3}},         // no rank 3
             {{-1, 0}}}) {
      Status status =
          comm.permute(send.data(), recv.data(), 4, DType::F32, pairs, stream);
      EXPECT_EQ(status.code(), StatusCode::InvalidArgument)
          << status.toString();
    }
    checkPermute(comm, DType::F32, 13, {{0, 1}, {1, 2}, {2, 0}}, false);
  });
}

TEST(SendRecv, MatchesByPeerAndTag) {
  onWorld(3, [](Communicator &comm) {
    NoopStream stream;
    constexpr int64_t kCount = 1001;
    const int64_t kBigTag = (int64_t(1) << 56) - 1;
    std::vector<int64_t> a(kCount), b(kCount), c(kCount);
    for (int64_t i = 0; i < kCount; ++i) {
      a[i] = i;
      b[i] = -i;
      c[i] = i * 1000003;
    }
    std::vector<int64_t> got(kCount);
    switch (comm.rank()) {
    case 0:
      // Two messages to rank 2 with different tags, then one to rank 1.
      ASSERT_TRUE(comm.send(a.data(), kCount, DType::I64, 2, 5, stream).isOk());
      ASSERT_TRUE(
          comm.send(c.data(), kCount, DType::I64, 2, kBigTag, stream).isOk());
      ASSERT_TRUE(comm.send(b.data(), kCount, DType::I64, 1, 5, stream).isOk());
      break;
    case 1:
      ASSERT_TRUE(
          comm.recv(got.data(), kCount, DType::I64, 0, 5, stream).isOk());
      EXPECT_EQ(got, b);
      ASSERT_TRUE(comm.send(c.data(), kCount, DType::I64, 2, 5, stream).isOk());
      break;
    case 2:
      ASSERT_TRUE(
          comm.recv(got.data(), kCount, DType::I64, 0, 5, stream).isOk());
      EXPECT_EQ(got, a);
      ASSERT_TRUE(
          comm.recv(got.data(), kCount, DType::I64, 0, kBigTag, stream).isOk());
      EXPECT_EQ(got, c);
      // Same tag as rank 0's first message, other peer.
      ASSERT_TRUE(
          comm.recv(got.data(), kCount, DType::I64, 1, 5, stream).isOk());
      EXPECT_EQ(got, c);
      break;
    }
    // Collectives still line up after point-to-point traffic.
    checkAllReduce(comm, DType::F32, ReduceOp::Sum, 13, false);
  });
}

TEST(SendRecv, DifferentTagsDoNotMatch) {
  // Rank 0 sends with tag 7, rank 1 waits for tag 8: neither completes. The
  // receive fails within the timeout; the send returned at once (sends do
  // not wait for their receivers) and its failure is the error of the
  // sender's next operation once the timeout has passed.
  onWorld(
      2,
      [](Communicator &comm) {
        NoopStream stream;
        std::vector<float> data(10, 1.0f);
        auto start = Clock::now();
        Status status;
        if (comm.rank() == 0) {
          ASSERT_TRUE(
              comm.send(data.data(), 10, DType::F32, 1, 7, stream).isOk());
          std::this_thread::sleep_for(900ms);
          status = comm.send(data.data(), 10, DType::F32, 1, 9, stream);
        } else {
          status = comm.recv(data.data(), 10, DType::F32, 0, 8, stream);
        }
        double elapsed = secondsSince(start);
        ASSERT_FALSE(status.isOk());
        EXPECT_TRUE(status.code() == StatusCode::DeadlineExceeded ||
                    status.code() == StatusCode::Aborted)
            << status.toString();
        EXPECT_LT(elapsed, 0.9 + 0.5 + kSlackSeconds);
      },
      testOptions(500ms));
}

TEST(SendRecv, SendsDoNotWaitForTheirReceivers) {
  // Both ranks send before they receive (two pipeline stages exchanging
  // activations and gradients at once): with sends that waited for their
  // receivers, each would wait for the other's receive forever.
  onWorld(2, [](Communicator &comm) {
    NoopStream stream;
    int other = 1 - comm.rank();
    std::vector<float> mine(1 << 16, float(comm.rank() + 1)), got(1 << 16);
    ASSERT_TRUE(comm.send(mine.data(), int64_t(mine.size()), DType::F32,
                          other, 3, stream)
                    .isOk());
    // The buffer may change once send returns: the message is a copy.
    std::fill(mine.begin(), mine.end(), -1.0f);
    ASSERT_TRUE(comm.recv(got.data(), int64_t(got.size()), DType::F32, other,
                          3, stream)
                    .isOk());
    EXPECT_EQ(got[0], float(other + 1));
    EXPECT_EQ(got.back(), float(other + 1));
  });
}

TEST(SendRecv, RejectsBadPeersAndTags) {
  onWorld(2, [](Communicator &comm) {
    NoopStream stream;
    float x = 0;
    int other = 1 - comm.rank();
    EXPECT_EQ(comm.send(&x, 1, DType::F32, comm.rank(), 0, stream).code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(comm.send(&x, 1, DType::F32, 2, 0, stream).code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(comm.recv(&x, 1, DType::F32, other, -1, stream).code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(
        comm.recv(&x, 1, DType::F32, other, int64_t(1) << 56, stream).code(),
        StatusCode::InvalidArgument);
    EXPECT_EQ(comm.send(&x, -1, DType::F32, other, 0, stream).code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(comm.send(nullptr, 1, DType::F32, other, 0, stream).code(),
              StatusCode::InvalidArgument);
    checkAllReduce(comm, DType::F32, ReduceOp::Sum, 13, false);
  });
}

//===----------------------------------------------------------------------===//
// Groups from mesh axes
//===----------------------------------------------------------------------===//

TEST(Groups, RowsAndColumnsOfA2x4Mesh) {
  // World rank = row * 4 + column. Rows are the groups along the column axis
  // and vice versa, as a mesh axis produces them.
  constexpr int kRows = 2, kCols = 4, kWorld = kRows * kCols;
  auto store = std::make_shared<InProcessStore>();
  runRanks(kWorld, [&](int rank) {
    NoopStream stream;
    int row = rank / kCols, col = rank % kCols;
    GlooCommunicatorFactory factory(rank, kWorld, store, testOptions());
    std::unique_ptr<Communicator> rowComm = connect(
        factory, iota(kCols, row * kCols), "axis1/" + std::to_string(row));
    std::unique_ptr<Communicator> colComm = connect(
        factory, iota(kRows, col, kCols), "axis0/" + std::to_string(col));
    ASSERT_TRUE(rowComm && colComm);
    EXPECT_EQ(rowComm->rank(), col);
    EXPECT_EQ(rowComm->size(), kCols);
    EXPECT_EQ(colComm->rank(), row);
    EXPECT_EQ(colComm->size(), kRows);

    // Sum over the row, then over the column: the sum over the world.
    std::vector<int64_t> x(13);
    for (int i = 0; i < 13; ++i)
      x[i] = rank * 100 + i;
    ASSERT_TRUE(rowComm
                    ->allReduce(x.data(), x.data(), 13, DType::I64,
                                ReduceOp::Sum, stream)
                    .isOk());
    ASSERT_TRUE(colComm
                    ->allReduce(x.data(), x.data(), 13, DType::I64,
                                ReduceOp::Sum, stream)
                    .isOk());
    for (int i = 0; i < 13; ++i)
      EXPECT_EQ(x[i], 100 * (kWorld * (kWorld - 1) / 2) + kWorld * i);

    // Gather over the column: the ranks of this column, in row order.
    int32_t me = rank;
    std::vector<int32_t> column(kRows);
    ASSERT_TRUE(
        colComm->allGather(&me, column.data(), 1, DType::I32, stream).isOk());
    EXPECT_EQ(column, iota(kRows, col, kCols));

    // The groups interleave freely and run the full checks too.
    checkReduceScatter(*rowComm, DType::BF16, ReduceOp::Avg, 13);
    checkAllToAll(*colComm, DType::F16, 13, false);
    checkAllReduce(*rowComm, DType::F32, ReduceOp::Max, 13, false);

    // A group created again under the same key gets a fresh rendezvous.
    std::unique_ptr<Communicator> again = connect(
        factory, iota(kCols, row * kCols), "axis1/" + std::to_string(row));
    ASSERT_TRUE(again);
    checkAllReduce(*again, DType::I32, ReduceOp::Sum, 13, false);
  });
}

TEST(Groups, RejectsMalformedGroups) {
  auto store = std::make_shared<InProcessStore>();
  GlooCommunicatorFactory factory(1, 4, store, testOptions(200ms));
  for (const std::vector<int> &ranks :
       {std::vector<int>{0, 2}, {0, 1, 1}, {1, 4}, {}, {-1, 1}}) {
    StatusOr<std::unique_ptr<Communicator>> comm = factory.create(ranks, "bad");
    ASSERT_FALSE(comm.isOk());
    EXPECT_EQ(comm.status().code(), StatusCode::InvalidArgument)
        << comm.status().toString();
  }
  GlooCommunicatorFactory outside(4, 4, store, testOptions(200ms));
  StatusOr<std::unique_ptr<Communicator>> comm = outside.create({0}, "bad");
  ASSERT_FALSE(comm.isOk());
  EXPECT_EQ(comm.status().code(), StatusCode::InvalidArgument);
}

TEST(Groups, MembersMustAgreeOnTheRanks) {
  // Ranks 0 and 1 use key "g" with the same group size and positions, but
  // rank 1 names world rank 2 where rank 0 names itself: connecting works,
  // the fingerprint check fails on both.
  auto store = std::make_shared<InProcessStore>();
  runRanks(2, [&](int rank) {
    GlooCommunicatorFactory factory(rank, 3, store, testOptions(5s));
    StatusOr<std::unique_ptr<Communicator>> comm = factory.create(
        rank == 0 ? std::vector<int>{0, 1} : std::vector<int>{2, 1}, "g");
    ASSERT_FALSE(comm.isOk());
    EXPECT_EQ(comm.status().code(), StatusCode::InvalidArgument)
        << comm.status().toString();
    EXPECT_NE(comm.status().message().find("different list of ranks"),
              std::string::npos)
        << comm.status().toString();
  });
}

//===----------------------------------------------------------------------===//
// Failures: a failing rank makes its peers fail within the timeout
//===----------------------------------------------------------------------===//

constexpr auto kShortTimeout = 2000ms;
const double kFailureBound =
    std::chrono::duration<double>(kShortTimeout).count() + kSlackSeconds;
/// What "at once" means for a call that would otherwise wait out
/// kShortTimeout: well under it, even on a loaded machine.
constexpr double kAtOnce = 1.0;

/// Checks that `status` is the error of a failed peer or an expired wait.
void expectPeerFailure(const Status &status, double elapsed, int rank) {
  EXPECT_FALSE(status.isOk()) << "rank " << rank;
  EXPECT_TRUE(status.code() == StatusCode::DeadlineExceeded ||
              status.code() == StatusCode::Aborted)
      << "rank " << rank << ": " << status.toString();
  EXPECT_LT(elapsed, kFailureBound)
      << "rank " << rank << " took " << elapsed << " s to fail";
  std::printf("  rank %d failed after %.3f s: %s\n", rank, elapsed,
              status.toString().c_str());
}

/// After a failure, every call fails at once without touching the network.
void expectUnusable(Communicator &comm) {
  NoopStream stream;
  std::vector<float> x(8);
  auto start = Clock::now();
  Status status =
      comm.allReduce(x.data(), x.data(), 8, DType::F32, ReduceOp::Sum, stream);
  EXPECT_EQ(status.code(), StatusCode::Aborted) << status.toString();
  status = comm.send(x.data(), 8, DType::F32, (comm.rank() + 1) % comm.size(),
                     0, stream);
  EXPECT_EQ(status.code(), StatusCode::Aborted) << status.toString();
  EXPECT_LT(secondsSince(start), kAtOnce);
}

TEST(Failure, PeerDestroysItsCommunicatorMidRun) {
  constexpr int kRanks = 4;
  auto store = std::make_shared<InProcessStore>();
  runRanks(kRanks, [&](int rank) {
    NoopStream stream;
    GlooCommunicatorFactory factory(rank, kRanks, store,
                                    testOptions(kShortTimeout));
    std::unique_ptr<Communicator> comm = connect(factory, iota(kRanks), "w");
    ASSERT_TRUE(comm);
    checkAllReduce(*comm, DType::F32, ReduceOp::Sum, 1000, false);
    if (rank == 3) {
      // Fails while the others are already waiting in the next all-reduce.
      std::this_thread::sleep_for(200ms);
      comm.reset();
      return;
    }
    std::vector<float> x(1 << 20, 1.0f);
    auto start = Clock::now();
    Status status = comm->allReduce(x.data(), x.data(), x.size(), DType::F32,
                                    ReduceOp::Sum, stream);
    expectPeerFailure(status, secondsSince(start), rank);
    expectUnusable(*comm);
  });
}

TEST(Failure, PeerNeverJoinsTheCollective) {
  constexpr int kRanks = 4;
  auto store = std::make_shared<InProcessStore>();
  Latch othersDone(kRanks);
  runRanks(kRanks, [&](int rank) {
    NoopStream stream;
    GlooCommunicatorFactory factory(rank, kRanks, store,
                                    testOptions(kShortTimeout));
    std::unique_ptr<Communicator> comm = connect(factory, iota(kRanks), "w");
    ASSERT_TRUE(comm);
    std::vector<float> x(1000, 1.0f);
    if (rank != 3) {
      auto start = Clock::now();
      Status status = comm->allReduce(x.data(), x.data(), x.size(), DType::F32,
                                      ReduceOp::Sum, stream);
      expectPeerFailure(status, secondsSince(start), rank);
      expectUnusable(*comm);
    }
    // Rank 3 stays alive (holding its communicator) until the others have
    // failed; its own next call then fails fast too.
    othersDone.arriveAndWait();
    if (rank == 3) {
      auto start = Clock::now();
      Status status = comm->allReduce(x.data(), x.data(), x.size(), DType::F32,
                                      ReduceOp::Sum, stream);
      expectPeerFailure(status, secondsSince(start), rank);
      EXPECT_LT(secondsSince(start), kAtOnce);
    }
  });
}

TEST(Failure, PeerNeverCreatesTheGroup) {
  constexpr int kRanks = 4;
  auto store = std::make_shared<InProcessStore>();
  runRanks(kRanks - 1, [&](int rank) {
    GlooCommunicatorFactory factory(rank, kRanks, store,
                                    testOptions(kShortTimeout));
    auto start = Clock::now();
    StatusOr<std::unique_ptr<Communicator>> comm =
        factory.create(iota(kRanks), "w");
    double elapsed = secondsSince(start);
    ASSERT_FALSE(comm.isOk());
    expectPeerFailure(comm.status(), elapsed, rank);
  });
}

TEST(Failure, AbortWakesAPendingRecvAtOnce) {
  auto store = std::make_shared<InProcessStore>();
  Latch aborted(2);
  runRanks(2, [&](int rank) {
    NoopStream stream;
    GlooCommunicatorFactory factory(rank, 2, store, testOptions(20s));
    std::unique_ptr<Communicator> comm = connect(factory, iota(2), "w");
    ASSERT_TRUE(comm);
    std::vector<float> x(100);
    if (rank == 0) {
      std::thread aborter([&] {
        std::this_thread::sleep_for(100ms);
        comm->abort();
      });
      auto start = Clock::now();
      Status status = comm->recv(x.data(), 100, DType::F32, 1, 0, stream);
      double elapsed = secondsSince(start);
      aborter.join();
      EXPECT_EQ(status.code(), StatusCode::Aborted) << status.toString();
      EXPECT_LT(elapsed, kHangBound) << "the recv waited out its 20 s";
      expectUnusable(*comm);
    }
    aborted.arriveAndWait();
    if (rank == 1) {
      // Rank 0 reset its connections: this rank fails at once, long before
      // its 20 s timeout.
      auto start = Clock::now();
      Status status = comm->allReduce(x.data(), x.data(), 100, DType::F32,
                                      ReduceOp::Sum, stream);
      double elapsed = secondsSince(start);
      EXPECT_FALSE(status.isOk());
      EXPECT_LT(elapsed, kHangBound) << status.toString();
    }
  });
}

TEST(Failure, AbortDuringACollectiveReturnsWithinTheTimeout) {
  auto store = std::make_shared<InProcessStore>();
  Latch done(2);
  runRanks(2, [&](int rank) {
    NoopStream stream;
    GlooCommunicatorFactory factory(rank, 2, store, testOptions(kShortTimeout));
    std::unique_ptr<Communicator> comm = connect(factory, iota(2), "w");
    ASSERT_TRUE(comm);
    if (rank == 0) {
      std::thread aborter([&] {
        std::this_thread::sleep_for(100ms);
        comm->abort();
      });
      std::vector<float> x(1000);
      auto start = Clock::now();
      Status status = comm->allReduce(x.data(), x.data(), 1000, DType::F32,
                                      ReduceOp::Sum, stream);
      double elapsed = secondsSince(start);
      aborter.join();
      EXPECT_EQ(status.code(), StatusCode::Aborted) << status.toString();
      EXPECT_LT(elapsed, kFailureBound);
      std::printf("  aborted all-reduce returned after %.3f s\n", elapsed);
    }
    done.arriveAndWait();
  });
}

TEST(Failure, AnErrorAbortsTheRanksOtherGroups) {
  auto store = std::make_shared<InProcessStore>();
  Latch created(2), failed(2);
  runRanks(2, [&](int rank) {
    NoopStream stream;
    GlooCommunicatorFactory factory(rank, 2, store, testOptions(kShortTimeout));
    std::unique_ptr<Communicator> a = connect(factory, iota(2), "a");
    std::unique_ptr<Communicator> b = connect(factory, iota(2), "b");
    ASSERT_TRUE(a && b);
    created.arriveAndWait();
    if (rank == 1) {
      a.reset(); // Rank 1 leaves group "a".
    } else {
      std::vector<float> x(100);
      auto start = Clock::now();
      Status status = a->allReduce(x.data(), x.data(), 100, DType::F32,
                                   ReduceOp::Sum, stream);
      expectPeerFailure(status, secondsSince(start), rank);
      // Group "b" was aborted with it, without any traffic.
      expectUnusable(*b);
    }
    failed.arriveAndWait();
  });
}

TEST(Failure, InvalidArgumentsLeaveTheCommunicatorUsable) {
  onWorld(2, [](Communicator &comm) {
    NoopStream stream;
    std::vector<float> x(4);
    EXPECT_EQ(comm.allReduce(x.data(), x.data(), -1, DType::F32, ReduceOp::Sum,
                             stream)
                  .code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(comm.allGather(nullptr, x.data(), 1, DType::F32, stream).code(),
              StatusCode::InvalidArgument);
    EXPECT_EQ(
        comm.allToAll(x.data(), x.data(), 1, static_cast<DType>(42), stream)
            .code(),
        StatusCode::InvalidArgument);
    checkAllReduce(comm, DType::F32, ReduceOp::Sum, 13, false);
  });
}

} // namespace
