// DistributedDataParallel's communication hooks (Note [Communication hooks]) on 2 and 3 ranks
// (mpirun): allreduce_hook against DDP's own averaging, bit for bit, with and without bucket
// views, no_sync and join; noop_hook against each rank's own gradients; a hook that returns a
// new tensor through then() against one process on the whole batch; what a hook sees; the
// refusals. Future's own semantics without a group.
#include <memory>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::CommHook;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;
using distributed::Future;
using distributed::GradBucket;
namespace hooks = distributed::ddp_comm_hooks;

namespace {

void check_bitwise_grads(nn::Module& a, nn::Module& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(pa[i].grad().defined());
    REQUIRE(pb[i].grad().defined());
    CHECK_ALLCLOSE(pb[i].grad(), pa[i].grad(), 0.0, 0.0);
  }
}

}  // namespace

TEST_CASE("ddp: allreduce_hook gives DDP's own gradients bit for bit, noop_hook each rank's own", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(52);
  const Tensor x = randn({5, global, 5}, kFloat64), y = randn({5, global, 3}, kFloat64);
  for (bool view : {false, true}) {
    INFO("gradient_as_bucket_view " << view);
    std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
    for (int k = 0; k < 4; ++k) {
      manual_seed(51);
      nets.push_back(make_mlp());
    }
    auto& lone = *nets[3];  // no DDP: this rank's own gradients
    DistributedDataParallelOptions o = tiny_buckets();
    o.gradient_as_bucket_view = view;
    DistributedDataParallel plain(nets[0], o), hooked(nets[1], o), noop(nets[2], o);
    REQUIRE(hooked.bucket_indices().size() == 6);
    hooked.register_comm_hook(hooks::allreduce_hook());
    noop.register_comm_hook(hooks::noop_hook());
    optim::SGD opt_plain(nets[0]->parameters(), optim::SGDOptions(0.1).momentum(0.5));
    optim::SGD opt_hooked(nets[1]->parameters(), optim::SGDOptions(0.1).momentum(0.5));
    auto backward = [&](nn::Module& m, int64_t k) {
      nn::F::mse_loss(m.forward_value({nn::Value(mine(x[k], local))}).tensor(), mine(y[k], local)).backward();
    };
    for (int64_t k = 0; k < 5; ++k) {
      INFO("step " << k);
      opt_plain.zero_grad(k % 2 == 0);
      opt_hooked.zero_grad(k % 2 == 0);
      if (k == 3) {  // accumulated under no_sync, then averaged with the next backward
        auto guard_plain = plain.no_sync();
        auto guard_hooked = hooked.no_sync();
        backward(plain, k - 1);
        backward(hooked, k - 1);
      }
      backward(plain, k);
      backward(hooked, k);
      check_bitwise_grads(*nets[0], *nets[1]);
      opt_plain.step();
      opt_hooked.step();
      // noop: the gradients of this rank's rows alone, undivided (the model stays at its start).
      nets[2]->zero_grad();
      lone.zero_grad();
      backward(noop, k);
      backward(lone, k);
      check_bitwise_grads(lone, *nets[2]);
    }
    for (const Tensor& p : nets[1]->parameters()) CHECK(test::same_on_every_rank(p));
    CHECK(noop.comm_stats().buckets == 5 * 6);
  }
}

TEST_CASE("ddp: a communication hook sees each bucket once, in order, and its result becomes the gradients", "[mpi]") {
  // The hook checks what it is given against this rank's own gradients, then sums through the
  // group and returns, through then(), a new tensor: the sum divided by the world size. The
  // truth: one process on the whole batch with a mean loss.
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(61);
  auto net = make_mlp();
  manual_seed(61);
  auto lone = make_mlp();  // this rank's rows: the gradients the hook must see
  manual_seed(61);
  auto whole = make_mlp();  // every rank's rows
  DistributedDataParallel ddp(net, tiny_buckets());
  const auto params = net->parameters();
  const auto buckets = ddp.bucket_indices();
  std::vector<int64_t> seen;
  std::vector<Tensor> own;  // lone's gradients, per parameter
  ddp.register_comm_hook([&](GradBucket& bucket) {
    seen.push_back(bucket.index());
    const auto b = static_cast<size_t>(bucket.index());
    CHECK(bucket.is_last() == (b + 1 == buckets.size()));
    CHECK(bucket.tag().index == bucket.index());
    REQUIRE(bucket.parameters().size() == buckets[b].size());
    const auto grads = bucket.gradients();
    for (size_t k = 0; k < buckets[b].size(); ++k) {
      CHECK(bucket.parameters()[k].impl() == params[buckets[b][k]].impl());
      CHECK_ALLCLOSE(grads[k], own[buckets[b][k]], 0.0, 0.0);  // undivided, as computed
    }
    const double world = g.size();
    return Future::of(g.all_reduce(bucket.buffer()), bucket.buffer())->then([world](const Tensor& sum) {
      return sum * (1.0 / world);
    });
  });
  manual_seed(62);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  for (int64_t k = 0; k < 3; ++k) {
    INFO("step " << k);
    lone->zero_grad();
    nn::F::mse_loss(lone->forward(mine(x[k], local)), mine(y[k], local)).backward();
    own.clear();
    for (const Tensor& p : lone->parameters()) own.push_back(p.grad().clone());
    net->zero_grad();
    whole->zero_grad();
    seen.clear();
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
    nn::F::mse_loss(whole->forward(x[k]), y[k]).backward();
    CHECK(seen == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
    const auto pw = whole->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      CHECK_ALLCLOSE(params[i].grad(), pw[i].grad(), 1e-12, 1e-13);
      CHECK(test::same_on_every_rank(params[i].grad()));
    }
  }
}

TEST_CASE("ddp: under join, allreduce_hook trains as DDP's own averaging, bit for bit", "[mpi]") {
  // Rank r runs 2 + r steps; the joined ranks run the hook on buckets of zeros.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(71);
  const Tensor x = randn({2 + g.size(), global, 5}, kFloat64), y = randn({2 + g.size(), global, 3}, kFloat64);
  std::vector<std::vector<Tensor>> finals;
  for (bool with_hook : {false, true}) {
    manual_seed(72);
    auto net = make_mlp();
    DistributedDataParallel ddp(net, tiny_buckets());
    // allreduce_hook, then a second collective in a continuation: every rank adds 1, so the sum
    // shows that the joined ranks ran the hook too (a plain all-reduce in their place would
    // leave the second collective unpaired).
    if (with_hook)
      ddp.register_comm_hook([&g, average = hooks::allreduce_hook()](GradBucket& b) {
        return average(b)->then([&g](const Tensor& t) {
          const Tensor one = ones({1}, kFloat64);
          g.all_reduce(one)->wait();
          CHECK(one.item<double>() == g.size());
          return t;
        });
      });
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
    ddp.enable_join();
    for (int64_t k = 0; k < 2 + g.rank(); ++k) {
      opt.zero_grad();
      nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      opt.step();
    }
    ddp.join();
    finals.emplace_back();
    for (const Tensor& p : net->parameters()) finals.back().push_back(p.detach().clone());
  }
  for (size_t i = 0; i < finals[0].size(); ++i) {
    CHECK_ALLCLOSE(finals[1][i], finals[0][i], 0.0, 0.0);
    CHECK(test::same_on_every_rank(finals[1][i]));
  }
}

TEST_CASE("ddp: communication hook refusals", "[mpi]") {
  auto& g = test::world();
  const Tensor x = randn({2, 5}, kFloat64), y = randn({2, 3}, kFloat64);
  auto step = [&](DistributedDataParallel& ddp) { nn::F::mse_loss(ddp.forward(x), y).backward(); };
  {
    DistributedDataParallel ddp(make_mlp());
    test::expect_error<ValueError>([&] { ddp.register_comm_hook(CommHook()); }, {"register_comm_hook", "empty"});
    ddp.register_comm_hook(hooks::noop_hook());
    test::expect_error<StateError>([&] { ddp.register_comm_hook(hooks::noop_hook()); }, {"already registered"});
    auto copy = std::dynamic_pointer_cast<DistributedDataParallel>(ddp.clone());
    CHECK_THROWS_AS(copy->register_comm_hook(hooks::noop_hook()), StateError);
  }
  {  // a result of the wrong size: the rank's backward raises, naming the bucket
    DistributedDataParallel ddp(make_mlp(), tiny_buckets());
    ddp.register_comm_hook([](GradBucket& b) { return Future::completed(zeros({b.buffer().numel() + 1}, kFloat64)); });
    test::expect_error<ValueError>([&] { step(ddp); }, {"communication hook's result for bucket 0", "elements"});
  }
  {  // a null future
    DistributedDataParallel ddp(make_mlp());
    ddp.register_comm_hook([](GradBucket&) { return std::shared_ptr<Future>(); });
    test::expect_error<ValueError>([&] { step(ddp); }, {"null Future"});
  }
  {  // a hook that calls back into its DDP
    DistributedDataParallel ddp(make_mlp());
    ddp.register_comm_hook([&ddp](GradBucket& b) {
      (void)ddp.comm_stats();
      return Future::completed(b.buffer());
    });
    test::expect_error<StateError>([&] { step(ddp); }, {"called back into"});
  }
  {  // a continuation's error reaches backward's caller, on every rank, after the collective
    DistributedDataParallel ddp(make_mlp());
    ddp.register_comm_hook([&g](GradBucket& b) {
      return Future::of(g.all_reduce(b.buffer()), b.buffer())->then([](const Tensor& t) -> Tensor {
        WICK_FAIL_T(IndexError, "continuation of {} elements refused", t.numel());
      });
    });
    test::expect_error<IndexError>([&] { step(ddp); }, {"continuation of"});
  }
}

TEST_CASE("comm hooks: Future's value, then() and errors", "[comm_hook]") {
  const Tensor v = test::vec({1, 2, 3});
  auto done = Future::completed(v);
  CHECK(done->is_completed());
  CHECK(done->wait().data_ptr() == v.data_ptr());
  int runs = 0;
  auto doubled = done->then([&runs](const Tensor& t) {
    ++runs;
    return t * 2.0;
  });
  CHECK_FALSE(doubled->is_completed());  // runs at the first wait, on the waiting thread
  CHECK(doubled->wait().to_vector<double>() == std::vector<double>{2, 4, 6});
  CHECK(doubled->wait().to_vector<double>() == std::vector<double>{2, 4, 6});
  CHECK(doubled->is_completed());
  CHECK(runs == 1);
  auto failed = doubled->then([](const Tensor&) -> Tensor { WICK_FAIL("no value here"); });
  auto after = failed->then([&runs](const Tensor& t) {
    ++runs;
    return t;
  });
  for (int k = 0; k < 2; ++k) test::expect_error<ValueError>([&] { after->wait(); }, {"no value here"});
  CHECK(runs == 1);  // the continuation after a failure never ran
  test::expect_error<ValueError>([&] { done->then(nullptr); }, {"Future::then", "empty"});
  test::expect_error<ValueError>([&] { Future::of(nullptr, v); }, {"Future::of", "null"});
  test::expect_error<ValueError>([&] { GradBucket(0, 1, v, {v}, {1}, {}); }, {"does not fit"});
  test::expect_error<ValueError>([&] { GradBucket(1, 1, v, {}, {}, {}); }, {"index 1"});
  const GradBucket b(0, 2, test::vec({1, 2, 3, 4, 5, 6, 7}), {zeros({2, 2}, kFloat64), zeros({3}, kFloat64)}, {0, 4},
                     {});
  CHECK_FALSE(b.is_last());
  CHECK(b.gradients()[0].sizes() == std::vector<int64_t>{2, 2});
  CHECK(b.gradients()[1].to_vector<double>() == std::vector<double>{5, 6, 7});
}
