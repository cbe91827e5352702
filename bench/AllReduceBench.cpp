//===- AllReduceBench.cpp - all-reduce bandwidth: ours vs raw Gloo --------===//
//
// f32 sum all-reduce over 2 and 4 ranks (threads of this process, loopback
// TCP) for 1 KiB..64 MiB, through partition's GlooCommunicator and through
// raw gloo::allreduce on its own context, in the same run. Prints the time
// per operation and the bus bandwidth (nccl-tests' definition: bytes *
// 2(n-1)/n / time), and our time over Gloo's.
//
// Usage: AllReduceBench [--max-bytes N] [--seconds S]
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Device.h"
#include "partition/runtime/Stores.h"
#include "partition/runtime/cpu/GlooCommunicator.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace partition::runtime;
using Clock = std::chrono::steady_clock;

namespace {

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

/// Times `op` on every rank: a few warm-up calls, then as many calls as fit
/// in about `seconds` (decided on rank 0 from the warm-up and shared through
/// `iterations`). `op` itself synchronizes the ranks. Returns seconds per
/// call on rank 0.
double timeOp(int rank, double seconds, std::atomic<int> &iterations,
              const std::function<bool()> &op) {
  for (int i = 0; i < 2; ++i)
    if (!op())
      return -1;
  auto start = Clock::now();
  if (!op())
    return -1;
  double once = std::chrono::duration<double>(Clock::now() - start).count();
  // Rank 0 picks the count; the others read it after one more (synchronizing)
  // call, so that every rank runs the same number of calls.
  if (rank == 0)
    iterations =
        std::clamp(static_cast<int>(seconds / std::max(once, 1e-6)), 3, 2000);
  if (!op())
    return -1;
  int n = iterations.load();
  start = Clock::now();
  for (int i = 0; i < n; ++i)
    if (!op())
      return -1;
  return std::chrono::duration<double>(Clock::now() - start).count() / n;
}

/// Seconds per all-reduce of `bytes` through partition's communicator.
double benchOurs(int ranks, size_t bytes, double seconds) {
  auto store = std::make_shared<InProcessStore>();
  std::atomic<int> iterations{0};
  double result = -1;
  runRanks(ranks, [&](int rank) {
    cpu::GlooOptions options;
    options.timeout = std::chrono::seconds(60);
    cpu::GlooCommunicatorFactory factory(rank, ranks, store, options);
    std::vector<int> all(ranks);
    for (int r = 0; r < ranks; ++r)
      all[r] = r;
    StatusOr<std::unique_ptr<Communicator>> comm = factory.create(all, "bench");
    if (!comm.isOk()) {
      std::fprintf(stderr, "rank %d: %s\n", rank,
                   comm.status().toString().c_str());
      return;
    }
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    NoopStream stream;
    double t = timeOp(rank, seconds, iterations, [&] {
      Status status = (*comm)->allReduce(data.data(), data.data(), data.size(),
                                         DType::F32, ReduceOp::Sum, stream);
      if (!status.isOk())
        std::fprintf(stderr, "rank %d: %s\n", rank, status.toString().c_str());
      return status.isOk();
    });
    if (rank == 0)
      result = t;
  });
  return result;
}

/// Seconds per all-reduce of `bytes` through raw gloo::allreduce.
double benchGloo(int ranks, size_t bytes, double seconds) {
  gloo::rendezvous::HashStore store;
  std::atomic<int> iterations{0};
  double result = -1;
  runRanks(ranks, [&](int rank) {
    try {
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto device = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
      context->setTimeout(std::chrono::seconds(60));
      gloo::rendezvous::PrefixStore prefixed("raw", store);
      context->connectFullMesh(prefixed, device);
      std::vector<float> data(bytes / sizeof(float), 1.0f);
      uint32_t tag = 0;
      double t = timeOp(rank, seconds, iterations, [&] {
        gloo::AllreduceOptions opts(context);
        opts.setOutput(data.data(), data.size());
        opts.setReduceFunction(
            static_cast<void (*)(void *, const void *, const void *, size_t)>(
                &gloo::sum<float>));
        opts.setTag(tag++);
        gloo::allreduce(opts);
        return true;
      });
      if (rank == 0)
        result = t;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "rank %d: gloo: %s\n", rank, e.what());
    }
  });
  return result;
}

std::string humanBytes(size_t bytes) {
  if (bytes >= (1u << 20))
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

} // namespace

int main(int argc, char **argv) {
  size_t maxBytes = size_t(64) << 20;
  double seconds = 0.5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--max-bytes"))
      maxBytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seconds"))
      seconds = std::atof(argv[i + 1]);
  }
  std::printf("# f32 sum all-reduce, ranks as threads over loopback TCP; "
              "busbw = bytes * 2(n-1)/n / time\n");
  std::printf("%5s %9s %12s %12s %12s %12s %8s\n", "ranks", "size", "ours (us)",
              "gloo (us)", "ours GB/s", "gloo GB/s", "ratio");
  for (int ranks : {2, 4}) {
    for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
      double ours = benchOurs(ranks, bytes, seconds);
      double gloo = benchGloo(ranks, bytes, seconds);
      if (ours <= 0 || gloo <= 0) {
        std::fprintf(stderr, "failed at %d ranks, %zu bytes\n", ranks, bytes);
        return 1;
      }
      double factor = 2.0 * (ranks - 1) / ranks;
      std::printf("%5d %9s %12.1f %12.1f %12.3f %12.3f %8.2f\n", ranks,
                  humanBytes(bytes).c_str(), ours * 1e6, gloo * 1e6,
                  bytes * factor / ours / 1e9, bytes * factor / gloo / 1e9,
                  ours / gloo);
      std::fflush(stdout);
    }
  }
  return 0;
}
