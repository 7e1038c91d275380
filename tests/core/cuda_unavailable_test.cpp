// Using a CUDA device where there is none (no GPU, or wick built without CUDA) raises a
// wick::DeviceUnavailable that mentions CUDA, and never crashes. Only core APIs are used, so this
// test builds with WICK_CUDA=OFF too.
#include <catch2/catch.hpp>

#include "wick/config.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#if WICK_WITH_CUDA
#include "wick/cuda/runtime.h"
#endif

using Catch::Matchers::Contains;

namespace {
bool no_cuda_device() {
#if WICK_WITH_CUDA
  return wick::cuda::device_count() == 0;
#else
  return true;
#endif
}
}  // namespace

TEST_CASE("a CUDA device raises a clear error when there is none", "[core][cuda-unavailable]") {
  if (!no_cuda_device()) {
    SUCCEED("this machine has a CUDA device: the GPU tests (test_cuda) cover it");
    return;
  }
  const wick::Device cuda0("cuda:0");
  CHECK(cuda0.is_cuda());
  CHECK_THROWS_AS(wick::native::empty({2}, wick::kFloat32, cuda0), wick::Error);
  // No GPU (or no CUDA) is DeviceUnavailable, never a BackendError (Note [Typed errors]).
  CHECK_THROWS_AS(wick::native::empty({2}, wick::kFloat32, cuda0), wick::DeviceUnavailable);
  CHECK_THROWS_AS(wick::DeviceGuard(cuda0), wick::DeviceUnavailable);
  CHECK_THROWS_AS(wick::memory_stats(cuda0), wick::DeviceUnavailable);
  CHECK_THROWS_WITH(wick::native::empty({2}, wick::kFloat32, cuda0), Contains("CUDA"));
  CHECK_THROWS_WITH(wick::native::zeros({3, 4}, wick::kFloat64, wick::Device("cuda:1")), Contains("CUDA"));
  const wick::Tensor cpu = wick::native::ones({4}, wick::kFloat32, wick::kCPU);
  CHECK_THROWS_WITH(wick::native::to(cpu, cuda0, wick::kFloat32), Contains("CUDA"));
  CHECK_THROWS_WITH(wick::memory_stats(cuda0), Contains("CUDA"));
  CHECK_THROWS_WITH(wick::DeviceGuard(cuda0), Contains("CUDA"));
  // The CPU keeps working after the failures.
  CHECK(wick::native::sum(cpu, {}, false).item<float>() == 4.0f);
#if !WICK_WITH_CUDA
  CHECK_THROWS_WITH(wick::native::empty({2}, wick::kFloat32, cuda0), Contains("built without CUDA support"));
#else
  CHECK_THROWS_WITH(wick::native::empty({2}, wick::kFloat32, cuda0), Contains("0 CUDA devices"));
#endif
}
