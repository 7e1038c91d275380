// meshgrid, cartesian_prod, tril_indices / triu_indices, diag_embed, block_diag and kron: PyTorch
// 1.13's float64 values and gradients (generate.py's count_search_build_cases, selected by op name) on
// every test device, float64 gradchecks and double backward, hand cases (views, dtypes, empty
// blocks, an inf on the diagonal) and the typed errors naming the op and the shapes.
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <map>
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

using namespace wick;
using wick::test::check_error;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-12, kAtol = 1e-14;

using wick::test::f64;
Tensor leaf(IntArrayRef shape, Device dev) {
  return randn(shape, TensorOptions(kFloat64).device(dev)).requires_grad_(true);
}

Tensor run_case(const OracleCase& c, const std::vector<Tensor>& x, Device dev) {
  if (c.op == "meshgrid") return stack(meshgrid(x, c.kwargs.at("indexing").get<std::string>()));
  if (c.op == "cartesian_prod") return mul(cartesian_prod(x), scalar_tensor(1.0, TensorOptions(kFloat64).device(dev)));
  if (c.op == "diag_embed")
    return diag_embed(x[0], c.kw("offset", int64_t{0}), c.kw("dim1", int64_t{-2}), c.kw("dim2", int64_t{-1}));
  if (c.op == "block_diag") return block_diag(x);
  if (c.op == "kron") return kron(x[0], x[1]);
  const int64_t row = c.kw("row", int64_t{0}), col = c.kw("col", int64_t{0}), off = c.kw("offset", int64_t{0});
  const TensorOptions o = TensorOptions(kInt64).device(dev);
  return c.op == "tril_indices" ? tril_indices(row, col, off, o) : triu_indices(row, col, off, o);
}

}  // namespace

TEST_CASE("meshgrid cartesian_prod diag_embed block_diag kron and the triangle indices match PyTorch 1.13",
          "[autograd][oracle][build_ops]") {
  std::map<std::string, int> seen =
      wick::test::check_oracle_ops(
          {"meshgrid", "cartesian_prod", "diag_embed", "block_diag", "kron", "tril_indices", "triu_indices"}, run_case,
          {.out_rtol = kOutRtol, .grad_rtol = kGradRtol, .atol = kAtol})
          .by_op;
  for (const char* op : {"meshgrid", "cartesian_prod", "diag_embed", "block_diag", "kron"}) {
    INFO(op);
    CHECK(seen[op] >= 2);
  }
  CHECK(seen["tril_indices"] + seen["triu_indices"] >= 8);
}

TEST_CASE("the building ops gradcheck and double backward in float64", "[autograd][build_ops][gradcheck]") {
  using TL = std::vector<Tensor>;
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    CHECK_GRADCHECKS([](const TL& x) { return meshgrid(x, "xy"); }, TL{leaf({3}, dev), leaf({2}, dev), leaf({}, dev)});
    CHECK_GRADCHECKS([](const TL& x) { return TL{cartesian_prod(x)}; }, TL{leaf({3}, dev), leaf({2}, dev)});
    CHECK_GRADCHECKS([](const TL& x) { return TL{diag_embed(x[0], -1, 2, 0)}; }, TL{leaf({2, 3}, dev)});
    CHECK_GRADCHECKS([](const TL& x) { return TL{x[0].diag_embed(2)}; }, TL{leaf({3}, dev)});
    CHECK_GRADCHECKS([](const TL& x) { return TL{block_diag(x)}; },
                     TL{leaf({2, 1}, dev), leaf({}, dev), leaf({3}, dev)});
    CHECK_GRADCHECKS([](const TL& x) { return TL{kron(x[0], x[1])}; }, TL{leaf({2, 2}, dev), leaf({3, 1, 2}, dev)});
    wick::test::check_double_backward([](const TL& x) { return TL{mul(kron(x[0], x[1]), kron(x[0], x[1]))}; },
                                      TL{leaf({2}, dev), leaf({2, 2}, dev)});
  }
}

TEST_CASE("the building ops by hand: views dtypes empty blocks and infinities", "[autograd][build_ops]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor a = f64({1, 2}, {2}, dev), b = f64({3, 4, 5}, {3}, dev);
    const std::vector<Tensor> ij = meshgrid({a, b}), xy = meshgrid({a, b}, "xy");
    CHECK(ij[0].sizes() == IntArrayRef({2, 3}));
    CHECK_VALUES(ij[0], {1, 1, 1, 2, 2, 2});
    CHECK_VALUES(ij[1], {3, 4, 5, 3, 4, 5});
    CHECK(xy[0].sizes() == IntArrayRef({3, 2}));
    CHECK_VALUES(xy[0], {1, 2, 1, 2, 1, 2});
    CHECK(ij[0].device() == dev);
    CHECK(ij[0].stride(1) == 0);  // a view: expanded, not copied
    CHECK_VALUES(cartesian_prod({a, b}), {1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5});
    CHECK(cartesian_prod({a}).is_same(a));  // one tensor is returned as it is, as PyTorch
    CHECK(cartesian_prod({a, zeros({0}, TensorOptions(kFloat64).device(dev))}).sizes() == IntArrayRef({0, 2}));

    const Tensor tl = tril_indices(3, 4, 1, TensorOptions(kInt64).device(dev));
    CHECK(tl.device() == dev);
    CHECK_VALUES(tl, {0, 0, 1, 1, 1, 2, 2, 2, 2, 0, 1, 0, 1, 2, 0, 1, 2, 3});
    CHECK_VALUES(triu_indices(3, 4, 1), {0, 0, 0, 1, 1, 2, 1, 2, 3, 2, 3, 3});
    CHECK(triu_indices(3, 3, 10).sizes() == IntArrayRef({2, 0}));

    const Tensor d = diag_embed(f64({inf, 2}, {2}, dev));  // inf stays on the diagonal, no NaN off it
    CHECK_VALUES(d, {inf, 0, 0, 2});
    CHECK(diag_embed(f64({1, 2, 3, 4}, {2, 2}, dev), -1, 2, 0).sizes() == IntArrayRef({3, 2, 3}));
    const Tensor di = diag_embed(tensor(std::vector<int64_t>{1, 2}, {2}).to(dev), 1);
    CHECK(di.dtype() == kInt64);
    CHECK_VALUES(di, {0, 1, 0, 0, 0, 2, 0, 0, 0});

    // block_diag promotes (int64 and float32 -> float32), takes 0-d and 1-d blocks and empty ones.
    const Tensor bd = block_diag({tensor(std::vector<int64_t>{1, 2}, {1, 2}).to(dev),
                                  tensor({3.0}, {}, TensorOptions(kFloat32)).to(dev),
                                  zeros({2, 0}, TensorOptions(kFloat32).device(dev))});
    CHECK(bd.dtype() == kFloat32);
    CHECK(bd.sizes() == IntArrayRef({4, 3}));
    CHECK_VALUES(bd, {1, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0});
    CHECK(block_diag({}).sizes() == IntArrayRef({1, 0}));

    const Tensor k = kron(f64({1, 2, 3, 4}, {2, 2}, dev), f64({0, 1, 1, 0}, {2, 2}, dev));
    CHECK_VALUES(k, {0, 1, 0, 2, 1, 0, 2, 0, 0, 3, 0, 4, 3, 0, 4, 0});
    CHECK(kron(tensor(std::vector<int64_t>{1, 2}, {2}).to(dev), f64({1, 10}, {1, 2}, dev)).dtype() == kFloat64);
    CHECK(f64({2}, {}, dev).kron(f64({3}, {}, dev)).dim() == 0);
  }
}

TEST_CASE("the building ops' errors name the op and the shapes", "[autograd][build_ops][errors]") {
  const TensorOptions f(kFloat64);
  check_error<ValueError>([&] { meshgrid({}); }, {"meshgrid", "at least one"});
  check_error<ValueError>([&] { meshgrid({zeros({1, 2}, f)}); }, {"meshgrid", "[1, 2]"});
  check_error<ValueError>([&] { meshgrid({zeros({2}, f)}, "ab"); }, {"meshgrid", "\"ab\""});
  check_error<TypeError>([&] { meshgrid({zeros({2}, f), zeros({2}, TensorOptions(kInt64))}); }, {"meshgrid", "int64"});
  check_error<ValueError>([&] { meshgrid({zeros({2}, f), zeros({2}, f).to(Device("cpu:1"))}); }, {"meshgrid", "cpu:1"});
  check_error<ValueError>([&] { cartesian_prod({zeros({1, 2}, f), zeros({2}, f)}); }, {"cartesian_prod", "[1, 2]"});
  check_error<ValueError>([&] { tril_indices(-1, 3); }, {"tril_indices", "row -1"});
  check_error<TypeError>([&] { triu_indices(3, 3, 0, TensorOptions(kFloat32)); }, {"triu_indices", "float32"});
  check_error<ValueError>([&] { diag_embed(zeros({2}, f), 0, 0, 0); }, {"diag_embed", "dim1 and dim2"});
  check_error<IndexError>([&] { diag_embed(zeros({2}, f), 0, 3); }, {"diag_embed", "dim 3"});
  check_error<IndexError>([&] { diag_embed(zeros({}, f)); }, {"diag_embed", "0-d"});
  check_error<ValueError>([&] { block_diag({zeros({1, 1, 1}, f)}); }, {"block_diag", "[1, 1, 1]"});
  check_error<ValueError>(
      [&] {
        block_diag({zeros({1}, f), zeros({1}, f).to(Device("cpu:1"))});
      },
      {"block_diag", "cpu:1"});
  check_error<Error>([&] { kron(zeros({1}, f), zeros({1}, f).to(Device("cpu:1"))); }, {"kron", "cpu:1"});
}

namespace {
// The triangle's (row, col) pairs by the definition, one comparison per entry.
std::vector<int64_t> brute_tri(int64_t row, int64_t col, int64_t offset, bool lower) {
  std::vector<int64_t> rs, cs;
  for (int64_t r = 0; r < row; ++r)
    for (int64_t c = 0; c < col; ++c)
      if (lower ? c - r <= offset : c - r >= offset) {
        rs.push_back(r);
        cs.push_back(c);
      }
  rs.insert(rs.end(), cs.begin(), cs.end());
  return rs;
}
}  // namespace

// The triangle indices count each row's columns directly: extreme offsets and sizes give the
// definition's pairs (or a typed error) at once, never a loop over row * col or an overflow.
TEST_CASE("the triangle indices diag_embed and kron at the edges of int64", "[autograd][build_ops][errors]") {
  const int64_t top = std::numeric_limits<int64_t>::max(), bottom = std::numeric_limits<int64_t>::min();
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kInt64).device(dev);
    for (int64_t row : {0, 1, 3, 5})
      for (int64_t col : {0, 1, 4})
        for (int64_t off : {bottom, int64_t{-6}, int64_t{-2}, int64_t{0}, int64_t{1}, int64_t{5}, top}) {
          INFO(row << " x " << col << " offset " << off);
          const std::vector<int64_t> lo = brute_tri(row, col, off, true), up = brute_tri(row, col, off, false);
          const Tensor tl = tril_indices(row, col, off, o), tu = triu_indices(row, col, off, o);
          CHECK(tl.device() == dev);
          CHECK(tl.sizes() == IntArrayRef({2, static_cast<int64_t>(lo.size()) / 2}));
          CHECK(tl.to_vector<int64_t>() == lo);
          CHECK(tu.sizes() == IntArrayRef({2, static_cast<int64_t>(up.size()) / 2}));
          CHECK(tu.to_vector<int64_t>() == up);
        }
    CHECK(tril_indices(int64_t{1} << 40, 0, 0, o).sizes() == IntArrayRef({2, 0}));
    CHECK(triu_indices(int64_t{1} << 40, 3, 3, o).sizes() == IntArrayRef({2, 0}));
    check_error<ValueError>([&] { tril_indices(int64_t{1} << 40, int64_t{1} << 40, 0, o); }, {"tril_indices"});
    check_error<ValueError>([&] { triu_indices(top, top, bottom, o); }, {"triu_indices"});
    const Tensor x = zeros({2}, TensorOptions(kFloat64).device(dev));
    check_error<ValueError>([&] { diag_embed(x, bottom); }, {"diag_embed", "offset"});
    check_error<ValueError>([&] { diag_embed(x, top); }, {"diag_embed", "offset"});
    const Tensor wide = expand(zeros({1}, TensorOptions(kFloat64).device(dev)), {int64_t{1} << 40});
    check_error<ValueError>([&] { kron(wide, wide); }, {"kron", "[1099511627776]", "overflows"});
  }
  check_error<ValueError>([&] { cartesian_prod({}); }, {"cartesian_prod", "at least one"});
}
