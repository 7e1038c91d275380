// The NCCL backend's GPU tests (test_distributed_gpu, run by ctest under `mpirun -np 1`). Without
// wick's CUDA backend or without a CUDA device it prints why and exits 77, which ctest reports as
// skipped (SKIP_RETURN_CODE 77); failures exit 1, never 77 (support/exit_code.h).
// Catch2 itself is compiled once, in support/catch_runner.cpp.
#include <cstdio>

#include "support/catch_runner.h"
#include "support/exit_code.h"
#include "wick/config.h"
#include "wick/distributed/backend_choice.h"

int main(int argc, char* argv[]) {
  const std::string why = wick::distributed::nccl_unavailable_reason();
  if (!why.empty()) {
    std::printf("test_distributed_gpu: SKIPPED: the nccl backend cannot run here: %s\n", why.c_str());
    return wick::test::kSkipExitCode;
  }
  return wick::test::exit_code_from_catch(wick::test::run_catch_session(argc, argv));
}
