//===- KernelShapes.cpp - operand and result checks per opcode ------------===//
//
// The runtime's counterpart of the part dialect's verifiers: a plan read from
// disk is checked with these rules before anything runs, so kernels can rely
// on consistent shapes.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Kernels.h"

#include <algorithm>
#include <set>
#include <sstream>

using namespace partition::runtime;
namespace plan = partition::plan;

const char *partition::runtime::opKindName(OpKind op) {
  const char *name = plan::EnumNameOpKind(op);
  return name && *name ? name : "unknown-op";
}

plan::KernelAttrs partition::runtime::kernelAttrsKind(OpKind op) {
  using A = plan::KernelAttrs;
  switch (op) {
  case OpKind::Gelu:
    return A::GeluAttrs;
  case OpKind::Matmul:
  case OpKind::BatchMatmul:
    return A::MatmulAttrs;
  case OpKind::Softmax:
    return A::SoftmaxAttrs;
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
    return A::NormAttrs;
  case OpKind::Attention:
  case OpKind::AttentionGrad:
    return A::AttentionAttrs;
  case OpKind::SoftmaxCrossEntropy:
    return A::CrossEntropyAttrs;
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax:
    return A::ReduceAttrs;
  case OpKind::Transpose:
    return A::TransposeAttrs;
  case OpKind::Slice:
  case OpKind::Pad:
    return A::SliceAttrs;
  case OpKind::Concat:
  case OpKind::Gather:
  case OpKind::ScatterAdd:
    return A::AxisAttrs;
  case OpKind::Fill:
    return A::FillAttrs;
  case OpKind::Compare:
    return A::CompareAttrs;
  case OpKind::Fused:
    return A::FusedAttrs;
  default:
    return A::NONE;
  }
}

//===----------------------------------------------------------------------===//
// Building and printing attributes
//===----------------------------------------------------------------------===//

namespace {
template <typename T>
KernelAttrs wrap(T table) {
  KernelAttrs attrs;
  attrs.Set(std::move(table));
  return attrs;
}
} // namespace

KernelAttrs
partition::runtime::geluAttrs(plan::GeluApproximation approximation) {
  plan::GeluAttrsT t;
  t.approximation = approximation;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::matmulAttrs(bool transposeA, bool transposeB) {
  plan::MatmulAttrsT t;
  t.transpose_a = transposeA;
  t.transpose_b = transposeB;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::softmaxAttrs(int64_t dim) {
  plan::SoftmaxAttrsT t;
  t.dim = dim;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::normAttrs(float epsilon, bool hasBias) {
  plan::NormAttrsT t;
  t.epsilon = epsilon;
  t.has_bias = hasBias;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::attentionAttrs(bool causal, float scale,
                                               int64_t window) {
  plan::AttentionAttrsT t;
  t.causal = causal;
  t.scale = scale;
  t.window = window;
  return wrap(std::move(t));
}

KernelAttrs
partition::runtime::crossEntropyAttrs(plan::LossReduction reduction) {
  plan::CrossEntropyAttrsT t;
  t.reduction = reduction;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::reduceAttrs(std::vector<int64_t> dims) {
  plan::ReduceAttrsT t;
  t.dims = std::move(dims);
  return wrap(std::move(t));
}

KernelAttrs
partition::runtime::transposeAttrs(std::vector<int64_t> permutation) {
  plan::TransposeAttrsT t;
  t.permutation = std::move(permutation);
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::sliceAttrs(std::vector<int64_t> offsets,
                                           std::vector<int64_t> strides) {
  plan::SliceAttrsT t;
  t.offsets = std::move(offsets);
  t.strides = std::move(strides);
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::axisAttrs(int64_t axis) {
  plan::AxisAttrsT t;
  t.axis = axis;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::fillAttrs(float value) {
  plan::FillAttrsT t;
  t.value = value;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::compareAttrs(plan::CompareDirection direction) {
  plan::CompareAttrsT t;
  t.direction = direction;
  return wrap(std::move(t));
}

KernelAttrs partition::runtime::fusedAttrs(std::vector<plan::FusedStep> steps,
                                          std::vector<uint16_t> outputs) {
  plan::FusedAttrsT t;
  t.steps = std::move(steps);
  t.outputs = std::move(outputs);
  return wrap(std::move(t));
}

bool partition::runtime::isFusedStepOp(OpKind op) {
  if (isBinaryFusedStep(op))
    return true;
  switch (op) {
  case OpKind::Neg:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Cos:
  case OpKind::Sin:
  case OpKind::Sigmoid:
  case OpKind::Relu:
  case OpKind::Silu:
  case OpKind::Gelu:
  case OpKind::Cast:
    return true;
  default:
    return false;
  }
}

bool partition::runtime::isBinaryFusedStep(OpKind op) {
  switch (op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Pow:
    return true;
  default:
    return false;
  }
}

const char *partition::runtime::kernelAttrsName(plan::KernelAttrs kind) {
  if (kind == plan::KernelAttrs::NONE)
    return "none";
  const char *name = plan::EnumNameKernelAttrs(kind);
  return name && *name ? name : "unknown";
}

std::string partition::runtime::formatKernelAttrs(const KernelAttrs &attrs) {
  std::ostringstream os;
  auto flag = [](bool b) { return b ? "true" : "false"; };
  auto enumName = [](const char *name, int value) {
    return name && *name ? std::string(name) : std::to_string(value);
  };
  switch (attrs.type) {
  case plan::KernelAttrs::NONE:
    return "";
  case plan::KernelAttrs::GeluAttrs: {
    auto a = attrs.AsGeluAttrs()->approximation;
    os << "approximation="
       << enumName(plan::EnumNameGeluApproximation(a), int(a));
    break;
  }
  case plan::KernelAttrs::MatmulAttrs:
    os << "transpose_a=" << flag(attrs.AsMatmulAttrs()->transpose_a)
       << ", transpose_b=" << flag(attrs.AsMatmulAttrs()->transpose_b);
    break;
  case plan::KernelAttrs::SoftmaxAttrs:
    os << "dim=" << attrs.AsSoftmaxAttrs()->dim;
    break;
  case plan::KernelAttrs::NormAttrs:
    os << "epsilon=" << attrs.AsNormAttrs()->epsilon
       << ", has_bias=" << flag(attrs.AsNormAttrs()->has_bias);
    break;
  case plan::KernelAttrs::AttentionAttrs:
    os << "causal=" << flag(attrs.AsAttentionAttrs()->causal)
       << ", scale=" << attrs.AsAttentionAttrs()->scale;
    if (attrs.AsAttentionAttrs()->window != 0)
      os << ", window=" << attrs.AsAttentionAttrs()->window;
    break;
  case plan::KernelAttrs::CrossEntropyAttrs: {
    auto r = attrs.AsCrossEntropyAttrs()->reduction;
    os << "reduction=" << enumName(plan::EnumNameLossReduction(r), int(r));
    break;
  }
  case plan::KernelAttrs::ReduceAttrs:
    os << "dims=" << formatShape(attrs.AsReduceAttrs()->dims);
    break;
  case plan::KernelAttrs::TransposeAttrs:
    os << "permutation=" << formatShape(attrs.AsTransposeAttrs()->permutation);
    break;
  case plan::KernelAttrs::SliceAttrs:
    os << "offsets=" << formatShape(attrs.AsSliceAttrs()->offsets)
       << ", strides=" << formatShape(attrs.AsSliceAttrs()->strides);
    break;
  case plan::KernelAttrs::AxisAttrs:
    os << "axis=" << attrs.AsAxisAttrs()->axis;
    break;
  case plan::KernelAttrs::FillAttrs:
    os << "value=" << attrs.AsFillAttrs()->value;
    break;
  case plan::KernelAttrs::CompareAttrs: {
    auto d = attrs.AsCompareAttrs()->direction;
    os << "direction=" << enumName(plan::EnumNameCompareDirection(d), int(d));
    break;
  }
  case plan::KernelAttrs::FusedAttrs: {
    // "steps=[Mul($0, $1), Cast($2) BF16], outputs=[$3]": $i is slot i,
    // the operands first, then one slot per step.
    const plan::FusedAttrsT &f = *attrs.AsFusedAttrs();
    os << "steps=[";
    for (size_t k = 0; k < f.steps.size(); ++k) {
      const plan::FusedStep &s = f.steps[k];
      os << (k ? ", " : "") << opKindName(s.op()) << "($" << s.a();
      if (isBinaryFusedStep(s.op()))
        os << ", $" << s.b();
      os << ")";
      if (s.op() == OpKind::Gelu)
        os << " " << enumName(plan::EnumNameGeluApproximation(s.gelu()),
                              int(s.gelu()));
      if (s.round() != plan::DType::F32)
        os << " " << enumName(plan::EnumNameDType(s.round()), int(s.round()));
    }
    os << "], outputs=[";
    for (size_t k = 0; k < f.outputs.size(); ++k)
      os << (k ? ", $" : "$") << f.outputs[k];
    os << "]";
    break;
  }
  default:
    os << "unknown attributes " << int(attrs.type);
  }
  return "{" + os.str() + "}";
}

namespace {

using Shape = std::vector<int64_t>;

/// Collects the checks of one kernel and formats its errors.
class Checker {
public:
  Checker(OpKind op, const KernelAttrs &attrs,
          const std::vector<TensorRef> &inputs,
          const std::vector<TensorRef> &outputs)
      : op(op), attrs(attrs), in(inputs), out(outputs) {}

  template <typename... Args>
  Status fail(Args &&...args) const {
    return PARTITION_ERROR(InvalidArgument, opKindName(op), ": ",
                           std::forward<Args>(args)...);
  }

  Status arity(size_t inputs, size_t outputs) const {
    if (in.size() != inputs || out.size() != outputs)
      return fail("takes ", inputs, " operands and ", outputs, " results, got ",
                  in.size(), " and ", out.size());
    return Status::ok();
  }
  /// The attribute table `op` takes is the one given.
  Status attrsKind() const {
    plan::KernelAttrs expected = kernelAttrsKind(op);
    if (attrs.type == expected)
      return Status::ok();
    if (expected == plan::KernelAttrs::NONE)
      return fail("takes no attributes, got ", kernelAttrsName(attrs.type));
    return fail("takes ", kernelAttrsName(expected), ", got ",
                kernelAttrsName(attrs.type));
  }
  Status sameDType(const TensorRef &a, const char *aName, const TensorRef &b,
                   const char *bName) const {
    if (a.dtype != b.dtype)
      return fail(aName, " has dtype ", dtypeName(a.dtype), " but ", bName,
                  " has ", dtypeName(b.dtype));
    return Status::ok();
  }
  Status floatDType(const TensorRef &a, const char *name) const {
    if (!isFloat(a.dtype))
      return fail(name, " must be f32, f16 or bf16, got ", dtypeName(a.dtype));
    return Status::ok();
  }
  Status resultShape(const Shape &expected) const {
    if (out[0].shape != expected)
      return fail("result shape ", formatShape(out[0].shape), " must be ",
                  formatShape(expected));
    return Status::ok();
  }
  Status dim(int64_t d, int64_t rank, const char *what) const {
    if (d < 0 || d >= rank)
      return fail(what, " ", d, " is out of range for rank ", rank);
    return Status::ok();
  }

  OpKind op;
  const KernelAttrs &attrs;
  const std::vector<TensorRef> &in;
  const std::vector<TensorRef> &out;
};

/// numpy broadcast of two shapes, or an empty optional-like failure.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &result) {
  size_t rank = std::max(a.size(), b.size());
  result.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return false;
    result[i] = x == 1 ? y : x;
  }
  return true;
}

Status checkMatmul(const Checker &c, bool batched) {
  PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
  const TensorRef &lhs = c.in[0], &rhs = c.in[1];
  PARTITION_RETURN_IF_ERROR(c.floatDType(lhs, "lhs"));
  PARTITION_RETURN_IF_ERROR(c.sameDType(lhs, "lhs", rhs, "rhs"));
  PARTITION_RETURN_IF_ERROR(c.sameDType(lhs, "lhs", c.out[0], "the result"));
  bool ta = c.attrs.AsMatmulAttrs()->transpose_a;
  bool tb = c.attrs.AsMatmulAttrs()->transpose_b;
  int64_t lr = lhs.rank(), rr = rhs.rank();
  if (batched) {
    if (lr < 3 || lr != rr)
      return c.fail("operands must have one rank of at least 3, got ",
                    formatShape(lhs.shape), " and ", formatShape(rhs.shape));
    if (!std::equal(lhs.shape.begin(), lhs.shape.end() - 2, rhs.shape.begin()))
      return c.fail("batch dimensions differ: ", formatShape(lhs.shape),
                    " and ", formatShape(rhs.shape));
  } else if (lr < 2 || rr != 2) {
    return c.fail("needs lhs of rank >= 2 and rhs of rank 2, got ",
                  formatShape(lhs.shape), " and ", formatShape(rhs.shape));
  }
  int64_t m = lhs.shape[ta ? lr - 1 : lr - 2];
  int64_t k = lhs.shape[ta ? lr - 2 : lr - 1];
  int64_t rk = rhs.shape[tb ? rr - 1 : rr - 2];
  int64_t n = rhs.shape[tb ? rr - 2 : rr - 1];
  if (k != rk)
    return c.fail("contracting sizes differ: ", k, " and ", rk);
  Shape result(lhs.shape.begin(), lhs.shape.end() - 2);
  result.push_back(m);
  result.push_back(n);
  return c.resultShape(result);
}

/// Attention's operand and result counts: [query, key, value] and
/// optionally [query_positions, key_positions]; [result] and, in the block
/// form, [lse] after it.
Status checkAttentionArity(const Checker &c) {
  if ((c.in.size() == 3 || c.in.size() == 5) &&
      (c.out.size() == 1 || c.out.size() == 2))
    return Status::ok();
  return c.fail("takes 3 operands (5 with query_positions and key_positions) "
                "and 1 result (2 with lse), got ",
                c.in.size(), " and ", c.out.size());
}

/// AttentionGrad's: [query, key, value, result_grad], then optionally
/// [query_positions, key_positions] and, in the block form, [lse, delta];
/// results [query, key, value gradients].
Status checkAttentionGradArity(const Checker &c) {
  if ((c.in.size() == 4 || c.in.size() == 6 || c.in.size() == 8) &&
      c.out.size() == 3)
    return Status::ok();
  return c.fail("takes 4 operands (6 with query_positions and key_positions, "
                "8 with those, lse and delta) and 3 results, got ",
                c.in.size(), " and ", c.out.size());
}

/// A per-row f32 vector of the block form (lse or delta): [B, H, Sq] for
/// query [B, H, Sq, D], f32 whatever the query's dtype.
Status checkAttentionRowVector(const Checker &c, const TensorRef &t,
                               const char *name) {
  const TensorRef &q = c.in[0];
  Shape expected = {q.shape[0], q.shape[1], q.shape[2]};
  if (t.dtype != DType::F32 || t.shape != expected)
    return c.fail(name, " must be f32 ", formatShape(expected), ", got ",
                  dtypeName(t.dtype), " ", formatShape(t.shape));
  return Status::ok();
}

/// The optional positions operands at `first` (after query, key, value and
/// the result gradient): integer tensors of one dtype, query_positions [Sq]
/// and key_positions [Sk].
Status checkAttentionPositions(const Checker &c, size_t first) {
  const TensorRef &q = c.in[0], &k = c.in[1];
  const struct {
    const TensorRef &positions;
    const char *name;
    int64_t length;
    const char *of;
  } operands[] = {{c.in[first], "query_positions", q.shape[2], "query"},
                  {c.in[first + 1], "key_positions", k.shape[2], "key"}};
  for (const auto &o : operands) {
    if (isFloat(o.positions.dtype))
      return c.fail(o.name, " must be i32 or i64, got ",
                    dtypeName(o.positions.dtype));
    if (o.positions.shape != Shape{o.length})
      return c.fail(o.name, " has shape ", formatShape(o.positions.shape),
                    " but must be [", o.length, "] (the ", o.of,
                    " sequence length)");
  }
  return c.sameDType(c.in[first], "query_positions", c.in[first + 1],
                     "key_positions");
}

/// What Attention and AttentionGrad check alike: query, key and value of
/// one float dtype (the first result's too), rank 4, shapes that fit, the
/// mask's attributes and the positions from operand `positions` on where
/// there are any.
Status checkAttentionOperands(const Checker &c,
                              const std::vector<TensorRef> &in,
                              const std::vector<TensorRef> &outputs,
                              size_t positions) {
  const TensorRef &q = in[0], &k = in[1], &v = in[2];
  PARTITION_RETURN_IF_ERROR(c.floatDType(q, "query"));
  PARTITION_RETURN_IF_ERROR(c.sameDType(q, "query", k, "key"));
  PARTITION_RETURN_IF_ERROR(c.sameDType(q, "query", v, "value"));
  PARTITION_RETURN_IF_ERROR(
      c.sameDType(q, "query", outputs[0], "the result"));
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    return c.fail("query, key and value must have rank 4");
  if (q.shape[0] != k.shape[0] || k.shape[0] != v.shape[0] ||
      k.shape[1] != v.shape[1] || k.shape[2] != v.shape[2] ||
      q.shape[3] != k.shape[3] || k.shape[1] == 0 ||
      q.shape[1] % k.shape[1] != 0)
    return c.fail("incompatible query ", formatShape(q.shape), ", key ",
                  formatShape(k.shape), " and value ", formatShape(v.shape));
  bool withPositions = in.size() > positions;
  // Without positions, query i is at position i and key j at j: the causal
  // mask needs the two sequences to be one.
  if (c.attrs.AsAttentionAttrs()->causal && !withPositions &&
      q.shape[2] != k.shape[2])
    return c.fail("causal attention without positions needs equal "
                  "sequence lengths, got ",
                  q.shape[2], " and ", k.shape[2]);
  if (withPositions)
    PARTITION_RETURN_IF_ERROR(checkAttentionPositions(c, positions));
  if (int64_t window = c.attrs.AsAttentionAttrs()->window; window != 0) {
    if (window < 0)
      return c.fail("the attention window must be positive, got ", window);
    if (!c.attrs.AsAttentionAttrs()->causal)
      return c.fail("an attention window (", window, ") needs causal");
  }
  return Status::ok();
}

/// A Fused kernel: every operand and result a float tensor, the results of
/// one shape, each operand as many elements or a divisor of that many, and
/// every step reading only slots defined before it.
Status checkFused(const Checker &c) {
  const plan::FusedAttrsT &f = *c.attrs.AsFusedAttrs();
  if (c.in.empty() || c.out.empty())
    return c.fail("takes at least one operand and one result, got ",
                  c.in.size(), " and ", c.out.size());
  if (f.steps.empty() || f.steps.size() > kMaxFusedSteps)
    return c.fail("has ", f.steps.size(), " steps; 1 to ", kMaxFusedSteps,
                  " are allowed");
  if (c.in.size() > kMaxFusedOperands)
    return c.fail("has ", c.in.size(), " operands; at most ",
                  kMaxFusedOperands, " are allowed");
  if (c.out.size() > kMaxFusedResults)
    return c.fail("has ", c.out.size(), " results; at most ", kMaxFusedResults,
                  " are allowed");
  if (f.outputs.size() != c.out.size())
    return c.fail("names ", f.outputs.size(), " output slots for ",
                  c.out.size(), " results");
  const Shape &shape = c.out[0].shape;
  int64_t n = c.out[0].numElements();
  for (size_t k = 0; k < c.out.size(); ++k) {
    PARTITION_RETURN_IF_ERROR(c.floatDType(c.out[k], "a result"));
    if (c.out[k].shape != shape)
      return c.fail("result ", k, " has shape ", formatShape(c.out[k].shape),
                    " but result 0 has ", formatShape(shape));
  }
  for (size_t k = 0; k < c.in.size(); ++k) {
    PARTITION_RETURN_IF_ERROR(c.floatDType(c.in[k], "an operand"));
    int64_t m = c.in[k].numElements();
    if (m != n && (m < 1 || n % m != 0))
      return c.fail("operand ", k, " of shape ", formatShape(c.in[k].shape),
                    " has ", m, " elements, which do not repeat to the ", n,
                    " of the results");
  }
  size_t slots = c.in.size();
  for (size_t k = 0; k < f.steps.size(); ++k, ++slots) {
    const plan::FusedStep &s = f.steps[k];
    if (!isFusedStepOp(s.op()))
      return c.fail("step ", k, " is ", opKindName(s.op()),
                    ", which is not an elementwise float op");
    if (!isFloat(static_cast<DType>(s.round())))
      return c.fail("step ", k, " rounds to ", static_cast<int>(s.round()),
                    ", which is not a float dtype");
    if (s.gelu() > plan::GeluApproximation::MAX)
      return c.fail("step ", k, " has GELU approximation ",
                    static_cast<int>(s.gelu()));
    for (uint16_t slot : {s.a(), isBinaryFusedStep(s.op()) ? s.b() : s.a()})
      if (slot >= slots)
        return c.fail("step ", k, " (", opKindName(s.op()), ") reads slot ",
                      slot, ", which is not defined before it (slots 0-",
                      slots - 1, ")");
  }
  // A result is a step's value: never an operand passed through (a result
  // may share an operand's buffer, which it overwrites).
  for (size_t k = 0; k < f.outputs.size(); ++k)
    if (f.outputs[k] < c.in.size() || f.outputs[k] >= slots)
      return c.fail("result ", k, " is slot ", f.outputs[k],
                    ", but the steps' slots are ", c.in.size(), "-", slots - 1);
  return Status::ok();
}

/// TopK [..., N] -> [..., K] values and i64 indices; ExpertDispatch
/// (tokens [G, S, H] or slots [G, S, K, H], indices [G, S, K]) -> buffer
/// [E, G, C, H]; ExpertCombine (buffer, indices) -> slots [G, S, K, H].
Status checkRouting(const Checker &c) {
  const std::vector<TensorRef> &in = c.in, &out = c.out;
  if (c.op == OpKind::TopK) {
    PARTITION_RETURN_IF_ERROR(c.arity(1, 2));
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the input"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the input", out[0], "the values"));
    if (out[1].dtype != DType::I64)
      return c.fail("indices must be i64, got ", dtypeName(out[1].dtype));
    if (in[0].rank() < 1 || out[0].shape != out[1].shape ||
        out[0].rank() != in[0].rank())
      return c.fail("values ", formatShape(out[0].shape), " and indices ",
                    formatShape(out[1].shape), " must both be the input ",
                    formatShape(in[0].shape), " with the last dimension K");
    Shape shape = in[0].shape;
    int64_t k = out[0].shape.back();
    shape.back() = k;
    if (out[0].shape != shape || k < 1 || k > in[0].shape.back())
      return c.fail("takes K = ", k, " of ", formatShape(in[0].shape));
    return Status::ok();
  }
  PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
  bool dispatch = c.op == OpKind::ExpertDispatch;
  const TensorRef &slots = dispatch ? in[0] : out[0];
  const TensorRef &buffer = dispatch ? out[0] : in[0];
  const TensorRef &indices = in[1];
  PARTITION_RETURN_IF_ERROR(c.floatDType(slots, "the slots"));
  PARTITION_RETURN_IF_ERROR(
      c.sameDType(slots, "the slots", buffer, "the buffer"));
  if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
    return c.fail("indices must be i32 or i64, got ",
                  dtypeName(indices.dtype));
  if (buffer.rank() != 4 || indices.rank() != 3)
    return c.fail("needs a buffer [E, G, C, H] and indices [G, S, K], got ",
                  formatShape(buffer.shape), " and ",
                  formatShape(indices.shape));
  const Shape &i = indices.shape;
  Shape perSlot{i[0], i[1], i[2], buffer.shape[3]};
  Shape perToken{i[0], i[1], buffer.shape[3]};
  bool ok = slots.shape == perSlot || (dispatch && slots.shape == perToken);
  if (!ok || buffer.shape[1] != i[0] || buffer.shape[0] < 1 ||
      buffer.shape[2] < 1)
    return c.fail("slots ", formatShape(slots.shape), ", indices ",
                  formatShape(i), " and buffer ", formatShape(buffer.shape),
                  " do not match");
  return Status::ok();
}

} // namespace

Status
partition::runtime::checkKernelShapes(OpKind op, const KernelAttrs &attrs,
                                      const std::vector<TensorRef> &inputs,
                                      const std::vector<TensorRef> &outputs) {
  Checker c(op, attrs, inputs, outputs);
  const auto &in = inputs;
  if (op > OpKind::MAX)
    return c.fail("unknown opcode ", static_cast<int>(op));
  PARTITION_RETURN_IF_ERROR(c.attrsKind());
  switch (op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Pow: {
    PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
    PARTITION_RETURN_IF_ERROR(c.sameDType(in[0], "lhs", in[1], "rhs"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "lhs", outputs[0], "the result"));
    if (op == OpKind::Pow)
      PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "lhs"));
    Shape shape;
    if (!broadcastShapes(in[0].shape, in[1].shape, shape))
      return c.fail("shapes ", formatShape(in[0].shape), " and ",
                    formatShape(in[1].shape), " do not broadcast");
    return c.resultShape(shape);
  }
  case OpKind::Neg:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Tanh:
  case OpKind::Erf:
  case OpKind::Cos:
  case OpKind::Sin:
  case OpKind::Sigmoid:
  case OpKind::Relu:
  case OpKind::Silu:
  case OpKind::Gelu: {
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    if (op == OpKind::Gelu) {
      plan::GeluApproximation a = attrs.AsGeluAttrs()->approximation;
      if (a > plan::GeluApproximation::MAX)
        return c.fail("approximation must be 0 (erf) or 1 (tanh), got ",
                      static_cast<int>(a));
    }
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the operand"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    return c.resultShape(in[0].shape);
  }
  case OpKind::Select: {
    PARTITION_RETURN_IF_ERROR(c.arity(3, 1));
    if (in[0].dtype != DType::I32 && in[0].dtype != DType::I64)
      return c.fail("the condition must be i32 or i64, got ",
                    dtypeName(in[0].dtype));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[1], "true_value", in[2], "false_value"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[1], "true_value", outputs[0], "the result"));
    Shape values, shape;
    if (!broadcastShapes(in[1].shape, in[2].shape, values) ||
        !broadcastShapes(in[0].shape, values, shape))
      return c.fail("shapes ", formatShape(in[0].shape), ", ",
                    formatShape(in[1].shape), " and ", formatShape(in[2].shape),
                    " do not broadcast");
    return c.resultShape(shape);
  }
  case OpKind::Fused:
    return checkFused(c);
  case OpKind::Compare: {
    PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
    plan::CompareDirection direction = attrs.AsCompareAttrs()->direction;
    if (direction > plan::CompareDirection::MAX)
      return c.fail("direction must be 0 (eq) to 5 (ge), got ",
                    static_cast<int>(direction));
    PARTITION_RETURN_IF_ERROR(c.sameDType(in[0], "lhs", in[1], "rhs"));
    if (outputs[0].dtype != DType::I32)
      return c.fail("the result must be i32, got ",
                    dtypeName(outputs[0].dtype));
    Shape shape;
    if (!broadcastShapes(in[0].shape, in[1].shape, shape))
      return c.fail("shapes ", formatShape(in[0].shape), " and ",
                    formatShape(in[1].shape), " do not broadcast");
    return c.resultShape(shape);
  }
  case OpKind::Cast:
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    return c.resultShape(in[0].shape);
  case OpKind::Copy:
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    if (in[0].numElements() != outputs[0].numElements())
      return c.fail("copies ", in[0].numElements(), " elements into ",
                    outputs[0].numElements());
    return Status::ok();
  case OpKind::Fill:
    return c.arity(0, 1);
  case OpKind::Matmul:
    return checkMatmul(c, /*batched=*/false);
  case OpKind::BatchMatmul:
    return checkMatmul(c, /*batched=*/true);
  case OpKind::Softmax:
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the operand"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    PARTITION_RETURN_IF_ERROR(
        c.dim(attrs.AsSoftmaxAttrs()->dim, in[0].rank(), "dim"));
    return c.resultShape(in[0].shape);
  case OpKind::LayerNorm:
  case OpKind::RmsNorm: {
    bool layer = op == OpKind::LayerNorm;
    bool bias = attrs.AsNormAttrs()->has_bias;
    if (bias && !layer)
      return c.fail("has no bias, but has_bias is set");
    PARTITION_RETURN_IF_ERROR(c.arity(bias ? 3 : 2, 1));
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the input"));
    if (in[0].rank() < 1)
      return c.fail("input must have rank at least 1");
    Shape weight = {in[0].shape.back()};
    for (size_t i = 1; i < in.size(); ++i) {
      PARTITION_RETURN_IF_ERROR(
          c.sameDType(in[0], "the input", in[i], i == 1 ? "scale" : "bias"));
      if (in[i].shape != weight)
        return c.fail(i == 1 ? "scale" : "bias", " has shape ",
                      formatShape(in[i].shape), " but must be ",
                      formatShape(weight));
    }
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the input", outputs[0], "the result"));
    return c.resultShape(in[0].shape);
  }
  case OpKind::RotaryEmbedding: {
    PARTITION_RETURN_IF_ERROR(c.arity(3, 1));
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the input"));
    int64_t r = in[0].rank();
    if (r < 2 || in[0].shape[r - 1] % 2 != 0)
      return c.fail(
          "input must have rank >= 2 and an even last dimension, got ",
          formatShape(in[0].shape));
    Shape table = {in[0].shape[r - 2], in[0].shape[r - 1]};
    for (int i = 1; i < 3; ++i) {
      PARTITION_RETURN_IF_ERROR(
          c.sameDType(in[0], "the input", in[i], "a table"));
      if (in[i].shape != table)
        return c.fail("table has shape ", formatShape(in[i].shape),
                      " but must be ", formatShape(table));
    }
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the input", outputs[0], "the result"));
    return c.resultShape(in[0].shape);
  }
  case OpKind::Attention: {
    PARTITION_RETURN_IF_ERROR(checkAttentionArity(c));
    PARTITION_RETURN_IF_ERROR(checkAttentionOperands(c, in, outputs, 3));
    const TensorRef &q = in[0], &v = in[2];
    if (outputs.size() == 2) // the block form's log-sum-exp per query row
      PARTITION_RETURN_IF_ERROR(checkAttentionRowVector(c, outputs[1], "lse"));
    return c.resultShape({q.shape[0], q.shape[1], q.shape[2], v.shape[3]});
  }
  case OpKind::AttentionGrad: {
    PARTITION_RETURN_IF_ERROR(checkAttentionGradArity(c));
    PARTITION_RETURN_IF_ERROR(checkAttentionOperands(c, in, outputs, 4));
    if (in.size() == 8) { // the block form
      PARTITION_RETURN_IF_ERROR(checkAttentionRowVector(c, in[6], "lse"));
      PARTITION_RETURN_IF_ERROR(checkAttentionRowVector(c, in[7], "delta"));
    }
    const TensorRef &q = in[0], &k = in[1], &v = in[2], &dy = in[3];
    PARTITION_RETURN_IF_ERROR(c.sameDType(q, "query", dy, "result_grad"));
    Shape result = {q.shape[0], q.shape[1], q.shape[2], v.shape[3]};
    if (dy.shape != result)
      return c.fail("result_grad has shape ", formatShape(dy.shape),
                    " but the attention's result has ", formatShape(result));
    Shape expected[3] = {q.shape,
                         {q.shape[0], q.shape[1], k.shape[2], k.shape[3]},
                         {q.shape[0], q.shape[1], k.shape[2], v.shape[3]}};
    for (int i = 0; i < 3; ++i) {
      PARTITION_RETURN_IF_ERROR(
          c.sameDType(q, "query", outputs[i], "a gradient"));
      if (outputs[i].shape != expected[i])
        return c.fail("gradient ", i, " has shape ",
                      formatShape(outputs[i].shape), " but must be ",
                      formatShape(expected[i]));
    }
    return Status::ok();
  }
  case OpKind::SoftmaxCrossEntropy: {
    PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
    const TensorRef &logits = in[0], &labels = in[1];
    PARTITION_RETURN_IF_ERROR(c.floatDType(logits, "logits"));
    if (labels.dtype != DType::I32 && labels.dtype != DType::I64)
      return c.fail("labels must be i32 or i64, got ", dtypeName(labels.dtype));
    if (logits.rank() < 1 ||
        Shape(logits.shape.begin(), logits.shape.end() - 1) != labels.shape)
      return c.fail("labels ", formatShape(labels.shape),
                    " must be the logits' shape ", formatShape(logits.shape),
                    " without its last dimension");
    plan::LossReduction reduction = attrs.AsCrossEntropyAttrs()->reduction;
    if (reduction > plan::LossReduction::MAX)
      return c.fail("reduction must be 0 (mean), 1 (sum) or 2 (none), got ",
                    static_cast<int>(reduction));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(logits, "logits", outputs[0], "the result"));
    return c.resultShape(reduction == plan::LossReduction::None ? labels.shape
                                                                : Shape{});
  }
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceMax: {
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(c.floatDType(in[0], "the operand"));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    const std::vector<int64_t> &reduced = attrs.AsReduceAttrs()->dims;
    if (reduced.empty())
      return c.fail("needs at least one reduced dimension");
    std::set<int64_t> dims;
    for (int64_t d : reduced) {
      PARTITION_RETURN_IF_ERROR(c.dim(d, in[0].rank(), "reduced dimension"));
      if (!dims.insert(d).second)
        return c.fail("reduced dimension ", d, " is listed twice");
    }
    Shape dropped, kept;
    for (int64_t d = 0; d < in[0].rank(); ++d) {
      if (!dims.count(d))
        dropped.push_back(in[0].shape[d]);
      kept.push_back(dims.count(d) ? 1 : in[0].shape[d]);
    }
    if (outputs[0].shape == kept)
      return Status::ok();
    return c.resultShape(dropped);
  }
  case OpKind::Transpose: {
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    const std::vector<int64_t> &perm = attrs.AsTransposeAttrs()->permutation;
    if (static_cast<int64_t>(perm.size()) != in[0].rank())
      return c.fail("permutation has ", perm.size(), " entries for rank ",
                    in[0].rank());
    std::set<int64_t> seen;
    Shape shape;
    for (int64_t p : perm) {
      if (p < 0 || p >= in[0].rank() || !seen.insert(p).second)
        return c.fail("permutation ", formatShape(perm),
                      " is not a permutation");
      shape.push_back(in[0].shape[p]);
    }
    return c.resultShape(shape);
  }
  case OpKind::Broadcast: {
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    Shape shape;
    if (in[0].rank() > outputs[0].rank() ||
        !broadcastShapes(in[0].shape, outputs[0].shape, shape) ||
        shape != outputs[0].shape)
      return c.fail("cannot broadcast ", formatShape(in[0].shape), " to ",
                    formatShape(outputs[0].shape));
    return Status::ok();
  }
  case OpKind::Slice:
  case OpKind::Pad: {
    // Slice reads a strided window of its operand; Pad, its adjoint, writes
    // its operand as that window of the result.
    PARTITION_RETURN_IF_ERROR(c.arity(1, 1));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "the operand", outputs[0], "the result"));
    int64_t r = in[0].rank();
    if (outputs[0].rank() != r)
      return c.fail("result rank ", outputs[0].rank(), " differs from ", r);
    const plan::SliceAttrsT &window = *attrs.AsSliceAttrs();
    if (static_cast<int64_t>(window.offsets.size()) != r ||
        static_cast<int64_t>(window.strides.size()) != r)
      return c.fail("takes ", r, " offsets and ", r, " strides, got ",
                    window.offsets.size(), " and ", window.strides.size());
    bool isSlice = op == OpKind::Slice;
    const TensorRef &whole = isSlice ? in[0] : outputs[0];
    const TensorRef &part = isSlice ? outputs[0] : in[0];
    for (int64_t d = 0; d < r; ++d) {
      int64_t offset = window.offsets[d], stride = window.strides[d];
      int64_t size = part.shape[d], last = 0;
      // Checked: offsets and strides come from a file.
      if (offset < 0 || stride < 1 ||
          (size > 0 && (__builtin_mul_overflow(size - 1, stride, &last) ||
                        __builtin_add_overflow(last, offset, &last) ||
                        last >= whole.shape[d])))
        return c.fail("dimension ", d, " (offset ", offset, ", stride ", stride,
                      ", size ", size, isSlice ? ") reads outside " : ") writes outside ",
                      formatShape(whole.shape));
    }
    return Status::ok();
  }
  case OpKind::ScatterAdd: {
    PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
    const TensorRef &updates = in[0], &indices = in[1], &out = outputs[0];
    int64_t axis = attrs.AsAxisAttrs()->axis;
    PARTITION_RETURN_IF_ERROR(c.dim(axis, out.rank(), "axis"));
    PARTITION_RETURN_IF_ERROR(c.floatDType(updates, "updates"));
    if (indices.dtype != DType::I32 && indices.dtype != DType::I64)
      return c.fail("indices must be i32 or i64, got ",
                    dtypeName(indices.dtype));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(updates, "updates", out, "the result"));
    Shape shape(out.shape.begin(), out.shape.begin() + axis);
    shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
    shape.insert(shape.end(), out.shape.begin() + axis + 1, out.shape.end());
    if (updates.shape != shape)
      return c.fail("updates have shape ", formatShape(updates.shape),
                    " but must be ", formatShape(shape), " for indices ",
                    formatShape(indices.shape), " and result ",
                    formatShape(out.shape));
    return Status::ok();
  }
  case OpKind::Concat: {
    if (in.empty() || outputs.size() != 1)
      return c.fail("takes at least one operand and one result");
    int64_t d = attrs.AsAxisAttrs()->axis;
    PARTITION_RETURN_IF_ERROR(c.dim(d, in[0].rank(), "dim"));
    Shape shape = in[0].shape;
    for (size_t i = 1; i < in.size(); ++i) {
      PARTITION_RETURN_IF_ERROR(
          c.sameDType(in[0], "operand 0", in[i], "another operand"));
      if (in[i].rank() != in[0].rank())
        return c.fail("operands have different ranks");
      for (int64_t j = 0; j < in[0].rank(); ++j)
        if (j != d && in[i].shape[j] != in[0].shape[j])
          return c.fail("operand ", i, " ", formatShape(in[i].shape),
                        " does not match ", formatShape(in[0].shape),
                        " outside dimension ", d);
      shape[d] += in[i].shape[d];
    }
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "operand 0", outputs[0], "the result"));
    return c.resultShape(shape);
  }
  case OpKind::TopK:
  case OpKind::ExpertDispatch:
  case OpKind::ExpertCombine:
    return checkRouting(c);
  case OpKind::Gather: {
    PARTITION_RETURN_IF_ERROR(c.arity(2, 1));
    int64_t axis = attrs.AsAxisAttrs()->axis;
    PARTITION_RETURN_IF_ERROR(c.dim(axis, in[0].rank(), "axis"));
    if (in[1].dtype != DType::I32 && in[1].dtype != DType::I64)
      return c.fail("indices must be i32 or i64, got ", dtypeName(in[1].dtype));
    PARTITION_RETURN_IF_ERROR(
        c.sameDType(in[0], "data", outputs[0], "the result"));
    Shape shape(in[0].shape.begin(), in[0].shape.begin() + axis);
    shape.insert(shape.end(), in[1].shape.begin(), in[1].shape.end());
    shape.insert(shape.end(), in[0].shape.begin() + axis + 1,
                 in[0].shape.end());
    return c.resultShape(shape);
  }
  }
  return c.fail("unknown opcode ", static_cast<int>(op));
}
