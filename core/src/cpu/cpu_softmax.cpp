// CPU backend: fused softmax and log_softmax along the last dim and their backwards, one row at a
// time (math::softmax_row and friends, wick/core/softmax_rows.h), rows split across the intra-op
// threads (Note [Intra-op threads]); reached through wick::stubs (Note [Dispatch stubs]).
#include <algorithm>

#include "cpu/cpu_backend.h"
#include "cpu/parallel_for.h"
#include "wick/core/dtype.h"
#include "wick/core/softmax_rows.h"
#include "wick/core/stubs.h"

namespace wick::cpu {

namespace {
// Rows are independent: split them across the intra-op threads (Note [Intra-op threads]).
template <typename Kernel>
void for_rows(int64_t rows, int64_t cols, Kernel&& kernel) {
  parallel_for(rows, items_per_piece(cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) kernel(r * cols);
  });
}

void log_softmax_rows(DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  dispatch_floating(dtype, "log_softmax", [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    for_rows(rows, cols, [&](int64_t o) { math::log_softmax_row(x + o, y + o, cols); });
  });
}

void log_softmax_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                               void* grad_in) {
  dispatch_floating(dtype, "log_softmax_backward", [&]<typename T>() {
    const T* g = static_cast<const T*>(grad_out);
    const T* y = static_cast<const T*>(out);
    T* gi = static_cast<T*>(grad_in);
    for_rows(rows, cols, [&](int64_t o) { math::log_softmax_backward_row(g + o, y + o, gi + o, cols); });
  });
}

void softmax_rows(DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  dispatch_floating(dtype, "softmax", [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    for_rows(rows, cols, [&](int64_t o) { math::softmax_row(x + o, y + o, cols); });
  });
}

void softmax_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                           void* grad_in) {
  dispatch_floating(dtype, "softmax_backward", [&]<typename T>() {
    const T* g = static_cast<const T*>(grad_out);
    const T* y = static_cast<const T*>(out);
    T* gi = static_cast<T*>(grad_in);
    for_rows(rows, cols, [&](int64_t o) { math::softmax_backward_row(g + o, y + o, gi + o, cols); });
  });
}
}  // namespace

void register_cpu_stubs() {
  stubs::log_softmax_rows.set(DeviceType::CPU, &log_softmax_rows);
  stubs::log_softmax_backward_rows.set(DeviceType::CPU, &log_softmax_backward_rows);
  stubs::softmax_rows.set(DeviceType::CPU, &softmax_rows);
  stubs::softmax_backward_rows.set(DeviceType::CPU, &softmax_backward_rows);
}

}  // namespace wick::cpu
