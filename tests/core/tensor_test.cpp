// Tensors: factories and the seeded generator. Views, version counters, conversions, element
// access and printing: tensor_views_test.cpp; per-device allocator accounting:
// tensor_allocator_test.cpp.
#include <wick/wick.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/exit_code.h"

using namespace wick;
using Catch::Matchers::Contains;

// ---------------------------------------------------------------------------------------------
// Factories
// ---------------------------------------------------------------------------------------------

TEST_CASE("empty/zeros/ones/full honour shape, dtype and device") {
  Tensor z = zeros({2, 3}, TensorOptions(kFloat64).device("cpu:2"));
  CHECK(z.sizes() == IntArrayRef({2, 3}));
  CHECK(z.strides() == IntArrayRef({3, 1}));
  CHECK(z.dtype() == kFloat64);
  CHECK(z.device() == Device("cpu:2"));
  CHECK(z.is_contiguous());
  CHECK(z.to_vector<double>() == std::vector<double>(6, 0.0));
  CHECK(ones({4}, kInt64).to_vector<int64_t>() == std::vector<int64_t>(4, 1));
  CHECK(full({2}, 7.5, kFloat32).to_vector<float>() == std::vector<float>{7.5f, 7.5f});
  CHECK(full({3}, true, kBool).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(empty({0, 4}).numel() == 0);
  CHECK(zeros({}).dim() == 0);
  CHECK(zeros({}).numel() == 1);
  CHECK(ones({2}, TensorOptions(kFloat64).requires_grad()).requires_grad());
  CHECK_THROWS_WITH(zeros({2, -1}), Contains("negative size -1"));
  Tensor t = full({2, 2}, 3.0, kFloat64);
  CHECK(zeros_like(t).dtype() == kFloat64);
  CHECK(ones_like(t).to_vector<double>() == std::vector<double>(4, 1.0));
  CHECK(full_like(t, 2).to_vector<double>() == std::vector<double>(4, 2.0));
  CHECK(empty_like(t).sizes() == t.sizes());
}

TEST_CASE("tensor() and from_blob copy host values") {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}, kFloat64);
  CHECK(a.at<double>({1, 0}) == 3.0);
  CHECK(tensor({1.5, 2.5}).dtype() == kFloat32);
  std::vector<int64_t> v{5, 6, 7};
  Tensor b = tensor(v, {3}, kInt64);
  v[0] = 0;  // a copy: later host writes do not show
  CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{5, 6, 7});
  const float raw[] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  Tensor c = from_blob(raw, {3, 2}, kFloat32);
  CHECK(c.at<float>({2, 1}) == 6.f);
  CHECK_THROWS_WITH(tensor({1.0, 2.0, 3.0}, {2, 2}), Contains("3 values") && Contains("[2, 2]"));
  CHECK(scalar_tensor(2.5).dim() == 0);
  CHECK(scalar_tensor(2.5, kFloat64).item<double>() == 2.5);
}

TEST_CASE("arange, linspace and eye") {
  CHECK(arange(5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  CHECK(arange(5).dtype() == kInt64);
  CHECK(arange(2, 11, 3).to_vector<int64_t>() == std::vector<int64_t>{2, 5, 8});
  CHECK(arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
  CHECK(arange(0.0, 1.0, 0.25, kFloat64).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(arange(0.0, 0.3, 0.1, kFloat64).numel() == 3);  // as torch.arange: ceil((end - start) / step)
  CHECK(arange(3, 3).numel() == 0);
  // Without options the dtype is inferred from the bounds, as torch.arange.
  CHECK(arange(0.0, 1.0, 0.25).dtype() == kFloat32);
  CHECK(arange(0.0, 1.0, 0.25).to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f});
  CHECK_THROWS_WITH(arange(0, 5, 0), Contains("arange") && Contains("step must be nonzero"));
  CHECK_THROWS_WITH(arange(5, 0, 1), Contains("arange") && Contains("sign of step"));
  CHECK(linspace(0, 1, 5, kFloat64).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75, 1.0});
  CHECK(linspace(2, 2, 1, kFloat64).to_vector<double>() == std::vector<double>{2.0});
  CHECK(linspace(0, 1, 0).numel() == 0);
  CHECK(linspace(-1, 1, 3, kFloat64).to_vector<double>() == std::vector<double>{-1, 0, 1});
  CHECK_THROWS_WITH(linspace(0, 1, -1), Contains("linspace"));
  // PyTorch's formula: the first half counts up from start, the second half down from end, so
  // both ends are exact (start + 48 * (1 / 48.) need not be 1).
  for (auto [a, b, n] :
       {std::tuple{0.0, 1.0, 49}, std::tuple{-1.0, 7.0, 1001}, std::tuple{-3.3, 2.9, 17}, std::tuple{0.1, 0.7, 10}}) {
    const auto v = linspace(a, b, n, kFloat64).to_vector<double>();
    const double step = (b - a) / (n - 1);
    REQUIRE(v.size() == static_cast<size_t>(n));
    CHECK(v.front() == a);
    CHECK(v.back() == b);
    size_t differ = 0;
    for (int i = 0; i < n; ++i)
      differ += v[static_cast<size_t>(i)] != (i < n / 2 ? a + i * step : b - (n - 1 - i) * step);
    CHECK(differ == 0);
  }
  CHECK(eye(3, kFloat64).to_vector<double>() == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(eye(2, 3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0});
  CHECK(eye(3, 2).to_vector<float>() == std::vector<float>{1, 0, 0, 1, 0, 0});
  CHECK(eye(0).numel() == 0);
  CHECK_THROWS_WITH(eye(-1), Contains("eye"));
}

TEST_CASE("manual_seed makes rand/randn/randint reproducible, and the sequence is counter based") {
  manual_seed(123);
  Tensor a = rand({1000}, kFloat64);
  Tensor an = randn({10}, kFloat64);
  manual_seed(123);
  Tensor b = rand({1000}, kFloat64);
  Tensor bn = randn({10}, kFloat64);
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  CHECK(an.to_vector<double>() == bn.to_vector<double>());
  // Two draws of 400 and 600 numbers give the same numbers as one draw of 1000.
  manual_seed(123);
  Tensor p = rand({400}, kFloat64), q = rand({600}, kFloat64);
  CHECK(cat({p, q}).to_vector<double>() == a.to_vector<double>());
  manual_seed(124);
  CHECK(rand({1000}, kFloat64).to_vector<double>() != a.to_vector<double>());
  // The same seed gives the same numbers on another CPU device.
  manual_seed(5);
  Tensor d0 = randn({50}, kFloat64);
  manual_seed(5);
  Tensor d1 = randn({50}, TensorOptions(kFloat64).device("cpu:1"));
  CHECK(d0.to_vector<double>() == d1.to_vector<double>());
}

TEST_CASE("rand, randn and randint have roughly the right statistics") {
  manual_seed(2024);
  const int64_t n = 200000;
  {
    auto v = rand({n}, kFloat64).to_vector<double>();
    double mean = 0, var = 0, lo = 1, hi = 0;
    for (double x : v) mean += x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean /= n;
    for (double x : v) var += (x - mean) * (x - mean);
    var /= n;
    CHECK(lo >= 0.0);
    CHECK(hi < 1.0);
    CHECK(mean == Approx(0.5).margin(0.005));
    CHECK(var == Approx(1.0 / 12).margin(0.002));
  }
  {
    auto v = randn({n}, kFloat32).to_vector<double>();
    double mean = 0, var = 0, m3 = 0, within1 = 0;
    for (double x : v) mean += x;
    mean /= n;
    for (double x : v) {
      var += (x - mean) * (x - mean);
      m3 += (x - mean) * (x - mean) * (x - mean);
      within1 += std::abs(x) < 1 ? 1 : 0;
    }
    var /= n;
    m3 /= n;
    CHECK(mean == Approx(0.0).margin(0.01));
    CHECK(var == Approx(1.0).margin(0.02));
    CHECK(m3 == Approx(0.0).margin(0.05));
    CHECK(within1 / n == Approx(0.6827).margin(0.005));  // P(|Z| < 1)
  }
  {
    Tensor r = randint(-3, 7, {n});
    CHECK(r.dtype() == kInt64);
    auto v = r.to_vector<int64_t>();
    std::vector<int64_t> counts(10, 0);
    int64_t outside = 0;
    for (int64_t x : v) {
      if (x < -3 || x >= 7)
        ++outside;
      else
        ++counts[static_cast<size_t>(x + 3)];
    }
    CHECK(outside == 0);
    for (int64_t c : counts) CHECK(static_cast<double>(c) / n == Approx(0.1).margin(0.005));
  }
  CHECK(rand({3, 4}, TensorOptions(kFloat32).device("cpu:1")).device() == Device("cpu:1"));
  CHECK_THROWS_WITH(rand({2}, kInt64), Contains("rand") && Contains("int64"));
  CHECK_THROWS_WITH(randint(3, 3, {2}), Contains("randint") && Contains("low < high"));
}

TEST_CASE("the uniform map never returns its upper bound, at the rounding boundary") {
  // Driven through the shared functor (Note [Random affine maps]) with the largest uniform the
  // generator can draw (all 64 random bits set: u = 1 - 2^-53) and with the bit patterns just
  // below it, where the cast to float32 starts rounding up to the bound.
  const uint64_t all_ones = ~uint64_t{0};
  CHECK(math::uniform_from_bits(all_ones) == 1.0 - 0x1.0p-53);
  CHECK(math::uniform_from_bits(0) == 0.0);
  const std::vector<std::pair<double, double>> bounds = {{0.0, 1.0}, {1.0, 2.0},   {-3.0, 7.0},
                                                         {0.1, 0.3}, {-1.0, -0.5}, {1e6, 1e6 + 1.0}};
  for (auto [a, b] : bounds) {
    CAPTURE(a, b);
    // float32: the worst case is clamped to exactly the largest float below b.
    CHECK(math::uniform_in<float>(math::uniform_from_bits(all_ones), a, b) ==
          std::nextafter(static_cast<float>(b), -INFINITY));
    // The 2^20 largest draws (every u within 2^-33 of 1), in both precisions.
    for (uint64_t k = 0; k < (uint64_t{1} << 20); ++k) {
      const double u = math::uniform_from_bits(all_ones - (k << 11));
      const float f = math::uniform_in<float>(u, a, b);
      const double d = math::uniform_in<double>(u, a, b);
      if (!(f < static_cast<float>(b)) || !(f >= static_cast<float>(a)) || !(d < b) || !(d >= a)) {
        FAIL("out of [a, b) at u = 1 - " << k << " * 2^-53: float " << f << ", double " << d);
      }
    }
  }
  // A double bound hit by rounding: 1 + (1 - 2^-53) is a tie that rounds to 2.
  CHECK(1.0 + (1.0 - 0x1.0p-53) == 2.0);
  CHECK(math::uniform_in<double>(1.0 - 0x1.0p-53, 1.0, 2.0) == std::nextafter(2.0, 0.0));
  // Away from the bound the map is the plain affine map.
  CHECK(math::uniform_in<float>(0.25, -3.0, 7.0) == -0.5f);
  CHECK(math::uniform_in<double>(0.5, 0.1, 0.3) == 0.1 + (0.3 - 0.1) * 0.5);
}

TEST_CASE("float32 rand never rounds up to its upper bound, on every device") {
  // A uniform double within 2^-25 of 1 rounds to 1.0f; find a counter that draws one and check
  // that every device's float32 kernel still returns a value below 1, and the same value.
  const uint64_t seed = 42;
  uint64_t counter = 0;
  bool found = false;
  for (uint64_t c = 0; c < (uint64_t{1} << 28) && !found; ++c) {
    if (static_cast<float>(math::random_uniform(seed, c)) == 1.0f) {
      counter = c;
      found = true;
    }
  }
  REQUIRE(found);
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    DeviceGuard guard(d);
    Tensor t = native::empty({1}, kFloat32, d);
    backend(d).random(native::kernel_tensor(t), RandomKind::Uniform, 0.0, 1.0, seed, counter);
    const float v = t.to(kCPU).item<float>();
    CHECK(v < 1.0f);
    CHECK(v == std::nextafter(1.0f, 0.0f));
  }
}

TEST_CASE("GPU test exit codes: a failure never reads as ctest's skip code") {
  using wick::test::exit_code_from_catch;
  CHECK(exit_code_from_catch(0) == 0);
  for (int failures : {1, 76, 77, 78, 255, 256}) {
    CHECK(exit_code_from_catch(failures) == 1);
    CHECK(exit_code_from_catch(failures) != wick::test::kSkipExitCode);
  }
}
