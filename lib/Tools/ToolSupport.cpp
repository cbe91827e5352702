//===- ToolSupport.cpp - input limits and options of the tools ------------===//

#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/Files.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace partition;

/// An error with `message` (one line).
static llvm::Error inputError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Standard input that is not a regular file, read to its end or the limit.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readStream() {
  std::string bytes;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    ssize_t got = ::read(STDIN_FILENO, chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return inputError("cannot read standard input: " +
                        llvm::Twine(std::strerror(errno)));
    if (got == 0)
      break;
    if (bytes.size() + size_t(got) > kMaxInputStreamBytes)
      return inputError("standard input has more than " +
                        llvm::Twine(kMaxInputStreamBytes) +
                        " bytes; give a larger input as a file");
    bytes.append(chunk.data(), size_t(got));
  }
  return llvm::MemoryBuffer::getMemBufferCopy(bytes, "<stdin>");
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
partition::readInputFile(const std::string &path, const char *what) {
  int fd = -1;
  uint64_t size = 0;
  std::optional<runtime::RegularFile> file;
  struct stat st;
  if (path == "-") {
    if (::fstat(STDIN_FILENO, &st) != 0)
      return inputError("cannot read standard input: " +
                        llvm::Twine(std::strerror(errno)));
    // A device (other than a terminal) never ends: /dev/zero, /dev/urandom.
    if ((S_ISCHR(st.st_mode) && !::isatty(STDIN_FILENO)) ||
        S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode))
      return inputError(llvm::Twine("standard input is ") +
                        (S_ISDIR(st.st_mode) ? "a directory" : "a device") +
                        ", not a " + what + "; give the " + what +
                        " as a file or through a pipe");
    if (!S_ISREG(st.st_mode))
      return readStream();
    fd = STDIN_FILENO;
    size = uint64_t(st.st_size);
  } else {
    runtime::StatusOr<runtime::RegularFile> opened =
        runtime::RegularFile::open(path, what);
    if (!opened.isOk())
      return inputError(opened.status().message());
    file = std::move(*opened);
    fd = file->fd();
    size = file->size();
  }
  if (size > kMaxInputFileBytes)
    return inputError(path + ": the " + what + " has " + llvm::Twine(size) +
                      " bytes, more than the " +
                      llvm::Twine(kMaxInputFileBytes) + " a tool reads");
  // Read, not mapped: a file truncated while mapped would fault.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(fd, path == "-" ? "<stdin>" : path, size,
                                      /*RequiresNullTerminator=*/true,
                                      /*IsVolatile=*/true);
  if (!buffer)
    return inputError(path + ": cannot read the " + what + ": " +
                      buffer.getError().message());
  return std::move(*buffer);
}

std::optional<NestingViolation>
partition::findExcessiveNesting(llvm::StringRef text, unsigned maxDepth) {
  unsigned depth = 0, line = 1, column = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    ++column;
    char next = i + 1 < e ? text[i + 1] : '\0';
    switch (c) {
    case '\n':
      ++line;
      column = 0;
      break;
    case '"':
      // A string literal: brackets inside do not nest. Escapes are
      // backslash pairs; a string ends at its line.
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i, ++column)
        if (text[i] == '\\' && i + 1 < e && text[i + 1] != '\n') {
          ++i;
          ++column;
        }
      if (i < e && text[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
      break;
    case '/':
      if (next == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (c == '<' && next == '=')
        break;
      if (++depth > maxDepth)
        return NestingViolation{line, column};
      break;
    case ')':
    case ']':
    case '}':
    case '>':
      // `->` and `>=` are not brackets.
      if (c == '>' && ((i > 0 && text[i - 1] == '-') || next == '='))
        break;
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

bool partition::checkNestingDepth(llvm::StringRef text,
                                  llvm::StringRef bufferName,
                                  llvm::raw_ostream &os) {
  std::optional<NestingViolation> violation = findExcessiveNesting(text);
  if (!violation)
    return true;
  // Not a SourceMgr diagnostic: that would print the offending line, which
  // is as long as the input when it is one line of brackets.
  os << bufferName << ":" << violation->line << ":" << violation->column
     << ": ";
  llvm::WithColor::error(os, "", /*DisableColors=*/!os.has_colors())
      << "brackets nest more than " << kMaxNestingDepth
      << " levels deep; the input is rejected before parsing\n";
  return false;
}

void partition::hideLibraryOptions() {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  // LLVM's own generic options stay visible.
  static constexpr llvm::StringLiteral kGeneric[] = {
      "help",    "help-list", "help-hidden",   "help-list-hidden",
      "version", "color",     "print-options", "print-all-options"};
  for (auto &entry : options)
    if (!llvm::is_contained(kGeneric, entry.first))
      entry.second->setHiddenFlag(llvm::cl::ReallyHidden);
}

void partition::setQuietDiagnosticDefaults() {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  if (it == options.end())
    return;
  // MLIR declares it as a plain cl::opt<bool> (MLIRContext.cpp).
  static_cast<llvm::cl::opt<bool> *>(it->second)->setInitialValue(false);
}

bool partition::shouldPrintOpOnDiagnostic() {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find("mlir-print-op-on-diagnostic");
  return it != options.end() &&
         static_cast<llvm::cl::opt<bool> *>(it->second)->getValue();
}

/// The file location `loc` resolves to, if any (the first one of a fused or
/// call-site location, the child of a name location).
static std::optional<mlir::FileLineColLoc> findFileLoc(mlir::Location loc) {
  std::optional<mlir::FileLineColLoc> found;
  loc->walk([&](mlir::Location nested) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(nested)) {
      found = file;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

/// Prints `diagnostic` (without its notes) as described at
/// registerShortDiagnosticHandler.
static void printShort(llvm::SourceMgr &sourceMgr,
                       const mlir::Diagnostic &diagnostic,
                       llvm::raw_ostream &os) {
  std::optional<mlir::FileLineColLoc> file =
      findFileLoc(diagnostic.getLocation());
  if (file)
    os << file->getFilename().getValue() << ":" << file->getLine() << ":"
       << file->getColumn() << ": ";
  else
    os << diagnostic.getLocation() << ": ";
  switch (diagnostic.getSeverity()) {
  case mlir::DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case mlir::DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case mlir::DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  case mlir::DiagnosticSeverity::Note:
    os << "note: ";
    break;
  }
  os << diagnostic.str() << "\n";
  if (!file || file->getLine() == 0)
    return;
  // The source line, cut to a window around the column.
  for (unsigned id = 1, e = sourceMgr.getNumBuffers(); id <= e; ++id) {
    const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(id);
    if (buffer->getBufferIdentifier() != file->getFilename().getValue())
      continue;
    llvm::SMLoc start =
        sourceMgr.FindLocForLineAndColumn(id, file->getLine(), 1);
    if (!start.isValid())
      return;
    llvm::StringRef rest(start.getPointer(),
                         buffer->getBufferEnd() - start.getPointer());
    llvm::StringRef line = rest.take_until([](char c) { return c == '\n'; });
    size_t column = std::clamp<size_t>(file->getColumn(), 1, line.size() + 1);
    size_t begin =
        column > kMaxSourceExcerpt / 2 ? column - kMaxSourceExcerpt / 2 : 0;
    llvm::StringRef excerpt = line.substr(begin, kMaxSourceExcerpt);
    bool cutBefore = begin > 0, cutAfter = begin + excerpt.size() < line.size();
    os << (cutBefore ? "..." : "") << excerpt << (cutAfter ? "..." : "")
       << "\n";
    os.indent((cutBefore ? 3 : 0) + (column - 1 - begin)) << "^\n";
    return;
  }
}

void partition::registerShortDiagnosticHandler(
    mlir::MLIRContext *context, std::shared_ptr<llvm::SourceMgr> sourceMgr) {
  context->getDiagEngine().registerHandler(
      [sourceMgr](mlir::Diagnostic &diagnostic) {
        llvm::raw_ostream &os = llvm::errs();
        printShort(*sourceMgr, diagnostic, os);
        for (const mlir::Diagnostic &note : diagnostic.getNotes())
          printShort(*sourceMgr, note, os);
        os.flush();
        return mlir::success();
      });
}

bool partition::isOptionGiven(llvm::StringRef name) {
  llvm::DenseMap<llvm::StringRef, llvm::cl::Option *> &options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

namespace {

/// The progress of a compile: each pass over the module, as it starts.
class ProgressInstrumentation : public mlir::PassInstrumentation {
public:
  ProgressInstrumentation(std::string tool, size_t total, bool lines)
      : tool(std::move(tool)), total(total), lines(lines),
        start(std::chrono::steady_clock::now()) {}
  ~ProgressInstrumentation() override {
    if (drawn) {
      llvm::errs() << "\r\033[K";
      llvm::errs().flush();
    }
  }

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    // Only the passes over the whole module (not the passes a pipeline
    // nests over functions, nor the verifier's).
    if (!llvm::isa<mlir::ModuleOp>(op) || op->getParentOp())
      return;
    ++done;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    std::string line;
    llvm::raw_string_ostream os(line);
    os << tool << ": pass " << done;
    if (total >= done)
      os << " of " << total;
    os << ": " << pass->getArgument() << " ("
       << llvm::format("%.1f", seconds) << " s)";
    if (lines) {
      llvm::errs() << line << "\n";
    } else {
      if (seconds < 1)
        return;
      llvm::errs() << "\r\033[K" << line;
      drawn = true;
    }
    llvm::errs().flush();
  }

private:
  std::string tool;
  size_t total;
  bool lines;
  std::chrono::steady_clock::time_point start;
  size_t done = 0;
  bool drawn = false;
};

} // namespace

void partition::addProgressReporting(mlir::PassManager &pm,
                                     llvm::StringRef tool, bool lines) {
  size_t total = 0;
  for (mlir::Pass &pass : pm.getPasses()) {
    (void)pass;
    ++total;
  }
  pm.addInstrumentation(
      std::make_unique<ProgressInstrumentation>(tool.str(), total, lines));
}

int partition::finishToolOutput(const char *tool, bool ok,
                                const runtime::OutputFile &output,
                                const std::string &result) {
  if (!ok && output.kind != runtime::OutputFile::Kind::Stdout)
    return 1;
  runtime::Status written = runtime::writeOutputFile(output, result);
  if (!written.isOk()) {
    llvm::errs() << tool << ": " << written.message() << "\n";
    return 1;
  }
  return ok ? 0 : 1;
}
