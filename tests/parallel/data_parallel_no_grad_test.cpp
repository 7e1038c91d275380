// DataParallel of modules with parameters under NoGradGuard (PyTorch's test_data_parallel_no_grad
// and test_data_parallel_rnn, regression #21108). data_parallel_test's no-grad case uses a module
// without parameters, so the detach = !GradMode::is_enabled() argument of replicate was never
// observed (helper29 review, T6). A wrapper records, inside each replica's forward, what its
// parameters are: under no-grad none has a grad_fn, those on other devices do not require grad,
// and replica 0 holds the original parameter objects (replicate(detach = true), as PyTorch's).
// Outputs equal the plain module's and require no grad, and training through the same
// DataParallel afterwards gives the plain module's gradients.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <mutex>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using namespace wick::parallel;
using nn::Value;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;

namespace {

struct ParamSeen {
  Device device;
  bool requires_grad;
  bool has_grad_fn;
  bool is_original;  // the very tensor object of the original module
  bool grad_mode;
};

struct Seen {
  std::mutex mutex;
  std::vector<Tensor> originals;  // the wrapped module's parameters
  std::vector<ParamSeen> params;  // one entry per parameter per forward
  int forwards = 0;
};

// Runs `inner`, after recording what each of its (replica's) parameters is.
class RecordsParameters : public nn::Cloneable<RecordsParameters> {
 public:
  RecordsParameters(std::shared_ptr<nn::Module> inner, std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {
    inner_ = register_module("inner", std::move(inner));
  }
  Value forward_value(const std::vector<Value>& args) override {
    std::vector<ParamSeen> mine;
    for (const Tensor& p : parameters()) {
      bool original = false;
      for (const Tensor& o : seen_->originals) original = original || p.is_same(o);
      mine.push_back({p.device(), p.requires_grad(), p.grad_fn() != nullptr, original, GradMode::is_enabled()});
    }
    {
      std::lock_guard<std::mutex> lock(seen_->mutex);
      seen_->params.insert(seen_->params.end(), mine.begin(), mine.end());
      ++seen_->forwards;
    }
    return child(inner_).forward_value(args);
  }
  nn::ChildSlot<nn::Module> inner_;
  std::shared_ptr<Seen> seen_;
};

// What the replicas of one no-grad call on `devices` saw.
void check_detached_replicas(Seen& seen, const std::vector<Device>& devices) {
  std::lock_guard<std::mutex> lock(seen.mutex);
  REQUIRE(seen.forwards == static_cast<int>(devices.size()));
  REQUIRE(seen.params.size() == devices.size() * seen.originals.size());
  for (Device d : devices) {
    INFO("replica on " << d);
    size_t n = 0;
    for (const ParamSeen& p : seen.params) {
      if (p.device != d) continue;
      ++n;
      CHECK_FALSE(p.grad_mode);
      CHECK_FALSE(p.has_grad_fn);
      if (d == devices[0]) {
        CHECK(p.is_original);  // detached replicate: replica 0 holds the original parameters
      } else {
        CHECK_FALSE(p.requires_grad);
        CHECK_FALSE(p.is_original);
      }
    }
    CHECK(n == seen.originals.size());
  }
}

std::vector<Tensor> grads_of(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const Tensor& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

}  // namespace

TEST_CASE("DataParallel under no-grad: a Linear's output equals the module's, needs no grad, replicas are detached") {
  manual_seed(0);
  auto lin = std::make_shared<nn::LinearImpl>(10, 5, f64());
  auto seen = std::make_shared<Seen>();
  seen->originals = lin->parameters();
  DataParallel dp(std::make_shared<RecordsParameters>(lin, seen), cpus(2));
  const Tensor x = randn({8, 10}, f64());
  const Tensor expected = lin->forward(x);

  Tensor out;
  {
    NoGradGuard no_grad;
    out = dp.forward(x);
  }
  CHECK(out.device() == cpu(0));
  CHECK_ALLCLOSE(out, expected, 1e-12, 1e-13);
  CHECK_FALSE(out.requires_grad());
  CHECK(out.grad_fn() == nullptr);
  check_detached_replicas(*seen, cpus(2));
  for (const Tensor& p : lin->parameters()) {
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
    CHECK_FALSE(p.grad().defined());
  }

  // With grad mode back on, the same DataParallel trains: differentiable replicas, the plain
  // module's gradients.
  expected.sum().backward();
  const auto expected_grads = grads_of(*lin);
  lin->zero_grad();
  {
    std::lock_guard<std::mutex> lock(seen->mutex);
    seen->params.clear();
  }
  Tensor trained = dp.forward(x);
  CHECK(trained.requires_grad());
  trained.sum().backward();
  const auto grads = grads_of(*lin);
  REQUIRE(grads.size() == expected_grads.size());
  for (size_t k = 0; k < grads.size(); ++k) CHECK_ALLCLOSE(grads[k], expected_grads[k], 1e-12, 1e-13);
  std::lock_guard<std::mutex> lock(seen->mutex);
  for (const ParamSeen& p : seen->params) {
    CHECK(p.grad_mode);
    CHECK(p.has_grad_fn);  // broadcast outputs
  }
}

TEST_CASE("DataParallel under no-grad runs an LSTM as the plain module, then trains it (PyTorch #21108)") {
  manual_seed(1);
  auto lstm = std::make_shared<nn::LSTMImpl>(nn::LSTMOptions(4, 3).num_layers(2).batch_first(true), f64());
  auto seen = std::make_shared<Seen>();
  seen->originals = lstm->parameters();
  DataParallel dp(std::make_shared<RecordsParameters>(lstm, seen), cpus(2));
  const Tensor x = randn({6, 5, 4}, f64());
  const Value none;
  const Value expected = lstm->forward_value({x, none});  // (output [6, 5, 3], (h_n, c_n) [2, 6, 3])

  Value out;
  {
    NoGradGuard no_grad;
    out = dp.forward_value({x, none});
  }
  REQUIRE(out.is_tuple());
  REQUIRE(out.items().size() == 2);
  const Tensor y = out.items()[0].tensor();
  CHECK(y.device() == cpu(0));
  CHECK_ALLCLOSE(y, expected.items()[0].tensor(), 1e-12, 1e-13);
  // h_n and c_n ([layers, N, H]) are gathered along dim 0: each chunk's states (rows 0-2 and
  // 3-5 of the whole batch's, the samples being independent), stacked.
  REQUIRE(out.items()[1].items().size() == 2);
  for (size_t s = 0; s < 2; ++s) {
    const Tensor e = expected.items()[1].items()[s].tensor();
    const Tensor want = cat(std::vector<Tensor>{e.narrow(1, 0, 3), e.narrow(1, 3, 3)}, 0);
    CHECK_ALLCLOSE(out.items()[1].items()[s].tensor(), want, 1e-12, 1e-13);
  }
  size_t outputs = 0;
  out.for_each_tensor([&](const Tensor& t) {
    ++outputs;
    CHECK_FALSE(t.requires_grad());
  });
  CHECK(outputs == 3);
  check_detached_replicas(*seen, cpus(2));

  // Then a training step through the same DataParallel (what #21108 broke): the gradients equal
  // the plain module's on the whole batch.
  const Tensor e = expected.items()[0].tensor();
  (e * e).sum().backward();
  const auto expected_grads = grads_of(*lstm);
  lstm->zero_grad();
  const Value trained = dp.forward_value({x, none});
  const Tensor t = trained.items()[0].tensor();
  CHECK_ALLCLOSE(t, e, 1e-12, 1e-13);
  (t * t).sum().backward();
  const auto grads = grads_of(*lstm);
  REQUIRE(grads.size() == expected_grads.size());
  for (size_t k = 0; k < grads.size(); ++k) {
    INFO("parameter " << k);
    REQUIRE(grads[k].defined());
    CHECK_ALLCLOSE(grads[k], expected_grads[k], 1e-11, 1e-12);
  }
}
