#pragma once
// The exit status of a test executable, from Catch2's result.
//
// Catch2 v2's Session::run returns the number of failed assertions, capped at 255. ctest reads
// 77 as "skipped" (SKIP_RETURN_CODE), so exactly 77 failures would read as a skip, and 256
// would wrap to 0 in a shell. Any failure therefore maps to 1; 77 is reserved for "no GPU".
namespace wick::test {

inline constexpr int kSkipExitCode = 77;

/// 0 when Catch2 reported no failure, 1 otherwise (never kSkipExitCode).
inline int exit_code_from_catch(int catch_result) { return catch_result == 0 ? 0 : 1; }

}  // namespace wick::test
