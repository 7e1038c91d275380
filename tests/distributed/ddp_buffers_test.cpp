// When DistributedDataParallel broadcasts buffers (Note [When buffers are broadcast]), on 2 and
// 3 ranks (mpirun). A rank-specific value is written into a buffer before each forward; after
// it, the buffer is the same on every rank exactly when the forward broadcast rank 0's.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

TEST_CASE("ddp: the first eval forward after training evaluates with rank 0's buffers on every rank", "[mpi]") {
  // PyTorch broadcasts before the first forward after a synchronised one, whatever the mode, so
  // sharded evaluation right after training sees rank 0's running statistics everywhere (wick
  // never broadcast in eval mode: rank r evaluated with its own updated statistics).
  auto& g = test::world();
  manual_seed(81);
  auto net = make_bn_model();
  DistributedDataParallel ddp(net, tiny_buckets());
  Tensor running_mean = net->get_buffer("1.running_mean");
  manual_seed(82);
  const Tensor x = randn({2 * g.size(), 5}, kFloat64);
  const Tensor probe = randn({3, 5}, kFloat64);       // the same rows on every rank
  ddp.forward(mine(x, 2)).square().sum().backward();  // a synchronised training step on each rank's rows
  if (g.size() > 1) CHECK_FALSE(test::same_on_every_rank(running_mean));  // each rank updated its own
  Tensor rank0 = running_mean.clone();
  g.broadcast(rank0, 0)->wait();

  ddp.eval();
  NoGradGuard no_grad;
  const Tensor out = ddp.forward(probe);
  CHECK(test::same_on_every_rank(out));
  CHECK_ALLCLOSE(running_mean, rank0, 0.0, 0.0);
  // That forward ran without grad, so the next one broadcasts nothing.
  Tensor(running_mean).fill_(static_cast<double>(g.rank() + 1));
  ddp.forward(probe);
  CHECK(running_mean.to_vector<double>() == std::vector<double>(3, g.rank() + 1.0));
}

TEST_CASE("ddp: buffers are broadcast before a forward only when the previous one had grad outside no_sync", "[mpi]") {
  // PyTorch's require_forward_param_sync, in eval mode (the forwards leave the buffers alone)
  // and in training mode (the same rows everywhere, so a broadcast start gives the same update).
  // A no_sync window broadcasts at its first forward only, not at the synced forward closing it.
  auto& g = test::world();
  struct Step {
    const char* what;
    bool grad;
    bool no_sync;
    bool broadcasts;
  };
  const std::vector<Step> steps{
      {"the first forward, synced", true, false, true},
      {"after a synced forward: the first no_sync forward", true, true, true},
      {"after a no_sync forward: another no_sync forward", true, true, false},
      {"after a no_sync forward: the synced forward closing the window", true, false, false},
      {"after a synced forward: a forward without grad", false, false, true},
      {"after a forward without grad: another", false, false, false},
      {"after a forward without grad: a synced forward", true, false, false},
      {"after a synced forward: a synced forward", true, false, true},
  };
  for (const bool training : {false, true}) {
    INFO("training mode: " << training);
    manual_seed(83);
    auto net = make_bn_model();
    DistributedDataParallel ddp(net, tiny_buckets());
    ddp.train(training);
    Tensor running_mean = net->get_buffer("1.running_mean");
    const Tensor x = randn({4, 5}, kFloat64);  // the same rows on every rank
    for (const Step& step : steps) {
      INFO(step.what);
      {
        NoGradGuard no_grad;
        Tensor(running_mean).fill_(static_cast<double>(g.rank() + 1));
      }
      if (!step.grad) {
        NoGradGuard no_grad;
        ddp.forward(x);
      } else if (step.no_sync) {
        auto guard = ddp.no_sync();
        ddp.forward(x).square().sum().backward();
      } else {
        ddp.forward(x).square().sum().backward();
      }
      if (step.broadcasts)
        CHECK(test::same_on_every_rank(running_mean));
      else if (g.size() > 1)
        CHECK_FALSE(test::same_on_every_rank(running_mean));
    }
  }
}

TEST_CASE("ddp: under join the buffers come from the highest rank still training", "[mpi]") {
  // Rank r trains 2 + r iterations on its own rows. PyTorch's _sync_buffers under join
  // broadcasts from _find_common_rank (the highest active rank), so every iteration starts from
  // the last rank's statistics, and the final buffers are those of a BatchNorm run over the
  // last rank's rows alone. wick broadcast from rank 0, which joins first: the last rank's
  // statistics were overwritten with rank 0's frozen ones. No optimizer step, so the Linear in
  // front stays rank 0's.
  auto& g = test::world();
  const int64_t local = 2;
  auto iters = [](int r) { return int64_t{2} + r; };
  const int last = g.size() - 1;
  manual_seed(91);
  auto reference = make_bn_model();
  manual_seed(91);
  auto net = make_bn_model();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(92);
  const Tensor x = randn({iters(last), local * g.size(), 5}, kFloat64);
  {
    NoGradGuard no_grad;  // the truth: the last rank's rows, one batch after another
    for (int64_t i = 0; i < iters(last); ++i) reference->forward_tensor(rows_of(x[i], local, last));
  }
  ddp.enable_join();
  for (int64_t i = 0; i < iters(g.rank()); ++i) ddp.forward(mine(x[i], local)).square().sum().backward();
  ddp.join();
  for (const char* name : {"1.running_mean", "1.running_var"}) {
    INFO(name);
    CHECK_ALLCLOSE(net->get_buffer(name), reference->get_buffer(name), 1e-12, 0.0);
    CHECK(test::same_on_every_rank(net->get_buffer(name)));
  }
  CHECK(net->get_buffer("1.num_batches_tracked").item<int64_t>() == iters(last));
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}
