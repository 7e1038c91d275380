// wick::linalg: the PyTorch oracle's cases (generate.py's linalg_cases, selected by op name) on
// every test device, forward at rtol 1e-10 and gradients at rtol 1e-8 in float64; 2x2 cases
// worked by hand (inverse, determinant and its cofactor gradient, a singular determinant's
// gradient, slogdet's sign, Cholesky, eigenvalues, singular values, matrix norms); float64
// gradchecks and double backward of every differentiable op, with gauge-invariant outputs for
// qr, eigh and svd; float32 against float64; the errors (non-square, singular with the batch
// element and pivot, not positive-definite with the minor's order, NaN, dtype, bad modes).
#include "wick/autograd/linalg.h"

#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/lapack_work.h"

using namespace wick;
using wick::test::check_error;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-10, kGradRtol = 1e-8, kAtol = 1e-11;

using wick::test::f64;
Tensor leaf(IntArrayRef shape, Device dev) {
  return randn(shape, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
}
Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }
Tensor diagonal(const Tensor& x) { return sum(x * eye(x.size(-1), TensorOptions(x.dtype()).device(x.device())), {-1}); }

// generate.py's gauge-fixed outputs: cat(flatten(Q D), flatten(D R)) with D = sign(diag R), ...
Tensor qr_out(const Tensor& a, const std::string& mode) {
  auto [Q, R] = linalg::qr(a, mode);
  const int64_t k = std::min(Q.size(-1), R.size(-2));
  const Tensor d = sign(diagonal(narrow(narrow(R, -2, 0, k), -1, 0, k)));
  const Tensor Rf = narrow(R, -2, 0, k) * unsqueeze(d, -1), Qf = narrow(Q, -1, 0, k) * unsqueeze(d, -2);
  return cat({flatten(Qf, -2, -1), flatten(Rf, -2, -1)}, -1);
}
Tensor eigh_out(const Tensor& a, const std::string& uplo) {
  auto [L, V] = linalg::eigh(a, uplo);
  return cat({L, flatten(V * V, -2, -1)}, -1);
}
Tensor svd_out(const Tensor& a, bool full) {
  auto [U, S, Vh] = linalg::svd(a, full);
  const int64_t k = S.size(-1);
  const Tensor Uk = narrow(U, -1, 0, k), Vk = narrow(Vh, -2, 0, k);
  return cat({S, flatten(Uk * Uk, -2, -1), flatten(Vk * Vk, -2, -1)}, -1);
}
std::vector<int64_t> dims_of(const OracleCase& c) { return c.kw<std::vector<int64_t>>("dim", {}); }

// The op of an oracle case applied to its leaves.
Tensor run_case(const OracleCase& c, const TL& x, Device) {
  const std::string& op = c.op;
  if (op == "linalg_inv") return linalg::inv(x[0]);
  if (op == "linalg_det") return linalg::det(x[0]);
  if (op == "linalg_slogdet") return std::get<1>(linalg::slogdet(x[0]));
  if (op == "linalg_slogdet_sign") return std::get<0>(linalg::slogdet(x[0]));
  if (op == "linalg_solve") return linalg::solve(x[0], x[1], c.kw<bool>("left", true));
  if (op == "linalg_cholesky") return linalg::cholesky(x[0], c.kw<bool>("upper", false));
  if (op == "linalg_qr") return qr_out(x[0], c.kw<std::string>("mode", "reduced"));
  if (op == "linalg_eigh") return eigh_out(x[0], c.kw<std::string>("UPLO", "L"));
  if (op == "linalg_eigvalsh") return linalg::eigvalsh(x[0]);
  if (op == "linalg_svd") return svd_out(x[0], c.kw<bool>("full_matrices", true));
  if (op == "linalg_svdvals") return linalg::svdvals(x[0]);
  const std::string ord = c.kw<std::string>("ord", "2");
  if (op == "linalg_matrix_norm") {
    const std::vector<int64_t> d = dims_of(c);
    if (ord == "fro" || ord == "nuc") return linalg::matrix_norm(x[0], ord, d, c.kw<bool>("keepdim", false));
    return linalg::matrix_norm(x[0], std::stod(ord), d, c.kw<bool>("keepdim", false));
  }
  if (op == "linalg_vector_norm")
    return linalg::vector_norm(x[0], std::stod(ord), dims_of(c), c.kw<bool>("keepdim", false));
  return Tensor();
}

}  // namespace

TEST_CASE("linalg matches PyTorch 1.13 on the oracle's values and gradients", "[autograd][oracle][linalg]") {
  const std::set<std::string> kOps = {"linalg_inv",        "linalg_det",      "linalg_slogdet", "linalg_slogdet_sign",
                                      "linalg_solve",      "linalg_cholesky", "linalg_qr",      "linalg_eigh",
                                      "linalg_eigvalsh",   "linalg_svd",      "linalg_svdvals", "linalg_matrix_norm",
                                      "linalg_vector_norm"};
  // linalg_more_test.cpp runs the second set.
  const int cases = wick::test::check_oracle_ops(kOps, run_case,
                                                 {.out_rtol = kOutRtol,
                                                  .grad_rtol = kGradRtol,
                                                  .atol = kAtol,
                                                  .require_defined = true,
                                                  .dtype = wick::test::OracleDtype::kUnchecked})
                        .total;
  CHECK(cases >= 50);
}

TEST_CASE("linalg by hand on 2x2 matrices", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a = f64({4, 7, 2, 6}, {2, 2}, dev).requires_grad_(true);
    CHECK_ALLCLOSE(linalg::inv(a), f64({0.6, -0.7, -0.2, 0.4}, {2, 2}, dev), 1e-14, 1e-15);
    const Tensor d = linalg::det(a);
    CHECK_VALUES(d, {10});
    d.backward();
    CHECK_ALLCLOSE(a.grad(), f64({6, -2, -7, 4}, {2, 2}, dev), 1e-14, 1e-14);  // the cofactor matrix
    // A singular matrix: det 0, and its gradient is still the cofactor matrix (through the SVD).
    const Tensor s = f64({1, 2, 2, 4}, {2, 2}, dev).requires_grad_(true);
    const Tensor ds = linalg::det(s);
    CHECK_VALUES(ds, {0});
    ds.backward();
    CHECK_ALLCLOSE(s.grad(), f64({4, -2, -2, 1}, {2, 2}, dev), 1e-12, 1e-12);
    auto [sign, logabs] = linalg::slogdet(f64({0, 2, 3, 0}, {2, 2}, dev));
    CHECK_VALUES(sign, {-1});
    CHECK_ALLCLOSE(logabs, f64({std::log(6.0)}, {}, dev), 1e-14, 0);
    auto [zsign, zlog] = linalg::slogdet(f64({1, 2, 2, 4}, {2, 2}, dev));
    CHECK_VALUES(zsign, {0});
    CHECK(std::isinf(zlog.item<double>()));
    CHECK_ALLCLOSE(linalg::cholesky(f64({4, 2, 2, 3}, {2, 2}, dev)), f64({2, 0, 1, std::sqrt(2.0)}, {2, 2}, dev), 1e-14,
                   0);
    CHECK_ALLCLOSE(linalg::cholesky(f64({4, 2, 2, 3}, {2, 2}, dev), true), f64({2, 1, 0, std::sqrt(2.0)}, {2, 2}, dev),
                   1e-14, 0);
    CHECK_ALLCLOSE(linalg::solve(a.detach(), f64({1, 2}, {2}, dev)), f64({-0.8, 0.6}, {2}, dev), 1e-14, 1e-15);
    auto [L, V] = linalg::eigh(f64({2, 1, 1, 2}, {2, 2}, dev));
    CHECK_ALLCLOSE(L, f64({1, 3}, {2}, dev), 1e-14, 0);
    CHECK_ALLCLOSE(abs(V), f64({1, 1, 1, 1}, {2, 2}, dev) * std::sqrt(0.5), 1e-14, 0);
    CHECK_ALLCLOSE(linalg::svdvals(f64({3, 0, 0, -4}, {2, 2}, dev)), f64({4, 3}, {2}, dev), 1e-14, 0);
    const Tensor m = f64({1, -2, 3, 4}, {2, 2}, dev);
    CHECK_VALUES(linalg::matrix_norm(m, 1.0), {6});
    CHECK_VALUES(linalg::matrix_norm(m, -1.0), {4});
    CHECK_VALUES(linalg::matrix_norm(m, std::numeric_limits<double>::infinity()), {7});
    CHECK_ALLCLOSE(linalg::matrix_norm(m), f64({std::sqrt(30.0)}, {}, dev), 1e-14, 0);
    auto [Q, R] = linalg::qr(f64({3, 0, 4, 5}, {2, 2}, dev));
    CHECK_ALLCLOSE(abs(R), f64({5, 4, 0, 3}, {2, 2}, dev), 1e-14, 1e-15);
    CHECK_ALLCLOSE(matmul(Q, R), f64({3, 0, 4, 5}, {2, 2}, dev), 1e-14, 1e-15);
  }
}

TEST_CASE("linalg gradchecks and double backward in float64", "[autograd][linalg][gradcheck]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor I3 = eye(3, TensorOptions(kFloat64).device(dev)) * 3.0;
    int which = 0;
    const auto check = [&which](const std::function<TL(const TL&)>& fn, const TL& in) {
      INFO("check " << which++);
      CHECK_GRADCHECK(fn, in);
      wick::test::check_double_backward(fn, in);
    };
    check([&](const TL& x) { return TL{linalg::inv(x[0] + I3)}; }, {leaf({2, 3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::det(x[0])}; }, {leaf({2, 3, 3}, dev)});
    check([&](const TL& x) { return TL{std::get<1>(linalg::slogdet(x[0] + I3))}; }, {leaf({3, 3}, dev)});
    check([&](const TL& x) { return TL{linalg::solve(x[0] + I3, x[1])}; }, {leaf({2, 3, 3}, dev), leaf({3, 2}, dev)});
    check([&](const TL& x) { return TL{linalg::solve(x[0] + I3, x[1], false)}; },
          {leaf({3, 3}, dev), leaf({2, 3}, dev)});
    // Symmetric inputs for the ops that read one triangle: the perturbation stays symmetric.
    check([&](const TL& x) { return TL{linalg::cholesky(matmul(x[0], mT(x[0])) + I3)}; }, {leaf({2, 3, 3}, dev)});
    check([&](const TL& x) { return TL{linalg::cholesky(matmul(x[0], mT(x[0])) + I3, true)}; }, {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{qr_out(x[0], "reduced")}; }, {leaf({4, 3}, dev)});
    check([](const TL& x) { return TL{qr_out(x[0], "reduced")}; }, {leaf({2, 3, 5}, dev)});
    check([](const TL& x) { return TL{eigh_out(x[0] + mT(x[0]), "L")}; }, {leaf({2, 3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::eigvalsh(x[0] + mT(x[0]), "U")}; }, {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{svd_out(x[0], false)}; }, {leaf({4, 3}, dev)});
    check([](const TL& x) { return TL{svd_out(x[0], true)}; }, {leaf({2, 3, 4}, dev)});
    check([](const TL& x) { return TL{linalg::svdvals(x[0])}; }, {leaf({3, 4}, dev)});
    check([](const TL& x) { return TL{linalg::matrix_norm(x[0], "nuc")}; }, {leaf({2, 3, 4}, dev)});
    check([](const TL& x) { return TL{linalg::matrix_norm(x[0], -2.0, {0, 2}, true)}; }, {leaf({3, 2, 4}, dev)});
    // det's gradient at a singular matrix (the SVD formula) against central differences.
    Tensor rank2 =
        matmul(randn({3, 2}, TensorOptions(kFloat64).device(dev)), randn({2, 3}, TensorOptions(kFloat64).device(dev)));
    CHECK_GRADCHECK([](const TL& x) { return TL{linalg::det(x[0])}; }, {rank2.requires_grad_(true)});
  }
}

TEST_CASE("linalg in float32 agrees with float64", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a =
        randn({2, 4, 4}, TensorOptions(kFloat64).device(dev)) + eye(4, TensorOptions(kFloat64).device(dev)) * 4.0;
    const Tensor a32 = a.to(kFloat32);
    const auto close = [&](const Tensor& t32, const Tensor& t64) {
      CHECK(t32.dtype() == kFloat32);
      CHECK(t32.device() == dev);
      CHECK_ALLCLOSE(t32.to(kFloat64), t64, 1e-4, 1e-4);
    };
    close(linalg::inv(a32), linalg::inv(a));
    close(linalg::det(a32), linalg::det(a));
    close(linalg::solve(a32, a32), linalg::solve(a, a));
    const Tensor spd = matmul(a, mT(a)), spd32 = spd.to(kFloat32);
    close(linalg::cholesky(spd32), linalg::cholesky(spd));
    close(linalg::eigvalsh(spd32), linalg::eigvalsh(spd));
    close(linalg::svdvals(a32), linalg::svdvals(a));
    close(qr_out(a32, "reduced"), qr_out(a, "reduced"));
    close(linalg::matrix_norm(a32, "nuc"), linalg::matrix_norm(a, "nuc"));
  }
}

TEST_CASE("linalg refuses bad input with typed errors", "[autograd][linalg][errors]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    check_error<ValueError>(
        [&] {
          linalg::inv(f64({1, 2, 3, 4, 5, 6}, {2, 3}, dev));
        },
        {"linalg.inv", "square", "[2, 3]"});
    const Tensor batch = f64({1, 0, 0, 1, 1, 2, 2, 4}, {2, 2, 2}, dev);
    check_error<ValueError>([&] { linalg::inv(batch); },
                            {"linalg.inv: (Batch element 1): The diagonal element 2 is zero", "singular", "[2, 2, 2]"});
    check_error<ValueError>(
        [&] {
          linalg::solve(batch, f64({1, 1}, {2}, dev));
        },
        {"linalg.solve", "Batch element 1", "singular"});
    check_error<ValueError>(
        [&] {
          linalg::cholesky(f64({1, 2, 2, 1}, {2, 2}, dev));
        },
        {"linalg.cholesky", "not positive-definite", "leading minor of order 2", "[2, 2]"});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    check_error<ValueError>([&] { linalg::svd(f64({1, nan, 0, 1}, {2, 2}, dev)); }, {"linalg.svd", "NaN", "[2, 2]"});
    check_error<ValueError>([&] { linalg::eigh(f64({1, 0, nan, 1}, {2, 2}, dev)); }, {"linalg.eigh", "NaN"});
    check_error<TypeError>(
        [&] {
          linalg::det(ones({2, 2}, TensorOptions(kInt64).device(dev)));
        },
        {"linalg.det", "floating-point"});
    check_error<ValueError>([&] { linalg::det(f64({1, 2}, {2}, dev)); }, {"linalg.det", "at least 2 dimensions"});
    check_error<ValueError>([&] { linalg::qr(f64({1, 2, 3, 4}, {2, 2}, dev), "full"); }, {"linalg.qr", "'full'"});
    check_error<ValueError>([&] { linalg::eigh(f64({1, 2, 2, 1}, {2, 2}, dev), "X"); }, {"UPLO", "'X'"});
    check_error<ValueError>(
        [&] {
          linalg::matrix_norm(f64({1, 2, 3, 4}, {2, 2}, dev), 3.0);
        },
        {"linalg.matrix_norm", "Order 3"});
    check_error<ValueError>(
        [&] {
          linalg::solve(eye(3, TensorOptions(kFloat64).device(dev)), f64({1, 2}, {2}, dev));
        },
        {"linalg.solve", "Incompatible shapes"});
    // Not differentiable where PyTorch's qr is not: refused in backward, naming the mode.
    const Tensor r = leaf({3, 2}, dev);
    check_error<NotImplementedError>([&] { sum(std::get<1>(linalg::qr(r, "r"))).backward(); }, {"mode='r'"});
    check_error<NotImplementedError>([&] { sum(std::get<0>(linalg::qr(r, "complete"))).backward(); },
                                     {"mode='complete'"});
  }
}

// Note [LAPACK workspace sizes]: ssyevd's float32 answer for n = 3000 (1 + 6n + 2n^2 = 18018001)
// is not a float; the size passed is never below the documented minimum, and an answer past
// INT_MAX (wrapped by LAPACK's 32-bit arithmetic) falls back to that minimum.
TEST_CASE("linalg LAPACK workspace queries round up and keep the minimum", "[autograd][linalg]") {
  const int64_t need = lapack::syevd_min_lwork(3000, true);
  CHECK(need == 18018001);
  const float q = static_cast<float>(need);
  CHECK(static_cast<int64_t>(q) < need);  // the float rounds the answer down
  CHECK(lapack::work_size(q, 1) >= need);
  CHECK(lapack::work_size(q, need) >= need);
  CHECK(lapack::work_size(16777216.0f, 1) == 16777218);  // 2^24 up one ulp
  CHECK(lapack::work_size(7.0, 1) == 8);                 // double: 7 up one ulp, then ceil
  CHECK(lapack::work_size(3.0e9f, 5) == 5);
  CHECK(lapack::work_size(-5.0f, 7) == 7);
  CHECK(lapack::work_size(std::numeric_limits<float>::quiet_NaN(), 7) == 7);
  CHECK(lapack::syevd_min_lwork(1, true) == 1);
  CHECK(lapack::syevd_min_lwork(10, false) == 21);
  CHECK(lapack::syevd_min_liwork(10, true) == 53);
  CHECK(lapack::gesdd_min_lwork(3, 5, 'S') == 4 * 9 + 7 * 3 + 15);
  CHECK(lapack::gesdd_min_lwork(3, 5, 'A') == 4 * 9 + 6 * 3 + 5 + 15);
  CHECK(lapack::gesdd_min_lwork(3, 5, 'N') == 9 + 21 + 15);
  CHECK(lapack::syevd_min_lwork(40000, true) > INT_MAX);  // n^2 fits in int, 2n^2 does not
}

// A matrix whose workspace passes LAPACK's int is refused before it is copied: an expanded
// 40000 x 40000 matrix (n^2 fits in int, syevd's 2n^2 and gesdd's 4k^2 do not) takes no memory.
TEST_CASE("linalg refuses matrices whose LAPACK workspace passes INT_MAX", "[autograd][linalg][errors]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor big = expand(ones({1, 1}, TensorOptions(kFloat64).device(dev)), {40000, 40000});
    check_error<ValueError>([&] { linalg::eigh(big); }, {"linalg.eigh", "syevd", "[40000, 40000]"});
    check_error<ValueError>([&] { linalg::svd(big, false); }, {"linalg.svd", "gesdd", "[40000, 40000]"});
    const Tensor leaf_big =
        expand(ones({1, 1}, TensorOptions(kFloat64).device(dev)).requires_grad_(true), {40000, 40000});
    check_error<ValueError>([&] { linalg::eigvalsh(leaf_big); }, {"linalg.eigvalsh", "syevd", "[40000, 40000]"});
    // eigvalsh's other errors name it too.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    check_error<ValueError>([&] { linalg::eigvalsh(f64({1, 0, nan, 1}, {2, 2}, dev)); }, {"linalg.eigvalsh", "NaN"});
  }
}

// An all-zero matrix has |det| = 0 = eps ||A||_F: singular, and PyTorch 1.13's gradient is zero
// (the cofactor matrix of a zero matrix with n >= 2), not an error.
TEST_CASE("linalg det backward at an all-zero matrix", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    for (int64_t n : {2, 3}) {
      const Tensor z = zeros({n, n}, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
      const Tensor d = linalg::det(z);
      CHECK_VALUES(d, {0});
      d.backward();
      CHECK_ALLCLOSE(z.grad(), zeros({n, n}, TensorOptions(kFloat64).device(dev)), 0, 0);
    }
  }
}
