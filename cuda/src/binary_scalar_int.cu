// Tensor-scalar binary kernels for int64 and bool, the dtype dispatch and the stub's entry
// (Note [Scalar operands]).
#include "binary_apply.cuh"
#include "kernels.h"
#include "op_device.h"
#include "wick/core/int_math.h"
#include "wick/core/stubs.h"

namespace wick::cuda::kernels {

void binary_scalar_integral(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b) {
  // The double holds the scalar as fill_ receives it; converted as fill converts it.
  if (a.dtype == DType::Int64)
    detail::launch_binary_scalar<int64_t>(op, out, a, math::convert<int64_t>(b));
  else
    detail::launch_binary_scalar<bool>(op, out, a, static_cast<bool>(b));
}

namespace {
void binary_scalar(BinaryOp op, const KernelTensor& out, const KernelTensor& a, double b) {
  OpDevice g(out.data);  // core calls the stub without making the operand's device current
  if (is_floating(a.dtype))
    binary_scalar_floating(op, out, a, b);
  else
    binary_scalar_integral(op, out, a, b);
}
}  // namespace

void register_binary_scalar_stub() { stubs::binary_scalar.set(DeviceType::CUDA, &binary_scalar); }

}  // namespace wick::cuda::kernels
