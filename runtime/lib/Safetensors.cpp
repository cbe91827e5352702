//===- Safetensors.cpp - read and write safetensors files -----------------===//
//
// The header is parsed by a small strict JSON parser that knows the schema:
// it accepts exactly RFC 8259 JSON (UTF-8, escapes, surrogate pairs, number
// grammar) but only in the shape of a safetensors header, so it never builds
// a tree and needs no recursion. Every value that reaches the validation is
// range-checked before it is used in arithmetic.
//
//===----------------------------------------------------------------------===//

#include "partition/runtime/Safetensors.h"

#include "FileIO.h"
#include "Json.h"
#include "partition/runtime/Files.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <numeric>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

using namespace partition::runtime;

// Data is stored little-endian and copied without conversion.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the file readers assume a little-endian host");

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

const char *partition::runtime::safetensorsDTypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  }
  return "?";
}

std::optional<DType>
partition::runtime::parseSafetensorsDType(const std::string &name) {
  for (DType type :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64})
    if (name == safetensorsDTypeName(type))
      return type;
  return std::nullopt;
}

/// Element size of a dtype the safetensors format defines, or 0 for a name it
/// does not define (or one with sub-byte elements).
static int64_t safetensorsElementBytes(const std::string &name) {
  static const std::pair<const char *, int64_t> kKnown[] = {
      {"BOOL", 1},    {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"F8_E8M0", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},     {"BF16", 2},
      {"I32", 4},     {"U32", 4}, {"F32", 4}, {"F64", 8},     {"I64", 8},
      {"U64", 8},     {"C64", 8}};
  for (const auto &[known, bytes] : kKnown)
    if (name == known)
      return bytes;
  return 0;
}

static const char *kSupportedDTypes = "F32, F16, BF16, I32, I64";

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// The name as it appears in messages: quoted, control bytes escaped, and cut
/// when very long.
static std::string quoted(const std::string &name) {
  std::string text = "\"";
  size_t limit = std::min<size_t>(name.size(), 200);
  for (size_t i = 0; i < limit; ++i) {
    unsigned char c = name[i];
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      text += "\\x";
      text += hex[c >> 4];
      text += hex[c & 15];
    } else if (c == '"' || c == '\\') {
      text += '\\';
      text += static_cast<char>(c);
    } else {
      text += static_cast<char>(c);
    }
  }
  if (limit < name.size())
    text += "...";
  return text + "\"";
}

/// Length of the well-formed UTF-8 sequence at `text[pos]`, or 0 when it is
/// malformed (overlong forms, surrogates and code points above U+10FFFF
/// included).
static size_t utf8SequenceLength(const std::string &text, size_t pos) {
  auto byte = [&](size_t i) -> unsigned {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0x100u;
  };
  auto isCont = [&](size_t i) { return (byte(i) & 0xc0u) == 0x80u; };
  unsigned c = byte(pos);
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    return isCont(pos + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    unsigned c1 = byte(pos + 1);
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f))
      return 0; // overlong, or a UTF-16 surrogate
    return isCont(pos + 1) && isCont(pos + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    unsigned c1 = byte(pos + 1);
    if ((c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f))
      return 0; // overlong, or above U+10FFFF
    return isCont(pos + 1) && isCont(pos + 2) && isCont(pos + 3) ? 4 : 0;
  }
  return 0;
}

/// Offset of the first byte of `text` that is not well-formed UTF-8, or npos.
static size_t findInvalidUtf8(const std::string &text) {
  for (size_t pos = 0; pos < text.size();) {
    size_t length = utf8SequenceLength(text, pos);
    if (!length)
      return pos;
    pos += length;
  }
  return std::string::npos;
}

//===----------------------------------------------------------------------===//
// Header parser
//===----------------------------------------------------------------------===//

namespace {

/// A strict JSON reader over the header text, driven by the safetensors
/// schema. Each parse method starts at the first byte of a value (whitespace
/// already skipped) and stops after it.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  /// An error in the JSON syntax, at the current position.
  template <typename... Args>
  Status syntaxError(Args &&...args) const {
    return PARTITION_ERROR(InvalidArgument, path,
                           ": invalid JSON in header at byte ", pos, ": ",
                           std::forward<Args>(args)...);
  }
  /// An error in the header's content.
  template <typename... Args>
  Status contentError(Args &&...args) const {
    return PARTITION_ERROR(InvalidArgument, path, ": ",
                           std::forward<Args>(args)...);
  }

  void skipWhitespace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  /// What kind of value starts here, for "got ..." in messages.
  const char *describeValue() const {
    switch (peek()) {
    case '"':
      return "a string";
    case '{':
      return "an object";
    case '[':
      return "an array";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return "a number";
      return atEnd() ? "the end of the header" : "an invalid token";
    }
  }

  Status expect(char c) {
    if (peek() != c) {
      if (atEnd())
        return syntaxError("expected '", c, "' but the header ends");
      return syntaxError("expected '", c, "'");
    }
    ++pos;
    return Status::ok();
  }

  /// Parses a JSON string (the text is known to be valid UTF-8).
  Status parseString(std::string &out) {
    out.clear();
    PARTITION_RETURN_IF_ERROR(expect('"'));
    while (true) {
      if (atEnd())
        return syntaxError("unterminated string");
      unsigned char c = text[pos];
      if (c == '"') {
        ++pos;
        return Status::ok();
      }
      if (c < 0x20)
        return syntaxError("control character 0x", std::hex,
                           static_cast<int>(c), " in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        return syntaxError("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t unit;
        PARTITION_RETURN_IF_ERROR(parseHex4(unit));
        uint32_t codePoint = unit;
        if (unit >= 0xdc00 && unit <= 0xdfff)
          return syntaxError("unpaired low surrogate \\u", std::hex, unit);
        if (unit >= 0xd800 && unit <= 0xdbff) {
          if (pos + 1 >= text.size() || text[pos] != '\\' ||
              text[pos + 1] != 'u')
            return syntaxError("unpaired high surrogate \\u", std::hex, unit);
          pos += 2;
          uint32_t low;
          PARTITION_RETURN_IF_ERROR(parseHex4(low));
          if (low < 0xdc00 || low > 0xdfff)
            return syntaxError("high surrogate \\u", std::hex, unit,
                               " is not followed by a low surrogate");
          codePoint = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        }
        appendUtf8(out, codePoint);
        break;
      }
      default:
        --pos;
        return syntaxError("invalid escape '\\", e, "'");
      }
    }
  }

  /// Parses a JSON number that must be a non-negative integer up to `max`.
  /// `what` names the value in content errors.
  Status parseUnsigned(uint64_t &out, uint64_t max, const std::string &what) {
    size_t start = pos;
    bool negative = false, integral = true;
    if (peek() == '-') {
      negative = true;
      ++pos;
    }
    if (peek() == '0') {
      ++pos;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    } else {
      return syntaxError("invalid number");
    }
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return syntaxError("invalid number: no digit after '.'");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return syntaxError("invalid number: no digit in the exponent");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    std::string literal = text.substr(start, std::min<size_t>(pos - start, 40));
    if (negative)
      return contentError(what, " is negative: ", literal);
    if (!integral)
      return contentError(what, " is not an integer: ", literal);
    uint64_t value = 0;
    for (size_t i = start; i < pos; ++i) {
      unsigned digit = static_cast<unsigned>(text[i] - '0');
      if (value > (max - digit) / 10)
        return contentError(what, " is too large: ", literal,
                            pos - start > 40 ? "..." : "");
      value = value * 10 + digit;
    }
    out = value;
    return Status::ok();
  }

  /// Parses an array of non-negative integers up to `max`, at most
  /// `maxLength` of them.
  Status parseUnsignedArray(std::vector<uint64_t> &out, uint64_t max,
                            size_t maxLength, const std::string &what) {
    out.clear();
    if (peek() != '[')
      return contentError(what, " must be an array of integers, got ",
                          describeValue());
    ++pos;
    skipWhitespace();
    if (peek() == ']') {
      ++pos;
      return Status::ok();
    }
    while (true) {
      if (out.size() == maxLength)
        return contentError(what, " has more than ", maxLength, " elements");
      if (peek() != '-' && !(peek() >= '0' && peek() <= '9')) {
        if (atEnd())
          return syntaxError("unterminated array");
        if (peek() == ']' || peek() == ',')
          return syntaxError("expected a value");
        return contentError(what, " must be an array of integers, got ",
                            describeValue(), " at index ", out.size());
      }
      uint64_t value;
      PARTITION_RETURN_IF_ERROR(parseUnsigned(value, max, what));
      out.push_back(value);
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        skipWhitespace();
        continue;
      }
      if (peek() == ']') {
        ++pos;
        return Status::ok();
      }
      return syntaxError("expected ',' or ']' in an array");
    }
  }

  /// Iterates over the members of an object: calls `member(key)` with the
  /// position at the member's value, which it must consume.
  template <typename Fn>
  Status parseObject(Fn &&member) {
    PARTITION_RETURN_IF_ERROR(expect('{'));
    skipWhitespace();
    if (peek() == '}') {
      ++pos;
      return Status::ok();
    }
    std::string key;
    while (true) {
      if (peek() != '"')
        return syntaxError(atEnd() ? "unterminated object"
                                   : "expected a string key");
      PARTITION_RETURN_IF_ERROR(parseString(key));
      skipWhitespace();
      PARTITION_RETURN_IF_ERROR(expect(':'));
      skipWhitespace();
      PARTITION_RETURN_IF_ERROR(member(key));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        skipWhitespace();
        continue;
      }
      if (peek() == '}') {
        ++pos;
        return Status::ok();
      }
      return syntaxError(atEnd() ? "unterminated object"
                                 : "expected ',' or '}' in an object");
    }
  }

  const std::string &text;
  const std::string &path;
  size_t pos = 0;

private:
  Status parseHex4(uint32_t &out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++pos) {
      char c = peek();
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        return syntaxError("invalid \\u escape");
      out = out << 4 | digit;
    }
    return Status::ok();
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | cp >> 12);
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | cp >> 18);
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// SafetensorsReader
//===----------------------------------------------------------------------===//

SafetensorsReader::SafetensorsReader(SafetensorsReader &&other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_),
      memory_(std::move(other.memory_)), headerBytes_(other.headerBytes_),
      dataStart_(other.dataStart_), entries_(std::move(other.entries_)),
      index_(std::move(other.index_)), metadata_(std::move(other.metadata_)) {
  other.fd_ = -1;
}

SafetensorsReader &
SafetensorsReader::operator=(SafetensorsReader &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
    memory_ = std::move(other.memory_);
    headerBytes_ = other.headerBytes_;
    dataStart_ = other.dataStart_;
    entries_ = std::move(other.entries_);
    index_ = std::move(other.index_);
    metadata_ = std::move(other.metadata_);
  }
  return *this;
}

SafetensorsReader::~SafetensorsReader() {
  if (fd_ >= 0)
    ::close(fd_);
}

/// Checks the 8-byte length against the size of the file and returns N.
static StatusOr<uint64_t> checkHeaderLength(const std::string &path,
                                            const unsigned char *lengthBytes,
                                            uint64_t fileBytes) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = n << 8 | lengthBytes[i];
  if (n > kSafetensorsMaxHeaderBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": header length ", n,
                           " exceeds the limit of ", kSafetensorsMaxHeaderBytes,
                           " bytes");
  if (n > fileBytes - 8)
    return PARTITION_ERROR(InvalidArgument, path, ": header length ", n,
                           " but only ", fileBytes - 8,
                           " bytes follow the length (file of ", fileBytes,
                           " bytes)");
  if (n < 2)
    return PARTITION_ERROR(InvalidArgument, path, ": header length ", n,
                           " is too small for a JSON object");
  return n;
}

StatusOr<SafetensorsReader> SafetensorsReader::open(const std::string &path) {
  SafetensorsReader reader;
  reader.path_ = path;
  PARTITION_ASSIGN_OR_RETURN(RegularFile file,
                             RegularFile::open(path, "safetensors file"));
  uint64_t fileBytes = file.size();
  reader.fd_ = file.release();
  if (fileBytes < 8)
    return PARTITION_ERROR(InvalidArgument, path, ": file has ", fileBytes,
                           " bytes, fewer than the 8-byte header length");
  unsigned char lengthBytes[8];
  PARTITION_RETURN_IF_ERROR(detail::preadFully(reader.fd_, path, 0, lengthBytes,
                                               sizeof(lengthBytes)));
  PARTITION_ASSIGN_OR_RETURN(uint64_t n,
                             checkHeaderLength(path, lengthBytes, fileBytes));
  std::string header(n, '\0');
  PARTITION_RETURN_IF_ERROR(
      detail::preadFully(reader.fd_, path, 8, header.data(), n));
  reader.headerBytes_ = n;
  reader.dataStart_ = 8 + n;
  PARTITION_RETURN_IF_ERROR(reader.parseHeader(header, fileBytes - 8 - n));
  return StatusOr<SafetensorsReader>(std::move(reader));
}

StatusOr<SafetensorsReader> SafetensorsReader::openMemory(std::string bytes,
                                                          std::string name) {
  SafetensorsReader reader;
  reader.path_ = std::move(name);
  reader.memory_ = std::move(bytes);
  const std::string &path = reader.path_;
  uint64_t fileBytes = reader.memory_.size();
  if (fileBytes < 8)
    return PARTITION_ERROR(InvalidArgument, path, ": file has ", fileBytes,
                           " bytes, fewer than the 8-byte header length");
  PARTITION_ASSIGN_OR_RETURN(
      uint64_t n,
      checkHeaderLength(
          path, reinterpret_cast<const unsigned char *>(reader.memory_.data()),
          fileBytes));
  reader.headerBytes_ = n;
  reader.dataStart_ = 8 + n;
  PARTITION_RETURN_IF_ERROR(
      reader.parseHeader(reader.memory_.substr(8, n), fileBytes - 8 - n));
  return StatusOr<SafetensorsReader>(std::move(reader));
}

Status SafetensorsReader::parseHeader(const std::string &header,
                                      uint64_t dataBytes) {
  const std::string &path = path_;
  size_t bad = findInvalidUtf8(header);
  if (bad != std::string::npos)
    return PARTITION_ERROR(InvalidArgument, path,
                           ": header is not valid UTF-8 at byte ", bad);
  if (header[0] != '{')
    return PARTITION_ERROR(InvalidArgument, path,
                           ": header does not start with '{'");

  HeaderParser parser(header, path);
  bool sawMetadata = false;
  PARTITION_RETURN_IF_ERROR(parser.parseObject([&](const std::string &key) {
    if (key == "__metadata__") {
      if (sawMetadata)
        return parser.contentError("\"__metadata__\" appears twice");
      sawMetadata = true;
      if (parser.peek() != '{')
        return parser.contentError("\"__metadata__\" must be an object of "
                                   "strings, got ",
                                   parser.describeValue());
      return parser.parseObject([&](const std::string &metaKey) {
        if (parser.peek() != '"')
          return parser.contentError("\"__metadata__\" value of key ",
                                     quoted(metaKey), " must be a string, got ",
                                     parser.describeValue());
        std::string value;
        PARTITION_RETURN_IF_ERROR(parser.parseString(value));
        if (!metadata_.emplace(metaKey, std::move(value)).second)
          return parser.contentError("\"__metadata__\" key ", quoted(metaKey),
                                     " appears twice");
        return Status::ok();
      });
    }

    std::string tensor = "tensor " + quoted(key);
    if (index_.count(key))
      return parser.contentError(tensor, " appears twice");
    if (parser.peek() != '{')
      return parser.contentError(tensor, " must be an object, got ",
                                 parser.describeValue());
    Entry entry;
    entry.name = key;
    bool sawDType = false, sawShape = false, sawOffsets = false;
    PARTITION_RETURN_IF_ERROR(parser.parseObject([&](const std::string &field) {
      if (field == "dtype") {
        if (sawDType)
          return parser.contentError(tensor, " has \"dtype\" twice");
        sawDType = true;
        if (parser.peek() != '"')
          return parser.contentError(tensor,
                                     ": \"dtype\" must be a string, "
                                     "got ",
                                     parser.describeValue());
        return parser.parseString(entry.dtypeName);
      }
      if (field == "shape") {
        if (sawShape)
          return parser.contentError(tensor, " has \"shape\" twice");
        sawShape = true;
        std::vector<uint64_t> dims;
        PARTITION_RETURN_IF_ERROR(parser.parseUnsignedArray(
            dims, std::numeric_limits<int64_t>::max(), kMaxFileTensorRank,
            tensor + ": \"shape\""));
        entry.shape.assign(dims.begin(), dims.end());
        return Status::ok();
      }
      if (field == "data_offsets") {
        if (sawOffsets)
          return parser.contentError(tensor, " has \"data_offsets\" twice");
        sawOffsets = true;
        std::vector<uint64_t> offsets;
        PARTITION_RETURN_IF_ERROR(parser.parseUnsignedArray(
            offsets, std::numeric_limits<uint64_t>::max(), 2,
            tensor + ": \"data_offsets\""));
        if (offsets.size() != 2)
          return parser.contentError(tensor,
                                     ": \"data_offsets\" must have 2 "
                                     "elements, got ",
                                     offsets.size());
        entry.begin = offsets[0];
        entry.end = offsets[1];
        return Status::ok();
      }
      return parser.contentError(tensor, " has an unknown field ",
                                 quoted(field));
    }));
    if (!sawDType || !sawShape || !sawOffsets)
      return parser.contentError(tensor, " has no \"",
                                 !sawDType   ? "dtype"
                                 : !sawShape ? "shape"
                                             : "data_offsets",
                                 "\"");
    index_.emplace(key, entries_.size());
    entries_.push_back(std::move(entry));
    return Status::ok();
  }));
  parser.skipWhitespace();
  if (!parser.atEnd())
    return parser.syntaxError("unexpected data after the header object");

  // Each tensor on its own.
  for (Entry &entry : entries_) {
    std::string tensor = "tensor " + quoted(entry.name);
    entry.elementBytes = safetensorsElementBytes(entry.dtypeName);
    if (!entry.elementBytes)
      return PARTITION_ERROR(
          InvalidArgument, path, ": ", tensor, " has dtype ",
          quoted(entry.dtypeName),
          ", which is not supported (supported: ", kSupportedDTypes, ")");
    entry.dtype = parseSafetensorsDType(entry.dtypeName);
    std::string typeName =
        entry.dtype ? dtypeName(*entry.dtype) : std::string(entry.dtypeName);
    std::optional<int64_t> bytes =
        detail::checkedByteSize(entry.shape, entry.elementBytes);
    if (!bytes)
      return PARTITION_ERROR(InvalidArgument, path, ": ", tensor, " has shape ",
                             formatShape(entry.shape), " of ", typeName,
                             ", whose size in bytes overflows 64 "
                             "bits");
    std::string offsets = "[" + std::to_string(entry.begin) + ", " +
                          std::to_string(entry.end) + "]";
    if (entry.begin > entry.end)
      return PARTITION_ERROR(InvalidArgument, path, ": ", tensor,
                             " has data_offsets ", offsets,
                             " whose begin is after its end");
    if (entry.end > dataBytes)
      return PARTITION_ERROR(
          OutOfRange, path, ": ", tensor, " has data_offsets ", offsets,
          " beyond the end of the data section (", dataBytes, " bytes)");
    if (entry.end - entry.begin != static_cast<uint64_t>(*bytes))
      return PARTITION_ERROR(InvalidArgument, path, ": ", tensor,
                             " has data_offsets ", offsets, " but shape ",
                             formatShape(entry.shape), " of ", typeName,
                             " needs ", *bytes, " bytes");
  }

  // Together, the tensors must tile the data section: no overlap, no gap,
  // nothing after the last one.
  std::vector<size_t> order(entries_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Entry &x = entries_[a], &y = entries_[b];
    return std::tie(x.begin, x.end, x.name) < std::tie(y.begin, y.end, y.name);
  });
  uint64_t covered = 0;
  const Entry *previous = nullptr;
  for (size_t i : order) {
    const Entry &entry = entries_[i];
    if (entry.begin < covered)
      return PARTITION_ERROR(
          InvalidArgument, path, ": tensor ", quoted(entry.name),
          " has data_offsets [", entry.begin, ", ", entry.end,
          "] which overlap tensor ", quoted(previous->name), " at [",
          previous->begin, ", ", previous->end, "]");
    if (entry.begin > covered)
      return PARTITION_ERROR(InvalidArgument, path, ": bytes [", covered, ", ",
                             entry.begin,
                             ") of the data section belong to no tensor "
                             "(before tensor ",
                             quoted(entry.name), ")");
    covered = entry.end;
    if (entry.end > entry.begin)
      previous = &entry;
  }
  if (covered != dataBytes)
    return PARTITION_ERROR(InvalidArgument, path, ": bytes [", covered, ", ",
                           dataBytes,
                           ") at the end of the data section belong to no "
                           "tensor");
  return Status::ok();
}

std::vector<std::string> SafetensorsReader::names() const {
  std::vector<std::string> result;
  result.reserve(entries_.size());
  for (const Entry &entry : entries_)
    result.push_back(entry.name);
  return result;
}

bool SafetensorsReader::contains(const std::string &name) const {
  return index_.count(name) != 0;
}

StatusOr<const SafetensorsReader::Entry *>
SafetensorsReader::lookup(const std::string &name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    return PARTITION_ERROR(NotFound, path_, ": no tensor ", quoted(name));
  const Entry *entry = &entries_[it->second];
  if (!entry->dtype)
    return PARTITION_ERROR(Unimplemented, path_, ": tensor ", quoted(name),
                           " has dtype ", entry->dtypeName,
                           ", which the runtime does not support (supported: ",
                           kSupportedDTypes, ")");
  return entry;
}

StatusOr<SafetensorsTensorInfo>
SafetensorsReader::info(const std::string &name) const {
  PARTITION_ASSIGN_OR_RETURN(const Entry *entry, lookup(name));
  SafetensorsTensorInfo info;
  info.dtype = *entry->dtype;
  info.shape = entry->shape;
  info.fileOffset = static_cast<int64_t>(dataStart_ + entry->begin);
  info.numBytes = static_cast<int64_t>(entry->end - entry->begin);
  return info;
}

Status SafetensorsReader::readAt(uint64_t offset, void *dst, uint64_t bytes,
                                 ReadStats *stats) const {
  if (stats) {
    ++stats->reads;
    stats->bytesRead += static_cast<int64_t>(bytes);
  }
  if (fd_ >= 0)
    return detail::preadFully(fd_, path_, offset, dst, bytes);
  if (offset > memory_.size() || bytes > memory_.size() - offset)
    return PARTITION_ERROR(Internal, path_, ": read of ", bytes,
                           " bytes at offset ", offset, " is outside the ",
                           memory_.size(), "-byte buffer");
  if (bytes)
    std::memcpy(dst, memory_.data() + offset, bytes);
  return Status::ok();
}

Status SafetensorsReader::read(const std::string &name, void *dst,
                               int64_t dstBytes) const {
  PARTITION_ASSIGN_OR_RETURN(const Entry *entry, lookup(name));
  uint64_t bytes = entry->end - entry->begin;
  if (dstBytes < 0 || static_cast<uint64_t>(dstBytes) != bytes)
    return PARTITION_ERROR(InvalidArgument, path_, ": tensor ", quoted(name),
                           " has ", bytes, " bytes but the destination has ",
                           dstBytes);
  if (bytes && !dst)
    return PARTITION_ERROR(InvalidArgument, path_, ": tensor ", quoted(name),
                           ": null destination");
  return readAt(dataStart_ + entry->begin, dst, bytes, nullptr);
}

Status SafetensorsReader::read(const std::string &name,
                               const TensorRef &dst) const {
  PARTITION_ASSIGN_OR_RETURN(const Entry *entry, lookup(name));
  if (dst.dtype != *entry->dtype || dst.shape != entry->shape)
    return PARTITION_ERROR(InvalidArgument, path_, ": tensor ", quoted(name),
                           " is ", formatShape(entry->shape), " of ",
                           dtypeName(*entry->dtype), " but the destination is ",
                           formatShape(dst.shape), " of ",
                           dtypeName(dst.dtype));
  return read(name, dst.data, static_cast<int64_t>(entry->end - entry->begin));
}

Status SafetensorsReader::readSlice(const std::string &name,
                                    const std::vector<int64_t> &offsets,
                                    const std::vector<int64_t> &sizes,
                                    void *dst, int64_t dstBytes,
                                    const SliceReadOptions &options) const {
  PARTITION_ASSIGN_OR_RETURN(const Entry *entry, lookup(name));
  const std::vector<int64_t> &shape = entry->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::string tensor = "tensor " + quoted(name);
  if (offsets.size() != shape.size() || sizes.size() != shape.size())
    return PARTITION_ERROR(InvalidArgument, path_, ": ", tensor, " has rank ",
                           rank, " but the slice has offsets ",
                           formatShape(offsets), " and sizes ",
                           formatShape(sizes));
  for (int64_t d = 0; d < rank; ++d)
    if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] > shape[d] ||
        sizes[d] > shape[d] - offsets[d])
      return PARTITION_ERROR(
          OutOfRange, path_, ": slice with offsets ", formatShape(offsets),
          " and sizes ", formatShape(sizes), " is outside ", tensor,
          " of shape ", formatShape(shape), " (dimension ", d, ")");
  const int64_t element = entry->elementBytes;
  // Sizes are within the shape, whose byte size does not overflow.
  int64_t sliceBytes = element;
  for (int64_t size : sizes)
    sliceBytes *= size;
  if (dstBytes != sliceBytes)
    return PARTITION_ERROR(
        InvalidArgument, path_, ": slice ", formatShape(sizes), " of ", tensor,
        " has ", sliceBytes, " bytes but the destination has ", dstBytes);
  if (sliceBytes == 0)
    return Status::ok();
  if (!dst)
    return PARTITION_ERROR(InvalidArgument, path_, ": ", tensor,
                           ": null destination");

  // The slice is a set of runs of `runBytes` contiguous bytes: dimensions
  // from `inner` on are read in full, dimension `inner - 1` (when it exists)
  // is cut, and the dimensions before it are iterated over.
  std::vector<int64_t> strides(rank, element); // in bytes
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  int64_t inner = rank;
  while (inner > 0 && sizes[inner - 1] == shape[inner - 1])
    --inner;
  int64_t runBytes =
      inner == 0 ? sliceBytes : sizes[inner - 1] * strides[inner - 1];
  int64_t outer = inner == 0 ? 0 : inner - 1; // dimensions iterated over
  uint64_t tensorStart = dataStart_ + entry->begin;
  int64_t first = 0;
  for (int64_t d = 0; d < rank; ++d)
    first += offsets[d] * strides[d];

  // Runs in increasing file order; a group of runs whose gaps are at most
  // maxGapBytes is read with one call into a staging buffer.
  std::vector<int64_t> index(outer, 0); // odometer over dimensions < outer
  auto runStart = [&]() {
    int64_t start = first;
    for (int64_t d = 0; d < outer; ++d)
      start += index[d] * strides[d];
    return start;
  };
  auto advance = [&]() {
    for (int64_t d = outer - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        return true;
      index[d] = 0;
    }
    return false;
  };
  int64_t numRuns = sliceBytes / runBytes;
  int64_t maxGap = std::max<int64_t>(options.maxGapBytes, 0);
  int64_t maxStaging = std::max<int64_t>(options.maxStagingBytes, 0);
  std::vector<char> staging;
  std::vector<int64_t> groupStarts;
  char *out = static_cast<char *>(dst);
  int64_t run = 0;
  int64_t start = runStart();
  while (run < numRuns) {
    // Extend a group from this run while the next one is close enough.
    groupStarts.assign(1, start);
    int64_t groupEnd = start + runBytes;
    int64_t nextStart = -1;
    ++run;
    while (run < numRuns) {
      advance();
      nextStart = runStart();
      if (maxGap == 0 || nextStart - groupEnd > maxGap ||
          nextStart + runBytes - groupStarts.front() > maxStaging)
        break;
      groupStarts.push_back(nextStart);
      groupEnd = nextStart + runBytes;
      nextStart = -1;
      ++run;
    }
    if (groupStarts.size() == 1) {
      PARTITION_RETURN_IF_ERROR(
          readAt(tensorStart + start, out, runBytes, options.stats));
      out += runBytes;
    } else {
      int64_t span = groupEnd - groupStarts.front();
      staging.resize(span);
      PARTITION_RETURN_IF_ERROR(readAt(tensorStart + groupStarts.front(),
                                       staging.data(), span, options.stats));
      for (int64_t s : groupStarts) {
        std::memcpy(out, staging.data() + (s - groupStarts.front()), runBytes);
        out += runBytes;
      }
    }
    start = nextStart;
  }
  return Status::ok();
}

Status SafetensorsReader::readSlice(const std::string &name,
                                    const std::vector<int64_t> &offsets,
                                    const TensorRef &dst,
                                    const SliceReadOptions &options) const {
  PARTITION_ASSIGN_OR_RETURN(const Entry *entry, lookup(name));
  if (dst.dtype != *entry->dtype)
    return PARTITION_ERROR(InvalidArgument, path_, ": tensor ", quoted(name),
                           " is of ", dtypeName(*entry->dtype),
                           " but the destination is of ", dtypeName(dst.dtype));
  std::optional<int64_t> bytes =
      detail::checkedByteSize(dst.shape, entry->elementBytes);
  if (!bytes)
    return PARTITION_ERROR(InvalidArgument, path_, ": destination shape ",
                           formatShape(dst.shape), " is invalid");
  return readSlice(name, offsets, dst.shape, dst.data, *bytes, options);
}

//===----------------------------------------------------------------------===//
// SafetensorsWriter
//===----------------------------------------------------------------------===//

Status SafetensorsWriter::add(const std::string &name, DType dtype,
                              const std::vector<int64_t> &shape,
                              const void *data) {
  if (name == "__metadata__")
    return PARTITION_ERROR(InvalidArgument,
                           "\"__metadata__\" cannot name a tensor");
  if (findInvalidUtf8(name) != std::string::npos)
    return PARTITION_ERROR(InvalidArgument, "tensor name ", quoted(name),
                           " is not valid UTF-8");
  for (const Pending &tensor : tensors_)
    if (tensor.name == name)
      return PARTITION_ERROR(InvalidArgument, "tensor ", quoted(name),
                             " was added twice");
  if (shape.size() > kMaxFileTensorRank)
    return PARTITION_ERROR(InvalidArgument, "tensor ", quoted(name),
                           " has rank ", shape.size(), ", more than ",
                           kMaxFileTensorRank);
  std::optional<int64_t> bytes =
      detail::checkedByteSize(shape, dtypeSize(dtype));
  if (!bytes)
    return PARTITION_ERROR(InvalidArgument, "tensor ", quoted(name),
                           " has invalid shape ", formatShape(shape));
  if (*bytes && !data)
    return PARTITION_ERROR(InvalidArgument, "tensor ", quoted(name),
                           " has no data");
  tensors_.push_back({name, dtype, shape, data, *bytes});
  return Status::ok();
}

Status SafetensorsWriter::add(const std::string &name,
                              const TensorRef &tensor) {
  return add(name, tensor.dtype, tensor.shape, tensor.data);
}

Status SafetensorsWriter::setMetadata(const std::string &key,
                                      const std::string &value) {
  if (findInvalidUtf8(key) != std::string::npos ||
      findInvalidUtf8(value) != std::string::npos)
    return PARTITION_ERROR(InvalidArgument, "metadata ", quoted(key),
                           " is not valid UTF-8");
  metadata_[key] = value;
  return Status::ok();
}

/// Alignment rank of a dtype in the reference implementation's order (its
/// Dtype enum): tensors are written by decreasing rank.
static int alignmentRank(DType type) {
  switch (type) {
  case DType::F16:
    return 0;
  case DType::BF16:
    return 1;
  case DType::I32:
    return 2;
  case DType::F32:
    return 3;
  case DType::I64:
    return 4;
  }
  return 0;
}

std::vector<const SafetensorsWriter::Pending *>
SafetensorsWriter::ordered() const {
  std::vector<const Pending *> order;
  for (const Pending &tensor : tensors_)
    order.push_back(&tensor);
  std::sort(order.begin(), order.end(), [](const Pending *a, const Pending *b) {
    int ra = alignmentRank(a->dtype), rb = alignmentRank(b->dtype);
    if (ra != rb)
      return ra > rb;
    return a->name < b->name;
  });
  return order;
}

std::string SafetensorsWriter::headerBytes() const {
  std::string json = "{";
  bool firstMember = true;
  if (!metadata_.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata_) {
      if (!first)
        json += ',';
      first = false;
      detail::appendJsonString(json, key);
      json += ':';
      detail::appendJsonString(json, value);
    }
    json += '}';
    firstMember = false;
  }
  int64_t offset = 0;
  for (const Pending *tensor : ordered()) {
    if (!firstMember)
      json += ',';
    firstMember = false;
    detail::appendJsonString(json, tensor->name);
    json += ":{\"dtype\":\"";
    json += safetensorsDTypeName(tensor->dtype);
    json += "\",\"shape\":";
    std::string shape = formatShape(tensor->shape);
    shape.erase(std::remove(shape.begin(), shape.end(), ' '), shape.end());
    json += shape;
    json += ",\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + tensor->numBytes) + "]}";
    offset += tensor->numBytes;
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return bytes + json;
}

Status SafetensorsWriter::write(const std::string &path) const {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return detail::ioError(path, "cannot create");
  std::string header = headerBytes();
  Status status = detail::writeFully(fd, path, header.data(), header.size());
  for (const Pending *tensor : ordered()) {
    if (!status.isOk())
      break;
    status = detail::writeFully(fd, path, tensor->data, tensor->numBytes);
  }
  if (::close(fd) != 0 && status.isOk())
    status = detail::ioError(path, "cannot close");
  if (!status.isOk())
    ::unlink(path.c_str());
  return status;
}

StatusOr<std::string> SafetensorsWriter::serialize() const {
  std::string bytes = headerBytes();
  for (const Pending *tensor : ordered())
    if (tensor->numBytes)
      bytes.append(static_cast<const char *>(tensor->data), tensor->numBytes);
  return bytes;
}
