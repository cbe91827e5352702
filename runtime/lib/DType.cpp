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

float partition::runtime::halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int shift = 0;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        ++shift;
      }
      mantissa &= 0x3ffu;
      bits = sign | static_cast<uint32_t>(127 - 15 + 1 - shift) << 23 |
             mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t partition::runtime::floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits >= 0x7f800000u) // inf or NaN
    return sign | 0x7c00u | (absBits > 0x7f800000u ? 0x200u : 0u);
  if (absBits >= 0x477ff000u) // rounds to >= 65520: overflow to inf
    return sign | 0x7c00u;
  if (absBits < 0x38800000u) { // below the smallest normal half: subnormal
    // Value in units of 2^-24, rounded to nearest even.
    float a;
    std::memcpy(&a, &absBits, 4);
    float scaled = a * 16777216.0f; // 2^24
    uint32_t rounded = static_cast<uint32_t>(std::nearbyint(scaled));
    return sign | static_cast<uint16_t>(rounded);
  }
  uint32_t mantissa = absBits & 0x7fffffu;
  uint32_t exponent = (absBits >> 23) - 127 + 15;
  uint32_t half = exponent << 10 | mantissa >> 13;
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // may carry into the exponent, which is still correct
  return sign | static_cast<uint16_t>(half);
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
