//===- DefineMesh.cpp - declare the mesh to partition for -----------------===//

#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#define DEBUG_TYPE "part-define-mesh"

namespace partition::part {
#define GEN_PASS_DEF_PARTDEFINEMESHPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {
struct PartDefineMeshPass
    : public partition::part::impl::PartDefineMeshPassBase<PartDefineMeshPass> {
  using PartDefineMeshPassBase::PartDefineMeshPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<StringAttr> names;
    SmallVector<int64_t> sizes;
    SmallVector<StringRef> parts;
    StringRef(shape).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts) {
      auto [name, sizeText] = part.trim().split(':');
      int64_t size;
      if (name.empty() || sizeText.trim().getAsInteger(10, size) || size < 1) {
        module.emitError() << "mesh shape \"" << shape
                           << "\" must list axes as name:size, e.g. "
                              "dp:2,tp:4; \""
                           << part << "\" is not one";
        return signalPassFailure();
      }
      names.push_back(StringAttr::get(ctx, name.trim()));
      sizes.push_back(size);
    }
    if (names.empty()) {
      module.emitError() << "no mesh shape given (shape=dp:2,tp:4)";
      return signalPassFailure();
    }
    MeshAttr mesh = MeshAttr::getChecked(
        [&] { return module.emitError() << "mesh \"" << shape << "\": "; }, ctx,
        ArrayRef<StringAttr>(names), ArrayRef<int64_t>(sizes));
    if (!mesh)
      return signalPassFailure();
    if (auto existing = SymbolTable::lookupSymbolIn(module, meshName)) {
      auto meshOp = dyn_cast<MeshOp>(existing);
      if (!meshOp || meshOp.getMesh() != mesh) {
        existing->emitError()
            << "@" << meshName << " is already declared differently from "
            << mesh;
        return signalPassFailure();
      }
      return;
    }
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    MeshOp::create(b, module.getLoc(), meshName, mesh);
  }
};
} // namespace
