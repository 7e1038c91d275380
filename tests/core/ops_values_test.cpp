// Ops: values on special inputs, reductions over dims (negative, keepdim, non-contiguous), stable
// softmax and logsumexp, joining and indexing, matmul's shape cases against a naive reference,
// and scaled_copy_. Broadcasting and the errors for bad input: ops_test.cpp.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "support/allclose.h"
#include "support/small_tensors.h"

using namespace wick;
using namespace wick::test;
using Catch::Matchers::Contains;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

// ---------------------------------------------------------------------------------------------
// Elementwise values
// ---------------------------------------------------------------------------------------------

TEST_CASE("unary and binary ops on special values") {
  Tensor x = f64({-2, -0.5, 0, 0.5, 2}, {5});
  CHECK_ALLCLOSE(relu(x), f64({0, 0, 0, 0.5, 2}, {5}), 0, 0);
  CHECK_ALLCLOSE(abs(x), f64({2, 0.5, 0, 0.5, 2}, {5}), 0, 0);
  CHECK_ALLCLOSE(sign(x), f64({-1, -1, 0, 1, 1}, {5}), 0, 0);
  CHECK_ALLCLOSE(square(x), f64({4, 0.25, 0, 0.25, 4}, {5}), 0, 0);
  CHECK_ALLCLOSE(clamp(x, -1.0, 1.0), f64({-1, -0.5, 0, 0.5, 1}, {5}), 0, 0);
  CHECK_ALLCLOSE(clamp(x, std::nullopt, 0.0), f64({-2, -0.5, 0, 0, 0}, {5}), 0, 0);
  CHECK_THROWS_WITH(clamp(x, std::nullopt, std::nullopt), Contains("clamp"));
  Tensor big = f64({-800, -60, 0, 60, 800}, {5});
  CHECK_ALLCLOSE(sigmoid(big), f64({0, 1.0 / (1 + std::exp(60.0)), 0.5, 1.0 / (1 + std::exp(-60.0)), 1}, {5}), 1e-15,
                 0);
  CHECK_ALLCLOSE(tanh(big), f64({-1, -1, 0, 1, 1}, {5}), 0, 0);
  CHECK_ALLCLOSE(sigmoid(big.to(kFloat32)), f64({0, 1.0 / (1 + std::exp(60.0)), 0.5, 1, 1}, {5}), 1e-6, 0);
  CHECK_ALLCLOSE(exp(f64({-kInf, 0, kInf}, {3})), f64({0, 1, kInf}, {3}), 0, 0);
  CHECK_ALLCLOSE(log(f64({0, 1, -1}, {3})), f64({-kInf, 0, kNaN}, {3}), 0, 0);
  CHECK_ALLCLOSE(sqrt(f64({4, -1}, {2})), f64({2, kNaN}, {2}), 0, 0);
  CHECK_ALLCLOSE(rsqrt(f64({4, 0}, {2})), f64({0.5, kInf}, {2}), 0, 0);
  CHECK_ALLCLOSE(reciprocal(f64({4, -0.5}, {2})), f64({0.25, -2}, {2}), 0, 0);
  CHECK_ALLCLOSE(gelu(f64({0, 1, -1}, {3})), f64({0, 0.8413447460685429, -0.15865525393145707}, {3}), 1e-15, 0);
  CHECK_ALLCLOSE(erf(f64({0, 1}, {2})), f64({0, 0.8427007929497149}, {2}), 1e-15, 0);
  CHECK_ALLCLOSE(log1p(f64({1e-20}, {1})), f64({1e-20}, {1}), 1e-15, 0);
  CHECK_ALLCLOSE(expm1(f64({1e-20}, {1})), f64({1e-20}, {1}), 1e-15, 0);
  CHECK_ALLCLOSE(sin(f64({0}, {1})), f64({0}, {1}), 0, 0);
  CHECK_ALLCLOSE(cos(f64({0}, {1})), f64({1}, {1}), 0, 0);
  // maximum/minimum propagate NaN (as torch.maximum), from either side.
  CHECK_ALLCLOSE(maximum(f64({1, kNaN, 3}, {3}), f64({kNaN, 2, 1}, {3})), f64({kNaN, kNaN, 3}, {3}), 0, 0);
  CHECK_ALLCLOSE(minimum(f64({1, kNaN, 3}, {3}), f64({kNaN, 2, 1}, {3})), f64({kNaN, kNaN, 1}, {3}), 0, 0);
  CHECK_ALLCLOSE(pow(f64({2, 0, -2}, {3}), f64({0.5, 0, 2}, {3})), f64({std::sqrt(2.0), 1, 4}, {3}), 1e-15, 0);
  CHECK_ALLCLOSE(pow(f64({2, 3}, {2}), 3), f64({8, 27}, {2}), 0, 0);
  CHECK_VALUES(pow(tensor({2.0, 3.0}, kInt64), 2), {4, 9});
  CHECK_ALLCLOSE(div(f64({1, -1, 0}, {3}), f64({0, 0, 0}, {3})), f64({kInf, -kInf, kNaN}, {3}), 0, 0);
  CHECK_VALUES(div(tensor({7.0, -7.0}, kInt64), tensor({2.0, 2.0}, kInt64)), {3.5, -3.5});
  CHECK_VALUES(add(f64({1, 2}, {2}), f64({10, 20}, {2}), 0.5), {6, 12});
  CHECK_VALUES(sub(f64({1, 2}, {2}), f64({10, 20}, {2}), 2), {-19, -38});
  CHECK_VALUES(eq(f64({1, 2, kNaN}, {3}), f64({1, 3, kNaN}, {3})), {1, 0, 0});
  CHECK_VALUES(ne(f64({1, 2, kNaN}, {3}), f64({1, 3, kNaN}, {3})), {0, 1, 1});
  CHECK_VALUES(le(f64({1, 2}, {2}), f64({1, 1}, {2})), {1, 0});
  CHECK_VALUES(f64({1, 2, 3}, {3}).gt(2), {0, 0, 1});
  CHECK_VALUES(f64({1, 2, 3}, {3}).le(2.5), {1, 1, 0});
  CHECK_VALUES(logical_not(f64({0, 2}, {2})), {1, 0});
  CHECK_VALUES(logical_or(f64({0, 0, 1}, {3}), f64({0, 1, 0}, {3})), {0, 1, 1});
  // Truth tables over all four input pairs (any nonzero, NaN included, is true).
  CHECK_VALUES(logical_and(f64({0, 0, 1, 1}, {4}), f64({0, 1, 0, 1}, {4})), {0, 0, 0, 1});
  CHECK_VALUES(logical_or(f64({0, 0, 1, 1}, {4}), f64({0, 1, 0, 1}, {4})), {0, 1, 1, 1});
  CHECK_VALUES(logical_and(f64({-2, kNaN, 0}, {3}), f64({0.5, 3, kNaN}, {3})), {1, 1, 0});
  CHECK_VALUES(where(f64({1, -1, 0}, {3}).gt(0), f64({1, 2, 3}, {3}), scalar_tensor(-5.0, kFloat64)), {1, -5, -5});
  CHECK_VALUES(where(f64({1, -1, 0}, {3}).gt(0), scalar_tensor(-5.0, kFloat64), f64({1, 2, 3}, {3})), {-5, 2, 3});
  CHECK_VALUES(where(f64({1, -1, 0}, {3}).gt(0), f64({7}, {1}), f64({1, 2, 3, 4, 5, 6}, {2, 3})), {7, 2, 3, 7, 5, 6});
  CHECK_THROWS_WITH(where(f64({1}, {1}), f64({1}, {1}), f64({1}, {1})), Contains("where") && Contains("bool"));
}

// ---------------------------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------------------------

TEST_CASE("reductions over dims, negative dims, keepdim and non-contiguous inputs") {
  Tensor x = seq({2, 3, 4});
  CHECK(sum(x).item<double>() == 276);
  CHECK(sum(x).dim() == 0);
  CHECK_VALUES(sum(x, {0, 2}), {60, 92, 124});
  CHECK(sum(x, {0, 2}, true).sizes() == IntArrayRef({1, 3, 1}));
  CHECK(sum(x, {-2}, true).sizes() == IntArrayRef({2, 1, 4}));
  CHECK_VALUES(sum(x, {-2}, true), {12, 15, 18, 21, 48, 51, 54, 57});
  CHECK_VALUES(sum(x.transpose(0, 2), {0}), sum(x, {2}).t().to_vector<double>());
  CHECK_VALUES(mean(x, {1}), {4, 5, 6, 7, 16, 17, 18, 19});
  CHECK(mean(x).item<double>() == 11.5);
  CHECK_VALUES(amax(x, {0, 1}), {20, 21, 22, 23});
  CHECK_VALUES(amin(x, {2}), {0, 4, 8, 12, 16, 20});
  CHECK_VALUES(argmax(f64({1, 3, 3, 2}, {4}), 0), {1});  // first occurrence
  CHECK_VALUES(argmin(f64({2, 1, 1, 3}, {2, 2}), 1), {1, 0});
  CHECK(argmax(x, 1, true).sizes() == IntArrayRef({2, 1, 4}));
  auto [values, indices] = max(f64({1, 5, 2, 7, 0, 7}, {2, 3}), 1);
  CHECK_VALUES(values, {5, 7});
  CHECK_VALUES(indices, {1, 0});
  auto [mv, mi] = min(f64({1, 5, 2, 7, 0, 7}, {2, 3}), 0, true);
  CHECK(mv.sizes() == IntArrayRef({1, 3}));
  CHECK_VALUES(mv, {1, 0, 2});
  CHECK_VALUES(mi, {0, 1, 0});
  // var: unbiased by default, biased on request.
  Tensor v = f64({1, 2, 3, 4}, {4});
  CHECK(var(v, {0}).item<double>() == Approx(5.0 / 3).epsilon(1e-15));
  CHECK(var(v, {0}, false).item<double>() == Approx(1.25).epsilon(1e-15));
  CHECK(std::isnan(var(f64({3}, {1}), {0}).item<double>()));
  // NaN propagates through amax/amin and wins argmax.
  CHECK(std::isnan(amax(f64({1, kNaN, 3}, {3}), {0}).item<double>()));
  CHECK(std::isnan(amin(f64({kNaN, 1}, {2}), {0}).item<double>()));
  CHECK(argmax(f64({1, kNaN, 3}, {3}), 0).item<int64_t>() == 1);
  // Integer and bool sums.
  CHECK(sum(tensor({1.0, 2.0}, kInt64)).item<int64_t>() == 3);
  CHECK(amax(tensor({1.0, 5.0}, kInt64), {0}).item<int64_t>() == 5);
  // float32 sums accumulate in double.
  CHECK(sum(full({1 << 20}, 0.1, kFloat32)).item<double>() == Approx(104857.6).epsilon(1e-6));
  // 0-dim inputs.
  CHECK(sum(scalar_tensor(3.0, kFloat64), {0}).item<double>() == 3);
  CHECK(argmax(scalar_tensor(3.0, kFloat64), 0).item<int64_t>() == 0);
  CHECK_THROWS_WITH(sum(x, {3}), Contains("sum") && Contains("dim 3 is out of range"));
  CHECK_THROWS_WITH(sum(x, {1, -2}), Contains("sum") && Contains("more than once"));
  CHECK_THROWS_WITH(mean(tensor({1.0}, kInt64)), Contains("mean") && Contains("int64"));
}

TEST_CASE("logsumexp, softmax and log_softmax are stable for large and infinite inputs") {
  Tensor big = f64({1000, 1000, -1000}, {3});
  CHECK(logsumexp(big, {0}).item<double>() == Approx(1000 + std::log(2.0)).epsilon(1e-15));
  CHECK(logsumexp(f64({-kInf, -kInf}, {2}), {0}).item<double>() == -kInf);
  CHECK(logsumexp(f64({kInf, 1}, {2}), {0}).item<double>() == kInf);
  CHECK(logsumexp(f64({1, 2, 3, 4}, {2, 2}), {1}, true).sizes() == IntArrayRef({2, 1}));
  CHECK_ALLCLOSE(softmax(big, 0), f64({0.5, 0.5, 0}, {3}), 1e-15, 0);
  CHECK_ALLCLOSE(log_softmax(big, 0), f64({-std::log(2.0), -std::log(2.0), -2000 - std::log(2.0)}, {3}), 1e-15, 0);
  Tensor s = softmax(seq({3, 4}), -1);
  CHECK_ALLCLOSE(sum(s, {1}), f64({1, 1, 1}, {3}), 1e-15, 0);
  CHECK_ALLCLOSE(softmax(seq({3, 4}), 0), softmax(seq({3, 4}).t(), 1).t(), 1e-15, 0);
  CHECK_ALLCLOSE(exp(log_softmax(seq({3, 4}), 1)), s, 1e-14, 0);
  CHECK_ALLCLOSE(softmax(big.to(kFloat32), 0), f64({0.5, 0.5, 0}, {3}), 1e-7, 0);
}

// ---------------------------------------------------------------------------------------------
// Joining and indexing
// ---------------------------------------------------------------------------------------------

TEST_CASE("cat, stack, index_select, gather, scatter_add and index_add") {
  Tensor a = seq({2, 2}), b = seq({2, 3}) + 10;
  CHECK_VALUES(cat({a, b}, 1), {0, 1, 10, 11, 12, 2, 3, 13, 14, 15});
  CHECK_VALUES(cat({a, a.t()}, -2), {0, 1, 2, 3, 0, 2, 1, 3});
  CHECK(stack({a, a}, 2).sizes() == IntArrayRef({2, 2, 2}));
  CHECK_VALUES(stack({a, a + 4}, -1), {0, 4, 1, 5, 2, 6, 3, 7});
  CHECK(stack({scalar_tensor(1.0), scalar_tensor(2.0)}).sizes() == IntArrayRef({2}));
  Tensor m = seq({4, 3});
  Tensor idx = tensor(std::vector<int64_t>{3, 0, 3}, {3}, kInt64);
  CHECK_VALUES(index_select(m, 0, idx), {9, 10, 11, 0, 1, 2, 9, 10, 11});
  CHECK_VALUES(index_select(m, -1, tensor(std::vector<int64_t>{2}, {1}, kInt64)), {2, 5, 8, 11});
  CHECK_VALUES(index_select(m.t(), 1, idx), {9, 0, 9, 10, 1, 10, 11, 2, 11});
  CHECK_VALUES(index_select(m, 0, scalar_tensor(1, kInt64)), {3, 4, 5});
  Tensor gi = tensor(std::vector<int64_t>{2, 0, 1, 1}, {2, 2}, kInt64);
  CHECK_VALUES(gather(m, 1, gi), {2, 0, 4, 4});
  CHECK_VALUES(gather(m, 0, gi), {6, 1, 3, 4});
  Tensor sa = scatter_add(zeros({2, 3}, kFloat64), 1, gi, f64({1, 2, 3, 4}, {2, 2}));
  CHECK_VALUES(sa, {2, 0, 1, 0, 7, 0});
  Tensor ia = index_add(zeros({4, 2}, kFloat64), 0, idx, f64({1, 2, 3, 4, 5, 6}, {3, 2}));
  CHECK_VALUES(ia, {3, 4, 0, 0, 0, 0, 6, 8});
  // Bad indices name the op, the range and the dim.
  CHECK_THROWS_WITH(index_select(m, 0, tensor(std::vector<int64_t>{4}, {1}, kInt64)),
                    Contains("index_select") && Contains("out of range") && Contains("size 4"));
  CHECK_THROWS_WITH(index_select(m, 0, tensor(std::vector<int64_t>{-1}, {1}, kInt64)), Contains("index_select"));
  CHECK_THROWS_WITH(index_select(m, 0, tensor({1.0})), Contains("index_select") && Contains("int64"));
  CHECK_THROWS_WITH(index_select(m, 0, zeros({1, 1}, kInt64)), Contains("index_select") && Contains("[1, 1]"));
  CHECK_THROWS_WITH(index_select(m, 2, idx), Contains("index_select") && Contains("dim 2"));
  CHECK_THROWS_WITH(gather(m, 1, tensor(std::vector<int64_t>{3}, {1, 1}, kInt64)),
                    Contains("gather") && Contains("out of range"));
  CHECK_THROWS_WITH(gather(m, 1, zeros({2}, kInt64)), Contains("gather") && Contains("dims"));
  CHECK_THROWS_WITH(gather(m, 1, zeros({5, 1}, kInt64)), Contains("gather") && Contains("exceeds"));
  CHECK_THROWS_WITH(scatter_add(m, 1, zeros({2, 2}, kInt64), zeros({1, 1})), Contains("scatter_add"));
  CHECK_THROWS_WITH(index_add(m, 0, idx, zeros({2, 3})), Contains("index_add"));
}

// ---------------------------------------------------------------------------------------------
// matmul
// ---------------------------------------------------------------------------------------------

namespace {
// torch.matmul's semantics, written out naively in double precision.
Tensor reference_matmul(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  std::vector<int64_t> ab(a.sizes().begin(), a.sizes().end() - 2), bb(b.sizes().begin(), b.sizes().end() - 2);
  DimVector batch = native::broadcast_shapes(ab, bb, "reference");
  DimVector ash = batch, bsh = batch;
  ash.push_back(m), ash.push_back(k), bsh.push_back(k), bsh.push_back(n);
  auto av = a.expand(ash).contiguous().to_vector<double>(), bv = b.expand(bsh).contiguous().to_vector<double>();
  int64_t nb = 1;
  for (auto s : batch) nb *= s;
  std::vector<double> out(static_cast<size_t>(nb * m * n), 0.0);
  for (int64_t q = 0; q < nb; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l) acc += av[(q * m + i) * k + l] * bv[(q * k + l) * n + j];
        out[(q * m + i) * n + j] = acc;
      }
  DimVector os = batch;
  if (a_in.dim() > 1) os.push_back(m);
  if (b_in.dim() > 1) os.push_back(n);
  return tensor(out, os, kFloat64);
}
}  // namespace

TEST_CASE("matmul covers every shape case of torch.matmul") {
  manual_seed(11);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{4}, {4}},
      {{4}, {4, 3}},
      {{3, 4}, {4}},
      {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4}},
      {{4}, {2, 4, 5}},
      {{2, 3, 4}, {4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{1, 3, 4}, {6, 4, 2}},
      {{2, 2, 1, 4}, {1, 4, 1}},
      {{1, 1}, {1, 1}},
      {{5, 1}, {1, 6}},
      {{1, 4}, {4, 1}},
  };
  for (const auto& [sa, sb] : shapes) {
    INFO("[" << fmt::format("{}", fmt::join(sa, ", ")) << "] x [" << fmt::format("{}", fmt::join(sb, ", ")) << "]");
    Tensor a = randn(sa, kFloat64), b = randn(sb, kFloat64);
    Tensor ref = reference_matmul(a, b);
    CHECK_ALLCLOSE(matmul(a, b), ref, 1e-12, 1e-14);
    CHECK_ALLCLOSE(matmul(a.to(kFloat32), b.to(kFloat32)), ref, 1e-5, 1e-5);
  }
  // Transposed, sliced and expanded (stride-0) operands are used without mistakes.
  Tensor a = randn({4, 3}, kFloat64), b = randn({5, 4}, kFloat64);
  CHECK_ALLCLOSE(matmul(a.t(), b.t()), reference_matmul(a.t(), b.t()), 1e-12, 1e-14);
  Tensor wide = randn({3, 10}, kFloat64);
  Tensor sl = wide.slice(1, 1, 9, 2);  // [3, 4] with column stride 2
  CHECK_ALLCLOSE(matmul(sl, b.t()), reference_matmul(sl, b.t()), 1e-12, 1e-14);
  Tensor ex = randn({1, 3, 4}, kFloat64).expand({6, 3, 4});
  CHECK_ALLCLOSE(matmul(ex, b.t()), reference_matmul(ex, b.t()), 1e-12, 1e-14);
  Tensor batch_t = randn({2, 4, 3}, kFloat64).transpose(1, 2);
  Tensor rb = randn({2, 4, 2}, kFloat64);
  CHECK_ALLCLOSE(matmul(batch_t, rb), reference_matmul(batch_t, rb), 1e-12, 1e-14);
  Tensor pm = randn({3, 2, 4}, kFloat64).permute({1, 0, 2});  // batch dim not outermost in memory
  CHECK_ALLCLOSE(matmul(pm, b.t()), reference_matmul(pm, b.t()), 1e-12, 1e-14);
  CHECK(matmul(a.t(), b.t()).dtype() == kFloat64);
  CHECK_ALLCLOSE(mm(a.t(), b.t()), reference_matmul(a.t(), b.t()), 1e-12, 1e-14);
}

TEST_CASE("scaled_copy_ writes src * factor, bit for bit as copy_ then mul_, converting where it must") {
  manual_seed(17);
  const Tensor src = randn({7, 9});
  for (const Tensor& from : {src, src.t(), src.narrow(1, 1, 7)}) {
    INFO("source strides " << from.stride(0) << ", " << from.stride(1));
    Tensor one_pass = empty(from.sizes());
    const uint32_t v0 = one_pass.version();
    native::scaled_copy_(one_pass, from, 1.0 / 3.0);
    CHECK(one_pass.version() == v0 + 1);  // one write: not a copy_ and then a mul_
    Tensor two_passes = empty(from.sizes());
    two_passes.copy_(from);
    two_passes.mul_(1.0 / 3.0);
    CHECK_ALLCLOSE(one_pass, two_passes, 0.0, 0.0);
    CHECK(one_pass.to_vector<float>()[1] == from.contiguous().to_vector<float>()[1] * (1.0f / 3.0f));
  }
  Tensor wide = empty({7, 9}, kFloat64);  // float32 into float64: converted, then scaled
  const uint32_t before = wide.version();
  native::scaled_copy_(wide, src, 0.5);
  CHECK(wide.version() > before);
  CHECK_ALLCLOSE(wide, src.to(kFloat64).mul(0.5), 0.0, 0.0);
  Tensor wrong = empty({9, 7});
  CHECK_THROWS_AS(native::scaled_copy_(wrong, src, 2.0), ValueError);
  Tensor ints = empty({7, 9}, kInt64);
  CHECK_THROWS_AS(native::scaled_copy_(ints, src, 2.0), TypeError);
}
