// AdaptiveLogSoftmaxWithLoss: PyTorch 1.13's output, loss, log_prob and predict with the module's
// parameters copied from torch (generate.py's index32_cases, layer cases), with the gradients of the
// input and every parameter, on every test device; hand checks of the layout (parameter names and
// shapes), of log_prob against forward and predict, of the generic call; typed errors.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"
#include "support/oracle.h"
#include "support/oracle_checks.h"
#include "support/small_tensors.h"

using namespace wick;
using wick::test::OracleCase;
using TL = std::vector<Tensor>;

namespace {
nn::AdaptiveLogSoftmaxWithLoss make(const OracleCase& c) {
  return nn::AdaptiveLogSoftmaxWithLoss(
      nn::AdaptiveLogSoftmaxWithLossOptions(c.kwargs.at("in_features").get<int64_t>(),
                                            c.kwargs.at("n_classes").get<int64_t>(),
                                            c.kwargs.at("cutoffs").get<std::vector<int64_t>>())
          .div_value(c.kwargs.at("div_value").get<double>())
          .head_bias(c.kwargs.at("head_bias").get<bool>()),
      kFloat64);
}
using wick::test::i64;
}  // namespace

TEST_CASE("nn: AdaptiveLogSoftmaxWithLoss matches PyTorch 1.13 on every device", "[adaptive_log_softmax]") {
  int seen = 0, predicts = 0;
  for (const OracleCase& c : wick::test::oracle_cases()) {
    if (c.op.rfind("adaptive_log_softmax", 0) != 0) continue;
    for (Device dev : wick::test::test_devices()) {
      INFO(c.label() << " on " << dev.str());
      nn::AdaptiveLogSoftmaxWithLoss m = make(c);
      m->to(dev);
      const auto names = c.kwargs.at("inputs").get<std::vector<std::string>>();
      const size_t data = names.at(1) == "target" ? 2 : 1;
      TL leaves = c.leaves(dev), wrt = leaves;
      const auto params = m->named_parameters();
      REQUIRE(params.keys() ==
              std::vector<std::string>(names.begin() + static_cast<std::ptrdiff_t>(data), names.end()));
      {
        NoGradGuard no_grad;
        for (size_t j = data; j < names.size(); ++j) {
          Tensor p = params[names[j]];
          REQUIRE(p.sizes() == leaves[j].sizes());
          p.copy_(leaves[j]);
          wrt[j] = p;
        }
      }
      Tensor out;
      if (c.op == "adaptive_log_softmax") out = m(leaves[0], leaves[1]).output;
      if (c.op == "adaptive_log_softmax_loss") out = m->forward(leaves[0], leaves[1]).loss;
      if (c.op == "adaptive_log_softmax_log_prob") out = m->log_prob(leaves[0]);
      if (c.op == "adaptive_log_softmax_predict") {
        out = m->predict(leaves[0] * 4.0 + c.kwargs.at("shift").get<double>());
        CHECK(out.dtype() == kInt64);
        ++predicts;
      }
      REQUIRE(out.defined());
      wick::test::check_oracle_case(c, out.reshape({-1}), wrt, dev, 1e-10, 1e-9, 1e-12);
    }
    ++seen;
  }
  CHECK(seen == 10);
  CHECK(predicts >= 3);
}

TEST_CASE("nn: AdaptiveLogSoftmaxWithLoss layout, log_prob, predict and the generic call", "[adaptive_log_softmax]") {
  manual_seed(5);
  nn::AdaptiveLogSoftmaxWithLoss m(nn::AdaptiveLogSoftmaxWithLossOptions(16, 20, {4, 10, 15}).head_bias(true),
                                   kFloat64);
  CHECK(m->cutoffs() == std::vector<int64_t>{4, 10, 15, 20});
  CHECK(m->shortlist_size() == 4);
  CHECK(m->n_clusters() == 3);
  CHECK(m->head_size() == 7);
  const auto params = m->named_parameters();
  CHECK(params.keys() == std::vector<std::string>{"head.weight", "head.bias", "tail.0.0.weight", "tail.0.1.weight",
                                                  "tail.1.0.weight", "tail.1.1.weight", "tail.2.0.weight",
                                                  "tail.2.1.weight"});
  // hidden sizes 16 / 4 = 4, 16 / 16 = 1, 16 / 64 = 0 (floor), as PyTorch's
  CHECK(params["tail.0.0.weight"].sizes() == IntArrayRef({4, 16}));
  CHECK(params["tail.1.1.weight"].sizes() == IntArrayRef({5, 1}));
  CHECK(params["tail.2.0.weight"].sizes() == IntArrayRef({0, 16}));
  CHECK(params["head.weight"].sizes() == IntArrayRef({7, 16}));

  const Tensor x = randn({6, 16}, kFloat64);
  const Tensor target = i64({0, 3, 4, 9, 14, 19});
  const Tensor lp = m->log_prob(x);
  CHECK_ALLCLOSE(lp.exp().sum({1}), ones({6}, kFloat64), 1e-12, 0.0);
  const nn::ASMoutput out = m(x, target);
  CHECK_ALLCLOSE(out.output, lp.gather(1, target.unsqueeze(1)).squeeze(1), 1e-12, 1e-14);
  CHECK_ALLCLOSE(out.loss, out.output.neg().mean(), 1e-15, 0.0);
  CHECK(m->predict(x).to_vector<int64_t>() == lp.argmax(1).to_vector<int64_t>());
  // Every row's head argmax on a cluster (the full-distribution path), then a single example.
  {
    NoGradGuard no_grad;
    m->head().bias().narrow(0, 4, 3).fill_(50.0);
  }
  CHECK(m->predict(x).to_vector<int64_t>() == m->log_prob(x).argmax(1).to_vector<int64_t>());
  const nn::ASMoutput one = m(x.select(0, 3), target.select(0, 3));
  CHECK(one.output.dim() == 0);
  CHECK_ALLCLOSE(one.output, m(x, target).output.select(0, 3), 1e-12, 1e-14);
  // The generic call returns (output, loss); the loss trains every parameter it reaches.
  const nn::Value v = m->forward_value({nn::Value(x), nn::Value(target)});
  REQUIRE(v.items().size() == 2);
  CHECK_ALLCLOSE(v.items()[0].tensor(), m(x, target).output, 0.0, 0.0);
  out.loss.backward();
  CHECK(params["head.weight"].grad().defined());
  CHECK(params["tail.1.0.weight"].grad().defined());
}

TEST_CASE("nn: AdaptiveLogSoftmaxWithLoss typed errors", "[adaptive_log_softmax]") {
  using wick::test::expect_error;
  using Opt = nn::AdaptiveLogSoftmaxWithLossOptions;
  expect_error<ValueError>([] { nn::AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {5, 3})); }, {"cutoffs", "[5, 3]"});
  expect_error<ValueError>([] { nn::AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {2, 10})); }, {"n_classes-1"});
  expect_error<ValueError>([] { nn::AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {})); }, {"cutoffs"});
  nn::AdaptiveLogSoftmaxWithLoss m(Opt(4, 10, {3, 6}), kFloat64);
  const Tensor x = randn({3, 4}, kFloat64);
  expect_error<IndexError>([&] { m(x, i64({0, 10, 2})); }, {"AdaptiveLogSoftmaxWithLoss", "[0, 9]", "[0, 10]"});
  expect_error<IndexError>([&] { m(x, i64({-1, 1, 2})); }, {"[-1, 2]"});
  expect_error<TypeError>([&] { m(x, i64({0, 1, 2}).to(kFloat64)); }, {"int64"});
  expect_error<ValueError>([&] { m(x, i64({0, 1})); }, {"[3, 4]"});
  expect_error<ValueError>([&] { m(x, i64({0, 1, 2, 3}).reshape({2, 2})); }, {"multi-target"});
  expect_error<ValueError>([&] { m(x.select(0, 0), i64({1})); }, {"[4]"});
  expect_error<ValueError>([&] { m->log_prob(x.select(0, 0)); }, {"log_prob", "[N, 4]"});
  expect_error<ValueError>([&] { m->forward_value({nn::Value(x)}); }, {"(input, target)"});
}
