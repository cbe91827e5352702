//===- FileIO.cpp - file reads and writes shared by the file formats ------===//

#include "FileIO.h"
#include "partition/runtime/Files.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
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

//===----------------------------------------------------------------------===//
// Files.h
//===----------------------------------------------------------------------===//

namespace {

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

StatusOr<RegularFile> RegularFile::open(const std::string &path,
                                        const char *what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected
  // below, and regular files ignore the flag.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT)
      return PARTITION_ERROR(NotFound, path, ": cannot open the ", what, ": ",
                             std::strerror(err));
    return PARTITION_ERROR(InvalidArgument, path, ": cannot open the ", what,
                           ": ", std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = detail::ioError(path, "cannot stat");
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return PARTITION_ERROR(InvalidArgument, path, ": the ", what, " is ",
                           fileKind(st.st_mode), ", not a regular file");
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  RegularFile file;
  file.fd_ = fd;
  file.size_ = uint64_t(st.st_size);
  file.path_ = path;
  return file;
}

RegularFile::RegularFile(RegularFile &&other) noexcept
    : fd_(other.fd_), size_(other.size_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

RegularFile &RegularFile::operator=(RegularFile &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

int RegularFile::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

StatusOr<std::vector<uint8_t>> RegularFile::readAll(uint64_t maxBytes) {
  if (size_ > maxBytes)
    return PARTITION_ERROR(InvalidArgument, path_, ": ", size_,
                           " bytes is more than the ", maxBytes,
                           " bytes such a file may have");
  std::vector<uint8_t> bytes(static_cast<size_t>(size_));
  PARTITION_RETURN_IF_ERROR(
      detail::preadFully(fd_, path_, 0, bytes.data(), bytes.size()));
  return bytes;
}

StatusOr<std::vector<uint8_t>>
partition::runtime::readRegularFile(const std::string &path, const char *what,
                                    uint64_t maxBytes) {
  PARTITION_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path, what));
  return file.readAll(maxBytes);
}

Status partition::runtime::checkFileNameComponent(const std::string &name,
                                                  const std::string &what) {
  if (name.empty())
    return PARTITION_ERROR(InvalidArgument, what,
                           ": an empty name cannot be a file name");
  if (name == "." || name == "..")
    return PARTITION_ERROR(InvalidArgument, what, ": \"", name,
                           "\" cannot be a file name inside the directory");
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c == '/' || c == '\\')
      return PARTITION_ERROR(InvalidArgument, what, ": the name has a '",
                             char(c), "' at byte ", i,
                             ", so as a file name it would leave the "
                             "directory");
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", c);
      return PARTITION_ERROR(InvalidArgument, what,
                             ": the name has the control character ", hex,
                             " at byte ", i, ", which a file name may not");
    }
  }
  return Status::ok();
}

StatusOr<uint64_t> partition::runtime::fileChecksum(const std::string &path) {
  PARTITION_ASSIGN_OR_RETURN(RegularFile file, RegularFile::open(path, "file"));
  std::vector<char> buffer(1 << 20);
  uint64_t hash = kFnv1a64Offset;
  for (uint64_t at = 0; at < file.size();) {
    uint64_t n = std::min<uint64_t>(buffer.size(), file.size() - at);
    PARTITION_RETURN_IF_ERROR(
        detail::preadFully(file.fd(), path, at, buffer.data(), n));
    hash = fnv1a64(buffer.data(), n, hash);
    at += n;
  }
  return hash;
}

Status partition::runtime::syncDirectory(const std::string &dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(),
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return detail::ioError(dir, "cannot open the directory to sync it");
  Status s = Status::ok();
  if (::fsync(fd) != 0 && errno != EINVAL) // some filesystems cannot
    s = detail::ioError(dir, "cannot sync the directory");
  ::close(fd);
  return s;
}

Status partition::runtime::detail::writeReplacing(
    const std::string &path,
    const std::function<Status(int fd, const std::string &name)> &write) {
  struct stat st;
  bool replace = ::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
  std::string target =
      replace ? path + ".tmp." + std::to_string(::getpid()) : path;
  int flags = O_WRONLY | O_CLOEXEC | (replace ? O_CREAT | O_TRUNC | O_EXCL : 0);
  int fd = ::open(target.c_str(), flags, 0644);
  if (fd < 0)
    return ioError(replace ? path : target, "cannot create");
  Status s = write(fd, target);
  if (::close(fd) != 0 && s.isOk())
    s = ioError(target, "cannot close");
  if (replace && s.isOk() && std::rename(target.c_str(), path.c_str()) != 0)
    s = ioError(path, "cannot rename the temporary file onto");
  if (replace && !s.isOk())
    ::unlink(target.c_str());
  return s;
}
