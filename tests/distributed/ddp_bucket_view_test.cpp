// DistributedDataParallel on 2 and 3 ranks (mpirun) with gradient_as_bucket_view: the default
// mode's gradients bit for bit, as views of one bucket, and a .grad kept when its parameter goes
// unused. Training against one process: ddp_test.cpp.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;

TEST_CASE("ddp: gradient_as_bucket_view gives the default mode's gradients bit for bit, as views of one bucket",
          "[mpi]") {
  // Two DDPs side by side from the same start on the same rows, one with each mode, through
  // every way a step can start: zero_grad() (set_to_none), zero_grad(false) (the slot zeroed in
  // place), and no_sync() accumulation into the slot before a synchronised backward.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(41);
  auto plain_net = make_mlp();
  manual_seed(41);
  auto view_net = make_mlp();
  DistributedDataParallel plain(plain_net);
  DistributedDataParallelOptions o;
  o.gradient_as_bucket_view = true;
  DistributedDataParallel view(view_net, o);
  CHECK_THAT(view.extra_repr(), Catch::Contains("gradient_as_bucket_view=true"));
  REQUIRE(view.bucket_indices().size() == 1);
  optim::SGD opt_plain(plain_net->parameters(), optim::SGDOptions(0.1).momentum(0.5));
  optim::SGD opt_view(view_net->parameters(), optim::SGDOptions(0.1).momentum(0.5));
  manual_seed(42);
  const Tensor x = randn({6, global, 5}, kFloat64), y = randn({6, global, 3}, kFloat64);
  auto backward = [&](DistributedDataParallel& ddp, int64_t k) {
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
  };
  for (int64_t k = 0; k < 6; ++k) {
    INFO("step " << k);
    const bool set_to_none = k % 2 == 0;
    opt_plain.zero_grad(set_to_none);
    opt_view.zero_grad(set_to_none);
    if (k >= 4) {  // one local backward first, then the synchronised one
      auto guard_plain = plain.no_sync();
      auto guard_view = view.no_sync();
      backward(plain, k - 1);
      backward(view, k - 1);
    }
    backward(plain, k);
    backward(view, k);
    const auto pp = plain_net->parameters(), vp = view_net->parameters();
    for (size_t i = 0; i < pp.size(); ++i) {
      REQUIRE(vp[i].grad().defined());
      CHECK_ALLCLOSE(vp[i].grad(), pp[i].grad(), 0.0, 0.0);
    }
    // One bucket, filled in reverse parameter order: each gradient ends where the next begins.
    for (size_t i = 1; i < vp.size(); ++i)
      CHECK(static_cast<const char*>(vp[i - 1].grad().data_ptr()) ==
            static_cast<const char*>(vp[i].grad().data_ptr()) + vp[i].grad().nbytes());
    opt_plain.step();
    opt_view.step();
    for (size_t i = 0; i < pp.size(); ++i) {
      CHECK_ALLCLOSE(vp[i], pp[i], 0.0, 0.0);
      CHECK(test::same_on_every_rank(vp[i]));
    }
  }
}

TEST_CASE("ddp: gradient_as_bucket_view keeps a .grad's values when its parameter goes unused", "[mpi]") {
  // Iteration 0: every rank uses fc2, so its .grad becomes its slot. Iteration 1, without
  // zero_grad: only rank 0 uses fc2 (locally unused elsewhere: the average of rank 0's new
  // gradient plus the accumulated ones). Iteration 2: no rank uses fc2, so its .grad must stay as
  // it was, although its slot is zeroed for the all-reduce. The default mode is the truth.
  auto& g = test::world();
  manual_seed(51);
  auto plain_net = std::make_shared<Branchy>();
  manual_seed(51);
  auto view_net = std::make_shared<Branchy>();
  DistributedDataParallelOptions o = tiny_buckets();
  o.find_unused_parameters = true;
  DistributedDataParallel plain(plain_net, o);
  o.gradient_as_bucket_view = true;
  DistributedDataParallel view(view_net, o);
  manual_seed(52);
  const Tensor x = randn({3, 2 * g.size(), 4}, kFloat64);
  for (int64_t it = 0; it < 3; ++it) {
    INFO("iteration " << it);
    const bool use_fc2 = it == 0 || (it == 1 && g.rank() == 0);
    call(plain, mine(x[it], 2), use_fc2).sum().backward();
    call(view, mine(x[it], 2), use_fc2).sum().backward();
    for (const auto& [name, p] : view_net->named_parameters()) {
      INFO(name);
      const Tensor expected = plain_net->get_parameter(name).grad();
      CHECK(p.grad().defined() == expected.defined());
      if (expected.defined()) CHECK_ALLCLOSE(p.grad(), expected, 0.0, 0.0);
    }
  }
}
