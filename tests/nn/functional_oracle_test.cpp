// Every nn function of the PyTorch oracle (tests/data/ops.safetensors), forward and backward,
// at relative error 1e-9 in float64.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <map>

#include "support/allclose.h"
#include "support/oracle.h"
#include "wick/nn/functional.h"

using namespace wick;
using namespace wick::nn;
using wick::test::OracleCase;

namespace {
using OracleFn = std::function<Tensor(const OracleCase&, const std::vector<Tensor>&)>;

const std::map<std::string, OracleFn>& nn_ops() {
  static const std::map<std::string, OracleFn> ops = {
      {"linear", [](const OracleCase&, const std::vector<Tensor>& x) { return F::linear(x[0], x[1], x[2]); }},
      {"cross_entropy",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::cross_entropy(x[0], x[1], {}, reduction_from_string(c.kw<std::string>("reduction", "mean")));
       }},
      {"nll_loss",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::nll_loss(x[0], x[1], {}, reduction_from_string(c.kw<std::string>("reduction", "mean")));
       }},
      {"mse_loss",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::mse_loss(x[0], x[1], reduction_from_string(c.kw<std::string>("reduction", "mean")));
       }},
      {"conv2d",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         const Tensor bias = x.size() > 2 ? x[2] : Tensor();
         return F::conv2d(x[0], x[1], bias, c.kw<int64_t>("stride", 1), c.kw<int64_t>("padding", 0));
       }},
      {"max_pool2d",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::max_pool2d(x[0], c.kw<int64_t>("kernel_size", 2), c.kw<int64_t>("stride", 0));
       }},
      {"avg_pool2d",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::avg_pool2d(x[0], c.kw<int64_t>("kernel_size", 2), c.kw<int64_t>("stride", 0));
       }},
      {"layer_norm",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         const auto shape = c.kwargs.at("normalized_shape").get<std::vector<int64_t>>();
         return F::layer_norm(x[0], shape, x[1], x[2], c.kw<double>("eps", 1e-5));
       }},
      {"batch_norm_train",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::batch_norm(x[0], {}, {}, x[1], x[2], c.kw<bool>("training", true), 0.1, c.kw<double>("eps", 1e-5));
       }},
      {"embedding", [](const OracleCase&, const std::vector<Tensor>& x) { return F::embedding(x[0], x[1]); }},
      {"dropout_eval",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::dropout(x[0], c.kw<double>("p", 0.5), c.kw<bool>("training", false));
       }},
      // generate.py's coverage_cases
      {"batch_norm_eval",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         REQUIRE_FALSE(c.kw<bool>("training", true));
         return F::batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.1, c.kw<double>("eps", 1e-5));
       }},
      {"l1_loss",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::l1_loss(x[0], x[1], reduction_from_string(c.kw<std::string>("reduction", "mean")));
       }},
      {"bce_with_logits",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::binary_cross_entropy_with_logits(
             x[0], x[1], x[2], reduction_from_string(c.kw<std::string>("reduction", "mean")), x[3]);
       }},
      {"nll_loss_weighted",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::nll_loss(x[0], x[1], x[2], reduction_from_string(c.kw<std::string>("reduction", "mean")),
                            c.kw<int64_t>("ignore_index", -100));
       }},
      // generate.py's edge_cases: every row ignored, ignored rows holding -inf
      {"cross_entropy_ignore",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::cross_entropy(x[0], x[1], {}, reduction_from_string(c.kw<std::string>("reduction", "mean")),
                                 c.kw<int64_t>("ignore_index", -100), c.kw<double>("label_smoothing", 0.0));
       }},
      {"cross_entropy_smoothing",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::cross_entropy(x[0], x[1], x[2], reduction_from_string(c.kw<std::string>("reduction", "mean")),
                                 -100, c.kw<double>("label_smoothing", 0.0));
       }},
      {"avg_pool2d_padded",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::avg_pool2d(x[0], c.kw<int64_t>("kernel_size", 2), c.kw<int64_t>("stride", 0),
                              c.kw<int64_t>("padding", 0), c.kw<bool>("ceil_mode", false),
                              c.kw<bool>("count_include_pad", true));
       }},
      {"adaptive_avg_pool2d",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         const auto size = c.kwargs.at("output_size").get<std::vector<int64_t>>();
         return F::adaptive_avg_pool2d(x[0], Int2(size.at(0), size.at(1)));
       }},
      {"max_pool2d_padded",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::max_pool2d(x[0], c.kw<int64_t>("kernel_size", 2), c.kw<int64_t>("stride", 0),
                              c.kw<int64_t>("padding", 0), c.kw<int64_t>("dilation", 1), c.kw<bool>("ceil_mode", false));
       }},
      {"conv2d_groups",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::conv2d(x[0], x[1], x[2], c.kw<int64_t>("stride", 1), c.kw<int64_t>("padding", 0),
                          c.kw<int64_t>("dilation", 1), c.kw<int64_t>("groups", 1));
       }},
      {"pad",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         return F::pad(x[0], c.kwargs.at("pad").get<std::vector<int64_t>>(), c.kw<double>("value", 0.0));
       }},
      // generate.py's conv_pool_cases: padding "same" (or "valid") with a [h, w] dilation
      {"conv2d_same",
       [](const OracleCase& c, const std::vector<Tensor>& x) {
         const std::string mode = c.kw<std::string>("padding", "same");
         REQUIRE((mode == "same" || mode == "valid"));
         const auto dilation = c.kw<std::vector<int64_t>>("dilation", {1, 1});
         const Tensor bias = x.size() > 2 ? x[2] : Tensor();
         return F::conv2d(x[0], x[1], bias, 1, mode == "same" ? kSame : kValid,
                          Int2(dilation.at(0), dilation.at(1)));
       }},
  };
  return ops;
}
}  // namespace

TEST_CASE("nn functions match PyTorch forward and backward (float64, rtol 1e-9)", "[nn][oracle]") {
  std::map<std::string, int> seen;
  for (const auto& c : wick::test::oracle_cases()) {
    auto it = nn_ops().find(c.op);
    if (it == nn_ops().end()) continue;
    for (Device dev : {Device("cpu:0"), Device("cpu:1")}) {
      INFO(c.label() << " on " << dev.str());
      auto leaves = c.leaves(dev);
      Tensor out = it->second(c, leaves);
      CHECK(out.device() == dev);
      CHECK_ALLCLOSE(out, c.out, 1e-9, 0);
      auto grads = c.backward(out, leaves);
      for (size_t j = 0; j < grads.size(); ++j) {
        if (!c.differentiable[j]) continue;
        INFO("gradient of input " << j);
        REQUIRE(grads[j].defined());
        CHECK_ALLCLOSE(grads[j], c.gin[j], 1e-9, 0);
      }
    }
    ++seen[c.op];
  }
  // Every nn op of the oracle file was exercised (another file, such as the extended set, holds
  // some of them: at least one).
  if (std::getenv("WICK_ORACLE_FILE") == nullptr) {
    for (const auto& [op, fn] : nn_ops()) {
      INFO(op);
      CHECK(seen[op] > 0);
    }
  } else {
    CHECK(!seen.empty());
  }
}
