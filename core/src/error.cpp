#include "wick/core/error.h"

namespace wick {

void rethrow_with_context(const Error& e, std::string_view context) {
  std::string msg(context);
  msg += e.what();
  std::rethrow_exception(e.with_message(msg));
}

namespace detail {

template <class E>
void throw_error(const char* file, int line, std::string msg) {
  (void)file;
  (void)line;
  throw E(std::move(msg));
}

template void throw_error<ValueError>(const char*, int, std::string);
template void throw_error<TypeError>(const char*, int, std::string);
template void throw_error<IndexError>(const char*, int, std::string);
template void throw_error<NotImplementedError>(const char*, int, std::string);
template void throw_error<StateError>(const char*, int, std::string);
template void throw_error<FormatError>(const char*, int, std::string);
template void throw_error<IOError>(const char*, int, std::string);
template void throw_error<DeviceUnavailable>(const char*, int, std::string);
template void throw_error<BackendError>(const char*, int, std::string);
template void throw_error<OutOfMemoryError>(const char*, int, std::string);

}  // namespace detail
}  // namespace wick
