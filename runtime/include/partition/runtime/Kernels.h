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
#include <vector>

namespace partition::runtime {

class Stream;
using plan::OpKind;

/// Integer and float attributes of a kernel; their meaning per opcode is
/// documented in plan.fbs.
struct KernelAttrs {
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

/// The kernels of one backend.
class Kernels {
public:
  virtual ~Kernels() = default;
  /// Runs `op` reading `inputs` and writing `outputs`, ordered on `stream`.
  /// Outputs never alias inputs.
  virtual Status run(OpKind op, const KernelAttrs &attrs,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs, Stream &stream) = 0;
};

/// Checks that `op` with `attrs` accepts operands of these dtypes and shapes
/// and produces results of these dtypes and shapes. Shared by plan validation
/// and the conformance tests; the message names the op and the values.
Status checkKernelShapes(OpKind op, const KernelAttrs &attrs,
                         const std::vector<TensorRef> &inputs,
                         const std::vector<TensorRef> &outputs);

/// "Matmul", "LayerNorm", ...
const char *opKindName(OpKind op);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_KERNELS_H
