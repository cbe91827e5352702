//===- OutputFiles.h - all-or-nothing output files of a tool ----*- C++ -*-===//
//
// partition-import writes an IR file and a weights file; either both appear
// or neither does. Every path is checked before the import starts (not a
// directory, a writable place); regular files and new paths are written to a
// temporary file beside the target and renamed onto it only when every
// output was written. Device files and FIFOs (`-o /dev/null`) are written in
// place, never renamed over: a rename onto /dev/null, run as root, would
// replace the device with a regular file. `-` is standard output.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_IMPORT_OUTPUTFILES_H
#define PARTITION_IMPORT_OUTPUTFILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace partition::import {

/// One output path, checked, and how it will be written.
struct OutputFile {
  enum class Kind {
    /// `-`: standard output.
    Stdout,
    /// An existing file that is not a regular file (a character or block
    /// device, a FIFO): opened and written in place.
    InPlace,
    /// A regular file or a new path: a temporary file beside `target`,
    /// renamed onto it.
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
};

/// Checks that `path` can be written before anything is computed: it is `-`,
/// an existing writable file that is not a directory, or a new name in an
/// existing writable directory. The error names `option` and `path`.
llvm::Expected<OutputFile> checkOutputFile(llvm::StringRef path,
                                           llvm::StringRef option);

/// The contents of one checked output.
struct OutputContents {
  const OutputFile *file;
  llvm::StringRef bytes;
};

/// Writes every output or, as far as the file system allows, none: first all
/// temporary files, then the in-place outputs, then the renames (each target
/// checked again to still be a regular file or absent), standard output
/// last. On failure the temporary files are removed and nothing was renamed.
llvm::Error writeOutputFiles(llvm::ArrayRef<OutputContents> outputs);

} // namespace partition::import

#endif // PARTITION_IMPORT_OUTPUTFILES_H
