//===- Cluster.h - what a cluster of devices can do, for the cost model -*- C++ -*-===//
//
// A cluster description: nodes of devices, each device's peak FLOP/s per
// dtype, memory and memory bandwidth, the links within and between nodes,
// and the efficiency factors that turn peaks into what runs
// (docs/design/2026-12-03-cost-model.md). Read from a JSON file
// (format "partition-cluster/1") or taken from a preset; written by
// calibration. Plain C++: the compiler's cost model and the runtime's
// calibration share it.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CLUSTER_H
#define PARTITION_RUNTIME_CLUSTER_H

#include "partition/runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace partition::runtime {

/// One kind of link, as each device sees it: bytes per second in one
/// direction, and the latency of one message in seconds.
struct Link {
  double bandwidth = 0;
  double latency = 0;
};

/// How a kernel's FLOPs run: memory-bound ops at the peak (their bytes
/// decide), GEMMs at the GEMM efficiency of their size, attention on a fused
/// kernel at that kernel's efficiency (Cluster::attention).
enum class KernelKind { Elementwise, Gemm, Attention };

struct Cluster {
  static constexpr const char *kFormat = "partition-cluster/1";

  std::string name;
  int64_t nodes = 1;
  int64_t devicesPerNode = 1;
  std::string deviceName;
  /// Peak FLOP/s of one device by dtype name ("f32", "tf32", "bf16", "f16").
  std::map<std::string, double> peakFlops;
  double memoryBytes = 0;     ///< per device
  double memoryBandwidth = 0; ///< bytes/s per device
  Link intraNode, interNode;
  /// GEMM efficiency (fraction of peak) by the FLOPs of one GEMM: points in
  /// increasing FLOPs, interpolated in log FLOPs, held flat beyond the ends.
  std::vector<std::pair<double, double>> gemm;
  double elementwise = 1; ///< fraction of memory bandwidth
  double collective = 1;  ///< fraction of link bandwidth (bus bandwidth)
  /// The fraction of communication that runs hidden behind compute when the
  /// two overlap in time (1: free, as on GPUs with NCCL; less where both
  /// take the same cores, as Gloo on a CPU). Optional in files (default 1).
  double overlap = 1;
  /// Whether memory-bound ops fuse as a tuned GPU stack fuses them (XLA,
  /// Megatron's fused kernels): a value one such op hands to a single other
  /// one never goes through memory. Presets: true; calibration: false (the
  /// runtime runs op by op). Optional in files (default false).
  bool fusion = false;
  /// The fraction of peak a fused attention kernel reaches (FlashAttention,
  /// cuDNN's SDPA: scores stay on chip, a causal mask's upper half is
  /// skipped), where the device runs attention on one; 0 (the default, and
  /// what calibration writes: the CPU backend has none) where attention
  /// runs as its decomposition, each block of scores through memory.
  /// Optional in files.
  double attention = 0;

  /// Bounds a cluster file is held to (`parse`): beyond them a figure is a
  /// typing mistake or an attack, and the cost model's sums would leave
  /// the range of doubles.
  static constexpr int64_t kMaxNodes = 1 << 20;
  static constexpr int64_t kMaxDevicesPerNode = 4096;
  /// The most devices a mesh holds, and so a cluster.
  static constexpr int64_t kMaxDevices = 1 << 24;

  int64_t devices() const { return nodes * devicesPerNode; }
  /// The peak FLOP/s for ops of `dtype`: its own, else f32's (which every
  /// cluster file names: calibration measures only f32), never another
  /// dtype's; 0 when neither is there (a cluster not read by `parse`).
  double peakFor(const std::string &dtype) const;
  /// The fraction of peak a GEMM of `flops` reaches.
  double gemmEfficiency(double flops) const;
  /// Seconds one device takes to move `bytes` over `link` in `steps`
  /// messages (each paying the latency), at the collective efficiency:
  /// every collective, transfer and ring step the cost model counts.
  double linkSeconds(const Link &link, double bytes, double steps) const;
  /// Seconds of one kernel: `bytes` of memory traffic at the elementwise
  /// efficiency or `flops` at `peak` (times the GEMM efficiency for a GEMM,
  /// the attention efficiency for fused attention), whichever takes longer.
  double kernelSeconds(double flops, double bytes, double peak,
                       KernelKind kind) const;
  /// The description as a cluster file.
  std::string toJson() const;

  /// Reads a cluster file's text; `source` names it in errors, which say
  /// which field is missing, of the wrong kind, given twice or out of its
  /// plausible range (each field's range is in Cluster.cpp).
  static StatusOr<Cluster> parse(const std::string &json,
                                 const std::string &source);
  /// A preset by name, or else the cluster file at `nameOrPath`; presets go
  /// through `parse` too.
  static StatusOr<Cluster> load(const std::string &nameOrPath);
  /// The presets: "dgx-a100", "dgx-h100", "h200" (`local-cpu` is the file
  /// `partition-run --calibrate` writes, not a preset).
  static std::vector<std::string> presetNames();
};

/// The ring algorithms the cost model counts collectives by.
enum class Ring { AllReduce, AllGather, ReduceScatter };
/// What one device of `n` moves and how many latency-bound steps it takes
/// for a ring collective of `bytes` (an all-reduce's or a reduce-scatter's
/// operand, an all-gather's result): an all-reduce 2(n-1)/n of the bytes
/// in 2(n-1) steps, the others (n-1)/n in n-1 steps.
struct RingCost {
  double movedBytes = 0, steps = 0;
};
RingCost ringCost(Ring kind, double bytes, int64_t n);

/// `text` fit for a terminal or a log line: control characters and DEL as
/// \xNN, the rest as is. Names from cluster files go through it wherever
/// they are printed.
std::string printableName(const std::string &text);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_CLUSTER_H
