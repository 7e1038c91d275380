// Catch2's implementation, compiled once for every test executable (Note [Test build flags] in
// tests/CMakeLists.txt). No main here: support/main.cpp is the plain one, and the GPU executables
// bring their own (cuda/main.cpp, distributed/gpu/main.cpp), which skip before Catch runs.
#define CATCH_CONFIG_RUNNER
#include "support/catch_runner.h"

#include <catch2/catch.hpp>

namespace wick::test {

int run_catch_session(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

}  // namespace wick::test
