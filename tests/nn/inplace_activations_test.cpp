// ReLU's and SiLU's inplace option (ReLUOptions / F::ReLUFuncOptions, SiLUOptions), as PyTorch's
// inplace=True: the input itself is written and returned, its version bumps once, a leaf that
// requires grad is refused, the gradient through a non-leaf equals the out-of-place one, and the
// layers print "ReLU(inplace=True)" / "SiLU(inplace=True)", on every test device.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
namespace F = wick::nn::functional;

namespace {
std::vector<double> values_of(const Tensor& t) {
  Tensor c = t.detach().to(kCPU, kFloat64).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
}  // namespace

TEST_CASE("inplace relu and silu write the input once and match the out-of-place result", "[inplace_activations]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    const Tensor src = tensor({-1.5, 0.0, 2.0, nan, -0.25, 3.0}, {2, 3}, kFloat64).to(dev);
    Tensor x = src.clone();
    const uint32_t v = x.version();
    Tensor y = F::relu(x, F::ReLUFuncOptions().inplace(true));
    CHECK(y.is_same(x));
    CHECK(x.version() == v + 1);
    const std::vector<double> r = values_of(x);
    CHECK(r[0] == 0.0);
    CHECK(r[2] == 2.0);
    CHECK(std::isnan(r[3]));  // NaN kept, as PyTorch's relu_
    CHECK(allclose(x, F::relu(src), 0, 0, true));
    // Without inplace the input is untouched.
    Tensor z = src.clone();
    const uint32_t vz = z.version();
    CHECK(!F::relu(z).is_same(z));
    CHECK(!F::relu(z, false).is_same(z));
    CHECK(z.version() == vz);
    // silu in place.
    Tensor s = src.clone();
    const uint32_t vs = s.version();
    Tensor so = F::silu(s, F::SiLUFuncOptions().inplace(true));
    CHECK(so.is_same(s));
    CHECK(s.version() == vs + 1);
    CHECK(allclose(s, F::silu(src), 0, 0, true));
    // relu_ takes integers, as PyTorch's; silu is for floating tensors only.
    Tensor ints = tensor(std::vector<int64_t>{3, -2, 0}, {3}).to(dev);
    F::relu(ints, true);
    CHECK(ints.equal(tensor(std::vector<int64_t>{3, 0, 0}, {3}).to(dev)));
    CHECK_THROWS_AS(F::silu(ints, true), TypeError);
  }
}

TEST_CASE("inplace relu and silu refuse a leaf that requires grad and keep the gradient through a non-leaf",
          "[inplace_activations]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(81);
    const Tensor data = randn({4, 5}, kFloat64).to(dev);
    Tensor leaf = data.clone().requires_grad_();
    CHECK_THROWS_AS(F::relu(leaf, true), StateError);
    CHECK_THROWS_AS(F::silu(leaf, true), StateError);
    CHECK_THROWS_AS(nn::ReLU(true)(leaf), StateError);
    CHECK(leaf.equal(data));  // nothing written
    {
      NoGradGuard no_grad;  // a parameter update: allowed
      Tensor p = data.clone().requires_grad_();
      F::relu(p, true);
      CHECK(p.equal(relu(data)));
    }
    for (const bool silu : {false, true}) {
      INFO((silu ? "silu" : "relu"));
      Tensor a = data.clone().requires_grad_(), b = data.clone().requires_grad_();
      manual_seed(82);
      const Tensor g = randn({4, 5}, kFloat64).to(dev);
      Tensor ya = a * 2;
      Tensor out = silu ? F::silu(ya, true) : F::relu(ya, true);
      CHECK(out.is_same(ya));
      out.backward(g);
      Tensor yb = silu ? F::silu(b * 2) : F::relu(b * 2);
      yb.backward(g);
      CHECK(out.equal(yb));
      CHECK_ALLCLOSE(a.grad(), b.grad(), 1e-15, 0);
    }
  }
}

TEST_CASE("ReLU and SiLU layers with inplace print PyTorch's repr and write their input", "[inplace_activations]") {
  CHECK(nn::ReLU()->to_string() == "ReLU()");
  CHECK(nn::ReLU(nn::ReLUOptions().inplace(true))->to_string() == "ReLU(inplace=True)");
  CHECK(nn::ReLU(true)->to_string() == "ReLU(inplace=True)");
  CHECK(nn::ReLU()->options().inplace() == false);
  CHECK(nn::SiLU()->to_string() == "SiLU()");
  CHECK(nn::SiLU(nn::SiLUOptions(true))->to_string() == "SiLU(inplace=True)");
  nn::Sequential seq(nn::Linear(3, 2), nn::ReLU(true));
  CHECK(seq->to_string() ==
        "Sequential(\n  (0): Linear(in_features=3, out_features=2, bias=True)\n  (1): "
        "ReLU(inplace=True)\n)");
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    Tensor x = tensor({-1.0, 2.0, -3.0}, {3}, kFloat64).to(dev);
    nn::ReLU relu_layer(nn::ReLUOptions().inplace(true));
    Tensor y = relu_layer(x);
    CHECK(y.is_same(x));
    CHECK(values_of(x) == std::vector<double>{0.0, 2.0, 0.0});
    Tensor s = tensor({-1.0, 2.0}, {2}, kFloat64).to(dev);
    nn::SiLU silu_layer(true);
    silu_layer(s);
    CHECK(values_of(s)[1] == Approx(2.0 / (1.0 + std::exp(-2.0))).epsilon(1e-15));
    // A cloned layer keeps the option.
    CHECK(relu_layer->clone()->options().inplace());
  }
}
