//===- ToolSupport.cpp - input limits and options of the tools ------------===//

#include "partition/Tools/ToolSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"

using namespace partition;

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
      "help",    "help-list", "help-hidden", "help-list-hidden",
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
