// init::orthogonal_: orthonormal rows or columns in float64 on square, tall, wide and conv
// shapes; the gain; reproducible under manual_seed and the same on every device; uniform (Haar)
// over seeds, which needs the sign correction; the errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;

TEST_CASE("init::orthogonal_ gives orthonormal rows (wide) or columns (tall) to 1e-12 in float64", "[nn][init]") {
  manual_seed(31);
  const TensorOptions o(kFloat64);
  const std::vector<std::vector<int64_t>> shapes = {{5, 5},        {7, 3}, {3, 7}, {4, 2, 3, 3},
                                                    {20, 2, 2, 2}, {1, 6}, {6, 1}};
  for (const auto& shape : shapes) {
    CAPTURE(shape);
    Tensor t = wick::empty(shape, o);
    CHECK(init::orthogonal_(t).is_same(t));
    const Tensor m = t.reshape({shape[0], -1});
    const int64_t rows = m.size(0), cols = m.size(1);
    // The smaller Gram matrix is the identity (both are when square).
    const Tensor gram = rows <= cols ? m.mm(m.t()) : m.t().mm(m);
    CHECK_ALLCLOSE(gram, wick::eye(std::min(rows, cols), o), 0, 1e-12);
    if (rows == cols) CHECK_ALLCLOSE(m.t().mm(m), wick::eye(rows, o), 0, 1e-12);
  }
  // The gain scales the same draw: gain^2 times the identity.
  manual_seed(32);
  Tensor unit = init::orthogonal_(wick::empty({4, 6}, o));
  manual_seed(32);
  Tensor scaled = init::orthogonal_(wick::empty({4, 6}, o), 3.0);
  CHECK_ALLCLOSE(scaled, unit * 3.0, 0, 0);
  CHECK_ALLCLOSE(scaled.mm(scaled.t()), wick::eye(4, o) * 9.0, 0, 1e-12);
  // A parameter that requires grad stays a leaf that requires grad.
  Tensor w = wick::empty({3, 3}, TensorOptions(kFloat64).requires_grad());
  init::orthogonal_(w);
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  // No elements: nothing to do, as PyTorch 1.13.
  CHECK_NOTHROW(init::orthogonal_(wick::empty({0, 3}, o)));
  CHECK_NOTHROW(init::orthogonal_(wick::empty({3, 0}, o)));
}

TEST_CASE("init::orthogonal_ is reproducible under manual_seed and the same on every device", "[nn][init]") {
  manual_seed(33);
  const Tensor first = init::orthogonal_(wick::empty({5, 2, 2}, kFloat32));
  manual_seed(33);
  const Tensor again = init::orthogonal_(wick::empty({5, 2, 2}, kFloat32));
  CHECK_ALLCLOSE(again, first, 0, 0);
  const Tensor next = init::orthogonal_(wick::empty({5, 2, 2}, kFloat32));
  CHECK_FALSE(test::allclose(next, first, 1e-3, 1e-3).ok);  // the generator moved on
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    manual_seed(33);
    Tensor t = wick::empty({5, 2, 2}, TensorOptions(kFloat32).device(d));
    init::orthogonal_(t);
    CHECK(t.device() == d);
    CHECK(t.dtype() == kFloat32);
    CHECK_ALLCLOSE(t, first, 0, 0);  // drawn and factored on the host, then copied
  }
}

TEST_CASE("init::orthogonal_ is uniform over seeds: Q[0][0] of 3x3 draws averages 0", "[nn][init]") {
  // For a Haar-distributed 3x3 Q, Q[0][0] is a coordinate of a uniform point on the unit sphere:
  // mean 0, E[Q00^2] = 1/3, sd 0.577, so the mean of 200 draws has standard error 0.041. Without
  // the sign correction, Householder QR (LAPACK's convention, as numpy.linalg.qr, and wick's)
  // gives Q[0][0] = -|A00| / |A[:, 0]|, whose mean is -1/2 (checked with numpy: -0.48 to -0.50
  // over three runs of 200 draws, against -0.06 to 0.00 with the correction).
  manual_seed(34);
  constexpr int kDraws = 200;
  double sum = 0, sum_sq = 0;
  std::vector<double> entry_sum(9, 0.0);
  for (int i = 0; i < kDraws; ++i) {
    const std::vector<double> q = values(init::orthogonal_(wick::empty({3, 3}, kFloat64)));
    sum += q[0];
    sum_sq += q[0] * q[0];
    for (size_t k = 0; k < 9; ++k) entry_sum[k] += q[k];
  }
  CHECK(std::abs(sum / kDraws) < 0.2);  // about 5 standard errors
  // E[Q00^2] = 1/3; Var(Q00^2) = E[x^4] - 1/9 = 1/5 - 1/9, standard error 0.021.
  CHECK(std::abs(sum_sq / kDraws - 1.0 / 3.0) < 0.1);
  for (size_t k = 0; k < 9; ++k) {
    CAPTURE(k);
    CHECK(std::abs(entry_sum[k] / kDraws) < 0.2);
  }
}

TEST_CASE("init::orthogonal_ refuses vectors, integer tensors and a non-finite gain", "[nn][init][errors]") {
  Tensor v = wick::ones({3});
  CHECK_THROWS_AS(init::orthogonal_(v), ValueError);
  CHECK_THROWS_WITH(init::orthogonal_(v),
                    Contains("init.orthogonal_") && Contains("[3]") && Contains("at least 2 dims"));
  CHECK_VALUES(v, {1, 1, 1});
  Tensor ints = wick::ones({2, 2}, kInt64);
  CHECK_THROWS_AS(init::orthogonal_(ints), TypeError);  // PyTorch: normal_ is not implemented for Long
  CHECK_THROWS_WITH(init::orthogonal_(ints), Contains("init.orthogonal_") && Contains("int64"));
  CHECK_THROWS_AS(init::orthogonal_(wick::ones({2, 2}), std::nan("")), ValueError);
  CHECK_THROWS_WITH(init::orthogonal_(wick::ones({2, 2}), INFINITY), Contains("gain must be finite"));
  CHECK_THROWS_AS(init::orthogonal_(Tensor()), ValueError);
}
