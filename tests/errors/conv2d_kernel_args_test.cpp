// F::conv2d's kernel checks (a review against PyTorch 1.13): a kernel with no rows or columns is
// refused with integer, same and valid padding (it used to give an output larger than the input,
// of zeros), and padding=same computes its total padding dilation * (k - 1) with an overflow check
// (it used to wrap, undefined behaviour, into a misleading negative padding or a small one).
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdint>

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("conv2d refuses a kernel of size 0, with integer, same or valid padding") {
  namespace F = nn::F;
  const Tensor x = zeros({1, 1, 3, 3}, kFloat64);
  const Tensor no_rows = zeros({1, 1, 0, 3}, kFloat64), no_cols = zeros({1, 1, 3, 0}, kFloat64);
  CHECK_THROWS_AS(F::conv2d(x, no_rows), ValueError);
  CHECK_THROWS_WITH(F::conv2d(x, no_rows), Contains("conv2d") && Contains("kernel size should be greater than zero") &&
                                               Contains("[1, 1, 0, 3]"));
  CHECK_THROWS_AS(F::conv2d(x, no_cols, {}, 1, 1), ValueError);
  CHECK_THROWS_WITH(F::conv2d(x, no_rows, {}, 1, nn::kSame), Contains("kernel size should be greater than zero"));
  CHECK_THROWS_WITH(F::conv2d(x, no_cols, {}, 1, nn::kSame, 2), Contains("kernel size should be greater than zero"));
  CHECK_THROWS_AS(F::conv2d(x, no_cols, {}, 1, nn::kValid), ValueError);
  CHECK_THROWS_AS(F::conv2d(zeros({1, 3, 3}, kFloat64), no_rows), ValueError);  // unbatched
}

TEST_CASE("conv2d padding=same refuses a dilation whose total padding is past int64") {
  namespace F = nn::F;
  const int64_t huge = int64_t{1} << 62;
  const Tensor x = randn({1, 1, 5, 5}, kFloat64), w3 = randn({1, 1, 3, 3}, kFloat64);
  // 2^62 * (3 - 1) = 2^63.
  CHECK_THROWS_AS(F::conv2d(x, w3, {}, 1, nn::kSame, {huge, 1}), ValueError);
  CHECK_THROWS_WITH(F::conv2d(x, w3, {}, 1, nn::kSame, {huge, 1}),
                    Contains("conv2d") && Contains("padding=same") && Contains("past int64"));
  CHECK_THROWS_AS(F::conv2d(x, w3, {}, 1, nn::kSame, {1, huge}), ValueError);
  // (2^62 + 1) * (5 - 1) wrapped to a small positive total of 4 before the check.
  CHECK_THROWS_AS(F::conv2d(x, randn({1, 1, 5, 5}, kFloat64), {}, 1, nn::kSame, {huge + 1, 1}), ValueError);
  // A 1-wide kernel needs no padding whatever the dilation.
  CHECK(F::conv2d(x, randn({1, 1, 1, 3}, kFloat64), {}, 1, nn::kSame, {huge, 1}).sizes() == IntArrayRef({1, 1, 5, 5}));
}
