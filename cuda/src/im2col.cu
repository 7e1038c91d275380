// im2col / col2im for contiguous images (float32, float64). col2im gathers: one thread per
// image element sums every column entry that maps onto it, so no atomics and a deterministic
// result.
//
// Note [Batched im2col]
// A batch of N contiguous images [N, C, H, W] is one image of N*C planes, and their columns
// [N, C*kh*kw, L] are that image's columns: plane p = n*C + c starts at p*H*W in the images and
// its kh*kw rows at p*kh*kw*L in the columns. So the batched stubs are the one-image kernels
// over N*C channels, one launch for the batch instead of one per image (conv2d, unfold2d and
// fold2d call them through stubs::im2col_images / col2im_images, nn/src/conv_ops.cpp).
#include "kernels.h"
#include "launch.cuh"
#include "op_device.h"
#include "wick/core/dtype.h"
#include "wick/core/stubs.h"
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

namespace {
Im2ColArgs over_images(const Im2ColArgs& g, int64_t images) {
  Im2ColArgs b = g;
  b.channels = g.channels * images;
  return b;
}
// The stubs' entries make the operands' device current, as CudaBackend's methods do (Note [Which
// device runs an op]): core calls them without.
void im2col_images(const Im2ColArgs& g, int64_t images, const void* image, void* columns) {
  OpDevice d(columns);
  kernels::im2col(over_images(g, images), image, columns);
}
void col2im_images(const Im2ColArgs& g, int64_t images, const void* columns, void* image) {
  OpDevice d(image);
  kernels::col2im(over_images(g, images), columns, image);
}
}  // namespace

void kernels::register_im2col_stubs() {
  stubs::im2col_images.set(DeviceType::CUDA, &im2col_images);
  stubs::col2im_images.set(DeviceType::CUDA, &col2im_images);
}

}  // namespace wick::cuda
