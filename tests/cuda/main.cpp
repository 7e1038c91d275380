// The GPU test executable's main: without a CUDA device it prints why and exits 77, which ctest
// reports as *skipped* (SKIP_RETURN_CODE 77), never as passed. Failures exit 1, never 77
// (support/exit_code.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "support/exit_code.h"
#include "wick/cuda/runtime.h"

int main(int argc, char* argv[]) {
  if (wick::cuda::device_count() == 0) {
    std::printf("test_cuda: SKIPPED: no CUDA device (%s)\n", wick::cuda::unavailable_reason().c_str());
    return wick::test::kSkipExitCode;
  }
  const auto& p = wick::cuda::get_device_properties(0);
  std::printf("test_cuda: %d CUDA device(s); cuda:0 is %s (sm_%d%d, %d SMs)\n", wick::cuda::device_count(),
              p.name.c_str(), p.major, p.minor, p.multi_processor_count);
  // Catch2 returns the failure count (capped at 255): map it so that a failure never reads as a skip.
  return wick::test::exit_code_from_catch(Catch::Session().run(argc, argv));
}
