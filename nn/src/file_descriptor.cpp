// Owning file descriptors, and opening an untrusted path without blocking on a FIFO
// (file_descriptor.h).
#include "file_descriptor.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace wick::serialize::detail {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd >= 0) ::close(fd);
    fd = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

OpenedFile open_for_reading(const std::string& path) {
  OpenedFile out;
  Fd f(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (f.fd < 0) {
    out.error = errno;
    return out;
  }
  if (::fstat(f.fd, &out.st) != 0) {
    out.error = errno;
    return out;
  }
  if (!S_ISREG(out.st.st_mode)) {
    out.not_regular = true;
    return out;
  }
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags < 0 || ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    out.error = errno;
    return out;
  }
  out.fd = std::move(f);
  return out;
}

}  // namespace wick::serialize::detail
