// DistributedDataParallel's params_and_buffers_to_ignore (Note [Ignored parameters and
// buffers]) on 2 and 3 ranks (mpirun): an ignored parameter keeps each rank's own values and
// gradient, the others are copied and averaged as usual; an ignored buffer is never broadcast;
// join's final copy leaves them alone; a name the module does not have is refused.
#include <memory>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;

namespace {

/// This rank's model: make_mlp() from a common seed, its first weight from a seed of the rank's.
std::shared_ptr<nn::SequentialImpl> rank_model(uint64_t seed) {
  manual_seed(seed);
  auto net = make_mlp();
  manual_seed(seed + 100 + static_cast<uint64_t>(test::world().rank()));
  NoGradGuard no_grad;
  Tensor w = net->named_parameters()["0.weight"];
  w.copy_(randn(w.sizes(), kFloat64));
  return net;
}

}  // namespace

TEST_CASE("ddp: an ignored parameter keeps each rank's values and gradient, the others are averaged", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(700);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  auto net = rank_model(701);
  auto reference = rank_model(701);  // the same model, trained by hand
  const Tensor own_weight = net->named_parameters()["0.weight"].detach().clone();
  DistributedDataParallelOptions o = tiny_buckets();
  o.params_and_buffers_to_ignore = {"0.weight"};
  DistributedDataParallel ddp(net, o);
  // Construction copied rank 0's other parameters, not the ignored one.
  CHECK_ALLCLOSE(net->named_parameters()["0.weight"], own_weight, 0.0, 0.0);
  CHECK_FALSE(test::same_on_every_rank(net->named_parameters()["0.weight"]));
  for (const auto& [name, p] : net->named_parameters())
    if (name != "0.weight") CHECK(test::same_on_every_rank(p));
  CHECK(ddp.bucket_indices().size() == 5);  // 6 parameters, one ignored, one bucket each
  {
    NoGradGuard no_grad;  // the reference starts where DDP's model does
    for (const auto& [name, p] : reference->named_parameters()) Tensor(p).copy_(net->named_parameters()[name]);
  }
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1)), opt_ref(reference->parameters(), optim::SGDOptions(0.1));
  for (int64_t k = 0; k < 3; ++k) {
    INFO("step " << k);
    opt.zero_grad();
    opt_ref.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
    nn::F::mse_loss(reference->forward_tensor(mine(x[k], local)), mine(y[k], local)).backward();
    // The truth by hand: the ignored weight's gradient is this rank's own; every other one is
    // the average of every rank's own (summed here with the test's own all_reduce).
    for (const auto& [name, p] : reference->named_parameters()) {
      INFO(name);
      Tensor want = p.grad().clone();
      if (name != "0.weight") {
        g.all_reduce(want)->wait();
        want = want.div(g.size());
      }
      CHECK_ALLCLOSE(net->named_parameters()[name].grad(), want, 1e-12, 1e-15);
      Tensor(p).set_grad(want);  // the reference steps with the same gradients
    }
    opt.step();
    opt_ref.step();
  }
  for (const auto& [name, p] : net->named_parameters()) {
    INFO(name);
    CHECK_ALLCLOSE(p, reference->named_parameters()[name], 1e-12, 1e-15);
    if (name != "0.weight") CHECK(test::same_on_every_rank(p));
  }
  // Under join the final copy from the last joiner leaves the ignored weight alone.
  const Tensor before = net->named_parameters()["0.weight"].detach().clone();
  ddp.enable_join();
  for (int64_t k = 0; k < g.rank(); ++k) {  // rank r runs r more steps
    opt.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
    opt.step();
  }
  ddp.join();
  for (const auto& [name, p] : net->named_parameters())
    if (name != "0.weight") CHECK(test::same_on_every_rank(p));
  if (g.rank() == 0) CHECK_ALLCLOSE(net->named_parameters()["0.weight"], before, 0.0, 0.0);
}

TEST_CASE("ddp: an ignored buffer is never broadcast, and an unknown name is refused", "[mpi]") {
  auto& g = test::world();
  manual_seed(710);
  auto net = make_bn_model();
  DistributedDataParallelOptions o;
  o.params_and_buffers_to_ignore = {"1.running_mean"};
  DistributedDataParallel ddp(net, o);
  net->train();
  const int64_t local = 4;
  manual_seed(711 + static_cast<uint64_t>(g.rank()));  // each rank's own rows
  for (int k = 0; k < 3; ++k) {
    Tensor out = ddp.forward(randn({local, 5}, kFloat64));
    out.sum().backward();
  }
  // Every training forward updated the statistics from the rank's own rows. An eval forward
  // (which updates nothing) first broadcasts rank 0's buffers: all but running_mean.
  net->eval();
  ddp.forward(randn({local, 5}, kFloat64));
  const auto buffers = net->named_buffers();
  CHECK(test::same_on_every_rank(buffers["1.running_var"]));
  CHECK(test::same_on_every_rank(buffers["1.num_batches_tracked"]));
  CHECK_FALSE(test::same_on_every_rank(buffers["1.running_mean"]));

  // Refused on every rank alike, before any collective: a name the module does not have.
  auto other = make_bn_model();
  DistributedDataParallelOptions bad;
  bad.params_and_buffers_to_ignore = {"1.running_mean", "1.runing_var"};
  test::expect_error<ValueError>([&] { DistributedDataParallel d(other, bad); },
                                 {"params_and_buffers_to_ignore names '1.runing_var'", "named_buffers()"});
}
