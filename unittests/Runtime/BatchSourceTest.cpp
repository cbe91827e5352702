//===- BatchSourceTest.cpp - batch streams of training runs ---------------===//
//
// SafetensorsBatches: batch k is entry k mod S, a block read is the block of
// that entry, and every mismatch between the file and the bindings is an
// error naming the array and both types. SyntheticBatches: the blocks of any
// tiling assemble into the whole batch (what a rank gets depends on global
// positions only), batches differ, values stay in their ranges.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/BatchSource.h"
#include "partition/runtime/Sharding.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace partition::runtime;
namespace fs = std::filesystem;

namespace {

/// A temporary directory removed at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("partition-batch-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string &name) const {
    return (path / name).string();
  }
};

/// Writes `tensors` (name, dtype, shape, data) to `path`.
void write(
    const std::string &path,
    const std::vector<std::tuple<std::string, DType, std::vector<int64_t>,
                                 const void *>> &tensors) {
  SafetensorsWriter w;
  for (const auto &[name, dtype, shape, data] : tensors)
    ASSERT_TRUE(w.add(name, dtype, shape, data).isOk());
  ASSERT_TRUE(w.write(path).isOk());
}

TEST(SafetensorsBatches, BatchKIsEntryKModSAndBlocksAreSliced) {
  TempDir dir;
  // x: 3 batches of [4, 2], value 100 s + 10 r + c; y: 3 batches of i32[4].
  std::vector<float> x;
  std::vector<int32_t> y;
  for (int s = 0; s < 3; ++s)
    for (int r = 0; r < 4; ++r) {
      y.push_back(10 * s + r);
      for (int c = 0; c < 2; ++c)
        x.push_back(float(100 * s + 10 * r + c));
    }
  write(dir.file("d.safetensors"), {{"x", DType::F32, {3, 4, 2}, x.data()},
                                    {"y", DType::I32, {3, 4}, y.data()}});
  auto source = SafetensorsBatches::open(dir.file("d.safetensors"));
  ASSERT_TRUE(source.isOk()) << source.status().toString();
  BatchSpec xs{"x", DType::F32, {4, 2}}, ys{"y", DType::I32, {4}};
  ASSERT_TRUE((*source)->check({xs, ys}).isOk());
  EXPECT_EQ((*source)->numBatches(), 3);
  for (int64_t batch : {0, 1, 4, 8}) {
    float block[4];
    ASSERT_TRUE((*source)->read(xs, batch, {2, 0}, {2, 2}, block).isOk());
    int64_t s = batch % 3;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c)
        EXPECT_EQ(block[2 * r + c], float(100 * s + 10 * (2 + r) + c))
            << "batch " << batch;
    int32_t labels[2];
    ASSERT_TRUE((*source)->read(ys, batch, {1}, {2}, labels).isOk());
    EXPECT_EQ(labels[0], 10 * s + 1);
    EXPECT_EQ(labels[1], 10 * s + 2);
  }
}

TEST(SafetensorsBatches, MismatchesNameTheArrayAndBothTypes) {
  TempDir dir;
  std::vector<float> zeros(64, 0);
  write(dir.file("d.safetensors"),
        {{"x", DType::F32, {3, 4, 2}, zeros.data()},
         {"short", DType::F32, {2, 4, 2}, zeros.data()},
         {"one", DType::F32, {4, 2}, zeros.data()}});
  auto source = SafetensorsBatches::open(dir.file("d.safetensors"));
  ASSERT_TRUE(source.isOk()) << source.status().toString();
  auto message = [&](std::vector<BatchSpec> specs) {
    Status s = (*source)->check(specs);
    return s.isOk() ? std::string("ok") : s.message();
  };
  EXPECT_EQ(message({{"x", DType::F32, {4, 2}}}), "ok");
  EXPECT_NE(message({{"z", DType::F32, {4, 2}}})
                .find("no array \"z\" for input \"z\" (the file has: "),
            std::string::npos);
  EXPECT_NE(message({{"x", DType::F32, {4, 3}}})
                .find("array \"x\" is f32[3, 4, 2] but input \"x\" takes "
                      "f32[S, 4, 3]"),
            std::string::npos);
  EXPECT_NE(message({{"x", DType::I32, {4, 2}}})
                .find("array \"x\" is f32[3, 4, 2] but input \"x\" takes "
                      "i32[S, 4, 2]"),
            std::string::npos);
  EXPECT_NE(message({{"one", DType::F32, {4, 2}}})
                .find("array \"one\" is f32[4, 2] but input \"one\" takes "
                      "f32[S, 4, 2]"),
            std::string::npos);
  EXPECT_NE(message({{"x", DType::F32, {4, 2}}, {"short", DType::F32, {4, 2}}})
                .find("array \"short\" holds 2 batches but array \"x\" "
                      "holds 3"),
            std::string::npos);
  // A scalar binding takes an array [S].
  EXPECT_NE(message({{"x", DType::F32, {}}}).find("takes f32[S]"),
            std::string::npos);
}

/// Reads every block of a `grid` tiling of `spec` in `batch` and assembles
/// them into the whole value.
template <typename T>
std::vector<T> assembled(const BatchSource &source, const BatchSpec &spec,
                         int64_t batch, std::vector<int64_t> grid) {
  std::vector<T> whole(size_t(spec.shape[0] * spec.shape[1]));
  std::vector<int64_t> local{spec.shape[0] / grid[0], spec.shape[1] / grid[1]};
  std::vector<T> block(size_t(local[0] * local[1]));
  for (int64_t i = 0; i < grid[0]; ++i)
    for (int64_t j = 0; j < grid[1]; ++j) {
      std::vector<int64_t> offsets{i * local[0], j * local[1]};
      EXPECT_TRUE(
          source.read(spec, batch, offsets, local, block.data()).isOk());
      insertBlock(whole.data(), spec.shape, block.data(), local, offsets,
                  sizeof(T));
    }
  return whole;
}

TEST(SyntheticBatches, SameBatchUnderAnyTiling) {
  SyntheticBatches source(7, 50);
  BatchSpec f{"x", DType::F32, {4, 6}}, i{"tokens", DType::I32, {4, 6}};
  ASSERT_TRUE(source.check({f, i}).isOk());
  auto whole = assembled<float>(source, f, 3, {1, 1});
  auto tokens = assembled<int32_t>(source, i, 3, {1, 1});
  for (std::vector<int64_t> grid :
       {std::vector<int64_t>{4, 1}, {2, 2}, {1, 3}, {4, 6}}) {
    EXPECT_EQ(assembled<float>(source, f, 3, grid), whole);
    EXPECT_EQ(assembled<int32_t>(source, i, 3, grid), tokens);
  }
  for (float v : whole) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  for (int32_t t : tokens) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 50);
  }
  // Another batch, another seed, another name: other values.
  EXPECT_NE(assembled<float>(source, f, 4, {1, 1}), whole);
  EXPECT_NE(assembled<float>(SyntheticBatches(8, 50), f, 3, {1, 1}), whole);
  BatchSpec g{"y", DType::F32, {4, 6}};
  EXPECT_NE(assembled<float>(source, g, 3, {1, 1}), whole);
  // i64 holds the same draws as i32.
  BatchSpec wide{"tokens", DType::I64, {4, 6}};
  auto wideTokens = assembled<int64_t>(source, wide, 3, {2, 2});
  EXPECT_EQ(std::vector<int32_t>(wideTokens.begin(), wideTokens.end()), tokens);
}

TEST(SyntheticBatches, IntegersNeedARange) {
  SyntheticBatches source(7, 0);
  EXPECT_TRUE(source.check({{"x", DType::BF16, {2}}}).isOk());
  Status s = source.check({{"x", DType::F32, {2}}, {"t", DType::I64, {2, 3}}});
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("input \"t\" is i64[2, 3]"), std::string::npos)
      << s.toString();
  EXPECT_EQ(source.describe(), "synthetic 7");
}

} // namespace
