// Note [Reduction rules]: the shared rules (wick/core/reduce_functors.h) on hand-computed cases,
// the scan form of the arg rule against the general one, and a tree of arg_take combines (as the
// CUDA warp does it) against the sequential scan.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "wick/core/reduce_functors.h"

using namespace wick;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// (value, index) of the arg rule's winner, combining as a binary tree over [lo, hi).
template <bool IsMax>
std::pair<double, int64_t> tree(const std::vector<double>& x, size_t lo, size_t hi) {
  if (hi - lo == 1) return {x[lo], static_cast<int64_t>(lo)};
  const size_t mid = lo + (hi - lo) / 2;
  auto r = tree<IsMax>(x, mid, hi), l = tree<IsMax>(x, lo, mid);  // right first: order must not matter
  return math::arg_take<double, IsMax>(r.first, r.second, l.first, l.second) ? l : r;
}

template <bool IsMax>
int64_t scan(const std::vector<double>& x) {
  int64_t bi = 0;
  for (size_t i = 1; i < x.size(); ++i)
    if (math::arg_take_later<double, IsMax>(x[static_cast<size_t>(bi)], x[i])) bi = static_cast<int64_t>(i);
  return bi;
}
}  // namespace

TEST_CASE("reduction rules: identities and NaN propagation by hand") {
  using Max = math::ReduceRule<double, ReduceOp::Max>;
  using Min = math::ReduceRule<double, ReduceOp::Min>;
  CHECK(math::ReduceRule<double, ReduceOp::Sum>::identity() == 0.0);
  CHECK(math::ReduceRule<double, ReduceOp::Prod>::identity() == 1.0);
  CHECK(Max::identity() == -kInf);
  CHECK(Min::identity() == kInf);
  CHECK(math::ReduceRule<int64_t, ReduceOp::Max>::identity() == std::numeric_limits<int64_t>::lowest());
  CHECK(math::ReduceRule<int64_t, ReduceOp::Min>::identity() == std::numeric_limits<int64_t>::max());
  CHECK(Max::combine(1.0, 2.0) == 2.0);
  CHECK(Min::combine(1.0, 2.0) == 1.0);
  CHECK(std::isnan(Max::combine(1.0, kNaN)));  // a NaN operand wins
  CHECK(std::isnan(Max::combine(kNaN, 5.0)));  // and stays
  CHECK(std::isnan(Min::combine(kNaN, -kInf)));
}

TEST_CASE("reduction rules: the arg rule's scan form agrees with the general rule") {
  const std::vector<double> vals = {-kInf, -1.0, 0.0, -0.0, 1.0, kInf, kNaN};
  for (double bv : vals)
    for (double v : vals) {
      CAPTURE(bv, v);
      CHECK(math::arg_take_later<double, true>(bv, v) == math::arg_take<double, true>(bv, 3, v, 7));
      CHECK(math::arg_take_later<double, false>(bv, v) == math::arg_take<double, false>(bv, 3, v, 7));
    }
}

TEST_CASE("reduction rules: argmax/argmin by hand, and a tree of combines equals the scan") {
  CHECK(scan<true>({1, 3, 3, 2}) == 1);        // first maximum
  CHECK(scan<false>({2, 0, 5, 0}) == 1);       // first minimum
  CHECK(scan<true>({1, kNaN, 9, kNaN}) == 1);  // first NaN beats every number
  CHECK(scan<false>({1, kNaN, -9, kNaN}) == 1);
  CHECK(scan<true>({-kInf, -kInf}) == 0);
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<int> pick(0, 5);
  const double pool[] = {-1.0, 0.0, 1.0, 2.0, kNaN, kInf};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> x(1 + trial % 37);
    for (double& e : x) e = pool[pick(gen)];
    CHECK(tree<true>(x, 0, x.size()).second == scan<true>(x));
    CHECK(tree<false>(x, 0, x.size()).second == scan<false>(x));
  }
}

TEST_CASE("reduction rules: max-pool selection takes the first maximum or the last NaN") {
  auto select = [](const std::vector<double>& w) {
    size_t at = 0;
    for (size_t i = 1; i < w.size(); ++i)
      if (math::pool_take(w[at], w[i])) at = i;
    return at;
  };
  CHECK(select({1, 4, 4, 2}) == 1);
  CHECK(select({kNaN, 4, kNaN, 2}) == 2);
  CHECK(select({-kInf, -kInf}) == 0);
  CHECK(math::pool_take(1.0f, 2.0f));
  CHECK_FALSE(math::pool_take(2.0f, 2.0f));
}
