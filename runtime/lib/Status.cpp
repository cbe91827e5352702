//===- Status.cpp - runtime errors ----------------------------------------===//

#include "partition/runtime/Status.h"

#include <cstring>

using namespace partition::runtime;

const char *partition::runtime::statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid argument";
  case StatusCode::NotFound:
    return "not found";
  case StatusCode::OutOfRange:
    return "out of range";
  case StatusCode::Unimplemented:
    return "unimplemented";
  case StatusCode::Unavailable:
    return "unavailable";
  case StatusCode::DeadlineExceeded:
    return "deadline exceeded";
  case StatusCode::Aborted:
    return "aborted";
  case StatusCode::ResourceExhausted:
    return "resource exhausted";
  case StatusCode::Internal:
    return "internal";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message, const char *file, int line)
    : code_(code), message_(std::move(message)) {
  if (file && code != StatusCode::Ok) {
    // The file name alone: enough to find the line, and the same on every
    // machine (no build paths in messages).
    const char *slash = std::strrchr(file, '/');
    where_ = std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
  }
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  std::string text = std::string(statusCodeName(code_)) + ": " + message_;
  if (!where_.empty())
    text += " (at " + where_ + ")";
  return text;
}

Status Status::withContext(const std::string &context) const {
  if (isOk())
    return *this;
  Status result = *this;
  result.message_ = context + ": " + message_;
  return result;
}
