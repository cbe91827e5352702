//===- FunctionAttrs.cpp - edit a function's attributes at once -----------===//

#include "partition/Dialect/Part/IR/FunctionAttrs.h"

using namespace mlir;
using namespace partition::part;

FunctionAttrEditor::FunctionAttrEditor(FunctionOpInterface function)
    : function(function) {
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    args.emplace_back(function.getArgAttrDict(i));
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    results.emplace_back(function.getResultAttrDict(i));
}

void FunctionAttrEditor::setArg(unsigned i, StringRef name, Attribute value) {
  args[i].set(name, value);
  argsChanged = true;
}

void FunctionAttrEditor::setResult(unsigned i, StringRef name,
                                   Attribute value) {
  results[i].set(name, value);
  resultsChanged = true;
}

bool FunctionAttrEditor::removeArg(unsigned i, StringRef name) {
  bool had = static_cast<bool>(args[i].erase(name));
  argsChanged |= had;
  return had;
}

bool FunctionAttrEditor::removeResult(unsigned i, StringRef name) {
  bool had = static_cast<bool>(results[i].erase(name));
  resultsChanged |= had;
  return had;
}

void FunctionAttrEditor::commit() {
  MLIRContext *ctx = function.getContext();
  auto dictionaries = [&](ArrayRef<NamedAttrList> lists) {
    SmallVector<DictionaryAttr> out;
    for (const NamedAttrList &l : lists)
      out.push_back(l.getDictionary(ctx));
    return out;
  };
  if (argsChanged)
    function.setAllArgAttrs(dictionaries(args));
  if (resultsChanged)
    function.setAllResultAttrs(dictionaries(results));
  argsChanged = resultsChanged = false;
}
