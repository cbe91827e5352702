//===- DType.h - element types and their conversions ------------*- C++ -*-===//

#ifndef PARTITION_RUNTIME_DTYPE_H
#define PARTITION_RUNTIME_DTYPE_H

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
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

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
