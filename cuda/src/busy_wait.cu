// A kernel that keeps a stream busy for a while (tests of stream-aware reuse, benchmarks).
#include "kernels.h"
#include "launch.cuh"

namespace wick::cuda {

namespace {
__global__ void busy_wait_kernel(uint64_t nanoseconds) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}
}  // namespace

void kernels::busy_wait(void* stream, int64_t microseconds) {
  const uint64_t ns = microseconds > 0 ? static_cast<uint64_t>(microseconds) * 1000u : 0u;
  busy_wait_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(ns);
  WICK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wick::cuda
