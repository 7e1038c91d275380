#pragma once
// Catch2's session, for the test executables' mains (Note [Test build flags] in
// tests/CMakeLists.txt): Catch2's implementation, and with it Catch::Session, is compiled only in
// support/catch_runner.cpp.

namespace wick::test {

/// Runs the Catch2 session over the whole command line and returns Catch2's result (the number of
/// failed assertions, capped at 255), as CATCH_CONFIG_MAIN's main does.
int run_catch_session(int argc, char* argv[]);

}  // namespace wick::test
