//===- Weights.h - parameter data produced by the frontends -----*- C++ -*-===//
//
// The importer and the model generators build a `part` module whose
// parameters are function arguments named by `part.name`; their data travels
// beside the IR as a list of named tensors, written to a safetensors file by
// partition-import. The IR never holds weight data.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_IMPORT_WEIGHTS_H
#define PARTITION_IMPORT_WEIGHTS_H

#include "partition/runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::import {

/// One parameter's data: row-major, little-endian, `dtype` elements.
struct WeightTensor {
  std::string name;
  runtime::DType dtype = runtime::DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// The parameters of one model, in argument order.
struct Weights {
  std::vector<WeightTensor> tensors;

  /// Total bytes of data.
  int64_t numBytes() const {
    int64_t n = 0;
    for (const WeightTensor &t : tensors)
      n += static_cast<int64_t>(t.data.size());
    return n;
  }
};

} // namespace partition::import

#endif // PARTITION_IMPORT_WEIGHTS_H
