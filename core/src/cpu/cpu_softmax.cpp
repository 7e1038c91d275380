// CPU backend: fused log_softmax along the last dim and its backward, one row at a time
// (math::log_softmax_row, wick/core/softmax_rows.h), reached through wick::stubs (Note [Dispatch
// stubs]).
#include "cpu/cpu_backend.h"
#include "wick/core/dtype.h"
#include "wick/core/softmax_rows.h"
#include "wick/core/stubs.h"

namespace wick::cpu {

namespace {
void log_softmax_rows(DType dtype, int64_t rows, int64_t cols, const void* in, void* out) {
  dispatch_floating(dtype, "log_softmax", [&]<typename T>() {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    for (int64_t r = 0; r < rows; ++r) math::log_softmax_row(x + r * cols, y + r * cols, cols);
  });
}

void log_softmax_backward_rows(DType dtype, int64_t rows, int64_t cols, const void* grad_out, const void* out,
                               void* grad_in) {
  dispatch_floating(dtype, "log_softmax_backward", [&]<typename T>() {
    const T* g = static_cast<const T*>(grad_out);
    const T* y = static_cast<const T*>(out);
    T* gi = static_cast<T*>(grad_in);
    for (int64_t r = 0; r < rows; ++r) math::log_softmax_backward_row(g + r * cols, y + r * cols, gi + r * cols, cols);
  });
}
}  // namespace

void register_cpu_stubs() {
  stubs::log_softmax_rows.set(DeviceType::CPU, &log_softmax_rows);
  stubs::log_softmax_backward_rows.set(DeviceType::CPU, &log_softmax_backward_rows);
}

}  // namespace wick::cpu
