// Opening an untrusted path for reading without blocking on a FIFO (open_for_reading.h).
#include "open_for_reading.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace wick::serialize::detail {

OpenedFile::~OpenedFile() {
  if (fd >= 0) ::close(fd);
}

int OpenedFile::release() {
  const int f = fd;
  fd = -1;
  return f;
}

void open_for_reading(const std::string& path, OpenedFile& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    out.error = errno;
    return;
  }
  out.fd = fd;
  if (::fstat(fd, &out.st) != 0) {
    out.error = errno;
    ::close(out.release());
    return;
  }
  if (!S_ISREG(out.st.st_mode)) {
    out.not_regular = true;
    ::close(out.release());
    return;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    out.error = errno;
    ::close(out.release());
  }
}

}  // namespace wick::serialize::detail
