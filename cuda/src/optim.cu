// The fused optimizer steps on CUDA (Note [Fused optimizer steps], docs/training.md): one
// grid-stride kernel per functor from wick/core/optim_functors.h, the same math the CPU loop
// calls, reached through stubs::sgd_step and stubs::adam_step (Note [Dispatch stubs]). This file
// is built with --fmad=false (cuda/CMakeLists.txt): every multiply and add then rounds on its
// own, as on the CPU, and sqrt and division are IEEE-rounded by default, so a step gives the
// CPU's bits.
#include "kernels.h"
#include "launch.cuh"
#include "op_device.h"
#include "wick/core/dtype.h"
#include "wick/core/optim_functors.h"
#include "wick/core/stubs.h"

namespace wick::cuda {

namespace {

template <typename T, typename Step>
__global__ void sgd_kernel(Step step, T* p, const T* g, T* buf, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    step(p[i], g[i], Step::kUsesBuffer ? buf + i : nullptr);
}

template <typename T, typename Step>
__global__ void adam_kernel(Step step, T* p, const T* g, T* m, T* v, T* vmax, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    step(p[i], g[i], m[i], v[i], Step::kUsesMax ? vmax + i : nullptr);
}

// launch(t, stream) for each non-empty parameter, on its device and that device's current
// stream: one launch per parameter (a multi-tensor launch is left for later).
template <typename Tensor, typename Launch>
void launch_each(const Tensor* ts, int64_t count, Launch&& launch) {
  for (int64_t i = 0; i < count; ++i) {
    if (ts[i].n == 0) continue;
    OpDevice device(ts[i].p);
    launch(ts[i], detail::current_raw_stream());
    WICK_CUDA_CHECK(cudaGetLastError());
  }
}

void sgd_step(DType dtype, const stubs::SgdStepTensor* ts, int64_t count) {
  dispatch_floating(dtype, "SGD.step", [&]<typename T>() {
    launch_each(ts, count, [](const stubs::SgdStepTensor& t, cudaStream_t stream) {
      math::with_sgd_step<T>(t.args, [&](auto step) {
        sgd_kernel<T><<<detail::grid_for(t.n), detail::kBlock, 0, stream>>>(
            step, static_cast<T*>(t.p), static_cast<const T*>(t.g), static_cast<T*>(t.momentum_buffer), t.n);
      });
    });
  });
}

void adam_step(DType dtype, const stubs::AdamStepTensor* ts, int64_t count) {
  dispatch_floating(dtype, "Adam.step", [&]<typename T>() {
    launch_each(ts, count, [](const stubs::AdamStepTensor& t, cudaStream_t stream) {
      math::with_adam_step<T>(t.args, t.max_exp_avg_sq != nullptr, [&](auto step) {
        adam_kernel<T><<<detail::grid_for(t.n), detail::kBlock, 0, stream>>>(
            step, static_cast<T*>(t.p), static_cast<const T*>(t.g), static_cast<T*>(t.exp_avg),
            static_cast<T*>(t.exp_avg_sq), static_cast<T*>(t.max_exp_avg_sq), t.n);
      });
    });
  });
}

}  // namespace

void kernels::register_optim_stubs() {
  stubs::sgd_step.set(DeviceType::CUDA, &sgd_step);
  stubs::adam_step.set(DeviceType::CUDA, &adam_step);
}

}  // namespace wick::cuda
