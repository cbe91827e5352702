//===- SafetensorsFuzzer.cpp - fuzz the safetensors reader ----------------===//
//
// Input: the bytes of a safetensors file. Opens it from memory, reads every
// tensor whole and as a slice (the first half of each dimension), and writes
// the readable tensors and the metadata back: the rewritten file must open
// and hold the same tensors.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Safetensors.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace partition::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StatusOr<SafetensorsReader> reader = SafetensorsReader::openMemory(
      std::string(reinterpret_cast<const char *>(data), size),
      "fuzz.safetensors");
  FUZZ_CHECK(reader.isOk() || !reader.status().message().empty(),
             "error without a message");
  if (!reader.isOk())
    return 0;

  struct Read {
    SafetensorsTensorInfo info;
    std::vector<char> bytes;
  };
  std::map<std::string, Read> tensors;
  for (const std::string &name : reader->names()) {
    FUZZ_CHECK(reader->contains(name), "a listed tensor is not found");
    StatusOr<SafetensorsTensorInfo> info = reader->info(name);
    if (!info.isOk())
      continue; // a dtype the runtime does not read, e.g. F64
    // The data section lies inside the input, so this is at most its size.
    FUZZ_CHECK(info->numBytes >= 0 &&
                   static_cast<uint64_t>(info->numBytes) <= size,
               "a tensor is larger than the file");
    Read &read = tensors[name];
    read.info = *info;
    read.bytes.resize(info->numBytes);
    Status whole = reader->read(name, read.bytes.data(), info->numBytes);
    FUZZ_CHECK(whole.isOk(), "a validated tensor cannot be read");
    // A wrong destination size is an error, not a write past the end.
    std::vector<char> small(info->numBytes / 2);
    if (info->numBytes > 0)
      FUZZ_CHECK(!reader->read(name, small.data(), small.size()).isOk(),
                 "a read into a short buffer succeeded");

    std::vector<int64_t> offsets(info->shape.size(), 0), sizes;
    int64_t sliceBytes = dtypeSize(info->dtype);
    for (int64_t dim : info->shape) {
      sizes.push_back((dim + 1) / 2);
      sliceBytes *= sizes.back();
    }
    std::vector<char> slice(sliceBytes);
    for (int64_t gap : {int64_t(0), int64_t(64)}) {
      SliceReadOptions options;
      options.maxGapBytes = gap;
      options.maxStagingBytes = 256;
      Status s = reader->readSlice(name, offsets, sizes, slice.data(),
                                   sliceBytes, options);
      FUZZ_CHECK(s.isOk(), "a slice of a validated tensor cannot be read");
    }
    // Out of range: one past the end of dimension 0.
    if (!info->shape.empty()) {
      offsets[0] = info->shape[0];
      sizes[0] = 1;
      FUZZ_CHECK(!reader
                      ->readSlice(name, offsets, sizes, slice.data(),
                                  sliceBytes, SliceReadOptions())
                      .isOk(),
                 "a slice past the end was read");
    }
  }

  SafetensorsWriter writer;
  for (auto &[name, read] : tensors)
    FUZZ_CHECK(
        writer.add(name, read.info.dtype, read.info.shape, read.bytes.data())
            .isOk(),
        "a tensor read from a file cannot be written");
  for (auto &[key, value] : reader->metadata())
    FUZZ_CHECK(writer.setMetadata(key, value).isOk(),
               "metadata read from a file cannot be written");
  StatusOr<std::string> rewritten = writer.serialize();
  FUZZ_CHECK(rewritten.isOk(), "the rewritten file cannot be serialized");
  StatusOr<SafetensorsReader> again =
      SafetensorsReader::openMemory(*rewritten, "rewritten");
  FUZZ_CHECK(again.isOk(), "the rewritten file does not open");
  FUZZ_CHECK(again->size() == tensors.size() &&
                 again->metadata() == reader->metadata(),
             "the rewritten file lists other tensors or metadata");
  for (auto &[name, read] : tensors) {
    std::vector<char> bytes(read.bytes.size());
    FUZZ_CHECK(again->read(name, bytes.data(), bytes.size()).isOk() &&
                   bytes == read.bytes,
               "the rewritten file holds other data");
  }
  return 0;
}
