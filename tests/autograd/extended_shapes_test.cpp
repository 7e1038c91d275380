// The shapes and value ranges of generate.py's "extended" case set (not in ops.safetensors),
// checked against hand-computed float64 references and with gradcheck: broadcasting with
// leading and inner size-1 dims, negative dims with keepdim, batched matmul with broadcast batch
// dims, and numerically hard inputs (logsumexp/log_softmax of large values, sigmoid of +-60).
// The set itself is committed as tests/data/ops_extended.safetensors, and the oracle tests run
// on it as the ctest entries "autograd: the oracle's extended set" and "nn: the oracle's
// extended set" (tests/CMakeLists.txt).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "support/gradcheck.h"

using namespace wick;
using TL = std::vector<Tensor>;

namespace {
Tensor R(IntArrayRef shape, double scale = 1.0) {
  Tensor t = native::binary(BinaryOp::Mul, native::randn(shape, kFloat64, kCPU), Scalar(scale));
  return t.requires_grad_();
}
// A float64 tensor computed elementwise from the values of `like` on the host.
template <typename F>
Tensor host_map(const Tensor& like, F f) {
  auto v = like.contiguous().to_vector<double>();
  for (auto& x : v) x = f(x);
  return tensor(v, like.sizes(), kFloat64);
}
}  // namespace

TEST_CASE("extended: broadcasting with size-1 dims on both sides") {
  manual_seed(31);
  Tensor a = R({1}), b = R({2, 3, 1, 4});
  Tensor out = add(a, b);
  CHECK(out.sizes() == IntArrayRef({2, 3, 1, 4}));
  const double av = a.item<double>();
  CHECK_ALLCLOSE(out, host_map(b, [av](double x) { return x + av; }), 1e-15, 0);
  CHECK_GRADCHECK([](const TL& x) { return TL{add(x[0], x[1])}; }, {a, b});
  Tensor c = R({5, 1, 1}), d = R({1, 4, 3});
  Tensor p = mul(c, d);
  CHECK(p.sizes() == IntArrayRef({5, 4, 3}));
  for (int64_t i = 0; i < 5; ++i)  // every element, by hand
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k)
        CHECK(p.at<double>({i, j, k}) == c.at<double>({i, 0, 0}) * d.at<double>({0, j, k}));
  CHECK_GRADCHECK([](const TL& x) { return TL{mul(x[0], x[1])}; }, {c, d});
  Tensor e = R({2, 3});
  Tensor f = native::binary(BinaryOp::Add, native::rand({2, 1}, kFloat64, kCPU), Scalar(0.5)).requires_grad_();
  const Tensor q = div(e, f);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(q.at<double>({i, j}) == e.at<double>({i, j}) / f.at<double>({i, 0}));
  CHECK_GRADGRADCHECK([](const TL& x) { return TL{div(x[0], x[1])}; }, {e, f});
}

TEST_CASE("extended: reductions with negative dims, keepdim, all dims and several dims") {
  manual_seed(32);
  Tensor x = R({2, 3, 4});
  Tensor s = sum(x, {-2}, true);
  CHECK(s.sizes() == IntArrayRef({2, 1, 4}));
  CHECK(s.at<double>({1, 0, 2}) ==
        Approx(x.at<double>({1, 0, 2}) + x.at<double>({1, 1, 2}) + x.at<double>({1, 2, 2})).epsilon(1e-15));
  CHECK_GRADCHECK([](const TL& t) { return TL{sum(t[0], {-2}, true)}; }, {x});
  Tensor m = R({3, 5});
  double ref = 0;
  for (double v : m.to_vector<double>()) ref += v;
  CHECK(mean(m).item<double>() == Approx(ref / 15).epsilon(1e-14));
  CHECK_GRADCHECK([](const TL& t) { return TL{mean(t[0])}; }, {m});
  Tensor y = R({3, 4, 2});
  Tensor am = amax(y, {0, 1});
  CHECK(am.sizes() == IntArrayRef({2}));
  for (int64_t k = 0; k < 2; ++k) {
    double best = -INFINITY;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) best = std::max(best, y.at<double>({i, j, k}));
    CHECK(am.at<double>({k}) == best);
  }
  CHECK_GRADCHECK([](const TL& t) { return TL{amax(t[0], {0, 1})}; }, {y});
}

TEST_CASE("extended: matmul of [3,4]x[4] and of broadcast batches [2,1,3,4]x[5,4,2]") {
  manual_seed(33);
  Tensor a = R({3, 4}), v = R({4});
  Tensor mv = matmul(a, v);
  CHECK(mv.sizes() == IntArrayRef({3}));
  for (int64_t i = 0; i < 3; ++i) {
    double acc = 0;
    for (int64_t k = 0; k < 4; ++k) acc += a.at<double>({i, k}) * v.at<double>({k});
    CHECK(mv.at<double>({i}) == Approx(acc).epsilon(1e-14));
  }
  Tensor b = R({2, 1, 3, 4}), c = R({5, 4, 2});
  Tensor bc = matmul(b, c);
  CHECK(bc.sizes() == IntArrayRef({2, 5, 3, 2}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 5; ++q)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < 4; ++k) acc += b.at<double>({p, 0, i, k}) * c.at<double>({q, k, j});
          CHECK(bc.at<double>({p, q, i, j}) == Approx(acc).epsilon(1e-13).margin(1e-15));
        }
  CHECK_GRADCHECK([](const TL& x) { return TL{matmul(x[0], x[1])}; }, {a, v});
  CHECK_GRADCHECK([](const TL& x) { return TL{matmul(x[0], x[1])}; }, {b, c});
}

TEST_CASE("extended: softmax over dim 0, log_softmax and logsumexp of large values") {
  manual_seed(34);
  Tensor x = R({5, 3});
  Tensor sm = softmax(x, 0);
  for (int64_t j = 0; j < 3; ++j) {
    double z = 0;
    for (int64_t i = 0; i < 5; ++i) z += std::exp(x.at<double>({i, j}));
    for (int64_t i = 0; i < 5; ++i)
      CHECK(sm.at<double>({i, j}) == Approx(std::exp(x.at<double>({i, j})) / z).epsilon(1e-14));
  }
  CHECK_GRADCHECK([](const TL& t) { return TL{softmax(t[0], 0)}; }, {x});
  // log_softmax of values ~ N(0, 30^2): exp would overflow without the max shift.
  Tensor big = R({2, 3, 9}, 30.0);
  Tensor ls = log_softmax(big, -1);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double mx = -INFINITY;
      for (int64_t k = 0; k < 9; ++k) mx = std::max(mx, big.at<double>({i, j, k}));
      double z = 0;
      for (int64_t k = 0; k < 9; ++k) z += std::exp(big.at<double>({i, j, k}) - mx);
      for (int64_t k = 0; k < 9; ++k)
        CHECK(ls.at<double>({i, j, k}) ==
              Approx(big.at<double>({i, j, k}) - mx - std::log(z)).epsilon(1e-13).margin(1e-13));
    }
  CHECK_GRADCHECK([](const TL& t) { return TL{log_softmax(t[0], -1)}; }, {big});
  // logsumexp of values ~ N(0, 50^2).
  Tensor huge = R({4, 6}, 50.0);
  Tensor lse = logsumexp(huge, {0});
  CHECK(lse.sizes() == IntArrayRef({6}));
  for (int64_t j = 0; j < 6; ++j) {
    double mx = -INFINITY;
    for (int64_t i = 0; i < 4; ++i) mx = std::max(mx, huge.at<double>({i, j}));
    double z = 0;
    for (int64_t i = 0; i < 4; ++i) z += std::exp(huge.at<double>({i, j}) - mx);
    CHECK(lse.at<double>({j}) == Approx(mx + std::log(z)).epsilon(1e-14));
  }
  CHECK_GRADCHECK([](const TL& t) { return TL{logsumexp(t[0], {0})}; }, {huge});
  Tensor e = full({2}, 1e4, kFloat64).requires_grad_();
  CHECK(logsumexp(e, {0}).item<double>() == Approx(1e4 + std::log(2.0)).epsilon(1e-15));
}

TEST_CASE("extended: tanh and sigmoid of large values, gather along dim 0, cat of three") {
  manual_seed(35);
  Tensor t = R({3, 3}, 5.0);
  CHECK_ALLCLOSE(tanh(t), host_map(t, [](double v) { return std::tanh(v); }), 1e-15, 1e-300);
  CHECK_GRADCHECK([](const TL& x) { return TL{tanh(x[0])}; }, {t});
  Tensor s = R({3, 3}, 20.0);
  CHECK_ALLCLOSE(sigmoid(s), host_map(s, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }), 1e-14, 1e-300);
  CHECK_GRADCHECK([](const TL& x) { return TL{sigmoid(x[0])}; }, {s});
  Tensor pm = tensor({-60.0, 60.0}, kFloat64).requires_grad_();
  Tensor sp = sigmoid(pm);
  CHECK(sp.at<double>({0}) == Approx(1.0 / (1.0 + std::exp(60.0))).epsilon(1e-14));
  CHECK(sp.at<double>({1}) == Approx(1.0).epsilon(1e-15));
  sp.sum().backward();
  const double d60 = std::exp(-60.0) / ((1 + std::exp(-60.0)) * (1 + std::exp(-60.0)));
  CHECK(pm.grad().at<double>({0}) == Approx(d60).epsilon(1e-12));
  // At +60 the output rounds to 1.0, so y * (1 - y) is exactly 0: PyTorch 1.13 gives
  // [8.75651076269652e-27, 0.0] too.
  CHECK(pm.grad().at<double>({1}) == 0.0);
  Tensor g = R({3, 4});
  Tensor idx = tensor(std::vector<int64_t>{2, 0, 1, 1, 0, 0, 2, 2, 1, 2, 0, 1, 1, 1, 1, 0, 2, 0, 2, 0}, {5, 4}, kInt64);
  Tensor ga = gather(g, 0, idx);
  CHECK(ga.sizes() == IntArrayRef({5, 4}));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 4; ++j) CHECK(ga.at<double>({i, j}) == g.at<double>({idx.at<int64_t>({i, j}), j}));
  CHECK_GRADCHECK([idx](const TL& x) { return TL{gather(x[0], 0, idx)}; }, {g});
  Tensor c1 = R({1, 3}), c2 = R({2, 3}), c3 = R({3, 3});
  Tensor cc = cat({c1, c2, c3}, 0);
  CHECK(cc.sizes() == IntArrayRef({6, 3}));
  for (int64_t j = 0; j < 3; ++j) {  // every row of every block, in order
    CHECK(cc.at<double>({0, j}) == c1.at<double>({0, j}));
    for (int64_t i = 0; i < 2; ++i) CHECK(cc.at<double>({1 + i, j}) == c2.at<double>({i, j}));
    for (int64_t i = 0; i < 3; ++i) CHECK(cc.at<double>({3 + i, j}) == c3.at<double>({i, j}));
  }
  CHECK_GRADCHECK([](const TL& x) { return TL{cat({x[0], x[1], x[2]}, 0)}; }, {c1, c2, c3});
}

TEST_CASE("pow(tensor, tensor) gradients at x == 0 follow PyTorch's conventions") {
  // PyTorch 1.13: x = [0, 0, 2], y = [0, 2, 0] -> x.grad = [0, 0, 0], y.grad = [0, 0, log 2].
  Tensor x = tensor({0.0, 0.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = tensor({0.0, 2.0, 0.0}, kFloat64).requires_grad_();
  pow(x, y).sum().backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(y.grad().to_vector<double>() == std::vector<double>{0, 0, std::log(2.0)});
}
