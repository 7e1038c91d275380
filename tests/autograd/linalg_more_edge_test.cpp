// wick::linalg's second set at its edges, on every test device: lu_solve's backward against
// pivots written after the forward (PyTorch 1.13's "modified by an inplace operation"), matrix_exp
// of mixed batches (each matrix as it is alone, closed forms and the oracle's mixed case),
// cond of empty non-square matrices and lstsq without right-hand sides (PyTorch 1.13's values,
// quoted where they are used), lstsq's default driver per device, and zero-size and
// non-contiguous inputs (truth: A X = B by matmul, the contiguous result, float64 gradchecks).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/small_tensors.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/linalg.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::check_error;
using TL = std::vector<Tensor>;

namespace {
TensorOptions o64(Device dev) { return TensorOptions(kFloat64).device(dev); }
using wick::test::f64;
Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

// exp([[a, b], [0, c]]) = [[e^a, b (e^a - e^c) / (a - c)], [0, e^c]] for a != c.
Tensor exp_upper2(double a, double b, double c, Device dev) {
  return f64({std::exp(a), b * (std::exp(a) - std::exp(c)) / (a - c), 0, std::exp(c)}, {2, 2}, dev);
}
}  // namespace

TEST_CASE("linalg more edge: lu_solve's backward refuses pivots written after the forward", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor A = f64({4, 1, 2, 1, 3, 0, 2, 0, 5}, {3, 3}, dev);
    for (bool left : {true, false})
      for (bool adjoint : {false, true}) {
        INFO("left " << left << " adjoint " << adjoint);
        auto [LU, piv] = linalg::lu_factor(A);
        const Tensor LUr = LU.detach().requires_grad_(true), B = ones({3, 3}, o64(dev)).requires_grad_(true);
        const Tensor X = linalg::lu_solve(LUr, piv, B, left, adjoint);
        {
          NoGradGuard no_grad;
          piv.fill_(1);  // valid pivots, but not those of the forward
        }
        check_error<StateError>([&] { X.sum().backward(); },
                                {"LinalgLuSolveBackward", "modified by an in-place operation"});
      }
    // Untouched pivots (or a clone written to) leave the backward as it was.
    auto [LU, piv] = linalg::lu_factor(A);
    const Tensor LUr = LU.detach().requires_grad_(true);
    const Tensor X = linalg::lu_solve(LUr, piv, ones({2, 3}, o64(dev)), false);
    const Tensor copy = piv.clone().fill_(1);
    X.sum().backward();
    CHECK(LUr.grad().defined());
    // Out-of-range pivots after the forward: an error, not a read out of bounds.
    const Tensor LUr2 = LU.detach().requires_grad_(true);
    const Tensor X2 = linalg::lu_solve(LUr2, piv, ones({2, 3}, o64(dev)), false);
    {
      NoGradGuard no_grad;
      piv.fill_(1000000);
    }
    check_error<StateError>([&] { X2.sum().backward(); }, {"modified by an in-place operation"});
  }
}

TEST_CASE("linalg more edge: matrix_exp of a mixed batch equals each matrix alone", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const double t = 1e4;
    const Tensor rot = f64({0, -t, t, 0}, {2, 2}, dev);                   // 1-norm 1e4: 14 squarings
    const Tensor small = f64({0.1, 0.2, 0, -0.3}, {2, 2}, dev);           // degree 12, no squaring
    const Tensor tiny = f64({1e-9, 0, 0, 0}, {2, 2}, dev);                // degree 1
    const Tensor nil = f64({0, std::ldexp(1.0, 40), 0, 0}, {2, 2}, dev);  // exp = I + nil, exactly
    const Tensor batch = reshape(stack({rot, small, tiny, nil}, 0), {2, 2, 2, 2});
    for (DType dt : {kFloat32, kFloat64}) {
      INFO((dt == kFloat32 ? "float32" : "float64"));
      const double eps = dt == kFloat32 ? 1.2e-7 : 2.3e-16;
      const Tensor E = reshape(linalg::matrix_exp(batch.to(dt)), {4, 2, 2});
      CHECK(E.dtype() == dt);
      int i = 0;
      for (const Tensor& m : {rot, small, tiny, nil}) {
        INFO("matrix " << i);
        CHECK_ALLCLOSE(E.select(0, i++), linalg::matrix_exp(m.to(dt)), 4 * eps, 0);
      }
      // The closed forms (in float32 the batched small matrix was 1e-4 off before).
      CHECK_ALLCLOSE(E.select(0, 1), exp_upper2(0.1, 0.2, -0.3, dev), 8 * eps, 0);
      CHECK_ALLCLOSE(E.select(0, 2), f64({std::exp(1e-9), 0, 0, 1}, {2, 2}, dev), 2 * eps, 0);
      CHECK_ALLCLOSE(E.select(0, 3), f64({1, std::ldexp(1.0, 40), 0, 1}, {2, 2}, dev), 0, 0);
    }
    CHECK_ALLCLOSE(linalg::matrix_exp(rot), f64({std::cos(t), -std::sin(t), std::sin(t), std::cos(t)}, {2, 2}, dev), 0,
                   1e-10);
    // A NaN matrix spreads NaN to itself only.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor En = linalg::matrix_exp(stack({f64({nan, 0, 0, 1}, {2, 2}, dev), small}, 0));
    CHECK(all(isnan(En.select(0, 0))).item<bool>());
    CHECK_ALLCLOSE(En.select(0, 1), exp_upper2(0.1, 0.2, -0.3, dev), 1e-15, 0);
    // Differentiable across groups: one matrix per (degree, squarings) group.
    const Tensor scale = f64({1e-3, 0.3, 1, 8}, {4, 1, 1}, dev);
    CHECK_GRADCHECK([&](const TL& x) { return TL{linalg::matrix_exp(x[0] * scale)}; },
                    TL{randn({4, 3, 3}, o64(dev)).requires_grad_(true)});
    wick::test::check_double_backward([&](const TL& x) { return TL{linalg::matrix_exp(x[0] * scale)}; },
                                      TL{randn({4, 2, 2}, o64(dev)).requires_grad_(true)});
  }
}

TEST_CASE("linalg more edge: cond of empty non-square matrices", "[autograd][linalg]") {
  // PyTorch 1.13: cond(zeros(2, 0, 3), p) is zeros(2) for p in None, 1, -1, 2, inf; "fro" and
  // "nuc" refuse the non-square shape ("A must be batches of square matrices").
  const double inf = std::numeric_limits<double>::infinity();
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor z = zeros({2, 0, 3}, o64(dev));
    CHECK_VALUES(linalg::cond(z), {0, 0});
    for (double p : {1.0, -1.0, 2.0, -2.0, inf, -inf}) {
      INFO("p " << p);
      const Tensor c = linalg::cond(z, p);
      CHECK(c.sizes() == IntArrayRef{2});
      CHECK(c.device() == dev);
      CHECK_VALUES(c, {0, 0});
    }
    CHECK(linalg::cond(zeros({0, 3}, o64(dev)), 1.0).dim() == 0);
    CHECK(linalg::cond(zeros({3, 0}, TensorOptions(kFloat32).device(dev)), inf).dtype() == kFloat32);
    check_error<ValueError>([&] { linalg::cond(z, "fro"); }, {"linalg.cond", "square", "0 by 3"});
    check_error<ValueError>([&] { linalg::cond(zeros({2, 3}, o64(dev)), 1.0); }, {"linalg.cond", "square"});
    CHECK(linalg::cond(zeros({2, 0, 0}, o64(dev)), "nuc").sizes() == IntArrayRef{2});
  }
}

TEST_CASE("linalg more edge: lstsq without right-hand sides and its default driver", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor A = f64({1, 0, 0, 1, 1, 1}, {3, 2}, dev), B0 = zeros({3, 0}, o64(dev));
    // PyTorch 1.13 (run): gelsy gives solution [2, 0], rank 0 (LAPACK's quick return), no
    // singular values; gels solution [2, 0], residuals [0], rank empty.
    auto [Xy, ry, ranky, svy] = linalg::lstsq(A, B0, std::nullopt, "gelsy");
    CHECK(Xy.sizes() == IntArrayRef{2, 0});
    CHECK_VALUES(ranky, {0});
    CHECK(svy.numel() == 0);
    auto [Xs, rs, ranks, svs] = linalg::lstsq(A, B0, std::nullopt, "gels");
    CHECK(Xs.sizes() == IntArrayRef{2, 0});
    CHECK(rs.sizes() == IntArrayRef{0});
    CHECK(ranks.numel() == 0);
    // gelsd: A's own rank and singular values, as with any right-hand side (PyTorch 1.13 fails
    // there inside LAPACK; wick differs, docs/tensors.md). Truth: svdvals and the k = 1 call.
    const Tensor Ab = stack({A, f64({1, 2, 1, 2, 1, 2}, {3, 2}, dev)}, 0);  // the second of rank 1
    auto [Xd, rd, rankd, svd0] = linalg::lstsq(Ab, zeros({2, 3, 0}, o64(dev)), std::nullopt, "gelsd");
    auto [X1, r1, rank1, sv1] = linalg::lstsq(Ab, ones({2, 3, 1}, o64(dev)), std::nullopt, "gelsd");
    CHECK(Xd.sizes() == IntArrayRef{2, 2, 0});
    CHECK_VALUES(rankd, {2, 1});
    CHECK_VALUES(rankd, wick::test::values(rank1));
    CHECK_ALLCLOSE(svd0, linalg::svdvals(Ab), 1e-14, 1e-15);
    CHECK_ALLCLOSE(svd0, sv1, 0, 0);
    CHECK(rd.sizes() == IntArrayRef{0});  // a rank-deficient matrix: no residuals
    // The default driver: "gels" for CUDA tensors (rank empty, a rank-deficient A refused), as
    // PyTorch's; "gelsy" elsewhere (rank given, a rank-deficient A solved).
    const Tensor Ar = f64({1, 2, 1, 2, 1, 2}, {3, 2}, dev), y = f64({1, 2, 3}, {3, 1}, dev);
    const bool cuda = dev.is_cuda();
    CHECK(std::get<2>(linalg::lstsq(A, y)).numel() == (cuda ? 0 : 1));
    if (cuda)
      check_error<ValueError>([&] { linalg::lstsq(Ar, y); }, {"linalg.lstsq", "does not have full rank"});
    else
      CHECK_VALUES(std::get<2>(linalg::lstsq(Ar, y)), {1});
    // Every driver runs on every device when named.
    for (const char* d : {"gels", "gelsy", "gelsd"})
      CHECK_ALLCLOSE(std::get<0>(linalg::lstsq(A, y, std::nullopt, d)), f64({1, 2}, {2, 1}, dev), 1e-14, 1e-15);
  }
}

TEST_CASE("linalg more edge: zero-size batches and matrices", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    Tensor A0 = zeros({0, 3, 3}, o64(dev)).requires_grad_(true);
    const Tensor B0 = zeros({0, 3, 2}, o64(dev));
    const auto backward_zero = [&](const Tensor& out, IntArrayRef shape) {
      CHECK(out.sizes() == shape);
      out.sum().backward();
      REQUIRE(A0.grad().defined());
      CHECK(A0.grad().sizes() == IntArrayRef{0, 3, 3});
      A0.mutable_grad() = Tensor();
    };
    backward_zero(linalg::solve_triangular(A0, B0, true), {0, 3, 2});
    backward_zero(linalg::solve_triangular(A0, zeros({0, 2, 3}, o64(dev)), false, false), {0, 2, 3});
    backward_zero(linalg::matrix_exp(A0), {0, 3, 3});
    backward_zero(std::get<0>(linalg::lu_factor(A0)), {0, 3, 3});
    backward_zero(linalg::lu_solve(A0, zeros({0, 3}, TensorOptions(kInt64).device(dev)), B0), {0, 3, 2});
    backward_zero(linalg::cholesky_solve(B0, A0), {0, 3, 2});
    backward_zero(linalg::cholesky_inverse(A0), {0, 3, 3});
    backward_zero(linalg::pinv(A0), {0, 3, 3});
    backward_zero(linalg::matrix_power(A0, 3), {0, 3, 3});
    backward_zero(std::get<0>(linalg::lstsq(A0, B0, std::nullopt, "gelsd")), {0, 3, 2});
    CHECK(linalg::matrix_rank(A0).sizes() == IntArrayRef{0});
    CHECK(linalg::cond(A0, 1.0).sizes() == IntArrayRef{0});
    auto [P, L, U] = linalg::lu(A0);
    CHECK(P.sizes() == IntArrayRef{0, 3, 3});
    // Matrices of size 0: solves of 0 x 0 systems with right-hand sides of 3 columns.
    const Tensor E = zeros({2, 0, 0}, o64(dev)), Bn = zeros({2, 0, 3}, o64(dev));
    CHECK(linalg::solve_triangular(E, Bn, false).sizes() == IntArrayRef{2, 0, 3});
    auto [LUe, pive] = linalg::lu_factor(E);
    CHECK(pive.sizes() == IntArrayRef{2, 0});
    CHECK(linalg::lu_solve(LUe, pive, Bn).sizes() == IntArrayRef{2, 0, 3});
    CHECK(linalg::matrix_exp(E).sizes() == IntArrayRef{2, 0, 0});
    auto [Xl, rl, rankl, svl] = linalg::lstsq(zeros({2, 0, 3}, o64(dev)), zeros({2, 0, 1}, o64(dev)));
    CHECK(Xl.sizes() == IntArrayRef{2, 3, 1});
    CHECK_VALUES(Xl, {0, 0, 0, 0, 0, 0});
  }
}

TEST_CASE("linalg more edge: transposed and non-contiguous operands", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor M = f64({4, 1, 2, 1, 3, 0, 2, 0, 5}, {3, 3}, dev) + f64({0, 2, 0, 0, 0, 1, 0, 0, 0}, {3, 3}, dev);
    const Tensor Bt = mT(f64({1, 2, 3, 4, 5, 6}, {2, 3}, dev));  // [3, 2], column-major
    REQUIRE(!Bt.is_contiguous());
    // solve_triangular reads the lower triangle of mT(M): A X = B checked by matmul.
    const Tensor At = mT(M);
    REQUIRE(!At.is_contiguous());
    const Tensor X = linalg::solve_triangular(At, Bt, false);
    CHECK_ALLCLOSE(matmul(tril(At), X), Bt, 1e-14, 1e-14);
    CHECK_ALLCLOSE(X, linalg::solve_triangular(At.contiguous(), Bt.contiguous(), false), 0, 0);
    const Tensor Xr = linalg::solve_triangular(At, mT(Bt), true, false, true);  // X A = B, unit upper
    CHECK_ALLCLOSE(matmul(Xr, triu(At, 1) + eye(3, o64(dev))), mT(Bt), 1e-14, 1e-14);
    // lu_solve with LU stored transposed, B transposed and pivots expanded over a batch.
    Tensor LU, piv;  // not a structured binding: clang 14 cannot capture one in a lambda
    std::tie(LU, piv) = linalg::lu_factor(M);
    const Tensor LUt = mT(mT(LU).contiguous());
    REQUIRE(!LUt.is_contiguous());
    CHECK_ALLCLOSE(LUt, LU, 0, 0);
    for (bool left : {true, false})
      for (bool adjoint : {false, true}) {
        INFO("left " << left << " adjoint " << adjoint);
        const Tensor B = left ? Bt : mT(Bt);
        const Tensor Xl = linalg::lu_solve(LUt, piv, B, left, adjoint);
        const Tensor Ma = adjoint ? mT(M) : M;
        CHECK_ALLCLOSE(left ? matmul(Ma, Xl) : matmul(Xl, Ma), B, 1e-13, 1e-13);
        CHECK_ALLCLOSE(Xl, linalg::lu_solve(LU, piv, B.contiguous(), left, adjoint), 1e-15, 1e-15);
      }
    const Tensor LU2 = expand(unsqueeze(LUt, 0), {2, 3, 3}), piv2 = expand(unsqueeze(piv, 0), {2, 3});
    CHECK_ALLCLOSE(linalg::lu_solve(LU2, piv2, Bt), expand(unsqueeze(linalg::lu_solve(LU, piv, Bt), 0), {2, 3, 2}), 0,
                   0);
    // Gradients through transposed operands, against finite differences.
    const Tensor I3 = eye(3, o64(dev)) * 3.0;
    CHECK_GRADCHECK([&](const TL& x) { return TL{linalg::solve_triangular(mT(x[0]) + I3, mT(x[1]), true)}; },
                    TL{randn({3, 3}, o64(dev)).requires_grad_(true), randn({2, 3}, o64(dev)).requires_grad_(true)});
    for (bool left : {true, false}) {
      INFO("left " << left);
      CHECK_GRADCHECK([&](const TL& x) { return TL{linalg::lu_solve(mT(x[0]), piv, mT(x[1]), left)}; },
                      TL{mT(LU).contiguous().requires_grad_(true),
                         randn(left ? IntArrayRef{2, 3} : IntArrayRef{3, 2}, o64(dev)).requires_grad_(true)});
    }
    CHECK_GRADCHECK([](const TL& x) { return TL{linalg::matrix_exp(mT(x[0]))}; },
                    TL{randn({2, 3, 3}, o64(dev)).requires_grad_(true)});
  }
}
