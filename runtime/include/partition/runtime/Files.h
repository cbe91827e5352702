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
#include <memory>
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

//===----------------------------------------------------------------------===//
// Output files of the tools
//===----------------------------------------------------------------------===//

/// One output path of a tool (`-o`, `--html`, `--json`, `--trace`, ...),
/// checked by checkOutputFiles before any work starts.
struct OutputFile {
  enum class Kind {
    /// `-`: standard output.
    Stdout,
    /// A character device (`/dev/null`) or a FIFO: written in place, never
    /// replaced.
    InPlace,
    /// A regular file or a new path: written to a temporary file beside
    /// `target` and renamed onto it.
    Replace,
  };
  /// The path as the user gave it.
  std::string path;
  /// The option that named it (`-o`, `--weights`), for diagnostics.
  std::string option;
  Kind kind = Kind::Replace;
  /// Where the data goes: `path` with symbolic links resolved, so that
  /// replacing a file reached through a link keeps the link.
  std::string target;
  /// A FIFO opened for writing when it was checked (a process was reading
  /// it then): kept open so that writing it later cannot wait for a reader.
  std::shared_ptr<int> fifo;
};

/// Checks that `path` can be written before anything is computed: `-`, a
/// new name in an existing writable directory, a writable regular file, a
/// character device, or a FIFO that a process reads now. A directory, a
/// socket, a block device, a FIFO without a reader (writing it would block
/// forever) or a dangling link is an error "cannot write PATH (OPTION):
/// why".
StatusOr<OutputFile> checkOutputFile(const std::string &path,
                                     const std::string &option);

/// A file a tool reads or writes, named by the option that gave it
/// (`"-o"`, `"the model"`).
struct NamedPath {
  std::string option;
  std::string path;
};

/// Checks every output (checkOutputFile) and that no two of them, and no
/// output and one of `inputs`, are the same file: compared by identity
/// (device and inode; for a new path, its directory's and its name), never
/// by spelling. Character devices may be shared (`/dev/null`); `-` may not.
/// The error names both options and paths: "--html in.mlir and the model
/// ./in.mlir name the same file".
StatusOr<std::vector<OutputFile>>
checkOutputFiles(const std::vector<NamedPath> &outputs,
                 const std::vector<NamedPath> &inputs);

/// The contents of one checked output.
struct OutputContents {
  const OutputFile *file;
  const void *bytes;
  uint64_t size;
};

/// Writes every output or, as far as the file system allows, none: first
/// all temporary files beside the regular files they replace, then the
/// devices and FIFOs in place, then the renames (each target checked again
/// to still be a regular file or absent), standard output last. Every write
/// and close is checked: a full disk or /dev/full is an error "cannot write
/// PATH (OPTION): No space left on device", and then no temporary file is
/// left and nothing was renamed.
Status writeOutputFiles(const std::vector<OutputContents> &outputs);

/// Writes `bytes` to the one checked output `file` (writeOutputFiles).
inline Status writeOutputFile(const OutputFile &file,
                              const std::string &bytes) {
  return writeOutputFiles({{&file, bytes.data(), bytes.size()}});
}

/// Opens the checked output `file` for writing as a stream (a file written
/// as a run goes): the descriptor, owned by the caller. Never blocks: a FIFO
/// is the one kept open since it was checked.
StatusOr<int> openOutputStream(const OutputFile &file);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_FILES_H
