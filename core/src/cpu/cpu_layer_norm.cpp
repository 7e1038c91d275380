// CPU backend: fused layer_norm over contiguous rows and its input gradient (Note [Fused
// layer_norm], math::layer_norm_row in wick/core/layer_norm_rows.h), rows split across the
// intra-op threads (Note [Intra-op threads]); reached through wick::stubs (Note [Dispatch stubs]).
#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/parallel_for.h"
#include "wick/core/dtype.h"
#include "wick/core/layer_norm_rows.h"
#include "wick/core/stubs.h"

namespace wick::cpu {

namespace {
void layer_norm_rows(DType dtype, int64_t rows, int64_t cols, const void* x, const void* w, const void* b, double eps,
                     void* y, void* mean, void* rstd) {
  dispatch_floating(dtype, "layer_norm", [&]<typename T>() {
    const T* px = static_cast<const T*>(x);
    const T* pw = static_cast<const T*>(w);
    const T* pb = static_cast<const T*>(b);
    T* py = static_cast<T*>(y);
    T* pm = static_cast<T*>(mean);
    T* pr = static_cast<T*>(rstd);
    parallel_for(rows, items_per_piece(cols), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r)
        math::layer_norm_row(px + r * cols, pw, pb, py + r * cols, cols, eps, pm + r, pr + r);
    });
  });
}

void layer_norm_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* g, const void* x, const void* w,
                              const void* mean, const void* rstd, void* dx) {
  dispatch_floating(dtype, "layer_norm_backward", [&]<typename T>() {
    const T* pg = static_cast<const T*>(g);
    const T* px = static_cast<const T*>(x);
    const T* pw = static_cast<const T*>(w);
    const T* pm = static_cast<const T*>(mean);
    const T* pr = static_cast<const T*>(rstd);
    T* pd = static_cast<T*>(dx);
    parallel_for(rows, items_per_piece(cols), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r)
        math::layer_norm_backward_row(pg + r * cols, px + r * cols, pw, pm[r], pr[r], pd + r * cols, cols);
    });
  });
}
}  // namespace

void register_cpu_layer_norm_stubs() {
  stubs::layer_norm_rows.set(DeviceType::CPU, &layer_norm_rows);
  stubs::layer_norm_backward_rows.set(DeviceType::CPU, &layer_norm_backward_rows);
}

}  // namespace wick::cpu
