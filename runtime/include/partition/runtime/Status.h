//===- Status.h - errors returned by every runtime call ---------*- C++ -*-===//
//
// Status carries a code, a message and the file:line where it arose.
// StatusOr<T> is a value or a Status. The runtime never throws across its API
// and never exits the process.
//
//===----------------------------------------------------------------------===//

#ifndef PARTITION_RUNTIME_STATUS_H
#define PARTITION_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace partition::runtime {

/// What went wrong, coarsely; the message says the rest.
enum class StatusCode {
  Ok = 0,
  InvalidArgument,   ///< bad input: a plan, a file, a shape, an attribute
  NotFound,          ///< a file, a tensor name, a key
  OutOfRange,        ///< an index or a byte range outside its container
  Unimplemented,     ///< a valid request this backend cannot do
  Unavailable,       ///< no device, no peer, connection refused
  DeadlineExceeded,  ///< a wait ran out of time
  Aborted,           ///< another rank failed, so this one stopped
  ResourceExhausted, ///< out of memory
  Internal,          ///< a library error or a broken invariant
};

/// Name of `code`, e.g. "invalid argument".
const char *statusCodeName(StatusCode code);

/// The result of a runtime call.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message, const char *file = nullptr,
         int line = 0);

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "file:line" where the error arose, or "" for OK.
  const std::string &where() const { return where_; }
  /// "invalid argument: <message> (at file:line)".
  std::string toString() const;
  /// The same error with `context` put in front of its message.
  Status withContext(const std::string &context) const;

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
  std::string where_;
};

/// A value of type T, or the Status saying why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "StatusOr built from an OK status");
  }
  bool isOk() const { return status_.isOk(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }
  T &value() & {
    assert(isOk());
    return *value_;
  }
  T &&value() && {
    assert(isOk());
    return std::move(*value_);
  }
  const T &value() const & {
    assert(isOk());
    return *value_;
  }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() { return value(); }

private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
/// Streams any number of values into one string.
template <typename... Args>
std::string concat(Args &&...args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
} // namespace detail

} // namespace partition::runtime

/// Builds an error Status with the current file:line, the message being the
/// concatenation of the remaining arguments.
#define PARTITION_ERROR(code, ...)                                             \
  ::partition::runtime::Status(                                                \
      ::partition::runtime::StatusCode::code,                                  \
      ::partition::runtime::detail::concat(__VA_ARGS__), __FILE__, __LINE__)

/// Returns from the enclosing function if `expr` yields an error Status.
#define PARTITION_RETURN_IF_ERROR(expr)                                        \
  do {                                                                         \
    ::partition::runtime::Status _status = (expr);                             \
    if (!_status.isOk())                                                       \
      return _status;                                                          \
  } while (0)

#define PARTITION_CONCAT_INNER(a, b) a##b
#define PARTITION_CONCAT(a, b) PARTITION_CONCAT_INNER(a, b)

/// `PARTITION_ASSIGN_OR_RETURN(auto x, f())`: x = f().value(), or return the
/// error.
#define PARTITION_ASSIGN_OR_RETURN(lhs, expr)                                  \
  PARTITION_ASSIGN_OR_RETURN_IMPL(PARTITION_CONCAT(_statusor, __LINE__), lhs,  \
                                  expr)
#define PARTITION_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                        \
  auto tmp = (expr);                                                           \
  if (!tmp.isOk())                                                             \
    return tmp.status();                                                       \
  lhs = std::move(tmp).value()

#endif // PARTITION_RUNTIME_STATUS_H
