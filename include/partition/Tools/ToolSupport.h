//===- ToolSupport.h - input limits and options of the tools ----*- C++ -*-===//
//
// What the tools do before MLIR sees their input: read it as an untrusted
// file (readInputFile, over the runtime's RegularFile), bound how deeply the
// text nests (the parser recurses once per level and
// overflows the stack long before it runs out of input), hide the options
// that linked-in LLVM libraries register, and make diagnostics short by
// default.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_TOOLS_TOOLSUPPORT_H
#define PARTITION_TOOLS_TOOLSUPPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

#include <memory>

#include <optional>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace mlir {
class PassManager;
class MLIRContext;
} // namespace mlir

namespace partition {

/// The largest input file a tool reads (a model in MLIR text, even with its
/// weights inline, is far smaller).
constexpr uint64_t kMaxInputFileBytes = 4ull << 30;
/// The most a tool reads from standard input when it is not a regular file
/// (a pipe, a terminal or a device such as /dev/zero, which never ends).
constexpr uint64_t kMaxInputStreamBytes = 1ull << 30;

/// Reads the input `path` ("-": standard input) of a tool through the
/// runtime's one reader of untrusted files (partition/runtime/Files.h,
/// RegularFile): only a regular file, opened without blocking (a
/// directory, a device or a FIFO is an error, never an endless read or a
/// hang), at most kMaxInputFileBytes. `what` names the file in messages
/// ("model"). The buffer is NUL-terminated, as MLIR's parser needs.
/// Standard input that is not a regular file is read up to
/// kMaxInputStreamBytes. The error is one line naming the path.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(const std::string &path, const char *what);

namespace runtime {
struct OutputFile;
} // namespace runtime

/// Ends a tool that printed its whole result into `result`: writes it to
/// `output` (checked before any work) unless the tool failed and `output`
/// is a file, which is then left alone (standard output still shows what
/// was printed, e.g. the chunks of --split-input-file that succeeded).
/// Returns the exit status: 1 when `ok` is false or the write fails (one
/// line on stderr, prefixed with `tool`), else 0.
int finishToolOutput(const char *tool, bool ok,
                     const runtime::OutputFile &output,
                     const std::string &result);

/// The deepest nesting of brackets (`(`, `[`, `{`, `<`) the tools accept.
/// Real programs nest a few dozen levels; the parser needs about 2 KiB of
/// stack per level of nested regions and crashes near 4,000.
constexpr unsigned kMaxNestingDepth = 512;

/// Where a text nests deeper than a limit: the 1-based line and column of the
/// first bracket that goes over it.
struct NestingViolation {
  unsigned line = 0;
  unsigned column = 0;
};

/// Scans `text` as MLIR assembly (skipping string literals and `//`
/// comments, and not counting the `>` of `->`) and returns where brackets
/// first nest deeper than `maxDepth`, if they do.
std::optional<NestingViolation>
findExcessiveNesting(llvm::StringRef text,
                     unsigned maxDepth = kMaxNestingDepth);

/// Checks `text` (named `bufferName` in the message) against
/// kMaxNestingDepth. On a violation prints
/// `<name>:<line>:<col>: error: ...` to `os` and returns false.
bool checkNestingDepth(llvm::StringRef text, llvm::StringRef bufferName,
                       llvm::raw_ostream &os);

/// Hides every command-line option registered so far except the generic ones
/// (`--help`, `--version`, ...): call it first in main, before the tool
/// registers its own and MLIR's options, so that `--help` lists only those
/// rather than the hundreds that the LLVM libraries register statically.
/// The hidden options still work; `--help-hidden` lists them.
void hideLibraryOptions();

/// Makes `--mlir-print-op-on-diagnostic` default to false: an error inside a
/// large function then prints its location and message, not the whole
/// operation with its regions. An explicit flag still wins. Call after
/// MLIR's context options are registered and before the command line is
/// parsed.
void setQuietDiagnosticDefaults();

/// The most columns of a source line a diagnostic shows.
constexpr unsigned kMaxSourceExcerpt = 160;

/// Registers on `context` a diagnostic handler that prints each diagnostic as
/// `file:line:col: error: message` followed by at most kMaxSourceExcerpt
/// columns of its source line (found in `sourceMgr`) and a caret, then its
/// notes the same way. MLIR's own handler echoes the whole line: for an error
/// on a function, its signature (hundreds of kilobytes for a large model).
/// Registered last, it takes precedence over the handler of the tool's
/// driver; `sourceMgr` must outlive `context`'s use of it.
void registerShortDiagnosticHandler(mlir::MLIRContext *context,
                                    std::shared_ptr<llvm::SourceMgr> sourceMgr);

/// Whether the command line gave the option called `name`.
bool isOptionGiven(llvm::StringRef name);

/// The value of `--mlir-print-op-on-diagnostic` (false when it is not
/// registered), for a tool whose driver sets the context's flag itself.
bool shouldPrintOpOnDiagnostic();

/// Reports the compile's progress on stderr: each pass over the whole module
/// as it starts ("partition-opt: pass 3 of 12: part-partition (1.2 s)").
/// With `lines`, a line per pass; otherwise (a terminal) one line redrawn in
/// place, drawn only once the compile has taken a second, and cleared when
/// it ends, so that fast compiles print nothing.
void addProgressReporting(mlir::PassManager &pm, llvm::StringRef tool,
                          bool lines);

} // namespace partition

#endif // PARTITION_TOOLS_TOOLSUPPORT_H
