//===- CudaKernels.cpp - running plan opcodes on a GPU --------------------===//
//
// Host side of the CUDA kernels: checks a call, turns shapes and attributes
// into the launch parameters of CudaKernelLaunch.h (merging dimensions that
// are contiguous with each other, so index arithmetic stays short), and
// enqueues the work on the caller's stream without waiting for it.
//
// GEMMs go through GemmRunner (cuBLASLt, f32 accumulation). Attention runs
// on cuDNN's fused kernels where the build has them and they take the call
// (CudnnAttention.h: 16-bit operands, head sizes up to 128), else as the
// plain decomposition: a batched GEMM for the scores (in f32), a masked
// softmax, and a batched GEMM with the values. Grouped-query heads need no
// copies: the G = H / Hkv query heads that share a key/value head are
// contiguous, so each (batch, kv head) pair is one GEMM with G * Sq rows.
// Causal attention with positions operands (context parallelism: a chunk
// of queries against keys in any order) always runs as the decomposition,
// its softmax masking by positions: cuDNN's masks are ranges of indices.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "CudaBackend.h"
#include "CudaGemm.h"
#include "CudaKernelLaunch.h"
#include "CudnnAttention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace partition::runtime;
namespace plan = partition::plan;
using namespace partition::runtime::cuda;

namespace {

using Shape = std::vector<int64_t>;

int64_t product(Shape::const_iterator begin, Shape::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it)
    n *= *it;
  return n;
}

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Strides of `in` walked over the broadcast shape `out` (numpy alignment at
/// the last dimension; 0 along stretched or missing dimensions).
Shape broadcastStrides(const Shape &in, const Shape &out) {
  Shape strides(out.size(), 0);
  Shape inStrides = rowMajorStrides(in);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    strides[offset + i] = in[i] == 1 ? 0 : inStrides[i];
  return strides;
}

/// A row-major walk over `shape`, with the strides of one or more operands.
struct Walk {
  Shape shape;
  std::vector<Shape> strides;

  /// Drops dimensions of size 1 and merges each dimension into the one before
  /// it when that is contiguous with it in every operand. Leaves at least one
  /// dimension.
  void simplify() {
    Shape newShape;
    std::vector<Shape> newStrides(strides.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      bool merge = !newShape.empty();
      for (size_t k = 0; merge && k < strides.size(); ++k)
        merge = newStrides[k].back() == strides[k][d] * shape[d];
      if (merge) {
        newShape.back() *= shape[d];
        for (size_t k = 0; k < strides.size(); ++k)
          newStrides[k].back() = strides[k][d];
        continue;
      }
      newShape.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k)
        newStrides[k].push_back(strides[k][d]);
    }
    if (newShape.empty()) {
      newShape.push_back(1);
      for (Shape &s : newStrides)
        s.push_back(1);
    }
    shape = std::move(newShape);
    strides = std::move(newStrides);
  }

  int rank() const { return static_cast<int>(shape.size()); }
};

Status tooManyDims(OpKind op, int rank) {
  return PARTITION_ERROR(Unimplemented, opKindName(op), ": ", rank,
                         " non-contiguous dimensions exceed the CUDA "
                         "backend's limit of ",
                         kMaxRank);
}

StridedView toView(const Shape &shape, const Shape &strides) {
  StridedView view;
  view.rank = static_cast<int>(shape.size());
  for (int d = 0; d < view.rank; ++d) {
    view.shape[d] = shape[d];
    view.strides[d] = strides[d];
  }
  return view;
}

/// The bits of `value` stored as `dtype`: float types round to nearest even;
/// integer types truncate toward zero, saturate, and take 0 for NaN.
uint64_t fillPattern(DType dtype, float value) {
  auto toInt = [&](double lo, double hi) -> int64_t {
    if (std::isnan(value))
      return 0;
    double v = std::trunc(static_cast<double>(value));
    v = std::min(std::max(v, lo), hi);
    return static_cast<int64_t>(v);
  };
  switch (dtype) {
  case DType::F32: {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits;
  }
  case DType::F16:
    return floatToHalf(value);
  case DType::BF16:
    return floatToBf16(value);
  case DType::I32:
    return static_cast<uint32_t>(
        static_cast<int32_t>(toInt(-2147483648.0, 2147483647.0)));
  case DType::I64:
    return static_cast<uint64_t>(
        toInt(-9223372036854775808.0, 9223372036854774784.0));
  }
  return 0;
}


/// Attention's scores and probabilities are computed in chunks of at most
/// this many bytes of scratch.
constexpr int64_t kAttentionScratchBytes = int64_t(256) << 20;

class CudaKernelsImpl final : public Kernels {
public:
  CudaKernelsImpl(std::shared_ptr<DeviceState> state,
                  std::unique_ptr<GemmRunner> gemm)
      : state_(std::move(state)), gemm_(std::move(gemm)),
        cudnn_(std::make_unique<CudnnAttention>(state_->scratchPool())) {}

  Status run(OpKind op, const KernelAttrs &attrs,
             const std::vector<TensorRef> &inputs,
             const std::vector<TensorRef> &outputs, Stream &stream) override {
    PARTITION_RETURN_IF_ERROR(checkKernelShapes(op, attrs, inputs, outputs));
    PARTITION_ASSIGN_OR_RETURN(CudaStream * cudaStream,
                               asCudaStream(stream, opKindName(op)));
    if (cudaStream->state().ordinal() != state_->ordinal())
      return PARTITION_ERROR(InvalidArgument, opKindName(op), ": stream of ",
                             cudaStream->state().name(), " used on ",
                             state_->name());
    for (const auto *list : {&inputs, &outputs})
      for (const TensorRef &t : *list)
        if (!t.data && t.numElements() > 0)
          return PARTITION_ERROR(InvalidArgument, opKindName(op),
                                 ": null data for a tensor of shape ",
                                 formatShape(t.shape));
    PARTITION_RETURN_IF_ERROR(state_->makeCurrent());
    LaunchConfig config;
    config.stream = cudaStream->get();
    config.maxBlocks = state_->multiProcessorCount() * 16;
    config.errors = state_->errorSink();
    Status status = dispatch(op, attrs, inputs, outputs, *cudaStream, config);
    if (!status.isOk() && status.message().rfind(opKindName(op), 0) != 0)
      return status.withContext(opKindName(op));
    return status;
  }

private:
  Status dispatch(OpKind op, const KernelAttrs &attrs,
                  const std::vector<TensorRef> &in,
                  const std::vector<TensorRef> &out, CudaStream &stream,
                  const LaunchConfig &config) {
    switch (op) {
    case OpKind::Add:
      return binary(op, BinaryKind::Add, in, out[0], config);
    case OpKind::Sub:
      return binary(op, BinaryKind::Sub, in, out[0], config);
    case OpKind::Mul:
      return binary(op, BinaryKind::Mul, in, out[0], config);
    case OpKind::Div:
      return binary(op, BinaryKind::Div, in, out[0], config);
    case OpKind::Max:
      return binary(op, BinaryKind::Max, in, out[0], config);
    case OpKind::Min:
      return binary(op, BinaryKind::Min, in, out[0], config);
    case OpKind::Pow:
      return binary(op, BinaryKind::Pow, in, out[0], config);
    case OpKind::Neg:
      return unary(UnaryKind::Neg, in[0], out[0], config);
    case OpKind::Exp:
      return unary(UnaryKind::Exp, in[0], out[0], config);
    case OpKind::Log:
      return unary(UnaryKind::Log, in[0], out[0], config);
    case OpKind::Sqrt:
      return unary(UnaryKind::Sqrt, in[0], out[0], config);
    case OpKind::Rsqrt:
      return unary(UnaryKind::Rsqrt, in[0], out[0], config);
    case OpKind::Tanh:
      return unary(UnaryKind::Tanh, in[0], out[0], config);
    case OpKind::Erf:
      return unary(UnaryKind::Erf, in[0], out[0], config);
    case OpKind::Cos:
      return unary(UnaryKind::Cos, in[0], out[0], config);
    case OpKind::Sin:
      return unary(UnaryKind::Sin, in[0], out[0], config);
    case OpKind::Select:
      return select(op, in, out[0], config);
    case OpKind::Sigmoid:
      return unary(UnaryKind::Sigmoid, in[0], out[0], config);
    case OpKind::Relu:
      return unary(UnaryKind::Relu, in[0], out[0], config);
    case OpKind::Silu:
      return unary(UnaryKind::Silu, in[0], out[0], config);
    case OpKind::Gelu:
      return unary(attrs.AsGeluAttrs()->approximation ==
                           plan::GeluApproximation::Tanh
                       ? UnaryKind::GeluTanh
                       : UnaryKind::GeluErf,
                   in[0], out[0], config);
    case OpKind::Cast:
      return cast(in[0], out[0], config);
    case OpKind::Matmul:
      return matmul(attrs, in[0], in[1], out[0], stream, /*batched=*/false);
    case OpKind::BatchMatmul:
      return matmul(attrs, in[0], in[1], out[0], stream, /*batched=*/true);
    case OpKind::Softmax:
      return softmax(attrs.AsSoftmaxAttrs()->dim, in[0], out[0], config);
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      return norm(op == OpKind::RmsNorm, attrs, in, out[0], config);
    case OpKind::RotaryEmbedding:
      return rotary(in, out[0], config);
    case OpKind::Attention:
      return attention(attrs, in, out, stream, config);
    case OpKind::AttentionGrad:
      return attentionGrad(attrs, in, out, stream, config);
    case OpKind::SoftmaxCrossEntropy:
      return crossEntropy(attrs.AsCrossEntropyAttrs()->reduction, in[0], in[1],
                          out[0], config);
    case OpKind::ReduceSum:
      return reduce(op, ReduceKind::Sum, attrs, in[0], out[0], config);
    case OpKind::ReduceMean:
      return reduce(op, ReduceKind::Mean, attrs, in[0], out[0], config);
    case OpKind::ReduceMax:
      return reduce(op, ReduceKind::Max, attrs, in[0], out[0], config);
    case OpKind::Transpose:
      return transpose(attrs, in[0], out[0], config);
    case OpKind::Broadcast: {
      Walk walk{out[0].shape, {broadcastStrides(in[0].shape, out[0].shape)}};
      return stridedCopy(op, walk, in[0].data, out[0], config);
    }
    case OpKind::Slice:
      return slice(attrs, in[0], out[0], config);
    case OpKind::Concat:
      return concat(attrs.AsAxisAttrs()->axis, in, out[0], config);
    case OpKind::Gather:
      return gather(attrs.AsAxisAttrs()->axis, in[0], in[1], out[0], config);
    case OpKind::Copy:
      return copyBytes(out[0].data, in[0].data, out[0].numBytes(), config);
    case OpKind::Fill:
      return fill(attrs.AsFillAttrs()->value, out[0], config);
    case OpKind::Pad:
      return pad(attrs, in[0], out[0], config);
    case OpKind::ScatterAdd:
      return scatterAdd(attrs.AsAxisAttrs()->axis, in[0], in[1], out[0],
                        config);
    case OpKind::Compare:
      return compare(op, attrs.AsCompareAttrs()->direction, in, out[0], config);
    case OpKind::Fused:
      return fused(attrs, in, out, config);
    case OpKind::TopK: {
      int64_t n = in[0].shape.back(), k = out[0].shape.back();
      PARTITION_CUDA_CHECK(launchTopK(
          config, in[0].dtype, out[0].data, static_cast<int64_t *>(out[1].data),
          in[0].data, n ? in[0].numElements() / n : 0, n, k));
      return Status::ok();
    }
    case OpKind::ExpertDispatch:
    case OpKind::ExpertCombine:
      return route(op == OpKind::ExpertDispatch, in[0], in[1], out[0], config);
    }
    return PARTITION_ERROR(Unimplemented, "unknown opcode ",
                           static_cast<int>(op));
  }

  //===--------------------------------------------------------------------===//
  // Elementwise
  //===--------------------------------------------------------------------===//

  /// The two operands of a binary op (or compare) broadcast to `out`, with
  /// dimensions merged where they stay contiguous.
  static Status broadcastView(OpKind op, const std::vector<TensorRef> &in,
                              const TensorRef &out, BroadcastView &view) {
    Walk walk{out.shape,
              {broadcastStrides(in[0].shape, out.shape),
               broadcastStrides(in[1].shape, out.shape)}};
    walk.simplify();
    if (walk.rank() > kMaxRank)
      return tooManyDims(op, walk.rank());
    view.rank = walk.rank();
    for (int d = 0; d < view.rank; ++d) {
      view.shape[d] = walk.shape[d];
      view.lhsStrides[d] = walk.strides[0][d];
      view.rhsStrides[d] = walk.strides[1][d];
    }
    return Status::ok();
  }

  Status binary(OpKind op, BinaryKind kind, const std::vector<TensorRef> &in,
                const TensorRef &out, const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    BroadcastView view;
    PARTITION_RETURN_IF_ERROR(broadcastView(op, in, out, view));
    PARTITION_CUDA_CHECK(launchBinary(config, kind, out.dtype, out.data,
                                      in[0].data, in[1].data, view, count));
    return Status::ok();
  }

  Status select(OpKind op, const std::vector<TensorRef> &in,
                const TensorRef &out, const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    Walk walk{out.shape,
              {broadcastStrides(in[0].shape, out.shape),
               broadcastStrides(in[1].shape, out.shape),
               broadcastStrides(in[2].shape, out.shape)}};
    walk.simplify();
    if (walk.rank() > kMaxRank)
      return tooManyDims(op, walk.rank());
    SelectView view;
    view.rank = walk.rank();
    for (int d = 0; d < view.rank; ++d) {
      view.shape[d] = walk.shape[d];
      view.condStrides[d] = walk.strides[0][d];
      view.trueStrides[d] = walk.strides[1][d];
      view.falseStrides[d] = walk.strides[2][d];
    }
    PARTITION_CUDA_CHECK(launchSelect(
        config, in[0].dtype, static_cast<int>(dtypeSize(out.dtype)), out.data,
        in[0].data, in[1].data, in[2].data, view, count));
    return Status::ok();
  }

  Status compare(OpKind op, plan::CompareDirection direction,
                 const std::vector<TensorRef> &in, const TensorRef &out,
                 const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    BroadcastView view;
    PARTITION_RETURN_IF_ERROR(broadcastView(op, in, out, view));
    // The launch takes the direction's number (0 eq ... 5 ge, plan.fbs).
    PARTITION_CUDA_CHECK(launchCompare(
        config, static_cast<int>(direction), in[0].dtype,
        static_cast<int32_t *>(out.data), in[0].data, in[1].data, view, count));
    return Status::ok();
  }

  /// The device code of a step's opcode (CudaKernelLaunch.h).
  static int fusedCode(OpKind op, plan::GeluApproximation gelu) {
    switch (op) {
    case OpKind::Add:
      return int(BinaryKind::Add);
    case OpKind::Sub:
      return int(BinaryKind::Sub);
    case OpKind::Mul:
      return int(BinaryKind::Mul);
    case OpKind::Div:
      return int(BinaryKind::Div);
    case OpKind::Max:
      return int(BinaryKind::Max);
    case OpKind::Min:
      return int(BinaryKind::Min);
    case OpKind::Pow:
      return int(BinaryKind::Pow);
    case OpKind::Neg:
      return kFusedUnary + int(UnaryKind::Neg);
    case OpKind::Exp:
      return kFusedUnary + int(UnaryKind::Exp);
    case OpKind::Log:
      return kFusedUnary + int(UnaryKind::Log);
    case OpKind::Sqrt:
      return kFusedUnary + int(UnaryKind::Sqrt);
    case OpKind::Rsqrt:
      return kFusedUnary + int(UnaryKind::Rsqrt);
    case OpKind::Tanh:
      return kFusedUnary + int(UnaryKind::Tanh);
    case OpKind::Erf:
      return kFusedUnary + int(UnaryKind::Erf);
    case OpKind::Cos:
      return kFusedUnary + int(UnaryKind::Cos);
    case OpKind::Sin:
      return kFusedUnary + int(UnaryKind::Sin);
    case OpKind::Sigmoid:
      return kFusedUnary + int(UnaryKind::Sigmoid);
    case OpKind::Relu:
      return kFusedUnary + int(UnaryKind::Relu);
    case OpKind::Silu:
      return kFusedUnary + int(UnaryKind::Silu);
    case OpKind::Gelu:
      return kFusedUnary + int(gelu == plan::GeluApproximation::Tanh
                                   ? UnaryKind::GeluTanh
                                   : UnaryKind::GeluErf);
    default: // Cast (validation admits no other)
      return kFusedCast;
    }
  }

  Status fused(const KernelAttrs &attrs, const std::vector<TensorRef> &in,
               const std::vector<TensorRef> &out, const LaunchConfig &config) {
    const plan::FusedAttrsT &f = *attrs.AsFusedAttrs();
    static_assert(kMaxFusedDeviceSteps == int(kMaxFusedSteps) &&
                      kMaxFusedDeviceOperands == int(kMaxFusedOperands) &&
                      kMaxFusedDeviceResults == int(kMaxFusedResults),
                  "the device's limits are the plan's");
    FusedProgram program;
    program.steps = static_cast<int>(f.steps.size());
    program.operands = static_cast<int>(in.size());
    program.results = static_cast<int>(out.size());
    for (size_t k = 0; k < f.steps.size(); ++k) {
      const plan::FusedStep &s = f.steps[k];
      program.step[k].code = static_cast<int8_t>(fusedCode(s.op(), s.gelu()));
      program.step[k].round = static_cast<int8_t>(s.round());
      program.step[k].a = s.a();
      program.step[k].b = isBinaryFusedStep(s.op()) ? s.b() : s.a();
    }
    for (size_t k = 0; k < in.size(); ++k) {
      program.in[k] = in[k].data;
      program.inCount[k] = std::max<int64_t>(1, in[k].numElements());
      program.inType[k] = static_cast<int8_t>(in[k].dtype);
    }
    for (size_t k = 0; k < out.size(); ++k) {
      program.out[k] = out[k].data;
      program.outType[k] = static_cast<int8_t>(out[k].dtype);
      program.outSlot[k] = f.outputs[k];
    }
    PARTITION_CUDA_CHECK(launchFused(config, program, out[0].numElements()));
    return Status::ok();
  }

  Status unary(UnaryKind kind, const TensorRef &in, const TensorRef &out,
               const LaunchConfig &config) {
    PARTITION_CUDA_CHECK(launchUnary(config, kind, out.dtype, out.data, in.data,
                                     out.numElements()));
    return Status::ok();
  }

  Status cast(const TensorRef &in, const TensorRef &out,
              const LaunchConfig &config) {
    if (in.dtype == out.dtype)
      return copyBytes(out.data, in.data, out.numBytes(), config);
    PARTITION_CUDA_CHECK(launchCast(config, in.dtype, out.dtype, out.data,
                                    in.data, out.numElements()));
    return Status::ok();
  }

  Status fill(float value, const TensorRef &out, const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    uint64_t pattern = fillPattern(out.dtype, value);
    if (pattern == 0) {
      PARTITION_CUDA_CHECK(cudaMemsetAsync(
          out.data, 0, static_cast<size_t>(out.numBytes()), config.stream));
      return Status::ok();
    }
    PARTITION_CUDA_CHECK(
        launchFillPattern(config, static_cast<int>(dtypeSize(out.dtype)),
                          out.data, pattern, count));
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Products
  //===--------------------------------------------------------------------===//

  Status matmul(const KernelAttrs &attrs, const TensorRef &lhs,
                const TensorRef &rhs, const TensorRef &out, CudaStream &stream,
                bool batched) {
    bool ta = attrs.AsMatmulAttrs()->transpose_a;
    bool tb = attrs.AsMatmulAttrs()->transpose_b;
    int64_t lr = lhs.rank(), rr = rhs.rank();
    RowMajorGemm g;
    g.abType = g.cType = lhs.dtype;
    g.transposeA = ta;
    g.transposeB = tb;
    int64_t m = lhs.shape[ta ? lr - 1 : lr - 2];
    g.k = lhs.shape[ta ? lr - 2 : lr - 1];
    g.n = rhs.shape[tb ? rr - 2 : rr - 1];
    int64_t batch = product(lhs.shape.begin(), lhs.shape.end() - 2);
    if (batch == 0 || m == 0 || g.n == 0)
      return Status::ok();
    PARTITION_ASSIGN_OR_RETURN(void *workspace, stream.workspace());
    auto run = [&](const void *a, const void *b, void *c) {
      return gemm_->run(g, a, b, c, stream.get(), workspace,
                        CudaStream::kWorkspaceBytes);
    };
    if (batched) {
      g.m = m;
      g.batch = batch;
      g.strideA = m * g.k;
      g.strideB = g.k * g.n;
      g.strideC = m * g.n;
      return run(lhs.data, rhs.data, out.data);
    }
    if (!ta) {
      // Leading dimensions of lhs fold into the rows of one product.
      g.m = batch * m;
      return run(lhs.data, rhs.data, out.data);
    }
    // lhs^T per leading index, against the one rhs.
    g.m = m;
    int64_t elt = dtypeSize(lhs.dtype);
    for (int64_t i = 0; i < batch; ++i)
      PARTITION_RETURN_IF_ERROR(
          run(static_cast<const char *>(lhs.data) + i * m * g.k * elt, rhs.data,
              static_cast<char *>(out.data) + i * m * g.n * elt));
    return Status::ok();
  }

  /// Attention's positions operands from operand `first` on, as the
  /// softmax takes them: none unless the attention is causal (the one mask
  /// they change) and has them.
  static AttentionPositions positionsOf(const KernelAttrs &attrs,
                                        const std::vector<TensorRef> &in,
                                        size_t first) {
    AttentionPositions p;
    if (attrs.AsAttentionAttrs()->causal && in.size() >= first + 2) {
      p.type = in[first].dtype;
      p.query = in[first].data;
      p.key = in[first + 1].data;
    }
    return p;
  }

  /// Attention: cuDNN where it takes the call, else the decomposition. The
  /// block form's second result (f32 [B, H, Sq], rows in the order of the
  /// first's) takes each row's log-sum-exp from the softmax; cuDNN is not
  /// asked for it.
  Status attention(const KernelAttrs &attrs, const std::vector<TensorRef> &in,
                   const std::vector<TensorRef> &results, CudaStream &stream,
                   const LaunchConfig &config) {
    const TensorRef &q = in[0], &k = in[1], &v = in[2], &out = results[0];
    float *lse =
        results.size() > 1 ? static_cast<float *>(results[1].data) : nullptr;
    AttentionPositions positions = positionsOf(attrs, in, 3);
    bool causal = attrs.AsAttentionAttrs()->causal;
    float scale = attrs.AsAttentionAttrs()->scale;
    int64_t window = attrs.AsAttentionAttrs()->window;
    int64_t batch = q.shape[0], heads = q.shape[1], sq = q.shape[2],
            d = q.shape[3];
    int64_t kvHeads = k.shape[1], sk = k.shape[2], dv = v.shape[3];
    // With Dv = 0 the block form still has log-sum-exps to compute.
    if (batch * heads * sq == 0 || (out.numElements() == 0 && !lse))
      return Status::ok();
    // A softmax over no keys: an empty weighted sum, and lse -inf.
    if (sk == 0) {
      if (lse)
        PARTITION_RETURN_IF_ERROR(
            fill(-std::numeric_limits<float>::infinity(), results[1], config));
      return copyZeros(out, config);
    }
    bool fused = false;
    if (!positions.query && !lse)
      PARTITION_RETURN_IF_ERROR(cudnn_->forward(shapeOf(attrs, q, k, v), q.data,
                                                k.data, v.data, out.data,
                                                stream.get(), &fused));
    if (fused)
      return Status::ok();

    int64_t group = heads / kvHeads;
    int64_t pairs = batch * kvHeads;  // (batch, kv head) pairs
    int64_t rowsPerPair = group * sq; // query rows sharing one kv head
    int64_t elt = dtypeSize(q.dtype);
    bool f32 = q.dtype == DType::F32;
    // f32 scores, and probabilities in the storage type (in place for f32).
    int64_t bytesPerRow = sk * (4 + (f32 ? 0 : elt));
    int64_t pairsPerChunk = 1, rowsPerChunk = rowsPerPair;
    if (rowsPerPair * bytesPerRow <= kAttentionScratchBytes)
      pairsPerChunk = std::min<int64_t>(pairs, kAttentionScratchBytes /
                                                   (rowsPerPair * bytesPerRow));
    else
      rowsPerChunk = std::max<int64_t>(1, kAttentionScratchBytes / bytesPerRow);

    int64_t chunkRows = pairsPerChunk * rowsPerChunk;
    Scratch scratch(stream.get());
    PARTITION_RETURN_IF_ERROR(scratch.allocate(
        static_cast<size_t>(chunkRows * bytesPerRow), state_->scratchPool()));
    auto *scores = static_cast<float *>(scratch.data());
    void *probs = f32 ? static_cast<void *>(scores)
                      : static_cast<void *>(scores + chunkRows * sk);
    PARTITION_ASSIGN_OR_RETURN(void *workspace, stream.workspace());

    const char *qData = static_cast<const char *>(q.data);
    const char *kData = static_cast<const char *>(k.data);
    const char *vData = static_cast<const char *>(v.data);
    char *outData = static_cast<char *>(out.data);
    for (int64_t p0 = 0; p0 < pairs; p0 += pairsPerChunk) {
      int64_t np = std::min(pairsPerChunk, pairs - p0);
      for (int64_t r0 = 0; r0 < rowsPerPair; r0 += rowsPerChunk) {
        int64_t nr = std::min(rowsPerChunk, rowsPerPair - r0);
        // scores = scale * Q K^T, [np, nr, sk] in f32.
        RowMajorGemm s;
        s.abType = q.dtype;
        s.cType = DType::F32;
        s.transposeB = true;
        s.m = nr;
        s.n = sk;
        s.k = d;
        s.batch = np;
        s.strideA = rowsPerPair * d;
        s.strideB = sk * d;
        s.strideC = nr * sk;
        s.alpha = scale;
        PARTITION_RETURN_IF_ERROR(
            gemm_->run(s, qData + (p0 * rowsPerPair + r0) * d * elt,
                       kData + p0 * sk * d * elt, scores, stream.get(),
                       workspace, CudaStream::kWorkspaceBytes));
        // A chunk's rows are adjacent rows of [B * H * Sq]: whole pairs, or
        // rows of one pair.
        PARTITION_CUDA_CHECK(launchAttentionSoftmax(
            config, q.dtype, probs, scores, np * nr, sk, nr, r0,
            causal ? sq : 0, window, positions,
            lse ? lse + p0 * rowsPerPair + r0 : nullptr));
        // out = P V, [np, nr, dv].
        RowMajorGemm o;
        o.abType = o.cType = q.dtype;
        o.m = nr;
        o.n = dv;
        o.k = sk;
        o.batch = np;
        o.strideA = nr * sk;
        o.strideB = sk * dv;
        o.strideC = rowsPerPair * dv;
        PARTITION_RETURN_IF_ERROR(
            gemm_->run(o, probs, vData + p0 * sk * dv * elt,
                       outData + (p0 * rowsPerPair + r0) * dv * elt,
                       stream.get(), workspace, CudaStream::kWorkspaceBytes));
      }
    }
    return Status::ok();
  }

  /// An attention call as CudnnAttention takes it.
  static AttentionShape shapeOf(const KernelAttrs &attrs, const TensorRef &q,
                                const TensorRef &k, const TensorRef &v) {
    AttentionShape s;
    s.batch = q.shape[0];
    s.heads = q.shape[1];
    s.sq = q.shape[2];
    s.d = q.shape[3];
    s.kvHeads = k.shape[1];
    s.sk = k.shape[2];
    s.dv = v.shape[3];
    s.causal = attrs.AsAttentionAttrs()->causal;
    s.scale = attrs.AsAttentionAttrs()->scale;
    s.window = attrs.AsAttentionAttrs()->window;
    s.dtype = q.dtype;
    return s;
  }

  /// The sizes, attributes and positions attention's backward works with,
  /// and in the block form lse and delta (f32 [B, H, Sq]; else null).
  struct AttentionDims : AttentionShape {
    int64_t group, elt;
    DType t;
    bool f32;
    AttentionPositions positions;
    const float *lse = nullptr, *delta = nullptr;
  };
  static AttentionDims attentionDims(const KernelAttrs &attrs,
                                     const std::vector<TensorRef> &in) {
    AttentionDims a;
    static_cast<AttentionShape &>(a) = shapeOf(attrs, in[0], in[1], in[2]);
    a.group = a.heads / a.kvHeads;
    a.t = a.dtype;
    a.elt = dtypeSize(a.dtype);
    a.f32 = a.dtype == DType::F32;
    a.positions = positionsOf(attrs, in, 4);
    if (in.size() == 8) {
      a.lse = static_cast<const float *>(in[6].data);
      a.delta = static_cast<const float *>(in[7].data);
    }
    return a;
  }

  /// The probabilities of `rows` score rows that are the adjacent rows
  /// `first`.. of [B * H * Sq] (row r is query (rowOffset + r) % Sq): the
  /// masked softmax, or in the block form exp(s - lse) over lse's rows.
  cudaError_t gradProbabilities(const AttentionDims &a, void *probs,
                                const float *scores, int64_t rows,
                                int64_t rowOffset, int64_t first,
                                const LaunchConfig &config) {
    int64_t period = a.causal ? a.sq : 0;
    if (a.lse)
      return launchAttentionBlockProbabilities(
          config, a.t, probs, scores, rows, a.sk, rows, rowOffset, period,
          a.window, a.positions, a.lse + first);
    return launchAttentionSoftmax(config, a.t, probs, scores, rows, a.sk, rows,
                                  rowOffset, period, a.window, a.positions);
  }

  /// A GEMM of `t` operands (into `cType`), batched `count` times with the
  /// given element strides, on `stream`.
  Status gemmOf(DType t, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                float alpha, DType cType, int64_t count, const void *a,
                int64_t sa, const void *b, int64_t sb, void *c, int64_t sc,
                CudaStream &stream, void *workspace) {
    RowMajorGemm g;
    g.abType = t;
    g.cType = cType;
    g.transposeA = ta;
    g.transposeB = tb;
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = count;
    g.strideA = sa;
    g.strideB = sb;
    g.strideC = sc;
    g.alpha = alpha;
    return gemm_->run(g, a, b, c, stream.get(), workspace,
                      CudaStream::kWorkspaceBytes);
  }

  /// Attention's gradients: batched over (batch, kv head) pairs where a
  /// pair's scores fit kAttentionScratchBytes (every sequence in practice),
  /// in chunks of query rows otherwise. Per row of scores: f32 scores (the
  /// probabilities in place when f32), f32 dp, and the probabilities (then
  /// ds) in the storage type otherwise.
  Status attentionGrad(const KernelAttrs &attrs,
                       const std::vector<TensorRef> &in,
                       const std::vector<TensorRef> &out, CudaStream &stream,
                       const LaunchConfig &config) {
    AttentionDims a = attentionDims(attrs, in);
    if (a.batch * a.heads == 0)
      return Status::ok();
    if (a.sq == 0 || a.sk == 0) { // no products: every gradient is 0
      for (const TensorRef &t : out)
        PARTITION_RETURN_IF_ERROR(copyZeros(t, config));
      return Status::ok();
    }
    bool fused = false;
    if (!a.positions.query && !a.lse)
      PARTITION_RETURN_IF_ERROR(cudnn_->backward(
          a, in[0].data, in[1].data, in[2].data, in[3].data, out[0].data,
          out[1].data, out[2].data, stream.get(), &fused));
    if (fused)
      return Status::ok();
    int64_t bytesPerRow = a.sk * (8 + (a.f32 ? 0 : a.elt));
    if (a.group * a.sq * bytesPerRow <= kAttentionScratchBytes)
      return attentionGradBatched(a, bytesPerRow, in, out, stream, config);
    return attentionGradChunked(a, bytesPerRow, in, out, stream, config);
  }

  /// attentionGrad over chunks of whole (batch, kv head) pairs: the G query
  /// heads sharing a kv head are G * Sq adjacent rows, so the products with
  /// that head's keys and values are one GEMM per pair, and those per
  /// query head one per head, each batched over the chunk.
  Status attentionGradBatched(const AttentionDims &a, int64_t bytesPerRow,
                              const std::vector<TensorRef> &in,
                              const std::vector<TensorRef> &out,
                              CudaStream &stream, const LaunchConfig &config) {
    int64_t pairs = a.batch * a.kvHeads, rowsPerPair = a.group * a.sq;
    int64_t sq = a.sq, sk = a.sk, d = a.d, dv = a.dv, elt = a.elt;
    int64_t pairsPerChunk = std::max<int64_t>(
        1, std::min<int64_t>(pairs, kAttentionScratchBytes /
                                        (rowsPerPair * bytesPerRow)));
    int64_t chunkRows = pairsPerChunk * rowsPerPair;
    Scratch scratch(stream.get());
    PARTITION_RETURN_IF_ERROR(scratch.allocate(
        static_cast<size_t>(chunkRows * bytesPerRow), state_->scratchPool()));
    auto *scores = static_cast<float *>(scratch.data());
    float *dp = scores + chunkRows * sk;
    void *probs = a.f32 ? static_cast<void *>(scores)
                        : static_cast<void *>(dp + chunkRows * sk);
    PARTITION_ASSIGN_OR_RETURN(void *workspace, stream.workspace());
    auto gemm = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t kk,
                    float alpha, DType cType, int64_t count, const void *x,
                    int64_t sx, const void *y, int64_t sy, void *z,
                    int64_t sz) {
      return gemmOf(a.t, ta, tb, m, n, kk, alpha, cType, count, x, sx, y, sy,
                    z, sz, stream, workspace);
    };
    const char *qData = static_cast<const char *>(in[0].data),
               *kData = static_cast<const char *>(in[1].data),
               *vData = static_cast<const char *>(in[2].data),
               *dyData = static_cast<const char *>(in[3].data);
    char *dq = static_cast<char *>(out[0].data),
         *dk = static_cast<char *>(out[1].data),
         *dvOut = static_cast<char *>(out[2].data);
    for (int64_t p0 = 0; p0 < pairs; p0 += pairsPerChunk) {
      int64_t np = std::min(pairsPerChunk, pairs - p0);
      int64_t h0 = p0 * a.group; // the chunk's first query head
      const char *queries = qData + p0 * rowsPerPair * d * elt;
      const char *grad = dyData + p0 * rowsPerPair * dv * elt;
      const char *keys = kData + p0 * sk * d * elt;
      const char *values = vData + p0 * sk * dv * elt;
      // Scores and probabilities per pair: [G * Sq, Sk].
      PARTITION_RETURN_IF_ERROR(gemm(false, true, rowsPerPair, sk, d, a.scale,
                                     DType::F32, np, queries, rowsPerPair * d,
                                     keys, sk * d, scores, rowsPerPair * sk));
      PARTITION_CUDA_CHECK(gradProbabilities(a, probs, scores, np * rowsPerPair,
                                             0, p0 * rowsPerPair, config));
      // dv = p^T do per query head: [Sk, Dv].
      PARTITION_RETURN_IF_ERROR(gemm(true, false, sk, dv, sq, 1.0f, a.t,
                                     np * a.group, probs, sq * sk, grad,
                                     sq * dv, dvOut + h0 * sk * dv * elt,
                                     sk * dv));
      // dp = do v^T per pair, then ds over the probabilities.
      PARTITION_RETURN_IF_ERROR(gemm(false, true, rowsPerPair, sk, dv, 1.0f,
                                     DType::F32, np, grad, rowsPerPair * dv,
                                     values, sk * dv, dp, rowsPerPair * sk));
      PARTITION_CUDA_CHECK(launchAttentionGradScores(
          config, a.t, probs, dp, probs, np * rowsPerPair, sk, a.scale,
          a.delta ? a.delta + p0 * rowsPerPair : nullptr));
      // dq = ds k per pair; dk = ds^T q per query head.
      PARTITION_RETURN_IF_ERROR(gemm(false, false, rowsPerPair, d, sk, 1.0f,
                                     a.t, np, probs, rowsPerPair * sk, keys,
                                     sk * d, dq + p0 * rowsPerPair * d * elt,
                                     rowsPerPair * d));
      PARTITION_RETURN_IF_ERROR(gemm(true, false, sk, d, sq, 1.0f, a.t,
                                     np * a.group, probs, sq * sk, queries,
                                     sq * d, dk + h0 * sk * d * elt, sk * d));
    }
    return Status::ok();
  }

  /// attentionGrad per (batch, query head) in chunks of query rows, for
  /// sequences whose scores per kv head do not fit kAttentionScratchBytes:
  /// the steps of attentionGradBatched per chunk, dk and dv summed over the
  /// chunks in f32 and stored per query head ([B, H, Sk, D / Dv]).
  Status attentionGradChunked(const AttentionDims &a, int64_t bytesPerRow,
                              const std::vector<TensorRef> &in,
                              const std::vector<TensorRef> &out,
                              CudaStream &stream, const LaunchConfig &config) {
    int64_t sq = a.sq, sk = a.sk, d = a.d, dv = a.dv, elt = a.elt;
    int64_t accBytes = 4 * sk * (2 * d + 2 * dv);
    int64_t rowsPerChunk = std::max<int64_t>(
        1, std::min<int64_t>(sq, (kAttentionScratchBytes - accBytes) /
                                     bytesPerRow));
    Scratch scratch(stream.get());
    PARTITION_RETURN_IF_ERROR(scratch.allocate(
        static_cast<size_t>(rowsPerChunk * bytesPerRow + accBytes),
        state_->scratchPool()));
    auto *scores = static_cast<float *>(scratch.data());
    float *dp = scores + rowsPerChunk * sk;
    void *probs = a.f32 ? static_cast<void *>(scores)
                        : static_cast<void *>(dp + rowsPerChunk * sk);
    auto *dkAcc = reinterpret_cast<float *>(
        static_cast<char *>(scratch.data()) + rowsPerChunk * bytesPerRow);
    float *dvAcc = dkAcc + sk * d, *partial = dvAcc + sk * dv;
    PARTITION_ASSIGN_OR_RETURN(void *workspace, stream.workspace());
    auto gemm = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t kk,
                    float alpha, DType cType, const void *x, const void *y,
                    void *z) {
      return gemmOf(a.t, ta, tb, m, n, kk, alpha, cType, 1, x, 0, y, 0, z, 0,
                    stream, workspace);
    };
    // acc += the partial sum just written (the first chunk writes acc).
    auto accumulate = [&](float *acc, int64_t n) -> Status {
      BroadcastView view;
      view.rank = 1;
      view.shape[0] = n;
      view.lhsStrides[0] = view.rhsStrides[0] = 1;
      PARTITION_CUDA_CHECK(launchBinary(config, BinaryKind::Add, DType::F32,
                                        acc, acc, partial, view, n));
      return Status::ok();
    };
    const char *qData = static_cast<const char *>(in[0].data),
               *kData = static_cast<const char *>(in[1].data),
               *vData = static_cast<const char *>(in[2].data),
               *dyData = static_cast<const char *>(in[3].data);
    for (int64_t bh = 0; bh < a.batch * a.heads; ++bh) {
      int64_t kv = (bh / a.heads) * a.kvHeads + (bh % a.heads) / a.group;
      const char *keys = kData + kv * sk * d * elt;
      const char *values = vData + kv * sk * dv * elt;
      for (int64_t r0 = 0; r0 < sq; r0 += rowsPerChunk) {
        int64_t nr = std::min(rowsPerChunk, sq - r0);
        const char *queries = qData + (bh * sq + r0) * d * elt;
        const char *grad = dyData + (bh * sq + r0) * dv * elt;
        bool first = r0 == 0;
        PARTITION_RETURN_IF_ERROR(gemm(false, true, nr, sk, d, a.scale,
                                       DType::F32, queries, keys, scores));
        PARTITION_CUDA_CHECK(
            gradProbabilities(a, probs, scores, nr, r0, bh * sq + r0, config));
        PARTITION_RETURN_IF_ERROR(gemm(true, false, sk, dv, nr, 1.0f,
                                       DType::F32, probs, grad,
                                       first ? dvAcc : partial));
        if (!first)
          PARTITION_RETURN_IF_ERROR(accumulate(dvAcc, sk * dv));
        PARTITION_RETURN_IF_ERROR(gemm(false, true, nr, sk, dv, 1.0f,
                                       DType::F32, grad, values, dp));
        // ds over the probabilities (in place: each thread its columns).
        PARTITION_CUDA_CHECK(launchAttentionGradScores(
            config, a.t, probs, dp, probs, nr, sk, a.scale,
            a.delta ? a.delta + bh * sq + r0 : nullptr));
        PARTITION_RETURN_IF_ERROR(gemm(
            false, false, nr, d, sk, 1.0f, a.t, probs, keys,
            static_cast<char *>(out[0].data) + (bh * sq + r0) * d * elt));
        PARTITION_RETURN_IF_ERROR(gemm(true, false, sk, d, nr, 1.0f,
                                       DType::F32, probs, queries,
                                       first ? dkAcc : partial));
        if (!first)
          PARTITION_RETURN_IF_ERROR(accumulate(dkAcc, sk * d));
      }
      PARTITION_CUDA_CHECK(launchCast(
          config, DType::F32, a.t,
          static_cast<char *>(out[1].data) + bh * sk * d * elt, dkAcc, sk * d));
      PARTITION_CUDA_CHECK(launchCast(
          config, DType::F32, a.t,
          static_cast<char *>(out[2].data) + bh * sk * dv * elt, dvAcc,
          sk * dv));
    }
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Softmax, norms, rotary embedding, loss
  //===--------------------------------------------------------------------===//

  Status softmax(int64_t dim, const TensorRef &in, const TensorRef &out,
                 const LaunchConfig &config) {
    int64_t outer = product(in.shape.begin(), in.shape.begin() + dim);
    int64_t inner = product(in.shape.begin() + dim + 1, in.shape.end());
    PARTITION_CUDA_CHECK(launchSoftmax(config, in.dtype, out.data, in.data,
                                       outer, in.shape[dim], inner));
    return Status::ok();
  }

  Status norm(bool rms, const KernelAttrs &attrs,
              const std::vector<TensorRef> &in, const TensorRef &out,
              const LaunchConfig &config) {
    int64_t cols = in[0].shape.back();
    int64_t rows = cols == 0 ? 0 : in[0].numElements() / cols;
    const plan::NormAttrsT &a = *attrs.AsNormAttrs();
    const void *bias = !rms && a.has_bias ? in[2].data : nullptr;
    PARTITION_CUDA_CHECK(launchNorm(config, rms, in[0].dtype, out.data,
                                    in[0].data, in[1].data, bias, rows, cols,
                                    a.epsilon));
    return Status::ok();
  }

  Status rotary(const std::vector<TensorRef> &in, const TensorRef &out,
                const LaunchConfig &config) {
    int64_t r = in[0].rank();
    PARTITION_CUDA_CHECK(launchRotary(
        config, in[0].dtype, out.data, in[0].data, in[1].data, in[2].data,
        in[0].numElements(), in[0].shape[r - 2], in[0].shape[r - 1]));
    return Status::ok();
  }

  Status crossEntropy(plan::LossReduction reduction, const TensorRef &logits,
                      const TensorRef &labels, const TensorRef &out,
                      const LaunchConfig &config) {
    int64_t classes = logits.shape.back();
    int64_t rows = labels.numElements();
    if (rows > 0 && classes == 0)
      return PARTITION_ERROR(InvalidArgument,
                             "SoftmaxCrossEntropy: logits have no classes");
    if (reduction == plan::LossReduction::None) {
      PARTITION_CUDA_CHECK(launchCrossEntropy(
          config, logits.dtype, labels.dtype, out.dtype, out.data, logits.data,
          labels.data, rows, classes));
      return Status::ok();
    }
    // Per-row losses in f32 scratch, then one deterministic sum.
    Scratch scratch(config.stream);
    PARTITION_RETURN_IF_ERROR(
        scratch.allocate(static_cast<size_t>(std::max<int64_t>(rows, 1) * 4),
                         state_->scratchPool()));
    auto *losses = static_cast<float *>(scratch.data());
    PARTITION_CUDA_CHECK(launchCrossEntropy(config, logits.dtype, labels.dtype,
                                            DType::F32, losses, logits.data,
                                            labels.data, rows, classes));
    float divisor = reduction == plan::LossReduction::Mean
                        ? static_cast<float>(rows)
                        : 1.0f;
    PARTITION_CUDA_CHECK(
        launchSumToScalar(config, out.dtype, out.data, losses, rows, divisor));
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------------===//

  Status reduce(OpKind op, ReduceKind kind, const KernelAttrs &attrs,
                const TensorRef &in, const TensorRef &out,
                const LaunchConfig &config) {
    int64_t outCount = out.numElements();
    if (outCount == 0)
      return Status::ok();
    std::vector<bool> reduced(in.rank(), false);
    for (int64_t dim : attrs.AsReduceAttrs()->dims)
      reduced[dim] = true;
    // Groups of neighbouring dimensions that are all kept or all reduced.
    Shape sizes;
    std::vector<bool> isReduced;
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (in.shape[d] == 1)
        continue;
      if (!sizes.empty() && isReduced.back() == reduced[d]) {
        sizes.back() *= in.shape[d];
        continue;
      }
      sizes.push_back(in.shape[d]);
      isReduced.push_back(reduced[d]);
    }
    int reducedGroups =
        static_cast<int>(std::count(isReduced.begin(), isReduced.end(), true));
    if (reducedGroups <= 1) {
      int64_t outer = 1, middle = 1, inner = 1;
      bool seen = false;
      for (size_t g = 0; g < sizes.size(); ++g) {
        if (isReduced[g]) {
          middle = sizes[g];
          seen = true;
        } else {
          (seen ? inner : outer) *= sizes[g];
        }
      }
      PARTITION_CUDA_CHECK(launchReduce(config, kind, in.dtype, out.data,
                                        in.data, outer, middle, inner));
      return Status::ok();
    }
    Shape strides = rowMajorStrides(sizes);
    Shape keptShape, keptStrides, reducedShape, reducedStrides;
    for (size_t g = 0; g < sizes.size(); ++g) {
      (isReduced[g] ? reducedShape : keptShape).push_back(sizes[g]);
      (isReduced[g] ? reducedStrides : keptStrides).push_back(strides[g]);
    }
    if (keptShape.empty()) {
      keptShape.push_back(1);
      keptStrides.push_back(0);
    }
    int rank =
        static_cast<int>(std::max(keptShape.size(), reducedShape.size()));
    if (rank > kMaxRank)
      return tooManyDims(op, rank);
    int64_t reducedCount = product(reducedShape.begin(), reducedShape.end());
    PARTITION_CUDA_CHECK(launchReduceStrided(
        config, kind, in.dtype, out.data, in.data,
        toView(keptShape, keptStrides), toView(reducedShape, reducedStrides),
        outCount, reducedCount));
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Data movement
  //===--------------------------------------------------------------------===//

  Status copyBytes(void *dst, const void *src, int64_t bytes,
                   const LaunchConfig &config) {
    if (bytes == 0)
      return Status::ok();
    PARTITION_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                         cudaMemcpyDeviceToDevice,
                                         config.stream));
    return Status::ok();
  }

  Status copyZeros(const TensorRef &out, const LaunchConfig &config) {
    PARTITION_CUDA_CHECK(cudaMemsetAsync(
        out.data, 0, static_cast<size_t>(out.numBytes()), config.stream));
    return Status::ok();
  }

  /// out = the elements of `src` that `walk` (over out's shape, with the
  /// source's strides) visits.
  Status stridedCopy(OpKind op, Walk &walk, const void *src,
                     const TensorRef &out, const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    walk.simplify();
    int64_t elt = dtypeSize(out.dtype);
    if (walk.rank() == 1 && walk.strides[0][0] == 1)
      return copyBytes(out.data, src, count * elt, config);
    if (walk.rank() > kMaxRank)
      return tooManyDims(op, walk.rank());
    PARTITION_CUDA_CHECK(
        launchStridedCopy(config, static_cast<int>(elt), out.data, src,
                          toView(walk.shape, walk.strides[0]), count));
    return Status::ok();
  }

  Status transpose(const KernelAttrs &attrs, const TensorRef &in,
                   const TensorRef &out, const LaunchConfig &config) {
    Shape inStrides = rowMajorStrides(in.shape);
    Shape strides;
    for (int64_t p : attrs.AsTransposeAttrs()->permutation)
      strides.push_back(inStrides[p]);
    Walk walk{out.shape, {strides}};
    return stridedCopy(OpKind::Transpose, walk, in.data, out, config);
  }

  Status slice(const KernelAttrs &attrs, const TensorRef &in,
               const TensorRef &out, const LaunchConfig &config) {
    int64_t r = in.rank();
    Shape inStrides = rowMajorStrides(in.shape);
    Shape strides(r);
    int64_t base = 0;
    const plan::SliceAttrsT &window = *attrs.AsSliceAttrs();
    for (int64_t d = 0; d < r; ++d) {
      base += window.offsets[d] * inStrides[d];
      strides[d] = inStrides[d] * window.strides[d];
    }
    if (out.numElements() == 0)
      return Status::ok();
    Walk walk{out.shape, {strides}};
    const char *src =
        static_cast<const char *>(in.data) + base * dtypeSize(in.dtype);
    return stridedCopy(OpKind::Slice, walk, src, out, config);
  }

  /// Zeros, then the operand written at offsets + i * strides (the walk is
  /// over the operand, with the result's strides).
  Status pad(const KernelAttrs &attrs, const TensorRef &in,
             const TensorRef &out, const LaunchConfig &config) {
    if (out.numElements() == 0)
      return Status::ok();
    PARTITION_RETURN_IF_ERROR(copyZeros(out, config));
    int64_t count = in.numElements();
    if (count == 0)
      return Status::ok();
    int64_t r = in.rank();
    Shape outStrides = rowMajorStrides(out.shape);
    Shape strides(r);
    int64_t base = 0;
    const plan::SliceAttrsT &window = *attrs.AsSliceAttrs();
    for (int64_t d = 0; d < r; ++d) {
      base += window.offsets[d] * outStrides[d];
      strides[d] = outStrides[d] * window.strides[d];
    }
    Walk walk{in.shape, {strides}};
    walk.simplify();
    if (walk.rank() > kMaxRank)
      return tooManyDims(OpKind::Pad, walk.rank());
    int64_t elt = dtypeSize(out.dtype);
    char *dst = static_cast<char *>(out.data) + base * elt;
    PARTITION_CUDA_CHECK(
        launchStridedScatter(config, static_cast<int>(elt), dst, in.data,
                             toView(walk.shape, walk.strides[0]), count));
    return Status::ok();
  }

  /// Accumulates in f32: in the result itself for f32, in scratch (then
  /// rounded once) for f16 and bf16.
  Status scatterAdd(int64_t axis, const TensorRef &updates,
                    const TensorRef &indices, const TensorRef &out,
                    const LaunchConfig &config) {
    int64_t count = out.numElements();
    if (count == 0)
      return Status::ok();
    int64_t axisSize = out.shape[axis];
    int64_t outer = product(out.shape.begin(), out.shape.begin() + axis);
    int64_t inner = product(out.shape.begin() + axis + 1, out.shape.end());
    bool f32 = out.dtype == DType::F32;
    Scratch scratch(config.stream);
    if (!f32)
      PARTITION_RETURN_IF_ERROR(scratch.allocate(
          static_cast<size_t>(count) * sizeof(float), state_->scratchPool()));
    float *acc = f32 ? static_cast<float *>(out.data)
                     : static_cast<float *>(scratch.data());
    PARTITION_CUDA_CHECK(cudaMemsetAsync(
        acc, 0, static_cast<size_t>(count) * sizeof(float), config.stream));
    PARTITION_CUDA_CHECK(launchScatterAdd(
        config, updates.dtype, indices.dtype, acc, updates.data, indices.data,
        outer, axisSize, indices.numElements(), inner));
    if (!f32)
      PARTITION_CUDA_CHECK(
          launchCast(config, DType::F32, out.dtype, out.data, acc, count));
    return Status::ok();
  }

  Status concat(int64_t dim, const std::vector<TensorRef> &in,
                const TensorRef &out, const LaunchConfig &config) {
    if (out.numElements() == 0)
      return Status::ok();
    int64_t elt = dtypeSize(out.dtype);
    int64_t outer = product(out.shape.begin(), out.shape.begin() + dim);
    int64_t innerAfter = product(out.shape.begin() + dim + 1, out.shape.end());
    int64_t pitch = out.shape[dim] * innerAfter * elt;
    int64_t offset = 0;
    for (const TensorRef &t : in) {
      int64_t width = t.shape[dim] * innerAfter * elt;
      if (width == 0)
        continue;
      char *dst = static_cast<char *>(out.data) + offset;
      if (outer == 1) {
        PARTITION_RETURN_IF_ERROR(copyBytes(dst, t.data, width, config));
      } else {
        PARTITION_CUDA_CHECK(cudaMemcpy2DAsync(
            dst, static_cast<size_t>(pitch), t.data, static_cast<size_t>(width),
            static_cast<size_t>(width), static_cast<size_t>(outer),
            cudaMemcpyDeviceToDevice, config.stream));
      }
      offset += width;
    }
    return Status::ok();
  }

  /// ExpertDispatch (slots -> buffer) or ExpertCombine (buffer -> slots).
  Status route(bool dispatch, const TensorRef &in, const TensorRef &indices,
               const TensorRef &out, const LaunchConfig &config) {
    const TensorRef &buffer = dispatch ? out : in;
    const TensorRef &slots = dispatch ? in : out;
    RouteShape shape{buffer.shape[0],  buffer.shape[1],  buffer.shape[2],
                     indices.shape[1], indices.shape[2], buffer.shape[3],
                     slots.rank() == 3};
    PARTITION_CUDA_CHECK(
        cudaMemsetAsync(out.data, 0, out.numBytes(), config.stream));
    PARTITION_CUDA_CHECK(launchRoute(
        config, dispatch, static_cast<int>(dtypeSize(buffer.dtype)),
        indices.dtype, buffer.data, slots.data, indices.data, shape));
    return Status::ok();
  }

  Status gather(int64_t axis, const TensorRef &data, const TensorRef &indices,
                const TensorRef &out, const LaunchConfig &config) {
    if (out.numElements() == 0)
      return Status::ok();
    int64_t axisSize = data.shape[axis];
    if (axisSize == 0)
      return PARTITION_ERROR(OutOfRange,
                             "Gather: every index is outside "
                             "the empty axis ",
                             axis, " of ", formatShape(data.shape));
    int64_t outer = product(data.shape.begin(), data.shape.begin() + axis);
    int64_t inner = product(data.shape.begin() + axis + 1, data.shape.end());
    PARTITION_CUDA_CHECK(
        launchGather(config, static_cast<int>(dtypeSize(data.dtype)),
                     indices.dtype, out.data, data.data, indices.data, outer,
                     axisSize, indices.numElements(), inner));
    return Status::ok();
  }

  std::shared_ptr<DeviceState> state_;
  std::unique_ptr<GemmRunner> gemm_;
  /// cuDNN's fused attention, where the build has it and a call fits it.
  std::unique_ptr<CudnnAttention> cudnn_;
};

} // namespace

StatusOr<std::unique_ptr<Kernels>>
cuda::createCudaKernels(std::shared_ptr<DeviceState> state) {
  PARTITION_ASSIGN_OR_RETURN(std::unique_ptr<GemmRunner> gemm,
                             GemmRunner::create());
  return std::unique_ptr<Kernels>(
      new CudaKernelsImpl(std::move(state), std::move(gemm)));
}
