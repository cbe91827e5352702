//===- PartToPlan.cpp - lower per-device part programs to a plan ----------===//
//
// Each `part.spmd` function becomes one plan program. Values are numbered in
// program order; function arguments become parameter or input bindings,
// constants become persistent data, reshapes alias their operand, and every
// other tensor result gets a slot in the program's arena. Arena offsets are
// assigned by liveness: a value lives from the instruction that defines it
// to its last use (through aliases), and values whose lifetimes overlap never
// share bytes.
//
//===----------------------------------------------------------------------===//

#include "partition/Conversion/PartToPlan/PartToPlan.h"
#include "partition/Conversion/PartToPlan/Fusion.h"

#include "LinkStage.h"
#include "partition/Dialect/Part/Analysis/ArenaPlanner.h"
#include "partition/Dialect/Part/Analysis/Cost.h"
#include "partition/Dialect/Part/Analysis/PipelineSchedule.h"
#include "partition/Dialect/Part/IR/PartOps.h"
#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/CollectiveScratch.h"
#include "partition/runtime/Plan.h"
#include "partition/runtime/StoredShape.h"
#include "partition/runtime/plan/plan_generated.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace mlir;
using namespace partition;
using namespace partition::part;
namespace fb = flatbuffers;

/// The version the runtime reads (runtime/include/partition/runtime/Plan.h).
static constexpr uint32_t kPlanFormatVersion =
    partition::runtime::kFormatVersion;

/// Arena offsets are multiples of this (what the plan loader requires).
static constexpr uint64_t kArenaAlignment = partition::runtime::kArenaAlignment;

/// The most constant bytes one plan stores: a flatbuffer is smaller than
/// 2 GiB, and the rest of the plan needs room too.
static constexpr uint64_t kMaxPlanConstantBytes = uint64_t(1) << 30;

namespace {

/// The plan dtype of `type`'s element type, if the runtime has one.
std::optional<plan::DType> getDType(Type elementType) {
  if (std::optional<runtime::DType> dtype = getRuntimeDType(elementType))
    return runtime::toPlanDType(*dtype);
  return std::nullopt;
}

uint64_t alignTo(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

/// One value of a program being lowered.
struct ValueInfo {
  RankedTensorType type;
  plan::Storage storage = plan::Storage::Arena;
  uint32_t index = 0;   // Persistent / Input / Alias target
  uint64_t offset = 0;  // Arena
  int64_t def = -1;     // instruction that defines it (-1: before the first)
  int64_t lastUse = -1; // last instruction that reads it
  /// The new value of a persistent value, computed into its buffer (see
  /// planArena); not a persistent value of its own.
  bool inPlace = false;
  /// Bytes of the value, checked to fit in int64 by numberValues.
  uint64_t size = 0;
  uint64_t bytes() const { return size; }
};

/// Lowers one function.
/// How weights files hold a parameter the program views in another shape
/// (part.stored_shape, and part.stored_permutation when transposed); null
/// attributes when the file holds the program's view.
struct StoredLayout {
  DenseI64ArrayAttr shape, permutation;
};

class ProgramLowering {
public:
  ProgramLowering(fb::FlatBufferBuilder &builder, func::FuncOp function,
                  MeshOp mesh, unsigned meshIndex,
                  const llvm::DenseMap<StringAttr, unsigned> &programOfMesh,
                  const PlanOptions &options,
                  const LinkedStage *linked = nullptr)
      : builder(builder), function(function), mesh(mesh), meshIndex(meshIndex),
        programOfMesh(programOfMesh), options(options), linked(linked) {}

  FailureOr<fb::Offset<plan::Program>> lower(ProgramMemory &memory);

private:
  LogicalResult numberValues();
  LogicalResult lowerOp(Operation *op);
  /// A dense constant: persistent data in the plan file.
  LogicalResult lowerConstant(ConstantOp constant);
  /// A collective, a send or a receive; nullopt for other ops.
  std::optional<LogicalResult> lowerCommunication(Operation *op);
  /// The function's results: output bindings, and the parameters and state
  /// they update in place.
  LogicalResult lowerReturn(func::ReturnOp ret);
  FailureOr<fb::Offset<plan::Sharding>> lowerSharding(Operation *at,
                                                      ShardingAttr sharding);
  FailureOr<fb::Offset<plan::Binding>>
  makeBinding(Operation *at, StringRef name, plan::Role role, Value value,
              ShardingAttr sharding, fb::Offset<fb::Vector<uint8_t>> data = 0,
              int32_t updates = -1, Attribute init = {},
              DenseI64ArrayAttr logical = {}, StoredLayout stored = {},
              uint32_t microBatches = 0);
  /// The layout weights files store argument `index` in (part.stored_shape
  /// and part.stored_permutation), its own or, for optimizer state, its
  /// parameter's.
  StoredLayout storedLayoutOf(int64_t index);
  /// part.micro_batches of argument `index` (0: none).
  uint32_t microBatchesOf(int64_t index) {
    auto m = function.getArgAttrOfType<IntegerAttr>(
        index, PartDialect::getMicroBatchesAttrName());
    return m ? uint32_t(m.getInt()) : 0;
  }
  /// Binding.stored_shape and stored_permutation of `stored` for a value
  /// of whole shape `global`; null offsets when it has none.
  LogicalResult lowerStoredLayout(Operation *at, StringRef name,
                                  const std::vector<int64_t> &global,
                                  StoredLayout stored,
                                  fb::Offset<fb::Vector<int64_t>> &shape,
                                  fb::Offset<fb::Vector<int64_t>> &perm);
  FailureOr<std::vector<uint32_t>> axisIndices(Operation *op, ArrayAttr axes);
  void planArena(ProgramMemory &memory);
  fb::Offset<plan::Instruction> instruction(Operation *op, plan::Inst type,
                                            fb::Offset<void> inst);
  fb::Offset<plan::Instruction> instruction(Operation *at, ValueRange operands,
                                            ValueRange results, plan::Inst type,
                                            fb::Offset<void> inst);
  LogicalResult lowerFused(const FusionGroup &group);

  fb::FlatBufferBuilder &builder;
  func::FuncOp function;
  MeshOp mesh;
  unsigned meshIndex;
  const llvm::DenseMap<StringAttr, unsigned> &programOfMesh;
  const PlanOptions &options;
  /// A pipeline stage's fragments, linked (LinkStage.h); null otherwise.
  const LinkedStage *linked;
  /// The fragment of the op being lowered, and of each instruction.
  unsigned currentFragment = 0;
  std::vector<unsigned> instructionFragments;
  /// Per input binding: the micro-batches its buffer holds (1 for most).
  std::vector<uint32_t> inputCopies;
  /// The copies of each arena value (Value.slots; 0: one).
  llvm::DenseMap<uint32_t, int64_t> valueSlots;
  /// Places the values that live from one fragment to another.
  void planSlots(std::vector<uint8_t> &placed);
  FailureOr<fb::Offset<fb::Vector<fb::Offset<plan::Fragment>>>>
  lowerFragments();

  /// Elementwise chains lowered as one Fused kernel each (Fusion.h), by
  /// their last op; the values that stay inside one (never numbered); the
  /// positions of the Fused instructions.
  std::vector<FusionGroup> groups;
  llvm::DenseMap<Operation *, const FusionGroup *> groupAt;
  llvm::DenseSet<Operation *> fusedAway;
  llvm::DenseSet<Value> internal;
  llvm::DenseSet<int64_t> fusedPositions;

  llvm::DenseMap<Value, uint32_t> valueIds;
  std::vector<ValueInfo> values;
  std::vector<fb::Offset<plan::Binding>> params, inputs, outputs;
  /// The names in each of params (with constants), inputs and outputs: the
  /// runtime finds bindings by name, and the plan loader refuses a repeat.
  llvm::StringSet<> bindingNames[3];
  std::vector<fb::Offset<plan::Instruction>> instructions;
  /// Staging bytes of the executor's two collective scratch slots.
  std::array<int64_t, 2> scratch = {0, 0};
  /// (new value, persistent value) of every output that updates one.
  std::vector<std::pair<uint32_t, uint32_t>> updatePairs;
  int64_t position = 0; // index of the instruction being lowered
  /// Sum of the aligned sizes of all values (see numberValues).
  int64_t totalBytes = 0;
  /// Bytes of constants stored in the plan so far.
  uint64_t constantBytes = 0;
};

} // namespace

LogicalResult ProgramLowering::numberValues() {
  // The first value larger than the runtime holds, reported once the sum
  // of all is known to fit (which is the more basic error).
  std::pair<Value, Operation *> tooLarge = {Value(), nullptr};
  auto add = [&](Value value, Operation *at) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() || !getDType(type.getElementType()))
      return at->emitError()
             << "the runtime cannot hold a value of type " << value.getType()
             << " (static tensors of f32, f16, bf16, i32 or "
                "i64 only)";
    FailureOr<int64_t> bytes =
        getTensorBytes(type, [&] { return at->emitError(); });
    if (failed(bytes))
      return failure();
    // Every offset and sum the arena planner makes is at most the sum of
    // the values' aligned sizes: keep that within int64.
    std::optional<int64_t> total = llvm::checkedAdd(
        totalBytes, static_cast<int64_t>(alignTo(*bytes, kArenaAlignment)));
    if (!total || *total < 0)
      return at->emitError()
             << "the values of @" << function.getName() << " total more than "
             << std::numeric_limits<int64_t>::max() << " bytes";
    totalBytes = *total;
    if (!tooLarge.second && (*bytes > runtime::kMaxPlanBytes ||
                             llvm::any_of(type.getShape(), [](int64_t d) {
                               return d > runtime::kMaxPlanDim;
                             })))
      tooLarge = {value, at};
    valueIds[value] = values.size();
    ValueInfo info;
    info.type = type;
    info.size = *bytes;
    values.push_back(info);
    return success();
  };
  for (BlockArgument arg : function.getArguments())
    if (failed(add(arg, function)))
      return failure();
  WalkResult result = function.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (!internal.contains(v) && failed(add(v, op)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (auto [value, at] = tooLarge; at)
    return at->emitError() << "the runtime holds values of at most "
                           << runtime::kMaxPlanBytes
                           << " bytes and dimensions of at most "
                           << runtime::kMaxPlanDim << ", not "
                           << value.getType();
  return success();
}

FailureOr<fb::Offset<plan::Sharding>>
ProgramLowering::lowerSharding(Operation *at, ShardingAttr sharding) {
  MeshAttr meshAttr = mesh.getMesh();
  std::vector<fb::Offset<plan::DimSharding>> dims;
  std::vector<uint32_t> unreduced;
  if (sharding) {
    if (sharding.getMesh().getAttr() != mesh.getSymNameAttr())
      return at->emitError()
             << "sharding names mesh " << sharding.getMesh()
             << " but the program runs on @" << mesh.getSymName();
    for (int64_t d = 0; d < sharding.getRank(); ++d) {
      std::vector<uint32_t> axes;
      for (StringAttr axis : sharding.getDimAxes(d))
        axes.push_back(*meshAttr.getAxisIndex(axis.getValue()));
      dims.push_back(plan::CreateDimShardingDirect(builder, &axes));
    }
    for (StringAttr axis : sharding.getUnreduced())
      unreduced.push_back(*meshAttr.getAxisIndex(axis.getValue()));
  }
  return plan::CreateShardingDirect(builder, &dims, &unreduced);
}

StoredLayout ProgramLowering::storedLayoutOf(int64_t index) {
  auto layoutOf = [&](int64_t arg) {
    return StoredLayout{
        function.getArgAttrOfType<DenseI64ArrayAttr>(
            arg, PartDialect::getStoredShapeAttrName()),
        function.getArgAttrOfType<DenseI64ArrayAttr>(
            arg, PartDialect::getStoredPermutationAttrName())};
  };
  StoredLayout own = layoutOf(index);
  if (own.shape)
    return own;
  if (auto of = function.getArgAttrOfType<IntegerAttr>(
          index, PartDialect::getStateOfAttrName()))
    if (of.getInt() >= 0 && of.getInt() < function.getNumArguments())
      return layoutOf(of.getInt());
  return {};
}

LogicalResult ProgramLowering::lowerStoredLayout(
    Operation *at, StringRef name, const std::vector<int64_t> &global,
    StoredLayout stored, fb::Offset<fb::Vector<int64_t>> &shape,
    fb::Offset<fb::Vector<int64_t>> &perm) {
  if (!stored.shape)
    return success();
  std::vector<int64_t> file(stored.shape.asArrayRef().begin(),
                            stored.shape.asArrayRef().end());
  std::vector<int64_t> permutation;
  if (stored.permutation)
    permutation.assign(stored.permutation.asArrayRef().begin(),
                       stored.permutation.asArrayRef().end());
  if (!runtime::isPermutation(permutation, file.size()) &&
      !permutation.empty())
    return at->emitError() << "'part.stored_permutation' of " << name << " is "
                           << stored.permutation
                           << ", which does not permute its stored shape "
                           << stored.shape;
  if (!runtime::viewGroups(global, runtime::permuteShape(file, permutation))) {
    std::string whole;
    for (int64_t d : global)
      whole += (whole.empty() ? "" : "x") + std::to_string(d);
    InFlightDiagnostic diag = at->emitError()
                              << "'part.stored_shape' of " << name << " is "
                              << stored.shape;
    if (stored.permutation)
      diag << " permuted by " << stored.permutation;
    return diag << ", which its whole shape " << whole << " does not view";
  }
  shape = builder.CreateVector(file);
  if (stored.permutation)
    perm = builder.CreateVector(permutation);
  return success();
}

FailureOr<fb::Offset<plan::Binding>>
ProgramLowering::makeBinding(Operation *at, StringRef name, plan::Role role,
                             Value value, ShardingAttr sharding,
                             fb::Offset<fb::Vector<uint8_t>> data,
                             int32_t updates, Attribute init,
                             DenseI64ArrayAttr logical,
                             StoredLayout stored, uint32_t microBatches) {
  int list = role == plan::Role::Output                               ? 2
             : role == plan::Role::Input || role == plan::Role::Label ? 1
                                                                      : 0;
  if (!bindingNames[list].insert(name).second) {
    static const char *const kinds[] = {"parameters (with state and constants)",
                                        "inputs (with labels)", "outputs"};
    return at->emitError() << "two " << kinds[list] << " of @"
                           << function.getName() << " are named \"" << name
                           << "\"; the runtime finds each by its name";
  }
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<int64_t> global(type.getShape().begin(), type.getShape().end());
  if (sharding) {
    if (sharding.getRank() != type.getRank())
      return at->emitError()
             << "sharding of " << name << " has rank " << sharding.getRank()
             << " but the value has rank " << type.getRank();
    // The global shape multiplies each local dimension by its shards; the
    // runtime sizes whole tensors (weights, inputs) by it.
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      int64_t shards = sharding.getNumShards(dim, mesh.getMesh());
      std::optional<int64_t> whole = llvm::checkedMul(size, shards);
      if (!whole)
        return at->emitError()
               << "global dimension " << dim << " of " << name << " (" << size
               << " x " << shards << " shards) overflows int64";
      global[dim] = *whole;
    }
    // An input of one micro-batch per step: the rank holds them all.
    if (microBatches) {
      std::optional<int64_t> whole = llvm::checkedMul(global[0],
                                                      int64_t(microBatches));
      if (!whole)
        return at->emitError() << "global dimension 0 of " << name
                               << " overflows int64";
      global[0] = *whole;
    }
    FailureOr<int64_t> globalBytes = getTensorBytes(
        RankedTensorType::get(global, type.getElementType()),
        [&] { return at->emitError() << "global value " << name << ": "; });
    if (failed(globalBytes))
      return failure();
    if (*globalBytes > runtime::kMaxPlanBytes)
      return at->emitError() << "global value " << name << " has "
                             << *globalBytes << " bytes; the runtime holds at "
                             << "most " << runtime::kMaxPlanBytes;
  } else {
    // No annotation: replicated, the local value is the whole value.
    sharding = ShardingAttr::getReplicated(function.getContext(),
                                           mesh.getSymName(), type.getRank());
  }
  // A padded value (part.logical_shape): the runtime reads and writes the
  // unpadded part of each block; each block is the padded size / shards.
  if (logical) {
    if (logical.size() != type.getRank())
      return at->emitError() << "'part.logical_shape' of " << name
                             << " has rank " << logical.size()
                             << " but the value has rank " << type.getRank();
    for (auto [dim, n] : llvm::enumerate(logical.asArrayRef())) {
      // Padded to a multiple of the shards of its class, which may split
      // another dimension than this one: any size up to the padded one.
      if (n < 1 || n > global[dim])
        return at->emitError()
               << "'part.logical_shape' of " << name << " has dimension "
               << dim << " of size " << n << ", which is not in [1, "
               << global[dim] << "] (the padded size)";
      global[dim] = n;
    }
  }
  // A parameter viewed in another shape than weights files store it in.
  fb::Offset<fb::Vector<int64_t>> storedOffset, permOffset;
  if (failed(lowerStoredLayout(at, name, global, stored, storedOffset,
                               permOffset)))
    return failure();
  FailureOr<fb::Offset<plan::Sharding>> s = lowerSharding(at, sharding);
  if (failed(s))
    return failure();
  auto nameOffset = builder.CreateString(name.str());
  auto shapeOffset = builder.CreateVector(global);
  fb::Offset<fb::String> initFrom;
  if (auto source = dyn_cast_or_null<StringAttr>(init))
    initFrom = builder.CreateString(source.getValue().str());
  plan::BindingBuilder b(builder);
  b.add_name(nameOffset);
  b.add_role(role);
  b.add_value(valueIds.lookup(value));
  b.add_global_shape(shapeOffset);
  b.add_sharding(*s);
  if (!data.IsNull())
    b.add_data(data);
  if (updates >= 0)
    b.add_updates(updates);
  if (!initFrom.IsNull())
    b.add_init_from(initFrom);
  if (!storedOffset.IsNull())
    b.add_stored_shape(storedOffset);
  if (!permOffset.IsNull())
    b.add_stored_permutation(permOffset);
  if (auto value = dyn_cast_or_null<FloatAttr>(init))
    b.add_init_value(static_cast<float>(value.getValueAsDouble()));
  if (microBatches)
    b.add_micro_batches(microBatches);
  return b.Finish();
}

FailureOr<std::vector<uint32_t>> ProgramLowering::axisIndices(Operation *op,
                                                              ArrayAttr axes) {
  std::vector<uint32_t> result;
  MeshAttr meshAttr = mesh.getMesh();
  for (Attribute axis : axes) {
    std::optional<unsigned> index =
        meshAttr.getAxisIndex(cast<StringAttr>(axis).getValue());
    if (!index)
      return op->emitOpError() << "names axis " << axis << ", which mesh @"
                               << mesh.getSymName() << " of this program lacks";
    result.push_back(*index);
  }
  return result;
}

fb::Offset<plan::Instruction>
ProgramLowering::instruction(Operation *op, plan::Inst type,
                             fb::Offset<void> inst) {
  return instruction(op, op->getOperands(), op->getResults(), type, inst);
}

fb::Offset<plan::Instruction>
ProgramLowering::instruction(Operation *op, ValueRange operandValues,
                             ValueRange resultValues, plan::Inst type,
                             fb::Offset<void> inst) {
  std::vector<uint32_t> operands, results;
  for (Value v : operandValues) {
    uint32_t id = valueIds.lookup(v);
    operands.push_back(id);
    values[id].lastUse = std::max(values[id].lastUse, position);
  }
  for (Value v : resultValues) {
    uint32_t id = valueIds.lookup(v);
    results.push_back(id);
    values[id].def = position;
    values[id].lastUse = std::max(values[id].lastUse, position);
  }
  // "file:line:col" for source locations; other kinds as MLIR prints them.
  // A pipeline stage names each op's step ("F3 file:line:col").
  std::string loc;
  llvm::raw_string_ostream os(loc);
  if (auto step = op->getAttrOfType<StringAttr>("part.step"))
    os << step.getValue() << " ";
  Location where = op->getLoc();
  if (auto file = dyn_cast<FileLineColLoc>(where))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    where.print(os);
  instructionFragments.push_back(currentFragment);
  return plan::CreateInstructionDirect(builder, type, inst, &operands, &results,
                                       loc.c_str());
}

/// Wraps one attribute table.
template <typename T>
static plan::KernelAttrsUnion wrap(T table) {
  plan::KernelAttrsUnion attrs;
  attrs.Set(std::move(table));
  return attrs;
}

/// part.attention's and part.attention_grad's attributes; the scale
/// defaults to 1 / sqrt(head size).
template <typename AttentionLike>
static plan::AttentionAttrsT attentionAttrs(AttentionLike a) {
  plan::AttentionAttrsT t;
  t.causal = a.getCausal();
  t.window = a.getWindow().value_or(0);
  int64_t d = cast<RankedTensorType>(a.getQuery().getType()).getShape()[3];
  t.scale = a.getScale() ? a.getScale()->convertToFloat()
                         : static_cast<float>(1.0 / std::sqrt(double(d)));
  return t;
}

static plan::MatmulAttrsT matmulAttrs(bool transposeA, bool transposeB) {
  plan::MatmulAttrsT t;
  t.transpose_a = transposeA;
  t.transpose_b = transposeB;
  return t;
}

static plan::ReduceAttrsT reduceAttrs(ArrayRef<int64_t> dims) {
  plan::ReduceAttrsT t;
  t.dims.assign(dims.begin(), dims.end());
  return t;
}

static plan::AxisAttrsT axisAttrs(int64_t axis) {
  plan::AxisAttrsT t;
  t.axis = axis;
  return t;
}

/// A window at `offsets` with `strides` (unit strides when absent).
static plan::SliceAttrsT sliceAttrs(ArrayRef<int64_t> offsets,
                                    std::optional<ArrayRef<int64_t>> strides) {
  plan::SliceAttrsT t;
  t.offsets.assign(offsets.begin(), offsets.end());
  if (strides)
    t.strides.assign(strides->begin(), strides->end());
  else
    t.strides.assign(offsets.size(), 1);
  return t;
}

/// Kernel opcode and attributes of a model op, or nullopt for ops that are
/// not kernels. The attribute table of each opcode is the one plan.fbs
/// names; the runtime rejects any other.
static std::optional<plan::OpKind> kernelOf(Operation *op,
                                            plan::KernelAttrsUnion &attrs) {
  using K = plan::OpKind;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case([](AddOp) { return K::Add; })
      .Case([](SubOp) { return K::Sub; })
      .Case([](MulOp) { return K::Mul; })
      .Case([](DivOp) { return K::Div; })
      .Case([](MaxOp) { return K::Max; })
      .Case([](MinOp) { return K::Min; })
      .Case([](PowOp) { return K::Pow; })
      .Case([](SelectOp) { return K::Select; })
      .Case([](NegOp) { return K::Neg; })
      .Case([](ExpOp) { return K::Exp; })
      .Case([](LogOp) { return K::Log; })
      .Case([](SqrtOp) { return K::Sqrt; })
      .Case([](RsqrtOp) { return K::Rsqrt; })
      .Case([](TanhOp) { return K::Tanh; })
      .Case([](ErfOp) { return K::Erf; })
      .Case([](CosOp) { return K::Cos; })
      .Case([](SinOp) { return K::Sin; })
      .Case([](SigmoidOp) { return K::Sigmoid; })
      .Case([](ReluOp) { return K::Relu; })
      .Case([](SiluOp) { return K::Silu; })
      .Case([&](GeluOp g) {
        plan::GeluAttrsT t;
        t.approximation = g.getApproximation() == GeluApproximation::Tanh
                              ? plan::GeluApproximation::Tanh
                              : plan::GeluApproximation::Erf;
        attrs = wrap(t);
        return K::Gelu;
      })
      .Case([](CastOp) { return K::Cast; })
      .Case([&](MatmulOp m) {
        attrs = wrap(matmulAttrs(m.getTransposeA(), m.getTransposeB()));
        return K::Matmul;
      })
      .Case([&](BatchMatmulOp m) {
        attrs = wrap(matmulAttrs(m.getTransposeA(), m.getTransposeB()));
        return K::BatchMatmul;
      })
      .Case([&](SoftmaxOp s) {
        plan::SoftmaxAttrsT t;
        t.dim = static_cast<int64_t>(s.getDim());
        attrs = wrap(t);
        return K::Softmax;
      })
      .Case([&](LayerNormOp l) {
        plan::NormAttrsT t;
        t.epsilon = l.getEpsilon().convertToFloat();
        t.has_bias = static_cast<bool>(l.getBias());
        attrs = wrap(t);
        return K::LayerNorm;
      })
      .Case([&](RmsNormOp r) {
        plan::NormAttrsT t;
        t.epsilon = r.getEpsilon().convertToFloat();
        attrs = wrap(t);
        return K::RmsNorm;
      })
      .Case([](RotaryEmbeddingOp) { return K::RotaryEmbedding; })
      .Case([&](AttentionOp a) {
        attrs = wrap(attentionAttrs(a));
        return K::Attention;
      })
      .Case([&](AttentionBlockOp a) {
        // The block form: Attention with its rows' log-sum-exp as a
        // second result.
        attrs = wrap(attentionAttrs(a));
        return K::Attention;
      })
      .Case([&](AttentionGradOp a) {
        attrs = wrap(attentionAttrs(a));
        return K::AttentionGrad;
      })
      .Case([&](SoftmaxCrossEntropyOp c) {
        plan::CrossEntropyAttrsT t;
        switch (c.getReduction()) {
        case LossReduction::Mean:
          t.reduction = plan::LossReduction::Mean;
          break;
        case LossReduction::Sum:
          t.reduction = plan::LossReduction::Sum;
          break;
        case LossReduction::None:
          t.reduction = plan::LossReduction::None;
          break;
        }
        attrs = wrap(t);
        return K::SoftmaxCrossEntropy;
      })
      .Case([&](ReduceSumOp r) {
        attrs = wrap(reduceAttrs(r.getDims()));
        return K::ReduceSum;
      })
      .Case([&](ReduceMeanOp r) {
        attrs = wrap(reduceAttrs(r.getDims()));
        return K::ReduceMean;
      })
      .Case([&](ReduceMaxOp r) {
        attrs = wrap(reduceAttrs(r.getDims()));
        return K::ReduceMax;
      })
      .Case([&](TransposeOp t) {
        plan::TransposeAttrsT table;
        table.permutation.assign(t.getPermutation().begin(),
                                 t.getPermutation().end());
        attrs = wrap(table);
        return K::Transpose;
      })
      .Case([](BroadcastOp) { return K::Broadcast; })
      .Case([&](SliceOp s) {
        attrs = wrap(sliceAttrs(s.getOffsets(), s.getStrides()));
        return K::Slice;
      })
      .Case([&](ConcatOp c) {
        attrs = wrap(axisAttrs(static_cast<int64_t>(c.getDim())));
        return K::Concat;
      })
      .Case([&](GatherOp g) {
        attrs = wrap(axisAttrs(static_cast<int64_t>(g.getAxis())));
        return K::Gather;
      })
      .Case([&](PadOp pad) {
        attrs = wrap(sliceAttrs(pad.getOffsets(), pad.getStrides()));
        return K::Pad;
      })
      .Case([&](ScatterAddOp s) {
        attrs = wrap(axisAttrs(static_cast<int64_t>(s.getAxis())));
        return K::ScatterAdd;
      })
      .Case([&](CompareOp c) {
        plan::CompareAttrsT t;
        switch (c.getDirection()) {
        case ComparisonDirection::EQ:
          t.direction = plan::CompareDirection::Eq;
          break;
        case ComparisonDirection::NE:
          t.direction = plan::CompareDirection::Ne;
          break;
        case ComparisonDirection::LT:
          t.direction = plan::CompareDirection::Lt;
          break;
        case ComparisonDirection::LE:
          t.direction = plan::CompareDirection::Le;
          break;
        case ComparisonDirection::GT:
          t.direction = plan::CompareDirection::Gt;
          break;
        case ComparisonDirection::GE:
          t.direction = plan::CompareDirection::Ge;
          break;
        }
        attrs = wrap(t);
        return K::Compare;
      })
      .Case([](TopKOp) { return K::TopK; })
      .Case([](ExpertDispatchOp) { return K::ExpertDispatch; })
      .Case([](ExpertCombineOp) { return K::ExpertCombine; })
      .Default([](Operation *) { return std::nullopt; });
}

bool partition::isFusedKernelOp(Operation *op) {
  plan::KernelAttrsUnion attrs;
  std::optional<plan::OpKind> kind = kernelOf(op, attrs);
  return kind && runtime::isFusedStepOp(*kind);
}

/// Plan reduction of a dialect reduction kind.
static plan::ReduceOp reduceOf(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return plan::ReduceOp::Sum;
  case ReductionKind::Max:
    return plan::ReduceOp::Max;
  case ReductionKind::Min:
    return plan::ReduceOp::Min;
  case ReductionKind::Avg:
    return plan::ReduceOp::Avg;
  }
  return plan::ReduceOp::Sum;
}

LogicalResult ProgramLowering::lowerFused(const FusionGroup &group) {
  // Slots: the operands, then one per member in order.
  llvm::DenseMap<Value, uint16_t> slot;
  for (Value v : group.operands)
    slot[v] = static_cast<uint16_t>(slot.size());
  std::vector<plan::FusedStep> steps;
  for (Operation *member : group.ops) {
    plan::KernelAttrsUnion attrs;
    std::optional<plan::OpKind> kind = kernelOf(member, attrs);
    plan::GeluApproximation gelu =
        attrs.type == plan::KernelAttrs::GeluAttrs
            ? attrs.AsGeluAttrs()->approximation
            : plan::GeluApproximation::Erf;
    auto type = cast<RankedTensorType>(member->getResult(0).getType());
    uint16_t a = slot.lookup(member->getOperand(0));
    uint16_t b = member->getNumOperands() > 1
                     ? slot.lookup(member->getOperand(1))
                     : a;
    steps.emplace_back(*kind, *getDType(type.getElementType()), gelu, a, b);
    slot[member->getResult(0)] = static_cast<uint16_t>(slot.size());
  }
  std::vector<uint16_t> outputs;
  for (Value v : group.results)
    outputs.push_back(slot.lookup(v));
  plan::KernelAttrsUnion attrs;
  plan::FusedAttrsT table;
  table.steps = std::move(steps);
  table.outputs = std::move(outputs);
  attrs.Set(std::move(table));
  auto inst = plan::CreateKernelInst(builder, plan::OpKind::Fused, attrs.type,
                                     attrs.Pack(builder));
  fusedPositions.insert(position);
  instructions.push_back(instruction(group.ops.back(), group.operands,
                                     group.results, plan::Inst::KernelInst,
                                     inst.Union()));
  ++position;
  return success();
}

LogicalResult ProgramLowering::lowerConstant(ConstantOp constant) {
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense)
    return constant->emitOpError() << "has a value the runtime cannot store; "
                                "dense elements only";
  ValueInfo &info = values[valueIds.lookup(constant.getResult())];
  // The plan is one flatbuffer: its constants must fit in it.
  constantBytes += info.bytes();
  if (constantBytes > kMaxPlanConstantBytes)
    return constant->emitOpError()
           << "makes the plan's constants " << constantBytes
           << " bytes, more than the " << kMaxPlanConstantBytes
           << " a plan file holds; pass large tensors as parameters";
  std::vector<uint8_t> bytes;
  bytes.reserve(info.bytes());
  // Raw data of a splat holds one element: repeat it.
  ArrayRef<char> raw = dense.getRawData();
  int64_t n = info.type.getNumElements();
  int64_t element = info.bytes() / std::max<int64_t>(1, n);
  for (int64_t i = 0; i < n; ++i) {
    const char *src = raw.data() + (dense.isSplat() ? 0 : i * element);
    bytes.insert(bytes.end(), src, src + element);
  }
  info.storage = plan::Storage::Persistent;
  info.index = params.size();
  auto data = builder.CreateVector(bytes);
  FailureOr<fb::Offset<plan::Binding>> binding = makeBinding(
      constant, ("constant" + Twine(params.size())).str(),
      plan::Role::Constant,
      constant.getResult(), ShardingAttr(), data);
  if (failed(binding))
    return failure();
  params.push_back(*binding);
  return success();
}

std::optional<LogicalResult>
ProgramLowering::lowerCommunication(Operation *op) {
  // `attrs` writes the collective's attribute table (none: no table).
  using AttrsWriter =
      std::function<std::pair<plan::CollectiveAttrs, fb::Offset<void>>()>;
  auto collective = [&](plan::CollectiveKind kind, ArrayAttr axes,
                        plan::ReduceOp reduce,
                        AttrsWriter attrs = {}) -> LogicalResult {
    FailureOr<std::vector<uint32_t>> indices = axisIndices(op, axes);
    if (failed(indices))
      return failure();
    auto [type, table] =
        attrs ? attrs()
              : std::make_pair(plan::CollectiveAttrs::NONE, fb::Offset<void>());
    auto inst = plan::CreateCollectiveInstDirect(builder, kind, &*indices,
                                                 reduce, type, table);
    // The staging the executor will need for it (CollectiveScratch.h).
    if (op->getNumOperands() == 1 && op->getNumResults() == 1) {
      auto in = cast<RankedTensorType>(op->getOperand(0).getType());
      auto out = cast<RankedTensorType>(op->getResult(0).getType());
      auto attr = [&](StringRef name) {
        auto a = op->getAttrOfType<IntegerAttr>(name);
        return a ? a.getInt() : int64_t(0);
      };
      SmallVector<StringAttr> names;
      for (Attribute a : axes)
        names.push_back(cast<StringAttr>(a));
      std::array<int64_t, 2> need = runtime::collectiveScratch(
          kind, std::vector<int64_t>(in.getShape()),
          std::vector<int64_t>(out.getShape()),
          int64_t(in.getElementTypeBitWidth() + 7) / 8,
          attr("dim"), attr("split_dim"), attr("concat_dim"),
          mesh.getMesh().getGroupSize(names));
      for (int slot = 0; slot < 2; ++slot)
        scratch[slot] = std::max(scratch[slot], need[slot]);
    }
    instructions.push_back(
        instruction(op, plan::Inst::CollectiveInst, inst.Union()));
    ++position;
    return success();
  };
  auto checkMesh = [&](FlatSymbolRefAttr name) -> LogicalResult {
    if (name.getAttr() != mesh.getSymNameAttr())
      return op->emitOpError()
             << "runs on " << name << " but its program is "
             << "the per-device program of @" << mesh.getSymName();
    return success();
  };
  auto dimAttrs = [&](uint64_t dim) -> AttrsWriter {
    return [this, dim] {
      return std::make_pair(
          plan::CollectiveAttrs::CollectiveDimAttrs,
          plan::CreateCollectiveDimAttrs(builder, static_cast<int64_t>(dim))
              .Union());
    };
  };
  if (auto ar = dyn_cast<AllReduceOp>(op))
    return failure(failed(checkMesh(ar.getMeshAttr())) ||
                   failed(collective(plan::CollectiveKind::AllReduce,
                                     ar.getAxes(), reduceOf(ar.getKind()))));
  if (auto ag = dyn_cast<AllGatherOp>(op))
    return failure(
        failed(checkMesh(ag.getMeshAttr())) ||
        failed(collective(plan::CollectiveKind::AllGather, ag.getAxes(),
                          plan::ReduceOp::Sum, dimAttrs(ag.getDim()))));
  if (auto rs = dyn_cast<ReduceScatterOp>(op))
    return failure(
        failed(checkMesh(rs.getMeshAttr())) ||
        failed(collective(plan::CollectiveKind::ReduceScatter, rs.getAxes(),
                          reduceOf(rs.getKind()), dimAttrs(rs.getDim()))));
  if (auto ai = dyn_cast<AxisIndexOp>(op))
    return failure(failed(checkMesh(ai.getMeshAttr())) ||
                   failed(collective(plan::CollectiveKind::AxisIndex,
                                     ai.getAxes(), plan::ReduceOp::Sum)));
  if (auto as = dyn_cast<AllSliceOp>(op))
    return failure(
        failed(checkMesh(as.getMeshAttr())) ||
        failed(collective(plan::CollectiveKind::AllSlice, as.getAxes(),
                          plan::ReduceOp::Sum, dimAttrs(as.getDim()))));
  if (auto a2a = dyn_cast<AllToAllOp>(op))
    return failure(
        failed(checkMesh(a2a.getMeshAttr())) ||
        failed(collective(plan::CollectiveKind::AllToAll, a2a.getAxes(),
                          plan::ReduceOp::Sum, [&] {
                            return std::make_pair(
                                plan::CollectiveAttrs::AllToAllAttrs,
                                plan::CreateAllToAllAttrs(
                                    builder,
                                    static_cast<int64_t>(a2a.getSplitDim()),
                                    static_cast<int64_t>(a2a.getConcatDim()))
                                    .Union());
                          })));
  if (auto cp = dyn_cast<CollectivePermuteOp>(op)) {
    // The dialect keeps [source, target] pairs flat.
    ArrayRef<int64_t> flat = cp.getPairs();
    return failure(
        failed(checkMesh(cp.getMeshAttr())) ||
        failed(collective(
            plan::CollectiveKind::Permute, cp.getAxes(), plan::ReduceOp::Sum,
            [&] {
              std::vector<plan::PermutePair> pairs;
              for (size_t i = 0; i + 1 < flat.size(); i += 2)
                pairs.emplace_back(flat[i], flat[i + 1]);
              return std::make_pair(
                  plan::CollectiveAttrs::PermuteAttrs,
                  plan::CreatePermuteAttrsDirect(builder, &pairs).Union());
            })));
  }
  if (isa<SendOp, RecvOp>(op)) {
    FlatSymbolRefAttr peer = isa<SendOp>(op) ? cast<SendOp>(op).getToAttr()
                                             : cast<RecvOp>(op).getFromAttr();
    int64_t channel = isa<SendOp>(op) ? cast<SendOp>(op).getChannel()
                                      : cast<RecvOp>(op).getChannel();
    auto it = programOfMesh.find(peer.getAttr());
    if (it == programOfMesh.end())
      return LogicalResult(op->emitOpError() << "names " << peer
                                             << ", but no part.spmd function "
                                                "runs on it");
    if (isa<SendOp>(op))
      instructions.push_back(instruction(
          op, plan::Inst::SendInst,
          plan::CreateSendInst(builder, it->second, channel).Union()));
    else
      instructions.push_back(instruction(
          op, plan::Inst::RecvInst,
          plan::CreateRecvInst(builder, it->second, channel).Union()));
    ++position;
    return success();
  }
  return std::nullopt;
}

LogicalResult ProgramLowering::lowerReturn(func::ReturnOp ret) {
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    StringAttr name = function.getResultAttrOfType<StringAttr>(
        index, PartDialect::getNameAttrName());
    auto sharding = function.getResultAttrOfType<ShardingAttr>(
        index, PartDialect::getShardingAttrName());
    // The new value of a parameter or state: written back in place, so
    // it must be laid out as the persistent value.
    int32_t updates = -1;
    // The new value or the gradient of a parameter stored in another
    // shape is written in that shape.
    StoredLayout storedLayout;
    for (StringRef of : {PartDialect::getUpdatesAttrName(),
                         PartDialect::getGradOfAttrName()})
      if (auto target = function.getResultAttrOfType<IntegerAttr>(index, of))
        if (target.getInt() >= 0 &&
            target.getInt() < function.getNumArguments())
          storedLayout = storedLayoutOf(target.getInt());
    if (auto target = function.getResultAttrOfType<IntegerAttr>(
            index, PartDialect::getUpdatesAttrName())) {
      BlockArgument arg = function.getArgument(target.getInt());
      const ValueInfo &info = values[valueIds.lookup(arg)];
      auto argSharding = function.getArgAttrOfType<ShardingAttr>(
          target.getInt(), PartDialect::getShardingAttrName());
      auto replicated = [&](ShardingAttr s) {
        return !s || (llvm::all_of(s.getDims(),
                                   [](Attribute d) {
                                     return cast<ArrayAttr>(d).empty();
                                   }) &&
                      s.getUnreduced().empty());
      };
      if (info.storage != plan::Storage::Persistent)
        return ret->emitError() << "result " << index << " updates argument "
                               << target.getInt()
                               << ", which is not persistent";
      if (sharding != argSharding && !(replicated(sharding) &&
                                       replicated(argSharding)))
        return ret->emitError()
               << "result " << index << " updates argument "
               << target.getInt() << " but is sharded "
               << (sharding ? Attribute(sharding) : Attribute())
               << " where the argument is "
               << (argSharding ? Attribute(argSharding) : Attribute());
      updates = static_cast<int32_t>(info.index);
      updatePairs.push_back({valueIds.lookup(value), valueIds.lookup(arg)});
    }
    FailureOr<fb::Offset<plan::Binding>> binding = makeBinding(
        ret, name ? name.getValue() : ("output" + Twine(index)).str(),
        plan::Role::Output, value, sharding, 0, updates, {},
        function.getResultAttrOfType<DenseI64ArrayAttr>(
            index, PartDialect::getLogicalShapeAttrName()),
        storedLayout);
    if (failed(binding))
      return failure();
    outputs.push_back(*binding);
    // Outputs live to the end of the program.
    values[valueIds.lookup(value)].lastUse = INT64_MAX;
  }
  return success();
}

LogicalResult ProgramLowering::lowerOp(Operation *op) {
  if (fusedAway.contains(op))
    return success();
  if (const FusionGroup *group = groupAt.lookup(op))
    return lowerFused(*group);
  // Values that need no instruction: reshapes, constraints, and collectives
  // over a group of one device (a one-device data-parallel reduction of
  // every gradient would otherwise copy each of them).
  ArrayAttr collectiveAxes =
      llvm::TypeSwitch<Operation *, ArrayAttr>(op)
          .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
                AllSliceOp>([](auto c) { return c.getAxes(); })
          .Default([](Operation *) { return ArrayAttr(); });
  auto overOneDevice = [&] {
    if (!collectiveAxes || op->getNumOperands() != 1 ||
        op->getNumResults() != 1 ||
        op->getOperand(0).getType() != op->getResult(0).getType())
      return false;
    SmallVector<StringAttr> names;
    for (Attribute a : collectiveAxes)
      names.push_back(cast<StringAttr>(a));
    return mesh.getMesh().getGroupSize(names) == 1;
  };
  if (isa<ReshapeOp, ShardingConstraintOp>(op) || overOneDevice()) {
    ValueInfo &info = values[valueIds.lookup(op->getResult(0))];
    info.storage = plan::Storage::Alias;
    info.index = valueIds.lookup(op->getOperand(0));
    return success();
  }
  if (auto constant = dyn_cast<ConstantOp>(op))
    return lowerConstant(constant);

  plan::KernelAttrsUnion attrs;
  if (std::optional<plan::OpKind> kind = kernelOf(op, attrs)) {
    auto inst =
        plan::CreateKernelInst(builder, *kind, attrs.type, attrs.Pack(builder));
    instructions.push_back(
        instruction(op, plan::Inst::KernelInst, inst.Union()));
    ++position;
    return success();
  }

  if (std::optional<LogicalResult> lowered = lowerCommunication(op))
    return *lowered;
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return lowerReturn(ret);
  return op->emitOpError()
         << "has no runtime lowering (no kernel, collective or transfer)";
}

void ProgramLowering::planArena(ProgramMemory &memory) {
  // Resolve aliases to their root and extend the root's lifetime over every
  // use of the alias.
  auto root = [&](uint32_t id) {
    while (values[id].storage == plan::Storage::Alias)
      id = values[id].index;
    return id;
  };
  for (uint32_t id = 0; id < values.size(); ++id)
    if (values[id].storage == plan::Storage::Alias) {
      ValueInfo &r = values[root(id)];
      r.lastUse = std::max(r.lastUse, values[id].lastUse);
    }

  // A new value of a parameter or state whose old value (and every alias
  // of it) nobody reads from its definition on is computed straight into
  // the persistent buffer: no arena bytes held to the end of the step, and
  // no copy after it (the executor skips a write-back onto itself). This
  // is what lets updates interleaved with backward free their memory.
  for (auto [newId, oldId] : updatePairs) {
    ValueInfo &fresh = values[newId];
    const ValueInfo &old = values[oldId];
    // A Fused kernel may also write over an operand it reads in that same
    // instruction: it reads each element before writing it.
    bool readBefore = old.lastUse < fresh.def ||
                      (old.lastUse == fresh.def &&
                       fusedPositions.contains(fresh.def));
    if (fresh.storage != plan::Storage::Arena || fresh.inPlace ||
        old.storage != plan::Storage::Persistent || !readBefore)
      continue;
    fresh.storage = plan::Storage::Persistent;
    fresh.index = old.index;
    fresh.inPlace = true;
  }

  // A pipeline stage's values that live from one step to another: the
  // versions of each (an accumulator's zeros and sums) share one place,
  // held for the whole program (the table runs its steps in any order),
  // with one copy per micro-batch in flight for a stash.
  struct Shared {
    SmallVector<uint32_t> roots;
    uint64_t bytes = 0;
    int64_t slots = 1;
  };
  std::vector<Shared> shared;
  llvm::DenseMap<uint32_t, size_t> sharedOf;
  if (linked)
    for (const LinkedStage::Slot &slot : linked->slots) {
      std::optional<size_t> group;
      SmallVector<uint32_t> roots;
      for (Value v : slot.values) {
        auto it = valueIds.find(v);
        if (it == valueIds.end())
          continue;
        uint32_t r = root(it->second);
        if (values[r].storage != plan::Storage::Arena)
          continue; // an input or a parameter: the same at every step
        roots.push_back(r);
        if (auto g = sharedOf.find(r); g != sharedOf.end())
          group = g->second;
      }
      if (roots.empty())
        continue;
      if (!group) {
        group = shared.size();
        shared.emplace_back();
      }
      Shared &s = shared[*group];
      s.slots = std::max(s.slots, slot.slots);
      for (uint32_t r : roots)
        if (sharedOf.try_emplace(r, *group).second) {
          s.roots.push_back(r);
          s.bytes = std::max(s.bytes, alignTo(values[r].bytes(), kArenaAlignment));
        }
    }

  // The remaining arena values, greedy by size, first fit (ArenaPlanner.h).
  std::vector<uint32_t> arenaIds;
  std::vector<arena::Buffer> buffers;
  int64_t end = std::max<int64_t>(0, position - 1);
  for (const Shared &s : shared) {
    arenaIds.push_back(s.roots.front());
    buffers.push_back({0, end, s.bytes * uint64_t(s.slots)});
    memory.unplannedBytes += s.bytes * uint64_t(s.slots);
  }
  for (uint32_t id = 0; id < values.size(); ++id)
    if (values[id].storage == plan::Storage::Arena && !sharedOf.count(id)) {
      // A result nobody reads still needs bytes while its kernel runs.
      values[id].lastUse = std::max(values[id].lastUse, values[id].def);
      arenaIds.push_back(id);
      buffers.push_back(
          {values[id].def, values[id].lastUse, values[id].bytes()});
      memory.unplannedBytes += alignTo(values[id].bytes(), kArenaAlignment);
    }
  arena::Plan placed = arena::planArena(buffers, kArenaAlignment);
  for (auto [id, offset] : llvm::zip_equal(arenaIds, placed.offsets))
    values[id].offset = offset;
  for (const Shared &s : shared)
    for (uint32_t r : s.roots) {
      values[r].offset = values[s.roots.front()].offset;
      if (s.slots > 1)
        valueSlots[r] = s.slots;
    }
  memory.arenaBytes = placed.peak;
  memory.scratchBytes = uint64_t(scratch[0] + scratch[1]);
}

FailureOr<fb::Offset<fb::Vector<fb::Offset<plan::Fragment>>>>
ProgramLowering::lowerFragments() {
  std::vector<fb::Offset<plan::Fragment>> fragments;
  size_t next = 0;
  for (auto [index, name] : llvm::enumerate(linked->fragmentNames)) {
    size_t first = next;
    while (next < instructionFragments.size() &&
           instructionFragments[next] == index)
      ++next;
    fragments.push_back(plan::CreateFragmentDirect(
        builder, name.c_str(), uint32_t(first), uint32_t(next - first)));
  }
  if (next != instructionFragments.size())
    return function.emitError()
           << "the fragments of @" << function.getName()
           << " were lowered out of order (instruction " << next
           << " belongs to fragment " << instructionFragments[next] << ")";
  return builder.CreateVector(fragments);
}

FailureOr<fb::Offset<plan::Program>>
ProgramLowering::lower(ProgramMemory &memory) {
  memory.name = function.getName().str();
  // A linked stage is named as the stage function it was made from.
  if (linked)
    memory.name = StringRef(memory.name).drop_back(strlen("_linked")).str();
  if (function.getBody().getBlocks().size() != 1)
    return function.emitError()
           << "a per-device program must be one block without control flow";
  if (options.fuseElementwise) {
    FusionLimits limits;
    limits.steps = runtime::kMaxFusedSteps;
    limits.operands = runtime::kMaxFusedOperands;
    limits.results = runtime::kMaxFusedResults;
    // A slot's versions are kept: a later step reads each, though the
    // linked program may not (a final fragment comes after the readers).
    llvm::DenseSet<Value> slotValues;
    if (linked)
      for (const LinkedStage::Slot &slot : linked->slots)
        slotValues.insert(slot.values.begin(), slot.values.end());
    groups = findFusionGroups(
        function.getBody().front(), isFusedKernelOp, limits,
        linked ? function_ref<bool(Operation *)>([&](Operation *op) {
          return linked->firstOps.contains(op);
        })
               : function_ref<bool(Operation *)>(),
        [&](Value v) { return slotValues.contains(v); });
    for (const FusionGroup &group : groups) {
      groupAt[group.ops.back()] = &group;
      fusedAway.insert(group.ops.begin(), group.ops.end() - 1);
      addInternalValues(group, internal);
    }
  }
  if (failed(numberValues()))
    return failure();

  // Arguments: parameters are persistent, everything else is fed per step.
  for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
    auto role = function.getArgAttrOfType<ArgRoleAttr>(
        index, PartDialect::getRoleAttrName());
    auto name = function.getArgAttrOfType<StringAttr>(
        index, PartDialect::getNameAttrName());
    auto sharding = function.getArgAttrOfType<ShardingAttr>(
        index, PartDialect::getShardingAttrName());
    std::string argName =
        name ? name.getValue().str() : ("arg" + Twine(index)).str();
    bool isParameter = role && (role.getValue() == ArgRole::Parameter ||
                                role.getValue() == ArgRole::State);
    ValueInfo &info = values[valueIds.lookup(arg)];
    info.storage =
        isParameter ? plan::Storage::Persistent : plan::Storage::Input;
    info.index = isParameter ? params.size() : inputs.size();
    plan::Role planRole =
        !role                                   ? plan::Role::Input
        : role.getValue() == ArgRole::Parameter ? plan::Role::Parameter
        : role.getValue() == ArgRole::Label     ? plan::Role::Label
        : role.getValue() == ArgRole::State     ? plan::Role::State
                                                : plan::Role::Input;
    FailureOr<fb::Offset<plan::Binding>> binding =
        makeBinding(function, argName, planRole, arg, sharding, 0, -1,
                    function.getArgAttr(index, PartDialect::getInitAttrName()),
                    function.getArgAttrOfType<DenseI64ArrayAttr>(
                        index, PartDialect::getLogicalShapeAttrName()),
                    storedLayoutOf(index), microBatchesOf(index));
    if (failed(binding))
      return failure();
    (isParameter ? params : inputs).push_back(*binding);
    if (!isParameter)
      inputCopies.push_back(std::max<uint32_t>(1, microBatchesOf(index)));
  }

  for (Operation &op : function.getBody().front()) {
    if (linked)
      currentFragment = linked->fragmentOf.lookup(&op);
    if (failed(lowerOp(&op)))
      return failure();
  }

  planArena(memory);
  if (memory.arenaBytes > uint64_t(runtime::kMaxPlanBytes))
    return function.emitError()
           << "the arena of @" << function.getName() << " needs "
           << memory.arenaBytes << " bytes; the runtime holds at most "
           << runtime::kMaxPlanBytes;
  for (const ValueInfo &v : values) {
    if (v.storage == plan::Storage::Persistent && !v.inPlace)
      memory.persistentBytes += v.bytes();
    // A micro-batched input's buffer holds every micro-batch.
    if (v.storage == plan::Storage::Input)
      memory.inputBytes += v.bytes() * inputCopies[v.index];
  }

  std::vector<fb::Offset<plan::Value>> valueOffsets;
  for (const ValueInfo &v : values) {
    std::vector<int64_t> shape(v.type.getShape().begin(),
                               v.type.getShape().end());
    valueOffsets.push_back(plan::CreateValueDirect(
        builder, *getDType(v.type.getElementType()), &shape, v.storage,
        v.storage == plan::Storage::Arena ? v.offset : 0, v.index,
        uint32_t(valueSlots.lookup(valueOffsets.size()))));
  }
  fb::Offset<fb::Vector<fb::Offset<plan::Fragment>>> fragments;
  if (linked) {
    FailureOr<fb::Offset<fb::Vector<fb::Offset<plan::Fragment>>>> lowered =
        lowerFragments();
    if (failed(lowered))
      return failure();
    fragments = *lowered;
  }
  auto name = builder.CreateString(memory.name);
  auto valuesVector = builder.CreateVector(valueOffsets);
  auto paramsVector = builder.CreateVector(params);
  auto inputsVector = builder.CreateVector(inputs);
  auto outputsVector = builder.CreateVector(outputs);
  auto instructionsVector = builder.CreateVector(instructions);
  return plan::CreateProgram(builder, name, meshIndex, valuesVector,
                             memory.arenaBytes, paramsVector, inputsVector,
                             outputsVector, instructionsVector, fragments);
}

/// Prints the memory report of `function`'s per-device program (see the
/// "Memory report" section of docs/design/2026-12-02-training.md): every
/// device of the mesh holds the same local shapes, so one column serves all.
static void printMemoryReport(func::FuncOp function, MeshOp mesh,
                              const ProgramMemory &figure,
                              llvm::raw_ostream &os) {
  ResidentBytes resident = residentBytes(function, mesh.getMesh());
  uint64_t parameters = resident.parameters, state = resident.state,
           inputs = resident.inputs, gradients = resident.gradients,
           psi = resident.globalParameterElements;
  // Persistent values that are not arguments are the plan's constants.
  uint64_t constants = figure.persistentBytes - parameters - state;
  int64_t devices = mesh.getMesh().getNumDevices();
  uint64_t total = figure.peakBytes();
  os << "memory report of @" << figure.name << " on @" << mesh.getSymName()
     << " (" << devices << " devices), bytes per device:\n";
  auto row = [&](StringRef category, uint64_t bytes, StringRef note) {
    os << "  " << category;
    os.indent(std::max<int>(1, 12 - int(category.size()))) << bytes;
    if (!note.empty())
      os << "  (" << note << ")";
    os << "\n";
  };
  row("parameters", parameters, "");
  row("state", state, "optimizer state");
  row("constants", constants, "");
  row("inputs", inputs, "inputs and labels");
  row("arena", figure.arenaBytes,
      "peak of activations, gradients and temporaries, after reuse");
  if (figure.scratchBytes)
    row("scratch", figure.scratchBytes,
        "staging of collectives whose blocks are not contiguous");
  row("total", total, "");
  row("gradients", gradients,
      "in the arena: the gradients as the optimizer reads them, reduced; "
      "each lives from its reduction to its update");
  // A pipeline stage: its steps, and the most micro-batches whose forward
  // ran and whose backward has not (the activation sets the arena holds).
  if (auto schedule = function->getAttrOfType<StringAttr>("part.schedule")) {
    SmallVector<StringRef> steps;
    schedule.getValue().split(steps, ' ', -1, /*KeepEmpty=*/false);
    // A micro-batch (of a chunk) is in flight from its forward to its
    // backward (B), or with a split backward (zero-bubble) to its weight
    // gradients (W).
    int64_t inFlight = 0, peak = 0;
    for (StringRef text : steps) {
      std::optional<pipeline::Step> step = pipeline::parseStepText(text.str());
      if (!step)
        continue;
      if (step->action == pipeline::Action::Forward)
        peak = std::max(peak, ++inFlight);
      else if (step->action == pipeline::Action::Backward ||
               step->action == pipeline::Action::BackwardWeight)
        --inFlight;
    }
    auto stage = function->getAttrOfType<IntegerAttr>("part.stage");
    os << "  stage       " << (stage ? stage.getInt() : 0) << ": "
       << schedule.getValue() << "\n";
    os << "  in flight   " << peak
       << " micro-batches at most (their activations are in the arena)\n";
  }
  os << "all devices " << llvm::SaturatingMultiply(total, uint64_t(devices))
     << " bytes; Psi " << psi << " parameter elements (global)\n";
}

LogicalResult partition::lowerToPlan(ModuleOp module,
                                     std::vector<uint8_t> &bytes,
                                     std::vector<ProgramMemory> *memory,
                                     const PlanOptions &options) {
  fb::FlatBufferBuilder builder(1 << 16);

  // Meshes, with consecutive world ranks: mesh k's devices follow mesh k-1's.
  std::vector<fb::Offset<plan::Mesh>> meshes;
  llvm::DenseMap<StringAttr, unsigned> meshIndex;
  int32_t nextRank = 0;
  for (MeshOp mesh : module.getOps<MeshOp>()) {
    MeshAttr attr = mesh.getMesh();
    std::vector<fb::Offset<fb::String>> names;
    for (StringAttr name : attr.getAxisNames())
      names.push_back(builder.CreateString(name.getValue().str()));
    std::vector<int64_t> sizes(attr.getAxisSizes().begin(),
                               attr.getAxisSizes().end());
    std::vector<int32_t> ranks;
    if (attr.getNumDevices() > runtime::kMaxPlanRanks - nextRank)
      return mesh.emitOpError()
             << "has " << attr.getNumDevices() << " devices after " << nextRank
             << " ranks of earlier meshes; a plan numbers at most "
             << runtime::kMaxPlanRanks << " ranks";
    for (int64_t i = 0; i < attr.getNumDevices(); ++i)
      ranks.push_back(nextRank++);
    meshIndex[mesh.getSymNameAttr()] = meshes.size();
    meshes.push_back(plan::CreateMeshDirect(
        builder, mesh.getSymName().str().c_str(), &names, &sizes, &ranks));
  }

  SmallVector<func::FuncOp> functions;
  llvm::DenseMap<StringAttr, unsigned> programOfMesh;
  for (auto function : module.getOps<func::FuncOp>()) {
    FlatSymbolRefAttr spmd = getSpmdMesh(function);
    if (!spmd || function.isDeclaration())
      continue;
    if (!programOfMesh.try_emplace(spmd.getAttr(), functions.size()).second)
      return function.emitError() << "a second per-device program for " << spmd
                                  << "; each mesh runs one program";
    functions.push_back(function);
  }
  if (functions.empty())
    return module.emitError()
           << "no per-device program to lower: mark the function with "
              "'part.spmd = @mesh'";

  std::vector<fb::Offset<plan::Program>> programs;
  std::vector<ProgramMemory> figures;
  // One step per program, in module order; a pipeline stage written as
  // fragments runs its schedule table.
  std::vector<fb::Offset<plan::ScheduleStep>> schedule;
  for (func::FuncOp function : functions) {
    FlatSymbolRefAttr spmd = getSpmdMesh(function);
    MeshOp mesh = lookupMesh(function, spmd);
    std::optional<LinkedStage> linked;
    if (function->hasAttr(PartDialect::getFragmentsAttrName())) {
      OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
      FailureOr<LinkedStage> link = linkStage(function, top);
      if (failed(link))
        return failure();
      linked = std::move(*link);
    }
    ProgramLowering lowering(builder, linked ? linked->linked : function, mesh,
                             meshIndex.lookup(spmd.getAttr()), programOfMesh,
                             options, linked ? &*linked : nullptr);
    ProgramMemory figure;
    FailureOr<fb::Offset<plan::Program>> program = lowering.lower(figure);
    if (linked)
      linked->linked.erase();
    if (failed(program))
      return failure();
    unsigned index = programs.size();
    programs.push_back(*program);
    figures.push_back(figure);
    if (!linked) {
      schedule.push_back(plan::CreateScheduleStep(builder, index, 0));
      continue;
    }
    for (auto [fragment, m] : linked->steps)
      schedule.push_back(
          plan::CreateScheduleStep(builder, index, m, int32_t(fragment)));
  }
  // The global program's model FLOPs, when part-spmd counted them; absent
  // for per-device programs written by hand.
  fb::Optional<double> modelFlops = fb::nullopt;
  if (auto flops = module->getAttrOfType<IntegerAttr>(
          PartDialect::getModelFlopsAttrName()))
    modelFlops = flops.getValue().roundToDouble(/*isSigned=*/true);
  auto root = plan::CreatePlanDirect(builder, kPlanFormatVersion,
                                     "partition-translate", &meshes, &programs,
                                     &schedule, modelFlops);
  // Size-prefixed: the runtime detects any truncation, even in padding.
  builder.FinishSizePrefixed(root, plan::PlanIdentifier());
  bytes.assign(builder.GetBufferPointer(),
               builder.GetBufferPointer() + builder.GetSize());
  // The checksum lets the runtime reject a corrupted file outright.
  partition::runtime::appendPlanChecksum(bytes);
  if (memory)
    *memory = std::move(figures);
  return success();
}

void partition::registerPartToPlanTranslation() {
  static llvm::cl::opt<bool> memoryReport(
      "part-memory-report",
      llvm::cl::desc("With --part-to-plan: report each per-device program's "
                     "memory, as a remark at the function and by category "
                     "(parameters, optimizer state, constants, inputs, arena) "
                     "on stderr; a successful translation is silent without "
                     "it"),
      llvm::cl::init(false));
  static llvm::cl::opt<bool> fuseElementwise(
      "part-fuse-elementwise",
      llvm::cl::desc("With --part-to-plan: lower chains of elementwise float "
                     "ops as one Fused kernel each (default on; off lowers "
                     "every op as its own kernel, for comparison)"),
      llvm::cl::init(true));
  static const TranslateFromMLIRFunction toPlan =
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a module";
        std::vector<uint8_t> bytes;
        std::vector<ProgramMemory> figures;
        PlanOptions options;
        options.fuseElementwise = fuseElementwise;
        if (failed(lowerToPlan(module, bytes, &figures, options)))
          return failure();
        if (memoryReport) {
          // Figures are in the order lowerToPlan lowers: module order.
          auto figure = figures.begin();
          for (auto function : module.getOps<func::FuncOp>()) {
            FlatSymbolRefAttr spmd = getSpmdMesh(function);
            if (!spmd || function.isDeclaration())
              continue;
            // The compiler's account of each device's memory, next to the
            // function.
            {
              InFlightDiagnostic remark = emitRemark(function.getLoc());
              remark << "per-device memory of @" << figure->name
                     << ": arena " << figure->arenaBytes << " bytes ("
                     << figure->unplannedBytes
                     << " without reuse), parameters and constants "
                     << figure->persistentBytes << " bytes, inputs "
                     << figure->inputBytes << " bytes, ";
              if (figure->scratchBytes)
                remark << "collective staging " << figure->scratchBytes
                       << " bytes, ";
              remark << "peak " << figure->peakBytes() << " bytes";
            } // emitted here, before the report
            printMemoryReport(function, lookupMesh(function, spmd), *figure++,
                              llvm::errs());
          }
        }
        os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        return success();
      };
  // TranslateFromMLIRRegistration, with the input's nesting checked before
  // the parser recurses into it.
  static TranslateRegistration registration(
      "part-to-plan", "lower part.spmd functions to a partition execution plan",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr, raw_ostream &os,
         MLIRContext *context) -> LogicalResult {
        const llvm::MemoryBuffer *input =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        if (!checkNestingDepth(input->getBuffer(), input->getBufferIdentifier(),
                               llvm::errs()))
          return failure();
        // MlirTranslateMain turns operation printing on for every
        // diagnostic; an error in a large function then prints all of it.
        // Only on request (--mlir-print-op-on-diagnostic).
        context->printOpOnDiagnostic(shouldPrintOpOnDiagnostic());
        // Verification and lowering report at functions: keep their source
        // lines short. (-verify-diagnostics checks diagnostics in the
        // driver's handler.)
        if (!isOptionGiven("verify-diagnostics"))
          registerShortDiagnosticHandler(context, sourceMgr);
        DialectRegistry registry;
        registry.insert<PartDialect, func::FuncDialect>();
        context->appendDialectRegistry(registry);
        OwningOpRef<Operation *> op = parseSourceFileForTool(
            sourceMgr, context, /*insertImplicitModule=*/true);
        if (!op || failed(verify(*op)))
          return failure();
        return toPlan(op.get(), os);
      });
}
