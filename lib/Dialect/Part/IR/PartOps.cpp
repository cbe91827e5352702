//===- PartOps.cpp - part ops: verifiers and shape inference --------------===//
//
// Each verifier implements the op's **Constraints:** list in PartOps.td.
// Shape-inferring ops report their errors from inferReturnTypes.
//
//===----------------------------------------------------------------------===//

#include "partition/Dialect/Part/IR/PartOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using namespace mlir;
using namespace partition::part;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Formats a shape as `[4, 8]` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string result = "[";
  llvm::raw_string_ostream os(result);
  llvm::interleaveComma(shape, os);
  os << "]";
  return result;
}

MeshOp partition::part::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                                   SymbolTableCollection *symbolTable) {
  if (symbolTable)
    return symbolTable->lookupNearestSymbolFrom<MeshOp>(from, name);
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, name);
}

LogicalResult
partition::part::verifyShardingFor(Operation *from, ShardingAttr sharding,
                                   Type type,
                                   function_ref<InFlightDiagnostic()> emitError,
                                   SymbolTableCollection *symbolTable) {
  MeshOp mesh = lookupMesh(from, sharding.getMesh(), symbolTable);
  if (!mesh)
    return emitError() << "sharding refers to " << sharding.getMesh()
                       << ", which is not a part.mesh";
  return sharding.verifyAgainst(mesh.getMesh(), type, emitError,
                                /*typeIsLocal=*/bool(getSpmdMesh(from)));
}

FailureOr<int64_t> partition::part::lookupMeshAxisSize(ModuleOp module,
                                                       StringRef meshName,
                                                       StringRef axis,
                                                       StringRef purpose) {
  auto mesh =
      dyn_cast_or_null<MeshOp>(SymbolTable::lookupSymbolIn(module, meshName));
  if (!mesh)
    return module.emitError()
           << "no part.mesh @" << meshName << " to " << purpose;
  std::optional<int64_t> size = mesh.getMesh().getAxisSize(axis);
  if (!size)
    return mesh.emitError()
           << "mesh @" << meshName << " has no axis \"" << axis << "\"";
  return *size;
}

int64_t partition::part::contiguousBlockCount(RankedTensorType block,
                                              RankedTensorType whole,
                                              int64_t dim) {
  if (!block || !whole || !block.hasStaticShape() || !whole.hasStaticShape() ||
      dim < 0 || dim >= block.getRank() || block.getDimSize(dim) == 0)
    return 0;
  for (int64_t i = 0; i < dim; ++i)
    if (block.getDimSize(i) != 1)
      return 0;
  return whole.getDimSize(dim) / block.getDimSize(dim);
}

FlatSymbolRefAttr partition::part::getSpmdMesh(Operation *op) {
  StringRef name = PartDialect::getSpmdAttrName();
  for (; op; op = op->getParentOp())
    if (auto mesh = op->getAttrOfType<FlatSymbolRefAttr>(name))
      return mesh;
  return {};
}

std::optional<partition::runtime::DType>
partition::part::getRuntimeDType(Type elementType) {
  if (elementType.isF32())
    return runtime::DType::F32;
  if (elementType.isF16())
    return runtime::DType::F16;
  if (elementType.isBF16())
    return runtime::DType::BF16;
  if (elementType.isSignlessInteger(32))
    return runtime::DType::I32;
  if (elementType.isSignlessInteger(64))
    return runtime::DType::I64;
  return std::nullopt;
}

FailureOr<int64_t>
partition::part::getTensorBytes(RankedTensorType type,
                                function_ref<InFlightDiagnostic()> emitError) {
  int64_t elements = 1;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    std::optional<int64_t> product = llvm::checkedMul(elements, size);
    if (!product) {
      if (emitError)
        emitError() << "tensor too large: the dimensions of " << type
                    << " multiply to more than "
                    << std::numeric_limits<int64_t>::max() << " elements";
      return failure();
    }
    elements = *product;
  }
  Type elementType = type.getElementType();
  std::optional<runtime::DType> dtype = getRuntimeDType(elementType);
  int64_t elementBytes =
      dtype ? runtime::dtypeSize(*dtype)
      : elementType.isIntOrFloat()
          ? std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8)
          : 8;
  std::optional<int64_t> bytes = llvm::checkedMul(elements, elementBytes);
  if (!bytes) {
    if (emitError)
      emitError() << "tensor too large: " << type << " has " << elements
                  << " elements of " << elementBytes
                  << " bytes, which overflows int64";
    return failure();
  }
  return *bytes;
}

LogicalResult partition::part::verifyTensorSizes(Operation *op) {
  auto check = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return success(!tensor || succeeded(getTensorBytes(
                                  tensor, [&] { return op->emitOpError(); })));
  };
  // An operand a part op defines was checked as that op's result (the
  // verifier stops at the first op that fails, and a definition comes
  // first); others (a function's arguments, say) are checked where used.
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if ((!def || !def->hasTrait<PartOpTrait::BoundedTensorSizes>()) &&
        failed(check(operand.getType())))
      return failure();
  }
  for (Type type : op->getResultTypes())
    if (failed(check(type)))
      return failure();
  return success();
}

/// Ranked tensor type of `value`'s type, or null.
static RankedTensorType getTensorType(Type type) {
  return dyn_cast<RankedTensorType>(type);
}

namespace {
/// Emits shape-inference errors at an op's location, prefixed with the op's
/// name like a verifier error; silent when there is no location (as when a
/// builder probes whether a type can be inferred).
struct Reporter {
  std::optional<Location> loc;
  StringRef opName;

  template <typename... Args>
  LogicalResult operator()(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }
};
} // namespace

/// Reports an error when the element types of `a` and `b` differ.
static LogicalResult checkSameElementType(const Reporter &report,
                                          RankedTensorType a, StringRef aName,
                                          RankedTensorType b, StringRef bName) {
  if (a.getElementType() == b.getElementType())
    return success();
  return report("element types differ: ", aName, " has ", a.getElementType(),
                " and ", bName, " has ", b.getElementType());
}

/// Checks that `dim` indexes a tensor of rank `rank`.
static LogicalResult checkDim(const Reporter &report, StringRef what,
                              int64_t dim, int64_t rank) {
  if (dim >= 0 && dim < rank)
    return success();
  return report(what, " ", dim, " is out of range for rank ", rank);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses `[[0, 1], [1, 2]]` into a flat array.
static ParseResult parseSourceTargetPairs(OpAsmParser &parser,
                                          DenseI64ArrayAttr &pairs) {
  SmallVector<int64_t> flat;
  auto parsePair = [&]() -> ParseResult {
    int64_t source, target;
    if (parser.parseLSquare() || parser.parseInteger(source) ||
        parser.parseComma() || parser.parseInteger(target) ||
        parser.parseRSquare())
      return failure();
    flat.push_back(source);
    flat.push_back(target);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parsePair))
    return failure();
  pairs = DenseI64ArrayAttr::get(parser.getContext(), flat);
  return success();
}

static void printSourceTargetPairs(OpAsmPrinter &printer, Operation *,
                                   DenseI64ArrayAttr pairs) {
  ArrayRef<int64_t> flat = pairs.asArrayRef();
  printer << "[";
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    if (i)
      printer << ", ";
    printer << "[" << flat[i] << ", " << flat[i + 1] << "]";
  }
  printer << "]";
}

//===----------------------------------------------------------------------===//
// ShardingConstraintOp
//===----------------------------------------------------------------------===//

LogicalResult
ShardingConstraintOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyShardingFor(
      *this, getSharding(), getInput().getType(), [&] { return emitOpError(); },
      &symbolTable);
}

//===----------------------------------------------------------------------===//
// ConstantOp, CastOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult CastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getShape() != out.getShape())
    return emitOpError() << "changes the shape from "
                         << formatShape(in.getShape()) << " to "
                         << formatShape(out.getShape())
                         << "; a cast only converts the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

/// Infers the numpy-broadcast result type of `lhs` and `rhs`.
static LogicalResult inferBroadcast(const Reporter &report, Type lhsType,
                                    Type rhsType,
                                    SmallVectorImpl<Type> &inferred) {
  auto lhs = getTensorType(lhsType), rhs = getTensorType(rhsType);
  if (!lhs || !rhs)
    return report("operands must be ranked tensors");
  if (failed(checkSameElementType(report, lhs, "lhs", rhs, "rhs")))
    return failure();
  int64_t rank = std::max(lhs.getRank(), rhs.getRank());
  SmallVector<int64_t> shape(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.getRank()
                    ? 1
                    : lhs.getDimSize(i - (rank - lhs.getRank()));
    int64_t r = i < rank - rhs.getRank()
                    ? 1
                    : rhs.getDimSize(i - (rank - rhs.getRank()));
    if (l != r && l != 1 && r != 1)
      return report("shapes ", formatShape(lhs.getShape()), " and ",
                    formatShape(rhs.getShape()),
                    " do not broadcast: aligned dimension ", i, " has sizes ",
                    l, " and ", r);
    shape[i] = l == 1 ? r : l;
  }
  // Usually one operand has the result's shape: its type needs no lookup.
  if (lhs.getShape() == ArrayRef<int64_t>(shape) && !lhs.getEncoding())
    inferred.push_back(lhs);
  else if (rhs.getShape() == ArrayRef<int64_t>(shape) && !rhs.getEncoding())
    inferred.push_back(rhs);
  else
    inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

#define PART_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferBroadcast(Reporter{loc, OP::getOperationName()},               \
                          adaptor.getLhs().getType(),                          \
                          adaptor.getRhs().getType(), inferred);               \
  }
PART_BINARY_INFER(AddOp)
PART_BINARY_INFER(SubOp)
PART_BINARY_INFER(MulOp)
PART_BINARY_INFER(DivOp)
PART_BINARY_INFER(MaxOp)
PART_BINARY_INFER(MinOp)
PART_BINARY_INFER(PowOp)
#undef PART_BINARY_INFER

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  SmallVector<Type, 1> shape;
  if (failed(inferBroadcast(Reporter{loc, CompareOp::getOperationName()},
                            adaptor.getLhs().getType(),
                            adaptor.getRhs().getType(), shape)))
    return failure();
  inferred.push_back(
      cast<RankedTensorType>(shape.front()).clone(IntegerType::get(ctx, 32)));
  return success();
}

//===----------------------------------------------------------------------===//
// SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, SelectOp::getOperationName()};
  auto cond = getTensorType(adaptor.getCondition().getType());
  auto onTrue = getTensorType(adaptor.getTrueValue().getType());
  auto onFalse = getTensorType(adaptor.getFalseValue().getType());
  if (!cond || !onTrue || !onFalse)
    return report("operands must be ranked tensors");
  if (failed(checkSameElementType(report, onTrue, "true_value", onFalse,
                                  "false_value")))
    return failure();
  RankedTensorType types[] = {cond, onTrue, onFalse};
  int64_t rank = 0;
  for (RankedTensorType t : types)
    rank = std::max(rank, t.getRank());
  SmallVector<int64_t> shape(rank, 1);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t sizes[3];
    bool compatible = true;
    for (auto [k, t] : llvm::enumerate(types)) {
      int64_t lead = rank - t.getRank();
      sizes[k] = i < lead ? 1 : t.getDimSize(i - lead);
      if (sizes[k] == 1)
        continue;
      compatible &= shape[i] == 1 || shape[i] == sizes[k];
      shape[i] = sizes[k];
    }
    if (!compatible)
      return report("shapes ", formatShape(cond.getShape()), ", ",
                    formatShape(onTrue.getShape()), " and ",
                    formatShape(onFalse.getShape()),
                    " do not broadcast: aligned dimension ", i, " has sizes ",
                    sizes[0], ", ", sizes[1], " and ", sizes[2]);
  }
  inferred.push_back(RankedTensorType::get(shape, onTrue.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp, BatchMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, MatmulOp::getOperationName()};
  auto lhs = getTensorType(adaptor.getLhs().getType());
  auto rhs = getTensorType(adaptor.getRhs().getType());
  if (!lhs || !rhs)
    return report("operands must be ranked tensors");
  if (lhs.getRank() < 2)
    return report("lhs must have rank at least 2, got ",
                  formatShape(lhs.getShape()));
  if (rhs.getRank() != 2)
    return report("rhs must have rank 2, got ", formatShape(rhs.getShape()));
  if (failed(checkSameElementType(report, lhs, "lhs", rhs, "rhs")))
    return failure();
  int64_t rank = lhs.getRank();
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = lhs.getDimSize(ta ? rank - 1 : rank - 2);
  int64_t lhsK = lhs.getDimSize(ta ? rank - 2 : rank - 1);
  int64_t rhsK = rhs.getDimSize(tb ? 1 : 0);
  int64_t n = rhs.getDimSize(tb ? 0 : 1);
  if (lhsK != rhsK)
    return report("contracting sizes differ: lhs ", formatShape(lhs.getShape()),
                  " has ", lhsK, ", rhs ", formatShape(rhs.getShape()), " has ",
                  rhsK);
  SmallVector<int64_t> shape(lhs.getShape().drop_back(2));
  shape.push_back(m);
  shape.push_back(n);
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult BatchMatmulOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, BatchMatmulOp::getOperationName()};
  auto lhs = getTensorType(adaptor.getLhs().getType());
  auto rhs = getTensorType(adaptor.getRhs().getType());
  if (!lhs || !rhs)
    return report("operands must be ranked tensors");
  if (lhs.getRank() < 3 || lhs.getRank() != rhs.getRank())
    return report("operands must have one rank of at least 3, got ",
                  formatShape(lhs.getShape()), " and ",
                  formatShape(rhs.getShape()));
  if (failed(checkSameElementType(report, lhs, "lhs", rhs, "rhs")))
    return failure();
  int64_t rank = lhs.getRank();
  if (lhs.getShape().drop_back(2) != rhs.getShape().drop_back(2))
    return report("batch dimensions differ: lhs ", formatShape(lhs.getShape()),
                  ", rhs ", formatShape(rhs.getShape()));
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = lhs.getDimSize(ta ? rank - 1 : rank - 2);
  int64_t lhsK = lhs.getDimSize(ta ? rank - 2 : rank - 1);
  int64_t rhsK = rhs.getDimSize(tb ? rank - 1 : rank - 2);
  int64_t n = rhs.getDimSize(tb ? rank - 2 : rank - 1);
  if (lhsK != rhsK)
    return report("contracting sizes differ: lhs ", formatShape(lhs.getShape()),
                  " has ", lhsK, ", rhs ", formatShape(rhs.getShape()), " has ",
                  rhsK);
  SmallVector<int64_t> shape(lhs.getShape().drop_back(2));
  shape.push_back(m);
  shape.push_back(n);
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp, LayerNormOp, RmsNormOp, RotaryEmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << rank;
  return success();
}

/// Checks a normalisation weight (`scale` or `bias`) against the input.
static LogicalResult checkNormWeight(Operation *op, StringRef name,
                                     Value weight, RankedTensorType input) {
  auto type = cast<RankedTensorType>(weight.getType());
  int64_t d = input.getShape().empty() ? 0 : input.getShape().back();
  if (input.getRank() < 1 || type.getShape() != ArrayRef<int64_t>{d})
    return op->emitOpError()
           << name << " has shape " << formatShape(type.getShape())
           << " but must be [" << d << "], the last dimension of the input "
           << formatShape(input.getShape());
  if (type.getElementType() != input.getElementType())
    return op->emitOpError()
           << name << " has element type " << type.getElementType()
           << " but the input has " << input.getElementType();
  return success();
}

LogicalResult LayerNormOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(checkNormWeight(*this, "scale", getScale(), input)))
    return failure();
  if (getBias() && failed(checkNormWeight(*this, "bias", getBias(), input)))
    return failure();
  return success();
}

LogicalResult RmsNormOp::verify() {
  return checkNormWeight(*this, "scale", getScale(),
                         cast<RankedTensorType>(getInput().getType()));
}

LogicalResult RotaryEmbeddingOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (input.getRank() < 2)
    return emitOpError() << "input must have rank at least 2, got "
                         << formatShape(input.getShape());
  int64_t s = input.getDimSize(input.getRank() - 2);
  int64_t d = input.getDimSize(input.getRank() - 1);
  if (d % 2 != 0)
    return emitOpError() << "last dimension of the input must be even to "
                            "rotate halves, got "
                         << d;
  for (auto [name, table] : {std::pair<StringRef, Value>{"cos", getCos()},
                             std::pair<StringRef, Value>{"sin", getSin()}}) {
    auto type = cast<RankedTensorType>(table.getType());
    if (type.getShape() != ArrayRef<int64_t>{s, d})
      return emitOpError() << name << " table has shape "
                           << formatShape(type.getShape()) << " but must be ["
                           << s << ", " << d
                           << "], the last two dimensions of the input";
    if (type.getElementType() != input.getElementType())
      return emitOpError() << name << " table has element type "
                           << type.getElementType() << " but the input has "
                           << input.getElementType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp, SoftmaxCrossEntropyOp
//===----------------------------------------------------------------------===//

/// The constraints part.attention and part.attention_grad share on the
/// query, key, value and attributes.
static LogicalResult checkAttentionOperands(const Reporter &report,
                                            RankedTensorType q,
                                            RankedTensorType k,
                                            RankedTensorType v, bool causal,
                                            std::optional<int64_t> window,
                                            bool positions) {
  if (!q || !k || !v)
    return report("operands must be ranked tensors");
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return report("query, key and value must have rank 4 [batch, heads, seq, "
                  "head_dim], got ",
                  formatShape(q.getShape()), ", ", formatShape(k.getShape()),
                  " and ", formatShape(v.getShape()));
  if (failed(checkSameElementType(report, q, "query", k, "key")) ||
      failed(checkSameElementType(report, q, "query", v, "value")))
    return failure();
  if (q.getDimSize(0) != k.getDimSize(0) || k.getDimSize(0) != v.getDimSize(0))
    return report("batch sizes differ: query ", q.getDimSize(0), ", key ",
                  k.getDimSize(0), ", value ", v.getDimSize(0));
  if (k.getDimSize(1) != v.getDimSize(1) || k.getDimSize(2) != v.getDimSize(2))
    return report("key ", formatShape(k.getShape()), " and value ",
                  formatShape(v.getShape()),
                  " must have the same heads and sequence length");
  if (k.getDimSize(1) < 1)
    return report("key/value heads must be at least 1, got ", k.getDimSize(1));
  if (q.getDimSize(1) % k.getDimSize(1) != 0)
    return report("key/value heads (", k.getDimSize(1),
                  ") must divide query heads (", q.getDimSize(1), ")");
  if (q.getDimSize(3) != k.getDimSize(3))
    return report("head sizes differ: query ", q.getDimSize(3), ", key ",
                  k.getDimSize(3));
  if (causal && !positions && q.getDimSize(2) != k.getDimSize(2))
    return report("causal attention needs equal query and key "
                  "sequence lengths (or positions), got ",
                  q.getDimSize(2), " and ", k.getDimSize(2));
  if (window) {
    if (*window < 1)
      return report("window must be at least 1, got ", *window);
    if (!causal)
      return report("window ", *window,
                    " needs causal: a sliding window ends at the query's "
                    "own position");
  }
  return success();
}

/// The optional positions of an attention: both or neither, with causal,
/// shaped [Sq] and [Sk].
static LogicalResult checkAttentionPositions(const Reporter &report,
                                             RankedTensorType q,
                                             RankedTensorType k, bool causal,
                                             Value queryPositions,
                                             Value keyPositions) {
  if (!queryPositions && !keyPositions)
    return success();
  if (!queryPositions || !keyPositions)
    return report("query and key positions come together, got only the ",
                  queryPositions ? "query's" : "key's");
  if (!causal)
    return report("positions need causal: they only place the causal mask");
  auto qp = getTensorType(queryPositions.getType());
  auto kp = getTensorType(keyPositions.getType());
  if (!qp || !kp || qp.getShape() != ArrayRef<int64_t>{q.getDimSize(2)} ||
      kp.getShape() != ArrayRef<int64_t>{k.getDimSize(2)})
    return report("query and key positions must have shapes [",
                  q.getDimSize(2), "] and [", k.getDimSize(2), "], got ",
                  qp ? formatShape(qp.getShape()) : std::string("unranked"),
                  " and ",
                  kp ? formatShape(kp.getShape()) : std::string("unranked"));
  if (qp.getElementType() != kp.getElementType())
    return report("query and key positions must have one element type, got ",
                  qp.getElementType(), " and ", kp.getElementType());
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, AttentionOp::getOperationName()};
  auto q = getTensorType(adaptor.getQuery().getType());
  auto k = getTensorType(adaptor.getKey().getType());
  auto v = getTensorType(adaptor.getValue().getType());
  bool positions = adaptor.getQueryPositions() || adaptor.getKeyPositions();
  if (failed(checkAttentionOperands(report, q, k, v, adaptor.getCausal(),
                                    adaptor.getWindow(), positions)) ||
      failed(checkAttentionPositions(report, q, k, adaptor.getCausal(),
                                     adaptor.getQueryPositions(),
                                     adaptor.getKeyPositions())))
    return failure();
  inferred.push_back(RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType()));
  return success();
}

LogicalResult AttentionBlockOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, AttentionBlockOp::getOperationName()};
  auto q = getTensorType(adaptor.getQuery().getType());
  auto k = getTensorType(adaptor.getKey().getType());
  auto v = getTensorType(adaptor.getValue().getType());
  if (failed(checkAttentionOperands(report, q, k, v, adaptor.getCausal(),
                                    adaptor.getWindow(), /*positions=*/true)) ||
      failed(checkAttentionPositions(report, q, k, adaptor.getCausal(),
                                     adaptor.getQueryPositions(),
                                     adaptor.getKeyPositions())))
    return failure();
  int64_t b = q.getDimSize(0), h = q.getDimSize(1), sq = q.getDimSize(2);
  inferred.push_back(RankedTensorType::get({b, h, sq, v.getDimSize(3)},
                                           q.getElementType()));
  inferred.push_back(RankedTensorType::get(
      {b, h, sq}, Float32Type::get(q.getContext())));
  return success();
}

/// attention_grad's optional lse and delta: both or neither, with
/// positions, f32 [B, H, Sq].
static LogicalResult checkBlockRows(const Reporter &report,
                                    RankedTensorType q, bool positions,
                                    Value lse, Value delta) {
  if (!lse && !delta)
    return success();
  if (!lse || !delta || !positions)
    return report("lse and delta come together, with positions");
  SmallVector<int64_t> rows = {q.getDimSize(0), q.getDimSize(1),
                               q.getDimSize(2)};
  for (Value v : {lse, delta}) {
    auto t = getTensorType(v.getType());
    if (!t || t.getShape() != ArrayRef<int64_t>(rows) ||
        !t.getElementType().isF32())
      return report("lse and delta must be f32 ", formatShape(rows), ", got ",
                    t ? formatShape(t.getShape()) : std::string("unranked"));
  }
  return success();
}

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, AttentionGradOp::getOperationName()};
  auto q = getTensorType(adaptor.getQuery().getType());
  auto k = getTensorType(adaptor.getKey().getType());
  auto v = getTensorType(adaptor.getValue().getType());
  auto dy = getTensorType(adaptor.getResultGrad().getType());
  bool positions = adaptor.getQueryPositions() || adaptor.getKeyPositions();
  if (failed(checkAttentionOperands(report, q, k, v, adaptor.getCausal(),
                                    adaptor.getWindow(), positions)) ||
      failed(checkAttentionPositions(report, q, k, adaptor.getCausal(),
                                     adaptor.getQueryPositions(),
                                     adaptor.getKeyPositions())))
    return failure();
  if (!dy)
    return report("operands must be ranked tensors");
  if (failed(checkBlockRows(report, q, positions, adaptor.getLse(),
                            adaptor.getDelta())))
    return failure();
  SmallVector<int64_t> result = {q.getDimSize(0), q.getDimSize(1),
                                 q.getDimSize(2), v.getDimSize(3)};
  if (dy.getShape() != ArrayRef<int64_t>(result))
    return report("result_grad has shape ", formatShape(dy.getShape()),
                  " but the attention's result has ", formatShape(result));
  if (failed(checkSameElementType(report, q, "query", dy, "result_grad")))
    return failure();
  Type t = q.getElementType();
  int64_t b = q.getDimSize(0), h = q.getDimSize(1), sk = k.getDimSize(2);
  inferred.push_back(q);
  inferred.push_back(RankedTensorType::get({b, h, sk, k.getDimSize(3)}, t));
  inferred.push_back(RankedTensorType::get({b, h, sk, v.getDimSize(3)}, t));
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, SoftmaxCrossEntropyOp::getOperationName()};
  auto logits = getTensorType(adaptor.getLogits().getType());
  auto labels = getTensorType(adaptor.getLabels().getType());
  if (!logits || !labels)
    return report("operands must be ranked tensors");
  if (logits.getRank() < 1 ||
      logits.getShape().drop_back() != labels.getShape())
    return report("labels have shape ", formatShape(labels.getShape()),
                  " but must be the logits' shape ",
                  formatShape(logits.getShape()),
                  " without its last (class) dimension");
  if (adaptor.getReduction() == LossReduction::None)
    inferred.push_back(
        RankedTensorType::get(labels.getShape(), logits.getElementType()));
  else
    inferred.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Infers the result of reducing `input` over `dims`.
static LogicalResult inferReduce(const Reporter &report, Type inputType,
                                 ArrayRef<int64_t> dims, bool keepDims,
                                 SmallVectorImpl<Type> &inferred) {
  auto input = getTensorType(inputType);
  if (!input)
    return report("input must be a ranked tensor");
  if (dims.empty())
    return report("dims must not be empty");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t dim : dims) {
    if (failed(checkDim(report, "reduced dimension", dim, input.getRank())))
      return failure();
    if (!seen.insert(dim).second)
      return report("reduced dimension ", dim, " is listed twice");
  }
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(input.getShape())) {
    if (!seen.contains(dim))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

#define PART_REDUCE_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferReduce(Reporter{loc, OP::getOperationName()},                  \
                       adaptor.getInput().getType(), adaptor.getDims(),        \
                       adaptor.getKeepDims(), inferred);                       \
  }
PART_REDUCE_INFER(ReduceSumOp)
PART_REDUCE_INFER(ReduceMeanOp)
PART_REDUCE_INFER(ReduceMaxOp)
#undef PART_REDUCE_INFER

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "changes the element type from "
                         << in.getElementType() << " to "
                         << out.getElementType() << "; use part.cast";
  if (in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << formatShape(in.getShape())
                         << " (" << in.getNumElements() << " elements) to "
                         << formatShape(out.getShape()) << " ("
                         << out.getNumElements() << " elements)";
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, TransposeOp::getOperationName()};
  auto input = getTensorType(adaptor.getInput().getType());
  if (!input)
    return report("input must be a ranked tensor");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return report("permutation ", formatShape(perm), " has ", perm.size(),
                  " entries but the input has rank ", input.getRank());
  llvm::SmallSet<int64_t, 4> seen;
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || !seen.insert(p).second)
      return report(formatShape(perm), " is not a permutation of [0, ",
                    input.getRank(), ")");
    shape.push_back(input.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "changes the element type from "
                         << in.getElementType() << " to "
                         << out.getElementType();
  if (in.getRank() > out.getRank())
    return emitOpError() << "cannot broadcast " << formatShape(in.getShape())
                         << " to the lower-rank "
                         << formatShape(out.getShape());
  int64_t lead = out.getRank() - in.getRank();
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (in.getDimSize(i) != 1 && in.getDimSize(i) != out.getDimSize(lead + i))
      return emitOpError() << "cannot broadcast " << formatShape(in.getShape())
                           << " to " << formatShape(out.getShape())
                           << ": operand dimension " << i << " has size "
                           << in.getDimSize(i) << ", result dimension "
                           << lead + i << " has size "
                           << out.getDimSize(lead + i);
  return success();
}

/// The checks shared by slice and its adjoint pad: `window` is the strided
/// block at `offsets` (with strides) inside `whole`. Slice reads the window
/// out of its input; pad writes its input as the window of its result.
static LogicalResult verifyStridedWindow(Operation *op, bool isSlice,
                                         ArrayRef<int64_t> offsets,
                                         std::optional<ArrayRef<int64_t>> given) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  RankedTensorType whole = isSlice ? in : out, window = isSlice ? out : in;
  if (in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank())
    return op->emitOpError() << "result " << out << " must have the rank and "
                             << "element type of the input " << in;
  SmallVector<int64_t> strides(in.getRank(), 1);
  if (given)
    strides.assign(given->begin(), given->end());
  if (static_cast<int64_t>(offsets.size()) != in.getRank() ||
      static_cast<int64_t>(strides.size()) != in.getRank())
    return op->emitOpError()
           << "needs one offset and one stride per dimension ("
           << in.getRank() << "), got " << offsets.size() << " offsets and "
           << strides.size() << " strides";
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (offsets[d] < 0 || strides[d] < 1)
      return op->emitOpError()
             << "dimension " << d << " has offset " << offsets[d]
             << " and stride " << strides[d]
             << "; offsets must be >= 0 and strides >= 1";
    int64_t size = window.getDimSize(d);
    if (size <= 0)
      continue;
    std::optional<int64_t> span = llvm::checkedMul(size - 1, strides[d]);
    std::optional<int64_t> end =
        span ? llvm::checkedAdd(offsets[d], *span) : std::nullopt;
    if (!end)
      return op->emitOpError()
             << "dimension " << d << " has offset " << offsets[d] << ", size "
             << size << " and stride " << strides[d]
             << ", whose last element overflows int64";
    int64_t last = *end;
    if (last >= whole.getDimSize(d))
      return op->emitOpError()
             << "dimension " << d << (isSlice ? " reads" : " writes")
             << " element " << last << " (offset " << offsets[d] << ", size "
             << size << ", stride " << strides[d] << ") but the "
             << (isSlice ? "input" : "result") << " has only "
             << whole.getDimSize(d);
  }
  return success();
}

LogicalResult SliceOp::verify() {
  return verifyStridedWindow(*this, /*isSlice=*/true, getOffsets(),
                             getStrides());
}

LogicalResult PadOp::verify() {
  return verifyStridedWindow(*this, /*isSlice=*/false, getOffsets(),
                             getStrides());
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, ConcatOp::getOperationName()};
  if (adaptor.getInputs().empty())
    return report("needs at least one operand");
  auto first = getTensorType(adaptor.getInputs().front().getType());
  if (!first)
    return report("operands must be ranked tensors");
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(report, "concatenation dimension", dim, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [index, value] :
       llvm::enumerate(adaptor.getInputs().drop_front())) {
    auto type = getTensorType(value.getType());
    if (!type)
      return report("operands must be ranked tensors");
    if (failed(checkSameElementType(report, first, "operand 0", type,
                                    "operand " + std::to_string(index + 1))))
      return failure();
    bool compatible = type.getRank() == first.getRank();
    for (int64_t d = 0; compatible && d < first.getRank(); ++d)
      compatible = d == dim || type.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return report("operand ", index + 1, " has shape ",
                    formatShape(type.getShape()),
                    ", which does not match operand 0 ",
                    formatShape(first.getShape()), " outside dimension ", dim);
    shape[dim] += type.getDimSize(dim);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Reporter report{loc, GatherOp::getOperationName()};
  auto data = getTensorType(adaptor.getData().getType());
  auto indices = getTensorType(adaptor.getIndices().getType());
  if (!data || !indices)
    return report("operands must be ranked tensors");
  int64_t axis = adaptor.getAxis();
  if (failed(checkDim(report, "gather axis", axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::verify() {
  auto updates = cast<RankedTensorType>(getUpdates().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= out.getRank())
    return emitOpError() << "scatter axis " << axis
                         << " is out of range for the result's rank "
                         << out.getRank();
  if (updates.getElementType() != out.getElementType())
    return emitOpError() << "updates have element type "
                         << updates.getElementType() << " but the result has "
                         << out.getElementType();
  SmallVector<int64_t> expected(out.getShape().take_front(axis));
  llvm::append_range(expected, indices.getShape());
  llvm::append_range(expected, out.getShape().drop_front(axis + 1));
  if (updates.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "updates have shape "
                         << formatShape(updates.getShape()) << " but must be "
                         << formatShape(expected) << " for indices "
                         << formatShape(indices.getShape()) << ", result "
                         << formatShape(out.getShape()) << " and axis " << axis;
  return success();
}

//===----------------------------------------------------------------------===//
// Mixture-of-experts routing
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto values = cast<RankedTensorType>(getValues().getType());
  auto indices = cast<RankedTensorType>(getIndices().getType());
  if (input.getRank() < 1)
    return emitOpError() << "needs an input of rank >= 1";
  if (values.getElementType() != input.getElementType())
    return emitOpError() << "values have element type "
                         << values.getElementType() << " but the input has "
                         << input.getElementType();
  if (!indices.getElementType().isInteger(64))
    return emitOpError() << "indices must be i64, not "
                         << indices.getElementType();
  SmallVector<int64_t> expected(input.getShape());
  int64_t k = values.getShape().empty() ? 0 : values.getShape().back();
  expected.back() = k;
  if (values.getShape() != ArrayRef<int64_t>(expected) ||
      indices.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "results have shapes "
                         << formatShape(values.getShape()) << " and "
                         << formatShape(indices.getShape())
                         << " but both must be the input's "
                         << formatShape(input.getShape())
                         << " with the last dimension K";
  if (k < 1 || k > input.getShape().back())
    return emitOpError() << "takes K = " << k << " of "
                         << input.getShape().back()
                         << " entries; K must be in [1, "
                         << input.getShape().back() << "]";
  return success();
}

/// Checks a routing op's buffer [E, G, C, H], slots [G, S, K(, H)] and
/// indices [G, S, K]: the shared dimensions agree.
static LogicalResult verifyRouting(Operation *op, RankedTensorType buffer,
                                   RankedTensorType slots,
                                   RankedTensorType indices,
                                   StringRef slotsName) {
  if (buffer.getRank() != 4 || indices.getRank() != 3)
    return op->emitOpError()
           << "needs a buffer [E, G, C, H] and indices [G, S, K], not "
           << formatShape(buffer.getShape()) << " and "
           << formatShape(indices.getShape());
  ArrayRef<int64_t> b = buffer.getShape(), i = indices.getShape();
  SmallVector<int64_t> perSlot{i[0], i[1], i[2], b[3]};
  SmallVector<int64_t> perToken{i[0], i[1], b[3]};
  bool tokens = isa<ExpertDispatchOp>(op) &&
                slots.getShape() == ArrayRef<int64_t>(perToken);
  if (!tokens && slots.getShape() != ArrayRef<int64_t>(perSlot))
    return op->emitOpError()
           << slotsName << " has shape " << formatShape(slots.getShape())
           << " but must be " << formatShape(perSlot)
           << (isa<ExpertDispatchOp>(op)
                   ? " (or " + formatShape(perToken) + ")"
                   : std::string())
           << " for indices " << formatShape(i) << " and buffer "
           << formatShape(b);
  if (b[1] != i[0])
    return op->emitOpError() << "buffer " << formatShape(b) << " has " << b[1]
                             << " groups but the indices have " << i[0];
  if (b[0] < 1 || b[2] < 1)
    return op->emitOpError() << "buffer " << formatShape(b)
                             << " needs at least one expert and one slot";
  if (buffer.getElementType() != slots.getElementType())
    return op->emitOpError() << "element types differ: "
                             << buffer.getElementType() << " and "
                             << slots.getElementType();
  return success();
}

LogicalResult ExpertDispatchOp::verify() {
  return verifyRouting(*this, cast<RankedTensorType>(getResult().getType()),
                       cast<RankedTensorType>(getInput().getType()),
                       cast<RankedTensorType>(getIndices().getType()),
                       "input");
}

LogicalResult ExpertCombineOp::verify() {
  return verifyRouting(*this, cast<RankedTensorType>(getInput().getType()),
                       cast<RankedTensorType>(getResult().getType()),
                       cast<RankedTensorType>(getIndices().getType()),
                       "result");
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Resolves a collective's mesh and checks its axes; returns the group size.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                                      ArrayAttr axes,
                                      SymbolTableCollection &symbolTable) {
  MeshOp mesh = lookupMesh(op, meshName, &symbolTable);
  if (!mesh)
    return op->emitOpError()
           << "refers to " << meshName << ", which is not a part.mesh";
  if (axes.empty())
    return op->emitOpError() << "needs at least one mesh axis";
  llvm::StringSet<> seen;
  int64_t size = 1;
  for (Attribute attr : axes) {
    StringRef axis = cast<StringAttr>(attr).getValue();
    std::optional<int64_t> axisSize = mesh.getMesh().getAxisSize(axis);
    if (!axisSize)
      return op->emitOpError()
             << "mesh " << meshName << " has no axis \"" << axis << "\"";
    if (!seen.insert(axis).second)
      return op->emitOpError() << "lists mesh axis \"" << axis << "\" twice";
    size *= *axisSize;
  }
  return size;
}

/// Checks that `result` is `input` with dimension `dim` multiplied by
/// `factor` (or divided, when `divide`); the rest must be equal.
static LogicalResult checkScaledDim(Operation *op, Value inputValue,
                                    Value resultValue, StringRef dimName,
                                    int64_t dim, int64_t factor, bool divide) {
  auto in = cast<RankedTensorType>(inputValue.getType());
  auto out = cast<RankedTensorType>(resultValue.getType());
  if (in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank())
    return op->emitOpError() << "result " << out << " must have the rank and "
                             << "element type of the operand " << in;
  if (dim < 0 || dim >= in.getRank())
    return op->emitOpError() << dimName << " " << dim
                             << " is out of range for rank " << in.getRank();
  if (divide && in.getDimSize(dim) % factor != 0)
    return op->emitOpError()
           << "operand dimension " << dim << " of size " << in.getDimSize(dim)
           << " is not divisible by the group size " << factor;
  SmallVector<int64_t> expected(in.getShape());
  std::optional<int64_t> scaled =
      divide ? std::optional<int64_t>(expected[dim] / factor)
             : llvm::checkedMul(expected[dim], factor);
  if (!scaled)
    return op->emitOpError()
           << "operand dimension " << dim << " of size " << in.getDimSize(dim)
           << " times the group size " << factor << " overflows int64";
  expected[dim] = *scaled;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError()
           << "result shape " << formatShape(out.getShape()) << " must be "
           << formatShape(expected) << " for operand "
           << formatShape(in.getShape()) << " and group size " << factor;
  return success();
}

MeshOp AllReduceOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp AllGatherOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp ReduceScatterOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp AxisIndexOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp AllSliceOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp AllToAllOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}
MeshOp CollectivePermuteOp::getMeshOp(SymbolTableCollection &symbolTable) {
  return lookupMesh(*this, getMeshAttr(), &symbolTable);
}

LogicalResult
AllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return success(
      succeeded(verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable)));
}

LogicalResult
AllGatherOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);
  if (failed(group))
    return failure();
  return checkScaledDim(*this, getInput(), getResult(), "dim", getDim(), *group,
                        /*divide=*/false);
}

LogicalResult
ReduceScatterOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);
  if (failed(group))
    return failure();
  return checkScaledDim(*this, getInput(), getResult(), "dim", getDim(), *group,
                        /*divide=*/true);
}

LogicalResult
AxisIndexOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return success(
      succeeded(verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable)));
}

LogicalResult AllSliceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);
  if (failed(group))
    return failure();
  return checkScaledDim(*this, getInput(), getResult(), "dim", getDim(), *group,
                        /*divide=*/true);
}

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);
  if (failed(group))
    return failure();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  int64_t splitDim = getSplitDim(), concatDim = getConcatDim();
  if (in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank())
    return emitOpError() << "result " << out << " must have the rank and "
                         << "element type of the operand " << in;
  for (auto [name, dim] :
       {std::pair<StringRef, int64_t>{"split_dim", splitDim},
        std::pair<StringRef, int64_t>{"concat_dim", concatDim}})
    if (dim < 0 || dim >= in.getRank())
      return emitOpError() << name << " " << dim << " is out of range for rank "
                           << in.getRank();
  if (in.getDimSize(splitDim) % *group != 0)
    return emitOpError() << "operand dimension " << splitDim << " of size "
                         << in.getDimSize(splitDim)
                         << " is not divisible by the group size " << *group;
  SmallVector<int64_t> expected(in.getShape());
  expected[splitDim] /= *group;
  expected[concatDim] *= *group;
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape " << formatShape(out.getShape())
                         << " must be " << formatShape(expected)
                         << " for operand " << formatShape(in.getShape())
                         << " and group size " << *group;
  return success();
}

LogicalResult
CollectivePermuteOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<int64_t> group =
      verifyGroup(*this, getMeshAttr(), getAxes(), symbolTable);
  if (failed(group))
    return failure();
  ArrayRef<int64_t> pairs = getPairs();
  if (pairs.size() % 2 != 0)
    return emitOpError() << "pairs must hold [source, target] pairs, got "
                         << pairs.size() << " indices";
  llvm::SmallSet<int64_t, 8> sources, targets;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    int64_t source = pairs[i], target = pairs[i + 1];
    for (int64_t index : {source, target})
      if (index < 0 || index >= *group)
        return emitOpError() << "pair [" << source << ", " << target
                             << "] is out of range for group size " << *group;
    if (!sources.insert(source).second)
      return emitOpError() << "device " << source
                           << " is the source of more than one pair";
    if (!targets.insert(target).second)
      return emitOpError() << "device " << target
                           << " is the target of more than one pair";
  }
  return success();
}

/// Checks the peer mesh and channel of a send or recv.
static LogicalResult verifyPointToPoint(Operation *op, FlatSymbolRefAttr peer,
                                        int64_t channel,
                                        SymbolTableCollection &symbolTable) {
  if (!lookupMesh(op, peer, &symbolTable))
    return op->emitOpError()
           << "refers to " << peer << ", which is not a part.mesh";
  if (channel < 0)
    return op->emitOpError() << "channel must be non-negative, got " << channel;
  return success();
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPointToPoint(*this, getToAttr(), getChannel(), symbolTable);
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyPointToPoint(*this, getFromAttr(), getChannel(), symbolTable);
}

#define GET_OP_CLASSES
#include "partition/Dialect/Part/IR/PartOps.cpp.inc"
