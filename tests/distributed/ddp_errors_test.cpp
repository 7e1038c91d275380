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
