#include "wick/core/error.h"

namespace wick::detail {

void throw_error(const char* file, int line, std::string msg) {
  (void)file;
  (void)line;
  throw Error(std::move(msg));
}

}  // namespace wick::detail
