// Anomaly mode: a NaN produced in backward raises an error naming the node and the forward site
// that created it (this file's anomaly_forward_site; test_seeing exports its symbols).
#include <catch2/catch.hpp>
#include <cmath>

#include "wick/wick.h"

using namespace wick;

namespace seeing_test {  // user code: outside namespace wick
// y = sqrt(x) * 0 at x = 0: forward is a clean 0, but SqrtBackward computes (0 / 2) / sqrt(0)
// = 0 / 0 = NaN. Not inlined, with external linkage, so its name is in the backtrace.
[[gnu::noinline]] Tensor anomaly_forward_site(const Tensor& x) { return mul(sqrt(x), zeros({1})); }
}  // namespace seeing_test

TEST_CASE("anomaly mode: a NaN in backward names the node and its forward site") {
  Tensor x = zeros({1}, TensorOptions().requires_grad(true));
  std::string message;
  {
    autograd::detect_anomaly guard;
    CHECK(autograd::AnomalyMode::is_enabled());
    Tensor y = seeing_test::anomaly_forward_site(x);
    try {
      y.sum().backward();
    } catch (const ValueError& e) {
      message = e.what();
    }
  }
  CHECK_FALSE(autograd::AnomalyMode::is_enabled());
  INFO(message);
  CHECK(message.find("SqrtBackward") != std::string::npos);
  CHECK(message.find("NaN") != std::string::npos);
  // The name as the symbol table gives it: under Note [Test batches] the file's code sits in a
  // namespace of the batch (called from wick_test_batch_seeing_0_0::seeing_test::...).
  const auto called_from = message.find("called from ");
  REQUIRE(called_from != std::string::npos);
  const auto site = message.find("seeing_test::anomaly_forward_site(", called_from);
  CHECK(site != std::string::npos);
  CHECK(message.find('\n', called_from) > site);  // on the "called from" line
}

TEST_CASE("anomaly mode: off, the same NaN flows into .grad silently, as PyTorch") {
  Tensor x = zeros({1}, TensorOptions().requires_grad(true));
  seeing_test::anomaly_forward_site(x).sum().backward();
  CHECK(std::isnan(x.grad().item<double>()));
}

TEST_CASE("anomaly mode: guards nest and restore, a clean backward passes") {
  {
    autograd::DetectAnomalyGuard outer;
    {
      autograd::DetectAnomalyGuard inner;
      CHECK(autograd::AnomalyMode::is_enabled());
    }
    CHECK(autograd::AnomalyMode::is_enabled());
    Tensor x = full({2}, 4.0, TensorOptions().requires_grad(true));
    sqrt(x).sum().backward();
    CHECK(x.grad()[0].item<double>() == Approx(0.25));
    CHECK(x.grad_fn() == nullptr);
  }
  CHECK_FALSE(autograd::AnomalyMode::is_enabled());
}
