// DistributedDataParallel with static_graph (Note [Static graph]) on 2 and 3 ranks (mpirun):
// the first synchronised backward learns how many gradients each parameter gets and reduces at
// its end; later ones reduce each parameter after its last gradient. The truths: plain DDP and
// find_unused_parameters DDP (themselves checked against one process, ddp_test.cpp), the
// non-reentrant checkpoint's DDP gradient, and the refusals of a graph that changes.
#include <memory>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;
namespace hooks = distributed::ddp_comm_hooks;

namespace {

DistributedDataParallelOptions static_graph(DistributedDataParallelOptions o = tiny_buckets()) {
  o.static_graph = true;
  return o;
}

/// fc1, then `block` (fc1 again) inside a reentrant checkpoint when `reuse`, then fc2: fc1 gets
/// two gradients in one backward, the first from the checkpoint's own backward.
class Reusing : public nn::Cloneable<Reusing> {
 public:
  explicit Reusing(bool reentrant) : reentrant_(reentrant) {
    fc1_ = register_module("fc1", std::make_shared<nn::LinearImpl>(5, 5, kF64));
    fc2_ = register_module("fc2", std::make_shared<nn::LinearImpl>(5, 3, kF64));
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = child(fc1_).forward(x).tanh();
    auto block = [this](const Tensor& in) { return child(fc1_).forward(in).tanh(); };
    return child(fc2_).forward(autograd::checkpoint(block, h, {.use_reentrant = reentrant_}));
  }

 private:
  bool reentrant_;
  nn::ChildSlot<nn::LinearImpl> fc1_, fc2_;
};

}  // namespace

TEST_CASE("ddp: static_graph trains as plain DDP, bit for bit, with bucket views and with a hook", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(300);
  const Tensor x = randn({4, global, 5}, kFloat64), y = randn({4, global, 3}, kFloat64);
  struct Config {
    const char* name;
    bool bucket_view;
    bool hook;
    bool one_bucket;
  };
  for (const Config& c : {Config{"tiny buckets", false, false, false}, Config{"bucket views", true, false, false},
                          Config{"allreduce_hook", false, true, false}, Config{"one bucket", false, false, true}}) {
    INFO(c.name);
    std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
    std::vector<std::unique_ptr<DistributedDataParallel>> ddps;
    std::vector<std::unique_ptr<optim::SGD>> opts;
    for (bool is_static : {false, true}) {
      manual_seed(301 + g.rank());  // broadcast from rank 0 at construction
      nets.push_back(make_mlp());
      DistributedDataParallelOptions o = c.one_bucket ? DistributedDataParallelOptions{} : tiny_buckets();
      o.gradient_as_bucket_view = c.bucket_view;
      o.static_graph = is_static;
      ddps.push_back(std::make_unique<DistributedDataParallel>(nets.back(), o));
      if (c.hook) ddps.back()->register_comm_hook(hooks::allreduce_hook());
      opts.push_back(std::make_unique<optim::SGD>(nets.back()->parameters(), optim::SGDOptions(0.1).momentum(0.9)));
    }
    CHECK(ddps[1]->bucket_indices() == ddps[0]->bucket_indices());
    for (int64_t k = 0; k < 4; ++k) {  // the first backward learns, the others count down
      INFO("step " << k);
      for (size_t which = 0; which < 2; ++which) {
        opts[which]->zero_grad();
        nn::F::mse_loss(ddps[which]->forward(mine(x[k], local)), mine(y[k], local)).backward();
      }
      const auto plain = nets[0]->parameters(), learned = nets[1]->parameters();
      for (size_t i = 0; i < plain.size(); ++i) {
        CHECK_ALLCLOSE(learned[i].grad(), plain[i].grad(), 0.0, 0.0);
        CHECK(test::same_on_every_rank(learned[i].grad()));
      }
      for (auto& o : opts) o->step();
    }
    const auto stats = ddps[1]->comm_stats();
    CHECK(stats.backwards == 4);
    CHECK(stats.buckets == 4 * static_cast<int64_t>(ddps[1]->bucket_indices().size()));
  }
}

TEST_CASE("ddp: static_graph reduces a parameter used inside and outside a reentrant checkpoint once", "[mpi]") {
  // Without static_graph the reentrant checkpoint's second gradient is refused
  // (ddp_checkpoint_test.cpp); with it, fc1 is reduced after both, as the non-reentrant
  // checkpoint's single gradient is.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(310);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  std::vector<std::shared_ptr<Reusing>> nets;
  std::vector<std::unique_ptr<DistributedDataParallel>> ddps;
  std::vector<std::unique_ptr<optim::SGD>> opts;
  for (bool reentrant : {false, true}) {
    manual_seed(311);
    nets.push_back(std::make_shared<Reusing>(reentrant));
    ddps.push_back(std::make_unique<DistributedDataParallel>(nets.back(), reentrant ? static_graph() : tiny_buckets()));
    opts.push_back(std::make_unique<optim::SGD>(nets.back()->parameters(), optim::SGDOptions(0.05)));
  }
  for (int64_t k = 0; k < 3; ++k) {
    INFO("step " << k);
    for (size_t which = 0; which < 2; ++which) {
      opts[which]->zero_grad();
      nn::F::mse_loss(ddps[which]->forward(mine(x[k], local)), mine(y[k], local)).backward();
    }
    const auto one = nets[0]->parameters(), two = nets[1]->parameters();
    for (size_t i = 0; i < one.size(); ++i) {
      CHECK_ALLCLOSE(two[i].grad(), one[i].grad(), 0.0, 0.0);
      CHECK(test::same_on_every_rank(two[i].grad()));
    }
    for (auto& o : opts) o->step();
  }
}

TEST_CASE("ddp: static_graph learns the unused parameters, as find_unused_parameters finds them", "[mpi]") {
  // Branchy: fc2 used by rank 0 only, fc3 by none. Without find_unused_parameters, static_graph
  // marks them unused from the second backward on without a graph walk; fc3 keeps no .grad.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(320);
  const Tensor x = randn({4, global, 4}, kFloat64), y = randn({4, global, 3}, kFloat64);
  std::vector<std::shared_ptr<Branchy>> nets;
  std::vector<std::unique_ptr<DistributedDataParallel>> ddps;
  for (bool is_static : {false, true}) {
    manual_seed(321);
    nets.push_back(std::make_shared<Branchy>());
    ddps.push_back(std::make_unique<DistributedDataParallel>(nets.back(),
                                                             is_static ? static_graph() : tiny_buckets_find_unused()));
  }
  for (int64_t k = 0; k < 4; ++k) {
    INFO("iteration " << k);
    for (size_t which = 0; which < 2; ++which) {
      if (k != 2) nets[which]->zero_grad();  // iteration 2 accumulates onto iteration 1's .grad
      nn::F::mse_loss(call(*ddps[which], mine(x[k], local), g.rank() == 0), mine(y[k], local)).backward();
    }
    for (const auto& [name, p] : nets[1]->named_parameters()) {
      INFO(name);
      const Tensor expected = nets[0]->get_parameter(name).grad();
      REQUIRE(p.grad().defined() == expected.defined());
      if (name.rfind("fc3", 0) == 0) CHECK_FALSE(p.grad().defined());
      if (!expected.defined()) continue;
      CHECK_ALLCLOSE(p.grad(), expected, 0.0, 0.0);
      CHECK(test::same_on_every_rank(p.grad()));
    }
  }
}

TEST_CASE("ddp: static_graph refuses a graph that changes, and join", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(330);
  const Tensor x = randn({global, 4}, kFloat64), y = randn({global, 3}, kFloat64);
  auto step = [&](DistributedDataParallel& ddp, bool use_fc2) {
    nn::F::mse_loss(call(ddp, mine(x, local), use_fc2), mine(y, local)).backward();
  };
  {  // fc2 learned as used, then left out: its bucket (and every later one) never completes
    manual_seed(331);
    auto net = std::make_shared<Branchy>();
    DistributedDataParallel ddp(net, static_graph());
    step(ddp, true);
    step(ddp, true);
    step(ddp, false);
    for (int k = 0; k < 2; ++k)  // sticky: the ranks' collectives may no longer pair
      test::expect_error<StateError>([&] { step(ddp, true); },
                                     {"static_graph", "fewer gradients", "'fc2.weight'", "graph changed"});
    NoGradGuard no_grad;  // forwards without grad still run
    CHECK(call(ddp, mine(x, local), true).sizes() == std::vector<int64_t>{local, 3});
  }
  {  // fc2 learned as unused, then used: refused at its gradient, then every forward with grad
    manual_seed(332);
    auto net = std::make_shared<Branchy>();
    DistributedDataParallel ddp(net, static_graph());
    step(ddp, false);
    step(ddp, false);
    test::expect_error<StateError>([&] { step(ddp, true); },
                                   {"static_graph", "'fc2.", "received gradient 1", "gave it 0", "graph changed"});
    test::expect_error<StateError>([&] { step(ddp, false); }, {"did not finish"});
  }
  {  // join cannot learn the graph on a rank that has joined; nothing changes on refusal
    manual_seed(333);
    auto net = make_mlp();
    DistributedDataParallel ddp(net, static_graph());
    test::expect_error<StateError>([&] { ddp.enable_join(); }, {"DistributedDataParallel join", "static_graph"});
    const Tensor xs = randn({global, 5}, kFloat64), ys = randn({global, 3}, kFloat64);
    nn::F::mse_loss(ddp.forward(mine(xs, local)), mine(ys, local)).backward();  // trains on, without join
    for (const Tensor& p : net->parameters()) CHECK(test::same_on_every_rank(p.grad()));
  }
}
