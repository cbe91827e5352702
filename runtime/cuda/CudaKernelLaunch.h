//===- CudaKernelLaunch.h - launchers of the CUDA kernels -------*- C++ -*-===//
//
// The boundary between the host-side dispatch (CudaKernels.cpp, compiled by
// the host compiler) and the device code (CudaKernels.cu, compiled by nvcc):
// plain pointers, sizes and dtypes, no plan or Status types. Each launcher
// enqueues its kernels on `config.stream`, never waits, and returns the
// launch error (cudaGetLastError()).
//
// Floating-point tensors are stored as f32, f16 or bf16 and computed in f32;
// integer tensors are computed in their own type.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_CUDA_CUDAKERNELLAUNCH_H
#define PARTITION_RUNTIME_CUDA_CUDAKERNELLAUNCH_H

#include "partition/runtime/DType.h"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace partition::runtime::cuda {

/// The first error a kernel found in the data (an index or label out of
/// range, an integer division by zero), in device memory. The first thread
/// to find one claims the record with an atomic and fills it in; it also
/// sets the flag in mapped host memory, so the host learns of it after a
/// synchronization without a copy, and copies the record only then.
struct DeviceErrorRecord {
  unsigned int claimed; ///< 0 until a kernel claims the record
  int kind;             ///< a DeviceErrorKind
  long long value;      ///< the offending index, label or divisor
  long long position;   ///< its flat position in its tensor
  long long limit;      ///< the size it had to be below
};

/// What a DeviceErrorRecord reports.
enum DeviceErrorKind : int {
  kGatherIndexOutOfRange = 1,
  kLabelOutOfRange = 2,
  kIntegerDivisionByZero = 3,
  kScatterIndexOutOfRange = 4,
  kExpertIndexOutOfRange = 5,
};

/// Where kernels report errors: the record (device memory) and the flag
/// (mapped host memory, device pointer).
struct ErrorSink {
  DeviceErrorRecord *record = nullptr;
  volatile int *flag = nullptr;
};

/// Most dimensions an index computation handles (after merging dimensions
/// that are contiguous with each other).
constexpr int kMaxRank = 8;

/// Where and how kernels are launched.
struct LaunchConfig {
  cudaStream_t stream = nullptr;
  /// Grid-stride kernels use at most this many blocks.
  int maxBlocks = 1;
  /// Where kernels report errors found in the data.
  ErrorSink errors;
};

/// A row-major walk over `shape` whose element at coordinates c sits at
/// offset sum(c[d] * strides[d]) (in elements) of the source.
struct StridedView {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

/// A row-major walk over the result `shape` of a broadcasting binary op, with
/// the strides of each operand (0 along broadcast dimensions).
struct BroadcastView {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t lhsStrides[kMaxRank] = {};
  int64_t rhsStrides[kMaxRank] = {};
};

/// A row-major walk over the result `shape` of a select, with the strides of
/// the condition and of the two values (0 along broadcast dimensions).
struct SelectView {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t condStrides[kMaxRank] = {};
  int64_t trueStrides[kMaxRank] = {};
  int64_t falseStrides[kMaxRank] = {};
};

enum class BinaryKind { Add, Sub, Mul, Div, Max, Min, Pow };
enum class UnaryKind {
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Cos,
  Sin,
  Sigmoid,
  Relu,
  Silu,
  GeluErf,
  GeluTanh
};
enum class ReduceKind { Sum, Mean, Max };

/// A Fused kernel as the device runs it (see plan.fbs, FusedAttrs). A step's
/// `code` is a BinaryKind (0-6), kFusedUnary + a UnaryKind, or kFusedCast;
/// `round` a float DType (the step's value is rounded to it).
constexpr int kFusedUnary = 16;
constexpr int kFusedCast = 32;
constexpr int kMaxFusedDeviceSteps = 64;    // kMaxFusedSteps
constexpr int kMaxFusedDeviceOperands = 32; // kMaxFusedOperands
constexpr int kMaxFusedDeviceResults = 16;  // kMaxFusedResults
struct FusedDeviceStep {
  int8_t code = 0;
  int8_t round = 0;
  uint16_t a = 0, b = 0;
};
struct FusedProgram {
  int steps = 0, operands = 0, results = 0;
  FusedDeviceStep step[kMaxFusedDeviceSteps];
  const void *in[kMaxFusedDeviceOperands] = {};
  int64_t inCount[kMaxFusedDeviceOperands] = {}; // element i reads i mod count
  int8_t inType[kMaxFusedDeviceOperands] = {};   // a float DType
  void *out[kMaxFusedDeviceResults] = {};
  int8_t outType[kMaxFusedDeviceResults] = {};
  uint16_t outSlot[kMaxFusedDeviceResults] = {};
};

/// Runs `program` over `count` result elements: one thread per element
/// evaluates every step, with the unfused kernels' arithmetic.
cudaError_t launchFused(const LaunchConfig &config, const FusedProgram &program,
                        int64_t count);

/// out[i] = lhs[view(i)] op rhs[view(i)] for `count` result elements. Pow
/// takes float dtypes only. Integer ops wrap on overflow; an integer
/// division by zero gives 0 and is reported.
cudaError_t launchBinary(const LaunchConfig &config, BinaryKind kind,
                         DType dtype, void *out, const void *lhs,
                         const void *rhs, const BroadcastView &view,
                         int64_t count);

/// out[i] = cond[view(i)] != 0 ? onTrue[view(i)] : onFalse[view(i)] for
/// `count` result elements of `elementBytes` (2, 4 or 8) bytes; the
/// condition is I32 or I64.
cudaError_t launchSelect(const LaunchConfig &config, DType condType,
                         int elementBytes, void *out, const void *cond,
                         const void *onTrue, const void *onFalse,
                         const SelectView &view, int64_t count);

/// out[i] = lhs[view(i)] <direction> rhs[view(i)] ? 1 : 0 for `count`
/// result elements; `direction` is 0 eq, 1 ne, 2 lt, 3 le, 4 gt, 5 ge (IEEE
/// comparisons on floats, computed in f32, which is exact).
cudaError_t launchCompare(const LaunchConfig &config, int direction,
                          DType dtype, int32_t *out, const void *lhs,
                          const void *rhs, const BroadcastView &view,
                          int64_t count);

/// out[i] = f(in[i]) for a float dtype.
cudaError_t launchUnary(const LaunchConfig &config, UnaryKind kind, DType dtype,
                        void *out, const void *in, int64_t count);

/// out[i] = in[i] converted: float to float rounds to nearest even, float to
/// integer truncates toward zero (saturating; NaN gives 0), integer to float
/// rounds to nearest, integer to integer wraps.
cudaError_t launchCast(const LaunchConfig &config, DType from, DType to,
                       void *out, const void *in, int64_t count);

/// Sets `count` elements of `elementBytes` (2, 4 or 8) to `pattern`.
cudaError_t launchFillPattern(const LaunchConfig &config, int elementBytes,
                              void *out, uint64_t pattern, int64_t count);

/// out[i] = in[view(i)] for `count` elements of `elementBytes` (1, 2, 4 or 8).
cudaError_t launchStridedCopy(const LaunchConfig &config, int elementBytes,
                              void *out, const void *in,
                              const StridedView &view, int64_t count);

/// out[view(i)] = in[i] for the `count` elements of `in` (a strided write of
/// `elementBytes`-byte elements: the transpose of launchStridedCopy). The
/// elements of `out` that no i reaches are left as they are.
cudaError_t launchStridedScatter(const LaunchConfig &config, int elementBytes,
                                 void *out, const void *in,
                                 const StridedView &view, int64_t count);

/// acc[p, indices[i], q] += updates[p, i, q] for updates [outer, numIndices,
/// inner] (of float `dtype`) into the f32 accumulator acc [outer, axisSize,
/// inner], which the caller zeroed. One thread owns each (p, q) column and
/// adds its updates in index order: no atomics, and the same bits on every
/// run (parallelism is outer * inner, the hidden size of an embedding
/// gradient). An index outside [0, axisSize) is skipped and reported.
cudaError_t launchScatterAdd(const LaunchConfig &config, DType dtype,
                             DType indexType, float *acc, const void *updates,
                             const void *indices, int64_t outer,
                             int64_t axisSize, int64_t numIndices,
                             int64_t inner);

/// out[p, i, q] = data[p, indices[i], q] for data [outer, axisSize, inner];
/// an index outside [0, axisSize) is clamped and reported.
cudaError_t launchGather(const LaunchConfig &config, int elementBytes,
                         DType indexType, void *out, const void *data,
                         const void *indices, int64_t outer, int64_t axisSize,
                         int64_t numIndices, int64_t inner);

/// The k largest of each row of in [rows, n] (values of `dtype`, i64
/// indices): descending, NaN first, equal values in index order.
cudaError_t launchTopK(const LaunchConfig &config, DType dtype, void *values,
                       int64_t *indices, const void *in, int64_t rows,
                       int64_t n, int64_t k);

/// The shapes of a routing op: buffer [experts, groups, capacity, h],
/// indices [groups, s, k], slots [groups, s, k, h] or, for a dispatch of
/// tokens, [groups, s, h] (`perToken`).
struct RouteShape {
  int64_t experts, groups, capacity, s, k, h;
  bool perToken;
};

/// ExpertDispatch (`dispatch`: slots into the buffer) or ExpertCombine (the
/// buffer back into the slots); the output must be zeroed first. An expert
/// index outside [0, experts) is skipped and reported.
cudaError_t launchRoute(const LaunchConfig &config, bool dispatch,
                        int elementBytes, DType indexType, void *buffer,
                        void *slots, const void *indices,
                        const RouteShape &shape);

/// Softmax of in [outer, dim, inner] along the middle dimension.
cudaError_t launchSoftmax(const LaunchConfig &config, DType dtype, void *out,
                          const void *in, int64_t outer, int64_t dim,
                          int64_t inner);

/// Attention's optional global positions (device memory, both of `type`
/// I32 or I64): `query` [seq] and `key` [cols] of launchAttentionSoftmax.
/// `query` null: none (query i is at position i and key j at j).
struct AttentionPositions {
  DType type = DType::I64;
  const void *query = nullptr;
  const void *key = nullptr;
};

/// Softmax of the f32 rows of `scores` [rows, cols] into `out` (of `dtype`;
/// may be `scores` itself when f32). The rows come in groups of
/// `rowsPerGroup` that start at row `rowOffset` of a [heads * seq, cols]
/// block. With `causalPeriod` (seq) > 0, a row is query
/// i = (rowOffset + r % rowsPerGroup) % causalPeriod, at position p = i; it
/// keeps its first p + 1 columns and gets zeros in the others (the causal
/// mask); with `window` > 0 as well, it keeps only the last `window` of
/// those (columns p + 1 - window .. p, sliding-window attention). With
/// `positions`, the row is at p = positions.query[i] and keeps the columns
/// j with p - window < positions.key[j] <= p (any order, so not one range);
/// a row that keeps none gets zeros. Without `causalPeriod`, `positions` is
/// ignored. With `lse` (f32, device memory; attention's block form), row r's
/// log-sum-exp over the columns it keeps, max + log(sum exp(x - max)), goes
/// to lse[r]: -inf for a row that keeps none.
cudaError_t launchAttentionSoftmax(const LaunchConfig &config, DType dtype,
                                   void *out, const float *scores, int64_t rows,
                                   int64_t cols, int64_t rowsPerGroup,
                                   int64_t rowOffset, int64_t causalPeriod,
                                   int64_t window,
                                   const AttentionPositions &positions = {},
                                   float *lse = nullptr);

/// AttentionGrad's block form: the probabilities p = exp(score - lse[r]) of
/// the f32 rows of `scores` [rows, cols] into `out` (of `dtype`; may be
/// `scores` itself when f32), for the columns a row keeps as
/// launchAttentionSoftmax masks them, and 0 for the others and everywhere
/// in a row whose lse is -inf. `lse` (f32, device memory) is the caller's
/// log-sum-exp over every block of keys: the rows are not renormalised.
cudaError_t launchAttentionBlockProbabilities(
    const LaunchConfig &config, DType dtype, void *out, const float *scores,
    int64_t rows, int64_t cols, int64_t rowsPerGroup, int64_t rowOffset,
    int64_t causalPeriod, int64_t window, const AttentionPositions &positions,
    const float *lse);

/// Attention's score gradients per row of [rows, cols]: ds = scale * p *
/// (dp - delta_r), from `dp` (f32) and the probabilities `p` in `dtype`,
/// written to `out` in `dtype` (`out` may be `dp` when f32). delta_r is
/// rowsum(dp * p), or with `delta` (f32, device memory; the block form)
/// delta[r]. A key the mask hides (by index or by positions) has p = 0,
/// hence ds = 0: the mask needs no second look here.
cudaError_t launchAttentionGradScores(const LaunchConfig &config, DType dtype,
                                      void *out, const float *dp, const void *p,
                                      int64_t rows, int64_t cols, float scale,
                                      const float *delta = nullptr);

/// Layer norm (biased variance; `bias` may be null) or, with `rms`, RMS norm
/// over the last dimension of in [rows, cols].
cudaError_t launchNorm(const LaunchConfig &config, bool rms, DType dtype,
                       void *out, const void *in, const void *scale,
                       const void *bias, int64_t rows, int64_t cols,
                       float epsilon);

/// Rotary embedding (rotate-half) of in [..., seq, dim] with cos and sin
/// tables [seq, dim]; `count` is the number of elements of `in`.
cudaError_t launchRotary(const LaunchConfig &config, DType dtype, void *out,
                         const void *in, const void *cos, const void *sin,
                         int64_t count, int64_t seq, int64_t dim);

/// Per-row softmax cross-entropy of logits [rows, classes] against labels
/// [rows] (i32 or i64): loss = logsumexp(row) - row[label]. Writes `out` as
/// `outType` (the logits' dtype, or F32 for a scratch array). A label outside
/// [0, classes) is clamped and reported.
cudaError_t launchCrossEntropy(const LaunchConfig &config, DType logitsType,
                               DType labelType, DType outType, void *out,
                               const void *logits, const void *labels,
                               int64_t rows, int64_t classes);

/// out[0] = sum(in[0..count)) / divisor, written as `outType`, summed in a
/// fixed order (deterministic).
cudaError_t launchSumToScalar(const LaunchConfig &config, DType outType,
                              void *out, const float *in, int64_t count,
                              float divisor);

/// Reduces in [outer, reduced, inner] along the middle dimension into
/// out [outer, inner].
cudaError_t launchReduce(const LaunchConfig &config, ReduceKind kind,
                         DType dtype, void *out, const void *in, int64_t outer,
                         int64_t reduced, int64_t inner);

/// Reduces over any set of dimensions: result element i walks `kept` (the
/// result's shape with the input's strides) and, for each, every element of
/// `reduced` (the reduced dimensions with the input's strides).
cudaError_t launchReduceStrided(const LaunchConfig &config, ReduceKind kind,
                                DType dtype, void *out, const void *in,
                                const StridedView &kept,
                                const StridedView &reduced, int64_t outCount,
                                int64_t reducedCount);

} // namespace partition::runtime::cuda

#endif // PARTITION_RUNTIME_CUDA_CUDAKERNELLAUNCH_H
