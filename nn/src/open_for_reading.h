#pragma once
// Internal: opening an untrusted path for reading (Note [Loader limits]).
#include <sys/stat.h>

#include <string>

namespace wick::serialize::detail {

/// The result of open_for_reading: `fd` is a blocking, close-on-exec descriptor of a regular file
/// (with `st` its status), or -1 with `error` set to errno; `not_regular` is true when the path
/// exists but names a FIFO, a device, a directory or a socket.
struct OpenedFile {
  int fd = -1;
  int error = 0;
  bool not_regular = false;
  struct stat st {};
  OpenedFile() = default;
  OpenedFile(const OpenedFile&) = delete;
  OpenedFile& operator=(const OpenedFile&) = delete;
  ~OpenedFile();
  /// Gives up ownership of the descriptor (for a wrapper that closes it, such as gzdopen).
  int release();
};

/// Opens `path` read-only without ever blocking: open() of a FIFO with no writer (or of some
/// devices) would wait forever, so the file is opened non-blocking, checked with fstat, and
/// switched back to blocking reads only when it is a regular file.
void open_for_reading(const std::string& path, OpenedFile& out);

}  // namespace wick::serialize::detail
