#pragma once
// The fused kernels reached through DispatchStub (Note [Dispatch stubs]): each declared once
// here, defined in core/src/stubs.cpp, filled by the backends that have the kernel.
#include <cstdint>

#include "wick/core/dispatch_stub.h"
#include "wick/core/dtype.h"

namespace wick::stubs {

/// out = log_softmax(in) along the last dim of contiguous rows x cols arrays of a floating
/// dtype (cols > 0; in may be out), math::log_softmax_row per row (Note [Fused log_softmax]).
using LogSoftmaxRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* in, void* out);
extern DispatchStub<LogSoftmaxRowsFn> log_softmax_rows;

/// grad_in = grad_out - exp(out) * sum(grad_out) along the last dim of contiguous rows x cols
/// arrays (log_softmax's backward), math::log_softmax_backward_row per row.
using LogSoftmaxBackwardRowsFn = void (*)(DType dtype, int64_t rows, int64_t cols, const void* grad_out,
                                          const void* out, void* grad_in);
extern DispatchStub<LogSoftmaxBackwardRowsFn> log_softmax_backward_rows;

}  // namespace wick::stubs
