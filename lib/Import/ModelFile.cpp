//===- ModelFile.cpp - reading an ONNX model and its tensors --------------===//
//
// The model file and every tensor's bytes (raw, typed fields or external
// data), checked before they are trusted: a truncated or foreign file, a
// size that overflows, external data that would leave the model's
// directory are all reported by name. See the hardening notes of
// docs/design/2026-12-02-onnx-import.md.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "partition/Tools/ToolSupport.h"
#include "partition/runtime/DType.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <google/protobuf/unknown_field_set.h>
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <limits>

using namespace mlir;

namespace partition::import::detail {

LogicalResult Importer::parse() {
  // The tools' one reader of untrusted files: a directory, a device or a
  // FIFO is no model (reading /dev/zero would never end, and opening a FIFO
  // blocks until someone writes to it).
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      partition::readInputFile(path, "model");
  if (!buffer)
    return emitError(UnknownLoc::get(&context))
           << llvm::toString(buffer.takeError());
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty())
    return emitError(fileLoc()) << "the file is empty, not an ONNX model";
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return emitError(fileLoc())
           << "the file has " << bytes.size()
           << " bytes; ONNX models over 2 GiB keep their weights as external "
              "data";
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(fileLoc())
           << "not a valid ONNX model: the protobuf message does not parse ("
           << bytes.size() << " bytes; truncated or not an .onnx file)";
  return checkModel();
}

LogicalResult Importer::checkModel() {
  // protobuf accepts an empty message, and any prefix of a model that ends on
  // a field boundary: require what every exported model has.
  if (model.ir_version() <= 0)
    return emitError(fileLoc())
           << "not a valid ONNX model: no ir_version (truncated or not an "
              ".onnx file)";
  bool found = false;
  for (const onnx::OperatorSetIdProto &id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      found = true;
      opset = id.version();
    }
  }
  if (!found)
    return emitError(fileLoc())
           << "the model imports no 'ai.onnx' opset; partition supports "
              "opsets "
           << kMinOpset << " to " << kMaxOpset;
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc())
           << "the model uses opset " << opset << "; partition supports "
           << kMinOpset << " to " << kMaxOpset
           << (opset < kMinOpset ? " (convert it with "
                                   "onnx.version_converter.convert_version)"
                                 : "");
  if (!model.has_graph() || model.graph().output_size() == 0)
    return emitError(fileLoc())
           << "not a valid ONNX model: it has no graph or the graph has no "
              "outputs (truncated?)";
  return success();
}

LogicalResult Importer::tensorBytes(const onnx::TensorProto &tensor,
                                    std::string &bytes,
                                    const std::string &what) {
  int32_t type = tensor.data_type();
  int64_t elementBytes = elemTypeBytes(type);
  if (elementBytes == 0)
    return emitError(fileLoc())
           << what << " has element type " << elemTypeName(type)
           << ", which partition does not support";
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t d : shape)
    if (d < 0)
      return emitError(fileLoc())
             << what << " has a negative dimension: " << formatShape(shape);
  std::optional<int64_t> elements = checkedNumElements(shape);
  std::optional<int64_t> byteCount =
      elements ? llvm::checkedMul<int64_t>(*elements, elementBytes)
               : std::nullopt;
  if (!byteCount)
    return emitError(fileLoc())
           << what << " of shape " << formatShape(shape)
           << " has more than 2^63 bytes of " << elemTypeName(type);
  int64_t expected = *byteCount;

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return externalBytes(tensor, expected, bytes, what);

  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != expected)
      return emitError(fileLoc())
             << what << " has " << tensor.raw_data().size()
             << " bytes of data, expected " << expected << " for "
             << elemTypeName(type) << formatShape(shape);
    bytes = tensor.raw_data();
    return success();
  }

  int64_t n = *elements;
  bytes.assign(expected, '\0');
  auto mismatch = [&](int64_t have) {
    return emitError(fileLoc())
           << what << " has " << have << " values, expected " << n << " for "
           << elemTypeName(type) << formatShape(shape);
  };
  switch (type) {
  case onnx::TensorProto::FLOAT:
    if (tensor.float_data_size() != n)
      return mismatch(tensor.float_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.float_data().data(), expected);
    return success();
  case onnx::TensorProto::DOUBLE:
    if (tensor.double_data_size() != n)
      return mismatch(tensor.double_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.double_data().data(), expected);
    return success();
  case onnx::TensorProto::INT64:
    if (tensor.int64_data_size() != n)
      return mismatch(tensor.int64_data_size());
    if (expected) // an empty field's data() may be null
      std::memcpy(bytes.data(), tensor.int64_data().data(), expected);
    return success();
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::UINT32:
    if (tensor.uint64_data_size() != n)
      return mismatch(tensor.uint64_data_size());
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = tensor.uint64_data(i);
      std::memcpy(bytes.data() + i * elementBytes, &v, elementBytes);
    }
    return success();
  default:
    // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16: int32_data
    // holds one element per entry (the bits, for the 16-bit floats).
    if (tensor.int32_data_size() != n)
      return mismatch(tensor.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = tensor.int32_data(i);
      std::memcpy(bytes.data() + i * elementBytes, &v, elementBytes);
    }
    return success();
  }
}

LogicalResult Importer::externalBytes(const onnx::TensorProto &tensor,
                                      int64_t expected, std::string &bytes,
                                      const std::string &what) {
  namespace fs = llvm::sys::fs;
  namespace sp = llvm::sys::path;
  std::string location;
  std::optional<int64_t> offset, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    if (entry.key() != "offset" && entry.key() != "length")
      continue;
    int64_t value;
    if (StringRef(entry.value()).getAsInteger(10, value) || value < 0)
      return emitError(fileLoc())
             << what << ": external data " << entry.key() << " '"
             << printable(entry.value()) << "' is not a non-negative integer";
    (entry.key() == "offset" ? offset : length) = value;
  }
  auto bad = [&](const Twine &why) {
    return emitError(fileLoc()) << what << ": external data location '"
                                << printable(location) << "' " << why;
  };
  if (location.empty())
    return bad("is empty");
  if (StringRef(location).contains('\0'))
    return bad("has a NUL byte");
  if (sp::is_absolute(location) || location.front() == '/')
    return bad("is an absolute path; it must be relative to the model's "
               "directory");
  for (auto it = sp::begin(location), e = sp::end(location); it != e; ++it)
    if (*it == "..")
      return bad("has a '..' component; it must stay inside the model's "
                 "directory");

  // Resolve links, then require the file inside the model's directory.
  SmallString<256> dir(sp::parent_path(path));
  if (dir.empty())
    dir = ".";
  SmallString<256> realDir, file(dir), realFile;
  sp::append(file, location);
  // One message for every way reading can fail (a missing file, or the
  // directory or file changing under the importer).
  auto cannotRead = [&](std::error_code ec) {
    return emitError(fileLoc()) << what << ": cannot read external data "
                                << file << ": " << ec.message();
  };
  if (std::error_code ec = fs::real_path(dir, realDir))
    return cannotRead(ec);
  if (std::error_code ec = fs::real_path(file, realFile))
    return cannotRead(ec);
  StringRef inside = realFile;
  if (!inside.consume_front(realDir) || inside.empty() ||
      !sp::is_separator(inside.front()))
    return bad("resolves to " + realFile + ", outside the model's directory " +
               realDir);
  fs::file_status status;
  if (std::error_code ec = fs::status(realFile, status))
    return cannotRead(ec);
  if (status.type() != fs::file_type::regular_file)
    return bad("is not a regular file");
  uint64_t size = status.getSize();
  uint64_t from = offset.value_or(0);
  if (from > size)
    return emitError(fileLoc())
           << what << ": external data " << file << " has " << size
           << " bytes; offset " << from << " is past its end";
  uint64_t count = length ? static_cast<uint64_t>(*length) : size - from;
  if (count != static_cast<uint64_t>(expected) || count > size - from)
    return emitError(fileLoc())
           << what << ": external data " << file << " at offset " << from
           << " with length " << count << " does not hold the " << expected
           << " bytes of " << elemTypeName(tensor.data_type())
           << formatShape(Shape(tensor.dims().begin(), tensor.dims().end()))
           << " (file size " << size << ")";
  auto buffer = llvm::MemoryBuffer::getFileSlice(realFile, count, from);
  if (!buffer)
    return cannotRead(buffer.getError());
  bytes.assign((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  return success();
}

/// Element `i` of little-endian `T`s at `p`, as a double.
template <typename T>
double loadAs(const char *p, int64_t i) {
  T x;
  std::memcpy(&x, p + sizeof(T) * i, sizeof(T));
  return static_cast<double>(x);
}

FailureOr<HostTensor> Importer::toHost(const onnx::TensorProto &tensor,
                                       const std::string &what) {
  std::string bytes;
  if (failed(tensorBytes(tensor, bytes, what)))
    return failure();
  HostTensor host;
  host.elemType = tensor.data_type();
  host.shape.assign(tensor.dims().begin(), tensor.dims().end());
  // tensorBytes accepted the type, so it is one of these.
  double (*load)(const char *, int64_t) = nullptr;
  switch (host.elemType) {
  case onnx::TensorProto::FLOAT:
    load = loadAs<float>;
    break;
  case onnx::TensorProto::DOUBLE:
    load = loadAs<double>;
    break;
  case onnx::TensorProto::FLOAT16:
    load = [](const char *p, int64_t i) {
      return static_cast<double>(
          runtime::halfToFloat(static_cast<uint16_t>(loadAs<uint16_t>(p, i))));
    };
    break;
  case onnx::TensorProto::BFLOAT16:
    load = [](const char *p, int64_t i) {
      return static_cast<double>(
          runtime::bf16ToFloat(static_cast<uint16_t>(loadAs<uint16_t>(p, i))));
    };
    break;
  case onnx::TensorProto::INT64:
    load = loadAs<int64_t>;
    break;
  case onnx::TensorProto::UINT64:
    load = loadAs<uint64_t>;
    break;
  case onnx::TensorProto::INT32:
    load = loadAs<int32_t>;
    break;
  case onnx::TensorProto::UINT32:
    load = loadAs<uint32_t>;
    break;
  case onnx::TensorProto::INT16:
    load = loadAs<int16_t>;
    break;
  case onnx::TensorProto::UINT16:
    load = loadAs<uint16_t>;
    break;
  case onnx::TensorProto::INT8:
    load = loadAs<int8_t>;
    break;
  default: // UINT8, BOOL
    load = loadAs<uint8_t>;
    break;
  }
  int64_t n = numElements(host.shape);
  host.values.resize(n);
  for (int64_t i = 0; i < n; ++i)
    host.values[i] = load(bytes.data(), i);
  return host;
}

std::map<std::string, std::string>
unknownMetadataProps(const google::protobuf::Message &message,
                     int fieldNumber) {
  // Newer ONNX writers put metadata_props on nodes, graphs and tensors; the
  // protobuf classes built from an older onnx.proto keep them as unknown
  // fields, each a serialized StringStringEntryProto.
  std::map<std::string, std::string> props;
  const google::protobuf::UnknownFieldSet &fields =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField &field = fields.field(i);
    if (field.number() != fieldNumber ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()))
      props[entry.key()] = entry.value();
  }
  return props;
}

} // namespace partition::import::detail
