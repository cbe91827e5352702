//===- Npy.h - read and write NumPy .npy files ------------------*- C++ -*-===//
//
// .npy holds one array: the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a
// little-endian header length (2 bytes in 1.0, 4 in 2.0 and 3.0), a header
// that is a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', then the data.
//
// The runtime reads and writes C-order little-endian arrays of '<f4' (f32),
// '<f2' (f16), '<i4' (i32) and '<i8' (i64), and reads '|b1' (bool: an ONNX
// attention mask) as i32 0 / 1, the runtime having no bool type (into a
// TensorRef, as 0 / 1 of its dtype). Fortran order, big-endian data
// and every other descr are rejected with an error saying so, as is a file
// whose data is not exactly product(shape) * itemsize bytes. bf16 has no .npy
// type (NumPy has no bfloat16): bf16 inputs and outputs are passed as
// safetensors only, and writing a bf16 tensor as .npy is an error.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_NPY_H
#define PARTITION_RUNTIME_NPY_H

#include "partition/runtime/DType.h"
#include "partition/runtime/Status.h"
#include "partition/runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace partition::runtime {

/// The .npy descr of `type` ("<f4", "<f2", "<i4", "<i8"), or nullptr for bf16.
const char *npyDescr(DType type);

/// What the header of a .npy file says.
struct NpyInfo {
  /// Element type, from 'descr'. Booleans ('|b1') are read as I32 0 / 1,
  /// the type `part` gives them (or, into a TensorRef, as its dtype).
  DType dtype = DType::F32;
  /// Whether the file holds booleans ('|b1', one byte each, nonzero true).
  bool boolData = false;
  /// Shape, row-major (C order).
  std::vector<int64_t> shape;
  /// Format version: 1, 2 or 3 (the minor version is always 0).
  int majorVersion = 1;
  /// Offset of the first data byte from the start of the file.
  int64_t dataOffset = 0;
  /// Size of the array in bytes once read: product(shape) *
  /// dtypeSize(dtype).
  int64_t numBytes = 0;
  /// Size of the data in the file: numBytes, or product(shape) for booleans.
  int64_t dataBytes = 0;

  /// product(shape).
  int64_t numElements() const { return numBytes / dtypeSize(dtype); }
};

/// An array read from a .npy file, owning its data.
struct NpyArray {
  /// Element type.
  DType dtype = DType::F32;
  /// Shape, row-major (C order).
  std::vector<int64_t> shape;
  /// product(shape) * dtypeSize(dtype) bytes, little-endian.
  std::vector<uint8_t> data;

  /// A view of the data, valid while this array lives and is not resized.
  TensorRef ref() {
    TensorRef tensor;
    tensor.data = data.data();
    tensor.dtype = dtype;
    tensor.shape = shape;
    return tensor;
  }
};

/// Parses and validates the header of a .npy file held in `bytes` (at least
/// the header; the whole file when `fileBytes` is -1). `fileBytes` is the
/// size of the whole file, checked against the header's shape and dtype.
/// `name` stands for the path in error messages.
StatusOr<NpyInfo> parseNpyHeader(const std::string &bytes, int64_t fileBytes,
                                 const std::string &name);

/// Reads only the header of the .npy file at `path`.
StatusOr<NpyInfo> readNpyInfo(const std::string &path);
/// Reads the .npy file at `path` into `dst`, whose dtype and shape must be
/// those of the file (booleans become 0 / 1 of any dtype).
Status readNpy(const std::string &path, const TensorRef &dst);
/// Reads the .npy file at `path` into `dst`, which holds exactly `dstBytes`
/// bytes; `info`, when given, receives the header.
Status readNpy(const std::string &path, void *dst, int64_t dstBytes,
               NpyInfo *info = nullptr);
/// Reads the .npy file at `path` into an owned array.
StatusOr<NpyArray> readNpy(const std::string &path);
/// Parses a whole .npy file held in memory.
StatusOr<NpyArray> parseNpy(const std::string &bytes,
                            const std::string &name = "<memory>");

/// The bytes of a version 1.0 .npy file (2.0 when the header needs more than
/// 65535 bytes) holding `shape` elements of `dtype` from `data`, with the
/// header padded so that the data starts at a multiple of 64 bytes, as NumPy
/// writes it. Unimplemented for bf16.
StatusOr<std::string>
serializeNpy(DType dtype, const std::vector<int64_t> &shape, const void *data);
/// Writes a .npy file (removing it again if writing fails).
Status writeNpy(const std::string &path, DType dtype,
                const std::vector<int64_t> &shape, const void *data);
/// Writes `tensor` as a .npy file.
Status writeNpy(const std::string &path, const TensorRef &tensor);

} // namespace partition::runtime

#endif // PARTITION_RUNTIME_NPY_H
