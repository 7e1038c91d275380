#pragma once
// Helpers of the safetensors tests (tests/nn/safetensors*_test.cpp).
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

}  // namespace wick::test::safetensors_files
