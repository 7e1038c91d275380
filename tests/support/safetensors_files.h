#pragma once
// Helpers of the safetensors tests (tests/nn/safetensors*_test.cpp).
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

namespace wick::test::safetensors_files {

/// The checked-in oracle file, tests/data/ops.safetensors (not $WICK_ORACLE_FILE: these tests
/// read the file that is committed).
inline std::string oracle_file() { return std::string(WICK_TEST_DATA_DIR) + "/ops.safetensors"; }

/// The bytes of the file at `path` (empty when it cannot be read).
inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// A file image: the 8-byte little-endian length of `header`, `header` (the JSON text, as
/// given: no padding is added), then `data`.
inline std::string image(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}
}  // namespace wick::test::safetensors_files
