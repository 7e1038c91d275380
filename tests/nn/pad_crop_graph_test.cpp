// F::pad whose output holds nothing of the input (a dim cropped to nothing, or an empty input)
// stays in the graph, as PyTorch 1.13's: the output requires grad and the input's gradient is
// zeros. It used to come back cut off from the graph, so backward either failed ("does not
// require grad") or left the input's gradient undefined. On every test device.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;

TEST_CASE("pad that crops a dim to nothing keeps the graph, with a zero gradient") {
  namespace F = nn::F;
  for (const Device& d : test::test_devices()) {
    INFO(d);
    const TensorOptions o = TensorOptions(kFloat64).device(d);
    Tensor x = tensor(std::vector<double>{1, 2, 3}, {1, 3}, TensorOptions(kFloat64)).to(d).requires_grad_(true);
    // PyTorch: F.pad(x, (-3, 1), value=2.) = [[2.]] with grad_fn, and x.grad [[0, 0, 0]].
    Tensor y = F::pad(x, {-3, 1}, 2.0);
    CHECK_VALUES(y, {2});
    CHECK(y.device() == d);
    REQUIRE(y.requires_grad());
    sum(y).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().device() == d);
    CHECK_VALUES(x.grad(), {0, 0, 0});
    // Cropped to an empty output: still in the graph.
    CHECK(F::pad(x, {-3, 0}).sizes() == IntArrayRef({1, 0}));
    CHECK(F::pad(x, {-3, 0}).requires_grad());
    // Inside a larger expression the input's gradient is the other term's alone.
    Tensor m =
        tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}, TensorOptions(kFloat64)).to(d).requires_grad_(true);
    Tensor z = F::pad(m, {1, 0, -2, 1}, 7.0);  // rows cropped away, one row of padding
    CHECK(z.sizes() == IntArrayRef({1, 4}));
    CHECK_VALUES(z, {7, 7, 7, 7});
    add(sum(z), sum(mul(m, scalar_tensor(2.0, o)))).backward();
    CHECK_VALUES(m.grad(), {2, 2, 2, 2, 2, 2});
    // Without grad nothing is recorded.
    CHECK_FALSE(F::pad(x.detach(), {-3, 1}).requires_grad());
  }
}

TEST_CASE("pad of an empty input keeps the graph, with an empty gradient") {
  namespace F = nn::F;
  for (const Device& d : test::test_devices()) {
    INFO(d);
    Tensor x = zeros({0, 3}, TensorOptions(kFloat64).device(d)).requires_grad_(true);
    Tensor y = F::pad(x, {1, 1, 1, 1}, 2.0);
    CHECK(y.sizes() == IntArrayRef({2, 5}));
    CHECK_VALUES(y, std::vector<double>(10, 2.0));
    REQUIRE(y.requires_grad());
    sum(y).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().sizes() == IntArrayRef({0, 3}));
    CHECK(F::pad(x, {1, 1}).sizes() == IntArrayRef({0, 5}));
    CHECK(F::pad(x, {1, 1}).requires_grad());
  }
}
