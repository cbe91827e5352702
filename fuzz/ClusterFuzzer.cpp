//===- ClusterFuzzer.cpp - fuzz cluster file parsing ----------------------===//
//
// Input: the text of a cluster file (partition-cluster/1). An accepted
// cluster must hold every figure finite and within the ranges the reader
// documents (the cost model divides by them), name f32's peak, print its
// names without control characters, and write back (toJson) to text that
// parses again and writes the same text.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Cluster.h"

#include <cmath>
#include <string>

using namespace partition::runtime;

namespace {

bool within(double v, double least, double most) {
  return std::isfinite(v) && v >= least && v <= most;
}

bool printable(const std::string &text) {
  for (unsigned char c : printableName(text))
    if (c < 0x20 || c == 0x7f)
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  StatusOr<Cluster> cluster = Cluster::parse(json, "fuzz/cluster.json");
  FUZZ_CHECK(cluster.isOk() || !cluster.status().message().empty(),
             "error without a message");
  if (!cluster.isOk()) {
    FUZZ_CHECK(printable(cluster.status().message()) &&
                   cluster.status().message().find('\n') == std::string::npos,
               "an error with control characters or more than one line");
    return 0;
  }
  const Cluster &c = *cluster;
  FUZZ_CHECK(c.nodes >= 1 && c.nodes <= Cluster::kMaxNodes, "nodes");
  FUZZ_CHECK(c.devicesPerNode >= 1 &&
                 c.devicesPerNode <= Cluster::kMaxDevicesPerNode,
             "devices per node");
  FUZZ_CHECK(c.devices() <= Cluster::kMaxDevices, "devices");
  FUZZ_CHECK(!c.peakFlops.empty() && c.peakFor("f32") > 0, "no f32 peak");
  for (const auto &[dtype, flops] : c.peakFlops)
    FUZZ_CHECK(within(flops, 1e3, 1e20) && printable(dtype), "a peak");
  FUZZ_CHECK(within(c.memoryBytes, 1e3, 1e16), "memory bytes");
  FUZZ_CHECK(within(c.memoryBandwidth, 1e3, 1e16), "memory bandwidth");
  for (const Link &l : {c.intraNode, c.interNode})
    FUZZ_CHECK(within(l.bandwidth, 1e3, 1e16) && within(l.latency, 1e-10, 10),
               "a link");
  FUZZ_CHECK(!c.gemm.empty(), "no GEMM efficiency");
  for (const auto &[flops, efficiency] : c.gemm)
    FUZZ_CHECK(within(flops, 1, 1e20) && within(efficiency, 1e-6, 1),
               "a GEMM efficiency point");
  for (double flops : {0.0, 1.0, 1e9, 1e30})
    FUZZ_CHECK(within(c.gemmEfficiency(flops), 1e-6, 1),
               "an interpolated GEMM efficiency");
  FUZZ_CHECK(within(c.elementwise, 1e-6, 1) && within(c.collective, 1e-6, 1) &&
                 within(c.overlap, 0, 1),
             "an efficiency");
  FUZZ_CHECK(printable(c.name) && printable(c.deviceName),
             "a name printed with control characters");

  std::string written = c.toJson();
  StatusOr<Cluster> again = Cluster::parse(written, "rewritten cluster.json");
  FUZZ_CHECK(again.isOk(), "a written cluster does not parse");
  FUZZ_CHECK(again->toJson() == written,
             "the cluster changed in a write and read");
  return 0;
}
