//===- Safetensors.h - read and write safetensors files ---------*- C++ -*-===//
//
// safetensors is the weights format: an 8-byte little-endian header length N,
// N bytes of UTF-8 JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// byte after the header) plus an optional "__metadata__" object of strings,
// then the row-major little-endian data of every tensor.
//
// The reader validates the whole header when the file is opened, with the
// rules of the reference implementation: header at most 100,000,000 bytes,
// strict JSON, the tensors' byte ranges tile the data section exactly (no
// gap, no overlap, nothing after the last tensor), and each range holds
// exactly shape-product * element-size bytes. A malformed file is an error
// Status naming the file, the tensor and the offending values; it never
// crashes the process.
//
// Data is read with pread, so memory use is the header plus what the caller
// asks for, and a rank of a sharded model reads only the byte ranges of its
// own slice of each parameter (readSlice).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_SAFETENSORS_H
#define PARTITION_RUNTIME_SAFETENSORS_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Status.h"
#include "partition/runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace partition::runtime {

/// Largest header the reader accepts, as in the reference implementation.
constexpr uint64_t kSafetensorsMaxHeaderBytes = 100000000;
/// Largest rank the readers accept (NumPy 2's and PyTorch's limit).
constexpr size_t kMaxFileTensorRank = 64;

/// The safetensors name of `type`: "F32", "F16", "BF16", "I32" or "I64".
const char *safetensorsDTypeName(DType type);
/// The DType for a safetensors dtype name, or nullopt when the runtime has no
/// such element type (including valid safetensors dtypes such as "F64").
std::optional<DType> parseSafetensorsDType(const std::string &name);

/// What a safetensors header says about one tensor whose dtype the runtime
/// supports.
struct SafetensorsTensorInfo {
  /// Element type.
  DType dtype = DType::F32;
  /// Global shape, row-major.
  std::vector<int64_t> shape;
  /// Offset of the tensor's first byte from the start of the file.
  int64_t fileOffset = 0;
  /// Size of the tensor's data in bytes.
  int64_t numBytes = 0;

  /// product(shape).
  int64_t numElements() const { return numBytes / dtypeSize(dtype); }
};

/// Counts the reads a call made; for tests and I/O accounting.
struct ReadStats {
  /// Number of positional reads issued (pread calls, or copies from memory).
  int64_t reads = 0;
  /// Bytes read from the file, including any gaps bridged.
  int64_t bytesRead = 0;
};

/// How readSlice turns a slice into reads.
struct SliceReadOptions {
  /// Two runs of the slice separated by at most this many unwanted bytes are
  /// read with one call into a staging buffer. 0 reads exactly the slice's
  /// bytes: one call per maximal contiguous run.
  int64_t maxGapBytes = 0;
  /// Largest span read into the staging buffer at once.
  int64_t maxStagingBytes = 8 << 20;
  /// When set, receives the number of reads and bytes read.
  ReadStats *stats = nullptr;
};

/// An open safetensors file whose header has been read and validated.
///
/// All methods are const and read with pread, so several threads (the ranks
/// of a process) may read from one reader at the same time. Destinations are
/// host memory.
class SafetensorsReader {
public:
  /// Opens `path` and validates its header against the file's size.
  static StatusOr<SafetensorsReader> open(const std::string &path);
  /// Parses a whole file held in memory; `name` stands for the path in error
  /// messages.
  static StatusOr<SafetensorsReader> openMemory(std::string bytes,
                                                std::string name = "<memory>");

  /// Movable (the file descriptor moves along), not copyable.
  SafetensorsReader(SafetensorsReader &&other) noexcept;
  SafetensorsReader &operator=(SafetensorsReader &&other) noexcept;
  SafetensorsReader(const SafetensorsReader &) = delete;
  SafetensorsReader &operator=(const SafetensorsReader &) = delete;
  /// Closes the file.
  ~SafetensorsReader();

  /// The path given to open (or the name given to openMemory).
  const std::string &path() const { return path_; }
  /// Names of all tensors, in the order of the header.
  std::vector<std::string> names() const;
  /// Number of tensors.
  size_t size() const { return entries_.size(); }
  /// True when the file has a tensor called `name`.
  bool contains(const std::string &name) const;
  /// The "__metadata__" object (empty when the file has none).
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }
  /// Size of the header in bytes (N, without the 8-byte length).
  uint64_t headerBytes() const { return headerBytes_; }

  /// dtype, shape and location of `name`. NotFound for an unknown name;
  /// Unimplemented for a valid safetensors dtype the runtime does not support
  /// (e.g. "F64"): such tensors are listed by names() and checked for layout
  /// but cannot be read.
  StatusOr<SafetensorsTensorInfo> info(const std::string &name) const;

  /// Reads all of `name` into `dst`, which holds exactly `dstBytes` bytes.
  Status read(const std::string &name, void *dst, int64_t dstBytes) const;
  /// Reads all of `name` into `dst`, whose dtype and shape must match.
  Status read(const std::string &name, const TensorRef &dst) const;

  /// Reads the hyper-rectangle of `name` starting at `offsets` with extent
  /// `sizes` (one entry per dimension) into `dst`, row-major and dense,
  /// holding exactly product(sizes) * element-size = `dstBytes` bytes. Only
  /// the slice's bytes are read (see SliceReadOptions::maxGapBytes), with one
  /// call per maximal contiguous run.
  Status readSlice(const std::string &name, const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes, void *dst,
                   int64_t dstBytes,
                   const SliceReadOptions &options = SliceReadOptions()) const;
  /// readSlice into `dst`, whose dtype must match and whose shape is `sizes`.
  Status readSlice(const std::string &name, const std::vector<int64_t> &offsets,
                   const TensorRef &dst,
                   const SliceReadOptions &options = SliceReadOptions()) const;

private:
  /// One tensor of the header, supported dtype or not.
  struct Entry {
    std::string name;
    /// The dtype as written in the file, e.g. "F32" or "F64".
    std::string dtypeName;
    /// Set when the runtime supports the dtype.
    std::optional<DType> dtype;
    int64_t elementBytes = 0;
    std::vector<int64_t> shape;
    /// data_offsets, relative to the data section.
    uint64_t begin = 0, end = 0;
  };
  SafetensorsReader() = default;
  Status parseHeader(const std::string &header, uint64_t dataBytes);
  StatusOr<const Entry *> lookup(const std::string &name) const;
  Status readAt(uint64_t offset, void *dst, uint64_t bytes,
                ReadStats *stats) const;

  std::string path_;
  int fd_ = -1;
  /// The whole file when opened with openMemory.
  std::string memory_;
  uint64_t headerBytes_ = 0;
  /// File offset of the data section: 8 + headerBytes_.
  uint64_t dataStart_ = 0;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
};

/// Writes safetensors files in the reference implementation's canonical
/// layout: "__metadata__" first (keys sorted), then tensors ordered by
/// decreasing dtype alignment and then by name, so each tensor's data is
/// aligned to its element size; compact JSON; header padded with spaces to a
/// multiple of 8 bytes.
///
/// Tensors are referenced, not copied: their data must stay valid until
/// write() or serialize() returns.
class SafetensorsWriter {
public:
  /// Adds tensor `name` of `dtype` and `shape` whose row-major data is at
  /// `data`. Rejects duplicate names, "__metadata__", names that are not
  /// UTF-8, negative dimensions and sizes that overflow.
  Status add(const std::string &name, DType dtype,
             const std::vector<int64_t> &shape, const void *data);
  /// Adds `tensor` under `name`.
  Status add(const std::string &name, const TensorRef &tensor);
  /// Sets metadata `key` to `value` (both UTF-8), replacing an earlier value.
  Status setMetadata(const std::string &key, const std::string &value);

  /// Writes the file to `path` (removing it again if writing fails).
  Status write(const std::string &path) const;
  /// The file's bytes, in memory.
  StatusOr<std::string> serialize() const;
  /// The 8-byte length followed by the padded header.
  std::string headerBytes() const;

private:
  struct Pending {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    const void *data;
    int64_t numBytes;
  };
  /// Tensors in file order.
  std::vector<const Pending *> ordered() const;

  std::vector<Pending> tensors_;
  std::map<std::string, std::string> metadata_;
};

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_SAFETENSORS_H
