//===- NpyFuzzer.cpp - fuzz the .npy reader -------------------------------===//
//
// Input: the bytes of a .npy file. Parses the header alone and the whole
// file; an accepted array must serialize and parse back to the same dtype,
// shape and data, and a rejected one must say why.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Npy.h"

#include <string>

using namespace partition::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);

  StatusOr<NpyInfo> info =
      parseNpyHeader(bytes, static_cast<int64_t>(size), "fuzz.npy");
  FUZZ_CHECK(info.isOk() || !info.status().message().empty(),
             "header error without a message");
  // Only the header's bytes, with the file size checked separately.
  if (info.isOk())
    (void)parseNpyHeader(bytes.substr(0, info->dataOffset),
                         static_cast<int64_t>(size), "fuzz.npy");

  StatusOr<NpyArray> array = parseNpy(bytes, "fuzz.npy");
  FUZZ_CHECK(array.isOk() || !array.status().message().empty(),
             "error without a message");
  if (!array.isOk())
    return 0;
  FUZZ_CHECK(info.isOk(), "file accepted whose header was rejected");
  FUZZ_CHECK(info->numBytes == static_cast<int64_t>(array->data.size()),
             "header and array disagree on the data size");

  StatusOr<std::string> again =
      serializeNpy(array->dtype, array->shape, array->data.data());
  FUZZ_CHECK(again.isOk(), "an accepted array does not serialize");
  StatusOr<NpyArray> back = parseNpy(*again, "round trip");
  FUZZ_CHECK(back.isOk(), "a serialized array does not parse");
  FUZZ_CHECK(back->dtype == array->dtype && back->shape == array->shape &&
                 back->data == array->data,
             "the round trip changed the array");
  return 0;
}
