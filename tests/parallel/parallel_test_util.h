#pragma once
// Helpers for the parallel tests: CPU devices by index and exact value comparison.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <functional>

#include "support/allclose.h"

namespace wick::test {

inline Device cpu(int i) { return Device(DeviceType::CPU, i); }

/// float64 on `d` (cpu:0 by default): the dtype of the exact-equivalence tests.
inline TensorOptions f64(Device d = Device("cpu:0")) { return TensorOptions(kFloat64).device(d); }

inline std::vector<Device> cpus(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(cpu(i));
  return out;
}

/// True when a and b have the same shape and exactly the same values (any devices).
inline bool same_values(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.sizes() == b.sizes() && a.to_vector<double>() == b.to_vector<double>();
}

/// Double backward check: gradcheck of (inputs, grad_outputs) -> grad(fn(inputs), inputs,
/// grad_outputs, create_graph), so second derivatives with respect to both the inputs and the
/// incoming gradients are checked (as PyTorch's gradgradcheck). Unlike autograd::gradgradcheck,
/// which differentiates only with respect to the inputs that require grad, it makes every input a
/// fresh leaf in both passes, whether or not it requires grad.
inline void check_gradgrad(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                           const std::vector<Tensor>& inputs) {
  std::vector<Tensor> all = inputs;
  for (const Tensor& o : fn(inputs)) all.push_back(wick::randn(o.sizes(), o.options()).requires_grad_());
  const size_t n = inputs.size();
  auto first = [n, fn](const std::vector<Tensor>& xs) {
    AutoGradMode on(true);
    std::vector<Tensor> leaves;
    for (const Tensor& t : xs) leaves.push_back(t.requires_grad() ? t : t.detach().requires_grad_(true));
    std::vector<Tensor> in(leaves.begin(), leaves.begin() + static_cast<std::ptrdiff_t>(n));
    std::vector<Tensor> go(leaves.begin() + static_cast<std::ptrdiff_t>(n), leaves.end());
    auto gs = wick::autograd::grad(fn(in), in, go, true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < gs.size(); ++i)
      if (!gs[i].defined()) gs[i] = wick::zeros(in[i].sizes(), in[i].options());
    return gs;
  };
  const auto r = wick::autograd::gradcheck(first, all);
  INFO("gradgrad: " << r.message);
  CHECK(r.ok);
}

/// A copy of each parameter's gradient, in order (undefined where it has none).
inline std::vector<Tensor> grads_of(const nn::Module& m) {
  std::vector<Tensor> g;
  for (auto& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

}  // namespace wick::test

#define CHECK_VALUES_EQUAL(a, b) CHECK_ALLCLOSE((a), (b), 0.0, 0.0)
