//===- ClusterTest.cpp - cluster descriptions: presets and files ----------===//
//
// The presets' figures, the file format's round trip, each malformed field
// named in its error, and the GEMM efficiency curve between its points.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Cluster.h"
#include "partition/runtime/Calibrate.h"
#include "partition/runtime/Checkpoint.h"

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
    EXPECT_EQ(read->attention, preset.attention);
    EXPECT_TRUE(preset.fusion) << name;
    // A fused attention's efficiency, written and read back.
    preset.attention = 0.4;
    read = Cluster::parse(preset.toJson(), name + ".json");
    ASSERT_TRUE(read.isOk()) << read.status().toString();
    EXPECT_EQ(read->attention, 0.4);
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
      {"\"nodes\": 384", "\"nodes\": 0",
       "\"nodes\" must be an integer in [1, 1048576], got 0"},
      {"\"devices_per_node\": 8", "\"devices_per_node\": 2.5",
       "\"devices_per_node\" must be an integer"},
      {"\"bf16\": 312000000000000", "\"bf16\": -1",
       "\"device.peak_flops.bf16\" must be in [1000, 1e+20] FLOP/s, got -1"},
      {"\"memory_bytes\"", "\"memory\"", "\"device.memory_bytes\" is missing"},
      {"\"inter_node\": {\"bandwidth\": 25000000000",
       "\"inter_node\": {\"bandwidth\": \"fast\"",
       "\"inter_node.bandwidth\" must be a number"},
      {"\"elementwise\": 0.8", "\"elementwise\": 1.5",
       "\"efficiency.elementwise\" must be in [1e-06, 1], got 1.5"},
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

TEST(Cluster, HoldsEachFieldToAPlausibleRange) {
  // Finite figures at the ends of a double's range made the planner's step
  // times infinite; each is refused naming its field and range.
  struct Case {
    std::string from, to, message;
  };
  std::vector<Case> cases = {
      {"\"latency\": 5e-06", "\"latency\": 1.7e308",
       "\"intra_node.latency\" must be in [1e-10, 10] s, got 1.7e+308"},
      {"\"latency\": 5e-06", "\"latency\": 0",
       "\"intra_node.latency\" must be in [1e-10, 10] s, got 0"},
      {"\"bf16\": 312000000000000", "\"bf16\": 1e-300",
       "\"device.peak_flops.bf16\" must be in [1000, 1e+20] FLOP/s, got "
       "1e-300"},
      {"\"elementwise\": 0.8", "\"elementwise\": 1e-300",
       "\"efficiency.elementwise\" must be in [1e-06, 1], got 1e-300"},
      {"\"collective\": 0.8", "\"collective\": 1e-7",
       "\"efficiency.collective\" must be in [1e-06, 1], got 1e-07"},
      {"[10000000000, 0.55]", "[10000000000, 1e-300]",
       "\"efficiency.gemm[2]\" must be in [1e-06, 1], got 1e-300"},
      {"[100000000, 0.1]", "[1e300, 0.1]",
       "\"efficiency.gemm[0]\" must be in [1, 1e+20] FLOPs, got 1e+300"},
      {"\"memory_bytes\": 85899345920", "\"memory_bytes\": 1e300",
       "\"device.memory_bytes\" must be in [1000, 1e+16] bytes, got 1e+300"},
      {"\"memory_bandwidth\": 2039000000000", "\"memory_bandwidth\": 1e-300",
       "\"device.memory_bandwidth\" must be in [1000, 1e+16] bytes/s, got "
       "1e-300"},
      {"\"bandwidth\": 25000000000", "\"bandwidth\": 1e300",
       "\"inter_node.bandwidth\" must be in [1000, 1e+16] bytes/s, got "
       "1e+300"},
      {"\"devices_per_node\": 8", "\"devices_per_node\": 9223372036854775807",
       "\"devices_per_node\" must be an integer in [1, 4096], got "
       "9223372036854775807"},
      {"\"nodes\": 384,\n  \"devices_per_node\": 8",
       "\"nodes\": 1048576,\n  \"devices_per_node\": 32",
       "\"nodes\" x \"devices_per_node\" is 33554432 devices, more than a "
       "mesh holds (16777216)"},
      {"\"name\": \"dgx-a100\"", "\"name\": \"" + std::string(300, 'x') + "\"",
       "\"name\" must be a non-empty string of at most 256 bytes"},
      {"\"fusion\": true", "\"fusion\": true, \"attention\": 1.5",
       "\"efficiency.attention\" must be a number in [0, 1] (0: no fused "
       "attention)"},
  };
  for (const Case &c : cases) {
    StatusOr<Cluster> read = Cluster::parse(edited(c.from, c.to), "c.json");
    ASSERT_FALSE(read.isOk()) << c.to;
    EXPECT_NE(read.status().message().find("c.json: " + c.message),
              std::string::npos)
        << read.status().message();
  }
}

TEST(Cluster, RefusesDuplicateKeys) {
  // The first of two "nodes" was taken, silently.
  StatusOr<Cluster> read = Cluster::parse(
      edited("\"nodes\": 384,", "\"nodes\": 384, \"nodes\": 1,"), "c.json");
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find(
                "c.json: not valid JSON: duplicate key \"nodes\" at byte "),
            std::string::npos)
      << read.status().message();
  // Nested objects too, the key escaped as JSON writes it.
  read = Cluster::parse(
      edited(
          "\"f32\": 19500000000000,",
          "\"f\\u001b\": 1e12, \"f\\u001b\": 2e12, \"f32\": 19500000000000,"),
      "c.json");
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find("duplicate key \"f\\u001b\""),
            std::string::npos)
      << read.status().message();
}

TEST(Json, CheckpointManifestsReadAsBeforeAndRefuseDuplicateKeys) {
  // The manifests share the JSON reader: what they write still reads, and
  // a key given twice is refused there too.
  CheckpointManifest m;
  m.steps = 7;
  m.meshes.push_back({"mesh", {"dp"}, {2}, {0, 1}});
  for (int r = 0; r < 2; ++r)
    m.files[checkpointFileName(r)] = {uint64_t(100 + r), uint64_t(r)};
  std::string json = m.toJson();
  StatusOr<CheckpointManifest> read = CheckpointManifest::parse(json, "m.json");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->steps, 7);
  size_t at = json.find("\"steps\"");
  ASSERT_NE(at, std::string::npos);
  json.insert(at, "\"steps\": 9223372036854775807, ");
  read = CheckpointManifest::parse(json, "m.json");
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find("duplicate key \"steps\" at byte"),
            std::string::npos)
      << read.status().message();
}

TEST(Cluster, PeaksNameF32AndNoOtherDTypeStandsIn) {
  // Only int8: its peak was used for bf16 and f32 ops.
  StatusOr<Cluster> read = Cluster::parse(
      edited("{\"bf16\": 312000000000000, \"f16\": 312000000000000, \"f32\": "
             "19500000000000, \"tf32\": 156000000000000}",
             "{\"int8\": 624000000000000}"),
      "c.json");
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find(
                "c.json: \"device.peak_flops\" must name \"f32\""),
            std::string::npos)
      << read.status().message();
  read = Cluster::parse(edited("\"tf32\"", "\"t\\u0007f\""), "c.json");
  ASSERT_FALSE(read.isOk());
  EXPECT_NE(read.status().message().find(
                "\"device.peak_flops.t\\x07f\" is not a dtype name"),
            std::string::npos)
      << read.status().message();
  Cluster c = *Cluster::load("dgx-a100");
  EXPECT_EQ(c.peakFor("bf16"), 312e12);
  EXPECT_EQ(c.peakFor("int8"), 19.5e12); // f32's, never another's
  c.peakFlops = {{"int8", 1e15}};
  EXPECT_EQ(c.peakFor("bf16"), 0);
}

TEST(Cluster, NamesArePrintedWithoutControlCharacters) {
  EXPECT_EQ(printableName("a\x1b[31mb\x07\n\x7f"),
            "a\\x1b[31mb\\x07\\x0a\\x7f");
  EXPECT_EQ(printableName("dgx-a100 \xc3\xa9"), "dgx-a100 \xc3\xa9");
  // A name with control characters reads and round-trips; the errors
  // naming the file print it escaped.
  StatusOr<Cluster> read = Cluster::parse(
      edited("\"name\": \"dgx-a100\"", "\"name\": \"x\\u001b\""), "c.json");
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->name, "x\x1b");
  EXPECT_EQ(Cluster::parse(read->toJson(), "c.json")->name, "x\x1b");
  StatusOr<Cluster> bad = Cluster::parse("[]", "c\x1b.json");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().message().find('\x1b'), std::string::npos);
}

TEST(Cluster, GemmEfficiencyIsInterpolatedInLogFlops) {
  Cluster c;
  c.gemm = {{1e9, 0.2}, {1e11, 0.6}};
  EXPECT_DOUBLE_EQ(c.gemmEfficiency(1e6), 0.2);  // flat below
  EXPECT_DOUBLE_EQ(c.gemmEfficiency(1e13), 0.6); // flat above
  EXPECT_NEAR(c.gemmEfficiency(1e10), 0.4, 1e-12); // halfway in log
  EXPECT_NEAR(c.gemmEfficiency(std::pow(10, 9.5)), 0.3, 1e-12);
}

TEST(Cluster, OneFormulaForLinksKernelsAndRings) {
  Cluster c;
  c.memoryBandwidth = 1e12;
  c.elementwise = 0.5;
  c.collective = 0.8;
  c.gemm = {{1e9, 0.5}};
  Link link{100e9, 1e-5};
  // Latency per message, bytes at the collective efficiency.
  EXPECT_DOUBLE_EQ(c.linkSeconds(link, 8e9, 3), 3e-5 + 8e9 / 80e9);
  // A kernel: the longer of its memory traffic and its FLOPs.
  using K = KernelKind;
  EXPECT_DOUBLE_EQ(c.kernelSeconds(0, 1e9, 1e12, K::Elementwise), 1e9 / 0.5e12);
  EXPECT_DOUBLE_EQ(c.kernelSeconds(1e12, 1, 1e12, K::Gemm), 1e12 / 0.5e12);
  EXPECT_DOUBLE_EQ(c.kernelSeconds(1e12, 1, 1e12, K::Elementwise), 1.0);
  // Fused attention at its own efficiency.
  c.attention = 0.25;
  EXPECT_DOUBLE_EQ(c.kernelSeconds(1e12, 1, 1e12, K::Attention), 4.0);
  // Rings over 4 devices: an all-reduce moves 2 x 3/4 of its operand in 6
  // steps, an all-gather or reduce-scatter 3/4 in 3; one device, nothing.
  RingCost ar = ringCost(Ring::AllReduce, 400, 4);
  EXPECT_DOUBLE_EQ(ar.movedBytes, 600);
  EXPECT_DOUBLE_EQ(ar.steps, 6);
  RingCost ag = ringCost(Ring::AllGather, 400, 4);
  EXPECT_DOUBLE_EQ(ag.movedBytes, 300);
  EXPECT_DOUBLE_EQ(ag.steps, 3);
  RingCost rs = ringCost(Ring::ReduceScatter, 400, 4);
  EXPECT_DOUBLE_EQ(rs.movedBytes, 300);
  EXPECT_DOUBLE_EQ(rs.steps, 3);
  EXPECT_DOUBLE_EQ(ringCost(Ring::AllReduce, 400, 1).steps, 0);
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
