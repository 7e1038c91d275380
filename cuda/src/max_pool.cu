// 2-d max pooling with indices (float32, float64): one thread per output element, the window
// scanned in row-major order with PyTorch's selection rule (Backend::max_pool2d); and its
// backward.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "window.cuh"

namespace wick::cuda {

namespace {
template <typename T>
__global__ void max_pool2d_kernel(Im2ColArgs g, const T* im, T* out, int64_t* indices) {
  const int64_t n = g.channels * g.out_h * g.out_w;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t c = i / (g.out_w * g.out_h);
    const T* plane = im + c * g.height * g.width;
    T best = -INFINITY;
    int64_t best_at = -1;
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      const int64_t ih = oh * g.stride_h - g.pad_h + ki * g.dilation_h;
      if (ih < 0 || ih >= g.height) continue;
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        const int64_t iw = ow * g.stride_w - g.pad_w + kj * g.dilation_w;
        if (iw < 0 || iw >= g.width) continue;
        const int64_t at = ih * g.width + iw;
        const T v = plane[at];
        if (best_at < 0 || math::pool_take(best, v)) {  // Note [Reduction rules]
          best = v;
          best_at = at;
        }
      }
    }
    out[i] = best;
    indices[i] = best_at;
  }
}

// Backward as a gather: one thread per input element sums the gradients of the outputs whose
// window covers it and whose index points at it, so no atomics and a deterministic sum.
template <typename T>
__global__ void max_pool2d_backward_kernel(Im2ColArgs g, const T* grad_out, const int64_t* indices, T* grad_in) {
  const int64_t n = g.channels * g.height * g.width;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t w = i % g.width;
    const int64_t h = (i / g.width) % g.height;
    const int64_t c = i / (g.width * g.height);
    const int64_t at = h * g.width + w;
    const int64_t base = c * g.out_h * g.out_w;
    T sum = 0;
    detail::for_each_covering_window(g, h, w, [&](int64_t, int64_t, int64_t oh, int64_t ow) {
      const int64_t o = base + oh * g.out_w + ow;
      if (indices[o] == at) sum += grad_out[o];
    });
    grad_in[i] = sum;
  }
}
}  // namespace

void kernels::max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) {
  const int64_t n = g.channels * g.out_h * g.out_w;
  if (n == 0) return;
  cudaStream_t stream = detail::current_raw_stream();
  dispatch_floating(g.dtype, "max_pool2d", [&]<typename T>() {
    max_pool2d_kernel<T><<<detail::grid_for(n), detail::kBlock, 0, stream>>>(g, static_cast<const T*>(image),
                                                                             static_cast<T*>(out), indices);
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

void kernels::max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices, void* grad_image) {
  const int64_t n = g.channels * g.height * g.width;
  if (n == 0) return;
  cudaStream_t stream = detail::current_raw_stream();
  dispatch_floating(g.dtype, "max_pool2d_backward", [&]<typename T>() {
    max_pool2d_backward_kernel<T><<<detail::grid_for(n), detail::kBlock, 0, stream>>>(
        g, static_cast<const T*>(grad_out), indices, static_cast<T*>(grad_image));
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace wick::cuda
