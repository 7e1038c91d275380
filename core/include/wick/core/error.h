#pragma once
// wick::Error and the checking macros used by every layer.
//
// Every bad input raises a wick::Error whose message names the op, the operands involved
// (shapes, dtypes, devices) and what to do about it. Library code never aborts.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace wick {

/// The one exception type wick throws for bad input and failed library calls.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {
[[noreturn]] void throw_error(const char* file, int line, std::string msg);
}  // namespace detail

}  // namespace wick

/// Throws wick::Error with an fmt-formatted message when `cond` is false.
#define WICK_CHECK(cond, ...)                                                          \
  do {                                                                                 \
    if (!(cond)) [[unlikely]] {                                                        \
      ::wick::detail::throw_error(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__));     \
    }                                                                                  \
  } while (0)

/// Throws wick::Error unconditionally with an fmt-formatted message.
#define WICK_FAIL(...) ::wick::detail::throw_error(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__))
