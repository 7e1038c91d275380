// init::trunc_normal_: bounds, the mean and variance of 100k draws against the truncated
// normal's closed forms, reproducibility under manual_seed on every device, the errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;

namespace {

// One interval and the closed-form moments of N(mean, std^2) conditioned on [a, b]. With
// al = (a - mean) / std, be = (b - mean) / std, Z = Phi(be) - Phi(al):
//   E[x]   = mean + std (phi(al) - phi(be)) / Z
//   Var[x] = std^2 (1 + (al phi(al) - be phi(be)) / Z - ((phi(al) - phi(be)) / Z)^2)
// evaluated with mpmath at 50 digits (mp.npdf, mp.ncdf; Z as ncdf(-al) - ncdf(-be), which does
// not cancel for an interval far above the mean). The standard errors of a 100k-draw mean and
// (biased) variance are sqrt(Var / n) and sqrt((mu4 - Var^2) / n), mu4 the fourth central
// moment by mpmath quadrature of (x - E[x])^4 times the density over [a, b].
struct Case {
  double mean, std, a, b;
  double want_mean, want_var, se_mean, se_var;
  double bias_mean, bias_var;  // the sampler's own bias, where it approximates (the tail case)
};

constexpr int64_t kDraws = 100000;

const Case kCases[] = {
    // Straddles the mean.
    {0.5, 2.0, -1.0, 3.0, 0.85490276396773937, 1.1533678400475529, 0.0034, 0.00359, 0, 0},
    // Wholly above the mean (sampled mirrored, from the lower tail).
    {0.0, 1.0, 1.0, 3.0, 1.5100495132439839, 0.17345290492412205, 0.00132, 0.000887, 0, 0},
    // The mean outside the interval, below it.
    {3.0, 0.5, -2.0, 2.0, 1.8133922335885796, 0.028569775103520314, 0.000535, 0.000202, 0, 0},
    // 40 std above the mean, where the CDF underflows: the exponential tail (rate 40) has mean
    // 40 + 1/40 and variance 1/1600, 3.1e-5 and 2.3e-6 from the exact values.
    {0.0, 1.0, 40.0, 41.0, 40.024968847207264, 0.00062266837859138626, 7.89e-05, 5.56e-06, 3.2e-5, 2.4e-6},
};

}  // namespace

TEST_CASE("init::trunc_normal_ stays in [a, b] and matches the truncated normal's mean and variance", "[nn][init]") {
  manual_seed(41);
  for (const Case& c : kCases) {
    CAPTURE(c.mean, c.std, c.a, c.b);
    Tensor t = wick::empty({kDraws}, kFloat64);
    CHECK(init::trunc_normal_(t, c.mean, c.std, c.a, c.b).is_same(t));
    const std::vector<double> v = values(t);
    double lo = v[0], hi = v[0], sum = 0;
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
    const double mean = sum / kDraws;
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    const double var = ss / kDraws;
    CHECK(lo >= c.a);
    CHECK(hi <= c.b);
    CHECK(std::abs(mean - c.want_mean) < 5 * c.se_mean + c.bias_mean);  // 5 standard errors
    CHECK(std::abs(var - c.want_var) < 5 * c.se_var + c.bias_var);
  }
}

TEST_CASE("init::trunc_normal_ keeps float32 values in [a, b] and is reproducible on every device", "[nn][init]") {
  manual_seed(42);
  const Tensor first = init::trunc_normal_(wick::empty({2000}, kFloat32), 0.0, 1.0, -0.5, 0.25);
  const std::vector<double> v = values(first);
  CHECK(*std::min_element(v.begin(), v.end()) >= -0.5);
  CHECK(*std::max_element(v.begin(), v.end()) <= 0.25);
  manual_seed(42);
  CHECK_ALLCLOSE(init::trunc_normal_(wick::empty({2000}, kFloat32), 0.0, 1.0, -0.5, 0.25), first, 0, 0);
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    manual_seed(42);
    Tensor t = wick::empty({2000}, TensorOptions(kFloat32).device(d));
    init::trunc_normal_(t, 0.0, 1.0, -0.5, 0.25);
    CHECK(t.device() == d);
    CHECK_ALLCLOSE(t, first, 0, 0);  // drawn and mapped on the host, then copied
  }
  // A parameter that requires grad stays a leaf that requires grad; the defaults are [-2, 2].
  Tensor w = wick::empty({50, 50}, TensorOptions(kFloat64).requires_grad());
  init::trunc_normal_(w);
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK(w.abs().max().item<double>() <= 2.0);
  CHECK_NOTHROW(init::trunc_normal_(wick::empty({0, 3}, kFloat32)));
}

TEST_CASE("init::trunc_normal_ refuses an empty or reversed interval, a std <= 0, non-finite arguments and integers",
          "[nn][init][errors]") {
  Tensor t = wick::ones({4});
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, 1, 2, 2), ValueError);
  CHECK_THROWS_WITH(init::trunc_normal_(t, 0, 1, 2, 2),
                    Contains("init.trunc_normal_") && Contains("a < b") && Contains("a=2, b=2"));
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, 1, 1, -1), ValueError);
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, 0, -2, 2), ValueError);
  CHECK_THROWS_WITH(init::trunc_normal_(t, 0, -1, -2, 2), Contains("std must be positive"));
  CHECK_THROWS_AS(init::trunc_normal_(t, std::nan(""), 1, -2, 2), ValueError);
  CHECK_THROWS_WITH(init::trunc_normal_(t, 0, 1, -2, INFINITY), Contains("must be finite") && Contains("normal_"));
  CHECK_THROWS_AS(init::trunc_normal_(t, 0, INFINITY, -2, 2), ValueError);
  CHECK_THROWS_WITH(init::trunc_normal_(t, 0, 1e-308, -1e308, 1e308), Contains("overflow"));
  CHECK_VALUES(t, {1, 1, 1, 1});                                             // refused calls change nothing
  CHECK_THROWS_AS(init::trunc_normal_(wick::ones({4}, kInt64)), TypeError);  // PyTorch refuses Long too
  CHECK_THROWS_WITH(init::trunc_normal_(wick::ones({4}, kInt64)), Contains("init.trunc_normal_") && Contains("int64"));
  CHECK_THROWS_AS(init::trunc_normal_(Tensor()), ValueError);
}
