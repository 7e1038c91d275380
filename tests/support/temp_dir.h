#pragma once
// TempDir: a fresh directory under the system temp folder, removed with its contents when the
// object goes (permissions restored first, so a test may make it read-only).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace wick::test {

class TempDir {
 public:
  /// Creates <tmp>/<prefix>-<pid>-<n>.
  explicit TempDir(const std::string& prefix = "wick-test") {
    static int n = 0;
    path = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
  /// The path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
  /// Writes `bytes` to `name` and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }

  std::filesystem::path path;
};

}  // namespace wick::test
