//===- CheckpointManifestFuzzer.cpp - fuzz manifest.json parsing ----------===//
//
// Input: the text of a checkpoint's manifest.json. An accepted manifest must
// write back (toJson) to text that parses again and writes the same text.
//
//===----------------------------------------------------------------------===//

#include "FuzzCheck.h"

#include "partition/runtime/Checkpoint.h"

#include <string>

using namespace partition::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  StatusOr<CheckpointManifest> manifest =
      CheckpointManifest::parse(json, "fuzz/manifest.json");
  FUZZ_CHECK(manifest.isOk() || !manifest.status().message().empty(),
             "error without a message");
  if (!manifest.isOk())
    return 0;
  for (const CheckpointTensor &tensor : manifest->tensors)
    FUZZ_CHECK(manifest->find(tensor.name) == &tensor,
               "a listed tensor is not found by name");

  std::string written = manifest->toJson();
  StatusOr<CheckpointManifest> again =
      CheckpointManifest::parse(written, "rewritten manifest.json");
  FUZZ_CHECK(again.isOk(), "a written manifest does not parse");
  FUZZ_CHECK(again->toJson() == written,
             "the manifest changed in a write and read");
  return 0;
}
