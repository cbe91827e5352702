//===- DType.cpp - element types and conversions --------------------------===//

#include "partition/runtime/DType.h"
#include "partition/runtime/Tensor.h"

#include <cmath>

using namespace partition::runtime;

const char *partition::runtime::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

float partition::runtime::loadFloat(const void *data, DType type, int64_t i) {
  switch (type) {
  case DType::F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case DType::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  default:
    return static_cast<const float *>(data)[i];
  }
}

void partition::runtime::storeFloat(void *data, DType type, int64_t i,
                                    float value) {
  switch (type) {
  case DType::F16:
    static_cast<uint16_t *>(data)[i] = floatToHalf(value);
    return;
  case DType::BF16:
    static_cast<uint16_t *>(data)[i] = floatToBf16(value);
    return;
  default:
    static_cast<float *>(data)[i] = value;
  }
}

void partition::runtime::convertFloats(const void *src, DType from, void *dst,
                                       DType to, int64_t count) {
  if (from == to) {
    std::memmove(dst, src, count * dtypeSize(from));
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    storeFloat(dst, to, i, loadFloat(src, from, i));
}

std::string partition::runtime::formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}
