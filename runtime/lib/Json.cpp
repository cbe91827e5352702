//===- Json.cpp - JSON string literals and a small reader ------------------===//

#include "Json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

using partition::runtime::detail::JsonValue;

void partition::runtime::detail::appendJsonString(std::string &out,
                                                  const std::string &text) {
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        static const char hex[] = "0123456789abcdef";
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
}

namespace {

class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text_(text) {}

  /// Parses the whole text; on failure, `error()` says where and why.
  bool parse(JsonValue &out) {
    if (!value(out, 0))
      return false;
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text after the end of the document");
    return true;
  }
  const std::string &error() const { return error_; }

private:
  bool fail(const std::string &why) {
    if (error_.empty())
      error_ = why + " at byte " + std::to_string(pos_);
    return false;
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (text_.compare(pos_, n, word) != 0)
      return fail("invalid literal");
    pos_ += n;
    return true;
  }
  bool string(std::string &out) {
    ++pos_; // the opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (uint8_t(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos_ + 4 > text_.size())
          return fail("truncated \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          char h = text_[pos_++];
          code <<= 4;
          if (h >= '0' && h <= '9')
            code |= h - '0';
          else if (h >= 'a' && h <= 'f')
            code |= h - 'a' + 10;
          else if (h >= 'A' && h <= 'F')
            code |= h - 'A' + 10;
          else
            return fail("invalid \\u escape");
        }
        if (code >= 0x80) // names the writer produces are escaped below 0x20
          return fail("unsupported \\u escape");
        out += char(code);
        break;
      }
      default:
        return fail("invalid escape");
      }
    }
    if (pos_ >= text_.size())
      return fail("unterminated string");
    ++pos_;
    return true;
  }
  bool value(JsonValue &out, int depth) {
    if (depth > 32)
      return fail("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size())
      return fail("unexpected end of the document");
    char c = text_[pos_];
    if (c == '{') {
      out.kind = JsonValue::Object;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      // A key given twice is an error: readers take one of them, and which
      // one a file means is not for a reader to guess.
      std::set<std::string> keys;
      while (true) {
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"')
          return fail("expected a string key");
        size_t keyAt = pos_;
        std::string key;
        if (!string(key))
          return false;
        if (!keys.insert(key).second) {
          pos_ = keyAt;
          std::string quoted;
          partition::runtime::detail::appendJsonString(quoted, key);
          return fail("duplicate key " + quoted);
        }
        skipSpace();
        if (pos_ >= text_.size() || text_[pos_] != ':')
          return fail("expected ':'");
        ++pos_;
        JsonValue v;
        if (!value(v, depth + 1))
          return false;
        out.object.emplace_back(std::move(key), std::move(v));
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          return true;
        }
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      out.kind = JsonValue::Array;
      ++pos_;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        JsonValue v;
        if (!value(v, depth + 1))
          return false;
        out.array.push_back(std::move(v));
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return true;
        }
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      out.kind = JsonValue::String;
      return string(out.string);
    }
    if (c == 't' || c == 'f') {
      out.kind = JsonValue::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n')
      return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) {
      out.kind = JsonValue::Int;
      size_t start = pos_;
      auto digits = [&] {
        size_t from = pos_;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
          ++pos_;
        return pos_ > from;
      };
      if (c == '-')
        ++pos_;
      bool ok = digits();
      if (ok && pos_ < text_.size() && text_[pos_] == '.') {
        out.kind = JsonValue::Number;
        ++pos_;
        ok = digits();
      }
      if (ok && pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        out.kind = JsonValue::Number;
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
          ++pos_;
        ok = digits();
      }
      std::string literal = text_.substr(start, pos_ - start);
      if (!ok)
        return fail("invalid number \"" + literal + "\"");
      errno = 0;
      char *end = nullptr;
      if (out.kind == JsonValue::Int) {
        out.integer = std::strtoll(literal.c_str(), &end, 10);
        out.number = double(out.integer);
        if (errno || *end)
          return fail("invalid integer \"" + literal + "\"");
      } else {
        out.number = std::strtod(literal.c_str(), &end);
        if (errno || *end || !std::isfinite(out.number))
          return fail("invalid number \"" + literal + "\"");
      }
      return true;
    }
    return fail("unexpected character");
  }

  const std::string &text_;
  size_t pos_ = 0;
  std::string error_;
};

} // namespace

bool partition::runtime::detail::parseJson(const std::string &text,
                                           JsonValue &out,
                                           std::string &error) {
  JsonParser parser(text);
  if (parser.parse(out))
    return true;
  error = parser.error();
  return false;
}
