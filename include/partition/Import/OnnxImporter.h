//===- OnnxImporter.h - ONNX models to the part dialect ---------*- C++ -*-===//
//
// Reads an ONNX model (opsets 13 to 21), binds its symbolic dimensions, folds
// its shape arithmetic on the host and translates its nodes to `part` ops in
// one function; initializers become parameters (`part.name` = the
// initializer's name) whose data goes to `weights`. See
// docs/design/2026-12-02-onnx-import.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_IMPORT_ONNXIMPORTER_H
#define PARTITION_IMPORT_ONNXIMPORTER_H

#include "partition/Import/Weights.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partition::import {

struct OnnxImportOptions {
  /// Values of symbolic dimensions (`dim_param`), by name.
  std::map<std::string, int64_t> dims;
  /// Sizes of graph inputs' dimensions by position, by input name
  /// (`--shape input_ids=2x16`), whatever the exporter named them;
  /// std::nullopt leaves a dimension as the model and `dims` give it. A
  /// size that contradicts a fixed dimension, another binding of the same
  /// symbol or the input's rank is an error.
  std::map<std::string, std::vector<std::optional<int64_t>>> shapes;
  /// Remark, for every floating-point initializer of more than one element,
  /// whether it is a parameter or a constant, and why; and one remark on
  /// the inputs' shapes (which are fixed by the export, so that the file
  /// serves only them).
  bool reportParameters = false;
  /// Glob patterns (llvm::GlobPattern) over initializer names and the
  /// module names the export gives them: a match of `frozen` is a constant
  /// whatever else says, a match of `trainable` a parameter where the
  /// export's metadata alone made it a constant. A pattern that matches no
  /// initializer is an error.
  std::vector<std::string> frozen, trainable;
  /// Name of the function the graph becomes.
  std::string functionName = "main";
  /// The most elements a value computed on the host may have (a folded
  /// ConstantOfShape, Range, Expand, ..., or a mask built for a run-time
  /// op); larger ones are rejected with their shape, before any memory is
  /// allocated for them.
  int64_t maxFoldElements = int64_t(1) << 24;
};

/// Imports the model at `path`. On failure reports every problem found
/// (unsupported ops with their node names, unbound dimensions, missing
/// initializers, a malformed file) through the context's diagnostic engine
/// and returns null; `weights` is then unspecified.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &context,
                                             llvm::StringRef path,
                                             const OnnxImportOptions &options,
                                             Weights &weights);

/// One ONNX op type the importer translates (default domain), with the
/// opsets it takes and, where support is partial, what is and is not.
struct OnnxOpSupport {
  std::string opType;
  int64_t sinceOpset = 0, untilOpset = 0;
  std::string note;
};

/// Every op type the importer translates, sorted by name: what
/// `partition-import --list-ops` prints, read from the same table that
/// decides whether a node is supported.
std::vector<OnnxOpSupport> supportedOnnxOps();

} // namespace partition::import

#endif // PARTITION_IMPORT_ONNXIMPORTER_H
