// nn::utils::parameters_to_vector and vector_to_parameters (PyTorch 1.13's
// torch/nn/utils/convert_parameters.py) on every test device: the order of the elements, the
// gradient through the vector, the copy into the parameters' own memory, and the errors. The
// expected values are written out by hand from the parameters' row-major order.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using Catch::Matchers::Contains;
using wick::test::values;

namespace {

// Parameters [2, 3] = 0..5, [4] = 10..13 and a 0-dim 20, requiring grad, on d.
std::vector<Tensor> params_on(Device d, DType dt = kFloat64) {
  const TensorOptions o = TensorOptions(dt).device(d);
  std::vector<Tensor> ps = {wick::arange(0, 6, 1, TensorOptions(dt)).reshape({2, 3}).to(d).clone(),
                            wick::arange(10, 14, 1, TensorOptions(dt)).to(d).clone(), wick::full({}, 20, o)};
  for (Tensor& p : ps) p.requires_grad_(true);
  return ps;
}

// The elements of params_on in order: each parameter flattened row-major, one after another.
const std::vector<double> kFlat = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 20};

}  // namespace

TEST_CASE("parameters_to_vector concatenates the flattened parameters on every device", "[utils]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const std::vector<Tensor> ps = params_on(d);
    const Tensor v = nn::utils::parameters_to_vector(ps);
    CHECK(v.sizes() == IntArrayRef({11}));
    CHECK(v.device() == d);
    CHECK(v.dtype() == kFloat64);
    CHECK(values(v) == kFlat);
    CHECK(v.requires_grad());
    // A copy, as torch.cat makes: changing a parameter afterwards leaves the vector as it was.
    {
      NoGradGuard no_grad;
      Tensor p0 = ps[0];
      p0.fill_(-1);
    }
    CHECK(values(v) == kFlat);
  }
}

TEST_CASE("a loss on parameters_to_vector sends each parameter its slice of the gradient", "[utils]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const std::vector<Tensor> ps = params_on(d);
    // loss = sum_k w_k v_k with w_k = k + 1, so d loss / d v_k = k + 1: the [2, 3] parameter gets
    // 1..6, the [4] one 7..10 and the 0-dim one 11.
    const Tensor w = wick::arange(1, 12, 1, TensorOptions(kFloat64)).to(d);
    (nn::utils::parameters_to_vector(ps) * w).sum().backward();
    CHECK(ps[0].grad().sizes() == IntArrayRef({2, 3}));
    CHECK(values(ps[0].grad()) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(values(ps[1].grad()) == std::vector<double>{7, 8, 9, 10});
    CHECK(ps[2].grad().dim() == 0);
    CHECK(values(ps[2].grad()) == std::vector<double>{11});
  }
}

TEST_CASE("parameters_to_vector promotes float32 and float64 parameters, and the gradient keeps each dtype",
          "[utils]") {
  Tensor a = wick::tensor({0.5, 1.5}, TensorOptions(kFloat32)), b = wick::tensor({2.5}, TensorOptions(kFloat64));
  a.requires_grad_(true);
  b.requires_grad_(true);
  const Tensor v = nn::utils::parameters_to_vector({a, b});
  CHECK(v.dtype() == kFloat64);
  CHECK(values(v) == std::vector<double>{0.5, 1.5, 2.5});
  (v * wick::tensor({1.0, 2.0, 3.0}, TensorOptions(kFloat64))).sum().backward();
  CHECK(a.grad().dtype() == kFloat32);
  CHECK(values(a.grad()) == std::vector<double>{1, 2});
  CHECK(values(b.grad()) == std::vector<double>{3});
}

TEST_CASE("vector_to_parameters writes the vector into the parameters' own memory on every device", "[utils]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const std::vector<Tensor> ps = params_on(d);
    std::vector<void*> memory;
    std::vector<uint32_t> versions;
    for (const Tensor& p : ps) {
      memory.push_back(p.data_ptr());
      versions.push_back(p.version());
    }
    // 2 v + 1 of the round trip's vector, made without a graph.
    Tensor v;
    {
      NoGradGuard no_grad;
      v = nn::utils::parameters_to_vector(ps) * 2.0 + 1.0;
    }
    nn::utils::vector_to_parameters(v, ps);
    CHECK(values(ps[0]) == std::vector<double>{1, 3, 5, 7, 9, 11});
    CHECK(values(ps[1]) == std::vector<double>{21, 23, 25, 27});
    CHECK(values(ps[2]) == std::vector<double>{41});
    CHECK(ps[0].sizes() == IntArrayRef({2, 3}));
    CHECK(ps[2].dim() == 0);
    for (size_t i = 0; i < ps.size(); ++i) {
      CAPTURE(i);
      CHECK(ps[i].data_ptr() == memory[i]);  // copied in (PyTorch 1.13 makes it a view of vec)
      CHECK(ps[i].version() > versions[i]);  // an in-place write
      CHECK(ps[i].requires_grad());
      CHECK(ps[i].is_leaf());
      CHECK(ps[i].device() == d);
    }
    // The round trip gives the vector back, and the parameters do not follow later changes of it.
    CHECK(values(nn::utils::parameters_to_vector(ps)) == values(v));
    v.fill_(0);
    CHECK(values(ps[1]) == std::vector<double>{21, 23, 25, 27});
  }
}

TEST_CASE("vector_to_parameters keeps a parameter's dtype and takes a strided vector", "[utils]") {
  // float64 values exact in float32, into a float32 parameter; then every other element of a
  // [6] vector (PyTorch's view_as needs a contiguous one).
  Tensor a = wick::zeros({2, 2}, kFloat32);
  nn::utils::vector_to_parameters(wick::tensor({0.25, -1.5, 3.0, 8.0}, TensorOptions(kFloat64)), {a});
  CHECK(a.dtype() == kFloat32);
  CHECK(values(a) == std::vector<double>{0.25, -1.5, 3.0, 8.0});
  const Tensor strided = wick::arange(0, 8, 1, TensorOptions(kFloat32)).slice(0, 0, 8, 2);
  REQUIRE_FALSE(strided.is_contiguous());
  nn::utils::vector_to_parameters(strided, {a});
  CHECK(values(a) == std::vector<double>{0, 2, 4, 6});
}

TEST_CASE("parameters_to_vector refuses no parameters, two devices and a parameter view(-1) cannot flatten",
          "[utils]") {
  CHECK_THROWS_AS(nn::utils::parameters_to_vector({}), ValueError);
  CHECK_THROWS_WITH(nn::utils::parameters_to_vector({}), Contains("parameters_to_vector: got no parameters"));

  const Tensor a = wick::zeros({2}, TensorOptions(kFloat64).device("cpu:0"));
  const Tensor b = wick::zeros({3}, TensorOptions(kFloat64).device("cpu:1"));
  CHECK_THROWS_AS(nn::utils::parameters_to_vector({a, b}), ValueError);
  CHECK_THROWS_WITH(nn::utils::parameters_to_vector({a, b}),
                    Contains("parameter 0 is on cpu:0 but parameter 1 (shape [3]) is on cpu:1"));

  CHECK_THROWS_AS(nn::utils::parameters_to_vector({a, Tensor()}), ValueError);
  CHECK_THROWS_WITH(nn::utils::parameters_to_vector({a, Tensor()}), Contains("parameter 1 of 2 is undefined"));

  // A transposed [2, 3]: its elements are not in row-major order, so view(-1) cannot flatten it
  // (PyTorch's view raises too).
  const Tensor t = wick::zeros({2, 3}, kFloat64).t();
  CHECK_THROWS_AS(nn::utils::parameters_to_vector({a, t}), ValueError);
  CHECK_THROWS_WITH(nn::utils::parameters_to_vector({a, t}),
                    Contains("parameters_to_vector: parameter 1: ") && Contains("view"));
}

TEST_CASE("vector_to_parameters refuses a bad vector or parameters and changes nothing", "[utils]") {
  const std::vector<Tensor> ps = params_on(kCPU);  // 11 elements on cpu:0
  std::vector<uint32_t> versions;
  for (const Tensor& p : ps) versions.push_back(p.version());
  const auto unchanged = [&] {
    CHECK(values(nn::utils::parameters_to_vector(ps)) == kFlat);
    for (size_t i = 0; i < ps.size(); ++i) CHECK(ps[i].version() == versions[i]);
  };
  const TensorOptions f64 = TensorOptions(kFloat64);

  CHECK_THROWS_AS(nn::utils::vector_to_parameters(Tensor(), ps), ValueError);
  CHECK_THROWS_WITH(nn::utils::vector_to_parameters(Tensor(), ps), Contains("vec is undefined"));

  const Tensor two_d = wick::zeros({11, 1}, f64);
  CHECK_THROWS_AS(nn::utils::vector_to_parameters(two_d, ps), ValueError);
  CHECK_THROWS_WITH(nn::utils::vector_to_parameters(two_d, ps),
                    Contains("vector_to_parameters: vec must be 1-d") && Contains("shape [11, 1]"));

  // Too short (PyTorch fails part way, after changing the first parameters) and too long
  // (PyTorch ignores the rest).
  for (int64_t n : {10, 12}) {
    CAPTURE(n);
    const Tensor v = wick::zeros({n}, f64);
    CHECK_THROWS_AS(nn::utils::vector_to_parameters(v, ps), ValueError);
    CHECK_THROWS_WITH(nn::utils::vector_to_parameters(v, ps),
                      Contains(fmt::format("vec has shape [{}] but the 3 parameters have 11 elements", n)));
  }

  const Tensor elsewhere = wick::zeros({11}, TensorOptions(kFloat64).device("cpu:1"));
  CHECK_THROWS_AS(nn::utils::vector_to_parameters(elsewhere, ps), ValueError);
  CHECK_THROWS_WITH(nn::utils::vector_to_parameters(elsewhere, ps),
                    Contains("vec (shape [11]) is on cpu:1 but the parameters are on cpu:0"));

  std::vector<Tensor> two_devices = ps;
  two_devices.push_back(wick::zeros({1}, TensorOptions(kFloat64).device("cpu:1")));
  CHECK_THROWS_AS(nn::utils::vector_to_parameters(wick::zeros({12}, f64), two_devices), ValueError);
  CHECK_THROWS_WITH(nn::utils::vector_to_parameters(wick::zeros({12}, f64), two_devices),
                    Contains("parameter 0 is on cpu:0 but parameter 3 (shape [1]) is on cpu:1"));

  std::vector<Tensor> expanded = ps;
  expanded.push_back(wick::zeros({1}, f64).expand({2}));
  CHECK_THROWS_AS(nn::utils::vector_to_parameters(wick::zeros({13}, f64), expanded), ValueError);
  CHECK_THROWS_WITH(nn::utils::vector_to_parameters(wick::zeros({13}, f64), expanded),
                    Contains("parameter 3 has shape [2] (strides [0])"));
  unchanged();
}
