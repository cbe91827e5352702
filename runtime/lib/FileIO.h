//===- FileIO.h - file reads and writes shared by the file formats -*- C++
//-*-===//
//
// Private to the runtime library: POSIX reads and writes that retry short
// transfers and turn errno into a Status naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_LIB_FILEIO_H
#define PARTITION_RUNTIME_LIB_FILEIO_H

#include "partition/runtime/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace partition::runtime::detail {

/// The Status for a failed `what` ("cannot open", ...) on `path`, from errno:
/// NotFound for a missing file, InvalidArgument otherwise.
Status ioError(const std::string &path, const char *what);

/// Reads exactly `bytes` bytes at `offset` of `fd`, retrying short reads.
Status preadFully(int fd, const std::string &path, uint64_t offset, void *dst,
                  uint64_t bytes);

/// product(shape) * elementBytes multiplied left to right (as the reference
/// safetensors implementation does); nullopt on a negative dimension or an
/// int64 overflow, even one that a later zero dimension would cancel.
std::optional<int64_t> checkedByteSize(const std::vector<int64_t> &shape,
                                       int64_t elementBytes);

/// Writes all of `bytes` to `fd`, retrying short writes.
Status writeFully(int fd, const std::string &path, const void *src,
                  uint64_t bytes);

/// Writes the file `path` with `write`, given an open descriptor and the
/// name it has. When `path` is absent or a regular file, the bytes go to a
/// temporary file beside it that is then renamed onto it, so that readers
/// see the old file or the new one, never a partial one (and the temporary
/// is removed on failure). Anything else (/dev/null, a FIFO) is written in
/// place: a rename would replace the device with a regular file.
Status writeReplacing(
    const std::string &path,
    const std::function<Status(int fd, const std::string &name)> &write);

} // namespace partition::runtime::detail

#endif // PARTITION_RUNTIME_LIB_FILEIO_H
