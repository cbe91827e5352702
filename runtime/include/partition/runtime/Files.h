//===- Files.h - safe reading of untrusted files and naming of outputs -*- C++
//-*-===//
//
// Every file the runtime reads (plans, safetensors, .npy, checkpoint
// manifests, --data) comes from users or other tools and is opened here:
// only regular files are read (a directory, a device or a FIFO is an error,
// never a hang or an endless read), and sizes read from a file are checked
// against the file's size before anything is allocated. Names taken from
// plans or models that become file names are checked here too.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_FILES_H
#define PARTITION_RUNTIME_FILES_H

#include "partition/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::runtime {

/// An open regular file, closed on destruction.
class RegularFile {
public:
  /// Opens `path` for reading; `what` ("plan", "weights file", ...) names the
  /// file in messages. Fails with a diagnostic for a missing file, a
  /// directory, a device, a FIFO or a socket, without blocking on any of
  /// them.
  static StatusOr<RegularFile> open(const std::string &path, const char *what);

  RegularFile(RegularFile &&other) noexcept;
  RegularFile &operator=(RegularFile &&other) noexcept;
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;
  ~RegularFile();

  /// The descriptor; ownership stays here.
  int fd() const { return fd_; }
  /// Gives up ownership of the descriptor.
  int release();
  /// The size in bytes when the file was opened.
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }

  /// Reads the whole file (at most `maxBytes`; larger is an error naming
  /// both sizes).
  StatusOr<std::vector<uint8_t>> readAll(uint64_t maxBytes);

private:
  RegularFile() = default;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

/// Reads the whole regular file `path` (see RegularFile::open and readAll).
StatusOr<std::vector<uint8_t>>
readRegularFile(const std::string &path, const char *what, uint64_t maxBytes);

/// Checks that `name`, which comes from a plan, a model or a checkpoint, can
/// be used as one file name inside a directory: not empty, not "." or "..",
/// no '/', '\\' or control characters. The error names `what` (e.g.
/// `output "x"`) and the offending character.
Status checkFileNameComponent(const std::string &name, const std::string &what);

/// 64-bit FNV-1a of `bytes`, continuing from `hash` (start with
/// kFnv1a64Offset). Any change of one byte changes the result.
constexpr uint64_t kFnv1a64Offset = 0xcbf29ce484222325ull;
inline uint64_t fnv1a64(const void *bytes, uint64_t size,
                        uint64_t hash = kFnv1a64Offset) {
  const auto *p = static_cast<const unsigned char *>(bytes);
  for (uint64_t i = 0; i < size; ++i)
    hash = (hash ^ p[i]) * 0x100000001b3ull;
  return hash;
}

/// The checksum of a whole regular file, or an error naming it.
StatusOr<uint64_t> fileChecksum(const std::string &path);

/// fsyncs directory `dir` (so that a rename inside it survives a crash).
Status syncDirectory(const std::string &dir);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_FILES_H
