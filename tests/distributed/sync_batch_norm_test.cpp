// Synchronised BatchNorm (convert_sync_batchnorm) on 2 and 3 ranks (mpirun), against BatchNorm
// run in one process over the whole batch in float64: the outputs, running statistics and
// gradients of each rank's rows must equal the whole-batch layer's, with uneven and empty ranks.
// The cases without a process group ([sync_batch_norm]) run as a plain ctest entry.
#include <cmath>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

namespace {

// Rank r's row count and first row, from per-rank sizes repeated over the ranks.
struct Share {
  int64_t offset = 0, rows = 0, total = 0;
};
Share share_of(const std::vector<int64_t>& sizes) {
  const int ranks = test::world().size(), me = test::world().rank();
  Share s;
  for (int r = 0; r < ranks; ++r) {
    const int64_t n = sizes[static_cast<size_t>(r) % sizes.size()];
    if (r < me) s.offset += n;
    if (r == me) s.rows = n;
    s.total += n;
  }
  return s;
}

// The sum over every rank of `t` (a copy).
Tensor summed(const Tensor& t) {
  Tensor s = t.detach().clone();
  test::world().all_reduce(s)->wait();
  return s;
}

std::shared_ptr<nn::BatchNorm2dImpl> make_bn2d(TensorOptions o = kF64) {
  auto bn = std::make_shared<nn::BatchNorm2dImpl>(nn::BatchNorm2dOptions(3).momentum(0.3), o);
  NoGradGuard no_grad;
  Tensor(bn->weight()).copy_(tensor({1.5, -0.5, 2.0}, kF64));
  Tensor(bn->bias()).copy_(tensor({0.25, 1.0, -1.0}, kF64));
  return bn;
}

}  // namespace

TEST_CASE("sync batchnorm: outputs, running statistics and gradients equal BatchNorm2d over the whole batch", "[mpi]") {
  // Two training forwards: ranks with 3, 0 and 5 rows (an empty rank), then 2, 3 and 4.
  auto reference = make_bn2d();
  auto bn = make_bn2d();
  distributed::convert_sync_batchnorm(bn);
  REQUIRE(bn->sync() != nullptr);
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{3, 0, 5}, std::vector<int64_t>{2, 3, 4}}) {
    const Share s = share_of(sizes);
    INFO("rows per rank " << sizes[0] << ", " << sizes[1] << ", " << sizes[2]);
    manual_seed(40 + s.total);  // the same data on every rank
    const Tensor data = randn({s.total, 3, 2, 2}, kF64) * 3.0 + 1.0, upstream = randn({s.total, 3, 2, 2}, kF64);
    const Tensor whole = data.clone().requires_grad_(true);
    const Tensor out_ref = reference->forward(whole);
    (out_ref * upstream).sum().backward();

    const Tensor mine_x = data.narrow(0, s.offset, s.rows).clone().requires_grad_(true);
    const Tensor out = bn->forward(mine_x);
    (out * upstream.narrow(0, s.offset, s.rows)).sum().backward();

    CHECK_ALLCLOSE(out, out_ref.narrow(0, s.offset, s.rows), 1e-12, 1e-13);
    REQUIRE(mine_x.grad().defined());
    CHECK_ALLCLOSE(mine_x.grad(), whole.grad().narrow(0, s.offset, s.rows), 1e-12, 1e-13);
    // Weight and bias gradients are each rank's own; their sum is the whole batch's.
    CHECK_ALLCLOSE(summed(bn->weight().grad()), reference->weight().grad(), 1e-12, 1e-13);
    CHECK_ALLCLOSE(summed(bn->bias().grad()), reference->bias().grad(), 1e-12, 1e-13);
    CHECK_ALLCLOSE(bn->running_mean(), reference->running_mean(), 1e-12, 1e-14);
    CHECK_ALLCLOSE(bn->running_var(), reference->running_var(), 1e-12, 1e-14);
    CHECK(test::same_on_every_rank(bn->running_mean()));
    CHECK(test::same_on_every_rank(bn->running_var()));
    CHECK(bn->num_batches_tracked().item<int64_t>() == reference->num_batches_tracked().item<int64_t>());
    for (auto* m : {bn.get(), reference.get()}) {
      Tensor(m->weight()).set_grad(Tensor());
      Tensor(m->bias()).set_grad(Tensor());
    }
  }
}

TEST_CASE("sync batchnorm: double backward (a gradient penalty) equals BatchNorm2d's over the whole batch", "[mpi]") {
  // The backward's all_reduce is itself recorded under create_graph, so the penalty's gradient
  // carries every rank's terms. Ranks with 2, 0 and 3 rows.
  auto reference = make_bn2d();
  auto bn = make_bn2d();
  distributed::convert_sync_batchnorm(bn);
  const Share s = share_of({2, 0, 3});
  manual_seed(60);
  const Tensor data = randn({s.total, 3, 2, 2}, kF64) * 2.0 - 1.0, upstream = randn({s.total, 3, 2, 2}, kF64);
  const auto penalty = [](const Tensor& out, const Tensor& up, const Tensor& x) {
    const Tensor g = autograd::grad({(out * up).sum()}, {x}, {}, std::nullopt, true)[0];
    return (g * g).sum();
  };
  const Tensor whole = data.clone().requires_grad_(true);
  penalty(reference->forward(whole), upstream, whole).backward();
  const Tensor mine_x = data.narrow(0, s.offset, s.rows).clone().requires_grad_(true);
  penalty(bn->forward(mine_x), upstream.narrow(0, s.offset, s.rows), mine_x).backward();
  REQUIRE(mine_x.grad().defined());
  CHECK_ALLCLOSE(mine_x.grad(), whole.grad().narrow(0, s.offset, s.rows), 1e-11, 1e-12);
  CHECK_ALLCLOSE(summed(bn->weight().grad()), reference->weight().grad(), 1e-11, 1e-12);
}

TEST_CASE("sync batchnorm: DDP with convert_sync_batchnorm trains as one process on the whole batch", "[mpi]") {
  // Linear, BatchNorm1d (cumulative average), Tanh, Linear; 3 SGD steps. Each rank's running
  // statistics are the whole batch's, which plain BatchNorm under DDP does not give.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  const auto make = [] {
    return nn::Sequential(std::make_shared<nn::LinearImpl>(5, 4, kF64),
                          std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(4).momentum(std::nullopt), kF64),
                          std::make_shared<nn::TanhImpl>(), std::make_shared<nn::LinearImpl>(4, 3, kF64))
        .ptr();
  };
  manual_seed(7);
  auto reference = make();
  manual_seed(7 + g.rank());
  auto net = make();
  distributed::convert_sync_batchnorm(net);
  DistributedDataParallel ddp(net, tiny_buckets());
  optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.2));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.2));
  manual_seed(8);
  const Tensor x = randn({3, global, 5}, kF64) * 2.0, y = randn({3, global, 3}, kF64);
  for (int64_t step = 0; step < 3; ++step) {
    INFO("step " << step);
    opt_ref.zero_grad();
    nn::F::mse_loss(reference->forward_tensor(x[step]), y[step]).backward();
    opt_ref.step();
    opt.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[step], local)), mine(y[step], local)).backward();
    opt.step();
    const auto p = net->parameters(), ref = reference->parameters();
    for (size_t i = 0; i < p.size(); ++i) {
      CHECK_ALLCLOSE(p[i], ref[i], 1e-12, 1e-14);
      CHECK(test::same_on_every_rank(p[i]));
    }
    for (const char* b : {"1.running_mean", "1.running_var"})
      CHECK_ALLCLOSE(net->get_buffer(b), reference->get_buffer(b), 1e-12, 1e-14);
  }
}

TEST_CASE("sync batchnorm: an input refused on one rank raises on every rank and changes nothing", "[mpi]") {
  auto& g = test::world();
  auto bn = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(4), kF64);
  distributed::convert_sync_batchnorm(bn);
  manual_seed(3);
  const Tensor good = randn({3, 4}, kF64);
  struct Bad {
    const char* what;
    Tensor input;
    const char* own_words;
  };
  for (const Bad& bad : {Bad{"a 4-d input", randn({3, 4, 1, 1}, kF64), "expected 2-d or 3-d input"},
                         Bad{"5 channels", randn({3, 5}, kF64), "expected 4 channels"},
                         Bad{"float32", randn({3, 4}), "but the input is float32"}}) {
    INFO(bad.what);
    const bool refuses = g.rank() == 1;
    try {
      bn->forward(refuses ? bad.input : good);
      FAIL("expected an error on every rank");
    } catch (const Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      if (refuses) {
        CHECK(msg.find(bad.own_words) != std::string::npos);
      } else {
        CHECK(dynamic_cast<const ValueError*>(&e) != nullptr);
        CHECK(msg.find("BatchNorm1d (synchronised over mpi, " + std::to_string(g.size()) +
                       " processes): rank(s) 1 refused their input") != std::string::npos);
      }
    }
    CHECK(bn->running_mean().to_vector<double>() == std::vector<double>(4, 0.0));
    CHECK(bn->running_var().to_vector<double>() == std::vector<double>(4, 1.0));
    CHECK(bn->num_batches_tracked().item<int64_t>() == 0);
  }
  // The ranks are still in step: a good forward works everywhere.
  bn->forward(good);
  CHECK(bn->num_batches_tracked().item<int64_t>() == 1);
  CHECK(test::same_on_every_rank(bn->running_mean()));
}

TEST_CASE("sync batchnorm: one value per channel over all ranks is refused on every rank", "[mpi]") {
  // PyTorch's "Expected more than 1 value per channel when training", counted over every rank.
  auto bn = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(2), kF64);
  distributed::convert_sync_batchnorm(bn);
  const Share s = share_of({1, 0, 0});
  const Tensor x = ones({s.rows, 2}, kF64);
  test::expect_error<ValueError>([&] { bn->forward(x); }, {"expected more than 1 value per channel", "size 1"});
  CHECK(bn->num_batches_tracked().item<int64_t>() == 0);
}

TEST_CASE("sync batchnorm: eval mode normalizes with the running statistics and communicates nothing", "[mpi]") {
  // Only rank 0 runs the eval forwards: a collective would leave it waiting until the timeout.
  auto bn = make_bn2d();
  auto plain = make_bn2d();
  {
    NoGradGuard no_grad;
    for (auto* m : {bn.get(), plain.get()}) {
      Tensor(m->running_mean()).copy_(tensor({0.5, -1.0, 2.0}, kF64));
      Tensor(m->running_var()).copy_(tensor({4.0, 0.25, 1.0}, kF64));
    }
  }
  distributed::convert_sync_batchnorm(bn);
  bn->eval();
  plain->eval();
  if (test::world().rank() == 0) {
    manual_seed(2);
    const Tensor x = randn({2, 3, 2, 2}, kF64);
    CHECK_ALLCLOSE(bn->forward(x), plain->forward(x), 0.0, 0.0);
  }
  test::world().barrier()->wait();
}

TEST_CASE("sync batchnorm: convert_sync_batchnorm marks every BatchNorm and nothing else, keeping the state",
          "[sync_batch_norm]") {
  // No process group here: eval mode works, a training forward is a StateError.
  auto inner = nn::Sequential(std::make_shared<nn::BatchNorm3dImpl>(nn::BatchNorm3dOptions(2), kF64),
                              std::make_shared<nn::InstanceNorm1dImpl>(nn::InstanceNorm1dOptions(2)));
  auto net = nn::Sequential(std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(2), kF64),
                            std::make_shared<nn::BatchNorm2dImpl>(nn::BatchNorm2dOptions(2), kF64), inner)
                 .ptr();
  const auto keys_before = net->named_buffers().keys();
  const auto params_before = net->parameters();
  CHECK(distributed::convert_sync_batchnorm(net) == net);
  CHECK(std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(net->get_submodule("0"))->sync() != nullptr);
  auto bn2 = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(net->get_submodule("1"));
  CHECK(bn2->sync() != nullptr);
  CHECK(std::dynamic_pointer_cast<nn::BatchNorm3dImpl>(net->get_submodule("2.0"))->sync() != nullptr);
  CHECK(net->named_buffers().keys() == keys_before);
  const auto params_after = net->parameters();
  REQUIRE(params_after.size() == params_before.size());
  for (size_t i = 0; i < params_after.size(); ++i) CHECK(params_after[i].is_same(params_before[i]));
  CHECK(bn2->sync()->describe() == "the default group");

  const Tensor x = randn({4, 2, 3, 3}, kF64);
  bn2->eval();
  CHECK_ALLCLOSE(bn2->forward(x), x / std::sqrt(1.0 + 1e-5), 1e-15, 0.0);  // running mean 0, var 1
  bn2->train();
  test::expect_error<StateError>([&] { bn2->forward(x); }, {"init_process_group"});
  CHECK(bn2->num_batches_tracked().item<int64_t>() == 0);
  bn2->set_sync(nullptr);  // removed: plain BatchNorm again
  bn2->forward(x);
  CHECK(bn2->num_batches_tracked().item<int64_t>() == 1);
}

TEST_CASE("sync batchnorm: DDP's enable_join refuses synchronised BatchNorm layers, naming the first", "[mpi]") {
  // A joined rank cannot shadow the layer's all_gather (PyTorch's join documents the same limit).
  auto net = make_bn_model();
  distributed::convert_sync_batchnorm(net);
  DistributedDataParallel ddp(net, tiny_buckets());
  test::expect_error<ValueError>(
      [&] { ddp.enable_join(); },
      {"DistributedDataParallel join: the BatchNorm1d '1' synchronises", "set_sync(nullptr)"});
  // Not enabled: training goes on as usual on every rank.
  manual_seed(4);
  ddp.forward(randn({3, 5}, kF64)).sum().backward();
  std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(net->get_submodule("1"))->set_sync(nullptr);
  ddp.enable_join();
}
