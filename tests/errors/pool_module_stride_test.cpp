// MaxPool2d and AvgPool2d refuse an explicit stride of 0 when built, as LibTorch ("stride should
// not be zero"): their options already default the stride to kernel_size, and F::max_pool2d /
// F::avg_pool2d, which read 0 as "stride = kernel_size" (wick's spelling of stride=None), made such
// a module pool with stride kernel_size without a word. The functional spelling is unchanged.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("MaxPool2d and AvgPool2d refuse a stride of 0 when built, F keeps 0 as stride = kernel_size") {
  using namespace nn;
  CHECK_THROWS_AS(MaxPool2d(MaxPool2dOptions(2).stride(0)), ValueError);
  CHECK_THROWS_WITH(MaxPool2d(MaxPool2dOptions(2).stride(0)),
                    Contains("MaxPool2d") && Contains("stride should not be zero"));
  CHECK_THROWS_WITH(MaxPool2d(MaxPool2dOptions(2).stride({0, 2})), Contains("stride should not be zero"));
  CHECK_THROWS_AS(AvgPool2d(AvgPool2dOptions(3).stride(0)), ValueError);
  CHECK_THROWS_WITH(AvgPool2d(AvgPool2dOptions(3).stride({2, 0})),
                    Contains("AvgPool2d") && Contains("stride should not be zero"));
  // A kernel of size 0 (whose default stride is 0 too) is named as the kernel.
  CHECK_THROWS_WITH(MaxPool2d(MaxPool2dOptions(0)), Contains("kernel_size should be greater than zero"));
  CHECK_THROWS_WITH(AvgPool2d(AvgPool2dOptions({2, 0})), Contains("kernel_size should be greater than zero"));
  // The default stride, kernel_size, and explicit strides still build and pool.
  const Tensor x = randn({1, 1, 6, 6}, kFloat64);
  CHECK(MaxPool2d(MaxPool2dOptions(2))(x).sizes() == IntArrayRef({1, 1, 3, 3}));
  CHECK(AvgPool2d(AvgPool2dOptions(3).stride({1, 3}))(x).sizes() == IntArrayRef({1, 1, 4, 2}));
  // F:: documents stride 0 as "none given": stride = kernel_size.
  CHECK(F::max_pool2d(x, 2, 0).sizes() == IntArrayRef({1, 1, 3, 3}));
  CHECK(F::avg_pool2d(x, 3, 0).sizes() == IntArrayRef({1, 1, 2, 2}));
  CHECK_THROWS_AS(F::max_pool2d(x, 2, {0, 2}), ValueError);  // zero on one axis only
}
