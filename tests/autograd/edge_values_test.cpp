// Values at the edges of float32 and of the ops' formulas, on every test device, with
// hand-computed results (PyTorch's, by its definitions): what the float64 oracle
// (tests/data, generate.py's edge_cases) cannot hold or cannot tell apart.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <tuple>

#include "support/devices.h"

using namespace wick;

TEST_CASE("edge values: abs(-0.0) is +0.0, as fabs and PyTorch, in float32 and float64 on every device") {
  for (Device d : wick::test::test_devices())
    for (DType dt : {kFloat32, kFloat64}) {
      INFO(d << " " << dt);
      const Tensor x = tensor(std::vector<double>{-0.0, 0.0, -2.5}, {3}, TensorOptions().dtype(kFloat64)).to(dt).to(d);
      const std::vector<double> out = abs(x).to(kCPU).to_vector<double>();
      CHECK_FALSE(std::signbit(out[0]));
      CHECK_FALSE(std::signbit(out[1]));
      CHECK(out[2] == 2.5);
    }
}

TEST_CASE("edge values: float32 division's divisor gradient does not over- or underflow in b * b") {
  // a = b = 1e-30: d(a/b)/db = -a / b^2 = -1e30, finite in float32 although b^2 = 1e-60 is 0 there;
  // a = b = 1e20: -1e-20, where b^2 = 1e40 is inf.
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    for (double v : {1e-30, 1e20}) {
      Tensor a = full({1}, v, TensorOptions().dtype(kFloat32).device(d)).requires_grad_();
      Tensor b = full({1}, v, TensorOptions().dtype(kFloat32).device(d)).requires_grad_();
      div(a, b).sum().backward();
      const double gb = b.grad().to(kCPU).item<float>(), ga = a.grad().to(kCPU).item<float>();
      CHECK(std::isfinite(gb));
      CHECK(gb == Approx(-1.0 / v).epsilon(1e-6));
      CHECK(ga == Approx(1.0 / v).epsilon(1e-6));
    }
  }
}

TEST_CASE("edge values: relu keeps a NaN and passes its gradient, as PyTorch's threshold") {
  for (Device d : wick::test::test_devices())
    for (DType dt : {kFloat32, kFloat64}) {
      INFO(d << " " << dt);
      const double nan = std::numeric_limits<double>::quiet_NaN();
      Tensor x = tensor(std::vector<double>{nan, -1.0, 0.0, 3.0}, {4}, TensorOptions().dtype(kFloat64))
                     .to(dt)
                     .to(d)
                     .requires_grad_();
      Tensor y = relu(x);
      const std::vector<double> out = y.to(kCPU).to_vector<double>();
      CHECK(std::isnan(out[0]));
      CHECK(out[1] == 0.0);
      CHECK(out[3] == 3.0);
      y.backward(tensor(std::vector<double>{5.0, 6.0, 7.0, 8.0}, {4}, TensorOptions().dtype(kFloat64)).to(dt).to(d));
      CHECK(x.grad().to(kCPU).to_vector<double>() == std::vector<double>{5.0, 0.0, 0.0, 8.0});
    }
}

TEST_CASE("edge values: std of a constant row has gradient 0, not NaN, in float32 on every device") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = tensor(std::vector<double>{3, 3, 3, 1, 2, 6}, {2, 3}, TensorOptions().dtype(kFloat64))
                   .to(kFloat32)
                   .to(d)
                   .requires_grad_();
    wick::std(x, {1}, true, false).sum().backward();
    const std::vector<double> g = x.grad().to(kCPU).to_vector<double>();
    CHECK(g[0] == 0.0);
    CHECK(g[1] == 0.0);
    CHECK(g[2] == 0.0);
    // Row 1: mean 3, std sqrt(7); d std / d x_i = (x_i - mean) / ((n - 1) std).
    CHECK(g[3] == Approx(-2.0 / (2.0 * std::sqrt(7.0))).epsilon(1e-5));
    CHECK(g[5] == Approx(3.0 / (2.0 * std::sqrt(7.0))).epsilon(1e-5));
  }
}

TEST_CASE("edge values: softmax and log_softmax of an empty tensor are empty, over any dim, with empty gradients") {
  // PyTorch: torch.softmax(torch.empty(5, 0), 1) has shape [5, 0]; so do the gradients.
  for (Device d : wick::test::test_devices())
    for (auto [rows, cols, dim] : {std::tuple<int64_t, int64_t, int64_t>{5, 0, 1}, {0, 4, 1}, {0, 4, 0}}) {
      INFO(d << " [" << rows << ", " << cols << "] dim " << dim);
      Tensor x = zeros({rows, cols}, TensorOptions().dtype(kFloat64).device(d)).requires_grad_();
      Tensor y = softmax(x, dim), z = log_softmax(x, dim);
      CHECK(y.sizes() == IntArrayRef({rows, cols}));
      CHECK(z.sizes() == IntArrayRef({rows, cols}));
      (y.sum() + z.sum()).backward();
      CHECK(x.grad().sizes() == IntArrayRef({rows, cols}));
    }
}
