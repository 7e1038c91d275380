// The GPU test executables' main: with fewer CUDA devices than the executable needs
// (WICK_TEST_MIN_GPUS: 1 for test_cuda, 2 for test_cuda_two_gpus) it prints why and exits 77,
// which ctest reports as *skipped* (SKIP_RETURN_CODE 77), never as passed. Failures exit 1,
// never 77 (support/exit_code.h).
// Catch2 itself is compiled once, in support/catch_runner.cpp.
#include <cstdio>

#include "support/catch_runner.h"
#include "support/exit_code.h"
#include "wick/cuda/runtime.h"

#ifndef WICK_TEST_MIN_GPUS
#define WICK_TEST_MIN_GPUS 1
#endif

int main(int argc, char* argv[]) {
  const char* name = argc > 0 ? argv[0] : "test_cuda";
  const int count = wick::cuda::device_count();
  if (count == 0) {
    std::printf("%s: SKIPPED: no CUDA device (%s)\n", name, wick::cuda::unavailable_reason().c_str());
    return wick::test::kSkipExitCode;
  }
  if (count < WICK_TEST_MIN_GPUS) {
    std::printf("%s: SKIPPED: needs %d CUDA devices, this machine has %d\n", name, WICK_TEST_MIN_GPUS, count);
    return wick::test::kSkipExitCode;
  }
  const auto& p = wick::cuda::get_device_properties(0);
  std::printf("%s: %d CUDA device(s); cuda:0 is %s (sm_%d%d, %d SMs)\n", name, count, p.name.c_str(), p.major, p.minor,
              p.multi_processor_count);
  // Catch2 returns the failure count (capped at 255): map it so that a failure never reads as a skip.
  return wick::test::exit_code_from_catch(wick::test::run_catch_session(argc, argv));
}
