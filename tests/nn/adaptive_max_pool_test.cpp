// F::adaptive_max_pool1d/2d, their _with_indices forms and AdaptiveMaxPool1d/2d: against the
// PyTorch 1.13 oracle (generate.py's adaptive_max_cases, selected by op name) on every test
// device in float64 (outputs at rtol 1e-12, gradients at rtol 1e-10, indices exactly), float64
// gradchecks and a hand-made double-backward check, hand-computed windows (ties, NaN, -inf, an
// output longer than the input, the gradient summed over overlapping windows; each worked out on
// paper from PyTorch's rule start = floor(i L / out), end = ceil((i + 1) L / out), the first
// maximum, the last NaN, and confirmed with PyTorch 1.13), print strings, and the typed errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
constexpr double kOutRtol = 1e-12, kGradRtol = 1e-10, kAtol = 1e-13;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const TensorOptions kF64(kFloat64);

bool default_file() { return std::getenv("WICK_ORACLE_FILE") == nullptr; }

// kwargs["output_size"]: an int, or a pair whose entries may be null (PyTorch's None).
OptionalInt2 size2d(const OracleCase& c) {
  const auto& s = c.kwargs.at("output_size");
  if (s.is_number_integer()) return OptionalInt2(s.get<int64_t>());
  REQUIRE(s.size() == 2);
  const auto entry = [](const nlohmann::json& v) {
    return v.is_null() ? std::optional<int64_t>() : std::optional<int64_t>(v.get<int64_t>());
  };
  return OptionalInt2(entry(s[0]), entry(s[1]));
}

bool has_nan(const Tensor& t) {
  for (double v : values(t))
    if (std::isnan(v)) return true;
  return false;
}

// A tensor of the values 0.1, 0.2, ..., in an order fixed by `seed`: distinct (no ties) and
// 0.1 apart, far more than gradcheck's eps, so no finite difference moves a maximum.
Tensor distinct(IntArrayRef shape, unsigned seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (double& x : v) x = 0.1 * x - 0.05 * static_cast<double>(n);
  return tensor(v, shape, kF64).requires_grad_(true);
}

using wick::test::check_double_backward;
}  // namespace

TEST_CASE("adaptive_max_pool2d matches PyTorch 1.13: dividing, overlapping, larger, None sizes, unbatched, NaN",
          "[nn][oracle][pooling][adaptive_max_pool]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool indices = c.op == "adaptive_max_pool2d_indices";
    if (c.op != "adaptive_max_pool2d" && !indices) continue;
    const OptionalInt2 size = size2d(c);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const auto [values_, where] = F::adaptive_max_pool2d_with_indices(x[0], size);
      CHECK(where.dtype() == kInt64);
      CHECK(where.device() == dev);
      CHECK(where.sizes() == values_.sizes());
      if (indices) {
        CHECK(c.out.dtype() == kInt64);
        CHECK_ALLCLOSE(where, c.out, 0, 0);
      } else {
        wick::test::check_oracle_case(c, F::adaptive_max_pool2d(x[0], size), x, dev, kOutRtol, kGradRtol, kAtol);
        CHECK_ALLCLOSE(values_, c.out, 0, 0);  // the same maxima as adaptive_max_pool2d
      }
    }
    const int64_t H = c.inputs[0].size(-2), W = c.inputs[0].size(-1);
    const int64_t oh = size.h.value_or(H), ow = size.w.value_or(W);
    ++seen[c.op];
    if (c.inputs[0].dim() == 3) ++seen["unbatched"];
    if (!size.h || !size.w) ++seen["None"];
    if (H % oh == 0 && W % ow == 0) ++seen["dividing"];
    if (H % oh != 0 && W % ow != 0) ++seen["overlapping"];
    if ((H % oh == 0) != (W % ow == 0)) ++seen["mixed"];
    if (oh > H || ow > W) ++seen["larger"];
    if (has_nan(c.inputs[0])) ++seen[indices ? "NaN indices" : "NaN"];
  }
  if (!default_file()) return;
  CHECK(seen["adaptive_max_pool2d"] >= 10);
  CHECK(seen["adaptive_max_pool2d_indices"] >= 4);
  for (const char* kind : {"unbatched", "None", "dividing", "overlapping", "mixed", "larger", "NaN", "NaN indices"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("adaptive_max_pool1d matches PyTorch 1.13: shorter, dividing, equal, longer, unbatched, NaN, indices",
          "[nn][oracle][pooling][adaptive_max_pool]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool indices = c.op == "adaptive_max_pool1d_indices";
    if (c.op != "adaptive_max_pool1d" && !indices) continue;
    const int64_t size = c.kwargs.at("output_size").get<int64_t>(), L = c.inputs[0].size(-1);
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const auto [values_, where] = F::adaptive_max_pool1d_with_indices(x[0], size);
      CHECK(where.dtype() == kInt64);
      CHECK(where.sizes() == values_.sizes());
      if (indices) {
        CHECK_ALLCLOSE(where, c.out, 0, 0);
      } else {
        wick::test::check_oracle_case(c, F::adaptive_max_pool1d(x[0], size), x, dev, kOutRtol, kGradRtol, kAtol);
        CHECK_ALLCLOSE(values_, c.out, 0, 0);
      }
    }
    ++seen[c.op];
    ++seen[size < L ? (L % size == 0 ? "dividing" : "shorter") : size == L ? "equal" : "longer"];
    if (c.inputs[0].dim() == 2) ++seen["unbatched"];
    if (has_nan(c.inputs[0])) ++seen["NaN"];
  }
  if (!default_file()) return;
  CHECK(seen["adaptive_max_pool1d"] >= 5);
  CHECK(seen["adaptive_max_pool1d_indices"] >= 3);
  for (const char* kind : {"dividing", "shorter", "equal", "longer", "unbatched", "NaN"}) {
    INFO(kind);
    CHECK(seen[kind] >= 1);
  }
}

TEST_CASE("AdaptiveMaxPool1d and AdaptiveMaxPool2d match PyTorch 1.13's layers, forward_with_indices included",
          "[nn][oracle][pooling][adaptive_max_pool]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    const bool two = c.op == "adaptive_max_pool2d_module";
    if (!two && c.op != "adaptive_max_pool1d_module") continue;
    REQUIRE(c.kwargs.at("inputs") == nlohmann::json::array({"input"}));  // no parameters
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      Tensor y;
      Tensor y_again;
      if (two) {
        AdaptiveMaxPool2d m(size2d(c));
        y = m(x[0]);
        y_again = std::get<0>(m->forward_with_indices(x[0]));
      } else {
        AdaptiveMaxPool1d m(c.kwargs.at("output_size").get<int64_t>());
        y = m(x[0]);
        y_again = std::get<0>(m->forward_with_indices(x[0]));
      }
      wick::test::check_oracle_case(c, y.reshape({-1}), x, dev, kOutRtol, kGradRtol, kAtol);
      CHECK_ALLCLOSE(y_again.reshape({-1}), c.out, 0, 0);
    }
    ++seen[c.op];
  }
  if (!default_file()) return;
  CHECK(seen["adaptive_max_pool2d_module"] >= 2);
  CHECK(seen["adaptive_max_pool1d_module"] >= 1);
}

TEST_CASE("adaptive max pooling by hand: windows, ties, NaN, -inf, a longer output, summed gradients",
          "[nn][pooling][adaptive_max_pool]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = kF64.device(dev);
    // 3 x 3 to 2 x 2: rows and columns [0, 2) and [1, 3), overlapping at 1.
    //   1 5 2      window (0, 0) {1, 5, 7, 3}: 7 at 3;  (0, 1) {5, 2, 3, 3}: 5 at 1
    //   7 3 3      window (1, 0) {7, 3, 0, 9}: 9 at 7;  (1, 1) {3, 3, 9, 4}: 9 at 7
    //   0 9 4
    const Tensor x = tensor(std::vector<double>{1, 5, 2, 7, 3, 3, 0, 9, 4}, {1, 3, 3}, o).requires_grad_(true);
    const auto [y, where] = F::adaptive_max_pool2d_with_indices(x, 2);
    CHECK(y.sizes() == IntArrayRef({1, 2, 2}));
    CHECK_VALUES(y, {7, 5, 9, 9});
    CHECK_VALUES(where, {3, 1, 7, 7});
    (y * tensor({1.0, 10.0, 100.0, 1000.0}, {1, 2, 2}, o)).sum().backward();
    CHECK_VALUES(x.grad(), {0, 10, 0, 1, 0, 0, 0, 1100, 0});  // 9 is the maximum of two windows

    // Length 5 to 3: windows [0, 2), [1, 4), [3, 5), the longest 3 (the others padded by
    // repeating their last position). Ties keep the first position.
    const Tensor t = tensor(std::vector<double>{4, 4, 1, 2, 2}, {1, 1, 5}, o).requires_grad_(true);
    const auto [ty, tw] = F::adaptive_max_pool1d_with_indices(t, 3);
    CHECK_VALUES(ty, {4, 4, 2});
    CHECK_VALUES(tw, {0, 1, 3});
    (ty * tensor({1.0, 10.0, 100.0}, {1, 1, 3}, o)).sum().backward();
    CHECK_VALUES(t.grad(), {1, 10, 0, 100, 0});

    // A NaN wins its window, the last one when there are two: [nan, 1] -> 0, [1, nan, 0] -> 2.
    const Tensor n = tensor(std::vector<double>{kNaN, 1, kNaN, 0, 5}, {1, 5}, o);
    const auto [ny, nw] = F::adaptive_max_pool1d_with_indices(n, 3);
    const auto nyv = values(ny);
    CHECK(std::isnan(nyv[0]));
    CHECK(std::isnan(nyv[1]));
    CHECK(nyv[2] == 5);
    CHECK_VALUES(nw, {0, 2, 4});
    // Two NaNs in a window shorter than the longest: [nan, nan] -> 1, [nan, 1, 2] -> 1.
    const auto [my, mw] = F::adaptive_max_pool1d_with_indices(tensor({kNaN, kNaN, 1, 2, 3}, {1, 5}, o), 3);
    CHECK_VALUES(mw, {1, 1, 4});
    CHECK(values(my)[2] == 3);
    // The same rule where the windows divide evenly (max_pool2d's kernel): the last NaN, at 2.
    CHECK_VALUES(std::get<1>(F::adaptive_max_pool1d_with_indices(tensor({kNaN, 2, kNaN, 1}, {1, 4}, o), 1)), {2});

    // All -inf: each window keeps its first position (starts 0, 1, 3).
    const Tensor ninf = full({1, 5}, -kInf, o);
    CHECK_VALUES(std::get<1>(F::adaptive_max_pool1d_with_indices(ninf, 3)), {0, 1, 3});

    // Longer than the input, 2 -> 3: windows [0, 1), [0, 2), [1, 2).
    const Tensor s = tensor(std::vector<double>{1, 2}, {1, 1, 2}, o).requires_grad_(true);
    const auto [sy, sw] = F::adaptive_max_pool1d_with_indices(s, 3);
    CHECK_VALUES(sy, {1, 2, 2});
    CHECK_VALUES(sw, {0, 1, 1});
    sy.sum().backward();
    CHECK_VALUES(s.grad(), {1, 2});

    // None keeps a size: [2, 3] to (None, 1) is the maximum of each row.
    const Tensor r = tensor(std::vector<double>{3, 1, 2, 0, 6, 5}, {1, 2, 3}, o);
    const auto [ry, rw] = F::adaptive_max_pool2d_with_indices(r, {std::nullopt, 1});
    CHECK(ry.sizes() == IntArrayRef({1, 2, 1}));
    CHECK_VALUES(ry, {3, 6});
    CHECK_VALUES(rw, {0, 4});  // flat over the plane: row 1, column 1 is 1 * 3 + 1

    // An empty batch gives an empty output of the pooled shape.
    CHECK(F::adaptive_max_pool2d(zeros({0, 3, 5, 7}, o), {2, 3}).sizes() == IntArrayRef({0, 3, 2, 3}));
  }
}

TEST_CASE("adaptive max pooling agrees in float32 and float64, and the indices are the same",
          "[nn][pooling][adaptive_max_pool]") {
  const Tensor x = distinct({2, 3, 7, 9}, 5).detach();
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    for (OptionalInt2 size : {OptionalInt2(3, 4), OptionalInt2(9, 2), OptionalInt2(7, std::nullopt)}) {
      const auto [y64, w64] = F::adaptive_max_pool2d_with_indices(x.to(dev), size);
      const auto [y32, w32] = F::adaptive_max_pool2d_with_indices(x.to(dev, kFloat32), size);
      CHECK(y32.dtype() == kFloat32);
      CHECK(values(w32) == values(w64));
      CHECK(values(y32) == values(y64.to(kFloat32)));  // a maximum is one of the inputs, rounded once
    }
  }
}

TEST_CASE("gradcheck: adaptive_max_pool1d and adaptive_max_pool2d, and their double backward",
          "[nn][gradcheck][adaptive_max_pool]") {
  wick::manual_seed(21);
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const auto on = [&](const Tensor& t) { return t.detach().to(dev).requires_grad_(true); };
    for (OptionalInt2 size :
         {OptionalInt2(3, 2), OptionalInt2(2, 3), OptionalInt2(6, 7), OptionalInt2(std::nullopt, 2)}) {
      INFO("output_size " << size.h.value_or(-1) << " x " << size.w.value_or(-1));
      auto f = [size](const TL& x) { return TL{F::adaptive_max_pool2d(x[0], size)}; };
      CHECK_GRADCHECK(f, TL{on(distinct({2, 2, 4, 6}, 1))});
      check_double_backward(f, TL{on(distinct({1, 2, 4, 6}, 2))});
    }
    auto f1 = [](const TL& x) { return TL{F::adaptive_max_pool1d(x[0], 4)}; };
    CHECK_GRADCHECK(f1, TL{on(distinct({2, 3, 7}, 3))});
    CHECK_GRADCHECK(f1, TL{on(distinct({3, 3}, 4))});  // unbatched, longer output
    check_double_backward(f1, TL{on(distinct({2, 2, 7}, 5))});
  }
}

TEST_CASE("AdaptiveMaxPool1d and AdaptiveMaxPool2d print as PyTorch 1.13 and check their sizes when built",
          "[nn][pooling][adaptive_max_pool]") {
  CHECK(AdaptiveMaxPool1d(3)->to_string() == "AdaptiveMaxPool1d(output_size=3)");
  CHECK(AdaptiveMaxPool2d(3)->to_string() == "AdaptiveMaxPool2d(output_size=3)");
  CHECK(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({2, 3}))->to_string() == "AdaptiveMaxPool2d(output_size=(2, 3))");
  CHECK(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({std::nullopt, 3}))->to_string() ==
        "AdaptiveMaxPool2d(output_size=(None, 3))");
  CHECK(AdaptiveMaxPool2d(Int2(4, 5))->options().output_size() == OptionalInt2(4, 5));
  CHECK_THROWS_AS(AdaptiveMaxPool1d(0), ValueError);
  CHECK_THROWS_AS(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({std::nullopt, -1})), ValueError);
  CHECK_THROWS_WITH(AdaptiveMaxPool2d(AdaptiveMaxPool2dOptions({0, 2})), Contains("(0, 2)"));
}

TEST_CASE("adaptive max pooling refuses bad sizes, ranks, empty dims and dtypes with typed errors",
          "[nn][pooling][errors][adaptive_max_pool]") {
  const Tensor x = randn({2, 3, 5, 7}, kF64);
  CHECK_THROWS_AS(F::adaptive_max_pool2d(x, 0), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool2d(x, {-1, 2}), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool2d(x, {std::nullopt, 0}), ValueError);
  CHECK_THROWS_WITH(F::adaptive_max_pool2d_with_indices(x, {3, 0}),
                    Contains("adaptive_max_pool2d") && Contains("(3, 0)") && Contains("[2, 3, 5, 7]"));
  CHECK_THROWS_AS(F::adaptive_max_pool2d(randn({5, 7}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::adaptive_max_pool2d(randn({5, 7}, kF64), 2), Contains("adaptive_max_pool1d"));
  CHECK_THROWS_AS(F::adaptive_max_pool2d(randn({1, 2, 3, 5, 7}, kF64), 2), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool2d(randn({2, 3, 0, 7}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::adaptive_max_pool2d(randn({2, 3, 5, 0}, kF64), 2), Contains("empty"));
  CHECK_THROWS_AS(F::adaptive_max_pool2d(x.to(kInt64), 2), TypeError);
  CHECK_THROWS_AS(F::adaptive_max_pool2d(Tensor(), 2), ValueError);

  const Tensor s = randn({2, 3, 6}, kF64);
  CHECK_THROWS_AS(F::adaptive_max_pool1d(s, 0), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool1d_with_indices(s, -2), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool1d(randn({6}, kF64), 2), ValueError);
  // A 1-d op's error names the 1-d op, never the 2-d one it runs on.
  CHECK_THROWS_WITH(F::adaptive_max_pool1d(randn({2, 3, 1, 6}, kF64), 2),
                    Contains("adaptive_max_pool1d") && !Contains("adaptive_max_pool2d:"));
  CHECK_THROWS_WITH(F::adaptive_max_pool1d(randn({2, 3, 0}, kF64), 2), Contains("adaptive_max_pool1d"));
  CHECK_THROWS_AS(F::adaptive_max_pool1d(randn({2, 3, 0}, kF64), 2), ValueError);
  CHECK_THROWS_AS(F::adaptive_max_pool1d(s.to(kInt64), 2), TypeError);
  // An output past int64 elements is a ValueError before any window is built.
  CHECK_THROWS_AS(F::adaptive_max_pool2d(x, {int64_t{1} << 40, int64_t{1} << 40}), ValueError);
}
