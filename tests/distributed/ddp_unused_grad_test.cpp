// find_unused_parameters with gradients accumulated across synchronised backwards (no
// zero_grad between them), on 2 and 3 ranks (mpirun), against one process accumulating the
// same averaged losses in float64.
#include <map>
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

TEST_CASE("ddp: a locally unused parameter contributes its accumulated grad, a globally unused one keeps it exactly",
          "[mpi]") {
  // Iteration 0: every rank uses fc2 (.grad = m). Iteration 1, no zero_grad: rank 0 only uses it
  // (new gradient b0); the others contribute their .grad m, so the result is m + b0/W, what one
  // process accumulating gives (PyTorch's mark_variable_ready_dense); wick used to zero their
  // slots and gave (m + b0)/W. Iteration 2: no rank uses fc2, so its .grad stays exactly as it
  // was. fc3 is never used: no .grad. Plain and bucket-view modes.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  auto uses_fc2 = [](int64_t it, int k) { return it == 0 || (it == 1 && k == 0); };
  for (const bool view : {false, true}) {
    INFO("gradient_as_bucket_view: " << view);
    manual_seed(71);
    auto reference = std::make_shared<Branchy>();
    manual_seed(71);
    auto net = std::make_shared<Branchy>();
    auto o = tiny_buckets_find_unused();
    o.gradient_as_bucket_view = view;
    DistributedDataParallel ddp(net, o);
    manual_seed(72);
    const Tensor x = randn({3, global, 4}, kFloat64), y = randn({3, global, 3}, kFloat64);
    for (int64_t it = 0; it < 3; ++it) {
      INFO("iteration " << it);
      Tensor total;  // the truth: every rank's loss of this iteration, averaged, accumulated into .grad
      for (int k = 0; k < g.size(); ++k) {
        Tensor l =
            nn::F::mse_loss(call(*reference, rows_of(x[it], local, k), uses_fc2(it, k)), rows_of(y[it], local, k));
        total = total.defined() ? total + l : l;
      }
      total.div(g.size()).backward();
      std::map<std::string, Tensor> before;
      for (const auto& [name, p] : net->named_parameters())
        before[name] = p.grad().defined() ? p.grad().clone() : Tensor();
      nn::F::mse_loss(call(ddp, mine(x[it], local), uses_fc2(it, g.rank())), mine(y[it], local)).backward();
      for (const auto& [name, p] : net->named_parameters()) {
        INFO(name);
        const Tensor expected = reference->get_parameter(name).grad();
        if (name.rfind("fc3", 0) == 0) {
          CHECK_FALSE(p.grad().defined());
          CHECK_FALSE(expected.defined());
          continue;
        }
        REQUIRE(p.grad().defined());
        CHECK_ALLCLOSE(p.grad(), expected, 1e-12, 0.0);
        CHECK(test::same_on_every_rank(p.grad()));
        if (it == 2 && name.rfind("fc2", 0) == 0) CHECK_ALLCLOSE(p.grad(), before[name], 0.0, 0.0);
      }
    }
  }
}
