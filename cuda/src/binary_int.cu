// Binary elementwise kernels for int64 and bool operands, plus the dtype dispatch.
#include "binary_apply.cuh"
#include "kernels.h"

namespace wick::cuda::kernels {

void binary_integral(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  if (a.dtype == DType::Int64)
    detail::launch_binary<int64_t>(op, out, a, b);
  else
    detail::launch_binary<bool>(op, out, a, b);
}

void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  if (is_floating(a.dtype))
    binary_floating(op, out, a, b);
  else
    binary_integral(op, out, a, b);
}

}  // namespace wick::cuda::kernels
