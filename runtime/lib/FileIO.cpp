//===- FileIO.cpp - file reads and writes shared by the file formats ------===//

#include "FileIO.h"
#include "partition/runtime/Files.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <optional>
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
  // A device or FIFO is opened without waiting for a reader (a FIFO nobody
  // reads is an error, never a hang).
  int flags = O_WRONLY | O_CLOEXEC |
              (replace ? O_CREAT | O_TRUNC | O_EXCL : O_NONBLOCK);
  int fd = ::open(target.c_str(), flags, 0644);
  if (fd < 0 && errno == ENXIO)
    return PARTITION_ERROR(InvalidArgument, path,
                           ": cannot write: it is a FIFO that no process "
                           "reads (writing it would wait forever)");
  if (fd < 0)
    return ioError(replace ? path : target, "cannot create");
  if (!replace) {
    int mode = ::fcntl(fd, F_GETFL);
    if (mode >= 0)
      (void)::fcntl(fd, F_SETFL, mode & ~O_NONBLOCK);
  }
  Status s = write(fd, target);
  if (::close(fd) != 0 && s.isOk())
    s = ioError(target, "cannot close");
  if (replace && s.isOk() && std::rename(target.c_str(), path.c_str()) != 0)
    s = ioError(path, "cannot rename the temporary file onto");
  if (replace && !s.isOk())
    ::unlink(target.c_str());
  return s;
}

//===----------------------------------------------------------------------===//
// Output files of the tools
//===----------------------------------------------------------------------===//

namespace {

Status cannotWrite(const std::string &option, const std::string &path,
                   const std::string &why) {
  return PARTITION_ERROR(InvalidArgument, "cannot write ", path, " (", option,
                         "): ", why);
}

/// The directory part of `path` ("." for a bare name).
std::string parentOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Writes all of `bytes` to `fd`; 0 or the errno of the failed write.
int writeAll(int fd, const void *bytes, uint64_t size) {
  const auto *in = static_cast<const char *>(bytes);
  while (size > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, 1u << 30));
    ssize_t put = ::write(fd, in, chunk);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0)
      return put < 0 ? errno : EIO;
    in += put;
    size -= static_cast<uint64_t>(put);
  }
  return 0;
}

/// Opens an existing device or FIFO for writing without waiting for a
/// reader; the descriptor blocks again once open.
int openInPlace(const std::string &path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) {
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
      (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return fd;
}

/// What a file is, as the messages say it.
const char *outputKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "it is a directory";
  if (S_ISSOCK(mode))
    return "it is a socket";
  return "it is a block device";
}

/// Which file a path names: its device and inode, or for a path that does
/// not exist yet its directory's and its name.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;
  bool operator==(const FileIdentity &o) const {
    return device == o.device && inode == o.inode && name == o.name;
  }
};

/// The identity of `path`, or nullopt where sharing it is harmless (a
/// character device) or it names nothing.
std::optional<FileIdentity> identityOf(const std::string &path) {
  if (path == "-")
    return FileIdentity{0, 0, "-"};
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode))
      return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino, ""};
  }
  if (::stat(parentOf(path).c_str(), &st) == 0)
    return FileIdentity{st.st_dev, st.st_ino, baseOf(path)};
  return std::nullopt;
}

} // namespace

StatusOr<OutputFile>
partition::runtime::checkOutputFile(const std::string &path,
                                    const std::string &option) {
  OutputFile file;
  file.path = path;
  file.option = option;
  file.target = path;
  if (path == "-") {
    file.kind = OutputFile::Kind::Stdout;
    return file;
  }
  if (path.empty())
    return cannotWrite(option, "''", "the path is empty");
  struct stat link, st;
  bool exists = ::lstat(path.c_str(), &link) == 0;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (exists)
      return cannotWrite(option, path,
                         std::string("it is a symbolic link to a missing "
                                     "file (") +
                             std::strerror(err) + ")");
    if (err != ENOENT)
      return cannotWrite(option, path, std::strerror(err));
    // A new file: its directory must exist and be writable.
    std::string parent = parentOf(path);
    struct stat dir;
    if (::stat(parent.c_str(), &dir) != 0)
      return cannotWrite(option, path,
                         "its directory " + parent + ": " +
                             std::strerror(errno));
    if (!S_ISDIR(dir.st_mode))
      return cannotWrite(option, path, parent + " is not a directory");
    if (::access(parent.c_str(), W_OK) != 0)
      return cannotWrite(option, path,
                         "its directory " + parent + " is not writable");
    return file;
  }
  if (S_ISREG(st.st_mode)) {
    char *real = ::realpath(path.c_str(), nullptr);
    if (!real)
      return cannotWrite(option, path, std::strerror(errno));
    file.target = real;
    std::free(real);
    if (::access(file.target.c_str(), W_OK) != 0)
      return cannotWrite(option, path, "the file is not writable");
    std::string parent = parentOf(file.target);
    if (::access(parent.c_str(), W_OK) != 0)
      return cannotWrite(option, path,
                         "its directory " + parent +
                             " is not writable (the file is replaced by a "
                             "new one written beside it)");
    return file;
  }
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
    return cannotWrite(option, path, outputKind(st.st_mode));
  file.kind = OutputFile::Kind::InPlace;
  if (S_ISFIFO(st.st_mode)) {
    // Opened now, without waiting: a FIFO nobody reads would block the
    // write forever.
    int fd = openInPlace(path);
    if (fd < 0)
      return cannotWrite(option, path,
                         errno == ENXIO ? "it is a FIFO that no process "
                                          "reads (writing it would wait "
                                          "forever)"
                                        : std::strerror(errno));
    file.fifo = std::shared_ptr<int>(new int(fd), [](int *p) {
      ::close(*p);
      delete p;
    });
  } else if (::access(path.c_str(), W_OK) != 0) {
    return cannotWrite(option, path, "it is not writable");
  }
  return file;
}

StatusOr<std::vector<OutputFile>>
partition::runtime::checkOutputFiles(const std::vector<NamedPath> &outputs,
                                     const std::vector<NamedPath> &inputs) {
  std::vector<OutputFile> files;
  std::vector<std::optional<FileIdentity>> identities;
  for (const NamedPath &out : outputs) {
    PARTITION_ASSIGN_OR_RETURN(OutputFile file,
                               checkOutputFile(out.path, out.option));
    identities.push_back(identityOf(out.path));
    files.push_back(std::move(file));
  }
  auto same = [](const NamedPath &a, const NamedPath &b) {
    return PARTITION_ERROR(InvalidArgument, a.option, " ", a.path, " and ",
                           b.option, " ", b.path, " name the same file");
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!identities[i])
      continue;
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (identities[j] && *identities[i] == *identities[j])
        return same(outputs[i], outputs[j]);
    for (const NamedPath &in : inputs) {
      if (in.path.empty() || in.path == "-")
        continue;
      // An input that does not exist (yet) is no file to overwrite.
      struct stat st;
      std::optional<FileIdentity> input = ::stat(in.path.c_str(), &st) == 0
                                              ? identityOf(in.path)
                                              : std::nullopt;
      if (input && *input == *identities[i])
        return same(outputs[i], in);
    }
  }
  return files;
}

StatusOr<int> partition::runtime::openOutputStream(const OutputFile &file) {
  int fd = -1;
  if (file.kind == OutputFile::Kind::Stdout)
    fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
  else if (file.fifo)
    fd = ::fcntl(*file.fifo, F_DUPFD_CLOEXEC, 0);
  else if (file.kind == OutputFile::Kind::InPlace)
    fd = openInPlace(file.target);
  else
    fd = ::open(file.target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                0666);
  if (fd < 0)
    return cannotWrite(file.option, file.path, std::strerror(errno));
  return fd;
}

Status partition::runtime::writeOutputFiles(
    const std::vector<OutputContents> &outputs) {
  struct Temporary {
    const OutputFile *file;
    std::string path;
  };
  std::vector<Temporary> temporaries;
  auto fail = [&](const OutputFile &file, const std::string &why) {
    for (Temporary &t : temporaries)
      ::unlink(t.path.c_str());
    return cannotWrite(file.option,
                       file.kind == OutputFile::Kind::Stdout ? "standard output"
                                                             : file.path,
                       why);
  };
  // Writes to `fd` and closes it (unless it is kept).
  auto write = [&](int fd, bool close, const OutputContents &out) {
    int err = writeAll(fd, out.bytes, out.size);
    if (close && ::close(fd) != 0 && !err)
      err = errno;
    return err;
  };
  // 1. Temporary files beside the targets that are replaced.
  static std::atomic<unsigned> counter{0};
  for (const OutputContents &out : outputs) {
    const OutputFile &file = *out.file;
    if (file.kind != OutputFile::Kind::Replace)
      continue;
    std::string temp = file.target + ".tmp-" + std::to_string(::getpid()) +
                       "-" + std::to_string(counter++);
    int fd =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
      return fail(file, std::strerror(errno));
    // A file replaced keeps its permissions.
    struct stat old;
    if (::stat(file.target.c_str(), &old) == 0 && S_ISREG(old.st_mode))
      (void)::fchmod(fd, old.st_mode & 07777);
    temporaries.push_back({&file, temp});
    if (int err = write(fd, /*close=*/true, out))
      return fail(file, std::strerror(err));
  }
  // 2. Devices and FIFOs, in place.
  for (const OutputContents &out : outputs) {
    const OutputFile &file = *out.file;
    if (file.kind != OutputFile::Kind::InPlace)
      continue;
    int fd = file.fifo ? *file.fifo : openInPlace(file.target);
    if (fd < 0)
      return fail(file, std::strerror(errno));
    if (int err = write(fd, /*close=*/!file.fifo, out))
      return fail(file, std::strerror(err));
  }
  // 3. The renames, each onto a regular file or a free name only.
  for (Temporary &t : temporaries) {
    struct stat st;
    if (::lstat(t.file->target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return fail(*t.file, "it is no longer a regular file; not replacing it");
  }
  for (size_t i = 0; i < temporaries.size(); ++i) {
    if (std::rename(temporaries[i].path.c_str(),
                    temporaries[i].file->target.c_str()) != 0) {
      int err = errno;
      temporaries.erase(temporaries.begin(), temporaries.begin() + i);
      return fail(*temporaries.front().file, std::strerror(err));
    }
  }
  temporaries.clear();
  // 4. Standard output, once the files it may refer to are in place.
  for (const OutputContents &out : outputs)
    if (out.file->kind == OutputFile::Kind::Stdout) {
      std::fflush(stdout);
      if (int err = write(STDOUT_FILENO, /*close=*/false, out))
        return fail(*out.file, std::strerror(err));
    }
  return Status::ok();
}
