// libFuzzer harness: the IDX reader, raw and gzip, through a real file (Note [Fuzzing]).
#include <wick/wick.h>

#include <cstdint>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static wick::fuzz::ScratchFile file("-idx");
  const std::string& path = file.write(data, size);
  try {
    wick::data::IdxArray a = wick::data::read_idx(path);
    if (a.type == 0x08 && a.dims.size() == 1) (void)wick::data::load_idx_labels(path).sum().item<int64_t>();
    if (a.type == 0x08 && a.dims.size() == 3) (void)wick::data::load_idx_images(path, 0.5, 0.25).sum().item<double>();
  } catch (const wick::Error&) {
  }
  return 0;
}
