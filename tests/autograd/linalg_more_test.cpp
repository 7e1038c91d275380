// wick::linalg's second set (linalg_more.h): the PyTorch oracle's cases (generate.py's
// linalg_more_cases) on every test device, forward at rtol 1e-10 and gradients at rtol 1e-8 in
// float64; 2x2 and 3x3 cases worked by hand; float64 gradchecks and double backward of every
// differentiable op; float32 against float64; the errors (shapes, dtypes, non-square, singular
// with the batch element, bad pivots, drivers and orders).
#include <catch2/catch.hpp>
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
#include "wick/autograd/linalg.h"
#include "wick/core/error.h"
#include "wick/core/lapack_work.h"

using namespace wick;
using wick::test::check_error;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-10, kGradRtol = 1e-8, kAtol = 1e-11;
const double kInf = std::numeric_limits<double>::infinity();

using wick::test::f64;
Tensor leaf(IntArrayRef shape, Device dev) {
  return randn(shape, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
}
Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

const std::set<std::string>& ops() {
  static const std::set<std::string> s = {"linalg_solve_triangular",
                                          "cholesky_solve",
                                          "cholesky_inverse",
                                          "linalg_lu_factor",
                                          "linalg_lu",
                                          "linalg_lu_solve",
                                          "linalg_lstsq",
                                          "linalg_lstsq_aux",
                                          "linalg_pinv",
                                          "linalg_matrix_rank",
                                          "linalg_matrix_power",
                                          "linalg_matrix_exp",
                                          "linalg_cross",
                                          "linalg_multi_dot",
                                          "linalg_vecdot",
                                          "linalg_cond"};
  return s;
}

std::optional<double> opt(const OracleCase& c, const char* key) {
  if (!c.kwargs.contains(key)) return std::nullopt;
  return c.kwargs[key].get<double>();
}

// The op of an oracle case applied to its leaves (generate.py's linalg_more_cases).
Tensor run_case(const OracleCase& c, const TL& x, Device) {
  const std::string& op = c.op;
  if (op == "linalg_solve_triangular")
    return linalg::solve_triangular(x[0], x[1], c.kw<bool>("upper", false), c.kw<bool>("left", true),
                                    c.kw<bool>("unitriangular", false));
  if (op == "cholesky_solve") return linalg::cholesky_solve(x[0], x[1], c.kw<bool>("upper", false));
  if (op == "cholesky_inverse") return linalg::cholesky_inverse(x[0], c.kw<bool>("upper", false));
  if (op == "linalg_lu_factor") {
    auto [LU, piv] = linalg::lu_factor(x[0]);
    return cat({flatten(LU, -2, -1), piv.to(kFloat64)}, -1);
  }
  if (op == "linalg_lu") {
    auto [P, L, U] = linalg::lu(x[0]);
    return cat({flatten(P, -2, -1), flatten(L, -2, -1), flatten(U, -2, -1)}, -1);
  }
  if (op == "linalg_lu_solve")
    return linalg::lu_solve(x[0], x[1], x[2], c.kw<bool>("left", true), c.kw<bool>("adjoint", false));
  if (op == "linalg_lstsq")
    return std::get<0>(linalg::lstsq(x[0], x[1], std::nullopt, c.kw<std::string>("driver", "")));
  if (op == "linalg_lstsq_aux") {
    auto [X, res, rank, sv] = linalg::lstsq(x[0], x[1], std::nullopt, "gelsd");
    return cat({flatten(res), flatten(sv), flatten(rank.to(kFloat64))});
  }
  if (op == "linalg_pinv") return linalg::pinv(x[0], opt(c, "atol"), opt(c, "rtol"), c.kw<bool>("hermitian", false));
  if (op == "linalg_matrix_rank")
    return linalg::matrix_rank(x[0], opt(c, "atol"), opt(c, "rtol"), c.kw<bool>("hermitian", false));
  if (op == "linalg_matrix_power") return linalg::matrix_power(x[0], c.kw<int64_t>("n", 1));
  if (op == "linalg_matrix_exp") return linalg::matrix_exp(x[0]);
  if (op == "linalg_cross") return linalg::cross(x[0], x[1], c.kw<int64_t>("dim", -1));
  if (op == "linalg_multi_dot") return linalg::multi_dot(x);
  if (op == "linalg_vecdot") return linalg::vecdot(x[0], x[1], c.kw<int64_t>("dim", -1));
  if (op == "linalg_cond") {
    const std::string p = c.kw<std::string>("p", "None");
    if (p == "None") return linalg::cond(x[0]);
    if (p == "fro" || p == "nuc") return linalg::cond(x[0], p);
    return linalg::cond(x[0], p == "inf" ? kInf : p == "-inf" ? -kInf : std::stod(p));
  }
  return Tensor();
}

}  // namespace

TEST_CASE("linalg more matches PyTorch 1.13 on the oracle's values and gradients", "[autograd][oracle][linalg]") {
  const int cases = wick::test::check_oracle_ops(ops(), run_case,
                                                 {.out_rtol = kOutRtol,
                                                  .grad_rtol = kGradRtol,
                                                  .atol = kAtol,
                                                  .require_defined = true,
                                                  .dtype = wick::test::OracleDtype::kRequire})
                        .total;
  CHECK(cases >= 70);
}

TEST_CASE("linalg more by hand on small matrices", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor U = f64({2, 1, 0, 4}, {2, 2}, dev), b = f64({4, 8}, {2, 1}, dev);
    CHECK_ALLCLOSE(linalg::solve_triangular(U, b, true), f64({1, 2}, {2, 1}, dev), 1e-15, 0);
    // Only the named triangle is read: garbage below the diagonal changes nothing.
    CHECK_ALLCLOSE(linalg::solve_triangular(f64({2, 1, 99, 4}, {2, 2}, dev), b, true), f64({1, 2}, {2, 1}, dev), 1e-15,
                   0);
    CHECK_ALLCLOSE(linalg::solve_triangular(U, f64({1, 2}, {1, 2}, dev), true, false, true), f64({1, 1}, {1, 2}, dev),
                   1e-15, 0);  // X [[1, 1], [0, 1]] = [1, 2]
    auto [LU, piv] = linalg::lu_factor(f64({1, 2, 3, 4}, {2, 2}, dev));
    CHECK_ALLCLOSE(LU, f64({3, 4, 1.0 / 3, 2.0 / 3}, {2, 2}, dev), 1e-15, 1e-16);
    CHECK(piv.dtype() == kInt64);
    CHECK_VALUES(piv, {2, 2});
    auto [P, L, Uf] = linalg::lu(f64({1, 2, 3, 4}, {2, 2}, dev));
    CHECK_VALUES(P, {0, 1, 1, 0});
    CHECK_ALLCLOSE(matmul(P, matmul(L, Uf)), f64({1, 2, 3, 4}, {2, 2}, dev), 1e-15, 1e-15);
    CHECK_ALLCLOSE(linalg::lu_solve(LU, piv, f64({5, 11}, {2, 1}, dev)), f64({1, 2}, {2, 1}, dev), 1e-14, 1e-15);
    const Tensor L2 = f64({2, 0, 1, 1}, {2, 2}, dev);  // A = L L^T = [[4, 2], [2, 2]]
    CHECK_ALLCLOSE(linalg::cholesky_inverse(L2), f64({0.5, -0.5, -0.5, 1}, {2, 2}, dev), 1e-15, 1e-16);
    CHECK_ALLCLOSE(linalg::cholesky_solve(f64({6, 4}, {2, 1}, dev), L2), f64({1, 1}, {2, 1}, dev), 1e-15, 1e-16);
    CHECK_ALLCLOSE(linalg::cholesky_solve(f64({6, 4}, {2, 1}, dev), mT(L2), true), f64({1, 1}, {2, 1}, dev), 1e-15,
                   1e-16);
    // The line through (0, 1), (1, 2), (2, 4): 5/6 + 3/2 t, squared residual 1/6.
    const Tensor A = f64({1, 0, 1, 1, 1, 2}, {3, 2}, dev), y = f64({1, 2, 4}, {3}, dev);
    for (const char* driver : {"gels", "gelsy", "gelsd"}) {
      INFO(driver);
      auto [X, res, rank, sv] = linalg::lstsq(A, y, std::nullopt, driver);
      CHECK_ALLCLOSE(X, f64({5.0 / 6, 1.5}, {2}, dev), 1e-14, 0);
      if (std::string(driver) != "gelsy") CHECK_ALLCLOSE(res, f64({1.0 / 6}, {1}, dev), 1e-13, 0);
      if (std::string(driver) == "gelsy") CHECK(res.numel() == 0);
      if (std::string(driver) != "gels") CHECK_VALUES(rank, {2});
    }
    const Tensor r1 = f64({1, 2, 2, 4}, {2, 2}, dev);
    CHECK_ALLCLOSE(linalg::pinv(r1), r1 / 25.0, 1e-14, 1e-16);
    CHECK_ALLCLOSE(linalg::pinv(r1, std::nullopt, std::nullopt, true), r1 / 25.0, 1e-14, 1e-16);
    CHECK_VALUES(linalg::matrix_rank(r1), {1});
    CHECK_VALUES(linalg::matrix_rank(f64({1, 0, 0, 1e-3}, {2, 2}, dev), 1e-2), {1});
    CHECK_VALUES(linalg::matrix_power(f64({1, 1, 0, 1}, {2, 2}, dev), 5), {1, 5, 0, 1});
    CHECK_ALLCLOSE(linalg::matrix_power(f64({1, 1, 0, 1}, {2, 2}, dev), -2), f64({1, -2, 0, 1}, {2, 2}, dev), 1e-15,
                   1e-15);
    CHECK_VALUES(linalg::matrix_power(f64({1, 1, 0, 1}, {2, 2}, dev), 0), {1, 0, 0, 1});
    CHECK_ALLCLOSE(linalg::matrix_exp(f64({0, 1, 0, 0}, {2, 2}, dev)), f64({1, 1, 0, 1}, {2, 2}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(linalg::matrix_exp(f64({1, 0, 0, 2}, {2, 2}, dev)),
                   f64({std::exp(1.0), 0, 0, std::exp(2.0)}, {2, 2}, dev), 1e-14, 0);
    const double t = 3.0;  // a rotation: a norm of 3 takes two squarings
    CHECK_ALLCLOSE(linalg::matrix_exp(f64({0, -t, t, 0}, {2, 2}, dev)),
                   f64({std::cos(t), -std::sin(t), std::sin(t), std::cos(t)}, {2, 2}, dev), 1e-13, 1e-15);
    CHECK_VALUES(linalg::cross(f64({1, 0, 0}, {3}, dev), f64({0, 1, 0}, {3}, dev)), {0, 0, 1});
    CHECK_VALUES(linalg::vecdot(f64({1, 2, 3}, {3}, dev), f64({4, 5, 6}, {3}, dev)), {32});
    CHECK_VALUES(linalg::multi_dot({f64({1, 2}, {2}, dev), f64({1, 0, 0, 1}, {2, 2}, dev), f64({3, 4}, {2}, dev)}),
                 {11});
    const Tensor d = f64({1, 0, 0, 4}, {2, 2}, dev);
    CHECK_ALLCLOSE(linalg::cond(d), f64({4}, {}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(linalg::cond(d, -2.0), f64({0.25}, {}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(linalg::cond(d, 1.0), f64({4}, {}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(linalg::cond(d, "fro"), f64({17.0 / 4}, {}, dev), 1e-15, 0);
    CHECK_ALLCLOSE(linalg::cond(d, "nuc"), f64({5 * 1.25}, {}, dev), 1e-15, 0);
    CHECK_VALUES(linalg::cond(r1, kInf), {kInf});  // exactly singular: inf, not an error
  }
}

TEST_CASE("linalg more gradchecks and double backward in float64", "[autograd][linalg][gradcheck]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor I3 = eye(3, TensorOptions(kFloat64).device(dev)) * 3.0;
    int which = 0;
    const auto check = [&which](const std::function<TL(const TL&)>& fn, const TL& in) {
      INFO("check " << which++);
      CHECK_GRADCHECK(fn, in);
      wick::test::check_double_backward(fn, in);
    };
    const auto spd_factor = [&](const Tensor& x, bool upper) { return linalg::cholesky(matmul(x, mT(x)) + I3, upper); };
    check([&](const TL& x) { return TL{linalg::solve_triangular(x[0] + I3, x[1], true)}; },
          {leaf({2, 3, 3}, dev), leaf({3, 2}, dev)});
    check([&](const TL& x) { return TL{linalg::solve_triangular(x[0] + I3, x[1], false, false, true)}; },
          {leaf({3, 3}, dev), leaf({2, 2, 3}, dev)});
    check([&](const TL& x) { return TL{linalg::cholesky_solve(x[1], spd_factor(x[0], false))}; },
          {leaf({3, 3}, dev), leaf({2, 3, 2}, dev)});
    check([&](const TL& x) { return TL{linalg::cholesky_solve(x[1], spd_factor(x[0], true), true)}; },
          {leaf({3, 3}, dev), leaf({3, 1}, dev)});
    check([&](const TL& x) { return TL{linalg::cholesky_inverse(spd_factor(x[0], false))}; }, {leaf({2, 3, 3}, dev)});
    check([&](const TL& x) { return TL{linalg::cholesky_inverse(spd_factor(x[0], true), true)}; }, {leaf({3, 3}, dev)});
    for (const auto& s : {std::vector<int64_t>{3, 3}, {4, 3}, {2, 3, 5}}) {
      check([](const TL& x) { return TL{std::get<0>(linalg::lu_factor(x[0]))}; }, {leaf(s, dev)});
      check(
          [](const TL& x) {
            auto [P, L, U] = linalg::lu(x[0]);
            return TL{L, U};
          },
          {leaf(s, dev)});
    }
    for (bool left : {true, false})
      for (bool adjoint : {false, true}) {
        const Tensor LU = std::get<0>(linalg::lu_factor(leaf({2, 3, 3}, dev).detach() + I3));
        const Tensor piv = std::get<1>(linalg::lu_factor(LU));  // any valid pivots: LU is only data here
        check([&, left, adjoint](const TL& x) { return TL{linalg::lu_solve(x[0], piv, x[1], left, adjoint)}; },
              {LU.detach().requires_grad_(true), leaf(left ? IntArrayRef{3, 2} : IntArrayRef{2, 3}, dev)});
      }
    check([](const TL& x) { return TL{std::get<0>(linalg::lstsq(x[0], x[1], std::nullopt, "gelsd"))}; },
          {leaf({2, 5, 3}, dev), leaf({5, 2}, dev)});
    check([](const TL& x) { return TL{std::get<0>(linalg::lstsq(x[0], x[1]))}; }, {leaf({3, 4}, dev), leaf({3}, dev)});
    check([](const TL& x) { return TL{linalg::pinv(x[0])}; }, {leaf({2, 4, 3}, dev)});
    check([](const TL& x) { return TL{linalg::pinv(x[0])}; }, {leaf({3, 5}, dev)});
    check([](const TL& x) { return TL{linalg::pinv(x[0] + mT(x[0]), std::nullopt, std::nullopt, true)}; },
          {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::matrix_power(x[0], 5)}; }, {leaf({2, 3, 3}, dev)});
    check([&](const TL& x) { return TL{linalg::matrix_power(x[0] + I3, -3)}; }, {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::matrix_exp(x[0])}; }, {leaf({2, 3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::matrix_exp(x[0] * 4.0)}; }, {leaf({3, 3}, dev)});  // squarings
    check([](const TL& x) { return TL{linalg::cross(x[0], x[1], 0)}; }, {leaf({3, 2}, dev), leaf({3, 1}, dev)});
    check([](const TL& x) { return TL{linalg::multi_dot(x)}; },
          {leaf({4}, dev), leaf({4, 2}, dev), leaf({2, 5}, dev), leaf({5, 3}, dev)});
    check([](const TL& x) { return TL{linalg::vecdot(x[0], x[1], 0)}; }, {leaf({3, 2}, dev), leaf({3, 1}, dev)});
    check([](const TL& x) { return TL{linalg::cond(x[0])}; }, {leaf({2, 3, 4}, dev)});
    check([](const TL& x) { return TL{linalg::cond(x[0], 1.0)}; }, {leaf({2, 3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::cond(x[0], -kInf)}; }, {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::cond(x[0], "fro")}; }, {leaf({3, 3}, dev)});
    check([](const TL& x) { return TL{linalg::cond(x[0], "nuc")}; }, {leaf({3, 3}, dev)});
  }
}

TEST_CASE("linalg more in float32 agrees with float64", "[autograd][linalg]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a =
        randn({2, 4, 4}, TensorOptions(kFloat64).device(dev)) * 0.5 + eye(4, TensorOptions(kFloat64).device(dev)) * 3.0;
    const Tensor b = randn({2, 4, 3}, TensorOptions(kFloat64).device(dev));
    const Tensor a32 = a.to(kFloat32), b32 = b.to(kFloat32);
    const auto close = [&](const Tensor& t32, const Tensor& t64) {
      CHECK(t32.dtype() == kFloat32);
      CHECK(t32.device() == dev);
      CHECK_ALLCLOSE(t32.to(kFloat64), t64, 1e-4, 1e-4);
    };
    close(linalg::solve_triangular(a32, b32, false), linalg::solve_triangular(a, b, false));
    close(linalg::cholesky_inverse(triu(a32), true), linalg::cholesky_inverse(triu(a), true));
    close(std::get<0>(linalg::lu_factor(a32)), std::get<0>(linalg::lu_factor(a)));
    close(std::get<0>(linalg::lstsq(a32, b32, std::nullopt, "gelsd")),
          std::get<0>(linalg::lstsq(a, b, std::nullopt, "gelsd")));
    close(linalg::pinv(a32), linalg::pinv(a));
    close(linalg::matrix_exp(a32), linalg::matrix_exp(a));
    close(linalg::cond(a32, 1.0), linalg::cond(a, 1.0));
    CHECK_VALUES(linalg::matrix_rank(a32), {4, 4});
  }
}

TEST_CASE("linalg more refuses bad input with typed errors", "[autograd][linalg][errors]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor A3 = eye(3, TensorOptions(kFloat64).device(dev)), B23 = f64({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
    check_error<ValueError>(
        [&] {
          linalg::solve_triangular(A3, f64({1, 2, 3, 4}, {2, 2}, dev), true);
        },
        {"linalg.solve_triangular", "Incompatible shapes", "[2, 2]"});
    check_error<ValueError>(
        [&] {
          linalg::solve_triangular(A3, f64({1, 2, 3}, {3}, dev), true);
        },
        {"linalg.solve_triangular", "at least 2 dimensions"});
    check_error<ValueError>([&] { linalg::solve_triangular(B23, B23, true); }, {"square", "[2, 3]"});
    check_error<TypeError>([&] { linalg::solve_triangular(A3, B23.to(kFloat32), true, false); }, {"dtype"});
    check_error<ValueError>([&] { linalg::cholesky_solve(B23, A3); }, {"cholesky_solve", "Incompatible matrix sizes"});
    check_error<ValueError>([&] { linalg::cholesky_inverse(B23); }, {"cholesky_inverse", "square"});
    const Tensor sing = f64({1, 0, 0, 1, 1, 2, 2, 4}, {2, 2, 2}, dev);
    check_error<ValueError>([&] { linalg::lu_factor(sing); },
                            {"linalg.lu_factor: (Batch element 1): U[2,2] is zero", "linalg.lu(A, pivot)"});
    CHECK_VALUES(std::get<2>(linalg::lu(sing)), {1, 0, 0, 1, 2, 4, 0, 0});  // lu returns values
    Tensor LU, piv;  // not a structured binding: clang 14 cannot capture one in a lambda
    std::tie(LU, piv) = linalg::lu_factor(A3);
    check_error<ValueError>([&] { linalg::lu_solve(LU, piv * 5, A3); }, {"linalg.lu_solve", "pivots holds 5"});
    check_error<TypeError>([&] { linalg::lu_solve(LU, piv.to(kFloat64), A3); }, {"linalg.lu_solve", "int64"});
    check_error<ValueError>([&] { linalg::lu_solve(LU, narrow(piv, 0, 0, 2), A3); }, {"linalg.lu_solve", "pivots"});
    check_error<ValueError>([&] { linalg::lu_solve(LU, piv, B23); }, {"linalg.lu_solve", "Incompatible shapes"});
    check_error<ValueError>(
        [&] {
          linalg::lstsq(f64({1, 1, 1, 1, 1, 1}, {3, 2}, dev), A3, std::nullopt, "gels");
        },
        {"linalg.lstsq", "does not have full rank"});
    check_error<ValueError>([&] { linalg::lstsq(A3, A3, std::nullopt, "gelss"); }, {"linalg.lstsq", "driver"});
    check_error<ValueError>([&] { linalg::lstsq(A3, B23); }, {"linalg.lstsq", "size(-2)"});
    check_error<ValueError>([&] { linalg::pinv(B23, std::nullopt, std::nullopt, true); }, {"linalg.pinv", "square"});
    check_error<ValueError>([&] { linalg::matrix_power(B23, 2); }, {"linalg.matrix_power", "square"});
    check_error<ValueError>([&] { linalg::matrix_power(sing, -1); }, {"linalg.inv", "Batch element 1", "singular"});
    check_error<TypeError>(
        [&] {
          linalg::matrix_exp(ones({2, 2}, TensorOptions(kInt64).device(dev)));
        },
        {"linalg.matrix_exp", "floating-point"});
    check_error<ValueError>([&] { linalg::cross(B23, f64({1, 2, 3}, {3}, dev)); }, {"linalg.cross", "same number"});
    check_error<Error>([&] { linalg::cross(A3, A3, 3); }, {"linalg.cross"});
    check_error<ValueError>([&] { linalg::cross(mT(B23), mT(B23), 1); }, {"linalg.cross", "must have length 3"});
    check_error<ValueError>([&] { linalg::multi_dot({A3}); }, {"multi_dot", "at least 2"});
    check_error<ValueError>([&] { linalg::multi_dot({A3, B23}); }, {"multi_dot", "cannot be multiplied"});
    check_error<ValueError>([&] { linalg::multi_dot({A3, f64({1}, {1, 1, 1}, dev)}); }, {"the last tensor", "3D"});
    check_error<TypeError>([&] { linalg::vecdot(B23, B23.to(kFloat32)); }, {"linalg.vecdot", "same dtype"});
    check_error<ValueError>([&] { linalg::cond(A3, 3.0); }, {"linalg.cond", "invalid norm type"});
    check_error<ValueError>([&] { linalg::cond(B23, 1.0); }, {"linalg.cond", "square"});
    check_error<ValueError>([&] { linalg::cond(A3, "max"); }, {"linalg.cond", "max"});
    CHECK(linalg::cond(zeros({0, 3, 3}, TensorOptions(kFloat64).device(dev))).sizes() == IntArrayRef{0});
  }
}

// Note [LAPACK workspace sizes] for the least-squares drivers: the minimums computed in int64.
TEST_CASE("linalg more LAPACK least-squares workspace minimums", "[autograd][linalg]") {
  CHECK(lapack::gels_min_lwork(5, 3, 2) == 6);
  CHECK(lapack::gelsy_min_lwork(5, 3, 2) == 13);
  CHECK(lapack::gelsd_nlvl(13) == 0);
  CHECK(lapack::gelsd_nlvl(20) == 1);  // Fortran's INT(log2(20 / 26)) + 1 = 0 + 1
  CHECK(lapack::gelsd_nlvl(26) == 1);
  CHECK(lapack::gelsd_nlvl(52) == 2);
  CHECK(lapack::gelsd_nlvl(103) == 2);
  CHECK(lapack::gelsd_min_lwork(5, 3, 2) == 9 + (27 + 150 + 6 + 676));
  CHECK(lapack::gelsd_min_liwork(5, 3) == 33);
  CHECK(lapack::gelsd_min_lwork(100000, 100000, 30000) > INT_MAX);  // k nrhs alone passes it
}
