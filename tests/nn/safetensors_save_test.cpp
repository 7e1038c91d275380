// safetensors: saving safely. A failed save leaves the old file intact and no temporary behind,
// a save through a symbolic link writes the link's target and keeps its mode, and running out of
// memory is an OutOfMemoryError naming the file.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/safetensors_files.h"
#include "support/sanitizer.h"
#include "support/temp_dir.h"
#include "wick/nn/safetensors.h"

using namespace wick;
using namespace wick::serialize;
using namespace wick::test::safetensors_files;
using Catch::Matchers::Contains;
using wick::test::TempDir;
namespace fs = std::filesystem;

TEST_CASE("safetensors: a failed save leaves the old file intact and no temporary behind") {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"w", ones({3})}});
  const std::string before = read_bytes(path);
  CHECK_THROWS_WITH(save_safetensors(path, {{"w", zeros({3})}, {"v", Tensor()}}),
                    Contains(path) && Contains("\"v\" is undefined"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"w", zeros({3})}, {"w", zeros({3})}}), Contains("more than one tensor"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"", zeros({3})}}), Contains("empty name"));
  CHECK_THROWS_WITH(save_safetensors(path, {{"__metadata__", zeros({3})}}), Contains("reserved"));
  CHECK(read_bytes(path) == before);
  // An I/O failure: the destination is a directory, so the final rename fails.
  const std::string as_dir = dir.file("is_a_dir");
  fs::create_directories(fs::path(as_dir) / "child");
  CHECK_THROWS_WITH(save_safetensors(as_dir, {{"w", ones({3})}}), Contains(as_dir) && Contains("renaming"));
  CHECK_THROWS_WITH(save_safetensors(dir.file("missing/x.safetensors"), {{"w", ones({3})}}),
                    Contains("missing/x.safetensors") && Contains("cannot create"));
  CHECK(read_bytes(path) == before);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);  // no *.tmp-* left behind
  // A successful save replaces the file.
  save_safetensors(path, {{"w", full({3}, 2.0)}});
  CHECK(load_safetensors(path).at("w").to_vector<float>() == std::vector<float>{2, 2, 2});
}

TEST_CASE("safetensors: a save through a symbolic link writes the link's target and keeps its mode") {
  TempDir dir;
  fs::create_directories(dir.path / "runs");
  const std::string real = dir.file("runs/real.safetensors"), link = dir.file("latest.safetensors");
  save_safetensors(real, {{"w", ones({3})}});
  REQUIRE(::chmod(real.c_str(), 0600) == 0);
  fs::create_symlink("runs/real.safetensors", link);  // relative, as `ln -s` makes it

  save_safetensors(link, {{"w", full({3}, 2.0)}});
  CHECK(fs::is_symlink(link));
  CHECK(fs::read_symlink(link) == fs::path("runs/real.safetensors"));
  CHECK(load_safetensors(real).at("w").to_vector<float>() == std::vector<float>{2, 2, 2});
  struct stat st {};
  REQUIRE(::stat(real.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  // No temporary left next to the link or next to the target.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 2);  // runs, the link
  CHECK(std::distance(fs::directory_iterator(dir.path / "runs"), fs::directory_iterator()) == 1);

  // A plain file keeps its mode too.
  const std::string plain = dir.file("plain.safetensors");
  save_safetensors(plain, {{"w", ones({3})}});
  REQUIRE(::chmod(plain.c_str(), 0640) == 0);
  save_safetensors(plain, {{"w", full({3}, 3.0)}});
  REQUIRE(::stat(plain.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(load_safetensors(plain).at("w").to_vector<float>() == std::vector<float>{3, 3, 3});

  // A link to nothing is refused, and neither the link nor its missing target is made a file.
  const std::string dangling = dir.file("dangling.safetensors");
  fs::create_symlink("runs/none.safetensors", dangling);
  CHECK_THROWS_AS(save_safetensors(dangling, {{"w", ones({3})}}), IOError);
  CHECK_THROWS_WITH(save_safetensors(dangling, {{"w", ones({3})}}),
                    Contains(dangling) && Contains("symbolic link that cannot be resolved"));
  CHECK(fs::is_symlink(dangling));
  CHECK(!fs::exists(dir.path / "runs" / "none.safetensors"));
}

TEST_CASE("safetensors: running out of memory while building the file is an OutOfMemoryError naming it") {
  if (test::sanitizer_build()) {
    WARN("not run under a sanitizer: it limits the address space, which a sanitizer's allocator does not survive");
    return;
  }
  TempDir dir;
  const std::string path = dir.file("big.safetensors");
  // 128 MiB of float32 data, allocated (not touched) before the fork. The child may map only
  // 16 MiB more, so the file's 128 MiB buffer cannot be had.
  const Tensor big = empty({int64_t{32} << 20});
  std::fflush(nullptr);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(30);
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (rlim_t{16} << 20);
    struct rlimit rl {
      limit, limit
    };
    ::setrlimit(RLIMIT_AS, &rl);
    std::string msg = "no error";
    try {
      save_safetensors(path, {{"big", big}});
    } catch (const OutOfMemoryError& e) {
      msg = std::string("OutOfMemoryError: ") + e.what();
    } catch (const std::exception& e) {
      msg = std::string("another exception: ") + e.what();
    }
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  INFO(msg);
  CHECK_THAT(msg, Contains("OutOfMemoryError: ") && Contains(path) && Contains("134217728 of tensor data"));
  CHECK(!fs::exists(path));  // nothing was written
}
