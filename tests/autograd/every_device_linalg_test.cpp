// Rows of the every-device table (tests/support/every_device_ops.h, run by every_device_test.cpp).
// Linear algebra: the matrix products, and wick::linalg's second set (linalg_more.h; LAPACK runs on
// the host for other device types, Note [Linalg on the host]).
#include <wick/wick.h>

#include "support/every_device_ops.h"
#include "wick/autograd/linalg.h"

using namespace wick;
using namespace wick::test::every_device;

namespace {

[[maybe_unused]] const bool registered = add_every_device_ops({
    {"matmul",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
      {true, true}}},
    {"mm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return mm(x[0], x[1]); },
      {true, true}}},
    {"linear",
     {[](Device d) {
        return std::vector<Tensor>{seeded({6, 4}, 1, d), seeded({3, 4}, 2, d), seeded({3}, 3, d)};
      },
      [](const std::vector<Tensor>& x) { return linear(x[0], x[1], x[2]); },
      {true, true, true}}},
    {"bmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 4}, 1, d), seeded({2, 4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return bmm(x[0], x[1]); },
      {true, true}}},
    {"baddbmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 5}, 3, d), seeded({2, 3, 4}, 1, d), seeded({2, 4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return baddbmm(x[0], x[1], x[2], 0.5, 2.0); },
      {true, true, true}}},
    {"addmm",
     {[](Device d) {
        return std::vector<Tensor>{seeded({5}, 3, d), seeded({3, 4}, 1, d), seeded({4, 5}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return addmm(x[0], x[1], x[2], 2.0, -1.0); },
      {true, true, true}}},
    {"outer",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3}, 1, d), seeded({4}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return outer(x[0], x[1]); },
      {true, true}}},
    {"dot",
     {[](Device d) {
        return std::vector<Tensor>{seeded({6}, 1, d), seeded({6}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return dot(x[0], x[1]); },
      {true, true}}},
});

// A well-conditioned triangular-friendly matrix: seeded values plus 3 on the diagonal.
Tensor conditioned(IntArrayRef shape, uint64_t seed, Device d) {
  return seeded(shape, seed, d) + eye(shape.back(), on(d)) * 3.0;
}

[[maybe_unused]] const bool registered_linalg_more = add_every_device_ops({
    {"linalg::solve_triangular",
     {[](Device d) {
        return std::vector<Tensor>{conditioned({2, 3, 3}, 1, d), seeded({3, 2}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::solve_triangular(x[0], x[1], true); },
      {true, true}}},
    {"linalg::cholesky_solve",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 2}, 2, d), tril(conditioned({3, 3}, 1, d))};
      },
      [](const std::vector<Tensor>& x) { return linalg::cholesky_solve(x[0], x[1]); },
      {true, true}}},
    {"linalg::cholesky_inverse",
     {[](Device d) {
        return std::vector<Tensor>{triu(conditioned({2, 3, 3}, 1, d))};
      },
      [](const std::vector<Tensor>& x) { return linalg::cholesky_inverse(x[0], true); },
      {true}}},
    {"linalg::lu_factor",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 4, 3}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return std::get<0>(linalg::lu_factor(x[0])); },
      {true}}},
    {"linalg::lu",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d)};
      },
      [](const std::vector<Tensor>& x) {
        auto [P, L, U] = linalg::lu(x[0]);
        return cat({flatten(P), flatten(L), flatten(U)});
      },
      {true}}},
    {"linalg::lu_solve",
     {[](Device d) {
        auto [LU, piv] = linalg::lu_factor(seeded({2, 3, 3}, 1, d));
        return std::vector<Tensor>{LU, piv, seeded({3, 2}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::lu_solve(x[0], x[1], x[2], true, true); },
      {true, false, true}}},
    {"linalg::lstsq",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 5, 3}, 1, d), seeded({5, 2}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return std::get<0>(linalg::lstsq(x[0], x[1], std::nullopt, "gelsd")); },
      {true, true}}},
    {"linalg::pinv",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 4}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::pinv(x[0]); },
      {true}}},
    {"linalg::matrix_rank", values_only({[](Device d) {
                                           return std::vector<Tensor>{seeded({2, 3, 4}, 1, d)};
                                         },
                                         [](const std::vector<Tensor>& x) { return linalg::matrix_rank(x[0]); },
                                         {true}})},
    {"linalg::matrix_power",
     {[](Device d) {
        return std::vector<Tensor>{conditioned({2, 3, 3}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::matrix_power(x[0], -3); },
      {true}}},
    {"linalg::matrix_exp",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 3}, 1, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::matrix_exp(x[0]); },
      {true}}},
    {"linalg::cross",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4, 3}, 1, d), seeded({1, 3}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::cross(x[0], x[1]); },
      {true, true}}},
    {"linalg::multi_dot",
     {[](Device d) {
        return std::vector<Tensor>{seeded({4}, 1, d), seeded({4, 2}, 2, d), seeded({2, 5}, 3, d), seeded({5, 3}, 4, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::multi_dot(x); },
      {true, true, true, true}}},
    {"linalg::vecdot",
     {[](Device d) {
        return std::vector<Tensor>{seeded({3, 4}, 1, d), seeded({4}, 2, d)};
      },
      [](const std::vector<Tensor>& x) { return linalg::vecdot(x[0], x[1]); },
      {true, true}}},
    {"linalg::cond",
     {[](Device d) {
        return std::vector<Tensor>{seeded({2, 3, 3}, 1, d)};
      },
      [](const std::vector<Tensor>& x) {
        return linalg::cond(x[0], 1.0) + linalg::cond(x[0]) + linalg::cond(x[0], "nuc");
      },
      {true}}},
});

}  // namespace
