// Bad input to tensor ops, autograd and nn that used to crash, read uninitialised memory, compute
// in wrapped integers or leave a half-applied change (a read-only review of the public API):
// each case has the class it must raise, or the value it must give, computed by hand, and shows
// that a refused call changed nothing.
#include <wick/nn/nn.h>
#include <wick/nn/optim/optim.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "support/allclose.h"
#include "support/small_tensors.h"

using namespace wick;
using Catch::Matchers::Contains;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
using wick::test::f64;
using wick::test::i64;
}  // namespace

TEST_CASE("index_add: src must match self in every dim but the indexed one, and its dtype") {
  const Tensor self = zeros({2, 3}, kFloat64), idx = i64({0, 1});
  // Used to write 2000 values into a 6-element buffer.
  CHECK_THROWS_WITH(index_add(self, 0, idx, ones({2, 1000}, kFloat64)),
                    Contains("index_add") && Contains("[2, 1000]") && Contains("[2, 3]"));
  // Used to update column 0 only.
  CHECK_THROWS_AS(index_add(self, 0, idx, ones({2, 1}, kFloat64)), ValueError);
  CHECK_THROWS_AS(index_add(self, 0, idx, ones({2, 3}, kFloat32)), TypeError);  // used to cast silently
  CHECK_THROWS_AS(scatter_add(self, 0, i64({0, 1, 0}).view({1, 3}), ones({1, 3}, kFloat32)), TypeError);
  CHECK_VALUES(self, {0, 0, 0, 0, 0, 0});
  // A 0-dim self is one element (as index_select treats it): 1 + 2 + 4.
  CHECK_VALUES(index_add(scalar_tensor(1.0, kFloat64), 0, i64({0, 0}), f64({2, 4}, {2})), {7});
  CHECK(index_add(scalar_tensor(1.0, kFloat64), 0, i64({0}), scalar_tensor(2.0, kFloat64)).dim() == 0);
}

TEST_CASE("a 0-dim tensor has no size or stride, and mean over its dim 0 counts one element") {
  Tensor s = scalar_tensor(1.0, kFloat64);
  CHECK_THROWS_AS(s.size(0), IndexError);
  CHECK_THROWS_AS(s.size(-1), IndexError);
  CHECK_THROWS_AS(s.stride(0), IndexError);
  Tensor x = scalar_tensor(3.0, kFloat64).requires_grad_(true);
  x.mean({0}).backward();  // d mean / dx over one element: 1 (it divided by an uninitialised size)
  CHECK(x.grad().item<double>() == 1.0);
  Tensor y = f64({1, 2, 4}, {3}).requires_grad_(true);
  // var with a correction of INT64_MIN: n - correction is 3 + 2^63 in double, never a wrapped integer.
  const double denom = 3.0 + 9223372036854775808.0;
  Tensor v = var(y, {0}, std::optional<int64_t>(kMin), false);  // mean 7/3; squared deviations sum to 14/3
  CHECK(v.item<double>() == Approx((14.0 / 3.0) / denom).epsilon(1e-12));
}

TEST_CASE("BatchNorm: a refused training input leaves num_batches_tracked and the running stats as they were") {
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3).momentum(std::nullopt), kFloat64);
  CHECK_THROWS_WITH(bn->forward(randn({1, 3}, kFloat64)), Contains("more than 1 value per channel"));
  CHECK_THROWS_AS(bn->forward(randn({4, 5}, kFloat64)), ValueError);  // 5 channels, not 3
  CHECK(bn->num_batches_tracked().item<int64_t>() == 0);
  CHECK_VALUES(bn->running_mean(), {0, 0, 0});
  // The first accepted batch counts as batch 1: with momentum None its factor is 1/1, so the
  // running mean is the batch mean, [2, 3, 4].
  bn->forward(f64({1, 2, 3, 3, 4, 5}, {2, 3}));
  CHECK(bn->num_batches_tracked().item<int64_t>() == 1);
  CHECK_VALUES(bn->running_mean(), {2, 3, 4});
}

TEST_CASE("clamp_ with a floating bound cannot be written into an integer tensor") {
  Tensor x = i64({0, 1, 2, 3});
  CHECK_THROWS_WITH(x.clamp_(0.5, 2.5), Contains("clamp_") && Contains("int64"));
  CHECK_VALUES(x, {0, 1, 2, 3});
  x.clamp_(1, 2);
  CHECK_VALUES(x, {1, 1, 2, 2});
}

TEST_CASE("native::unary_ refuses what native::unary refuses, and leaves the tensor as it was") {
  Tensor x = i64({2, -3, 0});
  // An integer to a negative power (unary refuses it; in place it gave 0 and +-1).
  CHECK_THROWS_WITH(native::unary_(UnaryOp::PowScalar, x, -1.0, 0.0), Contains("pow") && Contains("negative"));
  // A fractional power has a floating result (in place it truncated the exponent to 0 and gave 1).
  CHECK_THROWS_AS(native::unary_(UnaryOp::PowScalar, x, 0.5, 0.0), TypeError);
  CHECK_VALUES(x, {2, -3, 0});
  native::unary_(UnaryOp::PowScalar, x, 2.0, 0.0);
  CHECK_VALUES(x, {4, 9, 0});
  Tensor b = tensor(std::vector<int64_t>{1, 0}, {2}, TensorOptions(kInt64)).to(kBool);
  CHECK_THROWS_AS(native::unary_(UnaryOp::Neg, b, 0.0, 0.0), TypeError);
  CHECK_THROWS_AS(native::unary_(UnaryOp::Sign, b, 0.0, 0.0), TypeError);
  CHECK_THROWS_WITH(native::unary_(UnaryOp::LogicalNot, x, 0.0, 0.0), Contains("logical_not_") && Contains("int64"));
  CHECK_VALUES(x, {4, 9, 0});
  CHECK(b.version() == 0);
  native::unary_(UnaryOp::LogicalNot, b, 0.0, 0.0);
  CHECK_VALUES(b.to(kInt64), {0, 1});
}

TEST_CASE("int64 ranges past 2^53 are refused, not rounded") {
  const int64_t big = (int64_t{1} << 53) + 1;
  CHECK_THROWS_WITH(arange(big, big + 3, 1, TensorOptions(kInt64)), Contains("arange") && Contains("2^53"));
  CHECK_THROWS_WITH(randint(big, big + 1, {4}), Contains("randint") && Contains("2^53"));
  CHECK_VALUES(arange(int64_t{1} << 53, (int64_t{1} << 53) - 3, -1, TensorOptions(kInt64)),
               {9007199254740992.0, 9007199254740991.0, 9007199254740990.0});
}

TEST_CASE("conv and pooling geometry past int64 is a ValueError, not a wrapped size") {
  const int64_t huge = int64_t{1} << 62;
  CHECK_THROWS_WITH(nn::F::conv2d(randn({1, 1, 5, 5}, kFloat64), randn({1, 1, 5, 5}, kFloat64), {}, 1, 0, huge),
                    Contains("conv2d") && Contains("past int64"));
  CHECK_THROWS_WITH(nn::F::max_pool2d(randn({1, 1, 5, 5}, kFloat64), 5, 1, 0, huge),
                    Contains("max_pool2d") && Contains("overflow"));
  // A table of 2^62 x 3 entries is past int64: a typed error, not std::length_error. (A table that
  // fits int64 but not memory, 2^40 x 3, is the allocator's OutOfMemoryError; not run here, as
  // AddressSanitizer aborts on such a request.)
  CHECK_THROWS_AS(nn::F::adaptive_avg_pool2d(randn({1, 1, 3, 3}, kFloat64), {int64_t{1} << 62, 1}), ValueError);
  // An empty batch gives an empty output without building 2^40 divisors.
  Tensor out = nn::F::avg_pool2d(empty({0, 1, 1 << 20, 1 << 20}, kFloat64), 1);
  CHECK(out.sizes() == IntArrayRef({0, 1, 1 << 20, 1 << 20}));
  // A 2^32 x 2^32 window with padding 2^31 is legal in PyTorch (1 x 1 output); its 2^64 taps
  // wrapped the divisor and the column count to 0 and gave NaN. Now a typed refusal.
  const int64_t k32 = int64_t{1} << 32, p31 = int64_t{1} << 31;
  CHECK_THROWS_WITH(nn::F::avg_pool2d(randn({1, 1, 1, 1}, kFloat64), {k32, k32}, 0, {p31, p31}, false, true),
                    Contains("avg_pool2d") && Contains("4294967296 x 4294967296"));
  CHECK_THROWS_AS(nn::F::max_pool2d(randn({1, 1, 1, 1}, kFloat64), {k32, k32}, 0, {p31, p31}), NotImplementedError);
}

TEST_CASE("a pooling window far larger than its input reads the one element, quickly") {
  // 2^20 taps, all padding but one: the empty-window test takes one step per window (it used to
  // walk every tap), and the values are the hand-computed ones.
  const int64_t k = int64_t{1} << 20, p = int64_t{1} << 19;
  Tensor x = tensor(std::vector<double>{3.0}, {1, 1, 1, 1}, TensorOptions(kFloat64));
  CHECK_VALUES(nn::F::max_pool2d(x, {k, 1}, 0, {p, 0}), {3.0});
  CHECK_VALUES(nn::F::avg_pool2d(x, {k, 1}, 0, {p, 0}, false, false), {3.0});
  // count_include_pad: the window [-2^19, 2^19) holds 2^20 taps, one of them the input.
  CHECK_VALUES(nn::F::avg_pool2d(x, {k, 1}, 0, {p, 0}, false, true), {3.0 / static_cast<double>(k)});
  // A dilated window whose taps all step over the input is empty: max_pool2d gives -inf there,
  // through its unfold path (padding 1, dilation 3 over a 2-wide input: one window, whose taps
  // are at -1 + {0, 3} = -1 and 2, both outside).
  Tensor y = tensor(std::vector<double>{1.0, 2.0}, {1, 1, 1, 2}, TensorOptions(kFloat64));
  Tensor m = nn::F::max_pool2d(y, {1, 2}, {1, 1}, {0, 1}, {1, 3});
  REQUIRE(m.sizes() == IntArrayRef({1, 1, 1, 1}));
  CHECK(m.item<double>() == -std::numeric_limits<double>::infinity());
}

TEST_CASE("backward gradients, hook results and set_grad are checked for dtype, device and shape") {
  Tensor x = ones({3}, kFloat32).requires_grad_(true);
  // A float64 root gradient for a float32 output is converted, as PyTorch does: d sum = 2 each.
  (x * 2.0).sum().backward(scalar_tensor(1.0, kFloat64));
  CHECK_VALUES(x.grad(), {2, 2, 2});
  CHECK(x.grad().dtype() == kFloat32);
  CHECK_THROWS_AS(x.sum().backward(scalar_tensor(int64_t{1}, kInt64)), TypeError);
  // A hook that returns a gradient of another shape or dtype is named, not broadcast.
  Tensor w = ones({3}, kFloat32);
  Tensor y = x * w;
  auto h = y.register_hook([](const Tensor&) { return ones({1}, kFloat32); });
  CHECK_THROWS_WITH(y.sum().backward(), Contains("hook") && Contains("[1]") && Contains("[3]"));
  h.remove();
  Tensor z = x * w;
  (void)z.register_hook([](const Tensor& g) { return g.to(kFloat64); });
  CHECK_THROWS_AS(z.sum().backward(), TypeError);
  CHECK_THROWS_AS(x.set_grad(zeros({3}, kInt64)), TypeError);
  CHECK_VALUES(x.grad(), {2, 2, 2});
}

TEST_CASE("mse_loss and l1_loss refuse shapes that would broadcast into every pair") {
  CHECK_THROWS_WITH(nn::F::mse_loss(randn({8, 1}, kFloat64), randn({8}, kFloat64)),
                    Contains("mse_loss") && Contains("[8, 1]") && Contains("[8]"));
  CHECK_THROWS_AS(nn::F::l1_loss(randn({8, 1}, kFloat64), randn({8}, kFloat64)), ValueError);
}

TEST_CASE("sizes computed from huge arguments are checked: slice step, repeat, diag, one_hot") {
  // A step past the size takes the first element (it used to overflow to an empty slice).
  Tensor a = arange(10, TensorOptions(kInt64));
  CHECK_VALUES(a.slice(0, 0, 10, kMax), {0});
  CHECK_VALUES(a.slice(0, 1, 10, 4), {1, 5, 9});
  CHECK_THROWS_WITH(repeat(ones({3}, kFloat64), {int64_t{1} << 62}), Contains("repeat"));
  CHECK_THROWS_WITH(diag(ones({1}, kFloat64), (int64_t{1} << 32) - 1), Contains("diag"));
  CHECK_THROWS_AS(diag(ones({1}, kFloat64), kMin), ValueError);
  CHECK_THROWS_WITH(one_hot(i64({kMax})), Contains("one_hot") && Contains("num_classes"));
}

TEST_CASE("isclose on int64 compares magnitudes, never a wrapped difference") {
  CHECK_VALUES(isclose(i64({kMax, 0, 5, 7}), i64({-1, kMin, 5, 8})), {0, 0, 1, 0});
  CHECK_VALUES(isclose(i64({100}), i64({101}), 0.0, 1.0), {1});  // |100 - 101| <= atol
}

TEST_CASE("an LR scheduler step that is refused leaves the epoch as it was") {
  Tensor p = zeros({1}, kFloat64).requires_grad_(true), q = zeros({1}, kFloat64).requires_grad_(true);
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  optim::StepLR sched(opt, 1, 0.5);
  const int64_t epoch = sched.last_epoch();
  opt.add_param_group(optim::ParamGroup({q}, std::make_unique<optim::SGDOptions>(0.1)));
  CHECK_THROWS_AS(sched.step(), StateError);
  CHECK(sched.last_epoch() == epoch);
}

TEST_CASE("init::uniform_ and normal_ refuse an empty, reversed or non-finite range") {
  Tensor t = zeros({4}, kFloat64);
  CHECK_THROWS_WITH(nn::init::uniform_(t, 1.0, -1.0), Contains("uniform_") && Contains("a <= b"));
  CHECK_THROWS_AS(nn::init::uniform_(t, std::nan(""), 1.0), ValueError);
  CHECK_THROWS_AS(nn::init::normal_(t, 0.0, std::nan("")), ValueError);
  CHECK_THROWS_AS(nn::init::normal_(t, std::numeric_limits<double>::infinity(), 1.0), ValueError);
  CHECK_VALUES(t, {0, 0, 0, 0});
  nn::init::uniform_(t, 2.0, 2.0);  // a == b: every value is a
  CHECK_VALUES(t, {2, 2, 2, 2});
}

TEST_CASE("init::xavier_uniform_ and xavier_normal_ refuse a tensor whose fans are both 0, naming xavier") {
  // PyTorch 1.13's torch.nn.init.xavier_*_ raise ZeroDivisionError for these shapes; the error used
  // to come from uniform_ or normal_ (a range of -inf), naming neither xavier nor the fans.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{0, 0}, {0, 0, 3}, {2, 3, 0}}) {
    INFO(shape.size() << "-d shape");
    CHECK_THROWS_AS(nn::init::xavier_uniform_(zeros(shape, kFloat64)), ValueError);
    CHECK_THROWS_WITH(nn::init::xavier_uniform_(zeros(shape, kFloat64)),
                      Contains("init.xavier_uniform_") && Contains("fan_in and fan_out are both 0"));
    CHECK_THROWS_WITH(nn::init::xavier_normal_(zeros(shape, kFloat64)),
                      Contains("init.xavier_normal_") && Contains("fan_in and fan_out are both 0"));
  }
  // One fan of 0 is fine, as PyTorch: there is nothing to fill.
  CHECK_NOTHROW(nn::init::xavier_uniform_(zeros({0, 5}, kFloat64)));
  CHECK_NOTHROW(nn::init::xavier_normal_(zeros({5, 0}, kFloat64)));
}

TEST_CASE("logsumexp over an empty dim is -inf, as PyTorch gives") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_VALUES(logsumexp(empty({0, 3}, kFloat64), {0}), {-inf, -inf, -inf});
  CHECK(logsumexp(empty({2, 0}, kFloat64), {0}).sizes() == IntArrayRef({0}));
}

TEST_CASE("masked_fill names itself when the value does not fit an int64 tensor") {
  Tensor a = i64({1, 2, 3});
  Tensor mask = tensor(std::vector<double>{1, 0, 1}, {3}, TensorOptions(kBool));
  CHECK_THROWS_WITH(masked_fill(a, mask, std::nan("")), Contains("masked_fill") && Contains("int64"));
  CHECK_THROWS_AS(masked_fill(a, mask, 1e300), ValueError);
  CHECK_VALUES(masked_fill(a, mask, 2.5), {2, 2, 2});  // truncated toward zero, as PyTorch
}

TEST_CASE("a recurrent layer names itself for an input with no time steps") {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).batch_first(true), kFloat64);
  CHECK_THROWS_WITH((void)lstm->forward(empty({2, 0, 3}, kFloat64)), Contains("LSTM") && Contains("no time steps"));
  nn::GRU gru(nn::GRUOptions(3, 4), kFloat64);
  CHECK_THROWS_WITH((void)gru->forward(empty({0, 2, 3}, kFloat64)), Contains("GRU") && Contains("[0, 2, 3]"));
}

TEST_CASE("scaled_dot_product_attention names its inputs when their batch dims do not broadcast") {
  const Tensor q = randn({2, 3, 4, 8}, kFloat64), k = randn({5, 3, 6, 8}, kFloat64), v = randn({5, 3, 6, 8}, kFloat64);
  CHECK_THROWS_WITH(nn::F::scaled_dot_product_attention(q, k, v),
                    Contains("scaled_dot_product_attention") && Contains("[2, 3, 4, 8]") && Contains("[5, 3, 6, 8]"));
  // Broadcasting batch dims stay allowed: a key and value shared by both batch entries, [1, 3, 6, 8].
  const Tensor k1 = randn({1, 3, 6, 8}, kFloat64), v1 = randn({1, 3, 6, 8}, kFloat64);
  CHECK(nn::F::scaled_dot_product_attention(q, k1, v1).sizes() == IntArrayRef({2, 3, 4, 8}));
}
