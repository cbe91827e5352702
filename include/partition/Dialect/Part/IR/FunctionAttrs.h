//===- FunctionAttrs.h - edit a function's attributes at once --*- C++ -*-===//
//
// FuncOp::setArgAttr rebuilds the array of every argument's dictionary, and
// the context keeps each array it ever built: a loop of them over the n
// arguments of a training step (parameters, optimizer state) costs O(n^2)
// time and memory. FunctionAttrEditor reads the dictionaries once, edits them
// as plain lists, and writes them back with one call.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_DIALECT_PART_IR_FUNCTIONATTRS_H
#define PARTITION_DIALECT_PART_IR_FUNCTIONATTRS_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/OperationSupport.h"

namespace partition::part {

class FunctionAttrEditor {
public:
  explicit FunctionAttrEditor(mlir::FunctionOpInterface function);
  /// Writes back what was changed.
  ~FunctionAttrEditor() { commit(); }
  FunctionAttrEditor(const FunctionAttrEditor &) = delete;
  FunctionAttrEditor &operator=(const FunctionAttrEditor &) = delete;

  mlir::Attribute getArg(unsigned i, llvm::StringRef name) const {
    return args[i].get(name);
  }
  mlir::Attribute getResult(unsigned i, llvm::StringRef name) const {
    return results[i].get(name);
  }
  void setArg(unsigned i, llvm::StringRef name, mlir::Attribute value);
  void setResult(unsigned i, llvm::StringRef name, mlir::Attribute value);
  /// True when there was such an attribute.
  bool removeArg(unsigned i, llvm::StringRef name);
  bool removeResult(unsigned i, llvm::StringRef name);

  /// Writes the changed dictionaries back to the function (one array each
  /// for arguments and results); later edits need another commit.
  void commit();

private:
  mlir::FunctionOpInterface function;
  llvm::SmallVector<mlir::NamedAttrList> args, results;
  bool argsChanged = false, resultsChanged = false;
};

} // namespace partition::part

#endif // PARTITION_DIALECT_PART_IR_FUNCTIONATTRS_H
