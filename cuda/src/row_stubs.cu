// The fused row kernels on CUDA: softmax, log_softmax and layer_norm over contiguous rows and
// their backwards, reached through their dispatch stubs (Note [Dispatch stubs]). Each thread runs
// one row through the same functor the CPU calls (wick/core/softmax_rows.h, layer_norm_rows.h),
// so the math and its order are written once (Note [Math written once]); only exp, log and sqrt
// come from CUDA's libdevice, so results equal the CPU's to rounding. A thread per row is the
// simplest launch that keeps that order: rows of a batch of logits or of a transformer's tokens
// are many and short. A block per row (for a few very long rows) would reorder the sums.
#include "kernels.h"
#include "launch.cuh"
#include "op_device.h"
#include "wick/core/dtype.h"
#include "wick/core/layer_norm_rows.h"
#include "wick/core/softmax_rows.h"
#include "wick/core/stubs.h"

namespace wick::cuda {

namespace {

// One row a thread: row(r) for r in [0, rows).
template <typename RowFn>
__global__ void row_kernel(int64_t rows, RowFn row) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) row(r);
}

template <typename RowFn>
void launch_rows(int64_t rows, RowFn row) {
  if (rows == 0) return;
  row_kernel<<<detail::grid_for(rows), detail::kBlock, 0, detail::current_raw_stream()>>>(rows, row);
  WICK_CUDA_CHECK(cudaGetLastError());
}

// The four softmax-family stubs share one shape: a forward (in -> out) and a backward
// (grad_out, out -> grad_in), each applied row by row; `Log` picks log_softmax or softmax.
template <typename T, bool Log>
struct SoftmaxForwardRow {
  const T* x;
  T* y;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    if constexpr (Log)
      math::log_softmax_row(x + r * cols, y + r * cols, cols);
    else
      math::softmax_row(x + r * cols, y + r * cols, cols);
  }
};
template <typename T, bool Log>
struct SoftmaxBackwardRow {
  const T* g;
  const T* y;
  T* gi;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    if constexpr (Log)
      math::log_softmax_backward_row(g + r * cols, y + r * cols, gi + r * cols, cols);
    else
      math::softmax_backward_row(g + r * cols, y + r * cols, gi + r * cols, cols);
  }
};

template <bool Log>
void forward_rows(const char* op, DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  OpDevice device(out);
  dispatch_floating(dtype, op, [&]<typename T>() {
    launch_rows(rows, SoftmaxForwardRow<T, Log>{static_cast<const T*>(in), static_cast<T*>(out), cols});
  });
}

template <bool Log>
void backward_rows(const char* op, DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                   void* grad_in) {
  OpDevice device(grad_in);
  dispatch_floating(dtype, op, [&]<typename T>() {
    launch_rows(rows, SoftmaxBackwardRow<T, Log>{static_cast<const T*>(grad_out), static_cast<const T*>(out),
                                                 static_cast<T*>(grad_in), cols});
  });
}

void log_softmax_rows(DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  forward_rows<true>("log_softmax", dtype, rows, cols, in, out);
}
void softmax_rows(DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  forward_rows<false>("softmax", dtype, rows, cols, in, out);
}
void log_softmax_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                               void* grad_in) {
  backward_rows<true>("log_softmax_backward", dtype, rows, cols, grad_out, out, grad_in);
}
void softmax_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                           void* grad_in) {
  backward_rows<false>("softmax_backward", dtype, rows, cols, grad_out, out, grad_in);
}

template <typename T>
struct LayerNormRow {
  const T *x, *w, *b;
  T *y, *mean, *rstd;
  int64_t cols;
  double eps;
  __device__ void operator()(int64_t r) const {
    math::layer_norm_row(x + r * cols, w, b, y + r * cols, cols, eps, mean + r, rstd + r);
  }
};
template <typename T>
struct LayerNormBackwardRow {
  const T *g, *x, *w, *mean, *rstd;
  T* dx;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    math::layer_norm_backward_row(g + r * cols, x + r * cols, w, mean[r], rstd[r], dx + r * cols, cols);
  }
};

void layer_norm_rows(DType dtype, int64_t rows, int64_t cols, const void* x, const void* w, const void* b, double eps,
                     void* y, void* mean, void* rstd) {
  OpDevice device(y);
  dispatch_floating(dtype, "layer_norm", [&]<typename T>() {
    launch_rows(rows, LayerNormRow<T>{static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(b),
                                      static_cast<T*>(y), static_cast<T*>(mean), static_cast<T*>(rstd), cols, eps});
  });
}

void layer_norm_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* g, const void* x, const void* w,
                              const void* mean, const void* rstd, void* dx) {
  OpDevice device(dx);
  dispatch_floating(dtype, "layer_norm_backward", [&]<typename T>() {
    launch_rows(rows, LayerNormBackwardRow<T>{static_cast<const T*>(g), static_cast<const T*>(x),
                                              static_cast<const T*>(w), static_cast<const T*>(mean),
                                              static_cast<const T*>(rstd), static_cast<T*>(dx), cols});
  });
}

}  // namespace

void kernels::register_row_stubs() {
  stubs::log_softmax_rows.set(DeviceType::CUDA, &log_softmax_rows);
  stubs::log_softmax_backward_rows.set(DeviceType::CUDA, &log_softmax_backward_rows);
  stubs::softmax_rows.set(DeviceType::CUDA, &softmax_rows);
  stubs::softmax_backward_rows.set(DeviceType::CUDA, &softmax_backward_rows);
  stubs::layer_norm_rows.set(DeviceType::CUDA, &layer_norm_rows);
  stubs::layer_norm_backward_rows.set(DeviceType::CUDA, &layer_norm_backward_rows);
}

}  // namespace wick::cuda
