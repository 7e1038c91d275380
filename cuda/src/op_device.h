#pragma once
// OpDevice: makes the device that owns an operand current for one op (private; CUDA backend only).
//
// Note [Which device runs an op]
// Core's front-ends call the backend without making the operands' device current (KernelTensor
// carries no device, nor do the dispatch stubs' raw pointers). With one GPU that is always device
// 0. With several, each op looks up the device that owns its output pointer
// (cudaPointerGetAttributes, a fraction of a microsecond) and makes it current for the op's
// duration; inputs must live on that device (core checks).
#include <cuda_runtime.h>

#include "cuda_check.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

// Makes the device owning `p` current for one op (Note [Which device runs an op]).
class OpDevice {
 public:
  explicit OpDevice(const void* p) {
    if (device_count() <= 1 || p == nullptr) return;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) return;
    int cur = 0;
    WICK_CUDA_CHECK(cudaGetDevice(&cur));
    if (cur != attr.device) {
      WICK_CUDA_CHECK(cudaSetDevice(attr.device));
      prev_ = cur;
    }
  }
  ~OpDevice() {
    if (prev_ >= 0) (void)cudaSetDevice(prev_);
  }
  OpDevice(const OpDevice&) = delete;
  OpDevice& operator=(const OpDevice&) = delete;

 private:
  int prev_ = -1;
};

}  // namespace wick::cuda
