// Unary elementwise kernels for int64 and bool, plus the dtype dispatch of every unary op.
#include "kernels.h"
#include "unary_apply.cuh"

namespace wick::cuda::kernels {

void unary_integral(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  if (out.dtype == DType::Int64)
    detail::launch_unary<int64_t>(op, out, in, p0, p1);
  else
    detail::launch_unary<bool>(op, out, in, p0, p1);
}

void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  if (is_floating(out.dtype))
    unary_floating(op, out, in, p0, p1);
  else
    unary_integral(op, out, in, p0, p1);
}

}  // namespace wick::cuda::kernels
