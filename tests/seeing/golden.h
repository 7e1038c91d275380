#pragma once
// Golden files for the pictures (tests/data/dot/) and the DOT output that tests/seeing/dot_check.sh
// renders with Graphviz.
//
// WICK_UPDATE_GOLDEN=1 rewrites a golden file from the current output (then review the diff).
// WICK_DOT_OUT=<dir> makes every DOT a test produces land in <dir>, for `dot -Tsvg`.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace wick::test {

/// Writes `text` to $WICK_DOT_OUT/<name> when that variable is set.
inline void emit_dot(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("WICK_DOT_OUT");
  if (!dir || !*dir) return;
  std::filesystem::create_directories(dir);
  std::ofstream(std::filesystem::path(dir) / name, std::ios::binary) << text;
}

/// Checks that `text` equals tests/data/dot/<name> (and emits it).
inline void check_golden(const std::string& name, const std::string& text) {
  emit_dot(name, text);
  const std::filesystem::path path = std::filesystem::path(WICK_TEST_DATA_DIR) / "dot" / name;
  const char* update = std::getenv("WICK_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    WARN("rewrote golden file " << path.string());
  }
  std::ifstream in(path, std::ios::binary);
  INFO("golden file " << path.string() << " (WICK_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == text);
}

}  // namespace wick::test
