// Tensors: factories, the seeded generator, views and version counters, conversions and
// copies, element access, printing, and per-device allocator accounting.
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

// ---------------------------------------------------------------------------------------------
// Views and version counters
// ---------------------------------------------------------------------------------------------

TEST_CASE("views share memory: writes through a view show in the base and vice versa") {
  NoGradGuard ng;
  Tensor base = arange(0, 12, 1, kFloat64).view({3, 4});
  Tensor row = base.select(0, 1);  // [4, 5, 6, 7]
  row.fill_(-1);
  CHECK(base.to_vector<double>() == std::vector<double>{0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11});
  Tensor col = base.t().narrow(0, 2, 1);  // column 2, as a 1x3 view
  col.mul_(10);
  CHECK(base.at<double>({0, 2}) == 20);
  CHECK(base.at<double>({1, 2}) == -10);
  CHECK(base.at<double>({2, 2}) == 100);
  Tensor every_other = base.slice(1, 0, std::nullopt, 2);  // columns 0 and 2
  CHECK(every_other.sizes() == IntArrayRef({3, 2}));
  every_other.zero_();
  CHECK(base.at<double>({2, 0}) == 0);
  CHECK(base.at<double>({2, 1}) == 9);
  base.add_(1);  // a base write shows in the views
  CHECK(row.to_vector<double>() == std::vector<double>{1, 0, 1, 0});
  Tensor p = base.view({3, 2, 2}).permute({2, 0, 1}).unsqueeze(0).squeeze(0);
  CHECK(p.sizes() == IntArrayRef({2, 3, 2}));
  p.select(0, 0).select(0, 0).fill_(42);  // base[0][0] and base[0][2]
  CHECK(base.at<double>({0, 0}) == 42);
  CHECK(base.at<double>({0, 2}) == 42);
  CHECK(base.flatten().data_ptr() == base.data_ptr());
  CHECK(base.reshape({12}).data_ptr() == base.data_ptr());  // reshape of a contiguous tensor is a view
  // A transposed tensor cannot be flattened without a copy: reshape copies, view refuses.
  Tensor tr = base.t();
  CHECK_FALSE(tr.is_contiguous());
  Tensor flat = tr.reshape({12});
  CHECK(flat.data_ptr() != tr.data_ptr());
  CHECK_THROWS_WITH(tr.view({12}), Contains("view") && Contains("reshape"));
  CHECK(tr.contiguous().is_contiguous());
  CHECK(base.contiguous().is_same(base));
}

TEST_CASE("view metadata: sizes, strides and offsets") {
  Tensor t = zeros({2, 3, 4});
  CHECK(t.transpose(0, 2).strides() == IntArrayRef({1, 4, 12}));
  CHECK(t.permute({1, 2, 0}).sizes() == IntArrayRef({3, 4, 2}));
  CHECK(t.narrow(2, 1, 2).storage_offset() == 1);
  CHECK(t.narrow(-1, -3, 2).storage_offset() == 1);
  CHECK(t.select(1, 2).storage_offset() == 8);
  CHECK(t.select(1, -1).storage_offset() == 8);
  CHECK(t.unsqueeze(3).sizes() == IntArrayRef({2, 3, 4, 1}));
  CHECK(t.unsqueeze(-1).sizes() == IntArrayRef({2, 3, 4, 1}));
  CHECK(t.unsqueeze(0).strides() == IntArrayRef({24, 12, 4, 1}));  // as torch
  CHECK(zeros({1, 3, 1}).squeeze().sizes() == IntArrayRef({3}));
  CHECK(zeros({1, 3, 1}).squeeze(0).sizes() == IntArrayRef({3, 1}));
  CHECK(zeros({1, 3, 1}).squeeze(1).sizes() == IntArrayRef({1, 3, 1}));
  CHECK(t.flatten(1).sizes() == IntArrayRef({2, 12}));
  CHECK(t.flatten(0, 1).sizes() == IntArrayRef({6, 4}));
  CHECK(zeros({}).flatten().sizes() == IntArrayRef({1}));
  CHECK(t.view({-1, 4}).sizes() == IntArrayRef({6, 4}));
  CHECK(zeros({3, 1}).expand({2, 3, 5}).strides() == IntArrayRef({0, 1, 0}));
  CHECK(zeros({3, 1}).expand({-1, 5}).sizes() == IntArrayRef({3, 5}));
  CHECK(t.slice(2, 1, 4, 2).sizes() == IntArrayRef({2, 3, 2}));
  CHECK(t.slice(2, -10, 100).sizes() == IntArrayRef({2, 3, 4}));  // clamped, as Python slicing
  CHECK(t.slice(0, 5, std::nullopt).numel() == 0);
  CHECK(zeros({5}).t().sizes() == IntArrayRef({5}));
  auto parts = arange(0, 10, 1, kFloat64).split(4);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].to_vector<double>() == std::vector<double>{8, 9});
  auto chunks = arange(0, 10, 1, kFloat64).chunk(3);
  REQUIRE(chunks.size() == 3);
  CHECK(chunks[0].numel() == 4);
  CHECK(chunks[2].numel() == 2);
  CHECK(native::split_with_sizes(arange(0, 6, 1, kFloat64), {1, 0, 5}, 0)[2].numel() == 5);
}

TEST_CASE("bad view arguments raise errors naming the op and the shapes") {
  Tensor t = zeros({2, 3, 4});
  CHECK_THROWS_WITH(t.view({5, 5}), Contains("view") && Contains("[5, 5]") && Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(t.reshape({-1, -1}), Contains("reshape") && Contains("only one dim may be -1"));
  CHECK_THROWS_WITH(t.reshape({7, -1}), Contains("reshape") && Contains("[7, -1]"));
  CHECK_THROWS_WITH(t.transpose(0, 3), Contains("transpose") && Contains("dim 3 is out of range"));
  CHECK_THROWS_WITH(t.permute({0, 1}), Contains("permute") && Contains("3 dims"));
  CHECK_THROWS_WITH(t.permute({0, 1, 1}), Contains("permute") && Contains("repeats"));
  CHECK_THROWS_WITH(t.narrow(1, 2, 2), Contains("narrow") && Contains("exceeds size 3"));
  CHECK_THROWS_WITH(t.narrow(1, 0, -1), Contains("narrow"));
  CHECK_THROWS_WITH(t.select(0, 2), Contains("select") && Contains("index 2 is out of range"));
  CHECK_THROWS_WITH(t.select(0, -3), Contains("select"));
  CHECK_THROWS_WITH(zeros({}).select(0, 0), Contains("select") && Contains("0-dim"));
  CHECK_THROWS_WITH(t.expand({2, 5, 4}), Contains("expand") && Contains("[2, 3, 4]") && Contains("[2, 5, 4]"));
  CHECK_THROWS_WITH(t.expand({3, 4}), Contains("expand") && Contains("fewer dims"));
  CHECK_THROWS_WITH(zeros({1}).expand({-2}), Contains("expand"));
  CHECK_THROWS_WITH(t.slice(0, 0, 1, 0), Contains("slice") && Contains("step"));
  CHECK_THROWS_WITH(t.flatten(2, 1), Contains("flatten"));
  CHECK_THROWS_WITH(t.t(), Contains("t: ") && Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(t.split(0), Contains("split"));
  CHECK_THROWS_WITH(t.chunk(0), Contains("chunk"));
  CHECK_THROWS_WITH(native::split_with_sizes(t, {1, 2}, 2), Contains("split_with_sizes") && Contains("sum to 3"));
  CHECK_THROWS_WITH(t.unsqueeze(4), Contains("unsqueeze"));
  CHECK_THROWS_WITH(t.size(3), Contains("Tensor::size"));
}

TEST_CASE("views share the version counter, in-place ops bump it exactly once") {
  NoGradGuard ng;
  Tensor t = zeros({2, 3}, kFloat64);
  Tensor v = t.view({3, 2});
  Tensor s = t.select(0, 1);
  Tensor d = t.detach();
  CHECK(t.version() == 0);
  t.add_(1.0);
  CHECK(t.version() == 1);
  CHECK(v.version() == 1);
  CHECK(s.version() == 1);
  CHECK(d.version() == 1);
  s.mul_(2.0);
  CHECK(t.version() == 2);
  uint32_t before = t.version();
  Tensor other = ones({2, 3}, kFloat64);
  t.add_(other);
  t.sub_(other);
  t.mul_(other);
  t.div_(other);
  t.add_(other, 2.0);
  t.mul_(3);
  t.div_(3);
  t.zero_();
  t.fill_(1);
  t.clamp_(0, 1);
  t.copy_(other);
  t += other;
  t *= 2.0;
  CHECK(t.version() == before + 13);
  // A fresh result of an op or a clone starts at 0; so does a conversion.
  CHECK(t.clone().version() == 0);
  CHECK((t + t).version() == 0);
  CHECK(t.to(kFloat32).version() == 0);
  CHECK(cat({t, t}).version() == 0);
  // alias_with_new_version gives a counter of its own (PyTorch's .data).
  Tensor a = native::alias_with_new_version(t);
  a.add_(1.0);
  CHECK(a.version() == 1);
  CHECK(t.version() == before + 13);
  CHECK(t.at<double>({0, 0}) == a.at<double>({0, 0}));  // still the same memory
}

// ---------------------------------------------------------------------------------------------
// Conversions, copies and element access
// ---------------------------------------------------------------------------------------------

TEST_CASE("to(device), to(dtype), clone and copy_") {
  NoGradGuard ng;
  Tensor t = tensor({1.7, -1.7, 0.0, 2.0}, {2, 2}, kFloat64);
  CHECK(t.to(kFloat64).is_same(t));
  CHECK(t.to(Device("cpu:0")).is_same(t));
  Tensor c1 = t.to(Device("cpu:1"));
  CHECK(c1.device() == Device("cpu:1"));
  CHECK(c1.data_ptr() != t.data_ptr());
  CHECK(c1.to_vector<double>() == t.to_vector<double>());
  CHECK(t.to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{1, -1, 0, 2});  // truncation, as C
  CHECK(t.to(kBool).to_vector<bool>() == std::vector<bool>{true, true, false, true});
  CHECK(t.to(Device("cpu:2"), kFloat32).dtype() == kFloat32);
  Tensor tt = t.t();  // non-contiguous source
  Tensor cl = tt.clone();
  CHECK(cl.is_contiguous());
  CHECK(cl.to_vector<double>() == std::vector<double>{1.7, 0.0, -1.7, 2.0});
  CHECK(cl.data_ptr() != tt.data_ptr());
  CHECK(tt.to(Device("cpu:1")).to_vector<double>() == cl.to_vector<double>());

  Tensor dst = zeros({2, 3}, kFloat32);
  dst.copy_(tensor({1.0, 2.0, 3.0}, kInt64));  // broadcast + dtype conversion
  CHECK(dst.to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  Tensor other_dev = full({2, 3}, 5.0, TensorOptions(kFloat64).device("cpu:3"));
  dst.copy_(other_dev);  // across devices
  CHECK(dst.device() == Device("cpu:0"));
  CHECK(dst.to_vector<float>() == std::vector<float>(6, 5.f));
  Tensor strided = zeros({3, 2}, kFloat64).t();
  strided.copy_(tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat64));
  CHECK(strided.to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH(dst.copy_(zeros({4})), Contains("copy_") && Contains("[4]") && Contains("[2, 3]"));
}

TEST_CASE("item and the bounds-checked element accessor") {
  Tensor t = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat64);
  CHECK(t.at<double>({1, 2}) == 6.0);
  CHECK(t.at<double>({-1, -1}) == 6.0);
  CHECK(t.t().at<double>({2, 0}) == 3.0);
  CHECK(t.at<int64_t>({0, 1}) == 2);
  CHECK(t.sum().item<double>() == 21.0);
  CHECK(t.select(0, 1).select(0, 0).item<double>() == 4.0);
  CHECK(tensor({7.0}).item<float>() == 7.0f);
  CHECK(ones({1, 1, 1}, kInt64).item<int64_t>() == 1);
  CHECK(ones({}, kBool).item<bool>());
  CHECK_THROWS_WITH(t.item(), Contains("item") && Contains("2x3"));
  CHECK_THROWS_WITH(zeros({0}).item(), Contains("item"));
  CHECK_THROWS_WITH(t.at<double>({2, 0}), Contains("at") && Contains("index 2 is out of bounds for dim 0 of size 2"));
  CHECK_THROWS_WITH(t.at<double>({0, -4}), Contains("at") && Contains("out of bounds"));
  CHECK_THROWS_WITH(t.at<double>({0}), Contains("at") && Contains("2 dims") && Contains("1 indices"));
  CHECK_THROWS_WITH(t.data_ptr<float>(), Contains("data_ptr") && Contains("float64") && Contains("float32"));
  CHECK(t.data_ptr<double>()[4] == 5.0);
  CHECK_THROWS_WITH(Tensor().sizes(), Contains("undefined"));
  CHECK_THROWS_WITH(Tensor().numel(), Contains("undefined"));
}

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

TEST_CASE("fmt printing shows values, shape, dtype and device, and elides large tensors") {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, {2, 2});
  CHECK(fmt::format("{}", a) ==
        "tensor([[1.0000, 2.0000],\n        [3.0000, 4.0000]], shape=[2, 2], dtype=float32, device=cpu:0)");
  CHECK(fmt::format("{}", arange(3, TensorOptions(kInt64).device("cpu:4"))) ==
        "tensor([0, 1, 2], shape=[3], dtype=int64, device=cpu:4)");
  CHECK(fmt::format("{}", tensor({1.0, 0.0}).to(kBool)) ==
        "tensor([True, False], shape=[2], dtype=bool, device=cpu:0)");
  CHECK(fmt::format("{}", scalar_tensor(2.5, kFloat64)) == "tensor(2.5000, shape=[], dtype=float64, device=cpu:0)");
  CHECK(fmt::format("{}", zeros({0})) == "tensor([], shape=[0], dtype=float32, device=cpu:0)");
  CHECK(fmt::format("{}", Tensor()) == "tensor(undefined)");
  CHECK(fmt::format("{}", a.t()) ==
        "tensor([[1.0000, 3.0000],\n        [2.0000, 4.0000]], shape=[2, 2], dtype=float32, device=cpu:0)");
  const std::string big = fmt::format("{}", arange(2000));
  CHECK(big == "tensor([0, 1, 2, ..., 1997, 1998, 1999], shape=[2000], dtype=int64, device=cpu:0)");
  const std::string big2 = fmt::format("{}", arange(0, 3000, 1, kInt64).view({100, 30}));
  CHECK_THAT(big2, Contains("[0, 1, 2, ..., 27, 28, 29]") && Contains("...") &&
                       Contains("[2970, 2971, 2972, ..., 2997, 2998, 2999]]") && Contains("shape=[100, 30]"));
  CHECK(big2.size() < 400);
  CHECK(a.to_string() == fmt::format("{}", a));
}

// ---------------------------------------------------------------------------------------------
// Allocator accounting
// ---------------------------------------------------------------------------------------------

TEST_CASE("each CPU device keeps its own allocator accounting") {
  const Device d3("cpu:3"), d4("cpu:4");
  const MemoryStats s3 = memory_stats(d3), s4 = memory_stats(d4);
  {
    Tensor a = zeros({10}, TensorOptions(kFloat32).device(d3));  // 40 bytes
    MemoryStats m = memory_stats(d3);
    CHECK(m.in_use == s3.in_use + 40);
    CHECK(m.allocations == s3.allocations + 1);
    CHECK(m.total_allocations == s3.total_allocations + 1);
    CHECK(m.peak >= m.in_use);
    CHECK(m.reserved == m.in_use);
    {
      Tensor b = ones({4, 4}, TensorOptions(kFloat64).device(d3));  // 128 bytes
      Tensor v = b.t().narrow(0, 1, 2);                             // views allocate nothing
      CHECK(memory_stats(d3).in_use == s3.in_use + 168);
      CHECK(memory_stats(d3).allocations == s3.allocations + 2);
      CHECK(memory_stats(d3).peak >= s3.in_use + 168);
    }
    CHECK(memory_stats(d3).in_use == s3.in_use + 40);
    CHECK(memory_stats(d3).allocations == s3.allocations + 1);
    CHECK(memory_stats(d3).peak >= s3.in_use + 168);
    reset_peak_memory(d3);
    CHECK(memory_stats(d3).peak == s3.in_use + 40);
    Tensor c = a.to(d4);  // the copy is accounted on cpu:4
    CHECK(memory_stats(d4).in_use == s4.in_use + 40);
    CHECK(memory_stats(d3).in_use == s3.in_use + 40);
    Tensor e = zeros({0, 5}, TensorOptions(kFloat32).device(d3));  // empty: no allocation
    CHECK(memory_stats(d3).allocations == s3.allocations + 1);
  }
  CHECK(memory_stats(d3).in_use == s3.in_use);
  CHECK(memory_stats(d3).allocations == s3.allocations);
  CHECK(memory_stats(d4).in_use == s4.in_use);
  CHECK(memory_stats(d3).total_allocations == s3.total_allocations + 2);
  // A bad index never reaches the allocator: the Device itself refuses it (it used to wrap).
  CHECK_THROWS_AS(Device(DeviceType::CPU, -1), ValueError);
  CHECK_THROWS_WITH(Device(DeviceType::CPU, -1), Contains("index -1"));
  CHECK_THROWS_WITH(Device(DeviceType::CPU, 70000), Contains("index 70000"));
  CHECK(Device(DeviceType::CPU, 32767).index == 32767);
}

TEST_CASE("ops allocate their outputs on their inputs' device") {
  const Device d("cpu:5");
  const MemoryStats s = memory_stats(d);
  Tensor a = ones({8}, TensorOptions(kFloat32).device(d));
  Tensor b = (a + a).exp().sum();
  CHECK(b.device() == d);
  CHECK(memory_stats(d).allocations == s.allocations + 2);  // a and b; temporaries are gone
}

TEST_CASE("large CPU blocks are cached per device and empty_cache releases them") {
  const Device d("cpu:9");
  const MemoryStats s0 = memory_stats(d);
  void* first = nullptr;
  { first = zeros({1 << 18}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 1 MiB, freed at once
  const MemoryStats s1 = memory_stats(d);
  CHECK(s1.in_use == s0.in_use);
  Tensor again = empty({1 << 18}, TensorOptions(kFloat32).device(d));
#if defined(__SANITIZE_ADDRESS__)
  CHECK(s1.reserved == s1.in_use);  // no cache under AddressSanitizer (Note [CPU block cache])
#else
  CHECK(s1.reserved >= s1.in_use + (1 << 20));
  CHECK(again.data_ptr() == first);                                                       // the warm block is reused
  CHECK(memory_stats(Device("cpu:8")).reserved == memory_stats(Device("cpu:8")).in_use);  // per device
#endif
  again = Tensor();
  empty_cache(d);
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
}

TEST_CASE("small CPU blocks are cached in size classes, per device, from many threads") {
  const Device d("cpu:10"), other("cpu:11");
  void* first = nullptr;
  { first = empty({10}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 40 bytes, freed at once
  const MemoryStats s1 = memory_stats(d);
#if defined(__SANITIZE_ADDRESS__)
  CHECK(s1.reserved == s1.in_use);  // no cache under AddressSanitizer (Note [CPU block cache])
#else
  CHECK(s1.reserved == s1.in_use + 64);                                                   // the 64-byte class
  // Any request of the same class (33..64 bytes) on the same device takes the warm block back.
  Tensor same_class = empty({16}, TensorOptions(kFloat32).device(d));
  CHECK(same_class.data_ptr() == first);
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
  same_class = Tensor();
  Tensor elsewhere = empty({16}, TensorOptions(kFloat32).device(other));  // other devices keep their own
  CHECK(elsewhere.data_ptr() != first);
  // A request of another class gets another block; 1000 bytes: the 1024-byte class.
  Tensor bigger = empty({250}, TensorOptions(kFloat32).device(d));
  CHECK(bigger.data_ptr() != first);
  bigger = Tensor();
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use + 64 + 1024);
#endif
  // Threads allocating and freeing on one device at once leave the accounting exact.
  const MemoryStats before = memory_stats(d);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};  // Catch2's assertions are not thread-safe: count, check after
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([d, t, &mismatches] {
      for (int i = 0; i < 2000; ++i) {
        Tensor a = empty({1 + (i * 7 + t) % 3000}, TensorOptions(kFloat32).device(d));
        Tensor b = full({1 + i % 64}, static_cast<double>(t), TensorOptions(kFloat32).device(d));
        a.fill_(-1.0);
        if (b.sum().item<float>() != static_cast<float>(t * (1 + i % 64))) ++mismatches;  // no block shared
      }
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches.load() == 0);
  CHECK(memory_stats(d).in_use == before.in_use);
  CHECK(memory_stats(d).allocations == before.allocations);
  empty_cache(d);
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
  empty_cache(other);
}

// Note [CPU thread caches]: a thread keeps a few small blocks of cpu:0..cpu:3 for itself; they
// count as cached, go to the device's shared cache when the thread exits, and empty_cache frees
// the caller's.
TEST_CASE("small CPU blocks freed by a thread stay with it until it exits") {
  const Device d("cpu:2");
  empty_cache(d);
  const MemoryStats s0 = memory_stats(d);
  void* on_thread = nullptr;
  void* again_on_thread = nullptr;
  int64_t reserved_while_held = 0;
  std::thread t([&] {
    { on_thread = empty({100}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 400 bytes: the 448 class
    reserved_while_held = memory_stats(d).reserved - memory_stats(d).in_use;
    Tensor x = empty({100}, TensorOptions(kFloat32).device(d));
    again_on_thread = x.data_ptr();
  });
  t.join();
#if defined(__SANITIZE_ADDRESS__)
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);  // no cache under AddressSanitizer
#else
  CHECK(reserved_while_held == s0.reserved - s0.in_use + 448);
  CHECK(again_on_thread == on_thread);                   // the thread's own block, taken back
  CHECK(memory_stats(d).reserved == s0.reserved + 448);  // handed to the shared cache at exit
  {
    Tensor y = empty({112}, TensorOptions(kFloat32).device(d));  // 448 bytes: the same class
    CHECK(y.data_ptr() == on_thread);                            // from the shared cache
  }
  CHECK(memory_stats(d).reserved == s0.reserved + 448);  // now held by this thread
  empty_cache(d);                                        // frees this thread's blocks too
#endif
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
  CHECK(memory_stats(d).in_use == s0.in_use);
}

// Note [CPU thread caches]: each thread keeps its own allocation and free counts for cpu:0..3;
// stats() adds them up and an exiting thread folds them into the device's. Counted by hand:
// the figures stay exact while the threads live, after they exit, and when a block is freed by
// another thread than the one that allocated it.
TEST_CASE("CPU allocation counts kept per thread add up exactly, before and after the threads exit") {
  const Device d("cpu:3");
  const MemoryStats s0 = memory_stats(d);
  constexpr int kThreads = 3, kSteps = 500;
  std::vector<Tensor> handed_over(kThreads);  // allocated on a thread, freed here
  std::mutex m;
  std::condition_variable cv;
  int ready = 0;
  bool release = false;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) Tensor a = empty({1 + i % 40}, TensorOptions(kFloat32).device(d));
      Tensor kept = empty({7}, TensorOptions(kFloat32).device(d));
      handed_over[t] = empty({3}, TensorOptions(kFloat64).device(d));
      std::unique_lock<std::mutex> lock(m);
      ++ready;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready == kThreads; });
  }
  // Every thread alive, each holding `kept` and having handed one tensor over.
  const MemoryStats alive = memory_stats(d);
  CHECK(alive.allocations == s0.allocations + 2 * kThreads);
  CHECK(alive.total_allocations == s0.total_allocations + (kSteps + 2) * kThreads);
  CHECK(alive.in_use == s0.in_use + kThreads * (7 * 4 + 3 * 8));
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  cv.notify_all();
  for (auto& th : threads) th.join();
  const MemoryStats exited = memory_stats(d);
  CHECK(exited.allocations == s0.allocations + kThreads);
  CHECK(exited.total_allocations == alive.total_allocations);
  handed_over.clear();  // freed by this thread
  const MemoryStats after = memory_stats(d);
  CHECK(after.allocations == s0.allocations);
  CHECK(after.in_use == s0.in_use);
  CHECK(after.total_allocations == alive.total_allocations);
  CHECK(after.reserved >= after.in_use);
}

#include "support/exit_code.h"

TEST_CASE("GPU test exit codes: a failure never reads as ctest's skip code") {
  using wick::test::exit_code_from_catch;
  CHECK(exit_code_from_catch(0) == 0);
  for (int failures : {1, 76, 77, 78, 255, 256}) {
    CHECK(exit_code_from_catch(failures) == 1);
    CHECK(exit_code_from_catch(failures) != wick::test::kSkipExitCode);
  }
}
