// FractionalMaxPool2d / 3d and F::fractional_max_pool2d / 3d: PyTorch 1.13's outputs, indices and
// input gradients given the same _random_samples (generate.py's nn_layers_31_cases), through F::
// and through the layers (samples in the "_random_samples" buffer) on every test device; windows
// worked by hand from the interval formula (Note [Fractional max pooling]); ties and NaN as
// PyTorch's kernel; drawn samples reproducible by seed; typed errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;
using wick::test::values;
using TL = std::vector<Tensor>;

namespace {
const TensorOptions kF64(kFloat64);

std::vector<int64_t> ints(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<std::vector<int64_t>>(); }
bool given(const OracleCase& c, const char* key) { return !c.kwargs.at(key).is_null(); }
std::vector<double> reals(const OracleCase& c, const char* key) { return c.kwargs.at(key).get<std::vector<double>>(); }

// The case through F:: (layer false) or a layer holding the samples as its buffer.
std::tuple<Tensor, Tensor> run(const OracleCase& c, const TL& x, bool layer) {
  const auto k = ints(c, "kernel_size");
  if (k.size() == 2) {
    FractionalMaxPool2dOptions o(Int2(k[0], k[1]));
    if (given(c, "output_size")) o.output_size(Int2(ints(c, "output_size")[0], ints(c, "output_size")[1]));
    if (given(c, "output_ratio")) o.output_ratio(Ratio2(reals(c, "output_ratio")[0], reals(c, "output_ratio")[1]));
    o._random_samples(x[1]);
    return layer ? FractionalMaxPool2d(o)->forward_with_indices(x[0]) : F::fractional_max_pool2d_with_indices(x[0], o);
  }
  FractionalMaxPool3dOptions o(Int3(k[0], k[1], k[2]));
  if (given(c, "output_size")) {
    const auto s = ints(c, "output_size");
    o.output_size(Int3(s[0], s[1], s[2]));
  }
  if (given(c, "output_ratio")) {
    const auto r = reals(c, "output_ratio");
    o.output_ratio(Ratio3(r[0], r[1], r[2]));
  }
  o._random_samples(x[1]);
  return layer ? FractionalMaxPool3d(o)->forward_with_indices(x[0]) : F::fractional_max_pool3d_with_indices(x[0], o);
}
}  // namespace

TEST_CASE("fractional_max_pool: outputs, indices and gradients match PyTorch 1.13 given the samples",
          "[nn][nn_layers_31][oracle]") {
  for (bool layer : {false, true}) {
    INFO((layer ? "as a layer" : "through F::"));
    const auto seen = wick::test::check_oracle_ops({"fractional_max_pool2d", "fractional_max_pool2d_indices",
                                                    "fractional_max_pool3d", "fractional_max_pool3d_indices"},
                                                   [layer](const OracleCase& c, const TL& x, Device) {
                                                     const auto [y, i] = run(c, x, layer);
                                                     const bool want_indices =
                                                         c.op.find("_indices") != std::string::npos;
                                                     if (want_indices) CHECK(i.dtype() == kInt64);
                                                     return want_indices ? i : y;
                                                   },
                                                   {0, 0, 0});
    CHECK(seen.by_op.at("fractional_max_pool2d") == 5);
    CHECK(seen.by_op.at("fractional_max_pool3d") == 2);
    CHECK(seen.by_op.at("fractional_max_pool2d_indices") == 1);
    CHECK(seen.by_op.at("fractional_max_pool3d_indices") == 1);
  }
}

TEST_CASE("fractional_max_pool: windows by hand, ties, NaN and gradients", "[nn][nn_layers_31]") {
  // Width 7 to 3 with kernel 2, u = 0.5: a = (7 - 2) / 2 = 2.5, starts int(0.5 * 2.5) - int(1.25) = 0,
  // int(1.5 * 2.5) - 1 = 2, and 7 - 2 = 5. Height 1 to 1 with kernel 1: start 0.
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const Tensor x = tensor({3, 1, 4, 1, 5, 9, 2}, {1, 1, 1, 7}, kF64).to(dev).requires_grad_(true);
    const Tensor s = tensor({0.5, 0.0}, {1, 1, 2}, kF64).to(dev);
    const auto [y, i] = F::fractional_max_pool2d_with_indices(
        x, FractionalMaxPool2dOptions(Int2(1, 2)).output_size(Int2(1, 3))._random_samples(s));
    CHECK_VALUES(y, {3, 4, 9});
    CHECK_VALUES(i, {0, 2, 5});
    // The gradient goes to the maxima.
    const Tensor gx = autograd::grad({y}, {x}, {tensor({1.0, 2.0, 3.0}, {1, 1, 1, 3}, kF64).to(dev)})[0];
    CHECK_VALUES(gx, {1, 0, 2, 0, 0, 3, 0});
    // Overlapping windows (kernel 3, starts 0 and 1) share a maximum: its gradients accumulate.
    const Tensor z = tensor({1, 5, 2, 0}, {1, 1, 1, 4}, kF64).to(dev).requires_grad_(true);
    const Tensor yz =
        F::fractional_max_pool2d(z, FractionalMaxPool2dOptions(Int2(1, 3)).output_size(Int2(1, 2))._random_samples(s));
    CHECK_VALUES(yz, {5, 5});
    CHECK_VALUES(autograd::grad({yz.sum()}, {z})[0], {0, 2, 0, 0});
    // Ties: the first maximum; NaN: the last NaN.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor t = tensor({0, 7, 7, 1, nan, nan}, {1, 1, 2, 3}, kF64).to(dev);
    const auto [yt, it] = F::fractional_max_pool2d_with_indices(
        t, FractionalMaxPool2dOptions(Int2(1, 2)).output_size(Int2(2, 1))._random_samples(s));
    CHECK_VALUES(it, {1, 5});  // both windows are columns [1, 2] (start 3 - 2)
    CHECK(values(yt)[0] == 7.0);
    CHECK(std::isnan(values(yt)[1]));
  }
}

TEST_CASE("fractional_max_pool: drawn samples, layers, float32 and errors", "[nn][nn_layers_31]") {
  const Tensor x = randn({2, 3, 8, 7}, kF64);
  const auto o = FractionalMaxPool2dOptions(2).output_ratio(0.5);
  manual_seed(4);
  const Tensor a = F::fractional_max_pool2d(x, o);
  CHECK(a.sizes().vec() == std::vector<int64_t>{2, 3, 4, 3});
  manual_seed(4);
  CHECK_ALLCLOSE(F::fractional_max_pool2d(x, o), a, 0, 0);  // the same seed, the same windows
  manual_seed(4);
  const Tensor drawn = rand({2, 3, 2}, kF64);  // the samples the call drew
  CHECK_ALLCLOSE(F::fractional_max_pool2d(x, FractionalMaxPool2dOptions(o)._random_samples(drawn)), a, 0, 0);
  // float32 windows are computed in float, and pick the same maxima here.
  CHECK_ALLCLOSE(F::fractional_max_pool2d(x.to(kFloat32), FractionalMaxPool2dOptions(o)._random_samples(drawn)),
                 a.to(kFloat32), 0, 0);
  // A layer keeps its samples as the buffer "_random_samples", not in its options.
  FractionalMaxPool2d m(FractionalMaxPool2dOptions(o)._random_samples(drawn));
  CHECK(m->named_buffers().size() == 1);
  CHECK(!m->options()._random_samples().defined());
  CHECK_ALLCLOSE(m(x), a, 0, 0);
  CHECK(m->to_string() == "FractionalMaxPool2d()");  // PyTorch 1.13 defines no extra_repr
  CHECK(FractionalMaxPool3d(FractionalMaxPool3dOptions(2).output_size(2))->to_string() == "FractionalMaxPool3d()");
  CHECK(FractionalMaxPool3d(FractionalMaxPool3dOptions(2).output_size(2))(randn({3, 4, 5, 4}, kF64)).sizes().vec() ==
        std::vector<int64_t>{3, 2, 2, 2});
  // Errors.
  CHECK_THROWS_AS(FractionalMaxPool2d(FractionalMaxPool2dOptions(2)), ValueError);
  CHECK_THROWS_WITH(FractionalMaxPool2d(FractionalMaxPool2dOptions(2).output_ratio(1.5)),
                    Contains("FractionalMaxPool2d") && Contains("(0, 1)"));
  CHECK_THROWS_WITH(F::fractional_max_pool2d(x, FractionalMaxPool2dOptions(2).output_size(7)),
                    Contains("fractional_max_pool2d") && Contains("[2, 3, 8, 7]"));
  CHECK_THROWS_WITH(
      F::fractional_max_pool2d(x, FractionalMaxPool2dOptions(2).output_size(2)._random_samples(rand({2, 2, 2}, kF64))),
      Contains("_random_samples") && Contains("[2, 3, 2]"));
  CHECK_THROWS_WITH(F::fractional_max_pool2d(
                        x, FractionalMaxPool2dOptions(2).output_size(2)._random_samples(rand({2, 3, 2}, kF64) + 1.5)),
                    Contains("[0, 1]"));
  CHECK_THROWS_WITH(F::fractional_max_pool2d(randn({8, 7}, kF64), o),
                    Contains("fractional_max_pool2d") && Contains("[8, 7]"));
  CHECK_THROWS_AS(F::fractional_max_pool2d(zeros({1, 1, 4, 4}, TensorOptions(kInt64)), o), TypeError);
  CHECK_THROWS_AS(F::fractional_max_pool3d(randn({1, 1, 4, 4, 4}, kF64), FractionalMaxPool3dOptions(2)), ValueError);
}
