//===- InputShapes.cpp - binding the graph inputs' dimensions -------------===//
//
// partition compiles for static shapes: every dimension of a graph input the
// model leaves open gets a size from the command line. `--dim NAME=N` binds
// a symbolic dimension (`dim_param`) by the name the exporter gave it;
// `--shape INPUT=2x16` gives an input's sizes by position, whatever its
// dimensions are called (torch's dynamo exporter names them after its
// symbols, s72 and s70), and reaches the unnamed ones as well. The two are
// checked against each other, against the input's rank and against the
// sizes the model fixes.
//
// A model whose inputs are fixed serves only those shapes: the exporter has
// folded them into constants (a causal mask of the sequence length, say).
// Asking for another size says so, and says how to export dynamic shapes.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace mlir;
using namespace partition;
using namespace partition::import;
using namespace partition::import::detail;

/// "2x?x16": a --shape binding's sizes as the user wrote them.
static std::string
formatSizes(const std::vector<std::optional<int64_t>> &sizes) {
  std::string text;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d)
      text += "x";
    text += sizes[d] ? std::to_string(*sizes[d]) : "?";
  }
  return text;
}

/// The input's declared dimensions, or null when it has no tensor shape
/// (inputInfo reports that).
static const onnx::TensorShapeProto *
declaredShape(const onnx::ValueInfoProto &in) {
  if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
    return nullptr;
  return &in.type().tensor_type().shape();
}

static bool isFixed(const onnx::TensorShapeProto::Dimension &dim) {
  return dim.has_dim_value() && dim.dim_value() > 0;
}

std::vector<const onnx::ValueInfoProto *> Importer::graphInputs() {
  std::vector<const onnx::ValueInfoProto *> inputs;
  for (const onnx::ValueInfoProto &in : model.graph().input())
    if (!initializers.count(in.name()))
      inputs.push_back(&in);
  return inputs;
}

int64_t Importer::boundSize(const onnx::ValueInfoProto &in, int d) {
  const onnx::TensorShapeProto::Dimension &dim = declaredShape(in)->dim(d);
  if (dim.has_dim_value())
    return std::max<int64_t>(dim.dim_value(), 0);
  if (dim.has_dim_param()) {
    auto bound = symbolSizes.find(dim.dim_param());
    return bound == symbolSizes.end() ? 0 : bound->second;
  }
  auto bound = anonymousSizes.find({in.name(), d});
  return bound == anonymousSizes.end() ? 0 : bound->second;
}

std::string Importer::describeInputShapes() {
  std::vector<std::string> described;
  for (const onnx::ValueInfoProto *in : graphInputs()) {
    const onnx::TensorShapeProto *shape = declaredShape(*in);
    if (!shape)
      continue;
    std::vector<std::string> dims;
    for (int d = 0; d < shape->dim_size(); ++d) {
      const onnx::TensorShapeProto::Dimension &dim = shape->dim(d);
      if (isFixed(dim)) {
        dims.push_back(std::to_string(dim.dim_value()));
        continue;
      }
      std::string text = dim.has_dim_param() ? dim.dim_param() : "?";
      if (int64_t size = boundSize(*in, d))
        text += "=" + std::to_string(size);
      dims.push_back(text);
    }
    described.push_back(printable(in->name()) + " [" + llvm::join(dims, ", ") +
                        "]");
  }
  return llvm::join(described, ", ");
}

std::string Importer::inputShapesNote() {
  std::string shapes = describeInputShapes();
  if (shapes.empty())
    return "the model has no inputs";
  bool allFixed = true, anyFixed = false;
  for (const onnx::ValueInfoProto *in : graphInputs())
    if (const onnx::TensorShapeProto *shape = declaredShape(*in))
      for (const onnx::TensorShapeProto::Dimension &dim : shape->dim()) {
        allFixed &= isFixed(dim);
        anyFixed |= isFixed(dim);
      }
  std::string note;
  if (allFixed)
    note = "the model's inputs are fixed at " + shapes +
           ", and the file serves only these shapes";
  else if (anyFixed)
    note = "the model's inputs are " + shapes +
           ", and the file serves only the sizes given as numbers";
  else
    return "the model's inputs are " + shapes;
  return note + " (an exporter folds fixed sizes into constants, a causal "
                "mask of the sequence length, say); to serve others, export "
                "with dynamic shapes: torch.onnx.export(..., "
                "dynamic_shapes=...), or dynamic_axes=... with the TorchScript "
                "exporter";
}

void Importer::reportInputShapes() {
  if (options.reportParameters)
    emitRemark(fileLoc()) << inputShapesNote();
}

bool Importer::bindInputShapes() {
  symbolSizes = options.dims;
  // Who bound each symbol, for a conflict's diagnostic.
  std::map<std::string, std::string> binders;
  for (const auto &[name, size] : options.dims)
    binders[name] = "--dim " + name + "=" + std::to_string(size);
  std::map<std::string, const onnx::ValueInfoProto *> inputs;
  for (const onnx::ValueInfoProto *in : graphInputs())
    inputs[in->name()] = in;
  // Reported once every binding is known, with the inputs' shapes.
  std::vector<std::string> fixedMismatches;
  bool ok = true;
  for (const auto &[name, sizes] : options.shapes) {
    std::string flag = "--shape " + name + "=" + formatSizes(sizes);
    auto found = inputs.find(name);
    if (found == inputs.end()) {
      InFlightDiagnostic diag = emitError(fileLoc());
      diag << flag << " names no input of the model (its inputs are: ";
      llvm::interleaveComma(inputs, diag, [&](auto &in) {
        diag << "'" << printable(in.first) << "'";
      });
      diag << ")";
      ok = false;
      continue;
    }
    const onnx::ValueInfoProto &in = *found->second;
    const onnx::TensorShapeProto *shape = declaredShape(in);
    if (!shape)
      continue;
    if (shape->dim_size() != static_cast<int>(sizes.size())) {
      emitError(fileLoc()) << flag << " gives " << sizes.size()
                           << " dimensions, but input '" << printable(name)
                           << "' has " << shape->dim_size();
      ok = false;
      continue;
    }
    for (int d = 0; d < shape->dim_size(); ++d) {
      if (!sizes[d])
        continue;
      int64_t size = *sizes[d];
      const onnx::TensorShapeProto::Dimension &dim = shape->dim(d);
      std::string where = "input '" + printable(name) + "', dimension " +
                          std::to_string(d);
      if (isFixed(dim)) {
        if (dim.dim_value() != size)
          fixedMismatches.push_back(flag + ": " + where + " is fixed at " +
                                    std::to_string(dim.dim_value()) +
                                    " by the model, not " +
                                    std::to_string(size));
      } else if (dim.has_dim_value()) {
        continue; // a size of 0 or less: inputInfo reports it
      } else if (dim.has_dim_param()) {
        const std::string &symbol = dim.dim_param();
        auto [bound, inserted] = symbolSizes.try_emplace(symbol, size);
        if (inserted) {
          binders[symbol] = flag + " (" + where + ")";
        } else if (bound->second != size) {
          emitError(fileLoc()) << flag << " binds '" << symbol << "' (" << where
                               << ") to " << size << ", but "
                               << binders[symbol] << " binds it to "
                               << bound->second;
          ok = false;
        }
      } else {
        anonymousSizes[{name, d}] = size;
      }
    }
  }
  for (const std::string &mismatch : fixedMismatches)
    emitError(fileLoc()) << mismatch << "; " << inputShapesNote();
  return ok && fixedMismatches.empty();
}

bool Importer::checkDimBindings() {
  // Bindings that match no symbol are most likely typos.
  bool ok = true;
  std::set<std::string> symbols;
  for (const onnx::ValueInfoProto *in : graphInputs())
    if (const onnx::TensorShapeProto *shape = declaredShape(*in))
      for (const onnx::TensorShapeProto::Dimension &dim : shape->dim())
        if (dim.has_dim_param())
          symbols.insert(dim.dim_param());
  for (auto &[name, value] : options.dims) {
    if (symbols.count(name))
      continue;
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "--dim " << name << "=" << value
         << " names no symbolic dimension of the model's inputs";
    if (symbols.empty()) {
      diag << "; " << inputShapesNote();
    } else {
      diag << " (they are:";
      for (const std::string &s : symbols)
        diag << " " << s;
      diag << ")";
    }
    ok = false;
  }
  return ok;
}
