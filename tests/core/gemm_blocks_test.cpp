// GEMMs cut into blocks on wick's threads (Note [GEMMs on wick's threads],
// core/src/cpu/cpu_gemm.cpp): every way of cutting gives the product of one OpenBLAS call, and a
// budget gives the same bits whether or not an idle device thread lends a hand. Runs under
// ThreadSanitizer in CI (.ci/run's tsan pass runs test_core).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include "support/allclose.h"
#include "support/idle_worker.h"
#include "wick/core/backend.h"
#include "wick/core/cpu_threads.h"

using namespace wick;
using wick::test::ResetBudgets;
using wick::test::values;
using wick::test::with_budget;

namespace {

// Each product's shape picks one way of cutting: more rows than columns (row blocks), more
// columns (16-column blocks, n not a multiple of 16), transposed operands, and a batch of
// disjoint outputs (whole entries per block). Each is past the size that stays whole.
struct Product {
  const char* name;
  std::function<Tensor(DType)> run;
};

std::vector<Product> products() {
  return {
      {"row blocks",
       [](DType t) {
         return randn({600, 200}, t).matmul(randn({200, 40}, t));
       }},
      {"column blocks",
       [](DType t) {
         return randn({40, 300}, t).matmul(randn({300, 601}, t));
       }},
      {"transposed A and B",
       [](DType t) {
         return randn({300, 70}, t).t().matmul(randn({500, 300}, t).t());
       }},
      {"batch entries",
       [](DType t) {
         return randn({4, 100, 200}, t).bmm(randn({4, 200, 120}, t));
       }},
  };
}

Tensor seeded(uint64_t seed, const std::function<Tensor()>& f) {
  manual_seed(seed);
  return f();
}

}  // namespace

TEST_CASE("gemm blocks: every budget gives the product of one OpenBLAS call, in float64") {
  ResetBudgets reset;
  for (const Product& p : products()) {
    INFO(p.name);
    auto f = [&] { return seeded(7, [&] { return p.run(kFloat64); }); };
    const Tensor whole = with_budget(0, false, f);
    for (int budget : {1, 2, 3, 5}) {
      INFO("budget " << budget);
      const auto close = wick::test::allclose(with_budget(budget, false, f), whole, 1e-12, 1e-12);
      CHECK(close.ok);
      INFO(close.message);
    }
  }
  // The blocks ran on wick's helper threads: the pool grew for budget 5.
  CHECK(intra_op_helper_threads() >= 4);
}

TEST_CASE("gemm blocks: a budget gives the same bits on every run, with or without a lender") {
  ResetBudgets reset;
  for (const Product& p : products()) {
    INFO(p.name);
    auto f = [&] { return seeded(11, [&] { return p.run(kFloat32); }); };
    for (int budget : {2, 3}) {
      INFO("budget " << budget);
      const std::vector<double> first = values(with_budget(budget, false, f));
      for (int round = 0; round < 3; ++round) {
        CHECK(values(with_budget(budget, false, f)) == first);
        CHECK(values(with_budget(budget, true, f)) == first);
      }
    }
  }
}

TEST_CASE("gemm blocks: entries that accumulate into one C keep their order in every block") {
  // C += A_e B_e for e = 0, 1, 2 into one C (stride_c 0, beta 1), as a per-image weight
  // gradient would; against the sum written out in float64.
  ResetBudgets reset;
  const int64_t batch = 3, m = 64, n = 250, k = 64;
  manual_seed(3);
  const Tensor a = randn({batch, m, k}, kFloat64), b = randn({batch, k, n}, kFloat64);
  const std::vector<double> av = values(a), bv = values(b);
  std::vector<double> expected(static_cast<size_t>(m * n), 1.0);
  for (int64_t e = 0; e < batch; ++e)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += av[static_cast<size_t>((e * m + i) * k + l)] * bv[static_cast<size_t>((e * k + l) * n + j)];
        expected[static_cast<size_t>(i * n + j)] += s;
      }
  for (int budget : {0, 1, 3}) {
    INFO("budget " << budget);
    const Tensor c = with_budget(budget, false, [&] {
      Tensor out = ones({m, n}, kFloat64);
      GemmArgs g{};
      g.dtype = DType::Float64;
      g.batch = batch;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = a.data_ptr();
      g.lda = k;
      g.stride_a = m * k;
      g.b = b.data_ptr();
      g.ldb = n;
      g.stride_b = k * n;
      g.c = out.data_ptr();
      g.ldc = n;
      g.stride_c = 0;
      g.beta = 1.0;
      backend(kCPU).gemm(g);
      return out;
    });
    const std::vector<double> got = values(c);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
    CHECK(worst < 1e-12);
  }
}
