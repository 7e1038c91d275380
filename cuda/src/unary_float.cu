// Unary elementwise kernels for float32 and float64.
#include "kernels.h"
#include "unary_apply.cuh"

namespace wick::cuda::kernels {

void unary_floating(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  if (out.dtype == DType::Float32)
    detail::launch_unary<float>(op, out, in, p0, p1);
  else
    detail::launch_unary<double>(op, out, in, p0, p1);
}

}  // namespace wick::cuda::kernels
