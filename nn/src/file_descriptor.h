#pragma once
// Internal: owning file descriptors, and opening an untrusted path for reading (Note [Loader
// limits]).
#include <sys/stat.h>

#include <string>

namespace wick::serialize::detail {

/// An owning file descriptor: closed when the object goes, unless released.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  /// Gives up ownership (to a caller that closes it itself, or to a wrapper such as gzdopen).
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

/// The result of open_for_reading: `fd` holds a blocking, close-on-exec descriptor of a regular
/// file (with `st` its status), or -1 with `error` set to errno; `not_regular` is true when the
/// path exists but names a FIFO, a device, a directory or a socket.
struct OpenedFile {
  Fd fd;
  int error = 0;
  bool not_regular = false;
  struct stat st {};
};

/// Opens `path` read-only without ever blocking: open() of a FIFO with no writer (or of some
/// devices) would wait forever, so the file is opened non-blocking, checked with fstat, and
/// switched back to blocking reads only when it is a regular file.
OpenedFile open_for_reading(const std::string& path);

}  // namespace wick::serialize::detail
