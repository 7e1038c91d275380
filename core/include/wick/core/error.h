#pragma once
// wick::Error, its typed subclasses, and the checking macros used by every layer.
//
// Note [Typed errors]
// Every bad input raises a subclass of wick::Error whose message names the op, the operands
// involved (shapes, dtypes, devices) and what to do about it. Library code never aborts. The
// class says what kind of mistake it is, in the spirit of LibTorch's c10::ValueError & co., so
// a caller can catch exactly what it can handle (a "is there a GPU" probe catches only
// DeviceUnavailable, never a driver failure):
//
//   ValueError          an argument has a bad value: shapes that do not match or broadcast, a
//                       negative size, an out-of-range option or hyperparameter, devices that
//                       do not match each other. The common case: WICK_CHECK raises it.
//   TypeError           an argument has the wrong dtype (or a Value of the wrong kind).
//   IndexError          an index, dim, slot or name that is not there.
//   NotImplementedError a well-formed request that wick does not support (yet).
//   StateError          a call that is fine in general but not in the current state: backward
//                       twice without retain_graph, a saved tensor modified in place, an in-place
//                       op on a leaf that requires grad, zero_grad on a replica, an LR scheduler
//                       whose optimizer gained parameter groups, optimizer state that no
//                       longer fits its parameter after Module::to(), a graph whose leaf was
//                       moved after it was recorded.
//   FormatError         a file or byte stream whose contents are not what they must be (bad
//                       magic, truncated, inconsistent header, over a loader limit).
//   IOError             a file that cannot be opened, read, written or renamed.
//   DeviceUnavailable   a backend or device that is not there (no CUDA in this build, no
//                       driver, cuda:3 on a one-GPU machine).
//   BackendError        a library or driver underneath wick failed (CUDA, cuBLAS, NCCL, MPI).
//   OutOfMemoryError    a BackendError: an allocation failed.
//
// wick itself never throws a plain Error. cuda::device_count() is 0 without a GPU or a driver
// and raises BackendError when the driver is there but fails, so that a failing driver never
// passes for "no GPU".
//
// Code that catches an error to add context (which file, which replica, which argument) keeps
// its class: rethrow_with_context(e, "load model.safetensors: ") raises an error of e's own
// class, so an IndexError from deep inside a load is still an IndexError outside it.
// docs/errors.md lists them with examples.
#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wick {

/// The base of every exception wick throws. Catch it to catch them all; throw a subclass.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
  /// An error of this object's own class (ValueError, IndexError, ...) carrying `msg`, ready for
  /// std::rethrow_exception. Every class below overrides it; a class of your own that derives
  /// from one of them should too, or it is rethrown as that base.
  virtual std::exception_ptr with_message(const std::string& msg) const { return std::make_exception_ptr(Error(msg)); }
};

#define WICK_DECLARE_ERROR(Name, Base)                                       \
  class Name : public Base {                                                 \
   public:                                                                   \
    explicit Name(const std::string& msg) : Base(msg) {}                     \
    std::exception_ptr with_message(const std::string& msg) const override { \
      return std::make_exception_ptr(Name(msg));                             \
    }                                                                        \
  }
WICK_DECLARE_ERROR(ValueError, Error);
WICK_DECLARE_ERROR(TypeError, Error);
WICK_DECLARE_ERROR(IndexError, Error);
WICK_DECLARE_ERROR(NotImplementedError, Error);
WICK_DECLARE_ERROR(StateError, Error);
WICK_DECLARE_ERROR(FormatError, Error);
WICK_DECLARE_ERROR(IOError, Error);
WICK_DECLARE_ERROR(DeviceUnavailable, Error);
WICK_DECLARE_ERROR(BackendError, Error);
WICK_DECLARE_ERROR(OutOfMemoryError, BackendError);
#undef WICK_DECLARE_ERROR

/// Throws an error of `e`'s own class whose message is `context` followed by e.what(), for code
/// that catches an error to say where it happened (Note [Typed errors]).
[[noreturn]] void rethrow_with_context(const Error& e, std::string_view context);

namespace detail {
/// Throws E(msg). Out of line so that the checks stay small at every call site.
template <class E>
[[noreturn]] void throw_error(const char* file, int line, std::string msg);
extern template void throw_error<ValueError>(const char*, int, std::string);
extern template void throw_error<TypeError>(const char*, int, std::string);
extern template void throw_error<IndexError>(const char*, int, std::string);
extern template void throw_error<NotImplementedError>(const char*, int, std::string);
extern template void throw_error<StateError>(const char*, int, std::string);
extern template void throw_error<FormatError>(const char*, int, std::string);
extern template void throw_error<IOError>(const char*, int, std::string);
extern template void throw_error<DeviceUnavailable>(const char*, int, std::string);
extern template void throw_error<BackendError>(const char*, int, std::string);
extern template void throw_error<OutOfMemoryError>(const char*, int, std::string);
}  // namespace detail

}  // namespace wick

/// Throws `ErrorType` (a wick::Error subclass) with an fmt-formatted message when `cond` is false.
#define WICK_CHECK_T(ErrorType, cond, ...)                                                    \
  do {                                                                                        \
    if (!(cond)) [[unlikely]] {                                                               \
      ::wick::detail::throw_error<ErrorType>(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
    }                                                                                         \
  } while (0)

/// Throws `ErrorType` unconditionally with an fmt-formatted message.
#define WICK_FAIL_T(ErrorType, ...) \
  ::wick::detail::throw_error<ErrorType>(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__))

/// The common check: an argument with a bad value (wick::ValueError).
#define WICK_CHECK(cond, ...) WICK_CHECK_T(::wick::ValueError, cond, __VA_ARGS__)
#define WICK_FAIL(...) WICK_FAIL_T(::wick::ValueError, __VA_ARGS__)
/// The typed checks (Note [Typed errors]).
#define WICK_CHECK_TYPE(cond, ...) WICK_CHECK_T(::wick::TypeError, cond, __VA_ARGS__)
#define WICK_CHECK_INDEX(cond, ...) WICK_CHECK_T(::wick::IndexError, cond, __VA_ARGS__)
#define WICK_CHECK_NOT_IMPLEMENTED(cond, ...) WICK_CHECK_T(::wick::NotImplementedError, cond, __VA_ARGS__)
#define WICK_CHECK_STATE(cond, ...) WICK_CHECK_T(::wick::StateError, cond, __VA_ARGS__)
#define WICK_CHECK_FORMAT(cond, ...) WICK_CHECK_T(::wick::FormatError, cond, __VA_ARGS__)
#define WICK_CHECK_IO(cond, ...) WICK_CHECK_T(::wick::IOError, cond, __VA_ARGS__)
