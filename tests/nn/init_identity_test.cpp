// init::eye_ and init::dirac_: exact values worked out by hand, on every test device and for
// every dtype PyTorch accepts; a convolution with a dirac_ weight returns its input; the errors.
#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::values;

TEST_CASE("init::eye_ writes the identity, square or not, on any dtype, device and layout", "[nn][init]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const TensorOptions o = TensorOptions(kFloat32).device(d);
    Tensor wide = wick::full({2, 3}, 7.0, o);  // every old value is overwritten
    CHECK(init::eye_(wide).is_same(wide));
    CHECK_VALUES(wide, {1, 0, 0, 0, 1, 0});
    Tensor tall = wick::full({3, 2}, -2.0, o);
    init::eye_(tall);
    CHECK_VALUES(tall, {1, 0, 0, 1, 0, 0});
    // Through a transposed view: the base [3, 2] gets the transpose of eye(2, 3).
    Tensor base = wick::full({3, 2}, 5.0, o);
    init::eye_(base.t());
    CHECK_VALUES(base, {1, 0, 0, 1, 0, 0});
    Tensor ints = wick::full({2, 2}, 9.0, TensorOptions(kInt64).device(d));  // PyTorch allows integer tensors
    init::eye_(ints);
    CHECK(ints.dtype() == kInt64);
    CHECK_VALUES(ints, {1, 0, 0, 1});
    Tensor flags = wick::zeros({2, 3}, TensorOptions(kBool).device(d));
    init::eye_(flags);
    CHECK_VALUES(flags, {1, 0, 0, 0, 1, 0});
    Tensor none = wick::zeros({0, 4}, o);
    CHECK_NOTHROW(init::eye_(none));
  }
  // A parameter that requires grad stays a leaf that requires grad.
  Tensor w = wick::randn({3, 3}, TensorOptions(kFloat64).requires_grad());
  init::eye_(w);
  CHECK(w.requires_grad());
  CHECK(w.is_leaf());
  CHECK_VALUES(w, {1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("init::dirac_ puts one 1 per passed-through channel at the kernel centre", "[nn][init]") {
  for (const Device& d : test::test_devices()) {
    CAPTURE(d);
    const TensorOptions o = TensorOptions(kFloat64).device(d);
    // [2, 3, 2]: ones at [0, 0, 1] and [1, 1, 1] (centre 2 / 2 = 1); flat index o * 6 + i * 2 + k.
    Tensor a = wick::full({2, 3, 2}, 3.0, o);
    CHECK(init::dirac_(a).is_same(a));
    CHECK_VALUES(a, {0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    // [4, 2, 3] in 2 groups (2 out channels each): ones at [0, 0, 1], [1, 1, 1], [2, 0, 1] and
    // [3, 1, 1]; flat index o * 6 + i * 3 + k = 1, 10, 13, 22.
    Tensor g = wick::full({4, 2, 3}, 3.0, o);
    init::dirac_(g, 2);
    std::vector<double> want(24, 0.0);
    for (int i : {1, 10, 13, 22}) want[static_cast<size_t>(i)] = 1;
    CHECK(values(g) == want);
    // More out channels per group than in channels: [3, 2, 1] has ones at [0, 0, 0] and [1, 1, 0]
    // only; out channel 2 stays zero.
    Tensor more = wick::full({3, 2, 1}, 3.0, o);
    init::dirac_(more);
    CHECK_VALUES(more, {1, 0, 0, 1, 0, 0});
    // 4-d [2, 2, 3, 3]: [0, 0, 1, 1] = 4 and [1, 1, 1, 1] = 18 + 9 + 4 = 31.
    Tensor c4 = wick::full({2, 2, 3, 3}, 3.0, o);
    init::dirac_(c4);
    std::vector<double> want4(36, 0.0);
    want4[4] = want4[31] = 1;
    CHECK(values(c4) == want4);
    // 5-d [1, 1, 2, 2, 2]: the centre is [1, 1, 1], flat 4 + 2 + 1 = 7.
    Tensor c5 = wick::full({1, 1, 2, 2, 2}, 3.0, o);
    init::dirac_(c5);
    CHECK_VALUES(c5, {0, 0, 0, 0, 0, 0, 0, 1});
    Tensor ints = wick::full({2, 3, 2}, 3.0, TensorOptions(kInt64).device(d));
    init::dirac_(ints);
    CHECK_VALUES(ints, {0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    CHECK_NOTHROW(init::dirac_(wick::zeros({0, 2, 3}, o)));
  }
}

TEST_CASE("init::dirac_ makes conv2d the identity on its input channels, with and without groups", "[nn][init]") {
  manual_seed(21);
  const TensorOptions o(kFloat64);
  const Tensor x = wick::randn({2, 4, 5, 5}, o);
  for (int64_t groups : {1, 2, 4}) {
    CAPTURE(groups);
    Tensor w = wick::randn({4, 4 / groups, 3, 3}, o);
    init::dirac_(w, groups);
    CHECK_ALLCLOSE(F::conv2d(x, w, wick::zeros({4}, o), 1, 1, 1, groups), x, 0, 0);
  }
  // 6 out channels in 2 groups of 3 over 2 in channels each: out 0, 1 copy in 0, 1; out 3, 4 copy
  // in 2, 3; out 2 and 5 are zero.
  Tensor w = wick::randn({6, 2, 3, 3}, o);
  init::dirac_(w, 2);
  const Tensor y = F::conv2d(x, w, wick::zeros({6}, o), 1, 1, 1, 2);
  const std::vector<std::pair<int64_t, int64_t>> copies = {{0, 0}, {1, 1}, {3, 2}, {4, 3}};
  for (const auto& [out, in] : copies) CHECK_ALLCLOSE(y.select(1, out), x.select(1, in), 0, 0);
  for (int64_t out : {2, 5}) CHECK_ALLCLOSE(y.select(1, out), wick::zeros({2, 5, 5}, o), 0, 0);
}

TEST_CASE("init::eye_ and dirac_ refuse the shapes PyTorch refuses, naming the op, the shape and the fix",
          "[nn][init][errors]") {
  Tensor cube = wick::ones({2, 2, 2});
  CHECK_THROWS_AS(init::eye_(cube), ValueError);
  CHECK_THROWS_WITH(init::eye_(cube), Contains("init.eye_") && Contains("[2, 2, 2]") && Contains("dirac_"));
  CHECK_VALUES(cube, {1, 1, 1, 1, 1, 1, 1, 1});  // a refused call changes nothing
  CHECK_THROWS_AS(init::eye_(Tensor()), ValueError);
  CHECK_THROWS_AS(init::dirac_(wick::ones({3, 3})), ValueError);
  CHECK_THROWS_WITH(init::dirac_(wick::ones({3, 3})),
                    Contains("init.dirac_") && Contains("[3, 3]") && Contains("3-, 4- and 5-d") && Contains("eye_"));
  CHECK_THROWS_AS(init::dirac_(wick::ones({1, 1, 1, 1, 1, 1})), ValueError);
  Tensor odd = wick::ones({3, 2, 3});
  CHECK_THROWS_AS(init::dirac_(odd, 2), ValueError);
  CHECK_THROWS_WITH(init::dirac_(odd, 2),
                    Contains("init.dirac_") && Contains("[3, 2, 3]") && Contains("divisible by groups = 2"));
  CHECK_VALUES(odd, std::vector<double>(18, 1.0));
  CHECK_THROWS_AS(init::dirac_(odd, 0), ValueError);
  CHECK_THROWS_WITH(init::dirac_(odd, 0), Contains("groups must be at least 1"));
  CHECK_THROWS_AS(init::dirac_(Tensor()), ValueError);
}
