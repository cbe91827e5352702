//===- Npy.cpp - read and write NumPy .npy files --------------------------===//
//
// The header is a Python dict literal; the parser accepts the subset NumPy
// writes (and that np.load evaluates): single- or double-quoted strings
// without escapes, True/False, tuples of non-negative decimal integers, any
// whitespace, trailing commas. Anything else is an error naming the file and
// the byte where parsing stopped.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Npy.h"

#include "FileIO.h"
#include "partition/runtime/Files.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

using namespace partition::runtime;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the file readers assume a little-endian host");

/// "\x93NUMPY".
static const char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicBytes = 6;
/// Largest header accepted (NumPy's np.load stops at 10000 by default).
static constexpr uint64_t kMaxHeaderBytes = 1 << 20;
/// Rank limit shared with the safetensors reader (NumPy 2's NPY_MAXDIMS).
static constexpr size_t kMaxRank = 64;
/// NumPy leaves room for this many digits of the first dimension so the
/// header can be rewritten in place when the array grows.
static constexpr size_t kGrowthAxisMaxDigits = 21;
/// NumPy aligns the data to this many bytes.
static constexpr size_t kArrayAlign = 64;

const char *partition::runtime::npyDescr(DType type) {
  switch (type) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::BF16:
    return nullptr;
  }
  return nullptr;
}

/// A header fragment fit for a message: printable ASCII, cut when long.
static std::string printable(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < 60; ++i) {
    unsigned char c = text[i];
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (text.size() > 60)
    out += "...";
  return out;
}

//===----------------------------------------------------------------------===//
// Header parser
//===----------------------------------------------------------------------===//

namespace {

/// Parses the dict literal of a header.
class DictParser {
public:
  DictParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  template <typename... Args>
  Status error(Args &&...args) const {
    return PARTITION_ERROR(InvalidArgument, path, ": invalid .npy header at ",
                           "byte ", pos, ": ", std::forward<Args>(args)...);
  }

  void skipWhitespace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  bool isDigit() const { return peek() >= '0' && peek() <= '9'; }

  Status expect(char c, const char *context) {
    if (peek() != c)
      return error("expected '", c, "' ", context);
    ++pos;
    return Status::ok();
  }

  /// A quoted string without escapes.
  Status parseString(std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return error("expected a quoted string");
    size_t start = ++pos;
    while (!atEnd() && text[pos] != quote) {
      if (text[pos] == '\\')
        return error("escape sequences are not supported in strings");
      if (text[pos] == '\n')
        return error("unterminated string");
      ++pos;
    }
    if (atEnd())
      return error("unterminated string");
    out = text.substr(start, pos - start);
    ++pos;
    return Status::ok();
  }

  /// True or False.
  Status parseBool(bool &out) {
    for (const auto &[word, value] :
         {std::pair<const char *, bool>{"True", true},
          std::pair<const char *, bool>{"False", false}}) {
      size_t length = std::strlen(word);
      if (text.compare(pos, length, word) == 0) {
        size_t end = pos + length;
        if (end < text.size() &&
            (std::isalnum(static_cast<unsigned char>(text[end])) ||
             text[end] == '_'))
          break;
        pos = end;
        out = value;
        return Status::ok();
      }
    }
    return error("'fortran_order' must be True or False");
  }

  /// A tuple of non-negative integers: (), (n,), (n, m), (n, m,).
  Status parseShape(std::vector<int64_t> &out) {
    out.clear();
    if (peek() != '(')
      return error("'shape' must be a tuple");
    ++pos;
    skipWhitespace();
    bool sawComma = false;
    while (peek() != ')') {
      if (out.size() == kMaxRank)
        return error("'shape' has more than ", kMaxRank, " dimensions");
      if (peek() == '-')
        return error("'shape' has a negative dimension");
      if (!isDigit())
        return error(atEnd() ? "unterminated tuple"
                             : "'shape' must hold non-negative integers");
      size_t start = pos;
      int64_t value = 0;
      while (isDigit()) {
        int digit = text[pos] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return error("dimension ", printable(text.substr(start, 30)),
                       " is too large");
        value = value * 10 + digit;
        ++pos;
      }
      if (pos - start > 1 && text[start] == '0')
        return error("dimension with a leading zero");
      if (peek() == 'L') // written by Python 2
        ++pos;
      out.push_back(value);
      skipWhitespace();
      if (peek() == ',') {
        sawComma = true;
        ++pos;
        skipWhitespace();
        continue;
      }
      if (peek() != ')')
        return error(atEnd() ? "unterminated tuple"
                             : "expected ',' or ')' in 'shape'");
    }
    if (out.size() == 1 && !sawComma)
      return error("'shape' (", out[0],
                   ") is not a tuple; a 1-tuple is "
                   "written (",
                   out[0], ",)");
    ++pos;
    return Status::ok();
  }

  const std::string &text;
  const std::string &path;
  size_t pos = 0;
};

} // namespace

/// The DType for a descr, or an error saying why it is not supported.
/// Booleans ('|b1') are read as I32 0 / 1 (`isBool`).
static StatusOr<DType> parseDescr(const std::string &descr,
                                  const std::string &path, bool &isBool) {
  isBool = descr == "|b1";
  if (isBool)
    return DType::I32;
  for (DType type : {DType::F32, DType::F16, DType::I32, DType::I64})
    if (descr == npyDescr(type))
      return type;
  if (!descr.empty() && descr[0] == '>')
    return PARTITION_ERROR(InvalidArgument, path, ": descr '", printable(descr),
                           "' is big-endian; only little-endian data is "
                           "supported (save arr.astype('<",
                           printable(descr.substr(1)), "'))");
  return PARTITION_ERROR(InvalidArgument, path, ": descr '", printable(descr),
                         "' is not supported (supported: '<f4', '<f2', "
                         "'<i4', '<i8', '|b1'; bf16 data is passed as "
                         "safetensors)");
}

/// Booleans, one byte each (nonzero is true), as 0 / 1 of `to`.
static void widenBools(const uint8_t *src, int64_t n, DType to, void *dst) {
  for (int64_t i = 0; i < n; ++i) {
    bool v = src[i] != 0;
    switch (to) {
    case DType::F32:
      static_cast<float *>(dst)[i] = v ? 1.0f : 0.0f;
      break;
    case DType::F16:
      static_cast<uint16_t *>(dst)[i] = floatToHalf(v ? 1.0f : 0.0f);
      break;
    case DType::BF16:
      static_cast<uint16_t *>(dst)[i] = floatToBf16(v ? 1.0f : 0.0f);
      break;
    case DType::I32:
      static_cast<int32_t *>(dst)[i] = v;
      break;
    case DType::I64:
      static_cast<int64_t *>(dst)[i] = v;
      break;
    }
  }
}

/// Reads the data of the file `info` describes into `dst` as `dtype`
/// (booleans widened; otherwise `dtype` is the file's).
static Status readData(int fd, const std::string &path, const NpyInfo &info,
                       DType dtype, void *dst) {
  if (!info.boolData)
    return detail::preadFully(fd, path, info.dataOffset, dst, info.numBytes);
  std::vector<uint8_t> bools(info.dataBytes);
  PARTITION_RETURN_IF_ERROR(detail::preadFully(fd, path, info.dataOffset,
                                               bools.data(), info.dataBytes));
  widenBools(bools.data(), info.dataBytes, dtype, dst);
  return Status::ok();
}

/// Checks the preamble in `bytes` (at least its first 12 bytes, or the whole
/// file when shorter) against the file's size and returns the preamble's
/// size and the header's.
static Status parsePreamble(const std::string &bytes, uint64_t size,
                            const std::string &path, uint64_t &preamble,
                            uint64_t &headerBytes, int &major) {
  if (size < 10 || bytes.size() < 10)
    return PARTITION_ERROR(InvalidArgument, path, ": file has ", size,
                           " bytes, too few for a .npy preamble");
  if (bytes.compare(0, kMagicBytes, kMagic, kMagicBytes) != 0)
    return PARTITION_ERROR(InvalidArgument, path,
                           ": not a .npy file (no \\x93NUMPY magic)");
  major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return PARTITION_ERROR(InvalidArgument, path, ": .npy version ", major, ".",
                           minor,
                           " is not supported (supported: 1.0, 2.0, 3.0)");
  preamble = major == 1 ? 10 : 12;
  if (size < preamble || bytes.size() < preamble)
    return PARTITION_ERROR(InvalidArgument, path, ": file has ", size,
                           " bytes, too few for a version ", major,
                           ".0 preamble of ", preamble, " bytes");
  headerBytes = 0;
  for (uint64_t i = preamble; i-- > 8;)
    headerBytes = headerBytes << 8 | static_cast<unsigned char>(bytes[i]);
  if (headerBytes > kMaxHeaderBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": header length ",
                           headerBytes, " exceeds the limit of ",
                           kMaxHeaderBytes, " bytes");
  if (headerBytes > size - preamble)
    return PARTITION_ERROR(InvalidArgument, path, ": header length ",
                           headerBytes, " but only ", size - preamble,
                           " bytes follow the preamble");
  return Status::ok();
}

StatusOr<NpyInfo> partition::runtime::parseNpyHeader(const std::string &bytes,
                                                     int64_t fileBytes,
                                                     const std::string &path) {
  if (fileBytes < 0)
    fileBytes = static_cast<int64_t>(bytes.size());
  uint64_t size = static_cast<uint64_t>(fileBytes);
  uint64_t preamble = 0, headerBytes = 0;
  int major = 0;
  PARTITION_RETURN_IF_ERROR(
      parsePreamble(bytes, size, path, preamble, headerBytes, major));
  if (bytes.size() < preamble + headerBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": ", bytes.size(),
                           " bytes given, fewer than the ",
                           preamble + headerBytes,
                           " bytes of the preamble and header");

  std::string header = bytes.substr(preamble, headerBytes);
  DictParser parser(header, path);
  parser.skipWhitespace();
  PARTITION_RETURN_IF_ERROR(parser.expect('{', "at the start of the header"));
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
  parser.skipWhitespace();
  while (parser.peek() != '}') {
    std::string key;
    PARTITION_RETURN_IF_ERROR(parser.parseString(key));
    parser.skipWhitespace();
    PARTITION_RETURN_IF_ERROR(parser.expect(':', "after a key"));
    parser.skipWhitespace();
    if (key == "descr") {
      if (descr)
        return parser.error("'descr' appears twice");
      if (parser.peek() == '[')
        return parser.error("structured dtypes are not supported");
      descr.emplace();
      PARTITION_RETURN_IF_ERROR(parser.parseString(*descr));
    } else if (key == "fortran_order") {
      if (fortranOrder)
        return parser.error("'fortran_order' appears twice");
      fortranOrder.emplace();
      PARTITION_RETURN_IF_ERROR(parser.parseBool(*fortranOrder));
    } else if (key == "shape") {
      if (shape)
        return parser.error("'shape' appears twice");
      shape.emplace();
      PARTITION_RETURN_IF_ERROR(parser.parseShape(*shape));
    } else {
      return parser.error("unknown key '", printable(key),
                          "' (expected 'descr', 'fortran_order', 'shape')");
    }
    parser.skipWhitespace();
    if (parser.peek() == ',') {
      ++parser.pos;
      parser.skipWhitespace();
    } else if (parser.peek() != '}') {
      return parser.error(parser.atEnd() ? "unterminated dict"
                                         : "expected ',' or '}'");
    }
  }
  ++parser.pos;
  parser.skipWhitespace();
  if (!parser.atEnd())
    return parser.error("unexpected data after the dict");
  if (!descr || !fortranOrder || !shape)
    return PARTITION_ERROR(InvalidArgument, path, ": .npy header has no '",
                           !descr          ? "descr"
                           : !fortranOrder ? "fortran_order"
                                           : "shape",
                           "'");

  bool isBool = false;
  PARTITION_ASSIGN_OR_RETURN(DType dtype, parseDescr(*descr, path, isBool));
  if (*fortranOrder)
    return PARTITION_ERROR(InvalidArgument, path,
                           ": array is in Fortran order; only C order is "
                           "supported (save np.ascontiguousarray(arr))");
  const char *typeName = isBool ? "bool" : dtypeName(dtype);
  // Read booleans are widened to i32: both sizes must fit.
  std::optional<int64_t> numBytes =
      detail::checkedByteSize(*shape, dtypeSize(dtype));
  std::optional<int64_t> storedBytes =
      isBool ? detail::checkedByteSize(*shape, 1) : numBytes;
  if (!numBytes || !storedBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": shape ",
                           formatShape(*shape), " of ", typeName,
                           " has a size in bytes that overflows 64 bits");
  uint64_t dataOffset = preamble + headerBytes;
  uint64_t dataBytes = size - dataOffset;
  if (dataBytes != static_cast<uint64_t>(*storedBytes))
    return PARTITION_ERROR(InvalidArgument, path, ": shape ",
                           formatShape(*shape), " of ", typeName, " needs ",
                           *storedBytes,
                           " bytes of data but the file "
                           "has ",
                           dataBytes);
  NpyInfo info;
  info.dtype = dtype;
  info.boolData = isBool;
  info.shape = std::move(*shape);
  info.majorVersion = major;
  info.dataOffset = static_cast<int64_t>(dataOffset);
  info.numBytes = *numBytes;
  info.dataBytes = *storedBytes;
  return info;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {

/// A file descriptor closed on scope exit.
struct FileCloser {
  int fd = -1;
  ~FileCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

} // namespace

/// Opens `path` and reads and checks its header.
static Status openNpy(const std::string &path, FileCloser &file,
                      NpyInfo &info) {
  PARTITION_ASSIGN_OR_RETURN(RegularFile opened,
                             RegularFile::open(path, ".npy file"));
  uint64_t size = opened.size();
  file.fd = opened.release();
  // The preamble first, then the header it announces.
  std::string bytes(std::min<uint64_t>(size, 12), '\0');
  PARTITION_RETURN_IF_ERROR(
      detail::preadFully(file.fd, path, 0, bytes.data(), bytes.size()));
  uint64_t preamble = 0, headerBytes = 0;
  int major = 0;
  PARTITION_RETURN_IF_ERROR(
      parsePreamble(bytes, size, path, preamble, headerBytes, major));
  bytes.resize(preamble + headerBytes);
  PARTITION_RETURN_IF_ERROR(
      detail::preadFully(file.fd, path, 0, bytes.data(), bytes.size()));
  StatusOr<NpyInfo> parsed =
      parseNpyHeader(bytes, static_cast<int64_t>(size), path);
  if (!parsed.isOk())
    return parsed.status();
  info = std::move(parsed).value();
  return Status::ok();
}

StatusOr<NpyInfo> partition::runtime::readNpyInfo(const std::string &path) {
  FileCloser file;
  NpyInfo info;
  PARTITION_RETURN_IF_ERROR(openNpy(path, file, info));
  return info;
}

Status partition::runtime::readNpy(const std::string &path, void *dst,
                                   int64_t dstBytes, NpyInfo *infoOut) {
  FileCloser file;
  NpyInfo info;
  PARTITION_RETURN_IF_ERROR(openNpy(path, file, info));
  if (dstBytes != info.numBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": array of shape ",
                           formatShape(info.shape), " of ",
                           dtypeName(info.dtype), " has ", info.numBytes,
                           " bytes but the destination has ", dstBytes);
  if (info.numBytes && !dst)
    return PARTITION_ERROR(InvalidArgument, path, ": null destination");
  PARTITION_RETURN_IF_ERROR(readData(file.fd, path, info, info.dtype, dst));
  if (infoOut)
    *infoOut = std::move(info);
  return Status::ok();
}

Status partition::runtime::readNpy(const std::string &path,
                                   const TensorRef &dst) {
  FileCloser file;
  NpyInfo info;
  PARTITION_RETURN_IF_ERROR(openNpy(path, file, info));
  // Booleans become 0 / 1 of whatever the destination holds.
  if ((!info.boolData && dst.dtype != info.dtype) || dst.shape != info.shape)
    return PARTITION_ERROR(InvalidArgument, path, ": array is ",
                           formatShape(info.shape), " of ",
                           info.boolData ? "bool" : dtypeName(info.dtype),
                           " but the destination is ", formatShape(dst.shape),
                           " of ", dtypeName(dst.dtype));
  if (info.numBytes && !dst.data)
    return PARTITION_ERROR(InvalidArgument, path, ": null destination");
  return readData(file.fd, path, info, dst.dtype, dst.data);
}

StatusOr<NpyArray> partition::runtime::readNpy(const std::string &path) {
  FileCloser file;
  NpyInfo info;
  PARTITION_RETURN_IF_ERROR(openNpy(path, file, info));
  NpyArray array;
  array.dtype = info.dtype;
  array.shape = info.shape;
  array.data.resize(info.numBytes);
  PARTITION_RETURN_IF_ERROR(
      readData(file.fd, path, info, info.dtype, array.data.data()));
  return array;
}

StatusOr<NpyArray> partition::runtime::parseNpy(const std::string &bytes,
                                                const std::string &name) {
  PARTITION_ASSIGN_OR_RETURN(NpyInfo info, parseNpyHeader(bytes, -1, name));
  NpyArray array;
  array.dtype = info.dtype;
  array.shape = std::move(info.shape);
  const char *data = bytes.data() + info.dataOffset;
  if (!info.boolData) {
    array.data.assign(data, data + info.numBytes);
    return array;
  }
  array.data.resize(info.numBytes);
  widenBools(reinterpret_cast<const uint8_t *>(data), info.dataBytes,
             info.dtype, array.data.data());
  return array;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// The preamble and header NumPy writes for a C-order array.
static StatusOr<std::string>
npyHeader(DType dtype, const std::vector<int64_t> &shape, int64_t &numBytes) {
  const char *descr = npyDescr(dtype);
  if (!descr)
    return PARTITION_ERROR(Unimplemented, dtypeName(dtype),
                           " has no .npy type; pass ", dtypeName(dtype),
                           " data as safetensors");
  if (shape.size() > kMaxRank)
    return PARTITION_ERROR(InvalidArgument, "shape ", formatShape(shape),
                           " has more than ", kMaxRank, " dimensions");
  std::optional<int64_t> bytes =
      detail::checkedByteSize(shape, dtypeSize(dtype));
  if (!bytes)
    return PARTITION_ERROR(InvalidArgument, "invalid shape ",
                           formatShape(shape));
  numBytes = *bytes;

  // Python's repr of the shape tuple.
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    tuple += (i ? ", " : "") + std::to_string(shape[i]);
  tuple += shape.size() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': " + tuple + ", }";
  if (!shape.empty())
    dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');

  // Version 1.0 unless the header needs a 4-byte length.
  for (int major : {1, 2}) {
    size_t preamble = major == 1 ? 10 : 12;
    size_t unpadded = preamble + dict.size() + 1; // + '\n'
    size_t padding = kArrayAlign - unpadded % kArrayAlign;
    uint64_t headerBytes = dict.size() + padding + 1;
    if (major == 1 && headerBytes > 0xffff)
      continue;
    std::string out(kMagic, kMagicBytes);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < preamble - 8; ++i)
      out += static_cast<char>((headerBytes >> (8 * i)) & 0xff);
    out += dict;
    out.append(padding, ' ');
    out += '\n';
    return out;
  }
  return PARTITION_ERROR(Internal, "unreachable");
}

StatusOr<std::string>
partition::runtime::serializeNpy(DType dtype, const std::vector<int64_t> &shape,
                                 const void *data) {
  int64_t numBytes = 0;
  PARTITION_ASSIGN_OR_RETURN(std::string bytes,
                             npyHeader(dtype, shape, numBytes));
  if (numBytes && !data)
    return PARTITION_ERROR(InvalidArgument, "no data for shape ",
                           formatShape(shape));
  if (numBytes)
    bytes.append(static_cast<const char *>(data), numBytes);
  return bytes;
}

Status partition::runtime::writeNpy(const std::string &path, DType dtype,
                                    const std::vector<int64_t> &shape,
                                    const void *data) {
  int64_t numBytes = 0;
  StatusOr<std::string> header = npyHeader(dtype, shape, numBytes);
  if (!header.isOk())
    return header.status().withContext(path);
  if (numBytes && !data)
    return PARTITION_ERROR(InvalidArgument, path, ": no data for shape ",
                           formatShape(shape));
  return detail::writeReplacing(path, [&](int fd, const std::string &) {
    PARTITION_RETURN_IF_ERROR(
        detail::writeFully(fd, path, header->data(), header->size()));
    return detail::writeFully(fd, path, data, uint64_t(numBytes));
  });
}

Status partition::runtime::writeNpy(const std::string &path,
                                    const TensorRef &tensor) {
  return writeNpy(path, tensor.dtype, tensor.shape, tensor.data);
}
