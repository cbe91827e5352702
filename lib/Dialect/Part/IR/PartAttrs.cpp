//===- PartAttrs.cpp - part mesh and sharding attributes ------------------===//
//
// Parsing, printing, verification and the sharding algebra (compose, permute,
// local and global shapes).
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartAttrs.h"
#include "partition/Dialect/Part/IR/PartDialect.h"
#include "partition/runtime/DeviceGroups.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace partition::part;

#include "partition/Dialect/Part/IR/PartEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "partition/Dialect/Part/IR/PartAttrs.cpp.inc"

void PartDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "partition/Dialect/Part/IR/PartAttrs.cpp.inc"
      >();
}

/// Prints `axes` as `{"a", "b"}`.
static void printAxisSet(AsmPrinter &printer, ArrayRef<StringAttr> axes) {
  printer << "{";
  llvm::interleaveComma(axes, printer,
                        [&](StringAttr axis) { printer.printString(axis); });
  printer << "}";
}

/// Parses `{"a", "b"}` into `axes`.
static ParseResult parseAxisSet(AsmParser &parser,
                                SmallVectorImpl<StringAttr> &axes) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        axes.push_back(StringAttr::get(parser.getContext(), name));
        return success();
      });
}

/// Formats axis names as `"a", "b"` for diagnostics.
static std::string formatAxes(ArrayRef<StringAttr> axes) {
  std::string result;
  llvm::raw_string_ostream os(result);
  llvm::interleaveComma(
      axes, os, [&](StringAttr axis) { os << '"' << axis.getValue() << '"'; });
  return result;
}

//===----------------------------------------------------------------------===//
// MeshAttr
//===----------------------------------------------------------------------===//

Attribute MeshAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<StringAttr> names;
  SmallVector<int64_t> sizes;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    names.push_back(StringAttr::get(parser.getContext(), name));
    sizes.push_back(size);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis) ||
      parser.parseGreater())
    return {};
  return MeshAttr::getChecked([&] { return parser.emitError(loc); },
                              parser.getContext(), names, sizes);
}

void MeshAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(llvm::zip(getAxisNames(), getAxisSizes()), printer,
                        [&](auto axis) {
                          printer.printString(std::get<0>(axis));
                          printer << "=" << std::get<1>(axis);
                        });
  printer << "]>";
}

/// Formats a mesh shape as `"dp"=2 x "tp"=4` for diagnostics.
static std::string formatMeshShape(ArrayRef<StringAttr> names,
                                   ArrayRef<int64_t> sizes) {
  std::string result;
  llvm::raw_string_ostream os(result);
  llvm::interleave(
      llvm::zip(names, sizes), os,
      [&](auto axis) {
        os << '"' << std::get<0>(axis).getValue() << "\"=" << std::get<1>(axis);
      },
      " x ");
  return result;
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<StringAttr> axisNames,
                               ArrayRef<int64_t> axisSizes) {
  if (axisNames.size() != axisSizes.size())
    return emitError() << "mesh has " << axisNames.size() << " axis names but "
                       << axisSizes.size() << " sizes";
  llvm::StringSet<> seen;
  for (auto [name, size] : llvm::zip(axisNames, axisSizes)) {
    if (name.getValue().empty())
      return emitError() << "mesh axis name must not be empty";
    if (!seen.insert(name.getValue()).second)
      return emitError() << "mesh axis \"" << name.getValue()
                         << "\" is declared more than once";
    if (size < 1)
      return emitError() << "mesh axis \"" << name.getValue() << "\" has size "
                         << size << ", but sizes must be at least 1";
  }
  // Every device is a rank of the plan (int32), and passes enumerate them.
  int64_t devices = 1;
  for (auto [name, size] : llvm::zip(axisNames, axisSizes)) {
    std::optional<int64_t> product = llvm::checkedMul(devices, size);
    if (!product || *product > kMaxDevices)
      return emitError() << "mesh of " << formatMeshShape(axisNames, axisSizes)
                         << " has more than " << kMaxDevices
                         << " devices (the product reaches axis \""
                         << name.getValue() << "\")";
    devices = *product;
  }
  return success();
}

std::optional<unsigned> MeshAttr::getAxisIndex(StringRef name) const {
  for (auto [index, axis] : llvm::enumerate(getAxisNames()))
    if (axis.getValue() == name)
      return index;
  return std::nullopt;
}

std::optional<int64_t> MeshAttr::getAxisSize(StringRef name) const {
  if (std::optional<unsigned> index = getAxisIndex(name))
    return getAxisSizes()[*index];
  return std::nullopt;
}

int64_t MeshAttr::getNumDevices() const {
  int64_t count = 1;
  for (int64_t size : getAxisSizes())
    count *= size;
  return count;
}

SmallVector<int64_t> MeshAttr::getCoordinates(int64_t device) const {
  assert(device >= 0 && device < getNumDevices() && "device id out of range");
  std::vector<int64_t> coordinates =
      runtime::deviceCoordinates(getAxisSizes(), device);
  return SmallVector<int64_t>(coordinates.begin(), coordinates.end());
}

int64_t MeshAttr::getDeviceId(ArrayRef<int64_t> coordinates) const {
  assert(coordinates.size() == getNumAxes() && "wrong number of coordinates");
  assert(llvm::all_of(llvm::zip(coordinates, getAxisSizes()),
                      [](auto pair) {
                        auto [coordinate, size] = pair;
                        return coordinate >= 0 && coordinate < size;
                      }) &&
         "coordinate out of range");
  return runtime::deviceIndex(getAxisSizes(), coordinates);
}

/// Indices of `axes` among `mesh`'s axes; every axis must exist.
static SmallVector<unsigned> getAxisIndices(MeshAttr mesh,
                                            ArrayRef<StringAttr> axes) {
  SmallVector<unsigned> indices;
  for (StringAttr axis : axes) {
    std::optional<unsigned> index = mesh.getAxisIndex(axis.getValue());
    assert(index && "unknown mesh axis");
    indices.push_back(*index);
  }
  return indices;
}

int64_t MeshAttr::getGroupSize(ArrayRef<StringAttr> axes) const {
  return runtime::groupSize(getAxisSizes(), getAxisIndices(*this, axes));
}

int64_t MeshAttr::getGroupIndex(ArrayRef<int64_t> coordinates,
                                ArrayRef<StringAttr> axes) const {
  assert(coordinates.size() == getNumAxes() && "wrong number of coordinates");
  return runtime::groupIndex(getAxisSizes(), coordinates,
                             getAxisIndices(*this, axes));
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  MLIRContext *ctx = parser.getContext();
  FlatSymbolRefAttr mesh;
  SmallVector<ArrayAttr> dims;
  SmallVector<StringAttr> unreduced;
  if (parser.parseLess())
    return {};
  SMLoc meshLoc = parser.getCurrentLocation();
  Attribute meshAttr;
  if (parser.parseAttribute(meshAttr))
    return {};
  mesh = dyn_cast<FlatSymbolRefAttr>(meshAttr);
  if (!mesh) {
    parser.emitError(meshLoc) << "expected a mesh name such as @mesh";
    return {};
  }
  auto parseDim = [&]() -> ParseResult {
    SmallVector<StringAttr> axes;
    if (parseAxisSet(parser, axes))
      return failure();
    dims.push_back(
        ArrayAttr::get(ctx, SmallVector<Attribute>(axes.begin(), axes.end())));
    return success();
  };
  if (parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("unreduced") || parser.parseEqual() ||
        parseAxisSet(parser, unreduced))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return ShardingAttr::getChecked([&] { return parser.emitError(loc); }, ctx,
                                  mesh, dims, unreduced);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttributeWithoutType(getMesh());
  printer << ", [";
  llvm::interleaveComma(
      llvm::seq<int64_t>(0, getRank()), printer,
      [&](int64_t dim) { printAxisSet(printer, getDimAxes(dim)); });
  printer << "]";
  if (!getUnreduced().empty()) {
    printer << ", unreduced=";
    printAxisSet(printer, getUnreduced());
  }
  printer << ">";
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<ArrayAttr> dims,
                                   ArrayRef<StringAttr> unreduced) {
  if (!mesh)
    return emitError() << "sharding needs a mesh";
  llvm::StringMap<std::string> uses;
  auto use = [&](Attribute attr, const std::string &where) -> LogicalResult {
    auto axis = dyn_cast<StringAttr>(attr);
    if (!axis)
      return emitError() << "mesh axes must be strings, got " << attr;
    auto [it, inserted] = uses.try_emplace(axis.getValue(), where);
    if (!inserted)
      return emitError() << "mesh axis \"" << axis.getValue()
                         << "\" is used twice: in " << it->second << " and in "
                         << where;
    return success();
  };
  for (auto [dim, axes] : llvm::enumerate(dims))
    for (Attribute axis : axes)
      if (failed(use(axis, "dimension " + std::to_string(dim))))
        return failure();
  for (StringAttr axis : unreduced)
    if (failed(use(axis, "the unreduced set")))
      return failure();
  return success();
}

ShardingAttr ShardingAttr::get(MLIRContext *ctx, StringRef mesh,
                               ArrayRef<SmallVector<StringRef>> dims,
                               ArrayRef<StringRef> unreduced) {
  SmallVector<ArrayAttr> dimAttrs;
  for (const SmallVector<StringRef> &axes : dims) {
    SmallVector<Attribute> axisAttrs;
    for (StringRef axis : axes)
      axisAttrs.push_back(StringAttr::get(ctx, axis));
    dimAttrs.push_back(ArrayAttr::get(ctx, axisAttrs));
  }
  SmallVector<StringAttr> unreducedAttrs;
  for (StringRef axis : unreduced)
    unreducedAttrs.push_back(StringAttr::get(ctx, axis));
  return get(ctx, FlatSymbolRefAttr::get(ctx, mesh), dimAttrs, unreducedAttrs);
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *ctx, StringRef mesh,
                                         int64_t rank) {
  SmallVector<ArrayAttr> dims(rank, ArrayAttr::get(ctx, {}));
  return get(ctx, FlatSymbolRefAttr::get(ctx, mesh), dims, {});
}

SmallVector<StringAttr> ShardingAttr::getDimAxes(int64_t dim) const {
  SmallVector<StringAttr> axes;
  for (Attribute axis : getDims()[dim])
    axes.push_back(cast<StringAttr>(axis));
  return axes;
}

SmallVector<StringAttr> ShardingAttr::getShardedAxes() const {
  SmallVector<StringAttr> axes;
  for (int64_t dim = 0; dim < getRank(); ++dim)
    llvm::append_range(axes, getDimAxes(dim));
  return axes;
}

bool ShardingAttr::isShardedOver(StringRef axis) const {
  return llvm::any_of(getShardedAxes(),
                      [&](StringAttr a) { return a.getValue() == axis; });
}

bool ShardingAttr::isUnreducedOver(StringRef axis) const {
  return llvm::any_of(getUnreduced(),
                      [&](StringAttr a) { return a.getValue() == axis; });
}

bool ShardingAttr::isFullyReplicated() const {
  return getUnreduced().empty() &&
         llvm::all_of(getDims(), [](ArrayAttr axes) { return axes.empty(); });
}

/// Builds a sharding from per-dimension axis lists, failing (without a
/// diagnostic) when an axis is used twice.
static FailureOr<ShardingAttr>
buildChecked(MLIRContext *ctx, FlatSymbolRefAttr mesh,
             ArrayRef<SmallVector<StringAttr>> dims,
             ArrayRef<StringAttr> unreduced) {
  llvm::SmallDenseSet<StringAttr> seen;
  SmallVector<ArrayAttr> dimAttrs;
  for (const SmallVector<StringAttr> &axes : dims) {
    for (StringAttr axis : axes)
      if (!seen.insert(axis).second)
        return failure();
    dimAttrs.push_back(
        ArrayAttr::get(ctx, SmallVector<Attribute>(axes.begin(), axes.end())));
  }
  for (StringAttr axis : unreduced)
    if (!seen.insert(axis).second)
      return failure();
  return ShardingAttr::get(ctx, mesh, dimAttrs, unreduced);
}

FailureOr<ShardingAttr>
ShardingAttr::withDimAxesAppended(int64_t dim,
                                  ArrayRef<StringAttr> axes) const {
  assert(dim >= 0 && dim < getRank() && "dimension out of range");
  SmallVector<SmallVector<StringAttr>> dims;
  for (int64_t d = 0; d < getRank(); ++d)
    dims.push_back(getDimAxes(d));
  llvm::append_range(dims[dim], axes);
  return buildChecked(getContext(), getMesh(), dims, getUnreduced());
}

FailureOr<ShardingAttr> ShardingAttr::compose(ShardingAttr other) const {
  if (other.getMesh() != getMesh() || other.getRank() != getRank())
    return failure();
  SmallVector<SmallVector<StringAttr>> dims;
  for (int64_t d = 0; d < getRank(); ++d) {
    dims.push_back(getDimAxes(d));
    llvm::append_range(dims.back(), other.getDimAxes(d));
  }
  SmallVector<StringAttr> unreduced(getUnreduced());
  for (StringAttr axis : other.getUnreduced())
    if (!llvm::is_contained(unreduced, axis))
      unreduced.push_back(axis);
  return buildChecked(getContext(), getMesh(), dims, unreduced);
}

ShardingAttr ShardingAttr::permute(ArrayRef<int64_t> permutation) const {
  assert(static_cast<int64_t>(permutation.size()) == getRank() &&
         "permutation has the wrong size");
  SmallVector<ArrayAttr> dims;
  for (int64_t source : permutation)
    dims.push_back(getDims()[source]);
  return get(getContext(), getMesh(), dims, getUnreduced());
}

ShardingAttr ShardingAttr::withoutUnreduced(ArrayRef<StringAttr> axes) const {
  SmallVector<StringAttr> unreduced;
  for (StringAttr axis : getUnreduced())
    if (!llvm::is_contained(axes, axis))
      unreduced.push_back(axis);
  return get(getContext(), getMesh(), getDims(), unreduced);
}

int64_t ShardingAttr::getNumShards(int64_t dim, MeshAttr mesh) const {
  return mesh.getGroupSize(getDimAxes(dim));
}

FailureOr<SmallVector<int64_t>> ShardingAttr::getLocalShape(
    ArrayRef<int64_t> globalShape, MeshAttr mesh,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (static_cast<int64_t>(globalShape.size()) != getRank()) {
    if (emitError)
      emitError() << "sharding has rank " << getRank()
                  << " but the tensor has rank " << globalShape.size();
    return failure();
  }
  SmallVector<int64_t> local;
  for (auto [dim, size] : llvm::enumerate(globalShape)) {
    SmallVector<StringAttr> axes = getDimAxes(dim);
    int64_t shards = mesh.getGroupSize(axes);
    if (size % shards != 0) {
      if (emitError)
        emitError() << "dimension " << dim << " of size " << size
                    << " is not divisible by its " << shards
                    << " shards over mesh axes " << formatAxes(axes);
      return failure();
    }
    local.push_back(size / shards);
  }
  return local;
}

SmallVector<int64_t> ShardingAttr::getGlobalShape(ArrayRef<int64_t> localShape,
                                                  MeshAttr mesh) const {
  assert(static_cast<int64_t>(localShape.size()) == getRank() &&
         "rank mismatch");
  SmallVector<int64_t> global;
  for (auto [dim, size] : llvm::enumerate(localShape))
    global.push_back(size * getNumShards(dim, mesh));
  return global;
}

SmallVector<int64_t>
ShardingAttr::getShardOffsets(ArrayRef<int64_t> localShape, MeshAttr mesh,
                              ArrayRef<int64_t> coordinates) const {
  assert(static_cast<int64_t>(localShape.size()) == getRank() &&
         "rank mismatch");
  // A device holds the block at its group index over the dimension's axes.
  SmallVector<int64_t> offsets;
  for (auto [dim, size] : llvm::enumerate(localShape))
    offsets.push_back(mesh.getGroupIndex(coordinates, getDimAxes(dim)) * size);
  return offsets;
}

LogicalResult ShardingAttr::verifyAgainst(
    MeshAttr mesh, Type type, function_ref<InFlightDiagnostic()> emitError,
    bool typeIsLocal) const {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return emitError() << "a sharding applies to ranked tensors, not " << type;
  SmallVector<StringAttr> shardedAxes = getShardedAxes();
  for (ArrayRef<StringAttr> axes :
       {ArrayRef<StringAttr>(shardedAxes), getUnreduced()})
    for (StringAttr axis : axes)
      if (!mesh.getAxisIndex(axis.getValue()))
        return emitError() << "mesh " << getMesh() << " has no axis \""
                           << axis.getValue() << "\"";
  if (tensorType.getRank() != getRank())
    return emitError() << "sharding has rank " << getRank() << " but the value "
                       << "of type " << type << " has rank "
                       << tensorType.getRank();
  if (typeIsLocal)
    return success();
  return success(
      succeeded(getLocalShape(tensorType.getShape(), mesh, emitError)));
}
