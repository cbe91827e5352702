//===- OutputFiles.cpp - all-or-nothing output files of a tool ------------===//
//
// See OutputFiles.h. Only regular files are ever replaced by a rename: the
// kind of every target is checked when the tool starts and again just before
// its rename.
//
//===----------------------------------------------------------------------===//

#include "partition/Import/OutputFiles.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace llvm;
using namespace partition::import;

static Error cannotWrite(StringRef option, StringRef path, const Twine &why) {
  return createStringError(inconvertibleErrorCode(), "cannot write " + path +
                                                         " (" + option +
                                                         "): " + why);
}

Expected<OutputFile> partition::import::checkOutputFile(StringRef path,
                                                        StringRef option) {
  OutputFile file;
  file.path = path.str();
  file.option = option.str();
  if (path == "-") {
    file.kind = OutputFile::Kind::Stdout;
    return file;
  }
  if (path.empty())
    return cannotWrite(option, "''", "the path is empty");

  sys::fs::file_status link;
  bool exists = !sys::fs::status(path, link, /*follow=*/false);
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status, /*follow=*/true)) {
    if (exists)
      return cannotWrite(option, path,
                         "it is a symbolic link to a missing file (" +
                             ec.message() + ")");
    if (ec != std::errc::no_such_file_or_directory)
      return cannotWrite(option, path, ec.message());
    // A new file: its directory must exist and be writable.
    StringRef parent = sys::path::parent_path(path);
    if (parent.empty())
      parent = ".";
    sys::fs::file_status dir;
    if (std::error_code dec = sys::fs::status(parent, dir))
      return cannotWrite(option, path,
                         "its directory " + parent + ": " + dec.message());
    if (dir.type() != sys::fs::file_type::directory_file)
      return cannotWrite(option, path, parent + " is not a directory");
    if (sys::fs::access(parent, sys::fs::AccessMode::Write))
      return cannotWrite(option, path,
                         "its directory " + parent + " is not writable");
    file.kind = OutputFile::Kind::Replace;
    file.target = file.path;
    return file;
  }

  switch (status.type()) {
  case sys::fs::file_type::directory_file:
    return cannotWrite(option, path, "it is a directory");
  case sys::fs::file_type::regular_file: {
    SmallString<256> real;
    if (std::error_code ec = sys::fs::real_path(path, real))
      return cannotWrite(option, path, ec.message());
    if (sys::fs::access(real, sys::fs::AccessMode::Write))
      return cannotWrite(option, path, "the file is not writable");
    StringRef parent = sys::path::parent_path(real);
    if (sys::fs::access(parent.empty() ? StringRef(".") : parent,
                        sys::fs::AccessMode::Write))
      return cannotWrite(option, path,
                         "its directory " + parent +
                             " is not writable (the file is replaced by a "
                             "new one written beside it)");
    file.kind = OutputFile::Kind::Replace;
    file.target = real.str().str();
    return file;
  }
  default:
    // Devices, FIFOs, sockets: written in place, never replaced.
    if (sys::fs::access(path, sys::fs::AccessMode::Write))
      return cannotWrite(option, path, "it is not writable");
    file.kind = OutputFile::Kind::InPlace;
    file.target = file.path;
    return file;
  }
}

namespace {
/// A temporary file beside its target.
struct Temporary {
  const OutputFile *file;
  std::string path;
};
} // namespace

static void removeTemporaries(std::vector<Temporary> &temporaries) {
  for (Temporary &t : temporaries)
    sys::fs::remove(t.path);
  temporaries.clear();
}

/// Writes `bytes` to the open `fd` and closes it.
static Error writeAndClose(int fd, StringRef bytes, const OutputFile &file) {
  raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return cannotWrite(file.option, file.path, ec.message());
  }
  return Error::success();
}

Error partition::import::writeOutputFiles(ArrayRef<OutputContents> outputs) {
  std::vector<Temporary> temporaries;
  // 1. Temporary files beside the targets that are replaced.
  for (const OutputContents &out : outputs) {
    const OutputFile &file = *out.file;
    if (file.kind != OutputFile::Kind::Replace)
      continue;
    SmallString<256> model(file.target);
    model += ".tmp-%%%%%%";
    int fd;
    SmallString<256> temp;
    if (std::error_code ec = sys::fs::createUniqueFile(model, fd, temp)) {
      removeTemporaries(temporaries);
      return cannotWrite(file.option, file.path, ec.message());
    }
    temporaries.push_back({&file, temp.str().str()});
    if (Error e = writeAndClose(fd, out.bytes, file)) {
      removeTemporaries(temporaries);
      return e;
    }
  }
  // 2. Devices and FIFOs, opened without creating anything.
  for (const OutputContents &out : outputs) {
    const OutputFile &file = *out.file;
    if (file.kind != OutputFile::Kind::InPlace)
      continue;
    int fd;
    if (std::error_code ec = sys::fs::openFileForWrite(
            file.target, fd, sys::fs::CD_OpenExisting, sys::fs::OF_None)) {
      removeTemporaries(temporaries);
      return cannotWrite(file.option, file.path, ec.message());
    }
    if (Error e = writeAndClose(fd, out.bytes, file)) {
      removeTemporaries(temporaries);
      return e;
    }
  }
  // 3. The renames, each onto a regular file or a free name only.
  for (Temporary &t : temporaries) {
    sys::fs::file_status status;
    std::error_code ec = sys::fs::status(t.file->target, status,
                                         /*follow=*/false);
    if (!ec && status.type() != sys::fs::file_type::regular_file) {
      removeTemporaries(temporaries);
      return cannotWrite(t.file->option, t.file->path,
                         "it is no longer a regular file; not replacing it");
    }
  }
  for (size_t i = 0; i < temporaries.size(); ++i) {
    Temporary &t = temporaries[i];
    if (std::error_code ec = sys::fs::rename(t.path, t.file->target)) {
      for (size_t j = i; j < temporaries.size(); ++j)
        sys::fs::remove(temporaries[j].path);
      return cannotWrite(t.file->option, t.file->path, ec.message());
    }
  }
  // 4. Standard output, once the files it may refer to are in place.
  for (const OutputContents &out : outputs)
    if (out.file->kind == OutputFile::Kind::Stdout) {
      outs() << out.bytes;
      outs().flush();
      if (outs().has_error())
        return cannotWrite(out.file->option, "standard output",
                           outs().error().message());
    }
  return Error::success();
}
