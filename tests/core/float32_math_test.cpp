// The float32 exp, erf, tanh and sigmoid of Note [Vectorisable float32 exp and erf], against
// double-precision libm (the independent truth) over a dense sample of every float in range, at
// their special values, and through the CPU kernels: the vectorised loops must give the
// functors' own bits.
#include "wick/core/float32_math.h"

#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "support/allclose.h"
#include "wick/core/functors.h"

using namespace wick;

namespace {

// |got - ref| in units of the float32 spacing at ref.
double ulps(float got, double ref) {
  const float rf = static_cast<float>(ref);
  const double spacing = std::nextafter(std::fabs(rf), std::numeric_limits<float>::infinity()) - std::fabs(rf);
  return std::fabs(static_cast<double>(got) - ref) / spacing;
}

// Calls f(x) for every `step`-th float from 0 up to `limit`, and their negatives.
template <class F>
void for_floats(float limit, uint32_t step, F&& f) {
  uint32_t top;
  std::memcpy(&top, &limit, sizeof top);
  for (uint32_t b = 0; b <= top; b += step) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    f(x);
    f(-x);
  }
}

}  // namespace

TEST_CASE("float32 exp: within 1.5 ulp of exp on [-87.3, 88.7], inf above, 0 below, NaN kept") {
  double worst = 0;
  float at = 0;
  for_floats(88.72283f, 257, [&](float x) {
    if (x < -87.33654f) return;
    const double e = ulps(math::exp_f32(x), std::exp(static_cast<double>(x)));
    if (e > worst) worst = e, at = x;
  });
  INFO("worst at " << at);
  CHECK(worst <= 1.5);
  CHECK(math::exp_f32(0.0f) == 1.0f);
  CHECK(math::exp_f32(88.72283f) < std::numeric_limits<float>::infinity());
  CHECK(math::exp_f32(88.7228394f) == std::numeric_limits<float>::infinity());
  CHECK(math::exp_f32(std::numeric_limits<float>::infinity()) == std::numeric_limits<float>::infinity());
  CHECK(math::exp_f32(-87.34f) == 0.0f);
  CHECK(math::exp_f32(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(math::exp_f32(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("float32 erf: within 3 ulp of erf, odd, never past 1, +-1 at +-inf, NaN kept") {
  double worst = 0;
  float at = 0;
  for_floats(6.0f, 257, [&](float x) {
    const float e = math::erf_f32(x);
    const double err = ulps(e, std::erf(static_cast<double>(x)));
    if (err > worst) worst = err, at = x;
    if (!(std::fabs(e) <= 1.0f) || math::erf_f32(-x) != -e) FAIL("erf_f32 at " << x << " gave " << e);
  });
  INFO("worst at " << at);
  CHECK(worst <= 3.0);
  CHECK(math::erf_f32(1e-30f) == Approx(1.1283791671e-30).epsilon(1e-6));
  CHECK(std::signbit(math::erf_f32(-0.0f)));
  CHECK(math::erf_f32(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(math::erf_f32(-std::numeric_limits<float>::infinity()) == -1.0f);
  CHECK(std::isnan(math::erf_f32(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("float32 tanh within 1.5 ulp and sigmoid within 3 ulp, signs, limits and NaN kept") {
  double worst_tanh = 0, worst_sigmoid = 0;
  float at_tanh = 0, at_sigmoid = 0;
  for_floats(20.0f, 257, [&](float x) {
    const double t = ulps(math::tanh_f32(x), std::tanh(static_cast<double>(x)));
    if (t > worst_tanh) worst_tanh = t, at_tanh = x;
  });
  for_floats(87.0f, 257, [&](float x) {
    const double s = ulps(math::sigmoid_f32(x), 1.0 / (1.0 + std::exp(-static_cast<double>(x))));
    if (s > worst_sigmoid) worst_sigmoid = s, at_sigmoid = x;
  });
  INFO("tanh worst at " << at_tanh << ", sigmoid worst at " << at_sigmoid);
  CHECK(worst_tanh <= 1.5);
  CHECK(worst_sigmoid <= 3.0);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::signbit(math::tanh_f32(-0.0f)));
  CHECK(math::tanh_f32(1e-30f) == 1e-30f);
  CHECK(math::tanh_f32(inf) == 1.0f);
  CHECK(math::tanh_f32(-inf) == -1.0f);
  CHECK(std::isnan(math::tanh_f32(nan)));
  CHECK(math::sigmoid_f32(0.0f) == 0.5f);
  CHECK(math::sigmoid_f32(inf) == 1.0f);
  CHECK(math::sigmoid_f32(-inf) == 0.0f);
  CHECK(std::isnan(math::sigmoid_f32(nan)));
  manual_seed(4);
  const Tensor x = randn({4099}).mul(6.0);
  const auto xs = x.to_vector<float>(), ts = tanh(x).to_vector<float>(), ss = sigmoid(x).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    REQUIRE(ts[i] == math::tanh_f32(xs[i]));
    REQUIRE(ss[i] == math::sigmoid_f32(xs[i]));
  }
}

TEST_CASE("float32 gelu and its backward: the vectorised kernels give the functors' bits, near float64") {
  manual_seed(3);
  Tensor x = randn({4099}).mul(4.0);  // past a vector's width, with a tail
  Tensor g = randn({4099});
  const Tensor y = gelu(x);
  x.requires_grad_(true);
  gelu(x).backward(g);
  const auto xs = x.detach().to_vector<float>(), gs = g.to_vector<float>(), ys = y.to_vector<float>(),
             dxs = x.grad().to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("x = " << xs[i]);
    REQUIRE(ys[i] == math::gelu(xs[i]));
    REQUIRE(dxs[i] == math::gelu_backward(gs[i], xs[i]));
  }
  const Tensor x64 = x.detach().to(kFloat64).requires_grad_(true);
  CHECK_ALLCLOSE(y.to(kFloat64), gelu(x64), 1e-6, 1e-6);
  gelu(x64).backward(g.to(kFloat64));
  CHECK_ALLCLOSE(x.grad().to(kFloat64), x64.grad(), 1e-5, 1e-6);
}
