//===- ClusterTest.cpp - cluster descriptions: presets and files ----------===//
//
// The presets' figures, the file format's round trip, each malformed field
// named in its error, and the GEMM efficiency curve between its points.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Calibrate.h"
#include "partition/runtime/Cluster.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace partition::runtime;

namespace {

TEST(Cluster, PresetsHaveTheDataSheetFigures) {
  StatusOr<Cluster> a100 = Cluster::load("dgx-a100");
  ASSERT_TRUE(a100.isOk()) << a100.status().toString();
  EXPECT_EQ(a100->devicesPerNode, 8);
  EXPECT_EQ(a100->peakFlops.at("bf16"), 312e12);
  EXPECT_EQ(a100->memoryBytes, 80.0 * (1ull << 30));
  EXPECT_EQ(a100->intraNode.bandwidth, 300e9); // NVLink3, one direction
  EXPECT_EQ(a100->interNode.bandwidth, 25e9);  // HDR 200 Gb/s
  StatusOr<Cluster> h100 = Cluster::load("dgx-h100");
  ASSERT_TRUE(h100.isOk());
  EXPECT_EQ(h100->peakFlops.at("bf16"), 989.4e12);
  EXPECT_EQ(h100->memoryBandwidth, 3.35e12);
  EXPECT_EQ(h100->interNode.bandwidth, 50e9); // NDR 400 Gb/s
  StatusOr<Cluster> h200 = Cluster::load("h200");
  ASSERT_TRUE(h200.isOk());
  EXPECT_GT(h200->memoryBytes, 140e9);
  EXPECT_EQ(h200->memoryBandwidth, 4.8e12);
  EXPECT_EQ(Cluster::presetNames().size(), 3u);
}

TEST(Cluster, FilesRoundTrip) {
  for (const std::string &name : Cluster::presetNames()) {
    Cluster preset = *Cluster::load(name);
    StatusOr<Cluster> read = Cluster::parse(preset.toJson(), name + ".json");
    ASSERT_TRUE(read.isOk()) << read.status().toString();
    EXPECT_EQ(read->name, preset.name);
    EXPECT_EQ(read->nodes, preset.nodes);
    EXPECT_EQ(read->devicesPerNode, preset.devicesPerNode);
    EXPECT_EQ(read->deviceName, preset.deviceName);
    EXPECT_EQ(read->peakFlops, preset.peakFlops);
    EXPECT_EQ(read->memoryBytes, preset.memoryBytes);
    EXPECT_EQ(read->memoryBandwidth, preset.memoryBandwidth);
    EXPECT_EQ(read->intraNode.bandwidth, preset.intraNode.bandwidth);
    EXPECT_EQ(read->interNode.latency, preset.interNode.latency);
    EXPECT_EQ(read->gemm, preset.gemm);
    EXPECT_EQ(read->elementwise, preset.elementwise);
    EXPECT_EQ(read->collective, preset.collective);
    EXPECT_EQ(read->overlap, preset.overlap);
    EXPECT_EQ(read->fusion, preset.fusion);
    EXPECT_TRUE(preset.fusion) << name;
  }
}

/// The A100 preset's file with `from` replaced by `to` (once).
std::string edited(const std::string &from, const std::string &to) {
  std::string json = Cluster::load("dgx-a100")->toJson();
  size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? json : json.replace(at, from.size(), to);
}

TEST(Cluster, NamesTheFieldOfEachMistake) {
  struct Case {
    std::string from, to, message;
  };
  std::vector<Case> cases = {
      {"partition-cluster/1", "partition-cluster/9",
       "\"format\" is \"partition-cluster/9\""},
      {"\"nodes\": 384", "\"nodes\": 0", "\"nodes\" must be an integer"},
      {"\"devices_per_node\": 8", "\"devices_per_node\": 2.5",
       "\"devices_per_node\" must be an integer"},
      {"\"bf16\": 312000000000000", "\"bf16\": -1",
       "\"device.peak_flops.bf16\" must be positive, got -1"},
      {"\"memory_bytes\"", "\"memory\"", "\"device.memory_bytes\" is missing"},
      {"\"inter_node\": {\"bandwidth\": 25000000000",
       "\"inter_node\": {\"bandwidth\": \"fast\"",
       "\"inter_node.bandwidth\" must be a number"},
      {"\"elementwise\": 0.8", "\"elementwise\": 1.5",
       "\"efficiency.elementwise\" must be in (0, 1], got 1.5"},
      {"[10000000000, 0.55]", "[10, 0.55]",
       "\"efficiency.gemm[2]\" must have more FLOPs than the pair before it"},
      {"\"intra_node\"", "\"intra\"", "\"intra_node\" is missing"},
      {"\"overlap\": 1", "\"overlap\": -0.5",
       "\"efficiency.overlap\" must be a number in [0, 1]"},
      {"\"fusion\": true", "\"fusion\": 1",
       "\"efficiency.fusion\" must be true or false"},
  };
  for (const Case &c : cases) {
    StatusOr<Cluster> read = Cluster::parse(edited(c.from, c.to), "c.json");
    ASSERT_FALSE(read.isOk()) << c.to;
    EXPECT_NE(read.status().message().find("c.json: " + c.message),
              std::string::npos)
        << read.status().message();
  }
  StatusOr<Cluster> notJson = Cluster::parse("{\"format\": ", "c.json");
  ASSERT_FALSE(notJson.isOk());
  EXPECT_NE(notJson.status().message().find("c.json: not valid JSON"),
            std::string::npos);
  StatusOr<Cluster> unknown = Cluster::load("dgx-b200");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.status().message().find(
                "\"dgx-b200\" is neither a cluster preset"),
            std::string::npos);
}

TEST(Cluster, GemmEfficiencyIsInterpolatedInLogFlops) {
  Cluster c;
  c.gemm = {{1e9, 0.2}, {1e11, 0.6}};
  EXPECT_DOUBLE_EQ(c.gemmEfficiency(1e6), 0.2);  // flat below
  EXPECT_DOUBLE_EQ(c.gemmEfficiency(1e13), 0.6); // flat above
  EXPECT_NEAR(c.gemmEfficiency(1e10), 0.4, 1e-12); // halfway in log
  EXPECT_NEAR(c.gemmEfficiency(std::pow(10, 9.5)), 0.3, 1e-12);
}

TEST(Calibrate, ClusterFromMeasurements) {
  // GEMMs of 2e6 and 2e9 FLOPs at 1e9 and 4e9 FLOP/s; all-reduces over 4
  // ranks of 4 bytes in 1e-4 s and 4e6 bytes in 1e-2 s.
  std::vector<Measurement> gemm = {{2e6, 2e-3}, {2e9, 0.5}};
  std::vector<Measurement> allReduce = {{4, 1e-4}, {4e6, 1e-2}};
  Cluster c = clusterFromMeasurements("local-cpu", "cpu", 4, 8e9, gemm, 5e9,
                                      allReduce);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.devicesPerNode, 4);
  EXPECT_DOUBLE_EQ(c.peakFlops.at("f32"), 4e9);
  ASSERT_EQ(c.gemm.size(), 2u);
  EXPECT_DOUBLE_EQ(c.gemm[0].first, 2e6);
  EXPECT_DOUBLE_EQ(c.gemm[0].second, 0.25);
  EXPECT_DOUBLE_EQ(c.gemm[1].second, 1.0);
  EXPECT_DOUBLE_EQ(c.memoryBandwidth, 5e9);
  EXPECT_DOUBLE_EQ(c.memoryBytes, 8e9);
  EXPECT_DOUBLE_EQ(c.intraNode.latency, 1e-4);
  // Bus bandwidth: 4e6 bytes x 2 (4 - 1) / 4 in 1e-2 s.
  EXPECT_DOUBLE_EQ(c.intraNode.bandwidth, 4e6 * 1.5 / 1e-2);
  EXPECT_DOUBLE_EQ(c.interNode.bandwidth, c.intraNode.bandwidth);
  // What calibration writes, the reader takes.
  StatusOr<Cluster> read = Cluster::parse(c.toJson(), "local-cpu.json");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->gemm, c.gemm);
  EXPECT_EQ(read->intraNode.latency, c.intraNode.latency);
  // One rank: no link was measured.
  Cluster alone =
      clusterFromMeasurements("local-cpu", "cpu", 1, 8e9, gemm, 5e9, {});
  EXPECT_TRUE(Cluster::parse(alone.toJson(), "alone.json").isOk());
}

} // namespace
