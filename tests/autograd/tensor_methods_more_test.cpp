// mode, and the Tensor methods of prod, cumprod, kthvalue, median, mode, rounding, remainder,
// fmod, atan2 and the trig/hyperbolic set with their in-place forms: PyTorch 1.13's values and
// gradients (generate.py's tensor_methods_cases, selected by op name) on every test device;
// mode's ties, repeats, NaN, integer and bool inputs worked by hand; float64 gradchecks; each
// method equal to its free function; the in-place forms' version bumps, refusals and gradients.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/inplace_checks.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
using OpFn = Tensor (*)(const TL&, const OracleCase&);
using wick::test::ikw;

// The in-place method `name` of a differentiable copy of x (the oracle's `(a * 1).name_()`).
Tensor unary_inplace(const std::string& name, const Tensor& x) {
  static const std::map<std::string, Tensor& (Tensor::*)()> methods = {
      {"relu", &Tensor::relu_},   {"floor", &Tensor::floor_}, {"ceil", &Tensor::ceil_},  {"round", &Tensor::round_},
      {"trunc", &Tensor::trunc_}, {"frac", &Tensor::frac_},   {"tan", &Tensor::tan_},    {"asin", &Tensor::asin_},
      {"acos", &Tensor::acos_},   {"atan", &Tensor::atan_},   {"sinh", &Tensor::sinh_},  {"cosh", &Tensor::cosh_},
      {"asinh", &Tensor::asinh_}, {"acosh", &Tensor::acosh_}, {"atanh", &Tensor::atanh_}};
  Tensor y = x * 1;
  return (y.*methods.at(name))();
}
Tensor binary_inplace(const std::string& name, const Tensor& a, const Tensor& b) {
  Tensor y = a * 1;
  if (name == "remainder") return y.remainder_(b);
  if (name == "fmod") return y.fmod_(b);
  REQUIRE(name == "atan2");
  return y.atan2_(b);
}

const std::map<std::string, OpFn>& ops() {
  static const std::map<std::string, OpFn> m = {
      {"mode",
       [](const TL& x, const OracleCase& c) { return std::get<0>(mode(x[0], ikw(c, "dim"), c.kw("keepdim", false))); }},
      {"mode_indices",
       [](const TL& x, const OracleCase& c) { return std::get<1>(x[0].mode(ikw(c, "dim"), c.kw("keepdim", false))); }},
      {"inplace_unary",
       [](const TL& x, const OracleCase& c) { return unary_inplace(c.kwargs.at("name").get<std::string>(), x[0]); }},
      {"inplace_binary",
       [](const TL& x, const OracleCase& c) {
         return binary_inplace(c.kwargs.at("name").get<std::string>(), x[0], x[1]);
       }},
      {"inplace_cumprod",
       [](const TL& x, const OracleCase& c) {
         Tensor y = x[0] * 1;
         return y.cumprod_(ikw(c, "dim"));
       }},
  };
  return m;
}

using wick::test::doubles;
using wick::test::f64;
using wick::test::i64;
using wick::test::longs;
// mode(x, dim) as (values as doubles, indices).
std::pair<std::vector<double>, std::vector<int64_t>> mode_of(const Tensor& x, int64_t dim = -1) {
  auto [v, i] = mode(x, dim);
  return {doubles(v), longs(i)};
}
}  // namespace

TEST_CASE("tensor methods: mode and the in-place methods match PyTorch 1.13 on every device", "[tensor_methods]") {
  std::map<std::string, int> seen;
  for (const Device dev : wick::test::test_devices()) {
    for (const OracleCase& c : wick::test::oracle_cases()) {
      auto it = ops().find(c.op);
      if (it == ops().end()) continue;
      INFO(c.label() << " on " << dev);
      TL leaves = c.leaves(dev);
      Tensor out = it->second(leaves, c);
      REQUIRE(out.sizes() == c.out.sizes());
      if (c.op == "mode_indices") {
        CHECK(out.dtype() == kInt64);
        CHECK(out.device() == dev);
        CHECK(longs(out) == longs(c.out));
      } else {
        wick::test::check_oracle_case(c, out, leaves, dev, 1e-10, 1e-10, 1e-13);
      }
      ++seen[c.op];
    }
  }
  for (const auto& [name, fn] : ops()) {
    INFO(name);
    CHECK(seen[name] > 0);
  }
}

TEST_CASE("mode: ties repeats NaN integers bool and errors worked by hand", "[tensor_methods]") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    // Equally frequent values: the smallest; the index of its last occurrence.
    CHECK(mode_of(f64({2, 2, 1, 2, 1, 1}, {6}, dev)) ==
          std::make_pair(std::vector<double>{1}, std::vector<int64_t>{5}));
    CHECK(mode_of(f64({5, 1, 5, 1, 5}, {5}, dev)) == std::make_pair(std::vector<double>{5}, std::vector<int64_t>{4}));
    CHECK(mode_of(f64({4, 3, 2, 1}, {4}, dev)) == std::make_pair(std::vector<double>{1}, std::vector<int64_t>{3}));
    CHECK(mode_of(f64({inf, -inf, inf, -inf}, {4}, dev)).second == std::vector<int64_t>{3});
    // A slice longer than 16 (where PyTorch's index is any occurrence): still the last one.
    std::vector<double> long_row;
    for (int i = 0; i < 40; ++i) long_row.push_back(static_cast<double>(i % 3 == 1 ? 7 : i));
    CHECK(mode_of(f64(long_row, {40}, dev)) == std::make_pair(std::vector<double>{7}, std::vector<int64_t>{37}));
    // NaN counts once; equal numbers count together across NaNs; NaN wins only a slice of NaNs.
    CHECK(mode_of(f64({nan, 1}, {2}, dev)) == std::make_pair(std::vector<double>{1}, std::vector<int64_t>{1}));
    CHECK(mode_of(f64({2, nan, 2}, {3}, dev)) == std::make_pair(std::vector<double>{2}, std::vector<int64_t>{2}));
    auto [nv, ni] = mode(f64({nan, nan, nan}, {3}, dev));
    CHECK(std::isnan(doubles(nv)[0]));
    CHECK(longs(ni) == std::vector<int64_t>{0});
    // Along dim 0 of a transposed (non-contiguous) input, keepdim, and 0-d.
    Tensor m = f64({1, 3, 2, 3, 2, 1}, {2, 3}, dev).t();  // [[1, 3], [3, 2], [2, 1]]
    auto [kv, ki] = m.mode(0, true);
    CHECK(kv.sizes() == IntArrayRef{1, 2});
    CHECK(doubles(kv) == std::vector<double>{1, 1});
    CHECK(longs(ki) == std::vector<int64_t>{0, 2});
    auto [zv, zi] = mode(f64({3.5}, {}, dev));
    CHECK(zv.dim() == 0);
    CHECK(longs(zi) == std::vector<int64_t>{0});
    // Integer and bool inputs keep their dtype.
    auto [iv, ii] = mode(i64({1, 1, 0, 0, 2}, dev));
    CHECK(iv.dtype() == kInt64);
    CHECK(longs(iv) == std::vector<int64_t>{0});
    CHECK(longs(ii) == std::vector<int64_t>{3});
    auto [bv, bi] = mode(i64({1, 0, 1}, dev).gt(0));
    CHECK(bv.dtype() == kBool);
    CHECK(bv.item<bool>());
    CHECK(longs(bi) == std::vector<int64_t>{2});
    // An empty dim is an IndexError (PyTorch's); an empty other dim gives empty results.
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    CHECK_THROWS_AS(mode(zeros({2, 0}, o), 1), IndexError);
    CHECK_THROWS_AS(mode(zeros({3}, o), 1), IndexError);
    auto [ev, ei] = mode(zeros({2, 0}, o), 0);
    CHECK(ev.sizes() == IntArrayRef{0});
    CHECK(ei.sizes() == IntArrayRef{0});
    // The gradient goes to the returned index only.
    Tensor g = f64({1, 2, 2, 3, 2}, {5}, dev).requires_grad_();
    std::get<0>(g.mode()).backward();
    CHECK(doubles(g.grad()) == std::vector<double>{0, 0, 0, 0, 1});
  }
}

TEST_CASE("tensor methods: float64 gradchecks of mode and the in-place methods", "[tensor_methods]") {
  manual_seed(71);
  auto R = [](IntArrayRef shape) { return randn(shape, TensorOptions(kFloat64).requires_grad()); };
  // Distinct values (the mode is then the smallest, stable under a small perturbation).
  CHECK_GRADCHECKS(
      [](const TL& x) {
        return TL{std::get<0>(mode(x[0], 1)), std::get<0>(x[0].mode(0, true))};
      },
      {R({3, 4})});
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor y = x[0] * 1;
        y.tan_().sinh_().atan_();
        Tensor z = x[0] * 1;
        z.cumprod_(1);
        return TL{y, z};
      },
      {R({2, 3})});
  Tensor u = (rand({2, 3}, kFloat64) * 1.6 - 0.8).requires_grad_();
  CHECK_GRADCHECKS(
      [](const TL& x) {
        Tensor a = x[0] * 1, b = x[0] * 1, c = x[0] * 1;
        return TL{a.asin_(), b.acos_(), c.atanh_().asinh_()};
      },
      {u});
  Tensor big = (rand({2, 3}, kFloat64) + 1.5).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{(x[0] * 1).acosh_().cosh_()}; }, {big});
  CHECK_GRADCHECKS([](const TL& x) { return TL{(x[0] * 1).atan2_(x[1])}; }, {R({2, 3}), R({3})});
  Tensor a = f64({2.3, -2.3, 5.4, -0.4}, {4}).requires_grad_();
  Tensor b = f64({1.5, 1.5, -2.0, 0.7}, {4}).requires_grad_();
  CHECK_GRADCHECKS([](const TL& x) { return TL{(x[0] * 1).remainder_(x[1]), (x[0] * 1).fmod_(x[1])}; }, {a, b});
}

TEST_CASE("tensor methods: each method equals its free function on every device", "[tensor_methods]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(72);
    const Tensor x = randn({3, 5}, TensorOptions(kFloat64)).to(dev) * 2;
    const Tensor y = randn({5}, TensorOptions(kFloat64)).to(dev).abs() + 1.5;
    const Tensor u = rand({3, 5}, TensorOptions(kFloat64)).to(dev) * 1.8 - 0.9;
    CHECK(x.prod().equal(prod(x)));
    CHECK(x.prod(1, true).equal(prod(x, 1, true)));
    CHECK(x.cumprod(0).equal(cumprod(x, 0)));
    CHECK(std::get<1>(x.kthvalue(2)).equal(std::get<1>(kthvalue(x, 2, -1))));
    CHECK(std::get<0>(x.kthvalue(2, 0, true)).equal(std::get<0>(kthvalue(x, 2, 0, true))));
    CHECK(x.median().equal(median(x)));
    CHECK(std::get<1>(x.median(1)).equal(std::get<1>(median(x, 1))));
    CHECK(std::get<1>(x.round().mode(0)).equal(std::get<1>(mode(round(x), 0))));
    for (const auto& [method, free] : std::vector<std::pair<Tensor, Tensor>>{{x.floor(), floor(x)},
                                                                             {x.ceil(), ceil(x)},
                                                                             {x.round(), round(x)},
                                                                             {x.trunc(), trunc(x)},
                                                                             {x.frac(), frac(x)},
                                                                             {x.remainder(y), remainder(x, y)},
                                                                             {x.remainder(1.5), remainder(x, 1.5)},
                                                                             {x.fmod(y), fmod(x, y)},
                                                                             {x.fmod(-1.5), fmod(x, -1.5)},
                                                                             {x.tan(), tan(x)},
                                                                             {u.asin(), asin(u)},
                                                                             {u.acos(), acos(u)},
                                                                             {x.atan(), atan(x)},
                                                                             {x.atan2(y), atan2(x, y)},
                                                                             {x.sinh(), sinh(x)},
                                                                             {x.cosh(), cosh(x)},
                                                                             {x.asinh(), asinh(x)},
                                                                             {y.acosh(), acosh(y)},
                                                                             {u.atanh(), atanh(u)}}) {
      CHECK(method.equal(free));
    }
  }
}

TEST_CASE("tensor methods: in-place forms write the result bump the version once and refuse what PyTorch refuses",
          "[tensor_methods]") {
  for (const Device dev : wick::test::test_devices()) {
    INFO(dev);
    manual_seed(73);
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    const Tensor x = randn({3, 4}, TensorOptions(kFloat64)).to(dev);
    const Tensor d = f64({1.5, -1.5, 0.7, -2.0}, {4}, dev);
    auto expect = [&](const char* name, Tensor& (*fn)(Tensor&), const Tensor& want) {
      wick::test::check_inplace_write(name, x, fn, want);
    };
    expect(
        "floor_", [](Tensor& t) -> Tensor& { return t.floor_(); }, floor(x));
    expect(
        "relu_", [](Tensor& t) -> Tensor& { return t.relu_(); }, relu(x));
    expect(
        "frac_", [](Tensor& t) -> Tensor& { return t.frac_(); }, frac(x));
    expect(
        "tan_", [](Tensor& t) -> Tensor& { return t.tan_(); }, tan(x));
    expect(
        "cosh_", [](Tensor& t) -> Tensor& { return t.cosh_(); }, cosh(x));
    expect(
        "cumprod_", [](Tensor& t) -> Tensor& { return t.cumprod_(1); }, cumprod(x, 1));
    Tensor t = x.clone();
    CHECK(t.remainder_(d).equal(remainder(x, d)));
    t = x.clone();
    CHECK(t.fmod_(2.5).equal(fmod(x, 2.5)));
    t = x.clone();
    CHECK(t.atan2_(d).equal(atan2(x, d)));
    // Integers: rounding is the identity; tan_ and a floating divisor give float32 / float64,
    // which an int64 tensor cannot hold (TypeError, nothing written).
    Tensor ints = i64({5, -7, 3}, dev);
    CHECK(longs(ints.ceil_()) == std::vector<int64_t>{5, -7, 3});
    CHECK(longs(ints.remainder_(Scalar(3))) == std::vector<int64_t>{2, 2, 0});
    const uint32_t iv = ints.version();
    CHECK_THROWS_AS(ints.tan_(), TypeError);
    CHECK_THROWS_AS(ints.remainder_(2.5), TypeError);
    CHECK_THROWS_AS(ints.fmod_(i64({1, 0, 1}, dev)), ValueError);  // integer division by zero
    CHECK(ints.version() == iv);
    CHECK(longs(ints) == std::vector<int64_t>{2, 2, 0});
    // An operand that would broadcast the tensor: ValueError, nothing written.
    Tensor row = f64({5, 7}, {2}, dev);
    CHECK_THROWS_AS(row.remainder_(ones({2, 2}, o)), ValueError);
    CHECK(doubles(row) == std::vector<double>{5, 7});
    // A leaf that requires grad is refused (StateError); under NoGradGuard it is written.
    Tensor leaf = f64({0.5, -1.5}, {2}, dev).requires_grad_();
    CHECK_THROWS_AS(leaf.ceil_(), StateError);
    CHECK_THROWS_AS(leaf.atan2_(d.narrow(0, 0, 2)), StateError);
    CHECK(doubles(leaf) == std::vector<double>{0.5, -1.5});
    {
      NoGradGuard no_grad;
      leaf.ceil_();
    }
    CHECK(doubles(leaf.detach()) == std::vector<double>{1, -1});
    // On a view of a non-leaf, the base's gradient flows through the written slice only.
    Tensor base_leaf = f64({0.3, 0.6, 0.9, 1.2}, {4}, dev).requires_grad_();
    Tensor base = base_leaf * 1;
    base.narrow(0, 1, 2).tan_();
    base.sum().backward();
    const std::vector<double> g = doubles(base_leaf.grad());
    CHECK(g[0] == 1.0);
    CHECK(g[1] == Approx(1.0 / (std::cos(0.6) * std::cos(0.6))).epsilon(1e-12));
    CHECK(g[2] == Approx(1.0 / (std::cos(0.9) * std::cos(0.9))).epsilon(1e-12));
    CHECK(g[3] == 1.0);
  }
}
