// Integer arithmetic, integer powers and floating-to-integer conversion (Note [Integer overflow
// and conversions], int_math.h), on every test device: hand-computed values, including the
// overflow, NaN and out-of-range cases whose C++ behaviour is undefined and on which the CPU and
// a GPU used to disagree. int64 values are compared as int64 (a double would round them).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/devices.h"
#include "wick/core/int_math.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor ints(const std::vector<int64_t>& v, Device d) {
  return native::from_blob_copy(v.data(), {static_cast<int64_t>(v.size())}, kInt64, kCPU).to(d);
}
std::vector<int64_t> values(const Tensor& t) {
  REQUIRE(t.dtype() == kInt64);
  Tensor c = t.to(kCPU).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}
}  // namespace

TEST_CASE("integer pow: PyTorch's rule for negative exponents, exact and wrapping otherwise") {
  const std::vector<int64_t> base = {0, 1, -1, -1, 2, 3, 2, -2, 5, 7, -3};
  const std::vector<int64_t> exp = {-2, -3, -3, -4, -1, 40, 63, 63, 0, 25, 3};
  // 3^40 and 7^25 modulo 2^64, as two's complement int64 (computed with Python's integers).
  const std::vector<int64_t> want = {0, 1, -1, 1, 0, -6289078614652622815, kMin, kMin, 1, -5543697716832367161, -27};
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    CHECK(values(pow(ints(base, d), ints(exp, d))) == want);
    CHECK(values(pow(ints({3, -3, 10}, d), 3)) == std::vector<int64_t>{27, -27, 1000});
    CHECK(values(pow(ints({2}, d), 64)) == std::vector<int64_t>{0});
    CHECK(pow(ints({4}, d), 0.5).dtype() == kFloat32);  // a fractional exponent promotes
    // A negative scalar exponent with an integer tensor is refused, as PyTorch refuses it.
    CHECK_THROWS_WITH(pow(ints({1, 2}, d), -2), Contains("negative integer powers") && Contains("int64"));
    CHECK_THROWS_AS(pow(ints({1, 2}, d), Scalar(int64_t{-1})), ValueError);
    CHECK_THROWS_WITH(pow(native::ones({2}, kBool, d), Scalar(int64_t{-2})), Contains("negative integer powers"));
    CHECK_NOTHROW(pow(ints({1, 2}, d), -2.5));  // fractional: floats, as PyTorch
  }
}

TEST_CASE("int64 add, sub, mul, neg, abs and square wrap modulo 2^64") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    Tensor a = ints({kMax, kMin, int64_t{1} << 62, -7}, d);
    CHECK(values(add(a, ints({1, -1, int64_t{1} << 62, 7}, d))) == std::vector<int64_t>{kMin, kMax, kMin, 0});
    CHECK(values(sub(a, ints({-1, 1, 0, 1}, d))) == std::vector<int64_t>{kMin, kMax, int64_t{1} << 62, -8});
    CHECK(values(mul(a, ints({2, 2, 4, 3}, d))) == std::vector<int64_t>{-2, 0, 0, -21});
    CHECK(values(neg(a)) == std::vector<int64_t>{-kMax, kMin, -(int64_t{1} << 62), 7});
    CHECK(values(abs(a)) == std::vector<int64_t>{kMax, kMin, int64_t{1} << 62, 7});
    CHECK(values(mul(a, a)) == std::vector<int64_t>{1, 0, 0, 49});
    // Through the tensor-scalar path too.
    CHECK(values(a + Scalar(int64_t{1})) == std::vector<int64_t>{kMin, kMin + 1, (int64_t{1} << 62) + 1, -6});
  }
}

TEST_CASE("square and pow with a non-negative integer exponent of bool give int64, as PyTorch's") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    Tensor b = ints({1, 0, 1}, d).to(kBool);
    Tensor s = square(b);
    CHECK(s.dtype() == kInt64);  // torch.square(torch.tensor([True, False])) is tensor([1, 0])
    CHECK(values(s) == std::vector<int64_t>{1, 0, 1});
    CHECK(values(b.square()) == std::vector<int64_t>{1, 0, 1});
    CHECK(values(pow(b, 2)) == std::vector<int64_t>{1, 0, 1});
  }
}

TEST_CASE("int64 sum, prod and cumsum wrap modulo 2^64") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    CHECK(values(sum(ints({kMax, 1, 5}, d))) == std::vector<int64_t>{kMin + 5});
    CHECK(values(native::reduce(ReduceOp::Prod, ints({int64_t{1} << 62, 4, 3}, d), {}, false)) ==
          std::vector<int64_t>{0});
    CHECK(values(cumsum(ints({kMax, 1, -1}, d), 0)) == std::vector<int64_t>{kMax, kMin, kMax});
  }
}

TEST_CASE("floating to int64: truncation, NaN to 0, out-of-range values saturated") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> in = {
      nan, inf, -inf, 1e30, -1e30, -2.7, 2.7, 9223372036854775808.0, -9223372036854775808.0, 9223372036854774784.0};
  const std::vector<int64_t> want = {0, kMax, kMin, kMax, kMin, -2, 2, kMax, kMin, 9223372036854774784};
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    Tensor x = native::from_blob_copy(in.data(), {static_cast<int64_t>(in.size())}, kFloat64, kCPU).to(d);
    CHECK(values(x.to(kInt64)) == want);
    // float32: the last value rounds to 2^63 there, so it saturates.
    std::vector<int64_t> want32 = want;
    want32.back() = kMax;
    CHECK(values(x.to(kFloat32).to(kInt64)) == want32);
    // A broadcast (stride 0) source takes the fill-like path of the copy.
    Tensor col = native::zeros({3, 1}, kInt64, d);
    col.copy_(x.narrow(0, 0, 1).expand({3, 1}));
    CHECK(values(col) == std::vector<int64_t>{0, 0, 0});
    // To bool: nonzero, NaN included, is true.
    Tensor b = x.to(kBool).to(kInt64);
    CHECK(values(b) == std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  }
}

TEST_CASE("int64 scalars beyond 2^53 stay exact in full, fill_, tensor-scalar ops and clamp") {
  const int64_t big = (int64_t{1} << 60) + 1;  // a double would round it to 2^60
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    CHECK(values(full({3}, Scalar(kMax), TensorOptions().dtype(kInt64).device(d))) ==
          std::vector<int64_t>{kMax, kMax, kMax});
    CHECK(values(full({2}, Scalar(big), TensorOptions().dtype(kInt64).device(d))) == std::vector<int64_t>{big, big});
    Tensor t = ints({0, 0}, d);
    t.fill_(Scalar(kMin));
    CHECK(values(t) == std::vector<int64_t>{kMin, kMin});
    CHECK(t.version() == 1);
    CHECK(values(ints({5, -5}, d) + Scalar(big)) == std::vector<int64_t>{big + 5, big - 5});
    CHECK(values(ints({5}, d) - Scalar(kMax)) == std::vector<int64_t>{5 - kMax});
    Tensor u = ints({1, 2}, d);
    u.mul_(Scalar(big));
    CHECK(values(u) == std::vector<int64_t>{big, static_cast<int64_t>(static_cast<uint64_t>(big) * 2)});
    CHECK(values(clamp(ints({kMax, 3}, d), std::nullopt, Scalar(big))) == std::vector<int64_t>{big, 3});
    CHECK(values(clamp(ints({kMin, 3}, d), Scalar(-big), std::nullopt)) == std::vector<int64_t>{-big, 3});
    CHECK(values(native::unary(UnaryOp::Floor, ints({kMax, kMin}, d), 0, 0)) == std::vector<int64_t>{kMax, kMin});
  }
}

TEST_CASE("Scalar: unsigned values up to int64's maximum and narrowing within range are exact") {
  const uint64_t top = static_cast<uint64_t>(kMax);
  CHECK(Scalar(top).to_int() == kMax);
  CHECK(Scalar(top).dtype() == kInt64);
  CHECK(Scalar(uint32_t{4000000000u}).to<int64_t>() == 4000000000);
  CHECK(Scalar(std::numeric_limits<int32_t>::min()).to<int32_t>() == std::numeric_limits<int32_t>::min());
  CHECK(Scalar(std::numeric_limits<int32_t>::max()).to<int32_t>() == std::numeric_limits<int32_t>::max());
  CHECK(Scalar(255).to<uint8_t>() == 255);
  CHECK(Scalar(kMax).to<uint64_t>() == top);
  CHECK(Scalar(true).to<uint8_t>() == 1);
  // The same Scalar fills float and int64 tensors with the same value.
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    CHECK(values(full({1}, Scalar(top), TensorOptions().dtype(kInt64).device(d))) == std::vector<int64_t>{kMax});
    CHECK(full({1}, Scalar(top), TensorOptions().dtype(kFloat64).device(d)).item<double>() == 9223372036854775808.0);
  }
}

TEST_CASE("int_math's functors at their edges, on the host") {
  CHECK(math::convert<int64_t>(std::nextafter(9223372036854775808.0, 0.0)) == 9223372036854774784);
  CHECK(math::convert<int64_t>(-9223372036854775808.0) == kMin);
  CHECK(math::convert<int64_t>(std::nextafter(-9223372036854775808.0, -1e300)) == kMin);
  CHECK(math::convert<int64_t>(-0.99) == 0);
  CHECK(math::convert<int64_t>(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(math::convert<bool>(std::numeric_limits<double>::quiet_NaN()));
  CHECK(math::int_pow(-1, kMin) == 1);  // even
  CHECK(math::int_pow(-1, kMin + 1) == -1);
  CHECK(math::int_pow(0, 0) == 1);
  CHECK(math::int_pow(kMin, 2) == 0);
  CHECK(math::wrapping_neg(kMin) == kMin);
}
