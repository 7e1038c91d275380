#pragma once
// Shared pieces of the libFuzzer harnesses.
//
// Note [Fuzzing]
// Each harness feeds its input to one loader and accepts exactly two outcomes: success, or a
// wick::Error (any class). Anything else (a crash, a sanitizer report, another exception such as
// std::bad_alloc escaping, more than the rss limit, a timeout) is a finding. The loaders that
// take a path get the input through a file under /dev/shm (or $TMPDIR), written fresh for each
// run, so the real open/stat/read code is what runs. `make fuzz` (scripts/fuzz.sh) runs each
// harness for a set time over its committed corpus (fuzz/corpus/<harness>/: seeds from wick's
// own writers, and every crash found so far, renamed regression-*) with the JSON dictionary
// fuzz/json.dict; .ci/run runs each for 60 s and replays the corpus.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace wick::fuzz {

/// A per-process scratch file holding the current input; removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir =
        ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    path_ = std::string(dir) + "/wick-fuzz-" + std::to_string(::getpid()) + suffix;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  /// Replaces the file's contents with data[0, size) and returns its path.
  const std::string& write(const uint8_t* data, size_t size) {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

}  // namespace wick::fuzz
