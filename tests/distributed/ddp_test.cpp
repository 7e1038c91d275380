// DistributedDataParallel on 2 and 3 ranks (mpirun), against single-process training on the
// whole batch in float64: the independent truth is the same model trained in one process.
// Buckets, no_sync, find_unused_parameters, join and buffers from rank 0. What DDP refuses:
// ddp_refusals_test.cpp; gradient_as_bucket_view: ddp_bucket_view_test.cpp.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;

TEST_CASE("ddp: equals single-process training on the whole batch over 5 SGD steps, in many buckets", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(100);  // rank 0's seed: the reference starts where DDP's broadcast leaves every rank
  auto reference = make_mlp();
  manual_seed(100 + g.rank());  // the other ranks start elsewhere
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  const auto params = net->parameters();
  REQUIRE(ddp.bucket_indices().size() == params.size());
  CHECK(ddp.bucket_indices().front().front() == params.size() - 1);  // reverse order: last layer first
  for (size_t i = 0; i < params.size(); ++i) CHECK_ALLCLOSE(params[i], reference->parameters()[i], 0.0, 0.0);

  optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.1));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  manual_seed(999);  // the same data on every rank
  const Tensor x = randn({5, global, 5}, kFloat64), y = randn({5, global, 3}, kFloat64);
  for (int64_t step = 0; step < 5; ++step) {
    opt_ref.zero_grad();
    nn::F::mse_loss(reference->forward_tensor(x[step]), y[step]).backward();
    opt_ref.step();

    opt.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[step], local)), mine(y[step], local)).backward();
    opt.step();

    INFO("step " << step);
    const auto ref = reference->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      CHECK_ALLCLOSE(params[i], ref[i], 1e-12, 0.0);
      CHECK(test::same_on_every_rank(params[i]));
    }
  }
  const auto stats = ddp.comm_stats();
  CHECK(stats.backwards == 5);
  CHECK(stats.buckets == 5 * static_cast<int64_t>(ddp.bucket_indices().size()));
}

TEST_CASE("ddp: default buckets hold the whole small model in one bucket", "[mpi]") {
  test::world();
  auto net = make_mlp();
  DistributedDataParallel ddp(net);
  REQUIRE(ddp.bucket_indices().size() == 1);
  CHECK(ddp.bucket_indices()[0] == std::vector<size_t>{5, 4, 3, 2, 1, 0});
}

TEST_CASE("ddp: no_sync accumulates locally, the next synced backward averages everything", "[mpi]") {
  // PyTorch's _test_accumulate_gradients_no_sync: inside no_sync the gradients are the rank's
  // own (they differ from the whole-batch model's); after the synchronised backward they equal
  // the whole-batch model's accumulated gradients.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(5);
  auto reference = make_mlp();
  manual_seed(5);
  auto solo = make_mlp();  // the same model, trained on this rank's rows only, never synchronised
  manual_seed(5);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(11);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  for (int64_t k = 0; k < 3; ++k) {
    nn::F::mse_loss(reference->forward_tensor(x[k]), y[k]).backward();
    nn::F::mse_loss(solo->forward_tensor(mine(x[k], local)), mine(y[k], local)).backward();
    const auto p = net->parameters(), ref = reference->parameters(), own = solo->parameters();
    if (k < 2) {
      auto guard = ddp.no_sync();
      nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      for (size_t i = 0; i < p.size(); ++i) {
        CHECK_ALLCLOSE(p[i].grad(), own[i].grad(), 0.0, 0.0);
        if (g.size() > 1) CHECK_FALSE(test::allclose(p[i].grad(), ref[i].grad(), 1e-6, 0.0).ok);
      }
    } else {
      nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      for (size_t i = 0; i < p.size(); ++i) {
        CHECK_ALLCLOSE(p[i].grad(), ref[i].grad(), 1e-12, 0.0);
        CHECK(test::same_on_every_rank(p[i].grad()));
      }
    }
  }
}

TEST_CASE("ddp: find_unused_parameters, globally unused keep no grad, locally unused get the average", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(21);
  auto reference = std::make_shared<Branchy>();
  manual_seed(21);
  auto net = std::make_shared<Branchy>();
  DistributedDataParallel ddp(net, tiny_buckets_find_unused());
  manual_seed(3);
  const Tensor x = randn({2, global, 4}, kFloat64), y = randn({2, global, 3}, kFloat64);
  for (int64_t it = 0; it < 2; ++it) {  // twice: the per-backward state resets
    reference->zero_grad();
    net->zero_grad();
    // The truth: rank k's loss on its rows (fc2 used by rank 0 only), averaged over the ranks.
    Tensor total;
    for (int k = 0; k < g.size(); ++k) {
      Tensor l = nn::F::mse_loss(call(*reference, x[it].narrow(0, k * local, local), k == 0),
                                 y[it].narrow(0, k * local, local));
      total = total.defined() ? total + l : l;
    }
    total.div(g.size()).backward();
    nn::F::mse_loss(call(ddp, mine(x[it], local), g.rank() == 0), mine(y[it], local)).backward();
    for (const auto& [name, p] : net->named_parameters()) {
      INFO(name << " in iteration " << it);
      const Tensor expected = reference->get_parameter(name).grad();
      if (name.rfind("fc3", 0) == 0) {
        CHECK_FALSE(p.grad().defined());
        CHECK_FALSE(expected.defined());
      } else {
        REQUIRE(p.grad().defined());
        CHECK_ALLCLOSE(p.grad(), expected, 1e-12, 0.0);
        CHECK(test::same_on_every_rank(p.grad()));
      }
    }
  }
}

TEST_CASE("ddp: find_unused_parameters with no_sync, a parameter used only while accumulating is averaged", "[mpi]") {
  // fc2 is used by every rank in the no_sync() backward; in the synced backward by the last rank
  // only, then by none. Its accumulated gradient is averaged either way (it used to lose the
  // other ranks' share, or stay each rank's own so that the parameters drifted apart).
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  for (const bool last_rank_uses_fc2 : {true, false}) {
    INFO("the synced backward uses fc2 on the last rank: " << last_rank_uses_fc2);
    manual_seed(22);
    auto reference = std::make_shared<Branchy>();
    manual_seed(22);
    auto net = std::make_shared<Branchy>();
    DistributedDataParallel ddp(net, tiny_buckets_find_unused());
    manual_seed(5);
    const Tensor x = randn({2, global, 4}, kFloat64), y = randn({2, global, 3}, kFloat64);
    auto uses_fc2 = [&](int64_t it, int k) { return it == 0 || (last_rank_uses_fc2 && k == g.size() - 1); };
    Tensor total;  // the truth: every rank's two losses, averaged over the ranks
    for (int64_t it = 0; it < 2; ++it)
      for (int k = 0; k < g.size(); ++k) {
        Tensor l = nn::F::mse_loss(call(*reference, x[it].narrow(0, k * local, local), uses_fc2(it, k)),
                                   y[it].narrow(0, k * local, local));
        total = total.defined() ? total + l : l;
      }
    total.div(g.size()).backward();
    {
      auto guard = ddp.no_sync();
      nn::F::mse_loss(call(ddp, mine(x[0], local), uses_fc2(0, g.rank())), mine(y[0], local)).backward();
    }
    nn::F::mse_loss(call(ddp, mine(x[1], local), uses_fc2(1, g.rank())), mine(y[1], local)).backward();
    for (const auto& [name, p] : net->named_parameters()) {
      INFO(name);
      const Tensor expected = reference->get_parameter(name).grad();
      if (name.rfind("fc3", 0) == 0) {
        CHECK_FALSE(p.grad().defined());
        continue;
      }
      REQUIRE(p.grad().defined());
      CHECK_ALLCLOSE(p.grad(), expected, 1e-12, 0.0);
      CHECK(test::same_on_every_rank(p.grad()));
    }
  }
}

TEST_CASE("ddp: no_sync is decided by the forward, whatever holds at the backward", "[mpi]") {
  // PyTorch reads require_backward_grad_sync at forward. Each rank has its own rows, so an
  // averaged gradient is the same on every rank and a local one is not.
  auto& g = test::world();
  manual_seed(8);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(9);
  const Tensor x = randn({2 * g.size(), 5}, kFloat64);
  auto all_same = [&] {
    bool same = true;
    for (const Tensor& p : net->parameters()) same = test::same_on_every_rank(p.grad()) && same;
    return same;
  };
  {  // a synced forward whose backward runs inside no_sync(): synchronised
    net->zero_grad();
    Tensor loss = ddp.forward(mine(x, 2)).square().sum();
    auto guard = ddp.no_sync();
    loss.backward();
  }
  CHECK(all_same());
  net->zero_grad();
  Tensor loss;
  {  // a forward inside no_sync() whose backward runs after it: local only
    auto guard = ddp.no_sync();
    loss = ddp.forward(mine(x, 2)).square().sum();
  }
  loss.backward();
  if (g.size() > 1) CHECK_FALSE(all_same());
  ddp.forward(mine(x, 2)).square().sum().backward();  // the next synced step averages everything
  CHECK(all_same());
}

TEST_CASE("ddp: join shadows a forward without grad and an eval forward with grad", "[mpi]") {
  // With buffers to broadcast: a training-mode forward under NoGradGuard (a metric) used to
  // broadcast them without announcing itself, so a joined rank's flags all_reduce met a
  // broadcast; an eval forward with grad launched buckets no joined rank shadowed.
  auto& g = test::world();
  manual_seed(41);
  auto net = nn::Sequential(std::make_shared<nn::LinearImpl>(5, 3, kF64),
                            std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), kF64))
                 .ptr();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(42);
  const Tensor x = randn({4, 5}, kFloat64);
  ddp.enable_join();
  for (int64_t i = 0; i <= g.rank(); ++i) {  // rank r trains r + 1 iterations
    {
      NoGradGuard no_grad;
      ddp.forward(x);
    }
    ddp.forward(x).square().sum().backward();
    ddp.eval();
    ddp.forward(x).square().sum().backward();
    ddp.train();
  }
  ddp.join();
  for (const Tensor& p : net->parameters()) CHECK(test::same_on_every_rank(p));
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}

TEST_CASE("ddp: buffers come from rank 0 at construction and before a forward that follows a synchronised one",
          "[mpi]") {
  // PyTorch's rule (Note [When buffers are broadcast]): the first forward broadcasts; a forward
  // without grad makes the next one skip the broadcast. (wick used to broadcast before every
  // training-mode forward and never in eval mode.)
  auto& g = test::world();
  auto bn = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), kF64);
  NoGradGuard no_grad;
  Tensor(bn->running_mean()).fill_(static_cast<double>(g.rank() + 1));
  DistributedDataParallel ddp(bn);
  CHECK(bn->running_mean().to_vector<double>() == std::vector<double>(3, 1.0));

  Tensor(bn->running_mean()).fill_(static_cast<double>(g.rank() + 1));
  manual_seed(8);
  const Tensor x = randn({4, 3}, kFloat64);  // the same rows everywhere
  ddp.forward(x);                            // the first forward: broadcast
  CHECK(test::same_on_every_rank(bn->running_mean()));
  Tensor(bn->running_mean()).fill_(static_cast<double>(g.rank() + 1));
  ddp.forward(x);  // after a forward without grad: no broadcast
  if (g.size() > 1) CHECK_FALSE(test::same_on_every_rank(bn->running_mean()));

  auto other = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), kF64);
  DistributedDataParallelOptions o;
  o.broadcast_buffers = false;
  DistributedDataParallel quiet(other, o);
  Tensor(other->running_mean()).fill_(static_cast<double>(g.rank() + 1));
  quiet.forward(x);
  if (g.size() > 1) CHECK_FALSE(test::same_on_every_rank(other->running_mean()));
}

TEST_CASE("ddp: join with uneven inputs, nothing hangs and every rank ends with the longest trainer's model", "[mpi]") {
  // PyTorch's _run_uneven_inputs_test idea: rank r has 3 + r batches. While some ranks have
  // joined, the others' gradients are averaged over the whole world (joined ranks add zeros).
  auto& g = test::world();
  const int64_t local = 2, max_iters = 3 + g.size() - 1;
  auto iters = [](int r) { return int64_t{3} + r; };
  manual_seed(31);
  auto reference = make_mlp();
  manual_seed(31);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.2));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.2));
  manual_seed(32);
  const Tensor x = randn({max_iters, local * g.size(), 5}, kFloat64),
               y = randn({max_iters, local * g.size(), 3}, kFloat64);
  for (int64_t i = 0; i < max_iters; ++i) {  // the truth: one process, the active ranks' rows
    opt_ref.zero_grad();
    Tensor total;
    for (int r = 0; r < g.size(); ++r) {
      if (i >= iters(r)) continue;
      Tensor l = nn::F::mse_loss(reference->forward_tensor(x[i].narrow(0, r * local, local)),
                                 y[i].narrow(0, r * local, local));
      total = total.defined() ? total + l : l;
    }
    total.div(g.size()).backward();
    opt_ref.step();
  }
  ddp.enable_join();
  for (int64_t i = 0; i < iters(g.rank()); ++i) {
    opt.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[i], local)), mine(y[i], local)).backward();
    opt.step();
  }
  ddp.join();
  const auto p = net->parameters(), ref = reference->parameters();
  for (size_t k = 0; k < p.size(); ++k) {
    CHECK_ALLCLOSE(p[k], ref[k], 1e-12, 0.0);
    CHECK(test::same_on_every_rank(p[k]));
  }
  // The group is still in step.
  Tensor one = ones({1}, kFloat64);
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}
