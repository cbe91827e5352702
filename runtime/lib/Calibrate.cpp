//===- Calibrate.cpp - measuring this machine for the cost model ---------===//

#include "partition/runtime/Calibrate.h"
#include "partition/runtime/Kernels.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

using namespace partition::runtime;
using Clock = std::chrono::steady_clock;

namespace {

/// Mean seconds per call of `op` (which synchronizes its stream): two
/// warm-up calls, the second timed, then as many calls as fit in `seconds`
/// (at least 3). For a collective, `agreedCalls` turns the warm-up's time
/// into a count that every rank of the group gets the same.
StatusOr<double> timeCalls(double seconds, const std::function<Status()> &op,
                           const std::function<int(double)> &agreedCalls) {
  PARTITION_RETURN_IF_ERROR(op());
  auto start = Clock::now();
  PARTITION_RETURN_IF_ERROR(op());
  double once = std::chrono::duration<double>(Clock::now() - start).count();
  int calls = agreedCalls
                  ? agreedCalls(once)
                  : std::clamp(int(seconds / std::max(once, 1e-7)), 3, 100000);
  start = Clock::now();
  for (int i = 0; i < calls; ++i)
    PARTITION_RETURN_IF_ERROR(op());
  return std::chrono::duration<double>(Clock::now() - start).count() / calls;
}

StatusOr<std::unique_ptr<Buffer>> filled(Device &device, Stream &stream,
                                         int64_t elements, float value) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer,
                             device.allocate(size_t(elements) * 4));
  std::vector<float> host(size_t(elements), value);
  PARTITION_RETURN_IF_ERROR(device.copyToDevice(
      buffer->data(), host.data(), host.size() * 4, stream));
  PARTITION_RETURN_IF_ERROR(stream.synchronize());
  return buffer;
}

/// Seconds per call of one kernel on `stream`, each call waited for.
StatusOr<double> timeKernel(Device &device, Stream &stream, OpKind kind,
                            const KernelAttrs &attrs,
                            const std::vector<TensorRef> &in,
                            const std::vector<TensorRef> &out,
                            double seconds) {
  return timeCalls(
      seconds,
      [&]() -> Status {
        PARTITION_RETURN_IF_ERROR(
            device.kernels().run(kind, attrs, in, out, stream));
        return stream.synchronize();
      },
      nullptr);
}

} // namespace

StatusOr<std::vector<Measurement>>
partition::runtime::measureGemm(Device &device,
                                const CalibrationOptions &options) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream,
                             device.createStream());
  std::vector<Measurement> out;
  for (int64_t n : options.gemmSizes) {
    PARTITION_ASSIGN_OR_RETURN(auto a, filled(device, *stream, n * n, 0.5f));
    PARTITION_ASSIGN_OR_RETURN(auto b, filled(device, *stream, n * n, 0.25f));
    PARTITION_ASSIGN_OR_RETURN(auto c, filled(device, *stream, n * n, 0));
    std::vector<TensorRef> in = {{a->data(), DType::F32, {n, n}},
                                 {b->data(), DType::F32, {n, n}}};
    std::vector<TensorRef> result = {{c->data(), DType::F32, {n, n}}};
    PARTITION_ASSIGN_OR_RETURN(
        double seconds,
        timeKernel(device, *stream, OpKind::Matmul, matmulAttrs(false, false),
                   in, result, options.secondsPerPoint));
    out.push_back({2.0 * double(n) * double(n) * double(n), seconds});
  }
  return out;
}

StatusOr<double>
partition::runtime::measureElementwise(Device &device,
                                       const CalibrationOptions &options) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream,
                             device.createStream());
  int64_t n = options.elementwiseElements;
  PARTITION_ASSIGN_OR_RETURN(auto a, filled(device, *stream, n, 1));
  PARTITION_ASSIGN_OR_RETURN(auto b, filled(device, *stream, n, 2));
  PARTITION_ASSIGN_OR_RETURN(auto c, filled(device, *stream, n, 0));
  std::vector<TensorRef> in = {{a->data(), DType::F32, {n}},
                               {b->data(), DType::F32, {n}}};
  std::vector<TensorRef> result = {{c->data(), DType::F32, {n}}};
  PARTITION_ASSIGN_OR_RETURN(
      double seconds, timeKernel(device, *stream, OpKind::Add, KernelAttrs(),
                                 in, result, options.secondsPerPoint));
  return 3.0 * double(n) * 4.0 / seconds;
}

StatusOr<std::vector<Measurement>>
partition::runtime::measureAllReduce(Device &device, Communicator &comm,
                                     const CalibrationOptions &options,
                                     bool busy) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream,
                             device.createStream());
  // The load beside the all-reduces: GEMMs until `stop`.
  std::atomic<bool> stop{false};
  Status loadStatus;
  std::thread load;
  if (busy) {
    const int64_t n = 256;
    PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> compute,
                               device.createStream());
    PARTITION_ASSIGN_OR_RETURN(auto a, filled(device, *compute, n * n, 0.5f));
    PARTITION_ASSIGN_OR_RETURN(auto c, filled(device, *compute, n * n, 0));
    load = std::thread([&device, &stop, &loadStatus, n,
                        compute = std::move(compute), a = std::move(a),
                        c = std::move(c)] {
      std::vector<TensorRef> in = {{a->data(), DType::F32, {n, n}},
                                   {a->data(), DType::F32, {n, n}}};
      std::vector<TensorRef> out = {{c->data(), DType::F32, {n, n}}};
      KernelAttrs attrs = matmulAttrs(false, false);
      while (!stop.load() && loadStatus.isOk()) {
        loadStatus =
            device.kernels().run(OpKind::Matmul, attrs, in, out, *compute);
        if (loadStatus.isOk())
          loadStatus = compute->synchronize();
      }
    });
  }
  struct Join {
    std::atomic<bool> &stop;
    std::thread &load;
    ~Join() {
      stop = true;
      if (load.joinable())
        load.join();
    }
  } join{stop, load};
  std::vector<Measurement> out;
  int64_t most = 4;
  for (int64_t bytes : options.collectiveBytes)
    most = std::max(most, bytes);
  PARTITION_ASSIGN_OR_RETURN(auto data, filled(device, *stream, most / 4, 1));
  // The number of calls: from rank 0's warm-up, shared by one more
  // all-reduce so that every rank runs as many.
  PARTITION_ASSIGN_OR_RETURN(auto count, filled(device, *stream, 1, 0));
  for (int64_t bytes : options.collectiveBytes) {
    int64_t elements = std::max<int64_t>(1, bytes / 4);
    auto op = [&]() -> Status {
      PARTITION_RETURN_IF_ERROR(comm.allReduce(data->data(), data->data(),
                                               elements, DType::F32,
                                               ReduceOp::Sum, *stream));
      return stream->synchronize();
    };
    auto agree = [&](double once) -> int {
      float calls = comm.rank() == 0
                        ? float(std::clamp(
                              int(options.secondsPerPoint / std::max(once, 1e-7)),
                              3, 100000))
                        : 0.0f;
      if (!device.copyToDevice(count->data(), &calls, 4, *stream).isOk() ||
          !comm.allReduce(count->data(), count->data(), 1, DType::F32,
                          ReduceOp::Max, *stream)
               .isOk() ||
          !device.copyToHost(&calls, count->data(), 4, *stream).isOk() ||
          !stream->synchronize().isOk())
        return 3;
      return std::max(3, int(calls));
    };
    PARTITION_ASSIGN_OR_RETURN(double seconds,
                               timeCalls(options.secondsPerPoint, op, agree));
    out.push_back({double(elements * 4), seconds});
  }
  stop = true;
  if (load.joinable())
    load.join();
  PARTITION_RETURN_IF_ERROR(loadStatus);
  return out;
}

StatusOr<double>
partition::runtime::measureOverlap(Device &device, Communicator &comm,
                                   const CalibrationOptions &options) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream,
                             device.createStream());
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<Stream> lane,
                             device.createStream());
  const int64_t n = 256, elements = (1 << 20) / 4;
  PARTITION_ASSIGN_OR_RETURN(auto a, filled(device, *stream, n * n, 0.5f));
  PARTITION_ASSIGN_OR_RETURN(auto b, filled(device, *stream, n * n, 0.25f));
  PARTITION_ASSIGN_OR_RETURN(auto c, filled(device, *stream, n * n, 0));
  PARTITION_ASSIGN_OR_RETURN(auto data, filled(device, *lane, elements, 1));
  PARTITION_ASSIGN_OR_RETURN(auto counts, filled(device, *stream, 2, 0));
  std::vector<TensorRef> in = {{a->data(), DType::F32, {n, n}},
                               {b->data(), DType::F32, {n, n}}};
  std::vector<TensorRef> result = {{c->data(), DType::F32, {n, n}}};
  KernelAttrs attrs = matmulAttrs(false, false);
  auto gemms = [&](int k) -> Status {
    for (int i = 0; i < k; ++i)
      PARTITION_RETURN_IF_ERROR(
          device.kernels().run(OpKind::Matmul, attrs, in, result, *stream));
    return stream->synchronize();
  };
  auto allReduces = [&](int j) -> Status {
    for (int i = 0; i < j; ++i)
      PARTITION_RETURN_IF_ERROR(comm.allReduce(data->data(), data->data(),
                                               elements, DType::F32,
                                               ReduceOp::Sum, *lane));
    return lane->synchronize();
  };
  auto seconds = [](const std::function<Status()> &f) -> StatusOr<double> {
    auto start = Clock::now();
    PARTITION_RETURN_IF_ERROR(f());
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  // One of each, then counts that take about secondsPerPoint, the same on
  // every rank (the largest).
  PARTITION_RETURN_IF_ERROR(gemms(1));
  PARTITION_RETURN_IF_ERROR(allReduces(1));
  PARTITION_ASSIGN_OR_RETURN(double gemm, seconds([&] { return gemms(1); }));
  PARTITION_ASSIGN_OR_RETURN(double reduce,
                             seconds([&] { return allReduces(1); }));
  float wanted[2] = {
      float(std::clamp(int(options.secondsPerPoint / std::max(gemm, 1e-7)), 2,
                       100000)),
      float(std::clamp(int(options.secondsPerPoint / std::max(reduce, 1e-7)),
                       2, 100000))};
  PARTITION_RETURN_IF_ERROR(
      device.copyToDevice(counts->data(), wanted, sizeof(wanted), *stream));
  PARTITION_RETURN_IF_ERROR(comm.allReduce(counts->data(), counts->data(), 2,
                                           DType::F32, ReduceOp::Max,
                                           *stream));
  PARTITION_RETURN_IF_ERROR(
      device.copyToHost(wanted, counts->data(), sizeof(wanted), *stream));
  PARTITION_RETURN_IF_ERROR(stream->synchronize());
  int k = int(wanted[0]), j = int(wanted[1]);
  // Three rounds, the median: one round moves a lot on a shared machine.
  std::vector<double> rounds;
  for (int round = 0; round < 3; ++round) {
    PARTITION_ASSIGN_OR_RETURN(double computeAlone,
                               seconds([&] { return gemms(k); }));
    PARTITION_ASSIGN_OR_RETURN(double commAlone,
                               seconds([&] { return allReduces(j); }));
    Status laneStatus;
    PARTITION_ASSIGN_OR_RETURN(double together, seconds([&]() -> Status {
                                 std::thread other(
                                     [&] { laneStatus = allReduces(j); });
                                 Status s = gemms(k);
                                 other.join();
                                 PARTITION_RETURN_IF_ERROR(laneStatus);
                                 return s;
                               }));
    double hidden = computeAlone + commAlone - together;
    rounds.push_back(std::clamp(
        hidden / std::max(1e-9, std::min(computeAlone, commAlone)), 0.0, 1.0));
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[1];
}

Cluster partition::runtime::clusterFromMeasurements(
    const std::string &name, const std::string &deviceName, int64_t ranks,
    double memoryBytesPerDevice, const std::vector<Measurement> &gemm,
    double elementwiseBandwidth, const std::vector<Measurement> &allReduce,
    double overlap) {
  Cluster c;
  c.name = name;
  c.nodes = 1;
  c.devicesPerNode = std::max<int64_t>(1, ranks);
  c.deviceName = deviceName;
  double peak = 0;
  for (const Measurement &m : gemm)
    peak = std::max(peak, m.size / m.seconds);
  c.peakFlops["f32"] = peak;
  for (const Measurement &m : gemm)
    c.gemm.push_back({m.size, std::max(1e-6, (m.size / m.seconds) / peak)});
  c.memoryBytes = memoryBytesPerDevice;
  c.memoryBandwidth = elementwiseBandwidth;
  c.elementwise = 1;
  c.collective = 1;
  c.overlap = overlap;
  Link link{elementwiseBandwidth, 1e-7};
  if (!allReduce.empty() && ranks > 1) {
    double factor = 2.0 * double(ranks - 1) / double(ranks);
    // Each point bounds both: no call is faster than the latency, and
    // none moves bytes faster than the bandwidth.
    link.latency = allReduce.front().seconds;
    link.bandwidth = 0;
    for (const Measurement &m : allReduce) {
      link.latency = std::min(link.latency, m.seconds);
      link.bandwidth = std::max(link.bandwidth, m.size * factor / m.seconds);
    }
  }
  c.intraNode = c.interNode = link;
  return c;
}
