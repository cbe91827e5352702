//===- Calibrate.h - measuring this machine for the cost model --*- C++ -*-===//
//
// `partition-run --calibrate` measures what the cost model needs to know of
// the machine it runs on and writes it as a cluster file (Cluster.h,
// docs/design/2026-12-03-cost-model.md): GEMM throughput by size (the peak is
// the best measured, the efficiency curve each size's fraction of it),
// elementwise memory bandwidth, and all-reduce latency and bus bandwidth
// over the ranks of one node. Each measurement repeats its operation until
// it has run for a set time and takes the mean per call.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CALIBRATE_H
#define PARTITION_RUNTIME_CALIBRATE_H

#include "partition/runtime/Cluster.h"
#include "partition/runtime/Communicator.h"
#include "partition/runtime/Device.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace partition::runtime {

struct CalibrationOptions {
  /// How long each point is measured for, in seconds.
  double secondsPerPoint = 0.2;
  /// The square GEMM sizes n (2 n^3 FLOPs each).
  std::vector<int64_t> gemmSizes = {32, 64, 128, 256, 512, 1024};
  /// Elements of the f32 vectors the elementwise add streams.
  int64_t elementwiseElements = int64_t(1) << 24;
  /// The all-reduce sizes in bytes; the smallest gives the latency.
  std::vector<int64_t> collectiveBytes = {4, 1 << 12, 1 << 16, 1 << 20,
                                          1 << 24};
};

/// One measured point.
struct Measurement {
  double size;   ///< FLOPs of the GEMM, or bytes of the collective
  double seconds; ///< per call
};

/// GEMM times on `device`, one per `options.gemmSizes`.
StatusOr<std::vector<Measurement>>
measureGemm(Device &device, const CalibrationOptions &options);
/// Bytes per second an elementwise add streams (two reads, one write).
StatusOr<double> measureElementwise(Device &device,
                                    const CalibrationOptions &options);
/// All-reduce times over `comm`, one per `options.collectiveBytes`; every
/// rank of `comm` calls it at once and gets the same counts of calls. With
/// `busy`, each rank keeps GEMMs running beside them (n = 256, on a thread
/// of their own), as a training step's compute runs beside its
/// communication lane.
StatusOr<std::vector<Measurement>>
measureAllReduce(Device &device, Communicator &comm,
                 const CalibrationOptions &options, bool busy = false);

/// The fraction of communication that stays hidden when it runs beside
/// compute: K GEMMs (n = 256) alone, J all-reduces (1 MiB) alone, then both
/// at once (the all-reduces on a thread of their own, as the runtime's
/// communication lane), with K and J chosen so that each takes about
/// `secondsPerPoint` alone: (alone + alone - together) / the shorter alone,
/// within [0, 1], the median of three rounds. Every rank of `comm` calls it
/// at once.
StatusOr<double> measureOverlap(Device &device, Communicator &comm,
                                const CalibrationOptions &options);

/// The cluster file of one node of `ranks` devices from the measurements:
/// peak f32 FLOP/s the best GEMM rate, the GEMM curve each size's fraction
/// of it; memory bandwidth the elementwise rate (efficiency 1); the link's
/// latency the fastest all-reduce's time and its bandwidth the best bus
/// bandwidth (bytes x 2(n-1)/n / time; efficiency 1), within and between
/// nodes alike. With one rank there is no link: both are the memory's.
Cluster clusterFromMeasurements(const std::string &name,
                                const std::string &deviceName, int64_t ranks,
                                double memoryBytesPerDevice,
                                const std::vector<Measurement> &gemm,
                                double elementwiseBandwidth,
                                const std::vector<Measurement> &allReduce,
                                double overlap = 1);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_CALIBRATE_H
