//===- DType.h - element types and their conversions ------------*- C++ -*-===//
//
// The element types of runtime tensors, their byte sizes and the f16 / bf16
// <-> f32 conversions. The compiler uses these same definitions (plan value
// sizes, weight data), so this header stays plain C++: no MLIR, no
// FlatBuffers, nothing to link for the inline parts.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_DTYPE_H
#define PARTITION_RUNTIME_DTYPE_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace partition::runtime {

/// Element types of runtime tensors; values match plan::DType.
enum class DType : uint8_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4 };

/// Bytes per element.
inline int64_t dtypeSize(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  }
  return 0;
}

/// "f32", "f16", "bf16", "i32", "i64".
const char *dtypeName(DType type);

/// True for f32, f16 and bf16.
inline bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16;
}

/// IEEE binary16 <-> float, round to nearest even, with infinities, NaN and
/// subnormals.
inline float halfToFloat(uint16_t h) {
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

inline uint16_t floatToHalf(float f) {
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

/// bfloat16 <-> float; float to bf16 rounds to nearest even, NaN stays NaN.
inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet NaN
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

/// Reads element `i` of float memory of type `type` as f32.
float loadFloat(const void *data, DType type, int64_t i);
/// Stores `value` as element `i` of float memory of type `type`, rounding
/// to nearest even.
void storeFloat(void *data, DType type, int64_t i, float value);

/// Converts `count` float elements of type `from` at `src` into type `to` at
/// `dst` (through f32, rounding to nearest even). Both types must be float.
void convertFloats(const void *src, DType from, void *dst, DType to,
                   int64_t count);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_DTYPE_H
