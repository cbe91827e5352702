//===- FileFormatTest.cpp - safetensors and .npy readers and writers ------===//
//
// Round trips for every dtype and rank, slice reads checked against whole
// reads, compatibility with NumPy (files written by numpy are read here and
// files written here are read by numpy; skipped when python3 or numpy is
// missing), and malformed files: hand-written broken headers, every
// truncation of a small valid file, and thousands of random byte mutations,
// each of which must give an error Status and never crash.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Files.h"
#include "partition/runtime/Npy.h"
#include "partition/runtime/Safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace partition::runtime;
namespace fs = std::filesystem;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

const DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32,
                            DType::I64};
const DType kNpyDTypes[] = {DType::F32, DType::F16, DType::I32, DType::I64};

/// A fresh directory for one test, removed when the test ends.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (fs::path(::testing::TempDir()) / "partition-files-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    const char *made = ::mkdtemp(buffer.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed for " << pattern;
    path_ = made ? made : pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const {
    return (fs::path(path_) / name).string();
  }

private:
  std::string path_;
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string le64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

/// A safetensors file from its header text and data section.
std::string safetensorsFile(const std::string &header,
                            const std::string &data = "") {
  return le64(header.size()) + header + data;
}

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Random bytes; any bit pattern is a fine tensor for byte comparisons.
std::vector<uint8_t> randomBytes(std::mt19937_64 &rng, size_t n) {
  std::vector<uint8_t> bytes(n);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(rng());
  return bytes;
}

/// Extracts a slice from a whole row-major tensor, element by element.
std::vector<uint8_t> extractSlice(const std::vector<uint8_t> &whole,
                                  const std::vector<int64_t> &shape,
                                  int64_t element,
                                  const std::vector<int64_t> &offsets,
                                  const std::vector<int64_t> &sizes,
                                  int64_t *runs = nullptr) {
  std::vector<uint8_t> out;
  int64_t count = product(sizes);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t previous = -2 * element;
  if (runs)
    *runs = 0;
  for (int64_t n = 0; n < count; ++n) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      flat = flat * shape[d] + offsets[d] + index[d];
    int64_t byte = flat * element;
    if (runs && byte != previous + element)
      ++*runs;
    previous = byte;
    out.insert(out.end(), whole.begin() + byte, whole.begin() + byte + element);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// The interpreter to run numpy with, or "" when there is none: the
/// PARTITION_PYTHON environment variable, python3 on the PATH, or the
/// system's python3 (numpy may be installed for it only).
const std::string &pythonWithNumpy() {
  static const std::string found = [] {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("PARTITION_PYTHON"))
      candidates.push_back(env);
    candidates.push_back("python3");
    candidates.push_back("/usr/bin/python3");
    for (const std::string &candidate : candidates)
      if (std::system(("'" + candidate + "' -c 'import numpy' >/dev/null 2>&1")
                          .c_str()) == 0)
        return candidate;
    return std::string();
  }();
  return found;
}

/// Runs `script` with numpy's interpreter in `dir`; returns its exit status
/// and puts its output in `output`.
int runPython(const TempDir &dir, const std::string &script,
              std::string &output) {
  std::string scriptPath = dir.file("script.py");
  std::string outputPath = dir.file("script.out");
  writeFile(scriptPath, script);
  std::string command = "'" + pythonWithNumpy() + "' '" + scriptPath + "' '" +
                        dir.path() + "' >'" + outputPath + "' 2>&1";
  int status = std::system(command.c_str());
  output = readFile(outputPath);
  return status;
}

#define SKIP_WITHOUT_NUMPY()                                                   \
  do {                                                                         \
    if (pythonWithNumpy().empty())                                             \
      GTEST_SKIP() << "python3 with numpy not found (set PARTITION_PYTHON)";   \
  } while (0)

/// Expects `status` to be an error whose message contains `substring`.
#define EXPECT_ERROR(status, substring)                                        \
  do {                                                                         \
    const Status _s = (status);                                                \
    EXPECT_FALSE(_s.isOk());                                                   \
    EXPECT_NE(_s.message().find(substring), std::string::npos)                 \
        << "message: " << _s.message();                                        \
  } while (0)

//===----------------------------------------------------------------------===//
// safetensors: round trips and layout
//===----------------------------------------------------------------------===//

struct TestTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

std::vector<TestTensor> makeTensors(std::mt19937_64 &rng) {
  std::vector<TestTensor> tensors;
  for (DType dtype : kAllDTypes) {
    for (int rank = 0; rank <= 4; ++rank) {
      TestTensor t;
      t.name = std::string("layer.") + dtypeName(dtype) + ".rank" +
               std::to_string(rank);
      t.dtype = dtype;
      for (int d = 0; d < rank; ++d)
        t.shape.push_back(1 + static_cast<int64_t>(rng() % 4));
      t.data = randomBytes(rng, product(t.shape) * dtypeSize(dtype));
      tensors.push_back(std::move(t));
    }
    // An empty tensor of every dtype too.
    tensors.push_back(
        {std::string("empty.") + dtypeName(dtype), dtype, {3, 0, 2}, {}});
  }
  return tensors;
}

TEST(Safetensors, RoundTripEveryDTypeAndRank) {
  std::mt19937_64 rng(1);
  std::vector<TestTensor> tensors = makeTensors(rng);
  SafetensorsWriter writer;
  for (const TestTensor &t : tensors)
    ASSERT_TRUE(writer.add(t.name, t.dtype, t.shape, t.data.data()).isOk());
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"note", "quotes \" backslash \\ newline \n tab \t bell \x07 \xc3\xa9"}};
  for (const auto &[key, value] : metadata)
    ASSERT_TRUE(writer.setMetadata(key, value).isOk());

  TempDir dir;
  std::string path = dir.file("model.safetensors");
  Status written = writer.write(path);
  ASSERT_TRUE(written.isOk()) << written.toString();
  StatusOr<std::string> bytes = writer.serialize();
  ASSERT_TRUE(bytes.isOk());
  EXPECT_EQ(readFile(path), *bytes);

  StatusOr<SafetensorsReader> fromFile = SafetensorsReader::open(path);
  ASSERT_TRUE(fromFile.isOk()) << fromFile.status().toString();
  StatusOr<SafetensorsReader> fromMemory =
      SafetensorsReader::openMemory(*bytes, "model.safetensors");
  ASSERT_TRUE(fromMemory.isOk()) << fromMemory.status().toString();

  for (SafetensorsReader *reader : {&*fromFile, &*fromMemory}) {
    EXPECT_EQ(reader->size(), tensors.size());
    EXPECT_EQ(reader->metadata(), metadata);
    EXPECT_EQ(reader->headerBytes() % 8, 0u);
    std::vector<std::string> names = reader->names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(),
              tensors.size());
    for (const TestTensor &t : tensors) {
      SCOPED_TRACE(t.name);
      ASSERT_TRUE(reader->contains(t.name));
      StatusOr<SafetensorsTensorInfo> info = reader->info(t.name);
      ASSERT_TRUE(info.isOk()) << info.status().toString();
      EXPECT_EQ(info->dtype, t.dtype);
      EXPECT_EQ(info->shape, t.shape);
      EXPECT_EQ(info->numBytes, static_cast<int64_t>(t.data.size()));
      EXPECT_EQ(info->numElements(), product(t.shape));
      // The canonical layout aligns each tensor to its element size.
      EXPECT_EQ(info->fileOffset % dtypeSize(t.dtype), 0);

      std::vector<uint8_t> out(t.data.size() + 1, 0xee);
      Status read = reader->read(t.name, out.data(), t.data.size());
      ASSERT_TRUE(read.isOk()) << read.toString();
      EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), out.begin()));
      EXPECT_EQ(out.back(), 0xee) << "wrote past the destination";

      std::vector<uint8_t> viaRef(t.data.size());
      TensorRef ref{viaRef.data(), t.dtype, t.shape};
      ASSERT_TRUE(reader->read(t.name, ref).isOk());
      EXPECT_EQ(viaRef, t.data);
    }
  }
}

TEST(Safetensors, CanonicalBytesMatchTheReferenceImplementation) {
  // Byte strings from the reference implementation's own tests.
  const float values[] = {0, 1, 2, 3, 4, 5};
  std::string data(reinterpret_cast<const char *>(values), sizeof(values));
  {
    SafetensorsWriter writer;
    ASSERT_TRUE(writer.add("attn.0", DType::F32, {1, 2, 3}, values).isOk());
    EXPECT_EQ(*writer.serialize(),
              safetensorsFile("{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,"
                              "3],\"data_offsets\":[0,24]}}",
                              data));
  }
  {
    SafetensorsWriter writer;
    ASSERT_TRUE(writer.add("attn0", DType::F32, {1, 1, 2, 3}, values).isOk());
    EXPECT_EQ(*writer.serialize(),
              safetensorsFile("{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,"
                              "2,3],\"data_offsets\":[0,24]}}       ",
                              data));
  }
  {
    SafetensorsWriter writer;
    EXPECT_EQ(*writer.serialize(), safetensorsFile("{}      "));
    ASSERT_TRUE(writer.setMetadata("framework", "pt").isOk());
    EXPECT_EQ(
        *writer.serialize(),
        safetensorsFile("{\"__metadata__\":{\"framework\":\"pt\"}}     "));
  }
}

TEST(Safetensors, WriterOrdersByAlignmentThenName) {
  // The reference writes larger-alignment dtypes first, then by name.
  uint8_t zeros[64] = {};
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("h", DType::F16, {1}, zeros).isOk());
  ASSERT_TRUE(writer.add("b", DType::BF16, {1}, zeros).isOk());
  ASSERT_TRUE(writer.add("i", DType::I32, {1}, zeros).isOk());
  ASSERT_TRUE(writer.add("f", DType::F32, {1}, zeros).isOk());
  ASSERT_TRUE(writer.add("l", DType::I64, {1}, zeros).isOk());
  ASSERT_TRUE(writer.add("a", DType::F32, {1}, zeros).isOk());
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::openMemory(*writer.serialize());
  ASSERT_TRUE(reader.isOk());
  std::vector<std::pair<int64_t, std::string>> byOffset;
  for (const std::string &name : reader->names())
    byOffset.push_back({reader->info(name)->fileOffset, name});
  std::sort(byOffset.begin(), byOffset.end());
  std::string order;
  for (const auto &entry : byOffset)
    order += entry.second;
  EXPECT_EQ(order, "lafibh");
}

TEST(Safetensors, ReadsHandWrittenHeaders) {
  // Any member order, whitespace, escapes and surrogate pairs in names,
  // unpadded header, offsets not in header order.
  std::string header =
      " {\n  \"b\\u00e9\\ud83d\\ude00\\\"\\\\\\/\" : { \"shape\" : [ 2 ] ,"
      "\"data_offsets\":[4,12],\"dtype\":\"I32\"},\t\"__metadata__\": "
      "{\"k\\n\": \"\\u0041\"}, \"a\":{\"data_offsets\":[0,4],\"dtype\":"
      "\"F32\",\"shape\":[]}}\r\n";
  header.erase(0, 1); // the header must start with '{'
  std::string data = "\x01\x02\x03\x04"
                     "\x05\x06\x07\x08\x09\x0a\x0b\x0c";
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::openMemory(safetensorsFile(header, data));
  ASSERT_TRUE(reader.isOk()) << reader.status().toString();
  std::string name = "b\xc3\xa9\xf0\x9f\x98\x80\"\\/";
  EXPECT_EQ(reader->names(), (std::vector<std::string>{name, "a"}));
  EXPECT_EQ(reader->metadata().at("k\n"), "A");
  int32_t values[2];
  ASSERT_TRUE(reader->read(name, values, sizeof(values)).isOk());
  EXPECT_EQ(std::memcmp(values, data.data() + 4, 8), 0);
  StatusOr<SafetensorsTensorInfo> scalar = reader->info("a");
  ASSERT_TRUE(scalar.isOk());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->numBytes, 4);
}

TEST(Safetensors, UnsupportedDTypeIsListedButNotReadable) {
  // F64 is a valid safetensors dtype: the file opens (its layout is checked
  // with 8-byte elements) but the tensor cannot be read.
  std::string header = "{\"d\":{\"dtype\":\"F64\",\"shape\":[2],"
                       "\"data_offsets\":[0,16]},\"f\":{\"dtype\":\"F32\","
                       "\"shape\":[1],\"data_offsets\":[16,20]}}";
  StatusOr<SafetensorsReader> reader = SafetensorsReader::openMemory(
      safetensorsFile(header, std::string(20, 'x')), "m.safetensors");
  ASSERT_TRUE(reader.isOk()) << reader.status().toString();
  EXPECT_TRUE(reader->contains("d"));
  StatusOr<SafetensorsTensorInfo> info = reader->info("d");
  ASSERT_FALSE(info.isOk());
  EXPECT_EQ(info.status().code(), StatusCode::Unimplemented);
  EXPECT_EQ(info.status().message(),
            "m.safetensors: tensor \"d\" has dtype F64, which the runtime does "
            "not support (supported: F32, F16, BF16, I32, I64)");
  double out[2];
  EXPECT_ERROR(reader->read("d", out, sizeof(out)), "F64");
  EXPECT_TRUE(reader->info("f").isOk());
}

TEST(Safetensors, ReadErrors) {
  std::vector<float> values(24);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("w", DType::F32, {2, 3, 4}, values.data()).isOk());
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::openMemory(*writer.serialize(), "x.safetensors");
  ASSERT_TRUE(reader.isOk());
  std::vector<float> out(24);

  Status missing = reader->read("nope", out.data(), 96);
  EXPECT_EQ(missing.code(), StatusCode::NotFound);
  EXPECT_EQ(missing.message(), "x.safetensors: no tensor \"nope\"");
  EXPECT_EQ(reader->info("nope").status().code(), StatusCode::NotFound);
  EXPECT_ERROR(reader->read("w", out.data(), 95), "has 96 bytes");
  EXPECT_ERROR(reader->read("w", nullptr, 96), "null destination");
  EXPECT_ERROR(reader->read("w", TensorRef{out.data(), DType::F16, {2, 3, 4}}),
               "[2, 3, 4] of f16");
  EXPECT_ERROR(reader->read("w", TensorRef{out.data(), DType::F32, {6, 4}}),
               "is [2, 3, 4] of f32");

  EXPECT_ERROR(reader->readSlice("w", {0, 0}, {1, 1}, out.data(), 4),
               "has rank 3");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0}, {1, 1}, out.data(), 4),
               "has rank 3");
  Status outside = reader->readSlice("w", {1, 2, 0}, {1, 2, 4}, out.data(), 32);
  EXPECT_EQ(outside.code(), StatusCode::OutOfRange);
  EXPECT_EQ(outside.message(),
            "x.safetensors: slice with offsets [1, 2, 0] and sizes [1, 2, 4] "
            "is outside tensor \"w\" of shape [2, 3, 4] (dimension 1)");
  EXPECT_ERROR(reader->readSlice("w", {-1, 0, 0}, {1, 1, 1}, out.data(), 4),
               "outside");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0}, {1, 1, -1}, out.data(), 0),
               "outside");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 5}, {1, 1, 0}, out.data(), 0),
               "outside");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0},
                                 {1, 1, std::numeric_limits<int64_t>::max()},
                                 out.data(), 4),
               "outside");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0}, {1, 1, 2}, out.data(), 4),
               "has 8 bytes but the destination has 4");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0}, {1, 1, 2}, nullptr, 8),
               "null destination");
  EXPECT_ERROR(reader->readSlice("w", {0, 0, 0},
                                 TensorRef{out.data(), DType::I32, {1, 1, 1}}),
               "destination is of i32");
  // An empty slice reads nothing and succeeds.
  EXPECT_TRUE(reader->readSlice("w", {2, 0, 0}, {0, 3, 4}, nullptr, 0).isOk());

  StatusOr<SafetensorsReader> none =
      SafetensorsReader::open("/nonexistent-dir/none.safetensors");
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::NotFound);
  EXPECT_ERROR(none.status(), "none.safetensors");
  TempDir dir;
  EXPECT_ERROR(SafetensorsReader::open(dir.path()).status(),
               "not a regular file");
}

TEST(Safetensors, WriterErrors) {
  float x[4] = {};
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("x", DType::F32, {4}, x).isOk());
  EXPECT_ERROR(writer.add("x", DType::F32, {4}, x), "added twice");
  EXPECT_ERROR(writer.add("__metadata__", DType::F32, {4}, x),
               "cannot name a tensor");
  EXPECT_ERROR(writer.add("bad\xff", DType::F32, {4}, x), "not valid UTF-8");
  EXPECT_ERROR(writer.add("neg", DType::F32, {-1}, x), "invalid shape");
  EXPECT_ERROR(writer.add("big", DType::F32, {int64_t(1) << 62, 4}, x),
               "invalid shape");
  EXPECT_ERROR(writer.add("null", DType::F32, {4}, nullptr), "no data");
  EXPECT_ERROR(writer.add("rank", DType::F32, std::vector<int64_t>(65, 1), x),
               "rank 65");
  EXPECT_TRUE(writer.add("empty", DType::F32, {0}, nullptr).isOk());
  EXPECT_ERROR(writer.setMetadata("k", "\xc0\x80"), "not valid UTF-8");
  Status unwritable = writer.write("/nonexistent-dir/out.safetensors");
  EXPECT_EQ(unwritable.code(), StatusCode::NotFound);
}

//===----------------------------------------------------------------------===//
// safetensors: slices
//===----------------------------------------------------------------------===//

TEST(Safetensors, SlicesMatchWholeReads) {
  std::mt19937_64 rng(7);
  SafetensorsWriter writer;
  std::vector<TestTensor> tensors;
  for (int i = 0; i < 12; ++i) {
    TestTensor t;
    t.name = "t" + std::to_string(i);
    t.dtype = kAllDTypes[i % 5];
    int rank = 1 + i % 4;
    for (int d = 0; d < rank; ++d)
      t.shape.push_back(1 + static_cast<int64_t>(rng() % 7));
    t.data = randomBytes(rng, product(t.shape) * dtypeSize(t.dtype));
    tensors.push_back(std::move(t));
  }
  for (const TestTensor &t : tensors)
    ASSERT_TRUE(writer.add(t.name, t.dtype, t.shape, t.data.data()).isOk());
  TempDir dir;
  std::string path = dir.file("slices.safetensors");
  ASSERT_TRUE(writer.write(path).isOk());
  StatusOr<SafetensorsReader> fromFile = SafetensorsReader::open(path);
  StatusOr<SafetensorsReader> fromMemory =
      SafetensorsReader::openMemory(readFile(path));
  ASSERT_TRUE(fromFile.isOk() && fromMemory.isOk());

  int checked = 0;
  for (int iteration = 0; iteration < 1500; ++iteration) {
    const TestTensor &t = tensors[rng() % tensors.size()];
    std::vector<int64_t> offsets, sizes;
    for (int64_t dim : t.shape) {
      // Often a whole dimension, so that runs coalesce; sometimes empty.
      int64_t offset = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % dim);
      int64_t size = offset == 0 && rng() % 2 ? dim
                     : rng() % 25 == 0
                         ? 0
                         : 1 + static_cast<int64_t>(rng() % (dim - offset));
      offsets.push_back(offset);
      sizes.push_back(size);
    }
    int64_t element = dtypeSize(t.dtype);
    int64_t expectedRuns = 0;
    std::vector<uint8_t> expected =
        extractSlice(t.data, t.shape, element, offsets, sizes, &expectedRuns);
    SCOPED_TRACE(t.name + " offsets " + formatShape(offsets) + " sizes " +
                 formatShape(sizes));
    for (SafetensorsReader *reader : {&*fromFile, &*fromMemory}) {
      for (int64_t maxGap : {0, 16, 1 << 20}) {
        ReadStats stats;
        SliceReadOptions options;
        options.maxGapBytes = maxGap;
        options.stats = &stats;
        std::vector<uint8_t> out(expected.size() + 1, 0xee);
        Status status = reader->readSlice(t.name, offsets, sizes, out.data(),
                                          expected.size(), options);
        ASSERT_TRUE(status.isOk()) << status.toString();
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), out.begin()));
        ASSERT_EQ(out.back(), 0xee) << "wrote past the destination";
        if (maxGap == 0) {
          // Exactly the slice's bytes, one read per maximal run.
          EXPECT_EQ(stats.bytesRead, static_cast<int64_t>(expected.size()));
          EXPECT_EQ(stats.reads, expectedRuns);
        } else {
          EXPECT_LE(stats.reads, expectedRuns);
          EXPECT_GE(stats.bytesRead, static_cast<int64_t>(expected.size()));
        }
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 1500);
}

TEST(Safetensors, SliceReadsCoalesceRuns) {
  std::vector<float> w(8 * 16);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(i);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("w", DType::F32, {8, 16}, w.data()).isOk());
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::openMemory(*writer.serialize());
  ASSERT_TRUE(reader.isOk());
  auto reads = [&](std::vector<int64_t> offsets, std::vector<int64_t> sizes,
                   int64_t maxGap = 0) {
    ReadStats stats;
    SliceReadOptions options;
    options.stats = &stats;
    options.maxGapBytes = maxGap;
    std::vector<float> out(product(sizes));
    EXPECT_TRUE(reader
                    ->readSlice("w", offsets, sizes, out.data(), out.size() * 4,
                                options)
                    .isOk());
    return stats.reads;
  };
  EXPECT_EQ(reads({0, 0}, {8, 16}), 1);    // the whole tensor
  EXPECT_EQ(reads({2, 0}, {3, 16}), 1);    // rows: one run
  EXPECT_EQ(reads({0, 4}, {8, 4}), 8);     // a column block: a run per row
  EXPECT_EQ(reads({5, 3}, {1, 2}), 1);     // inside one row
  EXPECT_EQ(reads({0, 4}, {8, 4}, 48), 1); // gaps of 48 bytes bridged
  EXPECT_EQ(reads({0, 4}, {8, 4}, 47), 8);
}

TEST(Safetensors, RanksReadTheirShardsConcurrently) {
  // A [16, 64] parameter sharded along dimension 1 over 4 ranks: each rank
  // reads its [16, 16] slice from the same reader at the same time.
  std::vector<int32_t> w(16 * 64);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int32_t>(i);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.add("w", DType::I32, {16, 64}, w.data()).isOk());
  TempDir dir;
  std::string path = dir.file("sharded.safetensors");
  ASSERT_TRUE(writer.write(path).isOk());
  StatusOr<SafetensorsReader> reader = SafetensorsReader::open(path);
  ASSERT_TRUE(reader.isOk());
  std::vector<std::vector<int32_t>> shards(4, std::vector<int32_t>(16 * 16));
  std::vector<Status> results(4);
  std::vector<ReadStats> stats(4);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 4; ++rank)
    ranks.emplace_back([&, rank] {
      SliceReadOptions options;
      options.stats = &stats[rank];
      results[rank] = reader->readSlice(
          "w", {0, 16 * rank},
          TensorRef{shards[rank].data(), DType::I32, {16, 16}}, options);
    });
  for (std::thread &t : ranks)
    t.join();
  for (int rank = 0; rank < 4; ++rank) {
    ASSERT_TRUE(results[rank].isOk()) << results[rank].toString();
    EXPECT_EQ(stats[rank].bytesRead, 16 * 16 * 4);
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c)
        EXPECT_EQ(shards[rank][r * 16 + c], r * 64 + 16 * rank + c);
  }
}

//===----------------------------------------------------------------------===//
// safetensors: malformed files
//===----------------------------------------------------------------------===//

/// A valid one-tensor header around `tensor` (the entry's object text) and
/// the 8 bytes of data it describes by default.
std::string oneTensor(const std::string &entry, size_t dataBytes = 8) {
  return safetensorsFile("{\"t\":" + entry + "}", std::string(dataBytes, 'd'));
}

struct MalformedCase {
  const char *what;
  std::string bytes;
  const char *message;
};

std::vector<MalformedCase> malformedSafetensors() {
  const std::string ok = "{\"dtype\":\"F32\",\"shape\":[2],"
                         "\"data_offsets\":[0,8]}";
  std::string overlong(300, 'a');
  std::string deep(1000, '[');
  return {
      {"empty file", "", "fewer than the 8-byte header length"},
      {"7 bytes", std::string(7, '\0'), "fewer than the 8-byte header length"},
      {"header length past the end", le64(100) + "{}", "header length 100"},
      {"header length 2^64-1", le64(~uint64_t(0)) + "{}",
       "exceeds the limit of 100000000"},
      {"header length above the limit", le64(100000001) + "{}",
       "exceeds the limit"},
      {"header length 0", le64(0), "too small"},
      {"header length 1", le64(1) + "{", "too small"},
      {"leading space", safetensorsFile(" {}"), "does not start with '{'"},
      {"array header", safetensorsFile("[]"), "does not start with '{'"},
      {"invalid UTF-8", safetensorsFile("{\"\xff\":1}"), "not valid UTF-8"},
      {"overlong UTF-8", safetensorsFile("{\"\xc0\x80\":1}"),
       "not valid UTF-8"},
      {"UTF-8 surrogate", safetensorsFile("{\"\xed\xa0\x80\":1}"),
       "not valid UTF-8"},
      {"truncated UTF-8", safetensorsFile("{\"\xe2\x82"), "not valid UTF-8"},
      {"unterminated object", safetensorsFile("{\"t\":" + ok),
       "unterminated object"},
      {"missing colon", safetensorsFile("{\"t\" " + ok + "}"), "expected ':'"},
      {"trailing comma", safetensorsFile("{\"t\":" + ok + ",}"),
       "expected a string key"},
      {"single quotes", safetensorsFile("{'t':1}"), "expected a string key"},
      {"extra brace", safetensorsFile("{\"t\":" + ok + "}}", "12345678"),
       "unexpected data after the header object"},
      {"garbage after object", safetensorsFile("{} x"),
       "unexpected data after"},
      {"NUL after object", safetensorsFile(std::string("{}\0", 3)),
       "unexpected data after"},
      {"unterminated string", safetensorsFile("{\"abc"), "unterminated string"},
      {"control character", safetensorsFile("{\"a\tb\":" + ok + "}"),
       "control character"},
      {"invalid escape", safetensorsFile("{\"a\\x\":" + ok + "}"),
       "invalid escape"},
      {"bad unicode escape", safetensorsFile("{\"a\\u12g4\":" + ok + "}"),
       "invalid \\u escape"},
      {"lone high surrogate", safetensorsFile("{\"\\ud800\":" + ok + "}"),
       "unpaired high surrogate"},
      {"high surrogate then other", safetensorsFile("{\"\\ud800\\u0041\":1}"),
       "not followed by a low surrogate"},
      {"lone low surrogate", safetensorsFile("{\"\\udc00\":" + ok + "}"),
       "unpaired low surrogate"},
      {"entry not an object", oneTensor("[1,2]"),
       "tensor \"t\" must be an object, got an array"},
      {"entry a number", oneTensor("12"), "must be an object, got a number"},
      {"entry null", oneTensor("null"), "must be an object, got null"},
      {"entry a string", oneTensor("\"x\""), "must be an object, got a string"},
      {"entry invalid token", oneTensor("@"),
       "must be an object, got an invalid token"},
      {"dtype not a string",
       oneTensor("{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}"),
       "\"dtype\" must be a string, got a number"},
      {"shape a string",
       oneTensor("{\"dtype\":\"F32\",\"shape\":\"2\",\"data_offsets\":[0,8]}"),
       "\"shape\" must be an array of integers, got a string"},
      {"shape an object",
       oneTensor("{\"dtype\":\"F32\",\"shape\":{},\"data_offsets\":[0,8]}"),
       "got an object"},
      {"shape with a string",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,"
                 "8]}"),
       "got a string at index 0"},
      {"shape with a boolean",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2,true],\"data_offsets\":[0,"
                 "8]}"),
       "got a boolean at index 1"},
      {"shape with null",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[null],\"data_offsets\":[0,8]}"),
       "got null at index 0"},
      {"nested shape",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[[2]],\"data_offsets\":[0,8]}"),
       "got an array at index 0"},
      {"deep nesting", oneTensor("{\"dtype\":\"F32\",\"shape\":" + deep + "}"),
       "got an array at index 0"},
      {"float dimension",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}"),
       "\"shape\" is not an integer: 2.0"},
      {"exponent dimension",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2e0],\"data_offsets\":[0,8]}"),
       "is not an integer: 2e0"},
      {"negative dimension",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}"),
       "\"shape\" is negative: -2"},
      {"negative zero dimension",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[-0],\"data_offsets\":[0,8]}"),
       "is negative: -0"},
      {"leading zero",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}"),
       "expected ',' or ']'"},
      {"dot without digits",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2.],\"data_offsets\":[0,8]}"),
       "no digit after '.'"},
      {"empty exponent",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2e],\"data_offsets\":[0,8]}"),
       "no digit in the exponent"},
      {"lone minus",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,8]}"),
       "invalid number"},
      {"double comma",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[1,,2],\"data_offsets\":[0,"
                 "8]}"),
       "expected a value"},
      {"leading comma",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[,2],\"data_offsets\":[0,8]}"),
       "expected a value"},
      {"missing comma",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[1 2],\"data_offsets\":[0,8]}"),
       "expected ',' or ']'"},
      {"unterminated array", safetensorsFile("{\"t\":{\"shape\":[1,"),
       "unterminated array"},
      {"dimension above int64",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[9223372036854775808],"
                 "\"data_offsets\":[0,8]}"),
       "\"shape\" is too large: 9223372036854775808"},
      {"dimension with 40 digits",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[" + std::string(40, '9') +
                 "],\"data_offsets\":[0,8]}"),
       "is too large"},
      {"rank 65",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[1" +
                 [] {
                   std::string s;
                   for (int i = 0; i < 64; ++i)
                     s += ",1";
                   return s;
                 }() +
                 "],\"data_offsets\":[0,4]}"),
       "more than 64 elements"},
      {"shape product overflows",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4],"
                 "\"data_offsets\":[0,8]}"),
       "shape [4294967296, 4294967296, 4] of f32, whose size in bytes "
       "overflows 64 bits"},
      {"bytes overflow",
       oneTensor("{\"dtype\":\"I64\",\"shape\":[9223372036854775807],"
                 "\"data_offsets\":[0,8]}"),
       "overflows 64 bits"},
      {"overflow before a zero",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,0],"
                 "\"data_offsets\":[0,0]}",
                 0),
       "overflows 64 bits"},
      {"one offset",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8]}"),
       "\"data_offsets\" must have 2 elements, got 1"},
      {"three offsets",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}"),
       "\"data_offsets\" has more than 2 elements"},
      {"negative offset",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}"),
       "\"data_offsets\" is negative: -8"},
      {"offset above uint64",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,"
                 "18446744073709551616]}"),
       "is too large: 18446744073709551616"},
      {"huge offsets",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":["
                 "18446744073709551607,18446744073709551615]}"),
       "beyond the end of the data section (8 bytes)"},
      {"offsets a string",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":\"0\"}"),
       "\"data_offsets\" must be an array of integers, got a string"},
      {"missing dtype", oneTensor("{\"shape\":[2],\"data_offsets\":[0,8]}"),
       "tensor \"t\" has no \"dtype\""},
      {"missing shape", oneTensor("{\"dtype\":\"F32\",\"data_offsets\":[0,8]}"),
       "has no \"shape\""},
      {"missing offsets", oneTensor("{\"dtype\":\"F32\",\"shape\":[2]}"),
       "has no \"data_offsets\""},
      {"unknown field",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],"
                 "\"extra\":1}"),
       "has an unknown field \"extra\""},
      {"dtype twice",
       oneTensor("{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
                 "\"data_offsets\":[0,8]}"),
       "has \"dtype\" twice"},
      {"shape twice",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"shape\":[2],"
                 "\"data_offsets\":[0,8]}"),
       "has \"shape\" twice"},
      {"unknown dtype",
       oneTensor("{\"dtype\":\"F128\",\"shape\":[2],\"data_offsets\":[0,8]}"),
       "tensor \"t\" has dtype \"F128\", which is not supported (supported: "
       "F32, F16, BF16, I32, I64)"},
      {"lowercase dtype",
       oneTensor("{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}"),
       "has dtype \"f32\", which is not supported"},
      {"empty dtype",
       oneTensor("{\"dtype\":\"\",\"shape\":[2],\"data_offsets\":[0,8]}"),
       "has dtype \"\""},
      {"sub-byte dtype",
       oneTensor("{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,8]}"),
       "has dtype \"F4\""},
      {"begin after end",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}"),
       "has data_offsets [8, 0] whose begin is after its end"},
      {"end past the data",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}"),
       "has data_offsets [0, 16] beyond the end of the data section (8 "
       "bytes)"},
      {"size mismatch",
       oneTensor("{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}"),
       "tensor \"t\" has data_offsets [0, 8] but shape [3] of f32 needs 12 "
       "bytes"},
      {"size mismatch of an unsupported dtype",
       oneTensor("{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,8]}"),
       "but shape [2] of F64 needs 16 bytes"},
      {"overlap",
       safetensorsFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\","
                       "\"shape\":[2],\"data_offsets\":[4,12]}}",
                       std::string(12, 'd')),
       "tensor \"b\" has data_offsets [4, 12] which overlap tensor \"a\" at "
       "[0, 8]"},
      {"same range twice",
       safetensorsFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                       "\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"I32\","
                       "\"shape\":[2],\"data_offsets\":[0,8]}}",
                       std::string(8, 'd')),
       "overlap tensor \"a\""},
      {"gap",
       safetensorsFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
                       "\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\","
                       "\"shape\":[1],\"data_offsets\":[8,12]}}",
                       std::string(12, 'd')),
       "bytes [4, 8) of the data section belong to no tensor (before tensor "
       "\"b\")"},
      {"data after the last tensor", oneTensor(ok, 9),
       "bytes [8, 9) at the end of the data section belong to no tensor"},
      {"data but no tensor", safetensorsFile("{}", "abc"),
       "bytes [0, 3) at the end"},
      {"duplicate tensor",
       safetensorsFile("{\"t\":" + ok + ",\"t\":" + ok + "}",
                       std::string(8, 'd')),
       "tensor \"t\" appears twice"},
      {"metadata not an object", safetensorsFile("{\"__metadata__\":[\"a\"]}"),
       "\"__metadata__\" must be an object of strings, got an array"},
      {"metadata null", safetensorsFile("{\"__metadata__\":null}"), "got null"},
      {"metadata value a number",
       safetensorsFile("{\"__metadata__\":{\"k\":1}}"),
       "\"__metadata__\" value of key \"k\" must be a string, got a number"},
      {"metadata value an object",
       safetensorsFile("{\"__metadata__\":{\"k\":{}}}"), "got an object"},
      {"metadata twice",
       safetensorsFile("{\"__metadata__\":{},\"__metadata__\":{}}"),
       "\"__metadata__\" appears twice"},
      {"metadata key twice",
       safetensorsFile("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}"),
       "\"__metadata__\" key \"k\" appears twice"},
      {"long name is cut in messages",
       safetensorsFile("{\"" + overlong + "\":1}"), "aaa...\" must be"},
  };
}

TEST(Safetensors, MalformedFilesAreErrors) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  for (const MalformedCase &c : malformedSafetensors()) {
    SCOPED_TRACE(c.what);
    StatusOr<SafetensorsReader> inMemory =
        SafetensorsReader::openMemory(c.bytes, "bad.safetensors");
    ASSERT_FALSE(inMemory.isOk());
    EXPECT_EQ(inMemory.status().message().rfind("bad.safetensors: ", 0), 0u)
        << inMemory.status().message();
    EXPECT_NE(inMemory.status().message().find(c.message), std::string::npos)
        << "message: " << inMemory.status().message();
    // The file path gives the same answer.
    writeFile(path, c.bytes);
    StatusOr<SafetensorsReader> onDisk = SafetensorsReader::open(path);
    ASSERT_FALSE(onDisk.isOk());
    EXPECT_EQ(onDisk.status().message(),
              path + inMemory.status().message().substr(
                         std::strlen("bad.safetensors")));
  }
}

TEST(Safetensors, ErrorMessageNamesFileTensorAndValues) {
  std::string file = safetensorsFile(
      "{\"h0.wq\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[0,"
      "100]}}",
      std::string(100, '\0'));
  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::openMemory(file, "weights.safetensors");
  ASSERT_FALSE(reader.isOk());
  EXPECT_EQ(reader.status().code(), StatusCode::InvalidArgument);
  EXPECT_EQ(reader.status().message(),
            "weights.safetensors: tensor \"h0.wq\" has data_offsets [0, 100] "
            "but shape [4, 8] of f32 needs 128 bytes");
  EXPECT_NE(reader.status().where().find("Safetensors.cpp:"),
            std::string::npos);
}

/// A small valid file: three dtypes, a scalar, an empty tensor, metadata.
std::string smallSafetensors() {
  static const float f[6] = {1, 2, 3, 4, 5, 6};
  static const int64_t l[2] = {7, 8};
  static const uint16_t b[3] = {0x3f80, 0x4000, 0x4040};
  static const int32_t s[1] = {42};
  SafetensorsWriter writer;
  (void)writer.add("f", DType::F32, {2, 3}, f);
  (void)writer.add("l", DType::I64, {2}, l);
  (void)writer.add("b", DType::BF16, {3, 1}, b);
  (void)writer.add("s", DType::I32, {}, s);
  (void)writer.add("e", DType::F16, {0, 4}, nullptr);
  (void)writer.setMetadata("format", "pt");
  return *writer.serialize();
}

/// Reads everything a reader offers (all tensors, a few slices); checks
/// that nothing crashes and errors come back as Status.
void exerciseReader(const SafetensorsReader &reader, std::mt19937_64 &rng) {
  for (const std::string &name : reader.names()) {
    StatusOr<SafetensorsTensorInfo> info = reader.info(name);
    if (!info.isOk())
      continue;
    std::vector<uint8_t> out(info->numBytes);
    EXPECT_TRUE(reader.read(name, out.data(), info->numBytes).isOk());
    std::vector<int64_t> offsets, sizes;
    for (int64_t dim : info->shape) {
      int64_t offset = dim ? static_cast<int64_t>(rng() % dim) : 0;
      offsets.push_back(offset);
      sizes.push_back(dim - offset);
    }
    std::vector<uint8_t> slice(product(sizes) * dtypeSize(info->dtype));
    EXPECT_TRUE(
        reader.readSlice(name, offsets, sizes, slice.data(), slice.size())
            .isOk());
  }
}

TEST(Safetensors, EveryTruncationIsAnError) {
  std::string valid = smallSafetensors();
  std::mt19937_64 rng(3);
  StatusOr<SafetensorsReader> full = SafetensorsReader::openMemory(valid);
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  exerciseReader(*full, rng);
  TempDir dir;
  std::string path = dir.file("cut.safetensors");
  for (size_t length = 0; length < valid.size(); ++length) {
    SCOPED_TRACE("length " + std::to_string(length));
    std::string cut = valid.substr(0, length);
    EXPECT_FALSE(SafetensorsReader::openMemory(cut).isOk());
    writeFile(path, cut);
    EXPECT_FALSE(SafetensorsReader::open(path).isOk());
  }
}

/// Mutates 1 to 4 bytes of `bytes` (random values or single bit flips),
/// mostly within the first `hotBytes` bytes; sometimes truncates or appends.
std::string mutate(std::string bytes, size_t hotBytes, std::mt19937_64 &rng) {
  int count = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < count; ++i) {
    size_t range = rng() % 4 ? std::min(hotBytes, bytes.size()) : bytes.size();
    if (range == 0)
      break;
    size_t at = rng() % range;
    if (rng() % 2)
      bytes[at] = static_cast<char>(rng());
    else
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
  }
  switch (rng() % 16) {
  case 0:
    bytes.resize(rng() % (bytes.size() + 1));
    break;
  case 1:
    bytes.append(1 + rng() % 8, static_cast<char>(rng()));
    break;
  default:
    break;
  }
  return bytes;
}

/// Iterations of each mutation loop: 5000, or PARTITION_FUZZ_ITERATIONS for
/// a longer run (e.g. under a sanitizer).
int fuzzIterations() {
  const char *env = std::getenv("PARTITION_FUZZ_ITERATIONS");
  int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : 5000;
}

/// Edits a header's text as a broken writer might: inserts, deletes,
/// overwrites or duplicates a few bytes, often with punctuation, keywords
/// and numbers of the two formats, so that the parsers see near-valid input.
std::string mutateText(std::string text, std::mt19937_64 &rng) {
  static const char *const kTokens[] = {"{",
                                        "}",
                                        "[",
                                        "]",
                                        "(",
                                        ")",
                                        ",",
                                        ":",
                                        "\"",
                                        "'",
                                        "\\",
                                        "\\u",
                                        "\\ud800",
                                        "\\udc00",
                                        "-",
                                        "0",
                                        "7",
                                        "1e5",
                                        ".5",
                                        " ",
                                        "\n",
                                        "null",
                                        "true",
                                        "True",
                                        "False",
                                        "\"F32\"",
                                        "\"F64\"",
                                        "\"BF16\"",
                                        "'<f4'",
                                        "'>f4'",
                                        "\xff",
                                        "\xc3\xa9",
                                        "L",
                                        "\"dtype\"",
                                        "\"shape\"",
                                        "\"__metadata__\"",
                                        "\"data_offsets\"",
                                        "'shape'",
                                        "18446744073709551615",
                                        "9223372036854775807",
                                        "4294967296"};
  int count = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < count; ++i) {
    size_t at = rng() % (text.size() + 1);
    const char *token = kTokens[rng() % (sizeof(kTokens) / sizeof(*kTokens))];
    switch (rng() % 4) {
    case 0:
      text.insert(at, token);
      break;
    case 1:
      text.erase(at, 1 + rng() % 3);
      break;
    case 2:
      if (at < text.size())
        text[at] = rng() % 2 ? token[0] : static_cast<char>(rng());
      break;
    default:
      if (!text.empty())
        text.insert(at, text.substr(rng() % text.size(), 1 + rng() % 8));
      break;
    }
  }
  return text;
}

TEST(Safetensors, RandomMutationsNeverCrash) {
  std::string valid = smallSafetensors();
  // Most mutations hit the length and the header, where the parser works.
  uint64_t headerEnd = 8;
  for (int i = 7; i >= 0; --i)
    headerEnd += static_cast<uint64_t>(static_cast<unsigned char>(valid[i]))
                 << (8 * i);
  std::mt19937_64 rng(20261202);
  int accepted = 0, rejected = 0;
  TempDir dir;
  std::string path = dir.file("fuzz.safetensors");
  int iterations = fuzzIterations();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    // Half the time, bytes of the file; otherwise the header's text, with
    // the length fixed so that the parser sees the edit.
    std::string bytes =
        iteration % 2
            ? mutate(valid, headerEnd, rng)
            : safetensorsFile(mutateText(valid.substr(8, headerEnd - 8), rng),
                              valid.substr(headerEnd));
    StatusOr<SafetensorsReader> reader =
        SafetensorsReader::openMemory(bytes, "fuzz");
    if (reader.isOk()) {
      ++accepted;
      exerciseReader(*reader, rng);
    } else {
      ++rejected;
      EXPECT_FALSE(reader.status().message().empty());
    }
    if (iteration % 10 == 0) { // the file path too, less often
      writeFile(path, bytes);
      StatusOr<SafetensorsReader> onDisk = SafetensorsReader::open(path);
      EXPECT_EQ(onDisk.isOk(), reader.isOk());
      if (onDisk.isOk())
        exerciseReader(*onDisk, rng);
    }
  }
  // Both outcomes occur, so the loop exercises the parser and the readers.
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 1000);
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// A .npy file from its version and header text (no padding added).
std::string npyFile(int major, const std::string &header,
                    const std::string &data = "") {
  std::string bytes = std::string("\x93NUMPY", 6);
  bytes += static_cast<char>(major);
  bytes += '\0';
  int lengthBytes = major == 1 ? 2 : 4;
  for (int i = 0; i < lengthBytes; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

TEST(Npy, RoundTripEveryDTypeAndRank) {
  std::mt19937_64 rng(11);
  TempDir dir;
  for (DType dtype : kNpyDTypes) {
    for (int rank = 0; rank <= 4; ++rank) {
      for (bool empty : {false, true}) {
        if (empty && rank == 0)
          continue;
        std::vector<int64_t> shape;
        for (int d = 0; d < rank; ++d)
          shape.push_back(
              empty && d == rank - 1 ? 0 : 1 + static_cast<int64_t>(rng() % 5));
        SCOPED_TRACE(std::string(dtypeName(dtype)) + " " + formatShape(shape));
        std::vector<uint8_t> data =
            randomBytes(rng, product(shape) * dtypeSize(dtype));
        std::string path = dir.file("a.npy");
        Status written = writeNpy(path, dtype, shape, data.data());
        ASSERT_TRUE(written.isOk()) << written.toString();
        StatusOr<std::string> bytes = serializeNpy(dtype, shape, data.data());
        ASSERT_TRUE(bytes.isOk());
        EXPECT_EQ(readFile(path), *bytes);

        StatusOr<NpyInfo> info = readNpyInfo(path);
        ASSERT_TRUE(info.isOk()) << info.status().toString();
        EXPECT_EQ(info->dtype, dtype);
        EXPECT_EQ(info->shape, shape);
        EXPECT_EQ(info->majorVersion, 1);
        EXPECT_EQ(info->dataOffset % 64, 0); // NumPy's alignment
        EXPECT_EQ(info->numBytes, static_cast<int64_t>(data.size()));
        EXPECT_EQ((*bytes)[info->dataOffset - 1], '\n');

        StatusOr<NpyArray> owned = readNpy(path);
        ASSERT_TRUE(owned.isOk()) << owned.status().toString();
        EXPECT_EQ(owned->dtype, dtype);
        EXPECT_EQ(owned->shape, shape);
        EXPECT_EQ(owned->data, data);
        EXPECT_EQ(owned->ref().numBytes(), static_cast<int64_t>(data.size()));

        std::vector<uint8_t> out(data.size());
        ASSERT_TRUE(readNpy(path, TensorRef{out.data(), dtype, shape}).isOk());
        EXPECT_EQ(out, data);
        std::fill(out.begin(), out.end(), 0);
        NpyInfo readInfo;
        ASSERT_TRUE(readNpy(path, out.data(), out.size(), &readInfo).isOk());
        EXPECT_EQ(out, data);
        EXPECT_EQ(readInfo.shape, shape);

        StatusOr<NpyArray> parsed = parseNpy(*bytes);
        ASSERT_TRUE(parsed.isOk());
        EXPECT_EQ(parsed->data, data);
      }
    }
  }
}

TEST(Npy, HeaderIsWhatNumpyWrites) {
  float x[6] = {};
  StatusOr<std::string> bytes = serializeNpy(DType::F32, {2, 3}, x);
  ASSERT_TRUE(bytes.isOk());
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                     "3), }" +
                     std::string(20, ' ');
  std::string header =
      dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  EXPECT_EQ(*bytes, npyFile(1, header, std::string(24, '\0')));
  bytes = serializeNpy(DType::I64, {}, x);
  ASSERT_TRUE(bytes.isOk());
  EXPECT_NE(bytes->find("'descr': '<i8', 'fortran_order': False, 'shape': (), "
                        "}"),
            std::string::npos);
  bytes = serializeNpy(DType::F16, {7}, x);
  ASSERT_TRUE(bytes.isOk());
  EXPECT_NE(bytes->find("'shape': (7,), }"), std::string::npos);
}

TEST(Npy, ReadsVersions2And3AndLiteralVariants) {
  std::string data(8, '\x01');
  for (int major : {1, 2, 3}) {
    for (const char *header :
         {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n",
          "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<i4\"}",
          "{'shape':(2L,),'descr':'<i4','fortran_order':False}",
          "  {\n\t'descr' : '<i4' ,\r\n 'fortran_order':False,'shape':( 2 , "
          ")}   \n",
          "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
          "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 2), }"}) {
      SCOPED_TRACE(std::to_string(major) + ": " + header);
      StatusOr<NpyArray> array = parseNpy(npyFile(major, header, data));
      ASSERT_TRUE(array.isOk()) << array.status().toString();
      EXPECT_EQ(array->data.size(), 8u);
    }
  }
  TempDir dir;
  std::string v3Header =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 1), }";
  writeFile(dir.file("v3.npy"), npyFile(3, v3Header, data));
  StatusOr<NpyInfo> info = readNpyInfo(dir.file("v3.npy"));
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->majorVersion, 3);
  EXPECT_EQ(info->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(info->dataOffset, static_cast<int64_t>(12 + v3Header.size()));
}

TEST(Npy, BoolsAreReadAsZeroOrOne) {
  // numpy writes booleans as '|b1', one byte each; any nonzero byte is true.
  std::string data("\x00\x01\x02\x00\xff\x01", 6);
  StatusOr<NpyArray> array = parseNpy(npyFile(
      1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }", data));
  ASSERT_TRUE(array.isOk()) << array.status().toString();
  EXPECT_EQ(array->dtype, DType::I32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(array->data.size(), 24u);
  std::vector<int32_t> values(6);
  std::memcpy(values.data(), array->data.data(), 24);
  EXPECT_EQ(values, (std::vector<int32_t>{0, 1, 1, 0, 1, 1}));
  // A round trip writes them back as i32.
  StatusOr<std::string> again =
      serializeNpy(array->dtype, array->shape, array->data.data());
  ASSERT_TRUE(again.isOk());
  EXPECT_NE(again->find("'descr': '<i4'"), std::string::npos);
}

TEST(Npy, Bf16HasNoNpyType) {
  uint16_t x[2] = {};
  Status status = writeNpy("unused.npy", DType::BF16, {2}, x);
  EXPECT_EQ(status.code(), StatusCode::Unimplemented);
  EXPECT_EQ(status.message(),
            "unused.npy: bf16 has no .npy type; pass bf16 data as "
            "safetensors");
  EXPECT_FALSE(serializeNpy(DType::BF16, {2}, x).isOk());
  EXPECT_EQ(npyDescr(DType::BF16), nullptr);
}

TEST(Npy, ReadAndWriteErrors) {
  TempDir dir;
  std::string path = dir.file("x.npy");
  int32_t x[6] = {};
  ASSERT_TRUE(writeNpy(path, DType::I32, {2, 3}, x).isOk());
  EXPECT_ERROR(readNpy(path, TensorRef{x, DType::I32, {3, 2}}),
               "array is [2, 3] of i32 but the destination is [3, 2] of i32");
  EXPECT_ERROR(readNpy(path, TensorRef{x, DType::F32, {2, 3}}),
               "destination is [2, 3] of f32");
  EXPECT_ERROR(readNpy(path, x, 20), "has 24 bytes but the destination has 20");
  EXPECT_ERROR(readNpy(path, nullptr, 24), "null destination");
  StatusOr<NpyArray> missing = readNpy(dir.file("none.npy"));
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
  EXPECT_ERROR(readNpyInfo(dir.path()).status(), "not a regular file");
  EXPECT_ERROR(writeNpy(dir.file("no/such/dir.npy"), DType::I32, {2}, x),
               "cannot create");
  EXPECT_ERROR(writeNpy(path, DType::I32, {-2}, x), "invalid shape");
  EXPECT_ERROR(writeNpy(path, DType::I32, {2}, nullptr), "no data");
  EXPECT_ERROR(writeNpy(path, DType::I32, std::vector<int64_t>(65, 1), x),
               "more than 64 dimensions");
  EXPECT_TRUE(writeNpy(path, DType::I32, {0, 2}, nullptr).isOk());
}

TEST(Npy, WriteReplacesTheFileWhole) {
  // A reader that opened the old file keeps reading all of it while a new
  // one is written (a rename, not a truncation in place), and no temporary
  // file is left beside it.
  TempDir dir;
  std::string path = dir.file("y.npy");
  int32_t old[4] = {1, 2, 3, 4}, fresh[2] = {5, 6};
  ASSERT_TRUE(writeNpy(path, DType::I32, {4}, old).isOk());
  StatusOr<NpyInfo> before = readNpyInfo(path);
  ASSERT_TRUE(before.isOk());
  int reader = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(writeNpy(path, DType::I32, {2}, fresh).isOk());
  struct stat st;
  ASSERT_EQ(::fstat(reader, &st), 0);
  EXPECT_EQ(st.st_size, before->dataOffset + 16)
      << "the old file was truncated under its reader";
  ::close(reader);
  StatusOr<NpyArray> now = readNpy(path);
  ASSERT_TRUE(now.isOk());
  EXPECT_EQ(now->shape, std::vector<int64_t>{2});
  size_t files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path()))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);
  // A device is written in place, never replaced by a regular file.
  ASSERT_TRUE(writeNpy("/dev/null", DType::I32, {2}, fresh).isOk());
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

std::vector<MalformedCase> malformedNpy() {
  auto file = [](const std::string &header, size_t dataBytes = 8) {
    return npyFile(1, header, std::string(dataBytes, 'd'));
  };
  auto dict = [&](const std::string &descr, const std::string &order,
                  const std::string &shape, size_t dataBytes = 8) {
    return file("{'descr': " + descr + ", 'fortran_order': " + order +
                    ", 'shape': " + shape + ", }",
                dataBytes);
  };
  std::string manyDims = "(";
  for (int i = 0; i < 65; ++i)
    manyDims += "1, ";
  manyDims += ")";
  return {
      {"empty file", "", "too few for a .npy preamble"},
      {"9 bytes", std::string("\x93NUMPY\x01\x00\x00", 9),
       "too few for a .npy preamble"},
      {"bad magic", std::string("\x93NUMPZ\x01\x00\x02\x00{}", 12),
       "no \\x93NUMPY magic"},
      {"text file", "just some text, not numpy", "magic"},
      {"version 0.0", std::string("\x93NUMPY\x00\x00\x00\x00", 10),
       ".npy version 0.0 is not supported"},
      {"version 4.0", std::string("\x93NUMPY\x04\x00\x00\x00", 10),
       "version 4.0"},
      {"version 1.1", std::string("\x93NUMPY\x01\x01\x00\x00", 10),
       "version 1.1"},
      {"version 2 preamble cut", std::string("\x93NUMPY\x02\x00\x00\x00", 10),
       "too few for a version 2.0 preamble of 12 bytes"},
      {"header length past the end",
       std::string("\x93NUMPY\x01\x00\xff\x00", 10) + "{}",
       "header length 255 but only 2 bytes follow the preamble"},
      {"header length above the limit",
       std::string("\x93NUMPY\x02\x00\x00\x00\x00\x10", 12),
       "exceeds the limit"},
      {"empty header", npyFile(1, ""), "expected '{' at the start"},
      {"not a dict", file("['descr']"), "expected '{'"},
      {"fortran order", dict("'<f4'", "True", "(2,)"),
       "array is in Fortran order; only C order is supported"},
      {"big-endian", dict("'>f4'", "False", "(2,)"),
       "descr '>f4' is big-endian; only little-endian data is supported"},
      {"big-endian int", dict("'>i8'", "False", "(1,)"), "big-endian"},
      {"float64", dict("'<f8'", "False", "(1,)"),
       "descr '<f8' is not supported (supported: '<f4', '<f2', '<i4', '<i8', "
       "'|b1'; bf16 data is passed as safetensors)"},
      {"bool data short", dict("'|b1'", "False", "(9,)"),
       "shape [9] of bool needs 9 bytes of data but the file has 8"},
      {"bool data as i32", dict("'|b1'", "False", "(2,)"),
       "shape [2] of bool needs 2 bytes of data but the file has 8"},
      {"uint8", dict("'|u1'", "False", "(8,)"), "'|u1'"},
      {"native order", dict("'=f4'", "False", "(2,)"), "'=f4'"},
      {"no byte order", dict("'f4'", "False", "(2,)"), "'f4'"},
      {"complex", dict("'<c8'", "False", "(1,)"), "'<c8'"},
      {"structured", dict("[('a', '<f4')]", "False", "(2,)"),
       "structured dtypes are not supported"},
      {"descr not a string", dict("4", "False", "(2,)"),
       "expected a quoted string"},
      {"missing descr", file("{'fortran_order': False, 'shape': (2,), }"),
       "header has no 'descr'"},
      {"missing shape", file("{'descr': '<f4', 'fortran_order': False}"),
       "has no 'shape'"},
      {"missing fortran_order", file("{'descr': '<f4', 'shape': (2,)}"),
       "has no 'fortran_order'"},
      {"extra key",
       file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"),
       "unknown key 'x'"},
      {"duplicate key",
       file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
            "'shape': (2,)}"),
       "'descr' appears twice"},
      {"shape a list", dict("'<f4'", "False", "[2]"),
       "'shape' must be a tuple"},
      {"shape an int", dict("'<f4'", "False", "2"), "must be a tuple"},
      {"parenthesised int", dict("'<f4'", "False", "(2)"),
       "'shape' (2) is not a tuple; a 1-tuple is written (2,)"},
      {"negative dimension", dict("'<f4'", "False", "(-2,)"),
       "negative dimension"},
      {"float dimension", dict("'<f4'", "False", "(2.0,)"),
       "expected ',' or ')'"},
      {"string dimension", dict("'<f4'", "False", "('2',)"),
       "must hold non-negative integers"},
      {"leading zero", dict("'<f4'", "False", "(02,)"), "leading zero"},
      {"double comma", dict("'<f4'", "False", "(2,,)"),
       "must hold non-negative integers"},
      {"unterminated tuple",
       file("{'descr': '<f4', 'fortran_order': False, "
            "'shape': (2,"),
       "unterminated tuple"},
      {"dimension too large", dict("'<f4'", "False", "(9223372036854775808,)"),
       "is too large"},
      {"size overflows", dict("'<f4'", "False", "(4294967296, 4294967296, 4)"),
       "shape [4294967296, 4294967296, 4] of f32 has a size in bytes that "
       "overflows 64 bits"},
      {"65 dimensions", dict("'<f4'", "False", manyDims, 4),
       "more than 64 dimensions"},
      {"fortran_order an int", dict("'<f4'", "0", "(2,)"),
       "'fortran_order' must be True or False"},
      {"fortran_order a string", dict("'<f4'", "'False'", "(2,)"),
       "True or False"},
      {"fortran_order prefix", dict("'<f4'", "Falsey", "(2,)"),
       "True or False"},
      {"unterminated string", file("{'descr: '<f4'}"), "expected ':'"},
      {"escape in string", file("{'de\\scr': '<f4'}"),
       "escape sequences are not supported"},
      {"unterminated dict",
       file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"),
       "unterminated dict"},
      {"missing comma",
       file("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}"),
       "expected ',' or '}'"},
      {"data after the dict",
       file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x"),
       "unexpected data after the dict"},
      {"too little data", dict("'<f4'", "False", "(3,)"),
       "shape [3] of f32 needs 12 bytes of data but the file has 8"},
      {"too much data", dict("'<f4'", "False", "(1,)"),
       "needs 4 bytes of data but the file has 8"},
  };
}

TEST(Npy, MalformedFilesAreErrors) {
  TempDir dir;
  std::string path = dir.file("bad.npy");
  for (const MalformedCase &c : malformedNpy()) {
    SCOPED_TRACE(c.what);
    StatusOr<NpyArray> inMemory = parseNpy(c.bytes, "bad.npy");
    ASSERT_FALSE(inMemory.isOk());
    EXPECT_EQ(inMemory.status().message().rfind("bad.npy: ", 0), 0u)
        << inMemory.status().message();
    EXPECT_NE(inMemory.status().message().find(c.message), std::string::npos)
        << "message: " << inMemory.status().message();
    writeFile(path, c.bytes);
    StatusOr<NpyArray> onDisk = readNpy(path);
    ASSERT_FALSE(onDisk.isOk());
    EXPECT_EQ(onDisk.status().message(),
              path +
                  inMemory.status().message().substr(std::strlen("bad.npy")));
  }
}

TEST(Npy, EveryTruncationIsAnError) {
  float x[5] = {1, 2, 3, 4, 5};
  std::string valid = *serializeNpy(DType::F32, {5}, x);
  ASSERT_TRUE(parseNpy(valid).isOk());
  TempDir dir;
  std::string path = dir.file("cut.npy");
  for (size_t length = 0; length < valid.size(); ++length) {
    SCOPED_TRACE("length " + std::to_string(length));
    std::string cut = valid.substr(0, length);
    EXPECT_FALSE(parseNpy(cut).isOk());
    writeFile(path, cut);
    EXPECT_FALSE(readNpy(path).isOk());
    EXPECT_FALSE(readNpyInfo(path).isOk());
  }
}

TEST(Npy, RandomMutationsNeverCrash) {
  int64_t x[6] = {1, 2, 3, 4, 5, 6};
  std::string valid = *serializeNpy(DType::I64, {2, 3}, x);
  std::mt19937_64 rng(5);
  int accepted = 0, rejected = 0;
  TempDir dir;
  std::string path = dir.file("fuzz.npy");
  StatusOr<NpyInfo> validInfo = parseNpyHeader(valid, -1, "valid");
  ASSERT_TRUE(validInfo.isOk());
  std::string header = valid.substr(10, validInfo->dataOffset - 10);
  std::string data = valid.substr(validInfo->dataOffset);
  int iterations = fuzzIterations();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::string bytes = iteration % 2
                            ? mutate(valid, validInfo->dataOffset, rng)
                            : npyFile(1 + static_cast<int>(rng() % 3),
                                      mutateText(header, rng), data);
    StatusOr<NpyArray> array = parseNpy(bytes, "fuzz");
    if (array.isOk()) {
      ++accepted;
      EXPECT_EQ(static_cast<int64_t>(array->data.size()),
                product(array->shape) * dtypeSize(array->dtype));
    } else {
      ++rejected;
    }
    if (iteration % 10 == 0) {
      writeFile(path, bytes);
      StatusOr<NpyArray> onDisk = readNpy(path);
      EXPECT_EQ(onDisk.isOk(), array.isOk());
      if (onDisk.isOk() && array.isOk()) {
        EXPECT_EQ(onDisk->data, array->data);
      }
    }
  }
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 1000);
}

//===----------------------------------------------------------------------===//
// Compatibility with NumPy
//===----------------------------------------------------------------------===//

/// Shapes shared by the C++ side and the Python scripts below.
const std::vector<std::vector<int64_t>> kCompatShapes = {
    {}, {0}, {5}, {2, 3}, {2, 3, 4}, {1, 2, 3, 2}};

/// The value NumPy computes for element `i` of the test arrays:
/// arange(n) * 0.5 - 3 for floats, arange(n) * 3 - 7 for integers.
std::vector<uint8_t> expectedValues(DType dtype, int64_t n) {
  std::vector<uint8_t> bytes(n * dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i) {
    float f = static_cast<float>(i) * 0.5f - 3.0f;
    int64_t k = i * 3 - 7;
    uint8_t *at = bytes.data() + i * dtypeSize(dtype);
    switch (dtype) {
    case DType::F32:
      std::memcpy(at, &f, 4);
      break;
    case DType::F16: {
      uint16_t h = floatToHalf(f);
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::I32: {
      int32_t v = static_cast<int32_t>(k);
      std::memcpy(at, &v, 4);
      break;
    }
    case DType::I64:
      std::memcpy(at, &k, 8);
      break;
    case DType::BF16:
      break;
    }
  }
  return bytes;
}

const char *kPythonArrays = R"PY(
import sys, os
import numpy as np
d = sys.argv[1]
shapes = [(), (0,), (5,), (2, 3), (2, 3, 4), (1, 2, 3, 2)]
def values(descr, shape):
    n = int(np.prod(shape))
    if descr[1] == 'f':
        return (np.arange(n) * 0.5 - 3).astype(descr).reshape(shape)
    return (np.arange(n) * 3 - 7).astype(descr).reshape(shape)
)PY";

TEST(NumpyCompat, ReadsFilesNumpyWrote) {
  SKIP_WITHOUT_NUMPY();
  TempDir dir;
  std::string script = std::string(kPythonArrays) + R"PY(
for descr in ['<f4', '<f2', '<i4', '<i8']:
    for i, shape in enumerate(shapes):
        a = values(descr, shape)
        np.save(os.path.join(d, 'v1_%s_%d.npy' % (descr[1:], i)), a)
        for version in [(2, 0), (3, 0)]:
            with open(os.path.join(d, 'v%d_%s_%d.npy' % (version[0], descr[1:], i)), 'wb') as f:
                np.lib.format.write_array(f, a, version=version)
a = values('<f4', (2, 3))
np.save(os.path.join(d, 'fortran.npy'), np.asfortranarray(a))
np.save(os.path.join(d, 'big.npy'), a.astype('>f4'))
np.save(os.path.join(d, 'f8.npy'), a.astype('<f8'))
np.save(os.path.join(d, 'bool.npy'), a >= -2)
print('ok')
)PY";
  std::string output;
  ASSERT_EQ(runPython(dir, script, output), 0) << output;
  int files = 0;
  for (DType dtype : kNpyDTypes) {
    for (size_t i = 0; i < kCompatShapes.size(); ++i) {
      for (int major : {1, 2, 3}) {
        std::string name = "v" + std::to_string(major) + "_" +
                           std::string(npyDescr(dtype) + 1) + "_" +
                           std::to_string(i) + ".npy";
        SCOPED_TRACE(name);
        StatusOr<NpyArray> array = readNpy(dir.file(name));
        ASSERT_TRUE(array.isOk()) << array.status().toString();
        EXPECT_EQ(array->dtype, dtype);
        EXPECT_EQ(array->shape, kCompatShapes[i]);
        EXPECT_EQ(array->data,
                  expectedValues(dtype, product(kCompatShapes[i])));
        EXPECT_EQ(readNpyInfo(dir.file(name))->majorVersion, major);
        ++files;
      }
    }
  }
  EXPECT_EQ(files, 4 * 6 * 3);
  EXPECT_ERROR(readNpy(dir.file("fortran.npy")).status(), "Fortran order");
  EXPECT_ERROR(readNpy(dir.file("big.npy")).status(), "big-endian");
  EXPECT_ERROR(readNpy(dir.file("f8.npy")).status(), "'<f8' is not supported");
  // Booleans (an attention mask) are read as i32 0 / 1, or as 0 / 1 of the
  // destination's dtype.
  StatusOr<NpyArray> mask = readNpy(dir.file("bool.npy"));
  ASSERT_TRUE(mask.isOk()) << mask.status().toString();
  EXPECT_EQ(mask->dtype, DType::I32);
  EXPECT_EQ(mask->shape, (std::vector<int64_t>{2, 3}));
  std::vector<int32_t> asI32(6);
  std::memcpy(asI32.data(), mask->data.data(), 24);
  EXPECT_EQ(asI32, (std::vector<int32_t>{0, 0, 1, 1, 1, 1}));
  std::vector<int64_t> asI64(6, 7);
  ASSERT_TRUE(
      readNpy(dir.file("bool.npy"), TensorRef{asI64.data(), DType::I64, {2, 3}})
          .isOk());
  EXPECT_EQ(asI64, (std::vector<int64_t>{0, 0, 1, 1, 1, 1}));
  std::vector<float> asF32(6, 7);
  ASSERT_TRUE(
      readNpy(dir.file("bool.npy"), TensorRef{asF32.data(), DType::F32, {2, 3}})
          .isOk());
  EXPECT_EQ(asF32, (std::vector<float>{0, 0, 1, 1, 1, 1}));
  NpyInfo info;
  std::fill(asI32.begin(), asI32.end(), 7);
  ASSERT_TRUE(readNpy(dir.file("bool.npy"), asI32.data(), 24, &info).isOk());
  EXPECT_EQ(asI32, (std::vector<int32_t>{0, 0, 1, 1, 1, 1}));
  EXPECT_TRUE(info.boolData);
  EXPECT_EQ(info.dataBytes, 6);
  EXPECT_EQ(info.numBytes, 24);
  EXPECT_ERROR(readNpy(dir.file("bool.npy"), asI32.data(), 6),
               "has 24 bytes but the destination has 6");
  EXPECT_ERROR(
      readNpy(dir.file("bool.npy"), TensorRef{asI32.data(), DType::I32, {3, 2}}),
      "array is [2, 3] of bool but the destination is [3, 2] of i32");
}

TEST(NumpyCompat, NumpyReadsFilesWrittenHere) {
  SKIP_WITHOUT_NUMPY();
  TempDir dir;
  for (DType dtype : kNpyDTypes)
    for (size_t i = 0; i < kCompatShapes.size(); ++i) {
      std::vector<uint8_t> data =
          expectedValues(dtype, product(kCompatShapes[i]));
      std::string name = std::string("out_") + (npyDescr(dtype) + 1) + "_" +
                         std::to_string(i) + ".npy";
      ASSERT_TRUE(writeNpy(dir.file(name), dtype, kCompatShapes[i], data.data())
                      .isOk());
    }
  std::string script = std::string(kPythonArrays) + R"PY(
import io
checked = 0
for descr in ['<f4', '<f2', '<i4', '<i8']:
    for i, shape in enumerate(shapes):
        path = os.path.join(d, 'out_%s_%d.npy' % (descr[1:], i))
        a = np.load(path)
        want = values(descr, shape)
        assert a.dtype == np.dtype(descr), (path, a.dtype)
        assert a.shape == shape, (path, a.shape)
        assert np.array_equal(a, want), (path, a, want)
        # Byte for byte what np.save writes (NumPy >= 1.23 pads the header
        # for in-place growth; older versions differ only in padding).
        if hasattr(np.lib.format, 'GROWTH_AXIS_MAX_DIGITS'):
            buf = io.BytesIO()
            np.save(buf, want)
            with open(path, 'rb') as f:
                assert f.read() == buf.getvalue(), path
        checked += 1
assert checked == 24
print('ok', checked)
)PY";
  std::string output;
  EXPECT_EQ(runPython(dir, script, output), 0) << output;
}

TEST(NumpyCompat, SafetensorsAgreeWithPythonJson) {
  SKIP_WITHOUT_NUMPY();
  TempDir dir;
  // Written here, read by Python's json module and numpy.
  SafetensorsWriter writer;
  std::vector<std::vector<uint8_t>> keep;
  for (DType dtype : kNpyDTypes)
    for (size_t i = 0; i < kCompatShapes.size(); ++i) {
      keep.push_back(expectedValues(dtype, product(kCompatShapes[i])));
      ASSERT_TRUE(writer
                      .add(std::string(dtypeName(dtype)) + "." +
                               std::to_string(i) + ".\xc3\xa9\"",
                           dtype, kCompatShapes[i], keep.back().data())
                      .isOk());
    }
  ASSERT_TRUE(writer.setMetadata("format", "pt\n\"q\"").isOk());
  ASSERT_TRUE(writer.write(dir.file("here.safetensors")).isOk());

  std::string script = std::string(kPythonArrays) + R"PY(
import json, struct
names = {'f32': '<f4', 'f16': '<f2', 'i32': '<i4', 'i64': '<i8'}
st = {'<f4': 'F32', '<f2': 'F16', '<i4': 'I32', '<i8': 'I64'}
raw = open(os.path.join(d, 'here.safetensors'), 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]
assert n % 8 == 0
header = json.loads(raw[8:8 + n].decode('utf-8'))
assert header.pop('__metadata__') == {'format': 'pt\n"q"'}
end = 0
for name, info in header.items():
    t, i, _ = name.split('.')
    descr = names[t]
    b, e = info['data_offsets']
    assert b % np.dtype(descr).itemsize == 0
    a = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=descr).reshape(info['shape'])
    assert info['dtype'] == st[descr]
    assert np.array_equal(a, values(descr, shapes[int(i)])), name
    end = max(end, e)
assert 8 + n + end == len(raw)
# Written by Python's json module (default separators, ASCII escapes, keys
# in reverse offset order), read by the C++ reader.
out, data = {'__metadata__': {'w': 'caf\u00e9 \U0001F600'}}, b''
for descr in ['<i8', '<f4', '<i4', '<f2']:
    for i, shape in enumerate(shapes):
        a = values(descr, shape)
        out['%s.%d' % (descr[1:], i)] = {'dtype': st[descr], 'shape': list(shape),
            'data_offsets': [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
text = json.dumps(dict(reversed(list(out.items())))).encode('utf-8')
with open(os.path.join(d, 'python.safetensors'), 'wb') as f:
    f.write(struct.pack('<Q', len(text)) + text + data)
print('ok')
)PY";
  std::string output;
  ASSERT_EQ(runPython(dir, script, output), 0) << output;

  StatusOr<SafetensorsReader> reader =
      SafetensorsReader::open(dir.file("python.safetensors"));
  ASSERT_TRUE(reader.isOk()) << reader.status().toString();
  EXPECT_EQ(reader->metadata().at("w"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(reader->size(), 24u);
  for (DType dtype : kNpyDTypes)
    for (size_t i = 0; i < kCompatShapes.size(); ++i) {
      std::string name =
          std::string(npyDescr(dtype) + 1) + "." + std::to_string(i);
      SCOPED_TRACE(name);
      StatusOr<SafetensorsTensorInfo> info = reader->info(name);
      ASSERT_TRUE(info.isOk()) << info.status().toString();
      EXPECT_EQ(info->dtype, dtype);
      EXPECT_EQ(info->shape, kCompatShapes[i]);
      std::vector<uint8_t> out(info->numBytes);
      ASSERT_TRUE(reader->read(name, out.data(), out.size()).isOk());
      EXPECT_EQ(out, expectedValues(dtype, product(kCompatShapes[i])));
    }
}

//===----------------------------------------------------------------------===//
// Files.h: regular files only, and names that stay inside a folder
//===----------------------------------------------------------------------===//

TEST(RegularFile, RejectsFoldersDevicesAndFifosWithoutBlocking) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-regular-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  struct Case {
    std::string path, kind;
  } cases[] = {{dir.string(), "is a directory"},
               {"/dev/zero", "is a character device"},
               {fifo.string(), "is a FIFO"}};
  for (const Case &c : cases) {
    auto file = RegularFile::open(c.path, "plan file");
    ASSERT_FALSE(file.isOk()) << c.path;
    EXPECT_EQ(file.status().message(),
              c.path + ": the plan file " + c.kind + ", not a regular file");
    // The readers of every format go through it.
    EXPECT_NE(readNpy(c.path).status().message().find(c.kind),
              std::string::npos);
    EXPECT_NE(SafetensorsReader::open(c.path).status().message().find(c.kind),
              std::string::npos);
  }
  auto missing = RegularFile::open((dir / "none").string(), "plan file");
  EXPECT_EQ(missing.status().code(), StatusCode::NotFound);
  // A regular file reads whole, up to a bound.
  std::ofstream(dir / "ten") << "0123456789";
  auto ten = readRegularFile((dir / "ten").string(), "file", 10);
  ASSERT_TRUE(ten.isOk()) << ten.status().toString();
  EXPECT_EQ(ten->size(), 10u);
  EXPECT_NE(readRegularFile((dir / "ten").string(), "file", 9)
                .status()
                .message()
                .find("10 bytes is more than the 9 bytes"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(OutputFiles, RefusedBeforeAnyWorkWithoutBlocking) {
  fs::path dir = fs::temp_directory_path() /
                 ("partition-output-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string fifo = (dir / "fifo").string(), in = (dir / "in").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(in) << "model";
  ASSERT_EQ(::symlink(in.c_str(), (dir / "link").c_str()), 0);
  // A FIFO nobody reads, a folder, a missing folder: one line each.
  struct Case {
    std::string path, why;
  } cases[] = {
      {fifo, "it is a FIFO that no process reads"},
      {dir.string(), "it is a directory"},
      {(dir / "none" / "x").string(), "its directory"},
  };
  for (const Case &c : cases) {
    StatusOr<OutputFile> file = checkOutputFile(c.path, "--json");
    ASSERT_FALSE(file.isOk()) << c.path;
    EXPECT_NE(file.status().message().find("cannot write " + c.path +
                                           " (--json): " + c.why),
              std::string::npos)
        << file.status().message();
  }
  // Outputs onto an input or each other, by identity (a link, `./`, `..`).
  std::string viaDots = (dir / "none" / ".." / "out").string();
  ASSERT_TRUE(fs::create_directories(dir / "none"));
  EXPECT_EQ(checkOutputFiles({{"--html", (dir / "link").string()}},
                             {{"the model", in}})
                .status()
                .message(),
            "--html " + (dir / "link").string() + " and the model " + in +
                " name the same file");
  EXPECT_FALSE(checkOutputFiles(
                   {{"-o", (dir / "out").string()}, {"--json", viaDots}}, {})
                   .isOk());
  EXPECT_FALSE(checkOutputFiles({{"-o", "-"}, {"--json", "-"}}, {}).isOk());
  // Devices may be shared; an input that does not exist names no file.
  EXPECT_TRUE(checkOutputFiles({{"-o", "/dev/null"}, {"--json", "/dev/null"}},
                               {{"--cluster", "dgx-h100"}})
                  .isOk());
  // A write error is an error naming the output (never a partial file).
  StatusOr<std::vector<OutputFile>> full =
      checkOutputFiles({{"--json", "/dev/full"}, {"-o", in}}, {});
  ASSERT_TRUE(full.isOk()) << full.status().toString();
  std::string bytes = "new";
  Status written = writeOutputFiles(
      {{&(*full)[0], bytes.data(), 3}, {&(*full)[1], bytes.data(), 3}});
  EXPECT_EQ(written.message(),
            "cannot write /dev/full (--json): No space left on device");
  std::ifstream kept(in);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "model");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 4); // no temps
  fs::remove_all(dir);
}

TEST(FileNames, OnlyPlainNamesStayInsideTheFolder) {
  for (const char *good : {"y", "new.w", "layers.0.weight", "a b", "..x"})
    EXPECT_TRUE(checkFileNameComponent(good, "output").isOk()) << good;
  struct Case {
    std::string name, expected;
  } cases[] = {
      {"", "output: an empty name cannot be a file name"},
      {".", "output: \".\" cannot be a file name inside the directory"},
      {"..", "output: \"..\" cannot be a file name inside the directory"},
      {"../../x/ESCAPE", "output: the name has a '/' at byte 2"},
      {"/etc/passwd", "output: the name has a '/' at byte 0"},
      {"a\\b", "output: the name has a '\\' at byte 1"},
      {std::string("a\nb"), "the control character 0x0a at byte 1"},
      {std::string("a\x7f"), "the control character 0x7f at byte 1"},
  };
  for (const Case &c : cases) {
    Status s = checkFileNameComponent(c.name, "output");
    ASSERT_FALSE(s.isOk()) << c.name;
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
}

} // namespace
