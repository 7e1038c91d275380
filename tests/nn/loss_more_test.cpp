// The losses of functional_loss_more.h and their modules (loss_more.h): triplet_margin_loss,
// multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss, poisson_nll_loss and
// gaussian_nll_loss. Values and gradients against PyTorch 1.13 (generate.py's margin_likelihood_loss_cases,
// selected by op name) under every reduction on every test device; one small example of each
// worked by hand; float64 gradchecks and double backward; the modules against their functionals;
// and the typed errors, each naming the loss.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);
const char* const kOps[] = {"triplet_margin_loss",         "multi_margin_loss", "multilabel_margin_loss",
                            "multilabel_soft_margin_loss", "poisson_nll_loss",  "gaussian_nll_loss"};

using wick::test::f64;
using wick::test::i64;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64.requires_grad()); }
Tensor positive(IntArrayRef shape) { return (wick::rand(shape, kF64) + 0.5).requires_grad_(true); }

// The case's loss on its inputs x (already on the device), read from the op name and kwargs.
Tensor run_loss(const OracleCase& c, const std::vector<Tensor>& x) {
  const Reduction red = reduction_from_string(c.kwargs.at("reduction").get<std::string>());
  const Tensor third = x.size() > 2 ? x[2] : Tensor();
  if (c.op == "triplet_margin_loss")
    return F::triplet_margin_loss(x[0], x[1], x[2], c.kw<double>("margin", 1.0), c.kw<double>("p", 2.0),
                                  c.kw<double>("eps", 1e-6), c.kw<bool>("swap", false), red);
  if (c.op == "multi_margin_loss")
    return F::multi_margin_loss(x[0], x[1], c.kw<int64_t>("p", 1), c.kw<double>("margin", 1.0), third, red);
  if (c.op == "multilabel_margin_loss") return F::multilabel_margin_loss(x[0], x[1], red);
  if (c.op == "multilabel_soft_margin_loss") return F::multilabel_soft_margin_loss(x[0], x[1], third, red);
  if (c.op == "poisson_nll_loss")
    return F::poisson_nll_loss(x[0], x[1], c.kw<bool>("log_input", true), c.kw<bool>("full", false),
                               c.kw<double>("eps", 1e-8), red);
  if (c.op == "gaussian_nll_loss")
    return F::gaussian_nll_loss(x[0], x[1], x[2], c.kw<bool>("full", false), c.kw<double>("eps", 1e-6), red);
  return {};
}

template <class E>
void check_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    FAIL("no error");
  } catch (const E& e) {
    for (const std::string& p : parts) CHECK_THAT(e.what(), Contains(p));
  }
}

void check_same(const Tensor& a, const Tensor& b) { CHECK_ALLCLOSE(a, b, 0.0, 0.0); }
}  // namespace

TEST_CASE("margin and likelihood losses match PyTorch 1.13 under every reduction on every device",
          "[nn][oracle][loss_more]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    bool ours = false;
    for (const char* op : kOps) ours = ours || c.op == op;
    if (!ours) continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const std::vector<Tensor> x = c.leaves(dev);
      const Tensor out = run_loss(c, x);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kOutRtol, kGradRtol, kAtol);
    }
    ++seen[c.op + " " + c.kwargs.at("reduction").get<std::string>()];
    if (c.op == "triplet_margin_loss" && c.kw<bool>("swap", false)) ++seen["triplet swap"];
    if (c.op == "multi_margin_loss" && c.inputs.size() == 3) ++seen["multi_margin weight"];
    if (c.op == "poisson_nll_loss" && c.kw<bool>("full", false) && !c.kw<bool>("log_input", true)) ++seen["stirling"];
    if (c.op == "gaussian_nll_loss" && c.inputs[2].sizes() != c.inputs[0].sizes()) ++seen["per-sample var"];
  }
  for (const char* op : kOps)
    for (const char* red : {"none", "mean", "sum"}) {
      INFO(op << " " << red);
      CHECK(seen[std::string(op) + " " + red] >= 2);
    }
  CHECK(seen["triplet swap"] == 6);
  CHECK(seen["multi_margin weight"] == 12);
  CHECK(seen["stirling"] == 12);
  CHECK(seen["per-sample var"] == 12);
}

TEST_CASE("margin and likelihood losses by hand", "[nn][loss_more]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // triplet: d(a, p) = 5, d(a, n) = 10, d(p, n) = 5 (eps 0). Without swap max(0, 1 + 5 - 10) =
    // 0; with swap the negative distance is min(10, 5), so 1 + 5 - 5 = 1.
    const Tensor a = f64({0, 0}, {1, 2}, dev), p = f64({3, 4}, {1, 2}, dev), n = f64({6, 8}, {1, 2}, dev);
    CHECK_ALLCLOSE(F::triplet_margin_loss(a, p, n, 1.0, 2.0, 0.0, false, kNone), f64({0.0}, {1}), 0.0, 0.0);
    CHECK_ALLCLOSE(F::triplet_margin_loss(a, p, n, 1.0, 2.0, 0.0, true, kNone), f64({1.0}, {1}), 1e-15, 0.0);
    // p = 1: d(a, p) = 7, d(a, n) = 14, margin 8: 1.
    CHECK_ALLCLOSE(F::triplet_margin_loss(a, p, n, 8.0, 1.0, 0.0, false, kSum), f64({1.0}, {}), 1e-15, 0.0);
    // 0-d inputs are one-element vectors, as PyTorch takes them: 1 + |1 - 2| - |1 - 0| = 1, a 0-d loss.
    const Tensor one = f64({1.0}, {}, dev), two = f64({2.0}, {}, dev), zero = f64({0.0}, {}, dev);
    CHECK_ALLCLOSE(F::triplet_margin_loss(one, two, zero, 1.0, 2.0, 0.0, false, kNone), f64({1.0}, {}), 0.0, 0.0);

    // multi_margin (PyTorch's documented example): y = 3, terms 1 - 0.8 + x_c = 0.3, 0.4, 0.6 over
    // 4 classes: 0.325; squared (p = 2): 0.61 / 4; a weight of 2 on class 3 doubles it.
    const Tensor x = f64({0.1, 0.2, 0.4, 0.8}, {1, 4}, dev).requires_grad_(true);
    const Tensor y = i64({3}, {1}, dev);
    CHECK_ALLCLOSE(F::multi_margin_loss(x, y), f64({0.325}, {}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::multi_margin_loss(x, y, 2), f64({0.1525}, {}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::multi_margin_loss(x, y, 1, 1.0, f64({1, 1, 1, 2}, {4}, dev)), f64({0.65}, {}), 1e-15, 0.0);
    F::multi_margin_loss(x, y).backward();  // each active term: +1/4 to its class, -1/4 to the target
    CHECK_ALLCLOSE(x.grad(), f64({0.25, 0.25, 0.25, -0.75}, {1, 4}), 1e-15, 0.0);
    // A [C] input with a 0-d target gives a 0-d loss, with a [1] target a [1] loss; a 0-d input
    // has one class, the target's, so its loss is 0.
    CHECK(F::multi_margin_loss(x.detach().reshape({4}), i64({3}, {}, dev), 1, 1.0, {}, kNone).sizes() == IntArrayRef{});
    CHECK(F::multi_margin_loss(x.detach().reshape({4}), y, 1, 1.0, {}, kNone).sizes() == IntArrayRef{1});
    CHECK_ALLCLOSE(F::multi_margin_loss(one, i64({0}, {}, dev)), f64({0.0}, {}), 0.0, 0.0);

    // multilabel_margin (PyTorch's documented example): classes 3 and 0 (the 1 after -1 is
    // ignored) against 1 and 2: (0.4 + 0.6 + 1.1 + 1.3) / 4 = 0.85.
    const Tensor xl = f64({0.1, 0.2, 0.4, 0.8}, {1, 4}, dev).requires_grad_(true);
    CHECK_ALLCLOSE(F::multilabel_margin_loss(xl, i64({3, 0, -1, 1}, {1, 4}, dev)), f64({0.85}, {}), 1e-15, 0.0);
    F::multilabel_margin_loss(xl, i64({3, 0, -1, 1}, {1, 4}, dev)).backward();
    CHECK_ALLCLOSE(xl.grad(), f64({-0.5, 0.5, 0.5, -0.5}, {1, 4}), 1e-15, 0.0);
    // A class listed twice counts twice; a row listing every class costs nothing.
    CHECK_ALLCLOSE(F::multilabel_margin_loss(xl.detach(), i64({3, 3, -1, 0}, {1, 4}, dev)),
                   f64({2 * (0.3 + 0.4 + 0.6) / 4}, {}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::multilabel_margin_loss(xl.detach(), i64({0, 1, 2, 3}, {1, 4}, dev)), f64({0.0}, {}), 0.0, 0.0);

    // multilabel_soft_margin at x = 0: every term is log 2; a weight [1, 3] averages to 2 log 2.
    const Tensor z = f64({0, 0}, {1, 2}, dev), t = f64({1, 0}, {1, 2}, dev);
    CHECK_ALLCLOSE(F::multilabel_soft_margin_loss(z, t), f64({std::log(2.0)}, {}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::multilabel_soft_margin_loss(z, t, f64({1, 3}, {2}, dev)), f64({2 * std::log(2.0)}, {}), 1e-15,
                   0.0);

    // poisson: exp(x) - t x; x - t log(x + eps); Stirling's term only where t > 1.
    const double l2 = std::log(2.0), pi = std::numbers::pi;
    const Tensor rate = f64({0.0, l2}, {2}, dev), counts = f64({1.0, 2.0}, {2}, dev);
    CHECK_ALLCLOSE(F::poisson_nll_loss(rate, counts, true, false, 1e-8, kNone), f64({1.0, 2 - 2 * l2}, {2}), 1e-15,
                   0.0);
    CHECK_ALLCLOSE(F::poisson_nll_loss(rate, counts, true, true, 1e-8, kNone),
                   f64({1.0, 2 - 2 * l2 + 2 * l2 - 2 + 0.5 * std::log(4 * pi)}, {2}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::poisson_nll_loss(f64({2.0}, {1}, dev), f64({3.0}, {1}, dev), false, false, 0.0, kSum),
                   f64({2 - 3 * std::log(2.0)}, {}), 1e-15, 0.0);

    // gaussian: 0.5 (log 4 + (1 - 3)^2 / 4); full adds 0.5 log(2 pi). A var of 0 counts as eps
    // (0.25 here) and its gradient is the formula's there, 0.5 (1 / 0.25 - 1 / 0.25^2) = -6.
    const Tensor mu = f64({1.0, 1.0}, {2}, dev), obs = f64({3.0, 2.0}, {2}, dev);
    const Tensor var = f64({4.0, 0.0}, {2}, dev).requires_grad_(true);
    const Tensor g = F::gaussian_nll_loss(mu, obs, var, false, 0.25, kNone);
    CHECK_ALLCLOSE(g, f64({0.5 * (std::log(4.0) + 1.0), 0.5 * (std::log(0.25) + 4.0)}, {2}), 1e-15, 0.0);
    g.sum().backward();
    CHECK_ALLCLOSE(var.grad(), f64({0.5 * (0.25 - 4.0 / 16.0), -6.0}, {2}), 1e-15, 0.0);
    CHECK_ALLCLOSE(
        F::gaussian_nll_loss(mu, obs, var.detach(), true, 0.25, kNone),
        f64({0.5 * (std::log(4.0) + 1.0 + std::log(2 * pi)), 0.5 * (std::log(0.25) + 4.0 + std::log(2 * pi))}, {2}),
        1e-15, 0.0);
  }
}

TEST_CASE("gradcheck and double backward of the margin and likelihood losses in float64",
          "[nn][gradcheck][loss_more]") {
  const Tensor cls = i64({2, 0, 3, 1, 3}, {5});
  const Tensor rows = i64({1, 3, -1, 0, 2, -1, 0, 0, 0, 1, 2, 3, 3, 3, -1, 2, 0, -1, 1, 1}, {5, 4});
  for (Reduction r : {kNone, kMean, kSum}) {
    INFO(reduction_name(r));
    for (bool swap : {false, true})
      for (double p : {1.0, 2.0, 3.0}) {
        auto trip = [=](const TL& x) { return TL{F::triplet_margin_loss(x[0], x[1], x[2], 1.5, p, 1e-6, swap, r)}; };
        CHECK_GRADCHECK(trip, TL{rnd({4, 3}), rnd({4, 3}), rnd({4, 3})});
        if (p != 1.0) wick::test::check_double_backward(trip, TL{rnd({4, 3}), rnd({1, 3}), rnd({4, 3})});
      }
    for (int64_t p : {1, 2}) {
      auto mm = [=](const TL& x) { return TL{F::multi_margin_loss(x[0], cls, p, 0.7, x[1], r)}; };
      CHECK_GRADCHECK(mm, TL{rnd({5, 4}), positive({4})});
      wick::test::check_double_backward(mm, TL{rnd({5, 4}), positive({4})});
    }
    auto ml = [=](const TL& x) { return TL{F::multilabel_margin_loss(x[0], rows, r)}; };
    CHECK_GRADCHECK(ml, TL{rnd({5, 4})});
    auto soft = [=](const TL& x) { return TL{F::multilabel_soft_margin_loss(x[0], x[1], x[2], r)}; };
    CHECK_GRADCHECK(soft, TL{rnd({3, 4}), positive({3, 4}), positive({4})});
    wick::test::check_double_backward(soft, TL{rnd({3, 4}), positive({3, 4}), positive({4})});
    for (bool log_input : {true, false}) {
      auto pois = [=](const TL& x) { return TL{F::poisson_nll_loss(x[0], x[1], log_input, true, 1e-8, r)}; };
      // targets in (0.5, 4.5): both sides of Stirling's cut at 1
      const Tensor target = (wick::rand({3, 4}, kF64) * 4.0 + 0.5).requires_grad_(true);
      CHECK_GRADCHECK(pois, TL{log_input ? rnd({3, 4}) : positive({3, 4}), target});
      wick::test::check_double_backward(pois, TL{log_input ? rnd({3, 4}) : positive({3, 4}), target});
    }
    for (bool full : {false, true})
      for (const std::vector<int64_t>& var_shape : {std::vector<int64_t>{3, 4}, {3}, {3, 1}}) {
        auto gauss = [=](const TL& x) { return TL{F::gaussian_nll_loss(x[0], x[1], x[2], full, 1e-6, r)}; };
        CHECK_GRADCHECK(gauss, TL{rnd({3, 4}), rnd({3, 4}), positive(var_shape)});
        wick::test::check_double_backward(gauss, TL{rnd({3, 4}), rnd({3, 4}), positive(var_shape)});
      }
  }
}

TEST_CASE("the margin and likelihood loss modules equal their functionals and hold their weights as buffers",
          "[nn][loss_more]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    const Tensor x = wick::randn({4, 3}, o), t = wick::randn({4, 3}, o), v = wick::rand({4, 3}, o) + 0.1;
    const Tensor cls = i64({0, 2, 1, 2}, {4}, dev), rows = i64({0, -1, 0, 2, 1, -1, 1, 1, 1, 0, 2, -1}, {4, 3}, dev);
    const Tensor w = wick::tensor({0.5, 2.0, 1.5}, kF64), q = wick::rand({4, 3}, o);
    for (Reduction r : {kNone, kMean, kSum}) {
      INFO(reduction_name(r));
      check_same(
          TripletMarginLoss(TripletMarginLossOptions().margin(0.5).p(1.0).eps(1e-3).swap(true).reduction(r))(x, t, v),
          F::triplet_margin_loss(x, t, v, 0.5, 1.0, 1e-3, true, r));
      MultiMarginLoss mm(MultiMarginLossOptions().p(2).margin(0.4).weight(w.clone()).reduction(r));
      mm->to(dev);
      check_same(mm(x, cls), F::multi_margin_loss(x, cls, 2, 0.4, w.to(dev), r));
      check_same(MultiLabelMarginLoss(r)(x, rows), F::multilabel_margin_loss(x, rows, r));
      MultiLabelSoftMarginLoss ms(MultiLabelSoftMarginLossOptions().weight(w.clone()).reduction(r));
      ms->to(dev);
      check_same(ms(x, q), F::multilabel_soft_margin_loss(x, q, w.to(dev), r));
      check_same(PoissonNLLLoss(PoissonNLLLossOptions().log_input(false).full(true).eps(0.1).reduction(r))(v, q * 3.0),
                 F::poisson_nll_loss(v, q * 3.0, false, true, 0.1, r));
      check_same(GaussianNLLLoss(GaussianNLLLossOptions().full(true).eps(0.2).reduction(r))(x, t, v),
                 F::gaussian_nll_loss(x, t, v, true, 0.2, r));
    }
    // PyTorch's defaults: margin 1, p 2, eps 1e-6; p 1, margin 1; log_input, eps 1e-8; eps 1e-6.
    check_same(TripletMarginLoss()(x, t, v), F::triplet_margin_loss(x, t, v, 1.0, 2.0, 1e-6, false, kMean));
    check_same(MultiMarginLoss()(x, cls), F::multi_margin_loss(x, cls, 1, 1.0, {}, kMean));
    check_same(PoissonNLLLoss()(x, q), F::poisson_nll_loss(x, q, true, false, 1e-8, kMean));
    check_same(GaussianNLLLoss()(x, t, v), F::gaussian_nll_loss(x, t, v, false, 1e-6, kMean));
    // The generic call takes the three tensors.
    check_same(GaussianNLLLoss()->forward_value({Value(x), Value(t), Value(v)}).tensor(),
               F::gaussian_nll_loss(x, t, v));
  }
  CHECK(TripletMarginLoss()->to_string() == "TripletMarginLoss()");
  CHECK(MultiMarginLoss()->to_string() == "MultiMarginLoss()");
  CHECK(MultiLabelMarginLoss()->to_string() == "MultiLabelMarginLoss()");
  CHECK(MultiLabelSoftMarginLoss()->to_string() == "MultiLabelSoftMarginLoss()");
  CHECK(PoissonNLLLoss()->to_string() == "PoissonNLLLoss()");
  CHECK(GaussianNLLLoss()->to_string() == "GaussianNLLLoss()");
  // As PyTorch 1.13: a weight is the buffer "weight"; without one the state dict is empty.
  CHECK(MultiMarginLoss()->state_dict().empty());
  CHECK(GaussianNLLLoss()->named_buffers().empty());
  const Tensor w = wick::tensor({1.0, 2.0, 3.0}, kF64);
  CHECK(MultiMarginLoss(MultiMarginLossOptions().weight(w))->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(w))->named_buffers().keys() ==
        std::vector<std::string>{"weight"});
  // Bad options are refused when the module is built.
  CHECK_THROWS_WITH(MultiMarginLoss(MultiMarginLossOptions().p(3)), Contains("MultiMarginLoss") && Contains("p == 1"));
  CHECK_THROWS_WITH(MultiMarginLoss(MultiMarginLossOptions().weight(wick::ones({1, 3}, kF64))),
                    Contains("MultiMarginLoss") && Contains("one-dimensional"));
  CHECK_THROWS_AS(MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(wick::ones({3}, kInt64))),
                  TypeError);
  CHECK_THROWS_WITH(TripletMarginLoss(TripletMarginLossOptions().reduction(kBatchMean)),
                    Contains("TripletMarginLoss") && Contains("batchmean"));
  CHECK_THROWS_AS(MultiLabelMarginLoss(kBatchMean), ValueError);
  CHECK_THROWS_AS(PoissonNLLLoss(PoissonNLLLossOptions().reduction(kBatchMean)), ValueError);
  CHECK_THROWS_WITH(GaussianNLLLoss(GaussianNLLLossOptions().reduction(kBatchMean)), Contains("GaussianNLLLoss"));
}

TEST_CASE("margin and likelihood losses refuse bad input with typed errors that name the loss",
          "[nn][errors][loss_more]") {
  const Tensor a = wick::randn({2, 3}, kF64), v3 = wick::randn({3}, kF64), b = wick::randn({3, 2}, kF64);
  const Tensor cls = i64({0, 2}, {2});
  // triplet: PyTorch's one dim count, broadcasting, one dtype, a real p.
  check_error<ValueError>([&] { F::triplet_margin_loss(a, a, v3); },
                          {"triplet_margin_loss", "anchor [2, 3]", "negative [3]", "number of dims"});
  check_error<ValueError>([&] { F::triplet_margin_loss(a, b, a); }, {"triplet_margin_loss", "[2, 3]", "[3, 2]"});
  check_error<TypeError>([&] { F::triplet_margin_loss(a, a.to(kFloat32), a); },
                         {"triplet_margin_loss", "positive", "float32"});
  check_error<ValueError>([&] { F::triplet_margin_loss(a, a, a, 1.0, std::nan("")); }, {"triplet_margin_loss", "NaN"});
  check_error<ValueError>([&] { F::triplet_margin_loss(a, a, a.to(Device("cpu:1"))); },
                          {"triplet_margin_loss", "cpu:1"});
  // multi_margin: p, the target's dtype, shape and range, the weight's shape.
  check_error<ValueError>([&] { F::multi_margin_loss(a, cls, 3); }, {"multi_margin_loss", "p == 1", "3"});
  check_error<TypeError>([&] { F::multi_margin_loss(a, f64({0, 2}, {2})); }, {"multi_margin_loss", "int64", "float64"});
  check_error<ValueError>(
      [&] {
        F::multi_margin_loss(a, i64({0, 1, 2}, {3}));
      },
      {"multi_margin_loss", "input [2, 3]", "target [3]"});
  check_error<IndexError>(
      [&] {
        F::multi_margin_loss(a, i64({0, 3}, {2}));
      },
      {"multi_margin_loss", "target value 3", "3 classes"});
  check_error<IndexError>([&] { F::multi_margin_loss(a, i64({-1, 0}, {2})); }, {"multi_margin_loss", "-1"});
  check_error<ValueError>(
      [&] {
        F::multi_margin_loss(a, cls, 1, 1.0, wick::ones({1, 3}, kF64));
      },
      {"multi_margin_loss", "weight", "[1, 3]"});
  check_error<ValueError>([&] { F::multi_margin_loss(a, cls, 1, 1.0, wick::ones({2}, kF64)); },
                          {"multi_margin_loss", "[3]", "[2]"});
  check_error<ValueError>(
      [&] {
        F::multi_margin_loss(wick::randn({2, 3, 4}, kF64), cls);
      },
      {"multi_margin_loss", "[2, 3, 4]"});
  check_error<ValueError>(
      [&] {
        F::multi_margin_loss(wick::randn({2, 0}, kF64), cls);
      },
      {"multi_margin_loss", "non-empty"});
  // multilabel_margin: the target has input's shape and holds -1 .. C - 1.
  check_error<ValueError>([&] { F::multilabel_margin_loss(a, cls); },
                          {"multilabel_margin_loss", "input [2, 3]", "target [2]"});
  check_error<IndexError>(
      [&] {
        F::multilabel_margin_loss(a, i64({0, -1, 0, 1, -2, 0}, {2, 3}));
      },
      {"multilabel_margin_loss", "-2", "flat position 4"});
  check_error<IndexError>(
      [&] {
        F::multilabel_margin_loss(a, i64({0, -1, 3, 1, 0, 0}, {2, 3}));  // after the -1 too, as PyTorch
      },
      {"multilabel_margin_loss", "target value 3"});
  check_error<TypeError>([&] { F::multilabel_margin_loss(a, a); }, {"multilabel_margin_loss", "int64"});
  // multilabel_soft_margin: one shape, a class dim, a weight that broadcasts.
  check_error<ValueError>([&] { F::multilabel_soft_margin_loss(a, b); },
                          {"multilabel_soft_margin_loss", "[2, 3]", "[3, 2]"});
  check_error<ValueError>([&] { F::multilabel_soft_margin_loss(a.sum(), a.sum()); },
                          {"multilabel_soft_margin_loss", "0-d"});
  check_error<ValueError>([&] { F::multilabel_soft_margin_loss(a, a, wick::ones({2}, kF64)); },
                          {"multilabel_soft_margin_loss", "weight [2]", "broadcast"});
  check_error<TypeError>([&] { F::multilabel_soft_margin_loss(a, a.to(kBool)); },
                         {"multilabel_soft_margin_loss", "bool"});
  // poisson: one shape and dtype; no batchmean.
  check_error<ValueError>([&] { F::poisson_nll_loss(a, b); }, {"poisson_nll_loss", "[2, 3]", "[3, 2]"});
  check_error<TypeError>([&] { F::poisson_nll_loss(a, a.to(kFloat32)); }, {"poisson_nll_loss", "float32"});
  check_error<ValueError>([&] { F::poisson_nll_loss(a, a, true, false, 1e-8, kBatchMean); },
                          {"poisson_nll_loss", "batchmean"});
  check_error<TypeError>([&] { F::poisson_nll_loss(cls, cls); }, {"poisson_nll_loss", "int64"});
  // gaussian: PyTorch's var shapes, no negative variance, one dtype.
  const Tensor var = wick::ones({2, 3}, kF64);
  check_error<ValueError>([&] { F::gaussian_nll_loss(a, a, v3); },
                          {"gaussian_nll_loss", "var [3]", "input [2, 3]", "incorrect size"});
  check_error<ValueError>(
      [&] {
        F::gaussian_nll_loss(a, a, wick::ones({1, 3}, kF64));
      },
      {"gaussian_nll_loss", "[1, 3]"});
  check_error<ValueError>([&] { F::gaussian_nll_loss(a, a, var - 2.0); }, {"gaussian_nll_loss", "negative"});
  check_error<ValueError>([&] { F::gaussian_nll_loss(a, b, var); }, {"gaussian_nll_loss", "target [3, 2]"});
  check_error<TypeError>([&] { F::gaussian_nll_loss(a, a, var.to(kFloat32)); }, {"gaussian_nll_loss", "var"});
  check_error<ValueError>([&] { F::gaussian_nll_loss(a, a, var.to(Device("cpu:1"))); }, {"gaussian_nll_loss", "cpu:1"});
  // The accepted var shapes: input's, without the last dim, with a last dim of 1.
  CHECK(F::gaussian_nll_loss(a, a, wick::ones({2}, kF64), false, 1e-6, kNone).sizes() == a.sizes());
  CHECK(F::gaussian_nll_loss(a, a, wick::ones({2, 1}, kF64), false, 1e-6, kNone).sizes() == a.sizes());
  // An empty batch has no loss to average: NaN (PyTorch 1.13 returns memory it never wrote).
  CHECK(std::isnan(F::multi_margin_loss(wick::randn({0, 3}, kF64), i64({}, {0})).item<double>()));
  CHECK(std::isnan(F::multilabel_margin_loss(wick::randn({0, 3}, kF64), i64({}, {0, 3})).item<double>()));
  CHECK(F::multi_margin_loss(wick::randn({0, 3}, kF64), i64({}, {0}), 1, 1.0, {}, kNone).sizes() == IntArrayRef{0});
  // Integer labels are taken by multilabel_soft_margin_loss.
  const Tensor labels = i64({1, 0, 1, 0, 0, 1}, {2, 3});
  CHECK_ALLCLOSE(F::multilabel_soft_margin_loss(a, labels), F::multilabel_soft_margin_loss(a, labels.to(kFloat64)), 0.0,
                 0.0);
}
