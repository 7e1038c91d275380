// Backwards beyond the first through one forward's graph (Note [One reduction per forward]), on
// 2 and 3 ranks (mpirun), against one process in float64: the whole batch for the average, this
// rank's rows for its local share.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

TEST_CASE("ddp: a second backward through the same forward's graph only accumulates locally and sends nothing",
          "[mpi]") {
  // PyTorch: finalize_backward clears expect_autograd_hooks_, so backward(retain_graph) then
  // backward gives .grad = average + this rank's own gradient. wick used to reduce again (2x the
  // average), and a rank that ran the extra backward alone left the others waiting until the
  // timeout.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  for (const bool view : {false, true}) {
    INFO("gradient_as_bucket_view: " << view);
    manual_seed(101);
    auto reference = make_mlp();  // the whole batch: the average
    manual_seed(101);
    auto solo = make_mlp();  // this rank's rows only: its local share
    manual_seed(101);
    auto net = make_mlp();
    auto o = tiny_buckets();
    o.gradient_as_bucket_view = view;
    DistributedDataParallel ddp(net, o);
    manual_seed(102);
    const Tensor x = randn({2, global, 5}, kFloat64), y = randn({2, global, 3}, kFloat64);
    nn::F::mse_loss(reference->forward_tensor(x[0]), y[0]).backward();
    nn::F::mse_loss(solo->forward_tensor(mine(x[0], local)), mine(y[0], local)).backward();

    Tensor loss = nn::F::mse_loss(ddp.forward(mine(x[0], local)), mine(y[0], local));
    loss.backward({}, true);  // synchronised: the average
    loss.backward();          // local: plus this rank's own gradient
    const auto p = net->parameters(), ref = reference->parameters(), own = solo->parameters();
    bool all_same = true;
    for (size_t i = 0; i < p.size(); ++i) {
      REQUIRE(p[i].grad().defined());
      CHECK_ALLCLOSE(p[i].grad(), ref[i].grad() + own[i].grad(), 1e-12, 0.0);
      all_same = test::same_on_every_rank(p[i].grad()) && all_same;
    }
    if (g.size() > 1) CHECK_FALSE(all_same);
    CHECK(ddp.comm_stats().backwards == 1);

    // An extra backward on rank 0 only (a conditional auxiliary loss) sends nothing, so the next
    // synchronised step pairs on every rank and averages as usual.
    net->zero_grad();
    Tensor loss1 = nn::F::mse_loss(ddp.forward(mine(x[1], local)), mine(y[1], local));
    loss1.backward({}, true);
    if (g.rank() == 0) loss1.backward();
    net->zero_grad();
    reference->zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[1], local)), mine(y[1], local)).backward();
    nn::F::mse_loss(reference->forward_tensor(x[1]), y[1]).backward();
    for (size_t i = 0; i < p.size(); ++i) {
      CHECK_ALLCLOSE(p[i].grad(), ref[i].grad(), 1e-12, 0.0);
      CHECK(test::same_on_every_rank(p[i].grad()));
    }
    const auto stats = ddp.comm_stats();
    CHECK(stats.backwards == 3);
    CHECK(stats.buckets == 3 * static_cast<int64_t>(ddp.bucket_indices().size()));
  }
}
