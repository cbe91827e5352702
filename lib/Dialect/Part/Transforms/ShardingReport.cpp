//===- ShardingReport.cpp - print how values are split over a mesh --------===//
//
// A read-only report of each annotated function's arguments and results:
// global and per-device shapes and bytes. A client of the sharding analysis
// library: before partitioning, a value without an annotation shows the
// layout propagation gives it (without changing the IR); the per-device
// shapes are the layouts' (Layout::localShape).
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/Analysis/Propagation.h"
#include "partition/Dialect/Part/IR/Layout.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Dialect/Part/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "part-sharding-report"

namespace partition::part {
#define GEN_PASS_DEF_PARTSHARDINGREPORTPASS
#include "partition/Dialect/Part/Transforms/Passes.h.inc"
} // namespace partition::part

using namespace mlir;
using namespace partition::part;

namespace {

/// One row of the report.
struct Row {
  std::string value, role, global, sharding, local;
  uint64_t localBytes = 0, globalBytes = 0;
  bool isParameter = false;
};

/// Formats a tensor type's shape and element type as `8x16xf32`.
static std::string formatType(ArrayRef<int64_t> shape, Type elementType) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t size : shape)
    os << size << "x";
  os << elementType;
  return text;
}

/// Prints a sharding's per-dimension part, as in `[{"dp"}, {}], unreduced=...`.
static std::string formatSharding(ShardingAttr sharding) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(sharding).print(os);
  // Drop the `#part.sharding<@mesh, ` prefix and the closing `>`.
  StringRef body(text);
  body = body.drop_until([](char c) { return c == ','; }).drop_front(2);
  return body.drop_back().str();
}

struct PartShardingReportPass
    : public partition::part::impl::PartShardingReportPassBase<
          PartShardingReportPass> {
  using PartShardingReportPassBase::PartShardingReportPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto function : module.getOps<FunctionOpInterface>())
      if (failed(report(function)))
        return signalPassFailure();
    markAllAnalysesPreserved();
  }

  /// Builds the row for a value of `type` with optional `sharding`
  /// (`propagated` when propagation gave it, not an annotation).
  FailureOr<Row> makeRow(FunctionOpInterface function, std::string value,
                         Type type, ShardingAttr sharding, bool propagated,
                         MeshAttr mesh, DictionaryAttr attrs) {
    Row row;
    row.value = std::move(value);
    if (auto role =
            attrs ? attrs.getAs<ArgRoleAttr>(PartDialect::getRoleAttrName())
                  : ArgRoleAttr())
      row.role = stringifyArgRole(role.getValue()).str();
    row.isParameter = row.role == "parameter";
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape()) {
      function.emitError() << row.value << " has type " << type
                           << ", which partition cannot place on a mesh";
      return failure();
    }
    // Before partitioning the type is the global one; in a per-device
    // program (part.spmd) it is the local one, and the global shape is the
    // local shape times each dimension's shards.
    bool typeIsLocal = static_cast<bool>(getSpmdMesh(function));
    SmallVector<int64_t> global(tensor.getShape()), local(tensor.getShape());
    auto emit = [&]() {
      return function.emitError()
             << row.value << " of @" << function.getName() << ": ";
    };
    if (sharding) {
      row.sharding = formatSharding(sharding);
      if (typeIsLocal) {
        for (auto [dim, size] : llvm::enumerate(local)) {
          int64_t shards = sharding.getNumShards(dim, mesh);
          std::optional<int64_t> whole = llvm::checkedMul(size, shards);
          if (!whole) {
            emit() << "global dimension " << dim << " (" << size << " x "
                   << shards << " shards) overflows int64";
            return failure();
          }
          global[dim] = *whole;
        }
      } else {
        // The verifier has checked that the annotation divides the shape.
        local = Layout::of(sharding, tensor.getRank())
                    .localShape(tensor.getShape(), mesh);
      }
      if (propagated)
        row.sharding += " (propagated)";
    } else {
      row.sharding = "replicated (not annotated)";
    }
    row.global = formatType(global, tensor.getElementType());
    // A padded value (an uneven split): its unpadded shape too.
    if (auto logical = attrs ? attrs.getAs<DenseI64ArrayAttr>(
                                   PartDialect::getLogicalShapeAttrName())
                             : DenseI64ArrayAttr())
      row.global += " (padded from " +
                    formatType(logical.asArrayRef(), tensor.getElementType()) +
                    ")";
    row.local = formatType(local, tensor.getElementType());
    FailureOr<int64_t> globalBytes = getTensorBytes(
        RankedTensorType::get(global, tensor.getElementType()), emit);
    FailureOr<int64_t> localBytes = getTensorBytes(
        RankedTensorType::get(local, tensor.getElementType()), emit);
    if (failed(globalBytes) || failed(localBytes))
      return failure();
    row.globalBytes = *globalBytes;
    row.localBytes = *localBytes;
    return row;
  }

  LogicalResult report(FunctionOpInterface function) {
    // The mesh is the one the first annotation names; the report is per mesh,
    // and a function spread over several meshes (pipeline stages) lists the
    // values of each under its own mesh name.
    SmallVector<std::pair<std::string, ShardingAttr>> annotated;
    MeshOp mesh;
    auto find = [&](DictionaryAttr attrs) -> ShardingAttr {
      return attrs
                 ? attrs.getAs<ShardingAttr>(PartDialect::getShardingAttrName())
                 : ShardingAttr();
    };
    for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
      if (ShardingAttr s = find(function.getArgAttrDict(i)); s && !mesh)
        mesh = lookupMesh(function, s.getMesh());
    for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
      if (ShardingAttr s = find(function.getResultAttrDict(i)); s && !mesh)
        mesh = lookupMesh(function, s.getMesh());
    if (FlatSymbolRefAttr spmd = getSpmdMesh(function); spmd && !mesh)
      mesh = lookupMesh(function, spmd);
    if (!mesh)
      return success();

    MeshAttr meshAttr = mesh.getMesh();
    // Before partitioning, what propagation gives the values without an
    // annotation (the IR is not changed).
    std::unique_ptr<ShardingPropagation> propagation;
    auto func = dyn_cast<func::FuncOp>(function.getOperation());
    if (func && !getSpmdMesh(function) && !func.isDeclaration()) {
      propagation = std::make_unique<ShardingPropagation>(func, mesh);
      if (failed(propagation->compute()))
        return failure();
    }
    auto layoutOf = [&](ShardingAttr annotated,
                        Value v) -> std::pair<ShardingAttr, bool> {
      if (annotated || !propagation)
        return {annotated, false};
      ShardingAttr s = propagation->shardingOf(v);
      return {s, static_cast<bool>(s)};
    };
    SmallVector<Row> rows;
    for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i) {
      DictionaryAttr attrs = function.getArgAttrDict(i);
      auto [sharding, propagated] = layoutOf(
          find(attrs), func ? func.getArgument(i) : Value());
      FailureOr<Row> row = makeRow(function, "arg " + std::to_string(i),
                                   function.getArgumentTypes()[i], sharding,
                                   propagated, meshAttr, attrs);
      if (failed(row))
        return failure();
      rows.push_back(std::move(*row));
    }
    for (unsigned i = 0, e = function.getNumResults(); i < e; ++i) {
      DictionaryAttr attrs = function.getResultAttrDict(i);
      Value returned;
      if (func && !func.isDeclaration())
        returned = func.getBody().front().getTerminator()->getOperand(i);
      auto [sharding, propagated] = layoutOf(find(attrs), returned);
      FailureOr<Row> row = makeRow(function, "result " + std::to_string(i),
                                   function.getResultTypes()[i], sharding,
                                   propagated, meshAttr, attrs);
      if (failed(row))
        return failure();
      rows.push_back(std::move(*row));
    }

    llvm::raw_ostream &os = llvm::outs();
    os << "func @" << function.getName() << " on @" << mesh.getSymName() << " ";
    SmallVector<std::string> axes;
    for (auto [name, size] :
         llvm::zip(meshAttr.getAxisNames(), meshAttr.getAxisSizes()))
      axes.push_back("\"" + name.getValue().str() +
                     "\"=" + std::to_string(size));
    os << "[" << llvm::join(axes, ", ") << "] (" << meshAttr.getNumDevices()
       << " devices)\n";

    size_t widths[5] = {5, 4, 6, 8, 5};
    for (const Row &row : rows) {
      widths[0] = std::max(widths[0], row.value.size());
      widths[1] = std::max(widths[1], row.role.size());
      widths[2] = std::max(widths[2], row.global.size());
      widths[3] = std::max(widths[3], row.sharding.size());
      widths[4] = std::max(widths[4], row.local.size());
    }
    auto printRow = [&](StringRef a, StringRef b, StringRef c, StringRef d,
                        StringRef e, StringRef f) {
      os << "  " << llvm::left_justify(a, widths[0] + 2)
         << llvm::left_justify(b, widths[1] + 2)
         << llvm::left_justify(c, widths[2] + 2)
         << llvm::left_justify(d, widths[3] + 2)
         << llvm::left_justify(e, widths[4] + 2) << f << "\n";
    };
    printRow("value", "role", "global", "sharding", "local", "bytes/device");
    uint64_t parameterBytes = 0, parameterBytesPerDevice = 0;
    for (const Row &row : rows) {
      printRow(row.value, row.role, row.global, row.sharding, row.local,
               std::to_string(row.localBytes));
      if (row.isParameter) {
        parameterBytes = llvm::SaturatingAdd(parameterBytes, row.globalBytes);
        parameterBytesPerDevice =
            llvm::SaturatingAdd(parameterBytesPerDevice, row.localBytes);
      }
    }
    if (parameterBytes > 0)
      os << "  parameters: " << parameterBytes << " bytes in all, "
         << parameterBytesPerDevice << " bytes per device ("
         << llvm::format("%.1f",
                         100.0 * parameterBytesPerDevice / parameterBytes)
         << "%)\n";
    os << "\n";
    return success();
  }
};

} // namespace
