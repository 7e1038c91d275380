// batch_norm in training over an input with no elements, against PyTorch 1.13: an empty output of
// the input's shape, still in the graph (the input gets an empty gradient, weight and bias zeros),
// running statistics left alone, and num_batches_tracked counting the batch (so with momentum None
// the next batch's factor is 1/2). Exactly one value per channel is still refused. On every test
// device.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("batch_norm in training over an empty batch gives an empty output in the graph") {
  namespace F = nn::F;
  for (const Device& d : test::test_devices()) {
    INFO(d);
    const TensorOptions o = TensorOptions(kFloat64).device(d);
    CHECK(F::batch_norm(randn({0, 3, 4}, o), {}, {}, {}, {}, true).sizes() == IntArrayRef({0, 3, 4}));
    CHECK(F::batch_norm(randn({2, 3, 0}, o), {}, {}, {}, {}, true).sizes() == IntArrayRef({2, 3, 0}));
    CHECK(F::batch_norm(randn({4, 0}, o), {}, {}, {}, {}, true).sizes() == IntArrayRef({4, 0}));
    // The running statistics are not updated (an empty batch has no mean).
    Tensor rm = zeros({3}, o), rv = ones({3}, o);
    Tensor x = randn({0, 3, 2}, o).requires_grad_(true);
    Tensor w = randn({3}, o).requires_grad_(true), b = randn({3}, o).requires_grad_(true);
    Tensor y = F::batch_norm(x, rm, rv, w, b, true);
    CHECK(y.sizes() == IntArrayRef({0, 3, 2}));
    CHECK(y.device() == d);
    REQUIRE(y.requires_grad());
    CHECK_VALUES(rm, {0, 0, 0});
    CHECK_VALUES(rv, {1, 1, 1});
    sum(y).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().sizes() == IntArrayRef({0, 3, 2}));
    CHECK_VALUES(w.grad(), {0, 0, 0});
    CHECK_VALUES(b.grad(), {0, 0, 0});
    // Without weight and bias the output is a new tensor, not the input, and still in the graph.
    Tensor x2 = randn({0, 3}, o).requires_grad_(true);
    Tensor y2 = F::batch_norm(x2, {}, {}, {}, {}, true);
    CHECK(y2.requires_grad());
    CHECK_FALSE(y2.is_same(x2));
  }
}

TEST_CASE("BatchNorm over an empty batch counts the batch but leaves the running statistics") {
  for (const Device& d : test::test_devices()) {
    INFO(d);
    nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3).momentum(std::nullopt), kFloat64);
    bn->to(d);
    CHECK(bn->forward(zeros({0, 3}, TensorOptions(kFloat64).device(d))).sizes() == IntArrayRef({0, 3}));
    CHECK(bn->num_batches_tracked().item<int64_t>() == 1);
    CHECK_VALUES(bn->running_mean(), {0, 0, 0});
    CHECK_VALUES(bn->running_var(), {1, 1, 1});
    // The next batch is batch 2, so momentum None weighs it 1/2 (PyTorch: running_mean
    // [1, 1.5, 2], running_var [1.5, 1.5, 1.5] from the batch mean [2, 3, 4] and unbiased variance 2).
    bn->forward(tensor(std::vector<double>{1, 2, 3, 3, 4, 5}, {2, 3}, TensorOptions(kFloat64)).to(d));
    CHECK(bn->num_batches_tracked().item<int64_t>() == 2);
    CHECK_VALUES(bn->running_mean(), {1, 1.5, 2});
    CHECK_VALUES(bn->running_var(), {1.5, 1.5, 1.5});

    nn::BatchNorm2d bn2(nn::BatchNorm2dOptions(3), kFloat64);
    bn2->to(d);
    Tensor x = randn({0, 3, 4, 4}, TensorOptions(kFloat64).device(d)).requires_grad_(true);
    Tensor y = bn2->forward(x);
    CHECK(y.sizes() == IntArrayRef({0, 3, 4, 4}));
    sum(y).backward();
    CHECK(x.grad().sizes() == IntArrayRef({0, 3, 4, 4}));
    CHECK_VALUES(bn2->weight().grad(), {0, 0, 0});
    CHECK_VALUES(bn2->bias().grad(), {0, 0, 0});
    CHECK(bn2->num_batches_tracked().item<int64_t>() == 1);
    CHECK_VALUES(bn2->running_mean(), {0, 0, 0});
  }
}

TEST_CASE("batch_norm in training still refuses exactly one value per channel, with or without channels") {
  namespace F = nn::F;
  CHECK_THROWS_WITH(F::batch_norm(randn({1, 3}, kFloat64), {}, {}, {}, {}, true),
                    Contains("more than 1 value per channel"));
  CHECK_THROWS_AS(F::batch_norm(randn({1, 3, 1}, kFloat64), {}, {}, {}, {}, true), ValueError);
  // PyTorch counts N * prod(spatial), not numel / C: [1, 0] is one value per (absent) channel.
  CHECK_THROWS_AS(F::batch_norm(randn({1, 0}, kFloat64), {}, {}, {}, {}, true), ValueError);
  // In eval mode an empty batch normalizes with the running statistics, as before.
  CHECK(F::batch_norm(randn({0, 3}, kFloat64), zeros({3}, kFloat64), ones({3}, kFloat64)).sizes() ==
        IntArrayRef({0, 3}));
}
