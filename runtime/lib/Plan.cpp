//===- Plan.cpp - loading, validating and dumping plans -------------------===//

#include "partition/runtime/Plan.h"
#include "partition/runtime/DeviceGroups.h"
#include "partition/runtime/Files.h"
#include "partition/runtime/Kernels.h"
#include "partition/runtime/StepMetrics.h"
#include "partition/runtime/StoredShape.h"
#include "partition/runtime/Tensor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

using namespace partition::runtime;
namespace fb = flatbuffers;
namespace plan = partition::plan;

/// Upper bounds that keep arithmetic on sizes far from overflow; a plan
/// beyond them is rejected as malformed rather than trusted.
static constexpr int64_t kMaxDim = kMaxPlanDim;
static constexpr int64_t kMaxBytes = kMaxPlanBytes;
static constexpr int kMaxRanks = int(kMaxPlanRanks);

int64_t partition::runtime::valueBytes(const plan::Value &value) {
  int64_t n = 1;
  for (int64_t d : *value.shape())
    n *= d;
  return n * dtypeSize(toDType(value.dtype()));
}

/// The bytes a value's copies span in its place: (slots - 1) strides and
/// one value for a slotted arena value, else the value's bytes.
static uint64_t arenaSpan(const plan::Value &v) {
  uint64_t bytes = uint64_t(valueBytes(v));
  if (v.storage() != plan::Storage::Arena || v.slots() <= 1)
    return bytes;
  return slotStride(int64_t(bytes)) * (v.slots() - 1) + bytes;
}

KernelAttrs partition::runtime::unpackKernelAttrs(const plan::KernelInst &k) {
  KernelAttrs attrs;
  if (k.attrs_type() == plan::KernelAttrs::NONE || !k.attrs())
    return attrs;
  attrs.value = plan::KernelAttrsUnion::UnPack(k.attrs(), k.attrs_type(),
                                               /*resolver=*/nullptr);
  if (attrs.value)
    attrs.type = k.attrs_type();
  return attrs;
}

uint64_t partition::runtime::transferTagMicroBatches(const plan::Plan &plan) {
  uint64_t most = 0;
  for (const plan::ScheduleStep *step : *plan.schedule())
    most = std::max<uint64_t>(most, transferMicroBatch(*step));
  return most + 1;
}

namespace {

std::string formatHex(uint64_t x) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016llx", (unsigned long long)x);
  return text;
}

std::vector<int64_t> toVector(const fb::Vector<int64_t> *v) {
  return v ? std::vector<int64_t>(v->begin(), v->end())
           : std::vector<int64_t>();
}

/// Letters, then optionally a dot and a chunk number ("F", "Bi", "B.1"),
/// then optionally the final suffix ("B.1+reduce").
bool isFragmentName(const std::string &fragment) {
  std::string name(fragmentKind(fragment));
  size_t letters = 0;
  while (letters < name.size() && std::isalpha((unsigned char)name[letters]))
    ++letters;
  if (letters == 0)
    return false;
  if (letters == name.size())
    return true;
  size_t digits = name.size() - letters - 1;
  return name[letters] == '.' && digits > 0 && digits <= 9 &&
         std::all_of(name.begin() + letters + 1, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

/// True when the elements of `v` (absent or empty: true) are 8-byte aligned.
/// The FlatBuffers verifier checks only the 4-byte length in front of a
/// vector; the plan writer aligns the elements of every non-empty [long] (and
/// of every vector of structs of longs) to 8 bytes (and the loader's buffer
/// is malloc-aligned), so anything else is a damaged file, and reading it
/// would be a misaligned load.
template <typename T>
bool aligned(const fb::Vector<T> *v) {
  return !v || v->size() == 0 ||
         reinterpret_cast<uintptr_t>(v->Data()) % alignof(int64_t) == 0;
}

/// What the FlatBuffers verifier leaves to the reader of a union: a known
/// kind, and a table wherever a kind is named. Empty when both hold.
template <typename Kind>
std::string unionProblem(Kind kind, const void *table, Kind max,
                         const char *(*name)(Kind)) {
  if (kind > max)
    return "an attribute table of unknown kind " + std::to_string(int(kind));
  if (kind != Kind::NONE && !table)
    return std::string("its ") + name(kind) + " table is missing";
  return "";
}

/// How a program's fragments use its values (by root: an alias counts as
/// the value it aliases). Empty for a program without fragments.
struct FragmentUses {
  /// Per value: whether instructions of more than one fragment use it.
  std::vector<char> spans;
  /// Per value that spans: the instructions that read it, in order.
  std::vector<std::vector<int64_t>> reads;
  /// Per instruction: the end of its fragment.
  std::vector<int64_t> fragmentEnd;
  /// The first and last instruction of the fragments the schedule repeats
  /// (all but the prologue and the update); repeatedLast -1: none.
  int64_t repeatedFirst = 0, repeatedLast = -1;

  bool spanning(uint32_t id) const { return !spans.empty() && spans[id]; }
  /// Whether an instruction after `t` in t's fragment reads `id`.
  bool readLaterInFragment(uint32_t id, int64_t t) const {
    const std::vector<int64_t> &r = reads[id];
    auto next = std::upper_bound(r.begin(), r.end(), t);
    return next != r.end() && *next < fragmentEnd[t];
  }
};

/// Checks one program; `where` prefixes messages.
class ProgramValidator {
public:
  ProgramValidator(const plan::Plan &whole, const plan::Program &program,
                   std::string where)
      : whole(whole), program(program), where(std::move(where)) {}

  Status run();

private:
  template <typename... Args>
  Status fail(Args &&...args) const {
    return PARTITION_ERROR(InvalidArgument, where, ": ",
                           std::forward<Args>(args)...);
  }
  Status checkValues();
  Status checkSlots(size_t id, const plan::Value &v);
  Status checkFragments();
  Status checkBindings(const fb::Vector<fb::Offset<plan::Binding>> *bindings,
                       const char *kind, plan::Storage storage);
  Status checkStoredLayout(const char *kind, const plan::Binding &b);
  Status checkInstruction(size_t index, const plan::Instruction &inst);
  Status checkPlacements();
  /// Per value, a representative of the in-place versions of one
  /// accumulator it belongs to (itself for any other value).
  std::vector<uint32_t>
  accumulatorChains(const std::vector<uint32_t> &root,
                    const FragmentUses &uses) const;
  FragmentUses fragmentUses(const std::vector<uint32_t> &root) const;
  Status checkCollective(const std::string &at, const plan::CollectiveInst &c,
                         const std::vector<TensorRef> &in,
                         const std::vector<TensorRef> &out);
  TensorRef ref(uint32_t id) const {
    const plan::Value &v = *program.values()->Get(id);
    return TensorRef{nullptr, toDType(v.dtype()), toVector(v.shape())};
  }

  const plan::Plan &whole;
  const plan::Program &program;
  const plan::Mesh *mesh = nullptr;
  std::string where;
};

Status ProgramValidator::run() {
  if (program.mesh() >= whole.meshes()->size())
    return fail("mesh index ", program.mesh(), " is out of range (",
                whole.meshes()->size(), " meshes)");
  mesh = whole.meshes()->Get(program.mesh());
  if (program.arena_bytes() > uint64_t(kMaxBytes))
    return fail("arena of ", program.arena_bytes(), " bytes is implausible");
  PARTITION_RETURN_IF_ERROR(checkValues());
  PARTITION_RETURN_IF_ERROR(
      checkBindings(program.params(), "parameter", plan::Storage::Persistent));
  PARTITION_RETURN_IF_ERROR(
      checkBindings(program.inputs(), "input", plan::Storage::Input));
  PARTITION_RETURN_IF_ERROR(
      checkBindings(program.outputs(), "output", plan::Storage(255)));
  // Only state has an initial value of its own.
  if (program.params())
    for (const plan::Binding *b : *program.params()) {
      bool hasInit = b->init_from() || b->init_value() != 0.0f;
      if (hasInit && b->role() != plan::Role::State)
        return fail("parameter \"", b->name()->str(),
                    "\" has an initial value, which only state may have");
      if (b->init_from() && b->init_from()->str().empty())
        return fail("state \"", b->name()->str(),
                    "\" is initialised from a tensor with an empty name");
    }
  // An output that updates a persistent value has its layout.
  if (program.outputs())
    for (const plan::Binding *b : *program.outputs()) {
      if (b->updates() < 0)
        continue;
      size_t numParams = program.params() ? program.params()->size() : 0;
      if (size_t(b->updates()) >= numParams)
        return fail("output \"", b->name()->str(), "\" updates parameter ",
                    b->updates(), " of ", numParams);
      const plan::Binding &target = *program.params()->Get(b->updates());
      if (target.role() != plan::Role::Parameter &&
          target.role() != plan::Role::State)
        return fail("output \"", b->name()->str(), "\" updates \"",
                    target.name()->str(), "\", which is not a parameter or "
                    "state");
      const plan::Value &from = *program.values()->Get(b->value());
      const plan::Value &to = *program.values()->Get(target.value());
      if (from.dtype() != to.dtype() ||
          toVector(from.shape()) != toVector(to.shape()) ||
          toVector(b->global_shape()) != toVector(target.global_shape()))
        return fail("output \"", b->name()->str(), "\" (",
                    formatShape(toVector(from.shape())), ") cannot update \"",
                    target.name()->str(), "\" (",
                    formatShape(toVector(to.shape())), ")");
    }
  // Every value kept in a parameter's or input's buffer fits it: the
  // buffer holds the bytes of its binding's value.
  for (size_t id = 0; id < program.values()->size(); ++id) {
    const plan::Value &v = *program.values()->Get(id);
    bool isParam = v.storage() == plan::Storage::Persistent;
    if (!isParam && v.storage() != plan::Storage::Input)
      continue;
    const plan::Binding &b =
        *(isParam ? program.params() : program.inputs())->Get(v.index());
    const plan::Value &bound = *program.values()->Get(b.value());
    if (bound.dtype() != v.dtype() || valueBytes(bound) != valueBytes(v))
      return fail("value ", id, " (", dtypeName(toDType(v.dtype())), ", ",
                  valueBytes(v), " bytes) is kept in the buffer of ",
                  isParam ? "parameter" : "input", " \"", b.name()->str(),
                  "\" (", dtypeName(toDType(bound.dtype())), ", ",
                  valueBytes(bound), " bytes)");
  }
  for (size_t i = 0; i < program.instructions()->size(); ++i)
    PARTITION_RETURN_IF_ERROR(
        checkInstruction(i, *program.instructions()->Get(i)));
  PARTITION_RETURN_IF_ERROR(checkFragments());
  return checkPlacements();
}

Status ProgramValidator::checkValues() {
  const auto &values = *program.values();
  size_t numParams = program.params() ? program.params()->size() : 0;
  size_t numInputs = program.inputs() ? program.inputs()->size() : 0;
  for (size_t id = 0; id < values.size(); ++id) {
    const plan::Value &v = *values.Get(id);
    if (v.dtype() > plan::DType::MAX)
      return fail("value ", id, " has unknown dtype ", int(v.dtype()));
    // Checked products: a shape such as [2^40, 2^40] must not wrap around
    // to a small (or zero) size that later copies would trust.
    if (!aligned(v.shape()))
      return fail("value ", id, ": its shape is not 8-byte aligned");
    int64_t elements = 1;
    for (int64_t d : *v.shape()) {
      if (d < 0 || d > kMaxDim)
        return fail("value ", id, " has dimension ", d);
      if (__builtin_mul_overflow(elements, d, &elements) ||
          elements > kMaxBytes)
        return fail("value ", id, " of shape ",
                    formatShape(toVector(v.shape())), " has more than ",
                    kMaxBytes, " elements");
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(elements, dtypeSize(toDType(v.dtype())),
                               &bytes) ||
        bytes > kMaxBytes)
      return fail("value ", id, " of shape ", formatShape(toVector(v.shape())),
                  " has ", elements, " elements, more than ", kMaxBytes,
                  " bytes");
    if (v.slots() > 1 && v.storage() != plan::Storage::Arena)
      return fail("value ", id, " has ", v.slots(),
                  " slots, which only an arena value may have (its storage "
                  "is ",
                  plan::EnumNameStorage(v.storage()), ")");
    switch (v.storage()) {
    case plan::Storage::Arena:
      if (v.slots() > 1)
        PARTITION_RETURN_IF_ERROR(checkSlots(id, v));
      else if (v.offset() > program.arena_bytes() ||
               uint64_t(valueBytes(v)) > program.arena_bytes() - v.offset())
        return fail("value ", id, " occupies arena bytes [", v.offset(), ", ",
                    v.offset() + valueBytes(v), ") beyond the arena of ",
                    program.arena_bytes());
      // Kernels load elements (and vectors of them) at the value's address;
      // the arena itself is at least this aligned.
      if (v.offset() % kArenaAlignment)
        return fail("value ", id, " (", dtypeName(toDType(v.dtype())),
                    ") is at arena offset ", v.offset(),
                    ", which is not a multiple of the arena alignment ",
                    kArenaAlignment);
      break;
    case plan::Storage::Persistent:
      if (v.index() >= numParams)
        return fail("value ", id, " is parameter ", v.index(), " of ",
                    numParams);
      break;
    case plan::Storage::Input:
      if (v.index() >= numInputs)
        return fail("value ", id, " is input ", v.index(), " of ", numInputs);
      break;
    case plan::Storage::Alias: {
      // Aliases point to earlier values, so chains end and never loop.
      if (v.index() >= id)
        return fail("value ", id, " aliases value ", v.index(),
                    ", which is not an earlier value");
      const plan::Value &target = *values.Get(v.index());
      if (valueBytes(target) != valueBytes(v) || target.dtype() != v.dtype())
        return fail("value ", id, " (", valueBytes(v), " bytes) aliases value ",
                    v.index(), " (", valueBytes(target),
                    " bytes of another size or dtype)");
      break;
    }
    default:
      return fail("value ", id, " has unknown storage ", int(v.storage()));
    }
  }
  return Status::ok();
}

/// The copies of a slotted arena value (Value.slots > 1): at most
/// kMaxSlots, all inside the arena.
Status ProgramValidator::checkSlots(size_t id, const plan::Value &v) {
  if (v.slots() > kMaxSlots)
    return fail("value ", id, " has ", v.slots(), " slots, more than ",
                kMaxSlots);
  uint64_t stride = slotStride(valueBytes(v)), span = 0, end = 0;
  if (__builtin_mul_overflow(stride, uint64_t(v.slots() - 1), &span) ||
      __builtin_add_overflow(span, uint64_t(valueBytes(v)), &span) ||
      __builtin_add_overflow(span, v.offset(), &end) ||
      end > program.arena_bytes())
    return fail("value ", id, " has ", v.slots(), " slots of ", valueBytes(v),
                " bytes ", stride, " bytes apart from arena offset ",
                v.offset(), ", beyond the arena of ", program.arena_bytes(),
                " bytes");
  return Status::ok();
}

/// A binding's layout in weights files (Binding.stored_shape and
/// stored_permutation): only a parameter, state or output may have one, the
/// permutation only with a stored shape and over its dimensions, and the
/// global shape must view the (permuted) stored shape.
Status ProgramValidator::checkStoredLayout(const char *kind,
                                           const plan::Binding &b) {
  std::string name = b.name()->str();
  const auto *perm = b.stored_permutation();
  if (!b.stored_shape() && !perm)
    return Status::ok();
  if (!aligned(b.stored_shape()) || !aligned(perm))
    return fail(kind, " \"", name,
                "\": its stored shape or permutation is not 8-byte aligned");
  std::vector<int64_t> global = toVector(b.global_shape()),
                       stored = toVector(b.stored_shape()),
                       permutation = toVector(perm);
  if (b.role() == plan::Role::Input || b.role() == plan::Role::Label ||
      b.role() == plan::Role::Constant)
    return fail(kind, " \"", name,
                "\" has a stored layout, which an input, label or constant "
                "does not have");
  if (perm && (!b.stored_shape() || !isPermutation(permutation, stored.size())))
    return fail(kind, " \"", name, "\" has the stored permutation ",
                formatShape(permutation),
                ", which is not a permutation of the dimensions of its "
                "stored shape ",
                formatShape(stored));
  std::vector<int64_t> permuted = permuteShape(stored, permutation);
  if (!viewGroups(global, permuted))
    return fail(kind, " \"", name, "\" has the stored shape ",
                formatShape(stored),
                perm ? " permuted " + formatShape(permutation) + " to " +
                           formatShape(permuted)
                     : std::string(),
                ", which its global shape ", formatShape(global),
                " does not view (consecutive dimensions must multiply to "
                "each stored one)");
  return Status::ok();
}

Status ProgramValidator::checkBindings(
    const fb::Vector<fb::Offset<plan::Binding>> *bindings, const char *kind,
    plan::Storage storage) {
  if (!bindings)
    return Status::ok();
  std::set<std::string> names;
  for (size_t i = 0; i < bindings->size(); ++i) {
    const plan::Binding &b = *bindings->Get(i);
    std::string name = b.name()->str();
    if (!names.insert(name).second)
      return fail("two ", kind, "s are named \"", name, "\"");
    if (b.value() >= program.values()->size())
      return fail(kind, " \"", name, "\" names value ", b.value(), " of ",
                  program.values()->size());
    const plan::Value &v = *program.values()->Get(b.value());
    if (storage != plan::Storage(255) &&
        (v.storage() != storage || v.index() != i))
      return fail(kind, " \"", name, "\" (binding ", i, ") is bound to value ",
                  b.value(), ", which is not stored as ", kind, " ", i);
    if (!aligned(b.global_shape()))
      return fail(kind, " \"", name,
                  "\": its global shape is not 8-byte aligned");
    // The sharding relates the local value to the global one.
    const auto &dims = *b.sharding()->dims();
    size_t rank = v.shape()->size();
    if (dims.size() != rank || b.global_shape()->size() != rank)
      return fail(kind, " \"", name, "\" has rank ", rank, " but its sharding ",
                  "has ", dims.size(), " and its global shape ",
                  b.global_shape()->size(), " dimensions");
    int64_t globalElements = 1;
    for (int64_t d : *b.global_shape())
      if (d < 0 || __builtin_mul_overflow(globalElements, d, &globalElements) ||
          globalElements > kMaxBytes)
        return fail(kind, " \"", name, "\" has the global shape ",
                    formatShape(toVector(b.global_shape())),
                    ", negative or of more than ", kMaxBytes, " elements");
    if (Status s = checkStoredLayout(kind, b); !s.isOk())
      return s;
    // A micro-batched input's block has micro_batches times the value's
    // rows: the buffer holds every micro-batch.
    int64_t rows = rank ? v.shape()->Get(0) : 0;
    if (uint32_t m = b.micro_batches()) {
      if (v.storage() != plan::Storage::Input ||
          (b.role() != plan::Role::Input && b.role() != plan::Role::Label))
        return fail(kind, " \"", name, "\" has ", m,
                    " micro-batches, which only an input or label may have");
      if (rank == 0)
        return fail(kind, " \"", name, "\" has ", m,
                    " micro-batches but is a scalar (micro-batches are rows "
                    "of dimension 0)");
      if (m > kMaxSlots || __builtin_mul_overflow(rows, int64_t(m), &rows) ||
          rows > kMaxDim || valueBytes(v) > kMaxBytes / int64_t(m))
        return fail(kind, " \"", name, "\" has ", m, " micro-batches of ",
                    formatShape(toVector(v.shape())), ", more than ",
                    kMaxBytes, " bytes or ", kMaxSlots, " micro-batches");
    }
    std::set<uint32_t> used;
    auto useAxis = [&](uint32_t axis) -> Status {
      if (axis >= mesh->axis_names()->size())
        return fail(kind, " \"", name, "\" uses mesh axis ", axis, " of ",
                    mesh->axis_names()->size());
      if (!used.insert(axis).second)
        return fail(kind, " \"", name, "\" uses mesh axis ", axis, " twice");
      return Status::ok();
    };
    for (size_t d = 0; d < rank; ++d) {
      int64_t shards = 1;
      for (uint32_t axis : *dims.Get(d)->axes()) {
        PARTITION_RETURN_IF_ERROR(useAxis(axis));
        shards *= mesh->axis_sizes()->Get(axis);
      }
      // A dimension the shards do not divide is padded (to a multiple of
      // the shards of the dimensions linked to it): the blocks cover it,
      // with the last ones partly or wholly padding.
      int64_t local = d == 0 ? rows : v.shape()->Get(d);
      int64_t covered = local * shards;
      if (covered < b.global_shape()->Get(d) ||
          (b.global_shape()->Get(d) == 0 && covered != 0))
        return fail(kind, " \"", name, "\" dimension ", d, ": local size ",
                    local,
                    b.micro_batches() ? " (" + std::to_string(
                                                   b.micro_batches()) +
                                            " micro-batches)"
                                      : std::string(),
                    " times ", shards, " shards (", covered,
                    ") does not cover the global size ",
                    b.global_shape()->Get(d));
    }
    if (b.sharding()->unreduced())
      for (uint32_t axis : *b.sharding()->unreduced())
        PARTITION_RETURN_IF_ERROR(useAxis(axis));
    if (b.role() == plan::Role::Constant &&
        (!b.data() || int64_t(b.data()->size()) != valueBytes(v)))
      return fail("constant \"", name, "\" has ",
                  b.data() ? b.data()->size() : 0, " bytes of data but needs ",
                  valueBytes(v));
  }
  return Status::ok();
}

Status ProgramValidator::checkCollective(const std::string &at,
                                         const plan::CollectiveInst &c,
                                         const std::vector<TensorRef> &in,
                                         const std::vector<TensorRef> &out) {
  auto failAt = [&](auto &&...args) {
    return fail(at, ": ", std::forward<decltype(args)>(args)...);
  };
  if (c.kind() == plan::CollectiveKind::AxisIndex) {
    if (!in.empty() || out.size() != 1 || out[0].dtype != DType::I32 ||
        out[0].rank() != 0)
      return failAt("axis_index takes no operand and gives an i32 scalar");
  } else if (in.size() != 1 || out.size() != 1) {
    return failAt("a collective takes one operand and one result");
  } else if (in[0].dtype != out[0].dtype) {
    return failAt("operand and result dtypes differ");
  }
  if (c.reduce() > plan::ReduceOp::MAX)
    return failAt("unknown reduction ", int(c.reduce()));
  std::set<uint32_t> seen;
  for (uint32_t axis : *c.axes())
    if (axis >= mesh->axis_names()->size() || !seen.insert(axis).second)
      return failAt("axis ", axis, " is out of range or repeated");
  if (c.axes()->size() == 0)
    return failAt("needs at least one mesh axis");
  int64_t g = groupSize(*mesh->axis_sizes(), *c.axes());
  // The attribute table: the kind this collective takes, present.
  if (c.kind() > plan::CollectiveKind::MAX)
    return failAt("unknown collective kind ", int(c.kind()));
  const char *name = plan::EnumNameCollectiveKind(c.kind());
  std::string problem =
      unionProblem(c.attrs_type(), c.attrs(), plan::CollectiveAttrs::MAX,
                   plan::EnumNameCollectiveAttrs);
  if (!problem.empty())
    return failAt(name, ": ", problem);
  plan::CollectiveAttrs takes = plan::CollectiveAttrs::NONE;
  switch (c.kind()) {
  case plan::CollectiveKind::AllGather:
  case plan::CollectiveKind::ReduceScatter:
  case plan::CollectiveKind::AllSlice:
    takes = plan::CollectiveAttrs::CollectiveDimAttrs;
    break;
  case plan::CollectiveKind::AllToAll:
    takes = plan::CollectiveAttrs::AllToAllAttrs;
    break;
  case plan::CollectiveKind::Permute:
    takes = plan::CollectiveAttrs::PermuteAttrs;
    break;
  default:
    break;
  }
  auto attrsName = [](plan::CollectiveAttrs kind) {
    return kind == plan::CollectiveAttrs::NONE
               ? "none"
               : plan::EnumNameCollectiveAttrs(kind);
  };
  if (c.attrs_type() != takes) {
    if (takes == plan::CollectiveAttrs::NONE)
      return failAt(name, ": takes no attributes, got ",
                    attrsName(c.attrs_type()));
    return failAt(name, ": takes ", attrsName(takes), ", got ",
                  attrsName(c.attrs_type()));
  }
  if (c.kind() == plan::CollectiveKind::AxisIndex)
    return Status::ok();
  std::vector<int64_t> expected = in[0].shape;
  auto dimOk = [&](int64_t d) -> Status {
    if (d < 0 || d >= in[0].rank())
      return failAt("dimension ", d, " is out of range for rank ",
                    in[0].rank());
    return Status::ok();
  };
  switch (c.kind()) {
  case plan::CollectiveKind::AllReduce:
    break;
  case plan::CollectiveKind::AllGather: {
    int64_t dim = c.attrs_as_CollectiveDimAttrs()->dim();
    PARTITION_RETURN_IF_ERROR(dimOk(dim));
    expected[dim] *= g;
    break;
  }
  case plan::CollectiveKind::ReduceScatter:
  case plan::CollectiveKind::AllSlice: {
    int64_t dim = c.attrs_as_CollectiveDimAttrs()->dim();
    PARTITION_RETURN_IF_ERROR(dimOk(dim));
    if (expected[dim] % g)
      return failAt("dimension ", dim, " of size ", expected[dim],
                    " is not divisible by the group size ", g);
    expected[dim] /= g;
    break;
  }
  case plan::CollectiveKind::AllToAll: {
    const plan::AllToAllAttrs &a = *c.attrs_as_AllToAllAttrs();
    PARTITION_RETURN_IF_ERROR(dimOk(a.split_dim()));
    PARTITION_RETURN_IF_ERROR(dimOk(a.concat_dim()));
    if (expected[a.split_dim()] % g)
      return failAt("dimension ", a.split_dim(), " of size ",
                    expected[a.split_dim()],
                    " is not divisible by the group size ", g);
    expected[a.split_dim()] /= g;
    expected[a.concat_dim()] *= g;
    break;
  }
  case plan::CollectiveKind::Permute: {
    const auto *pairs = c.attrs_as_PermuteAttrs()->pairs();
    if (!aligned(pairs))
      return failAt("permute pairs are not 8-byte aligned");
    std::set<int64_t> sources, targets;
    if (pairs)
      for (const plan::PermutePair *pair : *pairs) {
        int64_t source = pair->source(), target = pair->target();
        if (source < 0 || source >= g || target < 0 || target >= g)
          return failAt("pair [", source, ", ", target,
                        "] is out of range for group size ", g);
        if (!sources.insert(source).second || !targets.insert(target).second)
          return failAt("a device is the source or target of two pairs");
      }
    break;
  }
  default:
    return failAt("unknown collective kind ", int(c.kind()));
  }
  if (out[0].shape != expected)
    return failAt("result shape ", formatShape(out[0].shape), " must be ",
                  formatShape(expected));
  return Status::ok();
}

Status ProgramValidator::checkInstruction(size_t index,
                                          const plan::Instruction &inst) {
  std::string at = "instruction " + std::to_string(index);
  if (inst.loc() && inst.loc()->size())
    at += " (" + inst.loc()->str() + ")";
  std::vector<TensorRef> in, out;
  size_t numValues = program.values()->size();
  if (inst.operands())
    for (uint32_t id : *inst.operands()) {
      if (id >= numValues)
        return fail(at, ": operand value ", id, " of ", numValues);
      in.push_back(ref(id));
    }
  if (inst.results())
    for (uint32_t id : *inst.results()) {
      if (id >= numValues)
        return fail(at, ": result value ", id, " of ", numValues);
      plan::Storage s = program.values()->Get(id)->storage();
      if (s != plan::Storage::Arena && s != plan::Storage::Persistent)
        return fail(at, ": result value ", id,
                    " must live in the arena or be persistent");
      out.push_back(ref(id));
    }
  switch (inst.inst_type()) {
  case plan::Inst::KernelInst: {
    const plan::KernelInst &k = *inst.inst_as_KernelInst();
    if (k.op() > plan::OpKind::MAX)
      return fail(at, ": unknown opcode ", int(k.op()));
    // The table is unpacked only once it is known to be safe to read; the
    // kind is checked against the opcode with the values, below.
    const char *op = opKindName(k.op());
    std::string problem = unionProblem(k.attrs_type(), k.attrs(),
                                       plan::KernelAttrs::MAX, kernelAttrsName);
    if (!problem.empty())
      return fail(at, ": ", op, ": ", problem);
    bool isAligned = true;
    if (auto *a = k.attrs_as_ReduceAttrs())
      isAligned = aligned(a->dims());
    else if (auto *a = k.attrs_as_TransposeAttrs())
      isAligned = aligned(a->permutation());
    else if (auto *a = k.attrs_as_SliceAttrs())
      isAligned = aligned(a->offsets()) && aligned(a->strides());
    if (!isAligned)
      return fail(at, ": ", op, ": its ", kernelAttrsName(k.attrs_type()),
                  " vectors are not 8-byte aligned");
    Status s = checkKernelShapes(k.op(), unpackKernelAttrs(k), in, out);
    if (!s.isOk())
      return fail(at, ": ", s.message());
    return Status::ok();
  }
  case plan::Inst::CollectiveInst:
    return checkCollective(at, *inst.inst_as_CollectiveInst(), in, out);
  case plan::Inst::SendInst:
  case plan::Inst::RecvInst: {
    bool isSend = inst.inst_type() == plan::Inst::SendInst;
    uint32_t peer = isSend ? inst.inst_as_SendInst()->peer_program()
                           : inst.inst_as_RecvInst()->peer_program();
    int64_t channel = isSend ? inst.inst_as_SendInst()->channel()
                             : inst.inst_as_RecvInst()->channel();
    if (in.size() != (isSend ? 1u : 0u) || out.size() != (isSend ? 0u : 1u))
      return fail(at, ": a ", isSend ? "send" : "recv", " takes ",
                  isSend ? "one operand" : "one result");
    if (peer >= whole.programs()->size() || channel < 0)
      return fail(at, ": peer program ", peer, " or channel ", channel,
                  " is out of range");
    const plan::Mesh &other =
        *whole.meshes()->Get(whole.programs()->Get(peer)->mesh());
    if (other.ranks()->size() != mesh->ranks()->size())
      return fail(at, ": peer mesh has ", other.ranks()->size(),
                  " devices, this one ", mesh->ranks()->size());
    return Status::ok();
  }
  default:
    return fail(at, ": unknown instruction kind ", int(inst.inst_type()));
  }
}

/// Program.fragments: well-named, distinct, and tiling the instructions in
/// order; the prologue P first and the update U last.
Status ProgramValidator::checkFragments() {
  const auto *fragments = program.fragments();
  if (!fragments || fragments->size() == 0)
    return Status::ok();
  uint64_t next = 0;
  size_t n = fragments->size();
  std::set<std::string> names;
  for (size_t k = 0; k < n; ++k) {
    const plan::Fragment &f = *fragments->Get(k);
    std::string name = f.name()->str();
    if (!isFragmentName(name))
      return fail("fragment ", k, " is named \"", name,
                  "\", which is not letters, optionally followed by a dot "
                  "and a chunk number, then optionally \"",
                  kFinalFragmentSuffix, "\"");
    if (!names.insert(name).second)
      return fail("two fragments are named \"", name, "\"");
    if ((name == "P" && k != 0) || (name == "U" && k != n - 1))
      return fail("fragment ", k, " \"", name, "\" of ", n, " must be the ",
                  name == "P" ? "first" : "last");
    if (f.first() != next)
      return fail("fragment ", k, " \"", name, "\" starts at instruction ",
                  f.first(), " but the fragments before it end at ", next,
                  "; the fragments must cover the instructions in order");
    next += f.count();
  }
  if (next != program.instructions()->size())
    return fail("the fragments cover ", next, " instructions, but the program "
                "has ", program.instructions()->size());
  return Status::ok();
}

FragmentUses ProgramValidator::fragmentUses(
    const std::vector<uint32_t> &root) const {
  FragmentUses uses;
  const auto *fragments = program.fragments();
  if (!fragments || fragments->size() == 0)
    return uses;
  const auto &instructions = *program.instructions();
  uses.spans.assign(root.size(), 0);
  uses.reads.resize(root.size());
  uses.fragmentEnd.resize(instructions.size());
  uses.repeatedFirst = int64_t(instructions.size());
  std::vector<int64_t> seenIn(root.size(), -1); // a fragment that uses it
  for (uint32_t k = 0; k < fragments->size(); ++k) {
    const plan::Fragment &f = *fragments->Get(k);
    int64_t first = f.first(), end = first + f.count();
    std::string name = f.name()->str();
    if (f.count() && name != "P" && name != "U") {
      uses.repeatedFirst = std::min(uses.repeatedFirst, first);
      uses.repeatedLast = end - 1;
    }
    for (int64_t i = first; i < end; ++i) {
      uses.fragmentEnd[i] = end;
      const plan::Instruction &inst = *instructions.Get(i);
      for (const auto *ids : {inst.operands(), inst.results()})
        if (ids)
          for (uint32_t id : *ids) {
            uint32_t r = root[id];
            if (seenIn[r] >= 0 && seenIn[r] != k)
              uses.spans[r] = 1;
            seenIn[r] = k;
          }
    }
  }
  for (int64_t i = 0; i < int64_t(instructions.size()); ++i)
    if (const auto *ids = instructions.Get(i)->operands())
      for (uint32_t id : *ids)
        if (uses.spans[root[id]] &&
            (uses.reads[root[id]].empty() || uses.reads[root[id]].back() != i))
          uses.reads[root[id]].push_back(i);
  return uses;
}

/// Whether kernel `inst` reads each element before it writes that element,
/// so that its result may take the bytes of an operand: a Fused kernel, or
/// an Add whose operands have its result's shape (an accumulator's sum).
static bool readsBeforeWriting(
    const plan::Instruction &inst,
    const fb::Vector<fb::Offset<plan::Value>> &values) {
  const plan::KernelInst *k = inst.inst_as_KernelInst();
  if (!k || !inst.operands() || !inst.results() || inst.results()->size() == 0)
    return false;
  if (k->op() == plan::OpKind::Fused)
    return true;
  if (k->op() != plan::OpKind::Add)
    return false;
  const auto *shape = values.Get(inst.results()->Get(0))->shape();
  for (uint32_t o : *inst.operands()) {
    const auto *other = values.Get(o)->shape();
    if (other->size() != shape->size() ||
        !std::equal(other->begin(), other->end(), shape->begin()))
      return false;
  }
  return true;
}

/// Values whose lifetimes intersect must not share bytes, as the compiler's
/// placement guarantees: a value is live from the first instruction that
/// writes it (from the start if none does) to the last that reads it or
/// any alias of it (to the end if it is an output). The places are the
/// arena and each persistent buffer. One exception: a Fused kernel (or an
/// Add of same-shaped operands) reads each element before it writes that
/// element, so its result may take
/// exactly the bytes of an operand of its dtype read there for the last
/// time (an update computed in place).
std::vector<uint32_t>
ProgramValidator::accumulatorChains(const std::vector<uint32_t> &root,
                                    const FragmentUses &uses) const {
  const auto &values = *program.values();
  const auto &instructions = *program.instructions();
  // Versions of one accumulator of a fragmented program: each step's sum is
  // computed in place over the previous one (an elementwise kernel reading
  // it there for the last time in its fragment), so the versions share
  // bytes whose lifetimes the schedule stretches over every repeated
  // fragment. Union-find over such (result, operand) pairs.
  std::vector<uint32_t> chain(values.size());
  for (uint32_t id = 0; id < chain.size(); ++id)
    chain[id] = id;
  auto find = [&](uint32_t id) {
    while (chain[id] != id)
      id = chain[id] = chain[chain[id]];
    return id;
  };
  for (uint32_t i = 0; program.fragments() && i < instructions.size(); ++i) {
    const plan::Instruction &inst = *instructions.Get(i);
    if (!readsBeforeWriting(inst, values) || !inst.results())
      continue;
    for (uint32_t r : *inst.results())
      for (uint32_t o : *inst.operands()) {
        const plan::Value &a = *values.Get(r), &b = *values.Get(root[o]);
        if (uses.spanning(root[o]) && uses.spanning(r) &&
            a.storage() == plan::Storage::Arena &&
            b.storage() == plan::Storage::Arena && a.offset() == b.offset() &&
            arenaSpan(a) == arenaSpan(b) && a.dtype() == b.dtype() &&
            !uses.readLaterInFragment(root[o], i))
          chain[find(r)] = find(root[o]);
      }
  }
  // A final fragment completes an accumulation: it reduces the last sum (a
  // mean, a data-parallel all-reduce) into the accumulator's bytes once it
  // has read the previous version there for the last time. The result is
  // the next version (spanning, or an output): a value written where a
  // spanning value of the same bytes and dtype was read earlier in the
  // fragment, and is not read again in it.
  using Bytes = std::tuple<uint64_t, uint64_t, int>;
  auto bytesOf = [&](const plan::Value &v) {
    return Bytes(v.offset(), arenaSpan(v), int(v.dtype()));
  };
  std::map<Bytes, uint32_t> readInFragment;
  int64_t fragmentEnd = 0;
  for (int64_t i = 0; !uses.fragmentEnd.empty() &&
                      i < int64_t(instructions.size());
       ++i) {
    if (i >= fragmentEnd) {
      readInFragment.clear();
      fragmentEnd = uses.fragmentEnd[i];
    }
    const plan::Instruction &inst = *instructions.Get(i);
    if (inst.results())
      for (uint32_t r : *inst.results()) {
        const plan::Value &a = *values.Get(r);
        if (a.storage() != plan::Storage::Arena)
          continue;
        auto it = readInFragment.find(bytesOf(a));
        if (it != readInFragment.end() &&
            !uses.readLaterInFragment(it->second, i - 1))
          chain[find(r)] = find(it->second);
      }
    if (inst.operands())
      for (uint32_t o : *inst.operands()) {
        const plan::Value &b = *values.Get(root[o]);
        if (uses.spanning(root[o]) && b.storage() == plan::Storage::Arena)
          readInFragment[bytesOf(b)] = root[o];
      }
  }
  // A final fragment ("B+reduce") runs its kind's last micro-batch in place
  // of the ordinary one ("B"): what both write at the same bytes (a stash
  // copy, a sum) is one slot.
  std::map<std::string, std::map<Bytes, uint32_t>> writtenBy; // fragment ->
  for (uint32_t k = 0; program.fragments() && k < program.fragments()->size();
       ++k) {
    const plan::Fragment &f = *program.fragments()->Get(k);
    std::string name = f.name()->str();
    std::string kind(fragmentKind(name));
    bool final = kind != name;
    // The ordinary fragment's slots span fragments; the final one's need
    // not (the program links it after the fragments that read the slot).
    std::map<Bytes, uint32_t> &written = writtenBy[name];
    for (uint32_t i = f.first(); i < f.first() + f.count(); ++i)
      if (const auto *results = instructions.Get(i)->results())
        for (uint32_t r : *results)
          if ((final || uses.spanning(r)) &&
              values.Get(r)->storage() == plan::Storage::Arena)
            written[bytesOf(*values.Get(r))] = r;
    if (!final)
      continue;
    auto ordinary = writtenBy.find(kind);
    if (ordinary == writtenBy.end())
      continue;
    for (auto &[bytes, r] : written)
      if (auto it = ordinary->second.find(bytes);
          it != ordinary->second.end())
        chain[find(r)] = find(it->second);
  }
  for (uint32_t id = 0; id < chain.size(); ++id)
    chain[id] = find(id);
  return chain;
}

Status ProgramValidator::checkPlacements() {
  const auto &values = *program.values();
  const auto &instructions = *program.instructions();
  size_t n = values.size();
  int64_t end = int64_t(instructions.size()); // after the last instruction
  std::vector<uint32_t> root(n);
  std::vector<int64_t> def(n, end + 1), lastUse(n, -1);
  for (uint32_t id = 0; id < n; ++id) {
    const plan::Value &v = *values.Get(id);
    root[id] = v.storage() == plan::Storage::Alias ? root[v.index()] : id;
  }
  for (int64_t i = 0; i < end; ++i) {
    const plan::Instruction &inst = *instructions.Get(i);
    if (inst.operands())
      for (uint32_t id : *inst.operands())
        lastUse[root[id]] = std::max(lastUse[root[id]], i);
    if (inst.results())
      for (uint32_t id : *inst.results()) {
        def[id] = std::min(def[id], i);
        lastUse[id] = std::max(lastUse[id], i);
      }
  }
  if (program.outputs())
    for (const plan::Binding *b : *program.outputs())
      lastUse[root[b->value()]] = end;
  FragmentUses uses = fragmentUses(root);
  std::vector<uint32_t> chain = accumulatorChains(root, uses);
  // Values by the instruction that defines them (-1: before the first), and
  // by the last that uses them.
  std::vector<std::vector<uint32_t>> starts(end + 2), ends(end + 2);
  for (uint32_t id = 0; id < n; ++id) {
    const plan::Value &v = *values.Get(id);
    if ((v.storage() != plan::Storage::Arena &&
         v.storage() != plan::Storage::Persistent) ||
        valueBytes(v) == 0)
      continue;
    if (def[id] > end)
      def[id] = -1;
    lastUse[id] = std::max(lastUse[id], def[id]);
    // One fragment leaves it for another: the schedule runs the repeated
    // fragments in its own order, so it is live over all of them.
    if (uses.spanning(id) && uses.repeatedLast >= 0) {
      def[id] = std::min(def[id], uses.repeatedFirst);
      lastUse[id] = std::max(lastUse[id], uses.repeatedLast);
    }
    starts[def[id] + 1].push_back(id);
    ends[lastUse[id] + 1].push_back(id);
  }
  // The live values' bytes, which never overlap: (place, begin) -> value.
  using Place = std::pair<uint64_t, uint64_t>;
  std::map<Place, uint32_t> live;
  auto placeOf = [&](uint32_t id) {
    const plan::Value &v = *values.Get(id);
    return v.storage() == plan::Storage::Arena
               ? Place(0, v.offset())
               : Place(uint64_t(v.index()) + 1, 0);
  };
  auto bytesOf = [&](uint32_t id) { return arenaSpan(*values.Get(id)); };
  auto describe = [&](uint32_t id) {
    Place p = placeOf(id);
    std::string where =
        p.first == 0 ? "arena" : "parameter " + std::to_string(p.first - 1);
    return "value " + std::to_string(id) + " (" + where + " bytes [" +
           std::to_string(p.second) + ", " +
           std::to_string(p.second + bytesOf(id)) + "), live from " +
           (def[id] < 0 ? std::string("the start")
                        : "instruction " + std::to_string(def[id])) +
           " to " +
           (lastUse[id] >= end ? std::string("the end")
            : lastUse[id] < 0  ? std::string("the start")
                               : "instruction " + std::to_string(lastUse[id])) +
           ")";
  };
  for (int64_t t = -1; t <= end; ++t) {
    for (uint32_t id : starts[t + 1]) {
      Place p = placeOf(id);
      auto next = live.lower_bound({p.first, p.second + bytesOf(id)});
      if (next != live.begin()) {
        auto prev = std::prev(next);
        uint32_t other = prev->second;
        if (prev->first.first == p.first &&
            prev->first.second + bytesOf(other) > p.second) {
          const plan::Instruction *inst =
              t >= 0 ? instructions.Get(t) : nullptr;
          bool readHere =
              inst && inst->operands() &&
              std::any_of(inst->operands()->begin(), inst->operands()->end(),
                          [&](uint32_t o) { return root[o] == other; });
          // An accumulator a fragment updates in place (`other` is left
          // for other fragments) may be read after it by other fragments:
          // it holds the update.
          bool lastRead =
              lastUse[other] == t ||
              (uses.spanning(other) && !uses.readLaterInFragment(other, t));
          bool inPlace = inst && readsBeforeWriting(*inst, values) &&
                         readHere &&
                         lastRead &&
                         prev->first == p && bytesOf(other) == bytesOf(id) &&
                         values.Get(other)->dtype() == values.Get(id)->dtype();
          if (!inPlace && chain[id] != chain[other])
            return fail(describe(id), " overlaps ", describe(other));
          live.erase(prev);
          // The update keeps the bytes as long as `other` would have.
          if (lastUse[other] > lastUse[id]) {
            lastUse[id] = lastUse[other];
            ends[lastUse[id] + 1].push_back(id);
          }
        }
      }
      live[p] = id;
    }
    for (uint32_t id : ends[t + 1]) {
      auto it = live.find(placeOf(id));
      if (it != live.end() && it->second == id && lastUse[id] <= t)
        live.erase(it);
    }
  }
  return Status::ok();
}

/// One transfer as a program issues it.
struct Transfer {
  size_t instruction;
  int64_t channel;
  uint32_t microBatch; // what identifies it with the channel
  plan::DType dtype;
  std::vector<int64_t> shape;
  std::string loc;
  std::string step; // the fragment step's name; empty for a -1 step
};

std::string describe(const Transfer &t) {
  std::string text = "instruction " + std::to_string(t.instruction);
  if (!t.loc.empty())
    text += " (" + t.loc + ")";
  if (!t.step.empty())
    text += " of step " + t.step + " (micro-batch " +
            std::to_string(t.microBatch) + ")";
  text += ", channel " + std::to_string(t.channel) + ", " +
          plan::EnumNameDType(t.dtype) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(t.shape[i]);
  return text + "]";
}

std::string programName(const plan::Plan &whole, size_t p) {
  return "program " + std::to_string(p) + " (" +
         whole.programs()->Get(p)->name()->str() + ")";
}

/// The instructions [first, end) of `program` that schedule step `step`
/// runs: its fragment's, or all of them.
std::pair<uint32_t, uint32_t> stepRange(const plan::Program &program,
                                        const plan::ScheduleStep &step) {
  if (step.fragment() < 0)
    return {0, program.instructions()->size()};
  const plan::Fragment &f = *program.fragments()->Get(step.fragment());
  return {f.first(), f.first() + f.count()};
}

/// Every program's sends to another program on a channel must be that
/// program's receives from it on the channel, one for one and in the same
/// order, with the same micro-batch, type and shape: the runtime gives each
/// (direction, channel) a communicator of its own and matches its transfers
/// in the order they are issued (NCCL has no tags), so a transfer out of
/// order, missing or of another size would hang or deliver the wrong
/// tensor. (Channels apart, a schedule table may take one channel's
/// transfers in another order than the sender sends another's: a V
/// schedule's activations and gradients share a direction.) A program issues its transfers step by step as the schedule runs
/// it (each step's fragment, or the whole program). (That the order cannot
/// deadlock is the compiler's proof; this is what a plan file alone shows.)
Status checkTransfers(const plan::Plan &whole) {
  uint64_t tagMicroBatches = transferTagMicroBatches(whole);
  // (from, to, channel) -> transfers in issue order
  using Key = std::tuple<size_t, size_t, int64_t>;
  std::map<Key, std::vector<Transfer>> sent, received;
  for (const plan::ScheduleStep *step : *whole.schedule()) {
    size_t p = step->program();
    const plan::Program &program = *whole.programs()->Get(p);
    auto [first, end] = stepRange(program, *step);
    std::string stepName;
    if (step->fragment() >= 0)
      stepName = fragmentStepName(
          program.fragments()->Get(step->fragment())->name()->str(),
          step->micro_batch());
    for (uint32_t i = first; i < end; ++i) {
      const plan::Instruction &inst = *program.instructions()->Get(i);
      bool isSend = inst.inst_type() == plan::Inst::SendInst;
      if (!isSend && inst.inst_type() != plan::Inst::RecvInst)
        continue;
      const auto *ids = isSend ? inst.operands() : inst.results();
      const plan::Value &v = *program.values()->Get(ids->Get(0));
      Transfer t{i,
                 isSend ? inst.inst_as_SendInst()->channel()
                        : inst.inst_as_RecvInst()->channel(),
                 transferMicroBatch(*step),
                 v.dtype(),
                 {v.shape()->begin(), v.shape()->end()},
                 inst.loc() ? inst.loc()->str() : "",
                 stepName};
      // channel * tagMicroBatches + microBatch <= kMaxTransferTag
      if (t.channel > (kMaxTransferTag - int64_t(t.microBatch)) /
                          int64_t(tagMicroBatches))
        return PARTITION_ERROR(
            InvalidArgument, programName(whole, p), ": ", describe(t),
            ": its tag, channel * ", tagMicroBatches,
            " (1 + the schedule's last micro-batch) + ", t.microBatch,
            ", is beyond ", kMaxTransferTag);
      if (isSend)
        sent[{p, inst.inst_as_SendInst()->peer_program(), t.channel}]
            .push_back(t);
      else
        received[{inst.inst_as_RecvInst()->peer_program(), p, t.channel}]
            .push_back(t);
    }
  }
  std::set<Key> directions;
  for (const auto &entry : sent)
    directions.insert(entry.first);
  for (const auto &entry : received)
    directions.insert(entry.first);
  for (const auto &direction : directions) {
    const std::vector<Transfer> &s = sent[direction];
    const std::vector<Transfer> &r = received[direction];
    auto [from, to, channel] = direction;
    std::string between = programName(whole, from) + " to " +
                          programName(whole, to) + " on channel " +
                          std::to_string(channel);
    for (size_t k = 0; k < std::min(s.size(), r.size()); ++k)
      if (s[k].microBatch != r[k].microBatch || s[k].dtype != r[k].dtype ||
          s[k].shape != r[k].shape)
        return PARTITION_ERROR(
            InvalidArgument, "transfers from ", between, ": send ", k + 1,
            " is ", describe(s[k]), " but receive ", k + 1, " is ",
            describe(r[k]),
            "; a channel's transfers are matched in the order issued");
    if (s.size() != r.size()) {
      bool moreSends = s.size() > r.size();
      const Transfer &extra = moreSends ? s[r.size()] : r[s.size()];
      return PARTITION_ERROR(InvalidArgument, "transfers from ", between, ": ",
                             s.size(), " sends but ", r.size(),
                             " receives; the first unmatched ",
                             moreSends ? "send" : "receive", " is ",
                             describe(extra));
    }
  }
  return Status::ok();
}

/// The schedule's steps: each names a program, and a fragment of it (or
/// -1 for a program without fragments); a micro-batch below every
/// micro-batched input's count; the prologue and update at most once, first
/// and last among their program's steps.
Status checkSchedule(const plan::Plan &whole) {
  size_t numPrograms = whole.programs()->size();
  const auto &schedule = *whole.schedule();
  // program -> (steps so far, the step index of its P or U step, or -1)
  std::vector<int64_t> stepsOf(numPrograms, 0), lastStep(numPrograms, -1),
      updateStep(numPrograms, -1);
  for (size_t s = 0; s < schedule.size(); ++s) {
    const plan::ScheduleStep &step = *schedule.Get(s);
    if (step.program() >= numPrograms)
      return PARTITION_ERROR(InvalidArgument, "schedule step names program ",
                             step.program(), " of ", numPrograms);
    const plan::Program &program = *whole.programs()->Get(step.program());
    std::string at = "schedule step " + std::to_string(s) + " (" +
                     programName(whole, step.program()) + ")";
    size_t fragments = program.fragments() ? program.fragments()->size() : 0;
    if (fragments && step.fragment() == -1)
      return PARTITION_ERROR(InvalidArgument, at,
                             ": runs the whole program, which has ", fragments,
                             " fragments; its steps must name one");
    if (step.fragment() < -1 || (step.fragment() >= 0 &&
                                 size_t(step.fragment()) >= fragments))
      return PARTITION_ERROR(InvalidArgument, at, ": names fragment ",
                             step.fragment(), " of ", fragments);
    if (program.inputs())
      for (const plan::Binding *b : *program.inputs())
        if (b->micro_batches() && step.micro_batch() >= b->micro_batches())
          return PARTITION_ERROR(InvalidArgument, at, ": micro-batch ",
                                 step.micro_batch(), " of input \"",
                                 b->name()->str(), "\", which has ",
                                 b->micro_batches(), " micro-batches");
    size_t p = step.program();
    std::string name =
        fragments ? program.fragments()->Get(step.fragment())->name()->str()
                  : "";
    if (updateStep[p] >= 0)
      return PARTITION_ERROR(InvalidArgument, at, ": comes after the update ",
                             "U (schedule step ", updateStep[p],
                             "), which must be its program's last step");
    if (name == "P" && stepsOf[p] > 0)
      return PARTITION_ERROR(InvalidArgument, at, ": the prologue P must be ",
                             "its program's first step and run once (schedule "
                             "step ", lastStep[p], " runs the program before "
                             "it)");
    if (name == "U")
      updateStep[p] = int64_t(s);
    ++stepsOf[p];
    lastStep[p] = int64_t(s);
  }
  return Status::ok();
}

} // namespace

Status partition::runtime::validatePlan(const plan::Plan &whole) {
  if (whole.format_version() != kFormatVersion)
    return PARTITION_ERROR(
        InvalidArgument, "plan format version ", whole.format_version(),
        " is not supported; this runtime reads version ", kFormatVersion);
  if (whole.model_flops() &&
      !(std::isfinite(*whole.model_flops()) && *whole.model_flops() >= 0))
    return PARTITION_ERROR(InvalidArgument, "model FLOPs per step ",
                           *whole.model_flops(),
                           " are not a finite number of at least 0");
  std::set<int32_t> worldRanks;
  for (size_t m = 0; m < whole.meshes()->size(); ++m) {
    const plan::Mesh &mesh = *whole.meshes()->Get(m);
    std::string where = "mesh @" + mesh.name()->str();
    if (!aligned(mesh.axis_sizes()))
      return PARTITION_ERROR(InvalidArgument, where,
                             ": axis sizes are not 8-byte aligned");
    if (mesh.axis_names()->size() != mesh.axis_sizes()->size())
      return PARTITION_ERROR(InvalidArgument, where, ": ",
                             mesh.axis_names()->size(), " axis names but ",
                             mesh.axis_sizes()->size(), " sizes");
    int64_t devices = 1;
    for (int64_t size : *mesh.axis_sizes()) {
      if (size < 1 || size > kMaxRanks)
        return PARTITION_ERROR(InvalidArgument, where, ": axis size ", size);
      devices *= size;
      if (devices > kMaxRanks)
        return PARTITION_ERROR(InvalidArgument, where, ": more than ",
                               kMaxRanks, " devices");
    }
    if (int64_t(mesh.ranks()->size()) != devices)
      return PARTITION_ERROR(InvalidArgument, where, ": ", devices,
                             " devices but ", mesh.ranks()->size(), " ranks");
    std::set<int32_t> ranks;
    for (int32_t r : *mesh.ranks()) {
      if (r < 0 || r >= kMaxRanks || !ranks.insert(r).second)
        return PARTITION_ERROR(InvalidArgument, where, ": rank ", r,
                               " is out of range or repeated");
      worldRanks.insert(r);
    }
  }
  if (whole.programs()->size() == 0)
    return PARTITION_ERROR(InvalidArgument, "the plan has no program");
  for (size_t p = 0; p < whole.programs()->size(); ++p) {
    const plan::Program &program = *whole.programs()->Get(p);
    PARTITION_RETURN_IF_ERROR(ProgramValidator(whole, program,
                                               "program " + std::to_string(p) +
                                                   " (" +
                                                   program.name()->str() + ")")
                                  .run());
  }
  PARTITION_RETURN_IF_ERROR(checkSchedule(whole));
  return checkTransfers(whole);
}

StatusOr<LoadedPlan> LoadedPlan::fromBytes(std::vector<uint8_t> bytes,
                                           std::string source) {
  // The buffer is size-prefixed, so a file cut anywhere (even in trailing
  // padding) is caught before the verifier runs.
  if (bytes.size() < 12 ||
      !fb::BufferHasIdentifier(bytes.data(), plan::PlanIdentifier(),
                               /*size_prefixed=*/true))
    return PARTITION_ERROR(InvalidArgument, source,
                           ": not a partition plan (missing the PPLN "
                           "identifier; ",
                           bytes.size(), " bytes)");
  uint64_t declared =
      uint64_t(fb::GetPrefixedSize(bytes.data())) + sizeof(fb::uoffset_t);
  if (declared == bytes.size())
    return PARTITION_ERROR(InvalidArgument, source,
                           ": the plan has no checksum (a plan of format "
                           "version 4 or older); translate it again");
  if (declared + kPlanChecksumBytes != bytes.size())
    return PARTITION_ERROR(InvalidArgument, source, ": the plan declares ",
                           declared, " bytes and a checksum of ",
                           kPlanChecksumBytes, " but the file has ",
                           bytes.size(), " (truncated or padded)");
  // The checksum covers every byte before it: a changed byte anywhere is
  // caught here, before it could pass the checks below as another valid plan.
  uint64_t stored = 0;
  for (size_t i = 0; i < kPlanChecksumBytes; ++i)
    stored |= uint64_t(bytes[declared + i]) << (8 * i);
  uint64_t actual = fnv1a64(bytes.data(), declared);
  if (stored != actual)
    return PARTITION_ERROR(
        InvalidArgument, source, ": the plan's checksum does not match its ",
        declared, " bytes (stored ", formatHex(stored), ", computed ",
        formatHex(actual), "); the file is corrupted");
  bytes.resize(declared);
  fb::Verifier verifier(bytes.data(), bytes.size(),
                        /*max_depth=*/64, /*max_tables=*/10000000);
  if (!plan::VerifySizePrefixedPlanBuffer(verifier))
    return PARTITION_ERROR(InvalidArgument, source,
                           ": the plan is malformed (FlatBuffers "
                           "verification failed)");
  const plan::Plan *root = plan::GetSizePrefixedPlan(bytes.data());
  Status valid = validatePlan(*root);
  if (!valid.isOk())
    return valid.withContext(source);
  LoadedPlan result;
  int maxRank = -1;
  for (const plan::Mesh *mesh : *root->meshes())
    for (int32_t r : *mesh->ranks())
      maxRank = std::max(maxRank, r);
  result.worldSize_ = maxRank + 1;
  result.bytes_ =
      std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  result.source_ = std::make_shared<const std::string>(std::move(source));
  result.root_ = plan::GetSizePrefixedPlan(result.bytes_->data());
  return result;
}

StatusOr<LoadedPlan> LoadedPlan::fromFile(const std::string &path) {
  // A plan's size prefix is 32 bits: no plan is larger than 4 GiB (+ the
  // prefix and the checksum).
  PARTITION_ASSIGN_OR_RETURN(
      std::vector<uint8_t> bytes,
      readRegularFile(path, "plan file", (uint64_t(1) << 32) + 64));
  return fromBytes(std::move(bytes), path);
}

//===----------------------------------------------------------------------===//
// dump
//===----------------------------------------------------------------------===//

namespace {

/// FLOPs as the whole number they are ("5308416").
std::string formatFlops(double flops) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.0f", flops);
  return text;
}

std::string typeText(const plan::Value &v) {
  std::string s = dtypeName(toDType(v.dtype()));
  s += formatShape(toVector(v.shape()));
  return s;
}

std::string shardingText(const plan::Mesh &mesh, const plan::Sharding &s) {
  auto axisName = [&](uint32_t axis) {
    return "\"" + mesh.axis_names()->Get(axis)->str() + "\"";
  };
  std::string text = "[";
  for (size_t d = 0; d < s.dims()->size(); ++d) {
    text += d ? ", {" : "{";
    const auto &axes = *s.dims()->Get(d)->axes();
    for (size_t i = 0; i < axes.size(); ++i)
      text += (i ? ", " : "") + axisName(axes.Get(i));
    text += "}";
  }
  text += "]";
  if (s.unreduced() && s.unreduced()->size()) {
    text += ", unreduced={";
    for (size_t i = 0; i < s.unreduced()->size(); ++i)
      text += (i ? ", " : "") + axisName(s.unreduced()->Get(i));
    text += "}";
  }
  return text;
}

std::string storageText(const plan::Value &v) {
  switch (v.storage()) {
  case plan::Storage::Arena:
    return "arena+" + std::to_string(v.offset()) +
           (v.slots() > 1 ? " x" + std::to_string(v.slots()) + " slots"
                          : std::string());
  case plan::Storage::Persistent:
    return "param " + std::to_string(v.index());
  case plan::Storage::Input:
    return "input " + std::to_string(v.index());
  case plan::Storage::Alias:
    return "alias %" + std::to_string(v.index());
  }
  return "?";
}

/// What an instruction does, before its operands: "Matmul {...}",
/// "AllReduce Sum over {"tp"} (group of 2)", "Send to program 1 channel 0".
std::string instructionText(const plan::Mesh &mesh,
                            const plan::Instruction &inst) {
  std::ostringstream os;
  switch (inst.inst_type()) {
  case plan::Inst::KernelInst: {
    const plan::KernelInst &k = *inst.inst_as_KernelInst();
    os << opKindName(k.op());
    std::string attrs = formatKernelAttrs(unpackKernelAttrs(k));
    if (!attrs.empty())
      os << " " << attrs;
    break;
  }
  case plan::Inst::CollectiveInst: {
    const plan::CollectiveInst &c = *inst.inst_as_CollectiveInst();
    os << plan::EnumNameCollectiveKind(c.kind());
    if (c.kind() == plan::CollectiveKind::AllReduce ||
        c.kind() == plan::CollectiveKind::ReduceScatter)
      os << " " << plan::EnumNameReduceOp(c.reduce());
    os << " over {";
    for (size_t a = 0; a < c.axes()->size(); ++a)
      os << (a ? ", " : "") << '"'
         << mesh.axis_names()->Get(c.axes()->Get(a))->str() << '"';
    os << "} (group of " << groupSize(*mesh.axis_sizes(), *c.axes()) << ")";
    if (auto *a = c.attrs_as_CollectiveDimAttrs())
      os << " {dim=" << a->dim() << "}";
    else if (auto *a = c.attrs_as_AllToAllAttrs())
      os << " {split_dim=" << a->split_dim()
         << ", concat_dim=" << a->concat_dim() << "}";
    else if (auto *a = c.attrs_as_PermuteAttrs()) {
      os << " {pairs=[";
      if (a->pairs())
        for (size_t i = 0; i < a->pairs()->size(); ++i)
          os << (i ? ", [" : "[") << a->pairs()->Get(i)->source() << ", "
             << a->pairs()->Get(i)->target() << "]";
      os << "]}";
    }
    break;
  }
  case plan::Inst::SendInst:
    os << "Send to program " << inst.inst_as_SendInst()->peer_program()
       << " channel " << inst.inst_as_SendInst()->channel();
    break;
  case plan::Inst::RecvInst:
    os << "Recv from program " << inst.inst_as_RecvInst()->peer_program()
       << " channel " << inst.inst_as_RecvInst()->channel();
    break;
  default:
    os << "?";
  }
  return os.str();
}

/// A fragment's heading in a listing: "fragment 1 F: instructions [2, 5)".
std::string fragmentText(size_t index, const plan::Fragment &f) {
  return "fragment " + std::to_string(index) + " " + f.name()->str() +
         ": instructions [" + std::to_string(f.first()) + ", " +
         std::to_string(uint64_t(f.first()) + f.count()) + ")\n";
}

} // namespace

std::string LoadedPlan::dump() const {
  const plan::Plan &p = root();
  std::ostringstream os;
  os << "plan format " << p.format_version() << ", produced by "
     << (p.producer() ? p.producer()->str() : "?") << ", world of "
     << worldSize() << " ranks\n";
  if (p.model_flops())
    os << "model FLOPs per step " << formatFlops(*p.model_flops())
       << " (of the global program)\n";
  else
    os << "model FLOPs per step " << formatFlops(countStepFlops(p).total())
       << " (counted from the per-device programs)\n";
  for (const plan::Mesh *mesh : *p.meshes()) {
    os << "mesh @" << mesh->name()->str() << " [";
    for (size_t i = 0; i < mesh->axis_names()->size(); ++i)
      os << (i ? ", " : "") << '"' << mesh->axis_names()->Get(i)->str()
         << "\"=" << mesh->axis_sizes()->Get(i);
    os << "] ranks "
       << formatShape(std::vector<int64_t>(mesh->ranks()->begin(),
                                           mesh->ranks()->end()))
       << "\n";
  }
  for (size_t pi = 0; pi < p.programs()->size(); ++pi) {
    const plan::Program &prog = *p.programs()->Get(pi);
    const plan::Mesh &mesh = *p.meshes()->Get(prog.mesh());
    // Persistent bytes by buffer: a new value computed in place shares its
    // parameter's buffer.
    int64_t persistent = 0, inputs = 0;
    std::set<uint32_t> buffers;
    for (const plan::Value *v : *prog.values()) {
      if (v->storage() == plan::Storage::Persistent &&
          buffers.insert(v->index()).second)
        persistent += valueBytes(*v);
    }
    // A micro-batched input's buffer holds every micro-batch.
    if (prog.inputs())
      for (const plan::Binding *b : *prog.inputs())
        inputs += valueBytes(*prog.values()->Get(b->value())) *
                  std::max<int64_t>(b->micro_batches(), 1);
    os << "\nprogram " << pi << " @" << prog.name()->str() << " on @"
       << mesh.name()->str() << ": " << prog.values()->size() << " values, "
       << prog.instructions()->size() << " instructions\n"
       << "  memory per device: arena " << prog.arena_bytes()
       << " bytes, parameters and constants " << persistent << " bytes, inputs "
       << inputs << " bytes, peak " << prog.arena_bytes() + persistent + inputs
       << " bytes\n";
    auto bindings = [&](const char *kind,
                        const fb::Vector<fb::Offset<plan::Binding>> *list) {
      if (!list)
        return;
      for (const plan::Binding *b : *list) {
        const plan::Value &v = *prog.values()->Get(b->value());
        os << "  " << kind << " \"" << b->name()->str() << "\" %" << b->value()
           << " : " << typeText(v) << " of global "
           << formatShape(toVector(b->global_shape())) << " sharded "
           << shardingText(mesh, *b->sharding());
        if (b->stored_shape())
          os << " stored as " << formatShape(toVector(b->stored_shape()));
        if (b->stored_permutation())
          os << " permuted "
             << formatShape(toVector(b->stored_permutation()));
        if (b->micro_batches())
          os << " in " << b->micro_batches() << " micro-batches";
        if (b->updates() >= 0 && prog.params() &&
            size_t(b->updates()) < prog.params()->size()) {
          os << " updates \"" << prog.params()->Get(b->updates())->name()->str()
             << "\"";
          if (v.storage() == plan::Storage::Persistent &&
              v.index() == uint32_t(b->updates()))
            os << " in place";
        }
        os << "\n";
      }
    };
    bindings("param", prog.params());
    bindings("input", prog.inputs());
    size_t nextFragment = 0;
    for (size_t i = 0; i < prog.instructions()->size(); ++i) {
      const plan::Instruction &inst = *prog.instructions()->Get(i);
      // Each fragment's heading before its first instruction (an empty one
      // has its heading alone).
      for (; prog.fragments() && nextFragment < prog.fragments()->size() &&
             prog.fragments()->Get(nextFragment)->first() <= i;
           ++nextFragment)
        os << " "
           << fragmentText(nextFragment, *prog.fragments()->Get(nextFragment));
      os << "  ";
      if (inst.results())
        for (size_t r = 0; r < inst.results()->size(); ++r)
          os << (r ? ", %" : "%") << inst.results()->Get(r);
      if (inst.results() && inst.results()->size())
        os << " = ";
      os << instructionText(mesh, inst);
      os << "(";
      if (inst.operands())
        for (size_t o = 0; o < inst.operands()->size(); ++o)
          os << (o ? ", %" : "%") << inst.operands()->Get(o);
      os << ")";
      // Each result's type and place (a Fused kernel has several).
      if (inst.results())
        for (size_t r = 0; r < inst.results()->size(); ++r) {
          const plan::Value &v = *prog.values()->Get(inst.results()->Get(r));
          os << (r ? ", " : " : ") << typeText(v) << " @" << storageText(v);
        }
      os << "\n";
    }
    for (; prog.fragments() && nextFragment < prog.fragments()->size();
         ++nextFragment)
      os << " "
         << fragmentText(nextFragment, *prog.fragments()->Get(nextFragment));
    for (size_t id = 0; id < prog.values()->size(); ++id) {
      const plan::Value &v = *prog.values()->Get(id);
      if (v.storage() == plan::Storage::Alias)
        os << "  %" << id << " = alias of %" << v.index() << " : "
           << typeText(v) << "\n";
    }
    bindings("output", prog.outputs());
  }
  os << "\nschedule:";
  for (const plan::ScheduleStep *step : *p.schedule()) {
    const plan::Program &prog = *p.programs()->Get(step->program());
    os << " (program " << step->program();
    if (step->fragment() >= 0)
      os << ", " << fragmentStepName(
                        prog.fragments()->Get(step->fragment())->name()->str(),
                        step->micro_batch());
    os << ", micro-batch " << step->micro_batch() << ")";
  }
  os << "\n";
  return os.str();
}
