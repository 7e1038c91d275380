// F::group_norm, F::instance_norm, GroupNorm and InstanceNorm1d/2d: the PyTorch oracle's cases
// (generate.py's norm_more_cases, selected by op name) forward at rtol 1e-10 and every gradient at
// rtol 1e-9 in float64, on every test device; running statistics and eval mode against values
// worked by hand; print strings and state_dict keys against PyTorch 1.13's; the typed errors.
// The gradchecks are in functional_gradcheck_test.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;
using wick::test::OracleCase;

namespace {
constexpr double kOutRtol = 1e-10, kGradRtol = 1e-9, kAtol = 1e-13;
const TensorOptions kF64(kFloat64);

// out (and, for a case that appends them, the running statistics after the call), flattened.
Tensor flat(const Tensor& out, const std::vector<Tensor>& more = {}) {
  std::vector<Tensor> parts = {out.reshape({-1})};
  for (const Tensor& t : more) parts.push_back(t.reshape({-1}));
  return cat(parts, 0);
}

// Compares the output and the gradients of `wrt[j]` (undefined where input j is not
// differentiable) with the case's.
void check_against(const OracleCase& c, const Tensor& out, const std::vector<Tensor>& wrt, Device dev) {
  wick::test::check_oracle_case(c, out, wrt, dev, kOutRtol, kGradRtol, kAtol);
}

Tensor input_or_none(const std::vector<Tensor>& x, size_t j) { return j < x.size() ? x[j] : Tensor(); }

// A module case: inputs are the data (the input, then, when the layer tracks running statistics,
// their initial values, copied into its buffers), then PyTorch's parameters by name. The output
// is the layer's, followed by its running statistics after the forward when it tracks them.
void check_module_case(const OracleCase& c, Module& m, const std::function<Tensor(const Tensor&)>& forward,
                       Device dev) {
  INFO(c.label() << " on " << dev.str());
  const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
  REQUIRE(names.size() == c.inputs.size());
  const bool track = c.kw<bool>("track_running_stats", false);
  const size_t n_data = track ? 3 : 1;
  std::vector<Tensor> leaves = c.leaves(dev);
  m.to(dev);
  m.train(c.kw<bool>("training", true));
  const OrderedDict<Tensor> params = m.named_parameters();
  REQUIRE(params.keys() == std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(n_data), names.end()));
  std::vector<Tensor> wrt(leaves.size());
  wrt[0] = leaves[0];
  {
    NoGradGuard no_grad;
    for (size_t j = n_data; j < names.size(); ++j) {
      Tensor p = params[names[j]];
      p.copy_(leaves[j]);
      wrt[j] = p;
    }
    if (track) {
      m.get_buffer("running_mean").copy_(leaves[1]);
      m.get_buffer("running_var").copy_(leaves[2]);
    }
  }
  const Tensor y = forward(leaves[0]);
  const Tensor out = track ? flat(y, {m.get_buffer("running_mean"), m.get_buffer("running_var")}) : flat(y);
  check_against(c, out, wrt, dev);
}
}  // namespace

TEST_CASE("group_norm matches PyTorch 1.13: affine or not, G = 1, G = C, [N, C], 1-d and 2-d spatial, empty batch",
          "[nn][oracle][norm]") {
  int seen = 0, empty = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "group_norm") continue;
    const int64_t groups = c.kwargs.at("num_groups").get<int64_t>();
    const double eps = c.kw<double>("eps", 1e-5);
    REQUIRE(c.inputs.size() == (c.kw<bool>("affine", true) ? 3u : 1u));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      const auto x = c.leaves(dev);
      const Tensor y = F::group_norm(x[0], groups, input_or_none(x, 1), input_or_none(x, 2), eps);
      CHECK(y.sizes() == x[0].sizes());
      check_against(c, y, x, dev);
    }
    empty += c.inputs[0].numel() == 0 ? 1 : 0;
    ++seen;
  }
  CHECK(seen >= 6);
  CHECK(empty >= 1);
}

TEST_CASE("instance_norm matches PyTorch 1.13, with its running statistics updated in training and read in eval",
          "[nn][oracle][norm]") {
  int seen = 0, running = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "instance_norm") continue;
    const bool affine = c.kw<bool>("affine", false), with_running = c.kw<bool>("running_stats", false);
    REQUIRE(c.inputs.size() == 1u + (affine ? 2u : 0u) + (with_running ? 2u : 0u));
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      auto x = c.leaves(dev);  // fresh copies: the running statistics are updated in place
      const Tensor w = affine ? x[1] : Tensor(), b = affine ? x[2] : Tensor();
      const Tensor rm = with_running ? x[x.size() - 2] : Tensor(), rv = with_running ? x[x.size() - 1] : Tensor();
      const Tensor y = F::instance_norm(x[0], rm, rv, w, b, c.kw<bool>("use_input_stats", true),
                                        c.kw<double>("momentum", 0.1), c.kw<double>("eps", 1e-5));
      CHECK(y.sizes() == x[0].sizes());
      check_against(c, with_running ? flat(y, {rm, rv}) : y, x, dev);
    }
    running += with_running ? 1 : 0;
    ++seen;
  }
  CHECK(seen >= 5);
  CHECK(running >= 3);
}

TEST_CASE("GroupNorm matches PyTorch 1.13 with PyTorch's parameter names, affine or not", "[nn][oracle][norm]") {
  int seen = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "group_norm_module") continue;
    const auto options =
        GroupNormOptions(c.kwargs.at("num_groups").get<int64_t>(), c.kwargs.at("num_channels").get<int64_t>())
            .eps(c.kw<double>("eps", 1e-5))
            .affine(c.kw<bool>("affine", true));
    for (Device dev : wick::test::test_devices()) {
      GroupNorm m(options, kF64);
      check_module_case(
          c, *m, [&](const Tensor& x) { return m(x); }, dev);
    }
    ++seen;
  }
  CHECK(seen >= 2);
}

TEST_CASE(
    "InstanceNorm1d and InstanceNorm2d match PyTorch 1.13: affine or not, unbatched, tracking running statistics in "
    "train and eval mode",
    "[nn][oracle][norm]") {
  std::map<std::string, int> seen;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op != "instance_norm_module") continue;
    const auto options = InstanceNormOptions(c.kwargs.at("num_features").get<int64_t>())
                             .eps(c.kw<double>("eps", 1e-5))
                             .momentum(c.kw<double>("momentum", 0.1))
                             .affine(c.kw<bool>("affine", false))
                             .track_running_stats(c.kw<bool>("track_running_stats", false));
    const int64_t dims = c.kw<int64_t>("dims", 1);
    REQUIRE((dims == 1 || dims == 2));
    for (Device dev : wick::test::test_devices()) {
      if (dims == 1) {
        InstanceNorm1d m(options, kF64);
        check_module_case(
            c, *m, [&](const Tensor& x) { return m(x); }, dev);
      } else {
        InstanceNorm2d m(options, kF64);
        check_module_case(
            c, *m, [&](const Tensor& x) { return m(x); }, dev);
      }
    }
    const bool unbatched = c.inputs[0].dim() == dims + 1;
    ++seen[fmt::format("{}d", dims)];
    if (unbatched) ++seen["unbatched"];
    if (options.track_running_stats()) ++seen[c.kw<bool>("training", true) ? "tracking, train" : "tracking, eval"];
  }
  for (const char* kind : {"1d", "2d", "unbatched", "tracking, train", "tracking, eval"}) {
    INFO(kind);
    CHECK(seen[kind] >= 2);
  }
}

TEST_CASE("InstanceNorm's running statistics: the batch mean of the instances', never counted, read in eval",
          "[nn][norm]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    InstanceNorm1d m(InstanceNorm1dOptions(1).momentum(0.5).track_running_stats(true), kF64);
    m->to(dev);
    // Instance 0: 1, 2, 3, 6 (mean 3, biased variance 7/2, unbiased 14/3); instance 1: 2, 4, 6, 8
    // (mean 5, biased 5, unbiased 20/3). Batch means: 4 and 17/3.
    const Tensor x = tensor(std::vector<double>{1, 2, 3, 6, 2, 4, 6, 8}, {2, 1, 4}, kF64).to(dev);
    const Tensor y = m(x);
    const double eps = 1e-5;
    std::vector<double> want;
    for (double v : {1.0, 2.0, 3.0, 6.0}) want.push_back((v - 3) / std::sqrt(3.5 + eps));
    for (double v : {2.0, 4.0, 6.0, 8.0}) want.push_back((v - 5) / std::sqrt(5 + eps));
    CHECK_ALLCLOSE(y, tensor(want, {2, 1, 4}, kF64), 1e-12, 0);
    CHECK_ALLCLOSE(m->running_mean(), tensor(std::vector<double>{0.5 * 4}, {1}, kF64), 1e-14, 0);
    CHECK_ALLCLOSE(m->running_var(), tensor(std::vector<double>{0.5 + 0.5 * 17.0 / 3.0}, {1}, kF64), 1e-14, 0);
    CHECK(m->num_batches_tracked().item<int64_t>() == 0);  // PyTorch 1.13 keeps it at 0
    // Eval mode normalizes with the running statistics (2, 10/3) and leaves them alone.
    m->eval();
    const Tensor ye = m(x);
    std::vector<double> want_eval;
    for (double v : {1.0, 2.0, 3.0, 6.0, 2.0, 4.0, 6.0, 8.0}) want_eval.push_back((v - 2) / std::sqrt(10.0 / 3 + eps));
    CHECK_ALLCLOSE(ye, tensor(want_eval, {2, 1, 4}, kF64), 1e-12, 0);
    CHECK_ALLCLOSE(m->running_mean(), tensor(std::vector<double>{2}, {1}, kF64), 1e-14, 0);
    // Without running statistics, eval mode still normalizes each instance by itself.
    InstanceNorm1d plain(InstanceNorm1dOptions(1), kF64);
    plain->to(dev);
    plain->eval();
    CHECK_ALLCLOSE(plain(x), tensor(want, {2, 1, 4}, kF64), 1e-12, 0);
    // reset_running_stats() puts them back to 0 and 1.
    m->reset_running_stats();
    CHECK_VALUES(m->running_mean(), {0});
    CHECK_VALUES(m->running_var(), {1});
  }
}

TEST_CASE("instance_norm and InstanceNorm over an empty batch: an empty output in the graph, statistics left alone",
          "[nn][norm]") {
  for (Device dev : wick::test::test_devices()) {
    INFO(dev.str());
    const TensorOptions o = TensorOptions(kFloat64).device(dev);
    Tensor rm = zeros({3}, o), rv = ones({3}, o);
    Tensor x = randn({0, 3, 4}, o).requires_grad_(true);
    Tensor w = randn({3}, o).requires_grad_(true), b = randn({3}, o).requires_grad_(true);
    const Tensor y = F::instance_norm(x, rm, rv, w, b, true, 0.1);
    CHECK(y.sizes() == IntArrayRef({0, 3, 4}));
    REQUIRE(y.requires_grad());
    // PyTorch 1.13 writes NaN here (the mean over no instances); wick leaves them as they were.
    CHECK_VALUES(rm, {0, 0, 0});
    CHECK_VALUES(rv, {1, 1, 1});
    sum(y).backward();
    CHECK(x.grad().sizes() == IntArrayRef({0, 3, 4}));
    CHECK_VALUES(w.grad(), {0, 0, 0});
    CHECK_VALUES(b.grad(), {0, 0, 0});
    InstanceNorm2d m(InstanceNorm2dOptions(3).affine(true).track_running_stats(true), kF64);
    m->to(dev);
    CHECK(m(zeros({0, 3, 2, 2}, o)).sizes() == IntArrayRef({0, 3, 2, 2}));
    CHECK_VALUES(m->running_mean(), {0, 0, 0});
    CHECK_VALUES(m->running_var(), {1, 1, 1});
  }
}

TEST_CASE("GroupNorm and InstanceNorm print and name their state as PyTorch 1.13", "[nn][norm]") {
  // print(nn.GroupNorm(2, 6)), print(nn.GroupNorm(3, 6, eps=1e-3, affine=False)), ...
  CHECK(GroupNorm(2, 6)->to_string() == "GroupNorm(2, 6, eps=1e-05, affine=True)");
  CHECK(GroupNorm(GroupNormOptions(3, 6).eps(1e-3).affine(false))->to_string() ==
        "GroupNorm(3, 6, eps=0.001, affine=False)");
  CHECK(InstanceNorm1d(4)->to_string() ==
        "InstanceNorm1d(4, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  CHECK(InstanceNorm2d(InstanceNorm2dOptions(3).momentum(0.3).affine(true).track_running_stats(true))->to_string() ==
        "InstanceNorm2d(3, eps=1e-05, momentum=0.3, affine=True, track_running_stats=True)");
  // list(m.state_dict().keys())
  using Keys = std::vector<std::string>;
  CHECK(GroupNorm(2, 4)->state_dict().keys() == Keys{"weight", "bias"});
  CHECK(GroupNorm(GroupNormOptions(2, 4).affine(false))->state_dict().keys().empty());
  CHECK(InstanceNorm2d(3)->state_dict().keys().empty());
  CHECK(InstanceNorm2d(InstanceNorm2dOptions(3).affine(true).track_running_stats(true))->state_dict().keys() ==
        Keys{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
  CHECK(InstanceNorm1d(InstanceNorm1dOptions(3).track_running_stats(true))->state_dict().keys() ==
        Keys{"running_mean", "running_var", "num_batches_tracked"});
  // Defaults: weight ones, bias zeros, running_mean zeros, running_var ones, int64 count.
  GroupNorm g(2, 4);
  CHECK_VALUES(g->weight(), {1, 1, 1, 1});
  CHECK_VALUES(g->bias(), {0, 0, 0, 0});
  InstanceNorm1d in(InstanceNorm1dOptions(2).affine(true).track_running_stats(true));
  CHECK_VALUES(in->weight(), {1, 1});
  CHECK_VALUES(in->running_var(), {1, 1});
  CHECK(in->num_batches_tracked().dtype() == kInt64);
  CHECK(in->options().momentum() == 0.1);
  CHECK_FALSE(InstanceNormOptions(3).affine());
  CHECK_FALSE(InstanceNormOptions(3).track_running_stats());
  CHECK(GroupNormOptions(1, 2).affine());
}

TEST_CASE("GroupNorm and InstanceNorm clone into independent parameters and buffers", "[nn][norm]") {
  GroupNorm g(GroupNormOptions(2, 4), kF64);
  auto gc = g->clone();
  CHECK(gc->weight().data_ptr() != g->weight().data_ptr());
  {
    NoGradGuard no_grad;
    Tensor(g->weight()).add_(1.0);
  }
  CHECK_VALUES(gc->weight(), {1, 1, 1, 1});
  CHECK(gc->options().num_groups() == 2);
  InstanceNorm1d in(InstanceNorm1dOptions(2).affine(true).track_running_stats(true), kF64);
  auto ic = in->clone();
  in(randn({3, 2, 5}, kF64) + 4.0);  // moves the original's running statistics only
  CHECK_VALUES(ic->running_mean(), {0, 0});
  CHECK(ic->running_mean().data_ptr() != in->running_mean().data_ptr());
  CHECK(ic->weight().data_ptr() != in->weight().data_ptr());
  CHECK(ic->options().track_running_stats());
}

TEST_CASE("group_norm and GroupNorm refuse bad input with typed errors that name the op and the shapes",
          "[nn][norm][errors]") {
  const Tensor x = randn({2, 6, 4}, kF64);
  CHECK_THROWS_AS(F::group_norm(x, 4), ValueError);
  CHECK_THROWS_WITH(F::group_norm(x, 4), Contains("group_norm") && Contains("C = 6") && Contains("[2, 6, 4]") &&
                                             Contains("num_groups = 4") && Contains("divisible"));
  CHECK_THROWS_AS(F::group_norm(x, 0), ValueError);
  CHECK_THROWS_WITH(F::group_norm(x, -2), Contains("num_groups must be positive"));
  CHECK_THROWS_AS(F::group_norm(randn({6}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::group_norm(randn({6}, kF64), 2), Contains("group_norm") && Contains("at least 2 dims"));
  CHECK_THROWS_AS(F::group_norm(x, 3, ones({4}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::group_norm(x, 3, ones({4}, kF64)),
                    Contains("group_norm") && Contains("weight must have shape [6]") && Contains("got [4]"));
  CHECK_THROWS_WITH(F::group_norm(x, 3, {}, ones({5}, kF64)), Contains("bias must have shape [6]"));
  CHECK_THROWS_AS(F::group_norm(x, 3, ones({6}, kFloat32)), TypeError);
  CHECK_THROWS_WITH(F::group_norm(x, 3, ones({6}, kFloat32)),
                    Contains("group_norm") && Contains("float64") && Contains("float32") && Contains(".to(dtype)"));
  CHECK_THROWS_AS(F::group_norm(ones({2, 6, 4}, kInt64), 3), TypeError);
  CHECK_THROWS_AS(F::group_norm(x, 3, ones({6}, TensorOptions(kFloat64).device(Device("cpu:1")))), ValueError);
  CHECK_THROWS_WITH(F::group_norm(x, 3, ones({6}, TensorOptions(kFloat64).device(Device("cpu:1")))),
                    Contains("cpu:1") && Contains("cpu:0"));
  // PyTorch 1.13 refuses one sample whose every group is one value, and takes several.
  CHECK_THROWS_AS(F::group_norm(randn({1, 2, 1}, kF64), 2), ValueError);
  CHECK_THROWS_WITH(F::group_norm(randn({1, 2, 1}, kF64), 2), Contains("more than 1 value per group"));
  CHECK_VALUES(F::group_norm(randn({2, 2, 1}, kF64), 2), {0, 0, 0, 0});
  CHECK_THROWS_AS(GroupNorm(4, 6), ValueError);
  CHECK_THROWS_WITH(GroupNorm(4, 6),
                    Contains("GroupNorm") && Contains("num_channels (6)") && Contains("divisible by num_groups (4)"));
  CHECK_THROWS_AS(GroupNorm(0, 6), ValueError);
  GroupNorm g(GroupNormOptions(2, 6), kF64);
  CHECK_THROWS_WITH(g(randn({2, 4, 3}, kF64)), Contains("weight must have shape [4]") && Contains("got [6]"));
  CHECK_THROWS_AS(g(randn({2, 6, 3}, kFloat32)), TypeError);
}

TEST_CASE("instance_norm and InstanceNorm refuse bad input with typed errors, changing no state",
          "[nn][norm][errors]") {
  const Tensor x = randn({2, 3, 5}, kF64);
  CHECK_THROWS_AS(F::instance_norm(randn({3}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::instance_norm(randn({3}, kF64)), Contains("instance_norm") && Contains("at least 2 dims"));
  CHECK_THROWS_AS(F::instance_norm(randn({2, 3}, kF64)), ValueError);
  CHECK_THROWS_WITH(F::instance_norm(randn({2, 3, 1}, kF64)),
                    Contains("instance_norm") && Contains("more than 1 spatial element") && Contains("[2, 3, 1]"));
  // With the running statistics one spatial element is fine.
  CHECK(F::instance_norm(randn({2, 3, 1}, kF64), zeros({3}, kF64), ones({3}, kF64), {}, {}, false).sizes() ==
        IntArrayRef({2, 3, 1}));
  CHECK_THROWS_AS(F::instance_norm(x, {}, {}, {}, {}, false), ValueError);
  CHECK_THROWS_WITH(F::instance_norm(x, zeros({3}, kF64), {}, {}, {}, false),
                    Contains("use_input_stats = false") && Contains("running_var undefined"));
  CHECK_THROWS_WITH(F::instance_norm(x, {}, {}, ones({4}, kF64)),
                    Contains("instance_norm") && Contains("weight must have shape [3]") && Contains("got [4]"));
  CHECK_THROWS_AS(F::instance_norm(x, {}, {}, ones({3}, kFloat32)), TypeError);
  Tensor rm = zeros({3}, kF64), rv = ones({3}, kF64);
  CHECK_THROWS_WITH(F::instance_norm(x, zeros({4}, kF64), rv), Contains("running_mean must have shape [3]"));
  CHECK_THROWS_AS(F::instance_norm(x, rm, ones({3}, kFloat32)), TypeError);
  CHECK_THROWS_AS(F::instance_norm(x, rm, rv, ones({2}, kF64)), ValueError);
  CHECK_VALUES(rm, {0, 0, 0});  // refused: nothing updated
  CHECK_VALUES(rv, {1, 1, 1});

  InstanceNorm1d in1(InstanceNorm1dOptions(3).affine(true).track_running_stats(true), kF64);
  CHECK_THROWS_AS(in1(randn({2, 3, 4, 4}, kF64)), ValueError);
  CHECK_THROWS_WITH(in1(randn({2, 3, 4, 4}, kF64)), Contains("InstanceNorm1d") && Contains("2-d or 3-d") &&
                                                        Contains("[N, C, L]") && Contains("[2, 3, 4, 4]"));
  CHECK_THROWS_WITH(in1(randn({3}, kF64)),
                    Contains("InstanceNorm1d") && Contains("expected 2D or 3D input (got 1D input)"));
  CHECK_THROWS_AS(in1(randn({2, 4, 5}, kF64)), ValueError);
  CHECK_THROWS_WITH(in1(randn({2, 4, 5}, kF64)), Contains("InstanceNorm1d") && Contains("num_features (3)") &&
                                                     Contains("got 4") && Contains("[2, 4, 5]"));
  CHECK_THROWS_AS(in1(randn({2, 3, 1}, kF64)), ValueError);  // one spatial element, training
  CHECK_THROWS_AS(in1(randn({2, 3, 5}, kFloat32)), TypeError);
  CHECK_VALUES(in1->running_mean(), {0, 0, 0});
  CHECK_VALUES(in1->running_var(), {1, 1, 1});
  InstanceNorm2d in2(InstanceNorm2dOptions(3), kF64);
  CHECK_THROWS_WITH(in2(randn({3, 4}, kF64)),
                    Contains("InstanceNorm2d") && Contains("3-d or 4-d") && Contains("[N, C, H, W]"));
  // Without affine or running statistics the channels are not checked, as PyTorch 1.13.
  CHECK(in2(randn({2, 5, 3, 3}, kF64)).sizes() == IntArrayRef({2, 5, 3, 3}));
  CHECK_THROWS_AS(InstanceNorm1d(0), ValueError);
}
