//===- FileIO.cpp - file reads and writes shared by the file formats ------===//

#include "FileIO.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unistd.h>

using namespace partition::runtime;

Status detail::ioError(const std::string &path, const char *what) {
  int err = errno;
  if (err == ENOENT)
    return PARTITION_ERROR(NotFound, path, ": ", what, ": ",
                           std::strerror(err));
  return PARTITION_ERROR(InvalidArgument, path, ": ", what, ": ",
                         std::strerror(err));
}

Status detail::preadFully(int fd, const std::string &path, uint64_t offset,
                          void *dst, uint64_t bytes) {
  auto *out = static_cast<char *>(dst);
  while (bytes > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(bytes, 1u << 30));
    ssize_t got = ::pread(fd, out, chunk, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return PARTITION_ERROR(Internal, path, ": read of ", chunk,
                             " bytes at offset ", offset,
                             " failed: ", std::strerror(errno));
    }
    if (got == 0)
      return PARTITION_ERROR(OutOfRange, path, ": file ends at offset ", offset,
                             " while ", bytes,
                             " more bytes were expected (was it truncated "
                             "after it was opened?)");
    out += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<uint64_t>(got);
  }
  return Status::ok();
}

Status detail::writeFully(int fd, const std::string &path, const void *src,
                          uint64_t bytes) {
  const auto *in = static_cast<const char *>(src);
  while (bytes > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(bytes, 1u << 30));
    ssize_t put = ::write(fd, in, chunk);
    if (put < 0) {
      if (errno == EINTR)
        continue;
      return PARTITION_ERROR(Internal, path,
                             ": write failed: ", std::strerror(errno));
    }
    in += put;
    bytes -= static_cast<uint64_t>(put);
  }
  return Status::ok();
}

std::optional<int64_t>
detail::checkedByteSize(const std::vector<int64_t> &shape,
                        int64_t elementBytes) {
  int64_t product = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    if (dim != 0 && product > std::numeric_limits<int64_t>::max() / dim)
      return std::nullopt;
    product *= dim;
  }
  if (product > std::numeric_limits<int64_t>::max() / elementBytes)
    return std::nullopt;
  return product * elementBytes;
}
