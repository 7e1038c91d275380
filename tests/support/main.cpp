// The main shared by the CPU test executables: Catch2's session over the whole command line, as
// CATCH_CONFIG_MAIN's. Catch2 itself is compiled once, in support/catch_runner.cpp.
#include "support/catch_runner.h"

int main(int argc, char* argv[]) { return wick::test::run_catch_session(argc, argv); }
