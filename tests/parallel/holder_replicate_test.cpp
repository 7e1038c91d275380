// A custom module written in LibTorch's style (holder members, WICK_MODULE, deriving from Module
// directly) replicates: replicate and DataParallel rebind the replicas' holder members to the
// replicas' children (Note [Holders follow their owner's table]), and the holder lends the
// class its copy (Note [Holders give a module its type]).
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;
using wick::test::same_values;

namespace {

struct NetImpl : nn::Module {
  NetImpl()
      : fc1(register_module("fc1", nn::Linear(6, 5, f64()))), fc2(register_module("fc2", nn::Linear(5, 3, f64()))) {}
  Tensor forward(Tensor x) { return fc2(relu(fc1(x))); }
  nn::Linear fc1, fc2;
};
WICK_MODULE(Net);

// With a Sequential member, a BatchNorm (buffers) and a plain option.
struct DeepNetImpl : nn::Cloneable<DeepNetImpl> {
  DeepNetImpl()
      : body(register_module("body", nn::Sequential(nn::Linear(4, 6, f64()), nn::BatchNorm1d(6, f64()), nn::Tanh()))),
        head(register_module("head", nn::Linear(6, 2, f64()))) {}
  Tensor forward(const Tensor& x) { return head(body(x)) * gain; }
  nn::Sequential body;
  nn::Linear head;
  double gain = 0.5;
};
WICK_MODULE(DeepNet);

std::vector<Tensor> grads(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const auto& p : m.parameters()) g.push_back(p.grad().clone());
  return g;
}

}  // namespace

TEST_CASE("replicate: a LibTorch-style module's holder members read each replica's children") {
  manual_seed(2);
  Net net;
  auto replicas = replicate(net, cpus(3));
  Tensor x = randn({4, 6}, f64());
  const Tensor expected = net(x);
  for (size_t i = 0; i < replicas.size(); ++i) {
    auto& r = static_cast<NetImpl&>(*replicas[i]);
    CHECK(r.fc1.get() == r.child_table()[0].value.get());
    CHECK(r.fc2->weight().device() == cpu(static_cast<int>(i)));
    CHECK(same_values(r.forward(x.to(cpu(static_cast<int>(i)))), expected));
    CHECK(same_values(r.forward_value({nn::Value(x.to(cpu(static_cast<int>(i))))}).tensor(), expected));
    if (i > 0) CHECK(r.fc1.get() != net->fc1.get());
  }
}

TEST_CASE("DataParallel over a LibTorch-style module equals the module, forward and backward") {
  manual_seed(4);
  Net net;
  Tensor x = randn({8, 6}, f64());
  Tensor single = net(x);
  single.sum().backward();
  const auto g_single = grads(*net);
  net->zero_grad();

  parallel::DataParallel dp(net, cpus(2));
  for (int step = 0; step < 2; ++step) {  // the second step reuses the first step's replicas
    net->zero_grad();
    Tensor out = dp.forward(x);
    CHECK_ALLCLOSE(out, single, 1e-14, 0);
    out.sum().backward();
    const auto g = grads(*net);
    REQUIRE(g.size() == g_single.size());
    for (size_t k = 0; k < g.size(); ++k) CHECK_ALLCLOSE(g[k], g_single[k], 1e-13, 1e-15);
  }
}

TEST_CASE("DataParallel over a module with Sequential and BatchNorm holder members") {
  manual_seed(6);
  DeepNet net;
  net->eval();  // running statistics, so the batch split does not change the result
  Tensor x = randn({6, 4}, f64());
  Tensor single = net(x);
  parallel::DataParallel dp(net, cpus(3));
  CHECK_ALLCLOSE(dp.forward(x), single, 1e-14, 0);
  auto replicas = replicate(net, cpus(2));
  auto& r1 = static_cast<DeepNetImpl&>(*replicas[1]);
  CHECK(r1.body.get() == r1.child_table()[0].value.get());
  CHECK(r1.body->at<nn::BatchNorm1dImpl>(1)->running_mean().device() == cpu(1));
  CHECK(r1.gain == 0.5);
}

TEST_CASE("a Module subclass made without its holder cannot be replicated and says how to fix it") {
  auto bare = std::make_shared<NetImpl>();
  CHECK_THROWS_AS(replicate(bare, cpus(2)), TypeError);
  CHECK_THROWS_WITH(bare->shallow_copy(), Catch::Contains("WICK_MODULE") && Catch::Contains("Cloneable"));
  Net held(bare);  // handing it to a holder lends it the copy
  CHECK(replicate(held, cpus(2)).size() == 2);
}
