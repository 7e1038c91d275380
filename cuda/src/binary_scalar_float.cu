// Tensor-scalar binary kernels for float32 and float64 (Note [Scalar operands]).
#include "binary_apply.cuh"
#include "kernels.h"

namespace wick::cuda::kernels {

void binary_scalar_floating(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b) {
  if (a.dtype == DType::Float32)
    detail::launch_binary_scalar<float>(op, out, a, static_cast<float>(b));
  else
    detail::launch_binary_scalar<double>(op, out, a, b);
}

}  // namespace wick::cuda::kernels
