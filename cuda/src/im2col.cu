// im2col / col2im for one contiguous image (float32, float64). col2im gathers: one thread per
// image element sums every column entry that maps onto it, so no atomics and a deterministic
// result.
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"
#include "window.cuh"

namespace wick::cuda {

namespace {
template <typename T>
__global__ void im2col_kernel(Im2ColArgs g, const T* im, T* col) {
  const int64_t L = g.out_h * g.out_w;
  const int64_t n = g.channels * g.kernel_h * g.kernel_w * L;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t row = i / L;  // (c * kh + ki) * kw + kj
    const int64_t kj = row % g.kernel_w;
    const int64_t ki = (row / g.kernel_w) % g.kernel_h;
    const int64_t c = row / (g.kernel_w * g.kernel_h);
    const int64_t ih = oh * g.stride_h - g.pad_h + ki * g.dilation_h;
    const int64_t iw = ow * g.stride_w - g.pad_w + kj * g.dilation_w;
    col[i] = (ih >= 0 && ih < g.height && iw >= 0 && iw < g.width) ? im[(c * g.height + ih) * g.width + iw] : T(0);
  }
}

template <typename T>
__global__ void col2im_kernel(Im2ColArgs g, const T* col, T* im) {
  const int64_t L = g.out_h * g.out_w;
  const int64_t n = g.channels * g.height * g.width;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t w = i % g.width;
    const int64_t h = (i / g.width) % g.height;
    const int64_t c = i / (g.width * g.height);
    T sum = 0;
    detail::for_each_covering_window(g, h, w, [&](int64_t ki, int64_t kj, int64_t oh, int64_t ow) {
      sum += col[((c * g.kernel_h + ki) * g.kernel_w + kj) * L + oh * g.out_w + ow];
    });
    im[i] += sum;
  }
}
}  // namespace

void kernels::im2col(const Im2ColArgs& g, const void* image, void* columns) {
  const int64_t n = g.channels * g.kernel_h * g.kernel_w * g.out_h * g.out_w;
  if (n == 0) return;
  cudaStream_t stream = detail::current_raw_stream();
  dispatch_floating(g.dtype, "im2col", [&]<typename T>() {
    im2col_kernel<T>
        <<<detail::grid_for(n), detail::kBlock, 0, stream>>>(g, static_cast<const T*>(image), static_cast<T*>(columns));
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

void kernels::col2im(const Im2ColArgs& g, const void* columns, void* image) {
  const int64_t n = g.channels * g.height * g.width;
  if (n == 0) return;
  cudaStream_t stream = detail::current_raw_stream();
  dispatch_floating(g.dtype, "col2im", [&]<typename T>() {
    col2im_kernel<T>
        <<<detail::grid_for(n), detail::kBlock, 0, stream>>>(g, static_cast<const T*>(columns), static_cast<T*>(image));
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace wick::cuda
