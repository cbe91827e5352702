//===- CheckpointTest.cpp - checkpoint manifest and block assembly --------===//
//
// Block assembly (a block requested under one partitioning, made of the
// blocks another one wrote, with replicated copies, gaps and overlaps), the
// manifest's JSON round trip and its malformed forms, and CheckpointSource
// reading real rank files written under a 2 x 2 tiling into every block of
// other tilings.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Checkpoint.h"
#include "partition/runtime/Files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <unistd.h>

using namespace partition::runtime;
namespace fs = std::filesystem;

namespace {

/// A tensor of `shape` tiled into a grid of `grid` blocks (each listed
/// `copies` times, as replicated ranks would be).
CheckpointTensor tiled(std::vector<int64_t> shape, std::vector<int64_t> grid,
                       int copies = 1) {
  CheckpointTensor t;
  t.name = "w";
  t.role = "parameter";
  t.shape = shape;
  int64_t tiles = 1;
  for (int64_t g : grid)
    tiles *= g;
  int rank = 0;
  for (int c = 0; c < copies; ++c)
    for (int64_t i = 0; i < tiles; ++i) {
      CheckpointBlock b;
      int64_t rest = i;
      b.offsets.resize(shape.size());
      b.shape.resize(shape.size());
      for (size_t d = shape.size(); d-- > 0;) {
        b.shape[d] = shape[d] / grid[d];
        b.offsets[d] = (rest % grid[d]) * b.shape[d];
        rest /= grid[d];
      }
      b.rank = rank;
      b.file = checkpointFileName(rank++);
      t.blocks.push_back(b);
    }
  return t;
}

int64_t elements(const std::vector<BlockPiece> &pieces) {
  int64_t n = 0;
  for (const BlockPiece &p : pieces)
    n += std::accumulate(p.shape.begin(), p.shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
  return n;
}

TEST(CheckpointAssembly, SameBlockIsOnePiece) {
  CheckpointTensor t = tiled({4, 6}, {2, 2});
  auto pieces = assembleBlock(t, {2, 3}, {2, 3});
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  ASSERT_EQ(pieces->size(), 1u);
  EXPECT_EQ((*pieces)[0].block, 3u);
  EXPECT_EQ((*pieces)[0].blockOffsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ((*pieces)[0].shape, (std::vector<int64_t>{2, 3}));
}

TEST(CheckpointAssembly, WholeTensorFromFourTiles) {
  CheckpointTensor t = tiled({4, 6}, {2, 2});
  auto pieces = assembleBlock(t, {0, 0}, {4, 6});
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  EXPECT_EQ(pieces->size(), 4u);
  EXPECT_EQ(elements(*pieces), 24);
  for (const BlockPiece &p : *pieces)
    EXPECT_EQ(p.requestOffsets, t.blocks[p.block].offsets);
}

TEST(CheckpointAssembly, CrossingBlockTakesPartsOfTiles) {
  // Columns 2..5 of rows 1..2 of a 4 x 6 tensor tiled 2 x 2 (blocks 2 x 3).
  CheckpointTensor t = tiled({4, 6}, {2, 2});
  auto pieces = assembleBlock(t, {1, 2}, {2, 4});
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  EXPECT_EQ(pieces->size(), 4u);
  EXPECT_EQ(elements(*pieces), 8);
  const BlockPiece &first = (*pieces)[0]; // block 0: rows 1, column 2
  EXPECT_EQ(first.block, 0u);
  EXPECT_EQ(first.blockOffsets, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(first.requestOffsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(first.shape, (std::vector<int64_t>{1, 1}));
}

TEST(CheckpointAssembly, ReplicatedCopiesAreUsedOnce) {
  CheckpointTensor t = tiled({4, 6}, {1, 2}, /*copies=*/2);
  auto pieces = assembleBlock(t, {0, 0}, {4, 6});
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  EXPECT_EQ(pieces->size(), 2u);
  EXPECT_EQ(elements(*pieces), 24);
}

TEST(CheckpointAssembly, Scalar) {
  CheckpointTensor t = tiled({}, {}, /*copies=*/4);
  auto pieces = assembleBlock(t, {}, {});
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  EXPECT_EQ(pieces->size(), 1u);
}

TEST(CheckpointAssembly, GapIsAnError) {
  CheckpointTensor t = tiled({4, 6}, {2, 2});
  t.blocks.erase(t.blocks.begin() + 1);
  auto pieces = assembleBlock(t, {0, 0}, {4, 6});
  ASSERT_FALSE(pieces.isOk());
  EXPECT_NE(pieces.status().message().find("cover 18 of the 24 elements"),
            std::string::npos)
      << pieces.status().toString();
  // A request inside the remaining blocks still works.
  EXPECT_TRUE(assembleBlock(t, {0, 0}, {2, 3}).isOk());
}

TEST(CheckpointAssembly, OverlapIsAnError) {
  CheckpointTensor t = tiled({4, 6}, {2, 1});
  CheckpointBlock odd = t.blocks[0];
  odd.offsets = {1, 0};
  odd.file = "rank-9.safetensors";
  t.blocks.push_back(odd);
  auto pieces = assembleBlock(t, {0, 0}, {4, 6});
  ASSERT_FALSE(pieces.isOk());
  EXPECT_NE(pieces.status().message().find("overlaps"), std::string::npos)
      << pieces.status().toString();
}

TEST(CheckpointAssembly, RequestOutsideTheTensor) {
  CheckpointTensor t = tiled({4, 6}, {2, 2});
  EXPECT_FALSE(assembleBlock(t, {3, 0}, {2, 6}).isOk());
  EXPECT_FALSE(assembleBlock(t, {0}, {4}).isOk());
}

TEST(CheckpointManifest, JsonRoundTrip) {
  CheckpointManifest m;
  m.steps = 7;
  m.meshes.push_back({"mesh", {"dp", "tp"}, {2, 2}, {0, 1, 2, 3}});
  m.tensors.push_back(tiled({4, 6}, {2, 2}));
  CheckpointTensor step = tiled({}, {}, 4);
  step.name = "optimizer.step";
  step.role = "state";
  step.dtype = DType::I32;
  m.tensors.push_back(step);
  for (int r = 0; r < 4; ++r)
    m.files[checkpointFileName(r)] = {uint64_t(100 + r),
                                      0xfedcba9876543210ull + r};
  auto parsed = CheckpointManifest::parse(m.toJson(), "m.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->steps, 7);
  ASSERT_EQ(parsed->meshes.size(), 1u);
  EXPECT_EQ(parsed->meshes[0].axisNames,
            (std::vector<std::string>{"dp", "tp"}));
  ASSERT_EQ(parsed->tensors.size(), 2u);
  EXPECT_EQ(parsed->tensors[0].name, "optimizer.step"); // sorted
  EXPECT_EQ(parsed->tensors[0].dtype, DType::I32);
  const CheckpointTensor *w = parsed->find("w");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->blocks.size(), 4u);
  EXPECT_EQ(w->blocks[3].offsets, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w->blocks[3].file, "rank-3.safetensors");
  ASSERT_EQ(parsed->files.size(), 4u);
  EXPECT_EQ(parsed->files["rank-3.safetensors"].bytes, 103u);
  EXPECT_EQ(parsed->files["rank-3.safetensors"].checksum,
            0xfedcba9876543213ull);
  // Version 2 needs the size and checksum of every file a block names.
  m.files.erase("rank-2.safetensors");
  auto unlisted = CheckpointManifest::parse(m.toJson(), "m.json");
  ASSERT_FALSE(unlisted.isOk());
  EXPECT_NE(unlisted.status().message().find(
                "file \"rank-2.safetensors\" has no size and checksum"),
            std::string::npos)
      << unlisted.status().toString();
}

TEST(CheckpointManifest, DataPositionRoundTrip) {
  CheckpointManifest m;
  m.steps = 5;
  auto parsed = CheckpointManifest::parse(m.toJson(), "m.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(m.toJson().find("\"data\""), std::string::npos);
  EXPECT_TRUE(parsed->dataSource.empty());
  m.dataSource = "batches \"a\".safetensors";
  m.dataPosition = 12;
  parsed = CheckpointManifest::parse(m.toJson(), "m.json");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->dataSource, m.dataSource);
  EXPECT_EQ(parsed->dataPosition, 12);
  std::string bad = "{\"format\": \"partition-checkpoint\", \"version\": 2, "
                    "\"steps\": 3, \"data\": {\"source\": \"d\", "
                    "\"position\": -1}, \"meshes\": [], \"tensors\": {}, "
                    "\"files\": {}}";
  auto negative = CheckpointManifest::parse(bad, "m.json");
  ASSERT_FALSE(negative.isOk());
  EXPECT_NE(negative.status().message().find(
                "data: \"position\" is -1, not in [0, 9007199254740992]"),
            std::string::npos)
      << negative.status().toString();
}

/// A version 1 manifest has no sizes and checksums, so its rank files
/// cannot be verified (a changed rank file resumed silently): refused, with
/// the way to upgrade it. Written manifests are version 2.
TEST(CheckpointManifest, Version1IsRefused) {
  std::string v1 = "{\"format\": \"partition-checkpoint\", \"version\": 1, "
                   "\"steps\": 3, \"meshes\": [], \"tensors\": {}}";
  auto parsed = CheckpointManifest::parse(v1, "m.json");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().message(),
            "m.json: manifest: version 1 records no size or checksum of the "
            "rank files, so they cannot be verified; if you trust them, "
            "record them with scripts/upgrade-checkpoint.py");
  EXPECT_NE(CheckpointManifest().toJson().find("\"version\": 2"),
            std::string::npos);
}

namespace {

/// A version 2 manifest's text with `steps`, a data position and `meshes`
/// (JSON), one tensor "w" [4] whose block is rank `rank`'s, and `files`.
std::string manifestText(const std::string &steps, const std::string &position,
                         const std::string &meshes, int rank = 0,
                         const std::string &files = "") {
  std::string file = "rank-" + std::to_string(rank) + ".safetensors";
  return "{\"format\": \"partition-checkpoint\", \"version\": 2, \"steps\": " +
         steps + ", \"data\": {\"source\": \"d\", \"position\": " + position +
         "}, \"meshes\": [" + meshes +
         "], \"tensors\": {\"w\": {\"role\": \"parameter\", \"dtype\": "
         "\"F32\", \"shape\": [4], \"blocks\": [{\"file\": \"" +
         file + "\", \"rank\": " + std::to_string(rank) +
         ", \"offsets\": [0], \"shape\": [4]}]}}, \"files\": {" +
         (files.empty() ? "\"" + file +
                              "\": {\"bytes\": 8, \"fnv1a64\": "
                              "\"0123456789abcdef\"}"
                        : files) +
         "}}";
}

const char *kOneRankMesh =
    "{\"name\": \"mesh\", \"axis_names\": [\"dp\"], \"axis_sizes\": [1], "
    "\"ranks\": [0]}";

std::string parseError(const std::string &json) {
  auto m = CheckpointManifest::parse(json, "m.json");
  return m.isOk() ? std::string("ok") : m.status().message();
}

} // namespace

/// Steps and data positions are bounded (2^63 - 1 steps made a resumed run
/// count "step -9223372036854775808" and write a checkpoint its own reader
/// rejected), and a resumed run's steps must keep them within the bound.
TEST(CheckpointManifest, CountsAreBounded) {
  EXPECT_EQ(parseError(manifestText("9007199254740992", "9007199254740992",
                                    kOneRankMesh)),
            "ok");
  EXPECT_EQ(parseError(manifestText("9223372036854775807", "0", kOneRankMesh)),
            "m.json: manifest: \"steps\" is 9223372036854775807, not in [0, "
            "9007199254740992]");
  EXPECT_EQ(parseError(manifestText("0", "9223372036854775807", kOneRankMesh)),
            "m.json: data: \"position\" is 9223372036854775807, not in [0, "
            "9007199254740992]");
  EXPECT_EQ(parseError(manifestText("-1", "0", kOneRankMesh)),
            "m.json: manifest: \"steps\" is -1, not in [0, "
            "9007199254740992]");
  CheckpointManifest m;
  m.steps = kMaxCheckpointSteps - 2;
  EXPECT_TRUE(checkResumable(m, 2).isOk());
  Status s = checkResumable(m, 3);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "3 more steps after the checkpoint's "
                         "9007199254740990 steps (data position 0) would pass "
                         "the most a checkpoint records (9007199254740992)");
  m.steps = 0;
  m.dataPosition = kMaxCheckpointSteps;
  EXPECT_FALSE(checkResumable(m, 1).isOk());
  // Every count a parsed manifest holds resumes for at least one step, or is
  // refused: never an overflow.
  m.steps = m.dataPosition = kMaxCheckpointSteps;
  EXPECT_FALSE(checkResumable(m, 1 << 20).isOk());
  // A tensor of more elements than any run holds.
  std::string huge = manifestText("1", "1", kOneRankMesh);
  huge.replace(huge.find("\"shape\": [4], \"blocks\""), 12,
               "\"shape\": [4294967296, 4294967296]");
  EXPECT_NE(parseError(huge).find("more than 1125899906842624 elements"),
            std::string::npos)
      << parseError(huge);
}

/// The meshes a manifest records are checked: named axes, sizes, their
/// product against the ranks, and the ranks against the blocks and files.
TEST(CheckpointManifest, MeshesAreValidated) {
  auto mesh = [](const std::string &names, const std::string &sizes,
                 const std::string &ranks) {
    return "{\"name\": \"mesh\", \"axis_names\": [" + names +
           "], \"axis_sizes\": [" + sizes + "], \"ranks\": [" + ranks + "]}";
  };
  auto error = [&](const std::string &meshes, int rank = 0,
                   const std::string &files = "") {
    return parseError(manifestText("1", "1", meshes, rank, files));
  };
  EXPECT_EQ(error(mesh("\"dp\", \"tp\"", "2, 2", "0, 1, 2, 3"), 3), "ok");
  EXPECT_EQ(error(mesh("\"dp\", \"tp\"", "2, 2", "0, 1, 2")),
            "m.json: mesh 0: axis sizes [2, 2] make 4 devices but 3 ranks "
            "are listed");
  EXPECT_EQ(error(mesh("\"dp\"", "2, 2", "0, 1, 2, 3")),
            "m.json: mesh 0: 1 axis names but 2 sizes");
  EXPECT_EQ(error(mesh("\"dp\", \"dp\"", "2, 2", "0, 1, 2, 3")),
            "m.json: mesh 0: axis name \"dp\" is empty or repeated");
  EXPECT_EQ(error(mesh("\"\"", "1", "0")),
            "m.json: mesh 0: axis name \"\" is empty or repeated");
  EXPECT_EQ(error(mesh("\"dp\"", "0", "")),
            "m.json: mesh 0: axis size 0 is not in [1, 1048576]");
  EXPECT_EQ(error(mesh("\"dp\"", "9223372036854775807", "0")),
            "m.json: mesh 0: axis size 9223372036854775807 is not in [1, "
            "1048576]");
  EXPECT_EQ(error(mesh("\"a\", \"b\"", "1048576, 1048576", "0")),
            "m.json: mesh 0: axis sizes [1048576, 1048576] make more than "
            "1048576 devices");
  EXPECT_EQ(error(mesh("\"dp\"", "2", "0, 0")),
            "m.json: mesh 0: rank 0 is out of range or repeated");
  EXPECT_EQ(error(mesh("\"dp\"", "2", "0, -1")),
            "m.json: mesh 0: rank -1 is out of range or repeated");
  EXPECT_EQ(error(std::string(kOneRankMesh) + ", " + kOneRankMesh),
            "m.json: mesh \"mesh\": is listed twice");
  // A block of a rank no mesh has, and a file of a rank no mesh has.
  EXPECT_EQ(error(kOneRankMesh, 5),
            "m.json: tensor \"w\": a block of rank 5, which no mesh has");
  EXPECT_EQ(error(kOneRankMesh, 0,
                  "\"rank-0.safetensors\": {\"bytes\": 8, \"fnv1a64\": "
                  "\"0123456789abcdef\"}, \"rank-7.safetensors\": {\"bytes\": "
                  "8, \"fnv1a64\": \"0123456789abcdef\"}"),
            "m.json: file \"rank-7.safetensors\": is not the file of a rank "
            "of the manifest's meshes");
}

/// findCheckpoint: the directory itself when it holds a manifest, else its
/// latest step-<n> with one (numerically: step-10 after step-9).
TEST(CheckpointManifest, FindsTheLatestWholeStepDirectory) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-find-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto missing = findCheckpoint(dir.string());
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("has no manifest.json"),
            std::string::npos);
  CheckpointManifest m;
  for (const char *step : {"step-9", "step-10", "step-11", "stepx"})
    fs::create_directories(dir / step);
  ASSERT_TRUE(m.write((dir / "step-9").string()).isOk());
  ASSERT_TRUE(m.write((dir / "step-10").string()).isOk());
  ASSERT_TRUE(m.write((dir / "stepx").string()).isOk());
  // step-11 has no manifest: its writing did not finish.
  auto latest = findCheckpoint(dir.string());
  ASSERT_TRUE(latest.isOk()) << latest.status().toString();
  EXPECT_EQ(*latest, periodicCheckpointDir(dir.string(), 10));
  ASSERT_TRUE(m.write(dir.string()).isOk());
  EXPECT_EQ(*findCheckpoint(dir.string()), dir.string());
  fs::remove_all(dir);
}

TEST(CheckpointManifest, MalformedManifests) {
  auto message = [](const std::string &json) {
    auto m = CheckpointManifest::parse(json, "m.json");
    return m.isOk() ? std::string("ok") : m.status().message();
  };
  std::string good = "{\"format\": \"partition-checkpoint\", \"version\": 2, "
                     "\"steps\": 3, \"meshes\": [], \"tensors\": {";
  EXPECT_EQ(message(good + "}, \"files\": {}}"), "ok");
  EXPECT_NE(message(good).find("not valid JSON"), std::string::npos);
  EXPECT_NE(message("{\"format\": \"x\"}").find("expected \"partition-"),
            std::string::npos);
  EXPECT_NE(message("{\"format\": \"partition-checkpoint\", \"version\": 3}")
                .find("version 3"),
            std::string::npos);
  EXPECT_NE(message(good + "\"w\": {\"role\": \"parameter\", \"dtype\": "
                           "\"F32\", \"shape\": [4], \"blocks\": [{\"file\": "
                           "\"rank-0.safetensors\", \"rank\": 0, \"offsets\": "
                           "[2], \"shape\": [4]}]}}}")
                .find("does not lie inside"),
            std::string::npos);
  EXPECT_NE(message(good + "\"w\": {\"role\": \"parameter\", \"dtype\": "
                           "\"F32\", \"shape\": [4], \"blocks\": [{\"file\": "
                           "\"../x\", \"rank\": 0, \"offsets\": "
                           "[0], \"shape\": [4]}]}}}")
                .find("the name has a '/' at byte 2"),
            std::string::npos);
  // A block naming another rank's file would load that rank's data.
  EXPECT_NE(message(good + "\"w\": {\"role\": \"parameter\", \"dtype\": "
                           "\"F32\", \"shape\": [4], \"blocks\": [{\"file\": "
                           "\"rank-1.safetensors\", \"rank\": 0, \"offsets\": "
                           "[0], \"shape\": [4]}]}}}")
                .find("file \"rank-1.safetensors\" is not the file of rank 0 "
                      "(\"rank-0.safetensors\")"),
            std::string::npos);
  for (const char *file : {"..", "/etc/passwd", "a\\\\b", ""})
    EXPECT_NE(message(good +
                      "\"w\": {\"role\": \"parameter\", \"dtype\": "
                      "\"F32\", \"shape\": [4], \"blocks\": "
                      "[{\"file\": \"" +
                      file +
                      "\", \"rank\": 0, \"offsets\": [0], \"shape\": "
                      "[4]}]}}}")
                  .find("file: "),
              std::string::npos)
        << file;
  EXPECT_NE(message(good + "\"w\": {\"role\": \"parameter\", \"dtype\": "
                           "\"F64\", \"shape\": [4], \"blocks\": []}}}")
                .find("unknown dtype"),
            std::string::npos);
}

/// A torn manifest in the newest step-<n> is passed over, with a warning
/// naming it and the step used instead.
TEST(CheckpointManifest, FallsBackPastATornManifest) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-torn-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CheckpointManifest m;
  for (const char *step : {"step-4", "step-8"}) {
    fs::create_directories(dir / step);
    ASSERT_TRUE(m.write((dir / step).string()).isOk());
  }
  // Cut step-8's manifest in half.
  std::string torn = m.toJson().substr(0, m.toJson().size() / 2);
  FILE *f = std::fopen((dir / "step-8" / "manifest.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fwrite(torn.data(), 1, torn.size(), f);
  std::fclose(f);
  std::vector<std::string> warnings;
  auto found = findCheckpoint(dir.string(), &warnings);
  ASSERT_TRUE(found.isOk()) << found.status().toString();
  EXPECT_EQ(*found, periodicCheckpointDir(dir.string(), 4));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find((dir / "step-8").string() + " is not usable"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("using " + (dir / "step-4").string()),
            std::string::npos)
      << warnings[0];
  // With no whole step left, the torn manifest's error is the answer.
  fs::remove_all(dir / "step-4");
  auto none = findCheckpoint(dir.string());
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("not valid JSON"), std::string::npos)
      << none.status().toString();
  fs::remove_all(dir);
}

/// Leftovers of interrupted writes go once a later checkpoint is whole;
/// what may still be written (later steps) stays.
TEST(CheckpointManifest, RemovesLeftoversOfInterruptedWrites) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-leftover-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CheckpointManifest m;
  for (const char *step : {"step-2", "step-4", "step-6", "step-8", "step-10"})
    fs::create_directories(dir / step);
  ASSERT_TRUE(m.write((dir / "step-2").string()).isOk());
  ASSERT_TRUE(m.write((dir / "step-6").string()).isOk());
  for (const fs::path &tmp :
       {dir / "step-2" / "rank-1.safetensors.tmp",
        dir / "step-6" / "manifest.json.tmp",
        dir / "step-10" / "rank-0.safetensors.tmp", dir / "x.tmp"})
    std::fclose(std::fopen(tmp.c_str(), "w"));
  std::vector<std::string> removed = removeCheckpointLeftovers(dir.string(), 6);
  std::vector<std::string> expected = {
      (dir / "step-2" / "rank-1.safetensors.tmp").string(),
      (dir / "step-4").string(),
      (dir / "step-6" / "manifest.json.tmp").string(),
      (dir / "x.tmp").string()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(removed, expected);
  EXPECT_TRUE(fs::exists(dir / "step-2" / "manifest.json"));
  EXPECT_TRUE(fs::exists(dir / "step-8"));
  EXPECT_TRUE(fs::exists(dir / "step-10" / "rank-0.safetensors.tmp"));
  fs::remove_all(dir);
}

/// Rank files of a 4 x 6 f32 tensor with value 10 * row + column, written
/// under a 2 x 2 tiling, read back into every block of 1 x 1, 4 x 1, 1 x 3
/// and 2 x 2 tilings.
TEST(CheckpointSource, ReassemblesUnderOtherTilings) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-ckpt-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto manifest = std::make_shared<CheckpointManifest>();
  manifest->tensors.push_back(tiled({4, 6}, {2, 2}));
  for (const CheckpointBlock &b : manifest->tensors[0].blocks) {
    std::vector<float> data;
    for (int64_t r = 0; r < b.shape[0]; ++r)
      for (int64_t c = 0; c < b.shape[1]; ++c)
        data.push_back(float(10 * (b.offsets[0] + r) + b.offsets[1] + c));
    SafetensorsWriter w;
    ASSERT_TRUE(w.add("w", DType::F32, b.shape, data.data()).isOk());
    ASSERT_TRUE(w.write((dir / b.file).string()).isOk());
  }
  CheckpointSource source(dir.string(), manifest);
  for (std::vector<int64_t> grid :
       {std::vector<int64_t>{1, 1}, {4, 1}, {1, 3}, {2, 2}}) {
    CheckpointTensor want = tiled({4, 6}, grid);
    for (const CheckpointBlock &b : want.blocks) {
      std::vector<float> got(size_t(b.shape[0] * b.shape[1]), -1);
      Status s =
          source.read("w", DType::F32, {4, 6}, b.offsets, b.shape, got.data());
      ASSERT_TRUE(s.isOk()) << s.toString();
      for (int64_t r = 0; r < b.shape[0]; ++r)
        for (int64_t c = 0; c < b.shape[1]; ++c)
          EXPECT_EQ(got[r * b.shape[1] + c],
                    float(10 * (b.offsets[0] + r) + b.offsets[1] + c))
              << "grid " << grid[0] << "x" << grid[1] << " at " << r << ","
              << c;
    }
  }
  float one;
  Status missing = source.read("v", DType::F32, {1}, {0}, {1}, &one);
  EXPECT_EQ(missing.code(), StatusCode::InvalidArgument);
  EXPECT_NE(missing.message().find("tensor \"v\" is missing"),
            std::string::npos);
  std::vector<float> big(28);
  Status shape =
      source.read("w", DType::F32, {4, 7}, {0, 0}, {4, 7}, big.data());
  EXPECT_NE(shape.message().find("f32[4, 6] in the checkpoint but f32[4, 7]"),
            std::string::npos)
      << shape.toString();
  fs::remove_all(dir);
}

/// The manifest's sizes and checksums catch a rank file that was cut or
/// changed after the checkpoint was written.
TEST(CheckpointSource, ChecksTheSizeAndChecksumOfEachFile) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-sum-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto manifest = std::make_shared<CheckpointManifest>();
  manifest->tensors.push_back(tiled({4}, {1}));
  std::vector<float> data = {1, 2, 3, 4};
  SafetensorsWriter w;
  ASSERT_TRUE(w.add("w", DType::F32, {4}, data.data()).isOk());
  auto bytes = w.serialize();
  ASSERT_TRUE(bytes.isOk());
  std::string path = (dir / "rank-0.safetensors").string();
  auto put = [&](const std::string &text) {
    FILE *f = std::fopen(path.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  };
  put(*bytes);
  manifest->files["rank-0.safetensors"] = {
      bytes->size(), fnv1a64(bytes->data(), bytes->size())};
  std::vector<float> got(4);
  {
    CheckpointSource source(dir.string(), manifest);
    Status s = source.read("w", DType::F32, {4}, {0}, {4}, got.data());
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(got, data);
  }
  // The last data byte changed: same size, another checksum.
  std::string changed = *bytes;
  changed.back() ^= 0x40;
  put(changed);
  {
    CheckpointSource source(dir.string(), manifest);
    Status s = source.read("w", DType::F32, {4}, {0}, {4}, got.data());
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find(path + ": checksum "), std::string::npos)
        << s.toString();
    EXPECT_NE(s.message().find(", but the manifest records "),
              std::string::npos)
        << s.toString();
  }
  put(bytes->substr(0, bytes->size() - 4));
  {
    CheckpointSource source(dir.string(), manifest);
    Status s = source.read("w", DType::F32, {4}, {0}, {4}, got.data());
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find(path + ": " + std::to_string(bytes->size() - 4) +
                               " bytes, but the manifest records " +
                               std::to_string(bytes->size())),
              std::string::npos)
        << s.toString();
  }
  fs::remove_all(dir);
}

} // namespace
