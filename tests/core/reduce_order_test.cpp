// The CPU reductions' order (Note [CPU reduce order], core/src/cpu/reduce_rows.h): a contiguous
// run folds into 16 lanes, a leading-dim reduction goes row after row, and a budget gives the
// same bits as one thread, with or without a lender. Runs under ThreadSanitizer in CI (.ci/run's
// tsan pass runs test_core).
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "support/allclose.h"
#include "support/idle_worker.h"

using namespace wick;
using wick::test::ResetBudgets;
using wick::test::values;
using wick::test::with_budget;

namespace {

// The bytes of a tensor's elements, so NaNs and signed zeros compare exactly.
std::vector<unsigned char> bits(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<unsigned char> out(static_cast<size_t>(c.numel()) * c.element_size());
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

}  // namespace

TEST_CASE("cpu reduce order: a contiguous run folds into 16 lanes, combined pairwise (hand-computed)") {
  ResetBudgets reset;
  // 1e16 + 1 == 1e16 in double. Element 0 (1e16) and element 16 (-1e16) share lane 0, and the 15
  // ones between them sit in lanes 1..15, so the lanes keep every one: 15, where a left-to-right
  // sum would give 0.
  std::vector<double> v(17, 1.0);
  v[0] = 1e16;
  v[16] = -1e16;
  CHECK(sum(tensor(v, {17}, kFloat64)).item<double>() == 15.0);
  // The same run as the last dim of rows: each row folds alone, in the same order.
  std::vector<double> rows;
  for (int r = 0; r < 3; ++r) rows.insert(rows.end(), v.begin(), v.end());
  CHECK(values(sum(tensor(rows, {3, 17}, kFloat64), {1})) == std::vector<double>{15.0, 15.0, 15.0});
  // A conv bias's sum over (N, H, W): each H x W plane folds into the running value in lane 0,
  // plane after plane. Channel 0's first plane is [1e16, 1, ..., 1] (16 values): the ones sit in
  // lanes 1..15, and the pairwise combine adds lane 8's one to 1e16 first (lost), then lanes
  // 1..7 as twos, fours and eights (kept): 1e16 + 14. Its second plane starts with -1e16: 14.
  std::vector<double> planes(2 * 2 * 16, 0.0);
  for (int i = 1; i < 16; ++i) planes[static_cast<size_t>(i)] = 1.0;
  planes[0] = 1e16;
  planes[2 * 16] = -1e16;
  CHECK(values(sum(tensor(planes, {2, 2, 4, 4}, kFloat64), {0, 2, 3})) == std::vector<double>{14.0, 0.0});
}

TEST_CASE("cpu reduce order: a sum over the leading dim goes row after row (hand-computed)") {
  ResetBudgets reset;
  // Column 0: (1e16 + 1) - 1e16 == 0 row after row; column 1: 1 + 2 + 3.
  const Tensor x = tensor({1e16, 1.0, 1.0, 2.0, -1e16, 3.0}, {3, 2}, kFloat64);
  CHECK(values(sum(x, {0})) == std::vector<double>{0.0, 6.0});
  // The same with a kept trailing dim of 40 (one split by the threads at budget 3).
  Tensor y = zeros({3, 40}, kFloat64);
  y.select(0, 0).fill_(1e16);
  y.select(0, 1).fill_(1.0);
  y.select(0, 2).fill_(-1e16);
  for (int budget : {0, 3}) {
    INFO("budget " << budget);
    const Tensor s = with_budget(budget, false, [&] { return sum(y, {0}); });
    CHECK(values(s) == std::vector<double>(40, 0.0));
  }
}

TEST_CASE("cpu reduce order: sums match float64 written out, and max/min keep NaN") {
  ResetBudgets reset;
  manual_seed(5);
  const Tensor x = randn({64, 32, 37});
  const std::vector<double> xv = values(x);
  // Over dim 0 and over dims (0, 2), against sums written out in double.
  std::vector<double> dim0(32 * 37, 0.0), dims02(32, 0.0);
  for (int64_t n = 0; n < 64; ++n)
    for (int64_t c = 0; c < 32; ++c)
      for (int64_t w = 0; w < 37; ++w) {
        const double e = xv[static_cast<size_t>((n * 32 + c) * 37 + w)];
        dim0[static_cast<size_t>(c * 37 + w)] += e;
        dims02[static_cast<size_t>(c)] += e;
      }
  CHECK(wick::test::allclose(sum(x, {0}), tensor(dim0, {32, 37}, kFloat32), 1e-6, 1e-6).ok);
  CHECK(wick::test::allclose(sum(x, {0, 2}), tensor(dims02, {32}, kFloat32), 1e-6, 1e-5).ok);
  // A NaN in any lane or any row wins max and min; infinities are ordinary values.
  Tensor y = randn({20, 40});
  y.select(0, 7).select(0, 3).fill_(std::numeric_limits<double>::quiet_NaN());
  y.select(0, 2).select(0, 5).fill_(std::numeric_limits<double>::infinity());
  y.select(0, 9).select(0, 5).fill_(-std::numeric_limits<double>::infinity());
  for (const Tensor& r : {amax(y, {0}), amin(y, {0})}) {
    const std::vector<double> rv = values(r);
    CHECK(std::isnan(rv[3]));
    for (size_t j = 0; j < rv.size(); ++j)
      if (j != 3) CHECK_FALSE(std::isnan(rv[j]));
  }
  CHECK(values(amax(y, {0}))[5] == std::numeric_limits<double>::infinity());
  CHECK(values(amin(y, {0}))[5] == -std::numeric_limits<double>::infinity());
  const std::vector<double> row_max = values(amax(y, {1})), row_min = values(amin(y, {1}));
  for (size_t r = 0; r < 20; ++r) {
    CHECK(std::isnan(row_max[r]) == (r == 7));
    CHECK(std::isnan(row_min[r]) == (r == 7));
  }
}

TEST_CASE("cpu reduce order: a budget gives one thread's bits, with or without a lender") {
  ResetBudgets reset;
  struct Case {
    const char* name;
    std::function<Tensor()> run;
  };
  manual_seed(9);
  const Tensor conv = randn({128, 16, 28, 28}), lead = randn({64, 32, 144}), rows = randn({300, 1000});
  Tensor nan_rows = randn({200, 300});
  nan_rows.select(0, 150).select(0, 17).fill_(std::numeric_limits<double>::quiet_NaN());
  const Tensor strided = randn({400, 300}).t();       // the general strided walk
  const Tensor long_run = randn({300000}, kFloat64);  // 74 blocks (Note [CPU reduce order])
  const std::vector<Case> cases{
      {"conv bias: sum over (0, 2, 3)",
       [&] {
         return sum(conv, {0, 2, 3});
       }},
      {"leading dim: sum over 0", [&] { return sum(lead, {0}); }},
      {"leading dim, float64", [&] { return sum(lead.to(kFloat64), {0}); }},
      {"rows: sum over 1", [&] { return sum(rows, {1}); }},
      {"max over 0 with a NaN", [&] { return amax(nan_rows, {0}); }},
      {"min over 1 with a NaN", [&] { return amin(nan_rows, {1}); }},
      {"strided: sum over 0", [&] { return sum(strided, {0}); }},
      {"strided: sum over 1", [&] { return sum(strided, {1}); }},
      {"one long run: sum of all", [&] { return sum(long_run); }},
      {"two long rows: sum over 1",
       [&] {
         return sum(long_run.reshape({2, -1}), {1});
       }},
      {"long planes: sum over (0, 2)",
       [&] {
         return sum(long_run.reshape({3, 2, -1}), {0, 2});
       }},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::vector<unsigned char> one = bits(with_budget(0, false, c.run));
    for (int budget : {1, 2, 3}) {
      INFO("budget " << budget);
      CHECK(bits(with_budget(budget, false, c.run)) == one);
      CHECK(bits(with_budget(budget, true, c.run)) == one);
    }
  }
}

namespace {

// sum(x) in long double, compensated (Neumaier): the truth to within about 1e-19 relative here.
long double exact_sum(const std::vector<double>& x) {
  long double s = 0, c = 0;
  for (double d : x) {
    const long double v = d, t = s + v;
    c += std::fabs(static_cast<double>(s)) >= std::fabs(d) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  return s + c;
}

}  // namespace

TEST_CASE("cpu reduce order: a long run sums in blocks combined pairwise, to float64's precision") {
  ResetBudgets reset;
  // Ten million copies of fl(0.1): a sequential fold (or 16 sequential lanes of 625 000 each)
  // drifts by about 1e-11 relative; blocks of 4096 combined pairwise stay within a few units in
  // the last place of each block's 256-element lanes plus the 12 levels of the tree.
  const int64_t n = 10'000'000;
  const double tenth = 0.1;
  const long double truth = static_cast<long double>(tenth) * n;
  for (int budget : {0, 2}) {
    INFO("budget " << budget);
    const Tensor x = full({n}, tenth, kFloat64);
    const double s = with_budget(budget, false, [&] { return sum(x); }).item<double>();
    CHECK(std::fabs(static_cast<long double>(s) - truth) / truth < 1e-14L);
    // The mean over one row and the sums of rows take the same path.
    const double m = with_budget(budget, false, [&] { return mean(x); }).item<double>();
    CHECK(std::fabs(static_cast<long double>(m) - tenth) / tenth < 1e-14L);
  }
  // Random values around 1000, two rows, against a compensated sum in long double, relative to
  // the sum of magnitudes (the scale a float64 sum's error is measured against). 16 sequential
  // lanes were off by about 5e-15 here.
  manual_seed(11);
  const Tensor r = randn({2, 3'000'001}, kFloat64) + 1000.0;
  const std::vector<double> rv = values(r);
  for (int64_t row = 0; row < 2; ++row) {
    const std::vector<double> part(rv.begin() + row * 3'000'001, rv.begin() + (row + 1) * 3'000'001);
    double magnitude = 0;
    for (double d : part) magnitude += std::fabs(d);
    const long double truth_r = exact_sum(part);
    const double got = values(sum(r, {1}))[static_cast<size_t>(row)];
    INFO("row " << row << ": " << got << " against " << static_cast<double>(truth_r));
    CHECK(std::fabs(static_cast<long double>(got) - truth_r) / magnitude < 1e-15L);
  }
}
