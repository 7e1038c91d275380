// F::ctc_loss and CTCLoss, F::triplet_margin_with_distance_loss and its layer, and the
// Hardshrink, Softshrink and RReLU activations. Values and gradients against PyTorch 1.13
// (generate.py's ctc_cases, selected by op name) on every test device; CTC worked by hand on a
// 2-step, 2-class example; float64 gradchecks (CTC through log_softmax, where PyTorch's gradient
// is the exact one); RReLU's training-mode draws; the layers against their functionals; typed
// errors naming the op.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
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
constexpr double kRtol = 1e-10, kAtol = 1e-12;
const TensorOptions kF64(kFloat64);

using wick::test::f64;
using wick::test::i64;
Tensor rnd(IntArrayRef shape) { return wick::randn(shape, kF64.requires_grad()); }

// The case's distance function by its kwargs name ("pairwise": unset, the default).
std::optional<TripletMarginWithDistanceLossOptions::distance_function_t> distance_named(const std::string& name) {
  if (name == "cosine") return [](const Tensor& a, const Tensor& b) { return 1.0 - F::cosine_similarity(a, b); };
  if (name == "l1") return [](const Tensor& a, const Tensor& b) { return (a - b).abs().sum({-1}); };
  return std::nullopt;
}

// The case's op on its inputs x (on the device); undefined for another op.
Tensor run_case(const OracleCase& c, const TL& x) {
  if (c.op == "ctc_loss")
    return F::ctc_loss(x[0], x[1], x[2], x[3],
                       F::CTCLossFuncOptions()
                           .blank(c.kw<int64_t>("blank", 0))
                           .reduction(reduction_from_string(c.kwargs.at("reduction").get<std::string>()))
                           .zero_infinity(c.kw<bool>("zero_infinity", false)));
  if (c.op == "hardshrink") return F::hardshrink(x[0], c.kw<double>("lambd", 0.5));
  if (c.op == "softshrink") return F::softshrink(x[0], c.kw<double>("lambd", 0.5));
  if (c.op == "rrelu_eval")
    return F::rrelu(x[0], F::RReLUFuncOptions().lower(c.kw<double>("lower", 0.0)).upper(c.kw<double>("upper", 0.0)));
  if (c.op == "triplet_margin_with_distance_loss")
    return F::triplet_margin_with_distance_loss(
        x[0], x[1], x[2],
        TripletMarginWithDistanceLossOptions()
            .distance_function(distance_named(c.kwargs.at("distance").get<std::string>()))
            .margin(c.kw<double>("margin", 1.0))
            .swap(c.kw<bool>("swap", false))
            .reduction(reduction_from_string(c.kwargs.at("reduction").get<std::string>())));
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
}  // namespace

TEST_CASE("ctc_loss shrink rrelu and the distance triplet loss match PyTorch 1.13 on every device",
          "[nn][oracle][ctc_shrink]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "ctc_loss" && c.op != "hardshrink" && c.op != "softshrink" && c.op != "rrelu_eval" &&
        c.op != "triplet_margin_with_distance_loss")
      continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const TL x = c.leaves(dev);
      const Tensor out = run_case(c, x);
      REQUIRE(out.sizes() == c.out.sizes());
      wick::test::check_oracle_case(c, out, x, dev, kRtol, kRtol, kAtol);
    }
    std::string key = c.op;
    if (c.kwargs.contains("reduction")) key += " " + c.kwargs.at("reduction").get<std::string>();
    ++seen[key];
    if (c.op == "ctc_loss" && c.inputs[0].dim() == 2) ++seen["ctc unbatched"];
    if (c.op == "ctc_loss" && c.inputs[1].dim() == 1 && c.inputs[0].dim() == 3) ++seen["ctc concatenated"];
    if (c.op == "ctc_loss" && c.kw<bool>("zero_infinity", false)) ++seen["ctc zero_infinity"];
    if (c.op == "triplet_margin_with_distance_loss" && c.kwargs.at("distance") != "pairwise") ++seen["custom distance"];
  }
  for (const char* red : {"none", "mean", "sum"}) {
    INFO(red);
    CHECK(seen[std::string("ctc_loss ") + red] == 6);
    CHECK(seen[std::string("triplet_margin_with_distance_loss ") + red] == 6);
  }
  CHECK(seen["ctc unbatched"] == 3);
  CHECK(seen["ctc concatenated"] == 3);
  CHECK(seen["ctc zero_infinity"] == 3);
  CHECK(seen["custom distance"] == 12);
  CHECK(seen["hardshrink"] == 2);
  CHECK(seen["softshrink"] == 2);
  CHECK(seen["rrelu_eval"] == 2);
}

TEST_CASE("ctc_loss by hand on two steps and two classes", "[nn][ctc_shrink]") {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    // p(blank, one) = (0.4, 0.6) then (0.3, 0.7). Target "1": paths 11, 1_, _1 with probability
    // 0.42 + 0.18 + 0.28 = 0.88. PyTorch's gradient is exp(lp) minus the posterior of each class
    // at each step: step 0 gives "1" 0.6 / 0.88 and blank 0.28 / 0.88, step 1 "1" 0.7 / 0.88 and
    // blank 0.18 / 0.88.
    const Tensor lp = f64({std::log(0.4), std::log(0.6), std::log(0.3), std::log(0.7)}, {2, 1, 2}, dev);
    const Tensor leaf = lp.clone().requires_grad_(true);
    const Tensor two = i64({2}, {1}, dev), one = i64({1}, {1}, dev), zero = i64({0}, {1}, dev);
    const Tensor loss = F::ctc_loss(leaf, i64({1}, {1, 1}, dev), two, one);
    CHECK_ALLCLOSE(loss, f64({-std::log(0.88)}, {}), 1e-15, 0.0);
    loss.backward();
    CHECK_ALLCLOSE(leaf.grad(),
                   f64({0.4 - 0.28 / 0.88, 0.6 - 0.6 / 0.88, 0.3 - 0.18 / 0.88, 0.7 - 0.7 / 0.88}, {2, 1, 2}), 1e-14,
                   1e-15);
    // The empty target: blank twice, 0.12. Only step 0 counts with an input length of 1: 0.4.
    CHECK_ALLCLOSE(F::ctc_loss(lp, i64({}, {0}, dev), two, zero), f64({-std::log(0.12)}, {}), 1e-15, 0.0);
    CHECK_ALLCLOSE(F::ctc_loss(lp, i64({}, {0}, dev), one, zero), f64({-std::log(0.4)}, {}), 1e-15, 0.0);
    // "1 1" needs three steps (1 _ 1): inf, and 0 with zero_infinity, whose gradient is 0.
    const Tensor ones = i64({1, 1}, {2}, dev);
    CHECK(F::ctc_loss(lp, ones, two, two, F::CTCLossFuncOptions().reduction(kSum)).item<double>() == kInf);
    const Tensor leaf2 = lp.clone().requires_grad_(true);
    const Tensor zeroed = F::ctc_loss(leaf2, ones, two, two, F::CTCLossFuncOptions().zero_infinity(true));
    CHECK(zeroed.item<double>() == 0.0);
    zeroed.backward();
    CHECK_ALLCLOSE(leaf2.grad(), wick::zeros({2, 1, 2}, kF64), 0.0, 0.0);
    // An input of length 0: loss 0 for the empty target, inf otherwise.
    CHECK(F::ctc_loss(lp, i64({}, {0}, dev), zero, zero).item<double>() == 0.0);
    CHECK(F::ctc_loss(lp, one, zero, one, F::CTCLossFuncOptions().reduction(kNone)).item<double>() == kInf);
    // Unbatched [T, C] gives a 0-d loss; mean divides by the target length (2 here).
    const Tensor lp2 = lp.reshape({2, 2});
    const Tensor ab = F::ctc_loss(lp2, i64({1}, {1}, dev), i64({2}, {}, dev), i64({1}, {}, dev),
                                  F::CTCLossFuncOptions().reduction(kNone));
    CHECK(ab.sizes() == IntArrayRef{});
    CHECK_ALLCLOSE(ab, f64({-std::log(0.88)}, {}), 1e-15, 0.0);
    // A blank of 1: the label is class 0, paths 00, 0_, _0 with 0.4 * 0.3 + 0.4 * 0.7 + 0.6 * 0.3.
    CHECK_ALLCLOSE(F::ctc_loss(lp, i64({0}, {1}, dev), two, one, F::CTCLossFuncOptions().blank(1)),
                   f64({-std::log(0.12 + 0.28 + 0.18)}, {}), 1e-15, 0.0);
  }
}

TEST_CASE("gradcheck of ctc_loss through log_softmax in float64", "[nn][gradcheck][ctc_shrink]") {
  const Tensor padded = i64({1, 2, 2, 3, 0, 4, 1, 1, 0}, {3, 3}), concat = i64({1, 2, 2, 4, 1, 1}, {6});
  const Tensor il = i64({6, 4, 5}, {3}), tl = i64({3, 1, 2}, {3});
  for (Reduction r : {kNone, kMean, kSum}) {
    INFO(reduction_name(r));
    for (const Tensor& targets : {padded, concat}) {
      auto fn = [=](const TL& x) {
        return TL{F::ctc_loss(log_softmax(x[0], 2), targets, il, tl, F::CTCLossFuncOptions().reduction(r))};
      };
      CHECK_GRADCHECK(fn, TL{rnd({6, 3, 5})});
    }
    // An impossible alignment (1 1 1 in 4 steps) zeroed, next to a possible one; blank 3.
    auto zi = [=](const TL& x) {
      return TL{F::ctc_loss(log_softmax(x[0], 2), i64({1, 1, 1, 2, 0, 0}, {2, 3}), i64({4, 4}, {2}), i64({3, 2}, {2}),
                            F::CTCLossFuncOptions().blank(3).reduction(r).zero_infinity(true))};
    };
    CHECK_GRADCHECK(zi, TL{rnd({4, 2, 4})});
  }
  auto unbatched = [](const TL& x) {
    return TL{F::ctc_loss(log_softmax(x[0], 1), i64({2, 1}, {2}), i64({5}, {1}), i64({2}, {1}),
                          F::CTCLossFuncOptions().reduction(kNone))};
  };
  CHECK_GRADCHECK(unbatched, TL{rnd({5, 3})});
  wick::test::check_double_backward(unbatched, TL{rnd({5, 3})});
}

TEST_CASE("CTCLoss and TripletMarginWithDistanceLoss equal their functionals", "[nn][ctc_shrink]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor lp = log_softmax(wick::randn({6, 2, 4}, kF64.device(dev)), 2);
    const Tensor t = i64({1, 2, 3, 3, 0, 0}, {2, 3}, dev), il = i64({6, 5}, {2}, dev), tl = i64({3, 1}, {2}, dev);
    for (Reduction r : {kNone, kMean, kSum}) {
      const auto o = CTCLossOptions().blank(0).reduction(r).zero_infinity(true);
      CHECK_ALLCLOSE(CTCLoss(o)(lp, t, il, tl), F::ctc_loss(lp, t, il, tl, o), 0.0, 0.0);
    }
    CHECK_ALLCLOSE(CTCLoss()(lp, t, il, tl), F::ctc_loss(lp, t, il, tl), 0.0, 0.0);
    const Tensor a = wick::randn({4, 3}, kF64.device(dev)), p = wick::randn({4, 3}, kF64.device(dev));
    const Tensor n = wick::randn({4, 3}, kF64.device(dev));
    // The default distance is pairwise_distance: the plain triplet loss up to rounding.
    CHECK_ALLCLOSE(TripletMarginWithDistanceLoss()(a, p, n), F::triplet_margin_loss(a, p, n), 1e-14, 1e-15);
    auto half_l2 = [](const Tensor& x, const Tensor& y) { return 0.5 * (x - y).square().sum({-1}); };
    const auto o = TripletMarginWithDistanceLossOptions().distance_function(half_l2).margin(0.3).swap(true);
    CHECK_ALLCLOSE(TripletMarginWithDistanceLoss(o)(a, p, n), F::triplet_margin_with_distance_loss(a, p, n, o), 0.0,
                   0.0);
    // By hand: d(a, p) = 1, d(a, n) = 4, d(p, n) = 1 (half squared distances); swap takes 1.
    const Tensor x0 = f64({0, 0}, {1, 2}, dev), x1 = f64({1.0, 1.0}, {1, 2}, dev), x2 = f64({2.0, 2.0}, {1, 2}, dev);
    const auto hand = TripletMarginWithDistanceLossOptions().distance_function(half_l2).reduction(kNone);
    CHECK_ALLCLOSE(F::triplet_margin_with_distance_loss(x0, x1, x2, hand), f64({0.0}, {1}), 0.0, 0.0);
    CHECK_ALLCLOSE(
        F::triplet_margin_with_distance_loss(x0, x1, x2, TripletMarginWithDistanceLossOptions(hand).swap(true)),
        f64({1.0}, {1}), 0.0, 0.0);
  }
  auto cosine = [](const Tensor& x, const Tensor& y) { return 1.0 - F::cosine_similarity(x, y); };
  auto trip = [=](const TL& x) {
    return TL{F::triplet_margin_with_distance_loss(
        x[0], x[1], x[2], TripletMarginWithDistanceLossOptions().distance_function(cosine).swap(true).reduction(kSum))};
  };
  CHECK_GRADCHECK(trip, TL{rnd({4, 3}), rnd({4, 3}), rnd({4, 3})});
  CHECK(CTCLoss()->to_string() == "CTCLoss()");
  CHECK(TripletMarginWithDistanceLoss()->to_string() == "TripletMarginWithDistanceLoss()");
  CHECK_THROWS_WITH(CTCLoss(CTCLossOptions().reduction(kBatchMean)), Contains("CTCLoss") && Contains("batchmean"));
  CHECK_THROWS_AS(CTCLoss(CTCLossOptions().blank(-1)), ValueError);
  CHECK_THROWS_WITH(TripletMarginWithDistanceLoss(TripletMarginWithDistanceLossOptions().reduction(kBatchMean)),
                    Contains("TripletMarginWithDistanceLoss"));
}

TEST_CASE("ctc_loss and triplet_margin_with_distance_loss refuse bad input with typed errors",
          "[nn][errors][ctc_shrink]") {
  const Tensor lp = log_softmax(wick::randn({5, 2, 4}, kF64), 2);
  const Tensor t = i64({1, 2, 3, 3}, {2, 2}), il = i64({5, 5}, {2}), tl = i64({2, 1}, {2});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, t, i64({6, 5}, {2}), tl);
      },
      {"ctc_loss", "input_lengths[0] is 6", "[0, 5]", "[5, 2, 4]"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, t, il, i64({3, 1}, {2}));
      },
      {"ctc_loss", "target_lengths[0] is 3", "padded targets [2, 2]"});
  check_error<ValueError>([&] { F::ctc_loss(lp, t, i64({-1, 5}, {2}), tl); }, {"ctc_loss", "-1"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, t, il, i64({2, 1, 1}, {3}));
      },
      {"ctc_loss", "target_lengths [3]", "2", "[5, 2, 4]"});
  check_error<ValueError>([&] { F::ctc_loss(lp, t, i64({5}, {1}), tl); }, {"ctc_loss", "input_lengths [1]"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, i64({1, 2, 3, 3, 1}, {5}), il, tl);
      },
      {"ctc_loss", "concatenated targets [5]", "3"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, i64({1, 2, 3, 3, 1, 1}, {3, 2}), il, tl);
      },
      {"ctc_loss", "targets [3, 2]", "N = 2"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp, i64({1, 0, 3, 3}, {2, 2}), il, tl);
      },
      {"ctc_loss", "target 0 label 1", "blank"});
  check_error<IndexError>(
      [&] {
        F::ctc_loss(lp, i64({1, 4, 3, 3}, {2, 2}), il, tl);
      },
      {"ctc_loss", "is 4", "4 classes"});
  check_error<ValueError>([&] { F::ctc_loss(lp, t, il, tl, F::CTCLossFuncOptions().blank(4)); },
                          {"ctc_loss", "blank 4", "[5, 2, 4]"});
  check_error<ValueError>(
      [&] {
        F::ctc_loss(lp.reshape({5, 2, 2, 2}), t, il, tl);
      },
      {"ctc_loss", "[T, N, C]", "[5, 2, 2, 2]"});
  check_error<TypeError>([&] { F::ctc_loss(lp, t.to(kFloat64), il, tl); },
                         {"ctc_loss", "targets", "float64", "[2, 2]"});
  check_error<TypeError>([&] { F::ctc_loss(lp, t, il.to(kFloat64), tl); }, {"ctc_loss", "input_lengths", "float64"});
  check_error<TypeError>([&] { F::ctc_loss(t, t, il, tl); }, {"ctc_loss", "log_probs", "int64"});
  check_error<ValueError>([&] { F::ctc_loss(lp, t, il, tl, F::CTCLossFuncOptions().reduction(kBatchMean)); },
                          {"ctc_loss", "batchmean"});
  // Labels past a sequence's target length are ignored, blank or not, as PyTorch.
  CHECK(std::isfinite(F::ctc_loss(lp, i64({1, 2, 3, 0}, {2, 2}), il, tl).item<double>()));

  const Tensor a = wick::randn({3, 2}, kF64);
  const auto undefined =
      TripletMarginWithDistanceLossOptions().distance_function([](const Tensor&, const Tensor&) { return Tensor(); });
  check_error<ValueError>([&] { F::triplet_margin_with_distance_loss(a, a, a, undefined); },
                          {"triplet_margin_with_distance_loss", "undefined", "[3, 2]"});
  check_error<ValueError>(
      [&] {
        F::triplet_margin_with_distance_loss(a, wick::randn({3, 4}, kF64), a);
      },
      {"[3, 2]", "[3, 4]"});
  check_error<ValueError>([&] { F::triplet_margin_with_distance_loss(a, Tensor(), a); },
                          {"triplet_margin_with_distance_loss", "positive"});
}

TEST_CASE("hardshrink softshrink and rrelu: gradchecks layers and errors", "[nn][gradcheck][ctc_shrink]") {
  // Inputs away from the kinks at +-lambda (and 0 for rrelu), where central differences hold.
  const Tensor x = f64({-1.3, -0.6, -0.2, 0.1, 0.45, 0.7, 1.9, -0.9}, {2, 4}).requires_grad_(true);
  for (double l : {0.5, 0.25}) {
    CHECK_GRADCHECKS([=](const TL& v) { return TL{F::hardshrink(v[0], l)}; }, TL{x});
    CHECK_GRADCHECKS([=](const TL& v) { return TL{F::softshrink(v[0], l)}; }, TL{x});
  }
  CHECK_GRADCHECKS([](const TL& v) { return TL{F::rrelu(v[0], F::RReLUFuncOptions().lower(0.2).upper(0.4))}; }, TL{x});
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor y = x.detach().to(dev);
    CHECK_ALLCLOSE(Hardshrink(0.3)(y), F::hardshrink(y, 0.3), 0.0, 0.0);
    CHECK_ALLCLOSE(Softshrink()(y), F::softshrink(y, 0.5), 0.0, 0.0);
    RReLU rrelu(RReLUOptions().lower(0.1).upper(0.3));
    rrelu->eval();
    CHECK_ALLCLOSE(rrelu(y), F::leaky_relu(y, LeakyReLUOptions().negative_slope(0.2)), 0.0, 0.0);
    // inplace writes into the input and returns it.
    Tensor z = y.clone();
    const Tensor w = F::rrelu(z, F::RReLUFuncOptions().inplace(true));
    CHECK(w.data_ptr() == z.data_ptr());
    CHECK_ALLCLOSE(z, F::rrelu(y), 0.0, 0.0);
  }
  CHECK(Hardshrink()->to_string() == "Hardshrink(0.5)");
  CHECK(Softshrink(0.3)->to_string() == "Softshrink(0.3)");
  CHECK(RReLU()->to_string() == "RReLU(lower=0.125, upper=0.3333333333333333)");
  CHECK(RReLU(RReLUOptions().inplace(true))->to_string() ==
        "RReLU(lower=0.125, upper=0.3333333333333333, inplace=True)");
  check_error<ValueError>([&] { F::softshrink(x, -0.1); }, {"softshrink", "lambda", "-0.1", "[2, 4]"});
  check_error<ValueError>([&] { F::rrelu(x, F::RReLUFuncOptions().lower(0.5).upper(0.1)); },
                          {"rrelu", "lower (0.5)", "upper (0.1)"});
  check_error<TypeError>([&] { F::hardshrink(i64({1, 2}, {2})); }, {"hardshrink", "int64", "[2]"});
  check_error<TypeError>([&] { F::rrelu(i64({1, 2}, {2}), F::RReLUFuncOptions().training(true)); }, {"rrelu", "int64"});
  CHECK_THROWS_AS(Softshrink(-1.0), ValueError);
  CHECK_THROWS_AS(RReLU(RReLUOptions().lower(1.0).upper(0.5)), ValueError);
  Tensor leaf = f64({-1.0}, {1}).requires_grad_(true);
  CHECK_THROWS_AS(F::rrelu(leaf, F::RReLUFuncOptions().training(true).inplace(true)), StateError);
}

TEST_CASE("rrelu in training draws one slope per element from U(lower upper) with the seed", "[nn][ctc_shrink]") {
  const double lower = 0.1, upper = 0.4;
  const auto train = F::RReLUFuncOptions().lower(lower).upper(upper).training(true);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    std::vector<double> v(200);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.37 - 30.0;  // both signs, and 0 is not hit
    v[7] = 0.0;
    const Tensor x = f64(v, {200}, dev).requires_grad_(true);
    wick::manual_seed(11);
    const Tensor out = F::rrelu(x, train);
    out.sum().backward();
    const std::vector<double> o = out.to_vector<double>(), g = x.grad().to_vector<double>();
    std::vector<double> slopes;
    for (size_t i = 0; i < v.size(); ++i) {
      INFO("element " << i << " x " << v[i]);
      if (v[i] > 0) {
        CHECK(o[i] == v[i]);  // identity
        CHECK(g[i] == 1.0);
      } else {
        CHECK(g[i] >= lower);  // the gradient is the drawn slope
        CHECK(g[i] <= upper);
        if (v[i] < 0) {
          CHECK(o[i] == v[i] * g[i]);
          slopes.push_back(g[i]);
        } else {
          CHECK(o[i] == 0.0);
        }
      }
    }
    // The slopes differ from element to element and spread over the interval.
    double lo = upper, hi = lower;
    for (double s : slopes) lo = std::min(lo, s), hi = std::max(hi, s);
    CHECK(hi - lo > 0.5 * (upper - lower));
    // The same seed gives the same output; another seed another one.
    wick::manual_seed(11);
    CHECK_ALLCLOSE(F::rrelu(x.detach(), train), out.detach(), 0.0, 0.0);
    wick::manual_seed(12);
    CHECK(F::rrelu(x.detach(), train).to_vector<double>() != o);
    // The layer draws in training mode and uses (lower + upper) / 2 in eval.
    RReLU layer(RReLUOptions().lower(lower).upper(upper));
    wick::manual_seed(11);
    CHECK_ALLCLOSE(layer(x.detach()), out.detach(), 0.0, 0.0);
    layer->eval();
    CHECK_ALLCLOSE(layer(f64({-2.0, 3.0}, {2}, dev)), f64({-0.5, 3.0}, {2}), 1e-15, 0.0);
  }
}
