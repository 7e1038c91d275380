#pragma once
// Shared by the error tests (hostile_input*_test.cpp, hostile_files_test.cpp, error_types_test.cpp):
// a catalogue row and its checker, the class of an error by name, safetensors images, and bounded
// runs of one call in a forked child.
#include <wick/wick.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace wick::test::hostile {

using TempDir = wick::test::TempDir;

/// Where the committed reproducers live.
inline const std::string kHostile = std::string(WICK_TEST_DATA_DIR) + "/hostile/";

inline TensorOptions f32() { return TensorOptions(kFloat32); }
inline TensorOptions f64() { return TensorOptions(kFloat64); }

/// The exact (most derived) class of a wick error, by name.
std::string class_of(const Error& e);

/// One bad call: what it is, the exact class it must raise, and words its message must contain.
struct Row {
  std::string what;
  std::string expected;  // class name
  std::function<void()> call;
  std::vector<std::string> words;
};

/// Runs every row: each must raise a wick::Error of its class, with its words, in a message
/// shorter than 1500 characters.
void check_rows(const std::vector<Row>& rows);

/// The catalogue's tables by name, each built for a temporary directory; the hostile_input*_test.cpp
/// files add theirs at static initialisation (add_row_tables), so a test can count them all.
using RowTable = std::function<std::vector<Row>(const TempDir&)>;
inline std::map<std::string, RowTable>& row_tables() {
  static std::map<std::string, RowTable> tables;
  return tables;
}
/// Adds `tables`; returns true (for a namespace-scope `const bool` initialiser).
inline bool add_row_tables(const std::map<std::string, RowTable>& tables) {
  for (const auto& [name, t] : tables) row_tables().emplace(name, t);
  return true;
}

/// A safetensors image with `header` and `data`.
std::string safetensors_image(const std::string& header, const std::string& data = "");

/// What a bounded run saw (run_bounded).
struct Bounded {
  bool exited = false;
  int code = -1;             // 0: a wick::Error of the expected class; see run_bounded
  std::string message;       // the error's class and message, from the child
  double cpu_seconds = 0;    // user + system time of the child
  double extra_rss_mib = 0;  // the child's peak resident memory above the parent's at the fork
};

/// Runs fn in a forked child limited to 64 MiB of address space above the parent's (when not
/// under ASan) and to 10 s of wall time. Exit codes: 0 the expected class, 1 another wick class,
/// 2 std::bad_alloc, 3 another exception, 4 no exception; a signal gives minus its number.
Bounded run_bounded(const std::function<void()>& fn, const std::string& expected);

/// A reproducer: what it is, the class it must raise, and the call.
struct Repro {
  std::string what;
  std::string expected;
  std::function<void()> call;
};

}  // namespace wick::test::hostile
