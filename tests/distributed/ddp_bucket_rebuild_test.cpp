// DistributedDataParallel's bucket rebuild (Note [Bucket rebuild]) on 2 and 3 ranks (mpirun):
// after the first synchronised backward the buckets follow the order the gradients arrived in,
// as the test observes it with its own post-accumulate-grad hooks, and a bucket whose gradients
// are all in then launches before backward reaches the layers registered after it.
#include <memory>
#include <string>
#include <vector>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;
using distributed::GradBucket;
namespace hooks = distributed::ddp_comm_hooks;

namespace {

/// The head is registered before the body it follows, so reverse registration order (the
/// initial layout) puts the body's parameters, whose gradients come last, in the first buckets.
class HeadFirst : public nn::Cloneable<HeadFirst> {
 public:
  HeadFirst() {
    head_ = register_module("head", std::make_shared<nn::LinearImpl>(8, 3, kF64));
    body_ = register_module("body", std::make_shared<nn::LinearImpl>(5, 8, kF64));
  }
  Tensor forward(const Tensor& x) { return child(head_).forward(child(body_).forward(x).tanh()); }

 private:
  nn::ChildSlot<nn::LinearImpl> head_, body_;
};

using Layout = std::vector<std::vector<size_t>>;

Layout reversed_singletons(size_t n) {
  Layout out;
  for (size_t k = 0; k < n; ++k) out.push_back({n - 1 - k});
  return out;
}

/// The layout as one tensor, for same_on_every_rank.
Tensor as_tensor(const Layout& layout) {
  std::vector<double> flat;
  for (const auto& b : layout) {
    for (size_t p : b) flat.push_back(static_cast<double>(p));
    flat.push_back(-1);
  }
  return from_blob(flat.data(), {static_cast<int64_t>(flat.size())}, kFloat64).clone();
}

}  // namespace

TEST_CASE("ddp: the buckets are rebuilt once, in the order the first synchronised backward's gradients arrived",
          "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(400);
  const Tensor x = randn({5, global, 5}, kFloat64), y = randn({5, global, 3}, kFloat64);
  for (bool bucket_view : {false, true}) {
    INFO("gradient_as_bucket_view " << bucket_view);
    manual_seed(401);
    auto reference = std::make_shared<HeadFirst>();
    manual_seed(401);
    auto net = std::make_shared<HeadFirst>();
    DistributedDataParallelOptions o = tiny_buckets();
    o.gradient_as_bucket_view = bucket_view;
    DistributedDataParallel ddp(net, o);
    const auto params = net->parameters();  // head.weight, head.bias, body.weight, body.bias
    REQUIRE(ddp.bucket_indices() == reversed_singletons(params.size()));

    std::vector<size_t> arrived;  // the truth: what the test's own hooks see
    std::vector<RemovableHandle> handles;
    for (size_t i = 0; i < params.size(); ++i)
      handles.push_back(
          params[i].register_post_accumulate_grad_hook([&arrived, i](const Tensor&) { arrived.push_back(i); }));
    {  // a backward under no_sync does not rebuild: it communicates nothing
      auto guard = ddp.no_sync();
      nn::F::mse_loss(ddp.forward(mine(x[0], local)), mine(y[0], local)).backward();
    }
    CHECK(ddp.bucket_indices() == reversed_singletons(params.size()));
    nn::F::mse_loss(reference->forward(x[0]), y[0]).backward();  // the no_sync step's gradient stays in .grad

    optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.1));
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
    Layout rebuilt;
    for (int64_t k = 1; k < 5; ++k) {
      INFO("step " << k);
      arrived.clear();
      nn::F::mse_loss(reference->forward(x[k]), y[k]).backward();
      nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      REQUIRE(arrived.size() == params.size());
      if (k == 1) {  // rebuilt at this backward's end: one parameter a bucket, in arrival order
        for (size_t p : arrived) rebuilt.push_back({p});
        CHECK(rebuilt != reversed_singletons(params.size()));  // the head's come first
        CHECK((rebuilt[0][0] <= 1 && rebuilt[1][0] <= 1));
        CHECK(test::same_on_every_rank(as_tensor(ddp.bucket_indices())));
      }
      CHECK(ddp.bucket_indices() == rebuilt);  // once only
      const auto ref = reference->parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        CHECK_ALLCLOSE(params[i].grad(), ref[i].grad(), 1e-12, 0.0);
        CHECK(test::same_on_every_rank(params[i].grad()));
      }
      opt_ref.step();
      opt.step();
      // zero_grad(false) keeps bucket-view gradients in the (rebuilt) buckets and accumulates there
      opt_ref.zero_grad(false);
      opt.zero_grad(false);
    }
  }
}

TEST_CASE("ddp: after the rebuild a bucket launches as soon as its gradients are in", "[mpi]") {
  // A communication hook logs each bucket's launch, and the test's gradient hooks (which run
  // before the gradient is accumulated, so before DDP sees it) each gradient.
  // Before the rebuild the first bucket holds body.bias, whose gradient comes after the head's,
  // so nothing launches before it; after the rebuild the head's buckets launch before the body's
  // gradients exist.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(410);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  manual_seed(411);
  auto net = std::make_shared<HeadFirst>();
  DistributedDataParallel ddp(net, tiny_buckets());
  std::vector<std::string> log;
  auto inner = hooks::allreduce_hook();
  ddp.register_comm_hook([&log, inner](GradBucket& b) {
    log.push_back("launch");
    return inner(b);
  });
  const auto params = net->parameters();
  std::vector<RemovableHandle> handles;
  for (size_t i = 0; i < params.size(); ++i)
    handles.push_back(params[i].register_hook([&log, i](const Tensor&) { log.push_back(i >= 2 ? "body" : "head"); }));
  auto launches_before_body = [&] {
    size_t n = 0;
    for (const auto& e : log) {
      if (e == "body") break;
      n += e == "launch";
    }
    return n;
  };
  for (int64_t k = 0; k < 3; ++k) {
    INFO("step " << k);
    log.clear();
    net->zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
    CHECK(launches_before_body() == (k == 0 ? 0u : 2u));
  }
}

TEST_CASE("ddp: no rebuild with find_unused_parameters", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(420);
  const Tensor x = randn({global, 5}, kFloat64), y = randn({global, 3}, kFloat64);
  auto net = std::make_shared<HeadFirst>();
  DistributedDataParallel ddp(net, tiny_buckets_find_unused());
  for (int k = 0; k < 2; ++k) nn::F::mse_loss(ddp.forward(mine(x, local)), mine(y, local)).backward();
  CHECK(ddp.bucket_indices() == reversed_singletons(net->parameters().size()));
}
