// DistributedDataParallel's errors for misuse, on 2 and 3 ranks (mpirun): each is a typed
// wick::Error on every rank that names what went wrong, and no rank hangs.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

TEST_CASE("ddp: a second gradient for a parameter in one backward is a StateError listing the common causes", "[mpi]") {
  // Two forwards, then one backward of their sum, with find_unused_parameters: the second
  // forward's graph walk finds fc2 unused, so fc2 is reduced as zeros at the first hook, and
  // then fc2's real gradient (from the first forward) arrives. PyTorch raises "Expected to mark
  // a variable ready only once" for it and names a use outside forward first.
  auto& g = test::world();
  manual_seed(61);
  auto net = std::make_shared<Branchy>();
  DistributedDataParallel ddp(net, tiny_buckets_find_unused());
  const Tensor x = randn({2, 4}, kFloat64);
  Tensor a = call(ddp, x, true);
  Tensor b = call(ddp, x, false);
  try {
    (a + b).sum().backward();
    FAIL("expected a StateError");
  } catch (const StateError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("parameter 'fc2."));
    CHECK_THAT(msg, Catch::Contains(fmt::format("on rank {}", g.rank())));
    CHECK_THAT(msg, Catch::Contains("used outside the module's forward"));
    CHECK_THAT(msg, Catch::Contains("two forwards before one backward"));
  }
  // That backward stopped midway (possibly after launching buckets): this DDP cannot go on.
  CHECK_THROWS_WITH(call(ddp, x, true), Catch::Contains("cannot go on"));
}

TEST_CASE("ddp: ranks one backward out of step get a ValueError on every rank naming both iterations", "[mpi]") {
  // Rank 1 runs the forward of iteration 2 but skips its backward (a NaN guard, say). Its next
  // backward's buckets have the shapes of the others' iteration-2 buckets, so they used to pair
  // and average different iterations silently for the rest of the run. The buckets' tags (Note
  // [Tagged buckets]) make every rank's backward raise instead, and nothing hangs.
  auto& g = test::world();
  manual_seed(111);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  const Tensor x = randn({2, 5}, kFloat64);
  ddp.forward(x).sum().backward();                        // iteration 1 on every rank
  Tensor skipped = ddp.forward(x);                        // iteration 2: rank 1 never runs its backward
  Tensor out = g.rank() == 1 ? ddp.forward(x) : skipped;  // rank 1: iteration 3
  try {
    out.sum().backward();
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("rank 0: all_reduce(sum) #"));
    CHECK_THAT(msg, Catch::Contains("[iteration 2, bucket 0]"));
    CHECK_THAT(msg, Catch::Contains("[iteration 3, bucket 0]"));
    CHECK_THAT(msg, Catch::Contains("out of step"));
  }
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}
