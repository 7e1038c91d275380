// How an optimizer step's fused updates reach the stub (nn/src/optim/fused_steps.h, Note [Fused
// optimizer steps]): one call per device and dtype for parameters that share no memory, one call
// per parameter, in order, for parameters that do; and what the optimizers then compute.
#include "optim/fused_steps.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/core/stubs.h"
#include "wick/nn/optim/optim.h"

using namespace wick;

namespace {

// A stub that records each call's parameters instead of updating them.
std::vector<std::vector<void*>> g_calls;
void record(DType, const stubs::SgdStepTensor* ts, int64_t count) {
  std::vector<void*> call;
  for (int64_t i = 0; i < count; ++i) call.push_back(ts[i].p);
  g_calls.push_back(call);
}
DispatchStub<stubs::SgdStepFn> g_recorder("recorder");

}  // namespace

TEST_CASE("fused steps: parameters that share no memory go to the stub in one call per device and dtype") {
  g_recorder.set(DeviceType::CPU, &record);
  g_calls.clear();
  const Tensor a = wick::zeros({5}), b = wick::zeros({3}), g = wick::zeros({8});
  const Tensor c = wick::zeros({4}, TensorOptions(kFloat64));
  const Tensor ga = g.narrow(0, 0, 5), gb = g.narrow(0, 5, 3);  // adjacent gradients, as in a bucket
  optim::detail::FusedSteps<stubs::SgdStepTensor> steps;
  steps.add(a, ga, {}, {});
  steps.add(c, c, {}, {});  // reads what it writes: its own arrays may coincide
  steps.add(b, gb, {}, {});
  const int64_t version = a.version();
  steps.run(g_recorder);
  REQUIRE(g_calls.size() == 2);
  CHECK(g_calls[0] == std::vector<void*>{a.data_ptr(), b.data_ptr()});
  CHECK(g_calls[1] == std::vector<void*>{c.data_ptr()});
  CHECK(a.version() == version + 1);
  CHECK(ga.version() == g.version());  // gradients are read, not bumped
}

TEST_CASE("fused steps: parameters that share memory go one at a time, in order") {
  g_recorder.set(DeviceType::CPU, &record);
  const Tensor base = wick::zeros({6}), other = wick::zeros({2});
  const Tensor a = base.narrow(0, 0, 4), b = base.narrow(0, 2, 4);
  // Overlap through a written array, and through one parameter's gradient read as another's
  // parameter.
  for (int variant = 0; variant < 2; ++variant) {
    INFO("variant " << variant);
    g_calls.clear();
    optim::detail::FusedSteps<stubs::SgdStepTensor> steps;
    if (variant == 0) {
      steps.add(a, other, {}, {});
      steps.add(b, other, {}, {});
    } else {
      const Tensor head = base.narrow(0, 0, 2), tail = base.narrow(0, 4, 2);
      steps.add(head, tail, {}, {});
      steps.add(tail, other, {}, {});
    }
    steps.run(g_recorder);
    REQUIRE(g_calls.size() == 2);
    CHECK(g_calls[0].size() == 1);
    CHECK(g_calls[1].size() == 1);
    CHECK(g_calls[0][0] < g_calls[1][0]);  // the order they were added in
  }
}

TEST_CASE("fused steps: SGD over parameters that share memory applies each update in turn") {
  for (bool fused : {true, false}) {
    INFO("fused " << fused);
    Tensor base = wick::ones({6}, TensorOptions(kFloat64));
    Tensor a = base.narrow(0, 0, 4).detach().requires_grad_();
    Tensor b = base.narrow(0, 2, 4).detach().requires_grad_();
    a.set_grad(wick::full({4}, 1.0, TensorOptions(kFloat64)));
    b.set_grad(wick::full({4}, 10.0, TensorOptions(kFloat64)));
    optim::SGD opt(std::vector<Tensor>{a, b}, optim::SGDOptions(0.5));
    opt.set_fused(fused);
    opt.step();
    // a: 1 - 0.5 on elements 0-3; then b: - 5 on elements 2-5.
    CHECK(base.to_vector<double>() == std::vector<double>{0.5, 0.5, -4.5, -4.5, -4.0, -4.0});
  }
}

TEST_CASE("fused steps: a fused and an unfused parameter that share memory update in parameter order") {
  // p1 (contiguous: fused) is elements 0-3 of `base`; p2 (elements 0, 2, 4: strided, so it takes
  // the tensor-op path) comes second. The fused update of p1 used to run after the loop, i.e.
  // after p2's. PyTorch 1.13 (torch.optim.SGD, Adam or AdamW([p1, p2], lr=0.5, weight_decay=0.1)
  // over the same views of torch.ones(6, dtype=float64)) updates p1 then p2; for SGD by hand:
  // p1: 1 - 0.5 (1 + 0.1) = 0.45; p2: 0.45 - 0.5 (10 + 0.045) = -4.5725 and 1 - 0.5 (10 + 0.1) = -4.05.
  const std::vector<std::pair<std::string, std::vector<double>>> cases = {
      {"SGD", {-4.5725, 0.44999999999999996, -4.5725, 0.44999999999999996, -4.05, 1.0}},
      {"Adam",
       {5.042967043955571e-09, 0.5000000045454546, 5.042967043955571e-09, 0.5000000045454546, 0.5000000004950496, 1.0}},
      {"AdamW",
       {-0.07249999475000013, 0.45000000499999987, -0.07249999475000013, 0.45000000499999987, 0.4500000005, 1.0}},
  };
  for (const auto& [kind, torch_values] : cases) {
    std::vector<std::vector<double>> results;
    for (bool fused : {true, false}) {
      INFO(kind << ", fused " << fused);
      Tensor base = wick::ones({6}, TensorOptions(kFloat64));
      Tensor p1 = base.narrow(0, 0, 4).detach().requires_grad_();
      Tensor p2 = base.view({3, 2}).select(1, 0).detach().requires_grad_();
      REQUIRE(p1.is_contiguous());
      REQUIRE_FALSE(p2.is_contiguous());
      p1.set_grad(wick::full({4}, 1.0, TensorOptions(kFloat64)));
      p2.set_grad(wick::full({3}, 10.0, TensorOptions(kFloat64)));
      const std::vector<Tensor> ps = {p1, p2};
      std::unique_ptr<optim::Optimizer> opt;
      if (kind == "SGD")
        opt = std::make_unique<optim::SGD>(ps, optim::SGDOptions(0.5).weight_decay(0.1));
      else if (kind == "Adam")
        opt = std::make_unique<optim::Adam>(ps, optim::AdamOptions(0.5).weight_decay(0.1));
      else
        opt = std::make_unique<optim::AdamW>(ps, optim::AdamWOptions(0.5).weight_decay(0.1));
      opt->set_fused(fused);
      opt->step();
      results.push_back(base.to_vector<double>());
      for (size_t i = 0; i < 6; ++i) {
        INFO("element " << i << ": " << results.back()[i] << " vs PyTorch's " << torch_values[i]);
        CHECK(std::abs(results.back()[i] - torch_values[i]) <= 1e-15);  // the other order is >= 2e-10 off
      }
    }
    INFO(kind);
    CHECK(results[0] == results[1]);
  }
}

TEST_CASE("fused steps: a gradient that is its parameter's own storage takes the tensor-op path") {
  // AdamW decays p before reading the gradient; when the gradient is p's own storage the tensor
  // ops decay it too (as PyTorch), where the fused loop read it first (0.8500000009999998), and
  // the fused loops take p and g as distinct arrays. PyTorch 1.13 (p = 1, lr 0.1, weight_decay
  // 0.5; p.grad = p.detach(); torch.optim.AdamW): 0.8500000010526315; wick's tensor ops group the division
  // differently, so the last bit may differ (Note [Fused optimizer steps]).
  for (const std::string kind : {"AdamW", "SGD"}) {
    std::vector<std::vector<double>> results;
    for (bool fused : {true, false}) {
      INFO(kind << ", fused " << fused);
      Tensor p = wick::ones({3}, TensorOptions(kFloat64)).requires_grad_();
      p.set_grad(p.detach());
      std::unique_ptr<optim::Optimizer> opt;
      if (kind == "AdamW")
        opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, optim::AdamWOptions(0.1).weight_decay(0.5));
      else
        opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.1).momentum(0.9));
      opt->set_fused(fused);
      opt->step();
      results.push_back(p.to_vector<double>());
      // SGD by hand: p - 0.1 * p (the first momentum buffer is g).
      const double want = kind == "AdamW" ? 0.8500000010526315 : 0.9;
      for (double x : results.back()) CHECK(std::abs(x - want) <= 4e-16);
    }
    INFO(kind);
    CHECK(results[0] == results[1]);
  }
}

TEST_CASE("fused steps: the fused SGD, Adam and AdamW passes give the tensor-op path's float32 bits") {
  // Each update rounds every operation on its own, in the tensor ops' order (Note [Fused
  // optimizer steps]); a vectorised clone that contracted a multiply and an add into an FMA
  // (Note [CPU multiversioning]) would change last bits here. 100003 elements: the vector body
  // and the scalar tail both run.
  const int64_t n = 100003;
  for (const std::string kind : {"SGD nesterov", "SGD", "Adam", "AdamW amsgrad"}) {
    INFO(kind);
    std::vector<std::vector<float>> results;
    for (bool fused : {true, false}) {
      manual_seed(5);
      Tensor p = wick::randn({n}).requires_grad_();
      std::unique_ptr<optim::Optimizer> opt;
      if (kind == "SGD nesterov")
        opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p},
                                           optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01));
      else if (kind == "SGD")
        opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(0.05).momentum(0.5));
      else if (kind == "Adam")
        opt = std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.01).weight_decay(0.1));
      else {
        optim::AdamWOptions o(0.01);
        o.amsgrad(true);
        opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{p}, o);
      }
      opt->set_fused(fused);
      for (int step = 0; step < 3; ++step) {
        p.set_grad(wick::randn({n}));
        opt->step();
      }
      results.push_back(p.to_vector<float>());
    }
    int64_t differ = 0;
    for (size_t i = 0; i < results[0].size(); ++i) differ += results[0][i] != results[1][i];
    CHECK(differ == 0);
  }
}
