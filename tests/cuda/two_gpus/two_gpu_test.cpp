// The GPU tests that need two CUDA devices: per-device allocator statistics and peer copies.
// Their own executable (test_cuda_two_gpus), whose main exits 77 with fewer than two devices, so
// that ctest reports them skipped on a one-GPU machine instead of counting them as passed.
#include "cuda_test_util.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"

using namespace wick;
using namespace wick::cuda_test;

TEST_CASE("statistics are per device", "[cuda][allocator][two-gpus]") {
  REQUIRE(cuda::device_count() >= 2);
  const MemoryStats b0 = cuda::memory_stats(0), b1 = cuda::memory_stats(1);
  Tensor t = native::empty({4096}, kFloat64, gpu(1));
  CHECK(cuda::memory_stats(1).in_use == b1.in_use + 4096 * 8);
  CHECK(cuda::memory_stats(0).in_use == b0.in_use);
}

TEST_CASE("copies between two CUDA devices", "[cuda][copy][two-gpus]") {
  REQUIRE(cuda::device_count() >= 2);
  for (DType dt : {kFloat32, kFloat64, kInt64, kBool}) {
    Tensor x = random_cpu({257, 31}, dt);
    Tensor on0 = to_gpu(x, 0);
    Tensor on1 = native::to(on0, gpu(1), dt);
    CHECK(on1.device() == gpu(1));
    check_equal(on1, x);
    Tensor nc = native::transpose(native::empty({31, 257}, kFloat64, gpu(1)), 0, 1);
    native::copy_(nc, noncontiguous_gpu(x));
    check_equal(nc, native::to(x, kCPU, kFloat64));
  }
  INFO("peer access 0 <-> 1: " << cuda::can_access_peer(0, 1));
}
