//===- TiedParameters.cpp - tied and folded parameters of exported models -===//
//
// A tied weight is one parameter with two uses: GPT-2's, BERT's and Gemma's
// LM head is the token embedding transposed. Exporters fold the transpose
// into a second initializer, and torch.export reads tied parameters through
// one placeholder (named after the last of their names), so a plain import
// trains two copies, or names the one after the head. Here the folded copy
// is recognised, from torch.export's metadata where the file has it and by
// its data (bit for bit the other's transpose) in every case, and becomes
// that parameter transposed in the IR: the gradients of both uses add up in
// one parameter, named as named_parameters() lists it.
//
// A folded parameter is one the exporter's optimizer replaced by a value
// computed from it (Gemma's RMSNorm scales by 1 + weight). The file holds
// only the result, from which the weight cannot be recovered exactly
// (1 + w rounds w's low bits away), so the importer says so and how to
// export the model instead.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Dialect/Part/IR/PartOps.h"

#include "llvm/ADT/StringExtras.h"

#include <cassert>
#include <cstring>

using namespace mlir;
using namespace partition;
using namespace partition::import::detail;
namespace part = partition::part;

namespace partition::import::detail {

TorchSignature parseTorchSignature(StringRef text) {
  TorchSignature placeholders;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    auto [name, rest] = line.trim().split(": ");
    StringRef kind = rest.split(' ').first;
    size_t at = rest.find("target='");
    if (name.empty() || at == StringRef::npos ||
        (kind != "PARAMETER" && kind != "BUFFER" && kind != "CONSTANT_TENSOR"))
      continue;
    StringRef target = rest.drop_front(at + 8).split('\'').first;
    placeholders[name.str()] = {kind.str(), target.str(), placeholders.size()};
  }
  return placeholders;
}

std::vector<std::string> torchPlaceholdersRead(const onnx::NodeProto &node,
                                               const TorchSignature &signature) {
  std::string fx = unknownMetadataProps(node, 9)["pkg.torch.onnx.fx_node"];
  std::vector<std::string> read;
  for (size_t i = fx.find('%'); i != std::string::npos;
       i = fx.find('%', i + 1)) {
    size_t j = i + 1;
    while (j < fx.size() && (isalnum(fx[j]) || fx[j] == '_'))
      ++j;
    std::string token = fx.substr(i + 1, j - i - 1);
    if (signature.count(token))
      read.push_back(token);
  }
  return read;
}

std::vector<std::string> torchScopesOf(const onnx::NodeProto &node) {
  // "['', 'transformer', 'transformer.wte', 'embedding']".
  std::string scopes =
      unknownMetadataProps(node, 9)["pkg.torch.onnx.name_scopes"];
  SmallVector<StringRef> parts;
  StringRef(scopes).trim("[] ").split(parts, ',');
  std::vector<std::string> out;
  if (scopes.empty())
    return out;
  for (StringRef part : parts)
    out.push_back(part.trim().trim('\'').str());
  return out;
}

std::string torchModuleOf(const onnx::NodeProto &node) {
  // The modules from the root in, then the torch node's own name.
  std::vector<std::string> scopes = torchScopesOf(node);
  if (scopes.size() < 2)
    return "";
  return scopes[scopes.size() - 2];
}

std::optional<int64_t> layerOfNode(const onnx::NodeProto &node) {
  if (std::optional<int64_t> layer = layerOfNodeName(node.name()))
    return layer;
  for (const std::string &scope : torchScopesOf(node))
    if (std::optional<int64_t> layer = moduleIndex(scope))
      return layer;
  return std::nullopt;
}

} // namespace partition::import::detail

void Importer::findTorchAliases(
    const TorchSignature &signature, const std::set<std::string> &candidates,
    const std::map<std::string, std::string> &claimedBy,
    std::map<std::string, std::string> &constants) {
  // What the nodes of each module read: placeholders and initializers.
  std::set<std::string> read;
  std::map<std::string, std::set<std::string>> moduleReads, moduleInits;
  for (const onnx::NodeProto &node : model.graph().node()) {
    std::string module = torchModuleOf(node);
    for (const std::string &p : torchPlaceholdersRead(node, signature)) {
      read.insert(p);
      moduleReads[module].insert(p);
    }
    for (const std::string &in : node.input())
      if (candidates.count(in))
        moduleInits[module].insert(in);
  }
  for (const auto &[name, unread] : signature) {
    if (unread.kind != "PARAMETER" || read.count(name))
      continue;
    std::string module = StringRef(unread.target).rsplit('.').first.str();
    // Its own module reads another module's parameter in its place: the
    // two are one tensor (torch.export lifts each name, and reads one).
    std::vector<std::string> foreign;
    for (const std::string &p : moduleReads[module]) {
      const TorchPlaceholder &other = signature.at(p);
      if (other.kind == "PARAMETER" &&
          !StringRef(other.target).starts_with(module + "."))
        foreign.push_back(p);
    }
    if (foreign.size() == 1 && claimedBy.count(foreign[0])) {
      const TorchPlaceholder &other = signature.at(foreign[0]);
      const std::string &init = claimedBy.at(foreign[0]);
      // named_parameters() lists a tied tensor under its first name, and
      // the signature lists the names in that order.
      if (unread.index < other.index) {
        torchNames[init] = unread.target;
        torchAliases[init] = other.target;
      }
      continue;
    }
    // Its module uses, in its place, initializers the exporter folded from
    // no parameter it reads: the parameter was folded into them.
    for (const std::string &init : moduleInits[module])
      if (constants.count(init) && !sharedReads.count(init) &&
          !torchNames.count(init) && !claimedBy.count(init)) {
        foldedParameters[unread.target].push_back(init);
        constants[init] = "the exporter's optimizer folded parameter '" +
                          unread.target + "' into it";
      }
    if (!foldedParameters.count(unread.target) && options.reportParameters)
      emitRemark(fileLoc())
          << "torch.export lists parameter '" << unread.target
          << "', which no node reads and no initializer holds: unused, or "
             "tied to a parameter the file names otherwise, and nothing in "
             "the file says which";
  }
}

bool Importer::isTiedTranspose(const onnx::TensorProto &folded,
                               const onnx::TensorProto &kept) {
  if (folded.dims_size() != 2 || kept.dims_size() != 2 ||
      folded.data_type() != kept.data_type() ||
      folded.dims(0) != kept.dims(1) || folded.dims(1) != kept.dims(0))
    return false;
  std::string a, b;
  if (failed(tensorBytes(folded, a, "initializer '" + folded.name() + "'")) ||
      failed(tensorBytes(kept, b, "initializer '" + kept.name() + "'")) ||
      a.size() != b.size() || a.empty())
    return false;
  int64_t rows = kept.dims(0), cols = kept.dims(1);
  size_t width = a.size() / (rows * cols);
  bool oneValue = true;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const char *k = b.data() + (r * cols + c) * width;
      if (std::memcmp(k, a.data() + (c * rows + r) * width, width))
        return false;
      oneValue &= !std::memcmp(k, b.data(), width);
    }
  return !oneValue;
}

void Importer::findTiedTransposes(
    const std::set<std::string> &candidates,
    std::map<std::string, std::string> &constants) {
  // torch.export's metadata names the parameter a folded copy came from;
  // the data must confirm it.
  for (const auto &[folded, kept] : sharedReads)
    if (isTiedTranspose(*initializers.at(folded), *initializers.at(kept))) {
      tiedTransposes[folded] = kept;
      constants.erase(folded);
    }
  if (hasTorchSignature)
    return;
  // Without metadata, a folded initializer ("onnx::MatMul_655", named by
  // the exporter) that is exactly one module parameter's transpose.
  std::map<std::string, std::vector<std::string>> keptByKey;
  auto key = [](const onnx::TensorProto &t, bool swap) {
    return std::to_string(t.data_type()) + ":" +
           std::to_string(t.dims(swap ? 1 : 0)) + "x" +
           std::to_string(t.dims(swap ? 0 : 1));
  };
  for (const std::string &name : candidates) {
    const onnx::TensorProto &t = *initializers.at(name);
    if (t.dims_size() == 2 && !StringRef(name).starts_with("onnx::"))
      keptByKey[key(t, false)].push_back(name);
  }
  for (const std::string &name : candidates) {
    const onnx::TensorProto &t = *initializers.at(name);
    if (t.dims_size() != 2 || !StringRef(name).starts_with("onnx::"))
      continue;
    std::vector<std::string> matches;
    for (const std::string &kept : keptByKey[key(t, true)])
      if (isTiedTranspose(t, *initializers.at(kept)))
        matches.push_back(kept);
    if (matches.size() == 1)
      tiedTransposes[name] = matches[0];
  }
}

bool Importer::reportFoldedParameters(
    const std::set<std::string> &frozen,
    const std::map<std::string, std::string> &constants) {
  std::vector<std::string> lines;
  for (const auto &[target, inits] : foldedParameters) {
    std::string list;
    bool allFrozen = true;
    for (const std::string &init : inits) {
      list += (list.empty() ? "'" : ", '") + printable(init) + "'";
      allFrozen &= frozen.count(init) != 0;
    }
    std::string line = "'" + printable(target) + "' into " + list;
    if (allFrozen && options.reportParameters)
      emitRemark(fileLoc()) << "parameter " << line
                            << " was folded by the exporter; constant: "
                               "--frozen";
    if (!allFrozen)
      lines.push_back(line);
  }
  bool ok = true;
  if (!lines.empty()) {
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "parameters that torch.export lists were folded by the "
            "exporter's optimizer into values computed from them, from which "
            "they cannot be recovered exactly, so they would not be trained:";
    for (const std::string &line : lines)
      diag << "\n  " << line;
    diag << "\nexport with torch.onnx.export(..., dynamo=True, "
            "optimize=False) to train them, or pass --frozen with their "
            "names to import the folded values as constants";
    ok = false;
  }
  // A second folded use of a parameter that is not its transpose.
  std::vector<std::string> untied;
  for (const auto &[init, kept] : sharedReads)
    if (!tiedTransposes.count(init) && !frozen.count(init))
      untied.push_back("'" + printable(init) + "': " + constants.at(init));
  if (untied.empty())
    return ok;
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << "initializers the exporter folded from a parameter that another "
          "initializer holds are not its transpose, so they would not be "
          "trained:";
  for (const std::string &line : untied)
    diag << "\n  " << line;
  diag << "\nexport with torch.onnx.export(..., dynamo=True, optimize=False) "
          "to train them, or pass --frozen with their names to import them "
          "as constants";
  return false;
}

Value Importer::tiedTranspose(const Slot &slot, const std::string &name) {
  // A fresh transpose for each use: a matmul takes the parameter itself
  // with transpose_b and erases the transpose it no longer uses.
  FailureOr<Value> kept = runtimeValue(slot.transposeOf->name());
  assert(succeeded(kept) && "a tied initializer's parameter is registered");
  return part::TransposeOp::create(
      builder, NameLoc::get(StringAttr::get(&context, name), fileLoc()), *kept,
      ArrayRef<int64_t>{1, 0});
}
