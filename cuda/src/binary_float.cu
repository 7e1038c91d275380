// Binary elementwise kernels for float32 and float64 operands.
#include "binary_apply.cuh"
#include "kernels.h"

namespace wick::cuda::kernels {

void binary_floating(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  if (a.dtype == DType::Float32)
    detail::launch_binary<float>(op, out, a, b);
  else
    detail::launch_binary<double>(op, out, a, b);
}

}  // namespace wick::cuda::kernels
