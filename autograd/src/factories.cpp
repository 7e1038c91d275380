// Public factories: natives plus requires_grad from TensorOptions.
#include "op_helpers.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

namespace {
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor empty(IntArrayRef shape, TensorOptions o) { return finish(native::empty(shape, o.dtype_, o.device_), o); }
Tensor zeros(IntArrayRef shape, TensorOptions o) { return finish(native::zeros(shape, o.dtype_, o.device_), o); }
Tensor ones(IntArrayRef shape, TensorOptions o) { return finish(native::ones(shape, o.dtype_, o.device_), o); }
Tensor full(IntArrayRef shape, Scalar v, TensorOptions o) {
  check_scalar_fits("full", "value", v, o.dtype_, shape);  // Note [Scalar fits dtype]
  return finish(native::full(shape, v, o.dtype_, o.device_), o);
}
Tensor arange(Scalar end, std::optional<TensorOptions> o) { return arange(0, end, 1, o); }
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<TensorOptions> opts) {
  const bool floating = start.is_floating() || end.is_floating() || step.is_floating();
  const TensorOptions o = opts.value_or(TensorOptions(floating ? kFloat32 : kInt64));
  return finish(native::arange(start, end, step, o.dtype_, o.device_), o);
}
Tensor linspace(double start, double end, int64_t steps, TensorOptions o) {
  return finish(native::linspace(start, end, steps, o.dtype_, o.device_), o);
}
Tensor eye(int64_t n, TensorOptions o) { return eye(n, n, o); }
Tensor eye(int64_t n, int64_t m, TensorOptions o) { return finish(native::eye(n, m, o.dtype_, o.device_), o); }
Tensor rand(IntArrayRef shape, TensorOptions o) { return finish(native::rand(shape, o.dtype_, o.device_), o); }
Tensor randn(IntArrayRef shape, TensorOptions o) { return finish(native::randn(shape, o.dtype_, o.device_), o); }
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, TensorOptions o) {
  return finish(native::randint(low, high, shape, o.dtype_, o.device_), o);
}
Tensor empty_like(const Tensor& t) { return native::empty(t.sizes(), t.dtype(), t.device()); }
Tensor zeros_like(const Tensor& t) { return native::zeros(t.sizes(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return native::ones(t.sizes(), t.dtype(), t.device()); }
Tensor full_like(const Tensor& t, Scalar v) {
  WICK_CHECK(t.defined(), "full_like: the tensor is undefined");
  check_scalar_fits("full_like", "value", v, t.dtype(), t.sizes());  // Note [Scalar fits dtype]
  return native::full(t.sizes(), v, t.dtype(), t.device());
}
Tensor rand_like(const Tensor& t) { return native::rand(t.sizes(), t.dtype(), t.device()); }
Tensor randn_like(const Tensor& t) { return native::randn(t.sizes(), t.dtype(), t.device()); }
Tensor scalar_tensor(Scalar v, TensorOptions o) { return finish(native::scalar_tensor(v, o.dtype_, o.device_), o); }
Tensor from_blob(const void* data, IntArrayRef shape, TensorOptions o) {
  return finish(native::from_blob_copy(data, shape, o.dtype_, o.device_), o);
}

template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef shape, TensorOptions o) {
  const int64_t n = checked_numel(shape, "tensor");
  WICK_CHECK(n == static_cast<int64_t>(values.size()), "tensor: {} values do not fill shape [{}] ({} elements)",
             values.size(), fmt::join(shape, ", "), n);
  Tensor host = native::from_blob_copy(values.data(), shape, dtype_v<T>, kCPU);
  return finish(native::to(host, o.device_, o.dtype_), o);
}
template Tensor tensor<double>(const std::vector<double>&, IntArrayRef, TensorOptions);
template Tensor tensor<float>(const std::vector<float>&, IntArrayRef, TensorOptions);
template Tensor tensor<int64_t>(const std::vector<int64_t>&, IntArrayRef, TensorOptions);

Tensor tensor(std::initializer_list<double> values, TensorOptions o) {
  return tensor<double>(std::vector<double>(values), {static_cast<int64_t>(values.size())}, o);
}
Tensor tensor(std::initializer_list<double> values, IntArrayRef shape, TensorOptions o) {
  return tensor<double>(std::vector<double>(values), shape, o);
}

}  // namespace wick
