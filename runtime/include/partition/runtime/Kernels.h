//===- Kernels.h - the compute kernels of a backend -------------*- C++ -*-===//
//
// One entry point per backend runs any plan::OpKind on contiguous row-major
// tensors. Shapes have been checked by plan validation
// (checkKernelShapes); a backend may still return an error for an
// unsupported combination (for example an integer dtype where it has none).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_KERNELS_H
#define PARTITION_RUNTIME_KERNELS_H

#include "partition/runtime/Status.h"
#include "partition/runtime/Tensor.h"
#include "partition/runtime/plan/plan_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::runtime {

class Stream;
using plan::OpKind;

/// The attributes of a kernel: none, or the one table of named fields its
/// opcode takes (plan.fbs lists which), as FlatBuffers' object API unpacks
/// it from a plan. `attrs.AsMatmulAttrs()->transpose_a` and so on.
using KernelAttrs = plan::KernelAttrsUnion;

/// The kind of attribute table `op` takes (KernelAttrs::NONE: none).
plan::KernelAttrs kernelAttrsKind(OpKind op);

/// "MatmulAttrs", ...; "none" for KernelAttrs::NONE.
const char *kernelAttrsName(plan::KernelAttrs kind);

/// "{transpose_a=false, transpose_b=true}" and so on; "" for none.
std::string formatKernelAttrs(const KernelAttrs &attrs);

/// Attributes of each kind, for code that builds kernels itself (the
/// executor's transposes and slices, tests).
KernelAttrs geluAttrs(plan::GeluApproximation approximation);
KernelAttrs matmulAttrs(bool transposeA, bool transposeB);
KernelAttrs softmaxAttrs(int64_t dim);
KernelAttrs normAttrs(float epsilon, bool hasBias);
/// Attention; `window` 0 means none (see AttentionAttrs in plan.fbs).
KernelAttrs attentionAttrs(bool causal, float scale, int64_t window = 0);
KernelAttrs crossEntropyAttrs(plan::LossReduction reduction);
KernelAttrs reduceAttrs(std::vector<int64_t> dims);
KernelAttrs transposeAttrs(std::vector<int64_t> permutation);
KernelAttrs sliceAttrs(std::vector<int64_t> offsets,
                       std::vector<int64_t> strides);
KernelAttrs axisAttrs(int64_t axis);
KernelAttrs fillAttrs(float value);
KernelAttrs compareAttrs(plan::CompareDirection direction);
KernelAttrs fusedAttrs(std::vector<plan::FusedStep> steps,
                       std::vector<uint16_t> outputs);

/// The limits of a Fused kernel, so that a backend can keep a chunk of
/// every slot at hand (and the CUDA one pass the steps by value).
constexpr size_t kMaxFusedSteps = 64;
constexpr size_t kMaxFusedOperands = 32;
constexpr size_t kMaxFusedResults = 16;

/// The opcodes a Fused kernel's steps may use: the elementwise float ops
/// and Cast between float dtypes.
bool isFusedStepOp(OpKind op);
/// True for the steps that read two slots (a and b).
bool isBinaryFusedStep(OpKind op);

/// The kernels of one backend.
class Kernels {
public:
  virtual ~Kernels() = default;
  /// Runs `op` reading `inputs` and writing `outputs`, ordered on `stream`.
  /// Outputs never alias inputs, except that a Fused kernel's result may be
  /// exactly an operand's buffer (each element is read before it is
  /// written).
  virtual Status run(OpKind op, const KernelAttrs &attrs,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs, Stream &stream) = 0;
};

/// Checks that `op` has the attribute table it takes, with values in range,
/// and that it accepts operands of these dtypes and shapes and produces
/// results of these dtypes and shapes. Shared by plan validation and the
/// conformance tests; the message names the op and the values.
Status checkKernelShapes(OpKind op, const KernelAttrs &attrs,
                         const std::vector<TensorRef> &inputs,
                         const std::vector<TensorRef> &outputs);

/// "Matmul", "LayerNorm", ...
const char *opKindName(OpKind op);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_KERNELS_H
