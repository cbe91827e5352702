//===- Tensor.h - a view of a contiguous tensor -----------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_TENSOR_H
#define PARTITION_RUNTIME_TENSOR_H

#include "partition/runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::runtime {

/// A non-owning view of a dense, row-major tensor in some device's memory.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t numBytes() const { return numElements() * dtypeSize(dtype); }
};

/// Formats a shape as "[4, 8]".
std::string formatShape(const std::vector<int64_t> &shape);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_TENSOR_H
