// batch_norm and layer_norm (functional and modules) refuse a weight, bias or running statistic
// whose dtype is not the input's: a TypeError naming the op, the tensor and both dtypes, as
// conv2d and linear give. They used to promote, so a float32 input with float64 parameters came
// out float64. PyTorch 1.13 refuses these calls too. A refused call changes no state.
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>

#include "support/allclose.h"

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("batch_norm refuses a weight, bias or running statistic of another dtype than the input") {
  namespace F = nn::F;
  const Tensor x = randn({4, 3}, kFloat32);
  const Tensor w64 = ones({3}, kFloat64), b64 = zeros({3}, kFloat64);
  CHECK_THROWS_AS(F::batch_norm(x, {}, {}, w64, {}, true), TypeError);
  CHECK_THROWS_WITH(F::batch_norm(x, {}, {}, w64, {}, true), Contains("batch_norm") && Contains("weight") &&
                                                                 Contains("float32") && Contains("float64") &&
                                                                 Contains(".to(dtype)"));
  CHECK_THROWS_WITH(F::batch_norm(x, {}, {}, ones({3}, kFloat32), b64, true), Contains("bias"));
  // Running statistics of another dtype: refused in eval and in training, where nothing is updated.
  Tensor rm = zeros({3}, kFloat64), rv = ones({3}, kFloat64);
  CHECK_THROWS_AS(F::batch_norm(x, rm, rv, {}, {}, false), TypeError);
  CHECK_THROWS_WITH(F::batch_norm(x, rm, rv, {}, {}, false), Contains("running_mean") && Contains("float64"));
  CHECK_THROWS_WITH(F::batch_norm(x, zeros({3}, kFloat32), rv, {}, {}, false), Contains("running_var"));
  CHECK_THROWS_AS(F::batch_norm(x, rm, rv, {}, {}, true), TypeError);
  CHECK_VALUES(rm, {0, 0, 0});
  CHECK_VALUES(rv, {1, 1, 1});
  // A float64 input with float32 parameters is refused the same way.
  CHECK_THROWS_AS(F::batch_norm(x.to(kFloat64), {}, {}, ones({3}, kFloat32), {}, true), TypeError);
  // One dtype throughout is accepted, and the output keeps it.
  CHECK(F::batch_norm(x, zeros({3}, kFloat32), ones({3}, kFloat32), ones({3}, kFloat32), zeros({3}, kFloat32), true)
            .dtype() == kFloat32);
}

TEST_CASE("layer_norm refuses a weight or bias of another dtype than the input") {
  namespace F = nn::F;
  const Tensor x = randn({2, 3}, kFloat32);
  CHECK_THROWS_AS(F::layer_norm(x, {3}, ones({3}, kFloat64), zeros({3}, kFloat64)), TypeError);
  CHECK_THROWS_WITH(F::layer_norm(x, {3}, ones({3}, kFloat64)),
                    Contains("layer_norm") && Contains("weight") && Contains("float32") && Contains("float64"));
  CHECK_THROWS_WITH(F::layer_norm(x, {3}, ones({3}, kFloat32), zeros({3}, kFloat64)),
                    Contains("layer_norm") && Contains("bias"));
  // A non-contiguous input takes the composite path: refused there too.
  CHECK_THROWS_AS(F::layer_norm(randn({3, 2}, kFloat32).t(), {3}, ones({3}, kFloat64)), TypeError);
  CHECK(F::layer_norm(x, {3}, ones({3}, kFloat32), zeros({3}, kFloat32)).dtype() == kFloat32);
}

TEST_CASE("BatchNorm and LayerNorm modules refuse input of another dtype than their parameters, changing nothing") {
  nn::LayerNorm ln(nn::LayerNormOptions({3}));  // float32
  CHECK_THROWS_AS(ln->forward(randn({2, 3}, kFloat64)), TypeError);
  nn::BatchNorm1d bn(nn::BatchNorm1dOptions(3));  // float32
  CHECK_THROWS_WITH(bn->forward(randn({4, 3}, kFloat64)),
                    Contains("batch_norm") && Contains("float64") && Contains("float32"));
  CHECK(bn->num_batches_tracked().item<int64_t>() == 0);
  CHECK_VALUES(bn->running_mean(), {0, 0, 0});
  CHECK_VALUES(bn->running_var(), {1, 1, 1});
  bn->eval();
  CHECK_THROWS_AS(bn->forward(randn({4, 3}, kFloat64)), TypeError);
  // Without affine or running statistics there is nothing to mismatch: float64 passes through.
  nn::BatchNorm1d plain(nn::BatchNorm1dOptions(3).affine(false).track_running_stats(false));
  CHECK(plain->forward(randn({4, 3}, kFloat64)).dtype() == kFloat64);
}
