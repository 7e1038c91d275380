// nn::utils::clip_grad_norm_ and clip_grad_value_ (PyTorch 1.13's torch/nn/utils/clip_grad.py) on
// every test device. The expected totals are float64 references written out element by element
// here, or small hand-computed values; the expected gradients after clipping are the gradients
// before times the coefficient min(max_norm / (total + 1e-6), 1), computed here in the
// gradients' dtype from the returned total (what LibTorch and wick compute on the device, one
// correctly rounded operation at a time).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/autograd/functions.h"
#include "wick/nn/nn.h"

using namespace wick;
using Catch::Matchers::Contains;
using wick::test::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// n gradient values, multiples of 1/8 in [-5/8, 5/8] (exact in float32), zeros among them.
std::vector<double> grad_values(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<double>((k * 7 + seed * 3) % 11 - 5) / 8.0;
  return v;
}

// A parameter of `shape` (zeros, requires grad) on d, with the gradient `g` unless it is empty.
Tensor param(IntArrayRef shape, const std::vector<double>& g, DType dt, Device d) {
  Tensor p = wick::zeros(shape, TensorOptions(dt).device(d));
  p.requires_grad_(true);
  if (!g.empty()) p.set_grad(wick::tensor(g, shape, TensorOptions(dt)).to(d));
  return p;
}

// Three parameters of different shapes; the second has no gradient and is skipped.
std::vector<Tensor> three_params(DType dt, Device d) {
  return {param({2, 3}, grad_values(6, 1), dt, d), param({4}, {}, dt, d), param({5, 1}, grad_values(5, 2), dt, d)};
}

// The total norm of order p (> 0 or inf) of the gradients, in float64 element by element: the
// largest |x| for inf, else (sum_i n_i^p)^(1/p) with n_i = (sum over gradient i of |x|^p)^(1/p).
double reference_total(const std::vector<std::vector<double>>& grads, double p) {
  double acc = 0;
  for (const std::vector<double>& g : grads) {
    double s = 0;
    for (double x : g) s = p == kInf ? std::max(s, std::abs(x)) : s + std::pow(std::abs(x), p);
    acc = p == kInf ? std::max(acc, s) : acc + std::pow(std::pow(s, 1.0 / p), p);
  }
  return p == kInf ? acc : std::pow(acc, 1.0 / p);
}

// `before` times min(max_norm / (total + 1e-6), 1), each operation rounded to T as the tensor
// ops round it (max_norm and 1e-6 converted to T first, as a scalar operand of a T tensor is).
template <typename T>
std::vector<double> scaled(const std::vector<double>& before, double total, double max_norm) {
  const T c = std::min(static_cast<T>(max_norm) / (static_cast<T>(total) + static_cast<T>(1e-6)), T(1));
  std::vector<double> out;
  for (double x : before) out.push_back(static_cast<double>(static_cast<T>(x) * c));
  return out;
}

std::vector<double> scaled_as(DType dt, const std::vector<double>& before, double total, double max_norm) {
  return dt == kFloat32 ? scaled<float>(before, total, max_norm) : scaled<double>(before, total, max_norm);
}

// The gradients' values (defined ones only) and version counters.
std::vector<std::vector<double>> grad_values_of(const std::vector<Tensor>& ps) {
  std::vector<std::vector<double>> r;
  for (const Tensor& p : ps)
    if (p.grad().defined()) r.push_back(values(p.grad()));
  return r;
}
std::vector<uint32_t> grad_versions(const std::vector<Tensor>& ps) {
  std::vector<uint32_t> r;
  for (const Tensor& p : ps)
    if (p.grad().defined()) r.push_back(p.grad().version());
  return r;
}

}  // namespace

TEST_CASE("clip_grad_norm_ of orders 2, 1, 3, 0.5 and inf matches a float64 reference on every device", "[utils]") {
  for (DType dt : {kFloat64, kFloat32}) {
    // float64: the reference sums in another order than the device, so the last bits differ; a
    // float32 total is rounded at every step.
    const double rtol = dt == kFloat64 ? 1e-13 : 1e-5;
    for (double p : {2.0, 1.0, 3.0, 0.5, kInf}) {
      double cpu_total = 0;
      for (const Device& d : test::test_devices()) {
        CAPTURE(dt, p, d);
        for (bool over : {true, false}) {
          CAPTURE(over);
          std::vector<Tensor> ps = three_params(dt, d);
          const std::vector<std::vector<double>> before = grad_values_of(ps);
          const double want = reference_total(before, p);
          REQUIRE(want > 0.5);
          // Half the total norm clips (coefficient about 0.5); twice it does not (coefficient 1).
          const double max_norm = over ? want / 2 : want * 2;
          const Tensor grad_a = ps[0].grad();
          const std::vector<uint32_t> versions = grad_versions(ps);

          const double total = nn::utils::clip_grad_norm_(ps, max_norm, p);

          CHECK(std::abs(total - want) <= rtol * want);
          if (d == kCPU && over) cpu_total = total;
          if (d.is_cpu()) CHECK(total == cpu_total);  // the same CPU kernels: the same bits
          CHECK_FALSE(ps[1].grad().defined());        // skipped, still without a gradient
          CHECK(ps[0].grad().is_same(grad_a));        // changed in place
          const std::vector<std::vector<double>> after = grad_values_of(ps);
          REQUIRE(after.size() == 2);
          for (size_t i = 0; i < 2; ++i) {
            CAPTURE(i);
            if (over) {
              CHECK(after[i] == scaled_as(dt, before[i], total, max_norm));
              CHECK(after[i] != before[i]);
            } else {
              CHECK(after[i] == before[i]);  // multiplied by exactly 1: bit-identical
            }
          }
          // Multiplied always, as PyTorch 1.13: each gradient's version moved.
          const std::vector<uint32_t> now = grad_versions(ps);
          for (size_t i = 0; i < 2; ++i) CHECK(now[i] > versions[i]);
        }
      }
    }
  }
}

TEST_CASE("clip_grad_norm_ follows torch.norm for orders 0, negative and -inf (hand-computed totals)", "[utils]") {
  // Gradients [3, 4] and [0, 1, -2].
  //   p = 0: each gradient's count of nonzeros is 2, and the count of nonzero counts is 2.
  //   p = -inf: the smallest |x| is 3 and 0, the smaller of those 0.
  //   p = -1: the second gradient holds a 0, so its (sum |x|^-1)^-1 is 1 / inf = 0, and the
  //   total (1/1.71.. + 1/0)^-1 is 0 too.
  // A total of 0 gives the coefficient 1 / 1e-6, clamped to 1: nothing changes.
  struct Case {
    double p, total;
  };
  for (const Case& c : {Case{0.0, 2.0}, Case{-kInf, 0.0}, Case{-1.0, 0.0}}) {
    for (const Device& d : test::test_devices()) {
      CAPTURE(c.p, d);
      std::vector<Tensor> ps = {param({2}, {3, 4}, kFloat64, d), param({3}, {0, 1, -2}, kFloat64, d)};
      const double total = nn::utils::clip_grad_norm_(ps, 1.0, c.p);
      CHECK(total == c.total);
      CHECK(values(ps[0].grad()) == scaled<double>({3, 4}, total, 1.0));
      CHECK(values(ps[1].grad()) == scaled<double>({0, 1, -2}, total, 1.0));
    }
  }
}

TEST_CASE("clip_grad_norm_ computes on the first gradient's device when the gradients are on several", "[utils]") {
  const std::vector<Device> devices = test::test_devices();
  std::vector<Tensor> ps;
  std::vector<std::vector<double>> before;
  for (size_t i = 0; i < 4; ++i) {
    before.push_back(grad_values(static_cast<int64_t>(3 + i), static_cast<int>(i)));
    ps.push_back(param({static_cast<int64_t>(3 + i)}, before.back(), kFloat64, devices[(i + 1) % devices.size()]));
  }
  const double want = reference_total(before, 2.0);
  const double total = nn::utils::clip_grad_norm_(ps, 0.25, 2.0);
  CHECK(std::abs(total - want) <= 1e-13 * want);
  for (size_t i = 0; i < ps.size(); ++i) {
    CAPTURE(i);
    CHECK(ps[i].grad().device() == devices[(i + 1) % devices.size()]);
    CHECK(values(ps[i].grad()) == scaled<double>(before[i], total, 0.25));
  }
}

TEST_CASE("clip_grad_norm_ and clip_grad_value_ write through gradients that are views of one buffer", "[utils]") {
  // Gradients as slices of one flat buffer (as gradient buckets hold them): the buffer sees the
  // in-place writes and its version counter moves. [3, 4] and [0, 12]: total norm 13 (hand).
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const Tensor flat = wick::tensor({3.0, 4.0, 0.0, 12.0}, TensorOptions(kFloat64)).to(d);
    Tensor a = param({2}, {}, kFloat64, d), b = param({2}, {}, kFloat64, d);
    a.set_grad(flat.narrow(0, 0, 2));
    b.set_grad(flat.narrow(0, 2, 2));
    const uint32_t v0 = flat.version();
    CHECK(nn::utils::clip_grad_norm_({a, b}, 6.5) == 13.0);
    CHECK(values(flat) == scaled<double>({3, 4, 0, 12}, 13.0, 6.5));
    CHECK(flat.version() > v0);
    const uint32_t v1 = flat.version();
    nn::utils::clip_grad_value_({a, b}, 1.0);
    CHECK(values(flat) == std::vector<double>{1, 1, 0, 1});
    CHECK(flat.version() > v1);
  }
}

TEST_CASE("clip_grad_norm_ promotes float32 and float64 gradients' norms to float64", "[utils]") {
  // float32 [3, 4] has norm 5 (exact), float64 [1, 0] norm 1: the float64 total is sqrt(26),
  // correctly rounded, and the float32 gradient is multiplied by the coefficient rounded to float32.
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    std::vector<Tensor> ps = {param({2}, {3, 4}, kFloat32, d), param({2}, {1, 0}, kFloat64, d)};
    const double total = nn::utils::clip_grad_norm_(ps, 1.0);
    CHECK(total == std::sqrt(26.0));
    const double coef = 1.0 / (std::sqrt(26.0) + 1e-6);
    CHECK(ps[0].grad().dtype() == kFloat32);
    CHECK(values(ps[0].grad()) ==
          std::vector<double>{3.0f * static_cast<float>(coef), 4.0f * static_cast<float>(coef)});
    CHECK(values(ps[1].grad()) == std::vector<double>{coef, 0.0});
  }
}

TEST_CASE("clip_grad_norm_ with error_if_nonfinite refuses a NaN or infinite total and changes nothing", "[utils]") {
  for (const Device& d : test::test_devices()) {
    for (double bad : {kNaN, kInf}) {
      for (double p : {2.0, kInf}) {
        CAPTURE(d, bad, p);
        std::vector<Tensor> ps = {param({2}, {3, bad}, kFloat64, d), param({1}, {1}, kFloat64, d)};
        const Tensor g0 = ps[0].grad().clone(), g1 = ps[1].grad().clone();
        const std::vector<uint32_t> versions = grad_versions(ps);
        CHECK_THROWS_AS(nn::utils::clip_grad_norm_(ps, 1.0, p, true), ValueError);
        CHECK_THROWS_WITH(nn::utils::clip_grad_norm_(ps, 1.0, p, true),
                          Contains("clip_grad_norm_") && Contains(std::isnan(bad) ? "is nan" : "is inf") &&
                              Contains("not finite") && Contains("error_if_nonfinite = false"));
        CHECK_ALLCLOSE(ps[0].grad(), g0, 0, 0);  // NaN matches NaN
        CHECK_ALLCLOSE(ps[1].grad(), g1, 0, 0);
        CHECK(grad_versions(ps) == versions);
      }
    }
  }
}

TEST_CASE("clip_grad_norm_ without error_if_nonfinite scales by the non-finite total as PyTorch 1.13", "[utils]") {
  // 1.13: a NaN total gives the coefficient NaN, so every gradient element is NaN; an infinite
  // total gives max_norm / inf = 0, so finite elements become 0 and the inf becomes inf * 0 = NaN.
  for (const Device& d : test::test_devices()) {
    for (double p : {2.0, kInf}) {
      CAPTURE(d, p);
      std::vector<Tensor> ps = {param({2}, {3, kNaN}, kFloat64, d), param({1}, {1}, kFloat64, d)};
      CHECK(std::isnan(nn::utils::clip_grad_norm_(ps, 1.0, p)));
      for (double x : values(ps[0].grad())) CHECK(std::isnan(x));
      CHECK(std::isnan(values(ps[1].grad())[0]));

      ps = {param({2}, {3, kInf}, kFloat64, d), param({1}, {-1}, kFloat64, d)};
      CHECK(nn::utils::clip_grad_norm_(ps, 1.0, p) == kInf);
      const std::vector<double> g0 = values(ps[0].grad());
      CHECK(g0[0] == 0.0);
      CHECK(std::isnan(g0[1]));
      CHECK(values(ps[1].grad()) == std::vector<double>{0.0});
    }
  }
}

TEST_CASE("clip_grad_norm_ returns 0 and changes nothing when no parameter has a gradient", "[utils]") {
  Tensor a = param({3}, {}, kFloat64, kCPU), b = param({2, 2}, {}, kFloat32, kCPU);
  CHECK(nn::utils::clip_grad_norm_(std::vector<Tensor>{a, b}, 1.0) == 0.0);
  CHECK(nn::utils::clip_grad_norm_(std::vector<Tensor>{}, 1.0, kInf) == 0.0);
  CHECK_FALSE(a.grad().defined());
  CHECK_FALSE(b.grad().defined());
}

TEST_CASE("clip_grad_norm_ takes one tensor or a braced list, and counts an empty gradient as norm 0", "[utils]") {
  // One gradient [3, 4]: norm 5; max_norm 1 scales it by 1 / (5 + 1e-6).
  Tensor a = param({2}, {3, 4}, kFloat64, kCPU);
  CHECK(nn::utils::clip_grad_norm_(a, 1.0) == 5.0);
  CHECK(values(a.grad()) == scaled<double>({3, 4}, 5.0, 1.0));
  // Braced list: [3, 4] and an empty gradient (PyTorch 1.13 raises for inf there: max of no
  // elements); the largest |x| is 4.
  Tensor b = param({2}, {3, 4}, kFloat64, kCPU), e = param({0}, {}, kFloat64, kCPU);
  e.set_grad(wick::zeros({0}, kFloat64));
  CHECK(nn::utils::clip_grad_norm_({b, e}, 1.0, kInf) == 4.0);
  CHECK(values(b.grad()) == scaled<double>({3, 4}, 4.0, 1.0));
  CHECK(e.grad().numel() == 0);
}

TEST_CASE("clip_grad_norm_ refuses bad arguments and gradients before changing any gradient", "[utils]") {
  Tensor a = param({2}, {3, 4}, kFloat64, kCPU);
  const auto unchanged = [&] { CHECK(values(a.grad()) == std::vector<double>{3, 4}); };
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_(a, kNaN), ValueError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_(a, kNaN),
                    Contains("clip_grad_norm_") && Contains("max_norm") && Contains("got nan"));
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_(a, -1.0), ValueError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_(a, -1.0), Contains("max_norm must be >= 0") && Contains("got -1"));
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_(a, 1.0, kNaN), ValueError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_(a, 1.0, kNaN),
                    Contains("clip_grad_norm_") && Contains("norm_type is NaN"));
  unchanged();

  // An undefined parameter, anywhere in the list.
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_({a, Tensor()}, 1.0), ValueError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_({a, Tensor()}, 1.0), Contains("parameter 1 of 2 is undefined"));
  unchanged();

  // An integer gradient.
  Tensor i = wick::zeros({2}, kInt64);
  i.set_grad(wick::ones({2}, kInt64));
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_({a, i}, 1.0), TypeError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_({a, i}, 1.0),
                    Contains("gradient of parameter 1 is int64") && Contains("float32 or float64"));
  unchanged();

  // A gradient whose elements share memory cannot be scaled in place: refused before `a` changes.
  Tensor x = param({3}, {}, kFloat64, kCPU);
  x.set_grad(wick::ones({1}, kFloat64).expand({3}));
  CHECK_THROWS_AS(nn::utils::clip_grad_norm_({a, x}, 1.0), ValueError);
  CHECK_THROWS_WITH(nn::utils::clip_grad_norm_({a, x}, 1.0),
                    Contains("parameter 1") && Contains("[3] (strides [0])") && Contains("clone()"));
  unchanged();
  CHECK_THROWS_AS(nn::utils::clip_grad_value_({a, x}, 1.0), ValueError);
  unchanged();
}

TEST_CASE("clip_grad_norm_ leaves a Linear's gradients with norm max_norm and their direction", "[utils]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    manual_seed(5);
    nn::Linear fc(nn::LinearOptions(4, 3), TensorOptions(kFloat64));
    fc->to(d);
    const Tensor x = wick::randn({8, 4}, kFloat64).to(d), y = wick::randn({8, 3}, kFloat64).to(d);
    (nn::functional::mse_loss(fc(x), y) * 100.0).backward();
    const std::vector<Tensor> ps = fc->parameters();
    const std::vector<std::vector<double>> before = grad_values_of(ps);
    REQUIRE(before.size() == 2);
    const double want = reference_total(before, 2.0);
    REQUIRE(want > 0.1);

    const double total = nn::utils::clip_grad_norm_(fc->parameters(), 0.1);

    CHECK(std::abs(total - want) <= 1e-13 * want);
    double sq = 0;
    const std::vector<std::vector<double>> after = grad_values_of(ps);
    for (size_t i = 0; i < 2; ++i) {
      for (double v : after[i]) sq += v * v;
      // The same direction: every element scaled by the one coefficient.
      CHECK(after[i] == scaled<double>(before[i], total, 0.1));
    }
    CHECK(std::sqrt(sq) <= 0.1 + 1e-6);
    CHECK(std::abs(std::sqrt(sq) - 0.1 * total / (total + 1e-6)) <= 1e-13);
  }
}

TEST_CASE("clip_grad_value_ clamps every gradient into [-clip_value, clip_value] on every device", "[utils]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    // float64, clip 1: hand-clamped; NaN stays NaN, the parameter without a gradient is skipped
    // and one inside the range stays bit-identical.
    std::vector<Tensor> ps = {param({2, 3}, {-3, -0.5, 0, 0.25, 2, kNaN}, kFloat64, d), param({4}, {}, kFloat64, d),
                              param({2}, {0.75, -1}, kFloat64, d)};
    const uint32_t v0 = ps[0].grad().version();
    nn::utils::clip_grad_value_(ps, 1.0);
    const std::vector<double> g0 = values(ps[0].grad());
    CHECK(std::vector<double>(g0.begin(), g0.end() - 1) == std::vector<double>{-1, -0.5, 0, 0.25, 1});
    CHECK(std::isnan(g0.back()));
    CHECK_FALSE(ps[1].grad().defined());
    CHECK(values(ps[2].grad()) == std::vector<double>{0.75, -1});
    CHECK(ps[0].grad().version() > v0);

    // float32, clip 0.3: the bounds are 0.3 rounded to float32, as a scalar operand of a float32
    // tensor is.
    const std::vector<double> raw = {-0.5, -0.25, 0.125, 0.375, 1e-8};
    Tensor f = param({5}, raw, kFloat32, d);
    nn::utils::clip_grad_value_(f, 0.3);
    const float b = static_cast<float>(0.3);
    std::vector<double> want;
    for (double v : raw) want.push_back(std::min(std::max(static_cast<float>(v), -b), b));
    CHECK(values(f.grad()) == want);

    // A braced list; clip 0 zeroes every gradient.
    Tensor z = param({2}, {2, -3}, kFloat64, d);
    nn::utils::clip_grad_value_({z}, 0.0);
    CHECK(values(z.grad()) == std::vector<double>{0, 0});
  }
}

TEST_CASE("clip_grad_value_ refuses a negative or NaN clip_value and changes nothing", "[utils]") {
  // PyTorch 1.13 clamps with min > max there: every element becomes -|clip_value| (or NaN).
  Tensor a = param({2}, {3, -4}, kFloat64, kCPU);
  for (double bad : {-1.0, kNaN}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(nn::utils::clip_grad_value_(a, bad), ValueError);
    CHECK_THROWS_WITH(nn::utils::clip_grad_value_(a, bad), Contains("clip_grad_value_: clip_value must be >= 0") &&
                                                               Contains(std::isnan(bad) ? "got nan" : "got -1"));
    CHECK(values(a.grad()) == std::vector<double>{3, -4});
  }
}
