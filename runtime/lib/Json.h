//===- Json.h - JSON string literals shared by the writers ----*- C++ -*-===//
//
// Private to the runtime library: the one JSON string escaper behind the
// safetensors header, the checkpoint manifest and Chrome traces, and the
// one reader of the small JSON files it reads (the checkpoint manifest, the
// cluster descriptions).
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_LIB_JSON_H
#define PARTITION_RUNTIME_LIB_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partition::runtime::detail {

/// Appends `text` to `out` as a JSON string literal, escaped as serde_json
/// does (the short escapes, other control bytes as \u00XX; UTF-8 as is).
void appendJsonString(std::string &out, const std::string &text);

/// A parsed JSON value. A number written as an integer (no fraction, no
/// exponent) is Int with `integer` (and `number`) set; any other is Number.
struct JsonValue {
  enum Kind { Null, Bool, Int, String, Array, Object, Number } kind = Null;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;

  const JsonValue *get(const std::string &key) const {
    for (const auto &[k, v] : object)
      if (k == key)
        return &v;
    return nullptr;
  }
};

/// Parses `text` as one JSON document (nesting at most 32 deep); on failure
/// returns false with `error` saying why and at which byte.
bool parseJson(const std::string &text, JsonValue &out, std::string &error);

} // namespace partition::runtime::detail

#endif // PARTITION_RUNTIME_LIB_JSON_H
