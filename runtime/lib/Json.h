//===- Json.h - JSON string literals shared by the writers ----*- C++ -*-===//
//
// Private to the runtime library: the one JSON string escaper behind the
// safetensors header, the checkpoint manifest and Chrome traces.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_LIB_JSON_H
#define PARTITION_RUNTIME_LIB_JSON_H

#include <string>

namespace partition::runtime::detail {

/// Appends `text` to `out` as a JSON string literal, escaped as serde_json
/// does (the short escapes, other control bytes as \u00XX; UTF-8 as is).
void appendJsonString(std::string &out, const std::string &text);

} // namespace partition::runtime::detail

#endif // PARTITION_RUNTIME_LIB_JSON_H
