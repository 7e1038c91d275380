// DistributedDataParallel on 2 and 3 ranks (mpirun): what it refuses, on every rank and before
// anything changes (a failed backward, a clone, an unused parameter without
// find_unused_parameters, mismatched parameters, buffers that differ or that the backend cannot
// move). Training against one process: ddp_test.cpp.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::DistributedDataParallelOptions;

TEST_CASE("ddp: a backward that failed after launching buckets makes every later forward a StateError", "[mpi]") {
  // Every rank's backward throws in a hook on fc1.weight, after the buckets of fc3 and fc2 were
  // launched (the same ones on every rank here, so nothing hangs). The ranks' collectives could
  // no longer pair in general, so the next forward refuses, and keeps refusing.
  auto& g = test::world();
  manual_seed(6);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  const Tensor x = randn({2, 5}, kFloat64);
  Tensor first_weight = net->parameters().front();
  auto handle = first_weight.register_hook([](const Tensor&) -> Tensor { throw ValueError("a failing hook"); });
  CHECK_THROWS_WITH(ddp.forward(x).sum().backward(), Catch::Contains("a failing hook"));
  handle.remove();
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      ddp.forward(x);
      FAIL("expected a StateError");
    } catch (const StateError& e) {
      const std::string msg = e.what();
      CHECK_THAT(msg, Catch::Contains(fmt::format("rank {} did not finish", g.rank())));
      CHECK_THAT(msg, Catch::Contains("cannot go on"));
    }
  }
}

TEST_CASE("ddp: a clone of a DistributedDataParallel refuses to run, the original goes on", "[mpi]") {
  // The copy shared the original's reducer, whose hooks watch the original's parameters: its
  // backward never synchronised, and its forwards drove the original's per-iteration state.
  manual_seed(10);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  auto copy = std::dynamic_pointer_cast<DistributedDataParallel>(ddp.clone());
  REQUIRE(copy != nullptr);
  const Tensor x = randn({2, 5}, kFloat64) + test::world().rank();
  CHECK_THROWS_WITH(copy->forward(x), Catch::Contains("clone or replica") && Catch::Contains("module_ptr()"));
  CHECK_THROWS_AS(copy->no_sync(), StateError);
  CHECK_THROWS_AS(copy->enable_join(), StateError);
  CHECK_THAT(copy->extra_repr(), Catch::Contains("buckets=none"));
  ddp.forward(x).sum().backward();
  for (const Tensor& p : net->parameters()) CHECK(test::same_on_every_rank(p.grad()));
}

TEST_CASE("ddp: without find_unused_parameters an unused parameter is a StateError at every later forward with grad",
          "[mpi]") {
  // Its bucket and every later one were never reduced, so that step's gradients were this
  // rank's own. The error used to be reported once, after which DDP trained on unsynchronised
  // gradients; it is sticky now, as PyTorch's ensure_prior_reduction_finished.
  auto& g = test::world();
  manual_seed(4);
  auto net = std::make_shared<Branchy>();
  DistributedDataParallel ddp(net, tiny_buckets());
  const Tensor x = randn({2, 4}, kFloat64);
  call(ddp, x, true).sum().backward();  // fc3 gets no gradient on any rank
  try {
    call(ddp, x, true);
    FAIL("expected a StateError");
  } catch (const StateError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("Expected to have finished reduction in the prior iteration"));
    CHECK_THAT(msg, Catch::Contains("'fc3.weight'"));
    CHECK_THAT(msg, Catch::Contains("'fc3.bias'"));
    CHECK_THAT(msg, Catch::Contains("find_unused_parameters"));
    CHECK_THAT(msg, Catch::Contains(fmt::format("rank {}", g.rank())));
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    INFO("attempt " << attempt);
    CHECK_THROWS_WITH(call(ddp, x, true),
                      Catch::Contains("Expected to have finished reduction in the prior iteration") &&
                          Catch::Contains("'fc3.weight'") && Catch::Contains("cannot go on"));
    auto guard = ddp.no_sync();  // a forward with grad inside no_sync raises too
    CHECK_THROWS_AS(call(ddp, x, true), StateError);
  }
  NoGradGuard no_grad;  // a forward without grad prepares no reduction: it still runs
  CHECK_NOTHROW(call(ddp, x, true));
}

TEST_CASE("ddp: mismatched parameters are a ValueError on every rank", "[mpi]") {
  auto& g = test::world();
  const bool last = g.rank() == g.size() - 1;
  try {
    DistributedDataParallel ddp(std::make_shared<nn::LinearImpl>(4, last ? 3 : 2, kF64));
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("weight"));
    CHECK_THAT(msg, Catch::Contains("[2, 4]"));
    CHECK_THAT(msg, Catch::Contains("[3, 4]"));
    CHECK_THAT(msg, Catch::Contains(fmt::format("rank {}", g.size() - 1)));
  }
  CHECK_THROWS_AS(DistributedDataParallel(std::make_shared<nn::LinearImpl>(nn::LinearOptions(4, 2).bias(!last), kF64)),
                  ValueError);
}

TEST_CASE("ddp: a buffer or frozen parameter that differs across ranks is a ValueError before anything is copied",
          "[mpi]") {
  // Only trainable parameters used to be compared; the rest was broadcast one by one, so a
  // mismatch found midway left ranks other than 0 with part of rank 0's values.
  struct Stats : nn::Module {
    Stats(int64_t n, bool frozen_wide) {
      (void)register_module("fc", std::make_shared<nn::LinearImpl>(4, 2, kF64));
      Tensor frozen = zeros({frozen_wide ? 5 : 2}, kF64);
      (void)register_parameter("frozen", frozen, /*requires_grad=*/false);
      (void)register_buffer("stat", zeros({n}, kF64));
    }
  };
  auto& g = test::world();
  const bool last = g.rank() == g.size() - 1;
  for (bool buffer_differs : {true, false}) {
    CAPTURE(buffer_differs);
    auto m = buffer_differs ? std::make_shared<Stats>(last ? 4 : 3, false) : std::make_shared<Stats>(3, last);
    expect_refused_untouched(
        m, [&](const std::string& msg) { CHECK_THAT(msg, Catch::Contains(buffer_differs ? "'stat'" : "'frozen'")); });
  }
}

TEST_CASE("ddp: a buffer the backend cannot move fails every rank at construction, named, before anything is copied",
          "[mpi]") {
  // A buffer of 2^31 elements (an expanded view: 8 bytes of memory) is past MPI's count limit.
  // It used to be found by the broadcast itself, after the parameters before it had been
  // overwritten with rank 0's values, and its error did not name it.
  struct Big : nn::Module {
    explicit Big(bool big) {
      (void)register_module("fc", std::make_shared<nn::LinearImpl>(4, 2, kF64));
      (void)register_buffer("counts", big ? zeros({1}, kF64).expand({int64_t{1} << 31}) : zeros({1}, kF64));
    }
  };
  auto& g = test::world();
  const bool last = g.rank() == g.size() - 1;
  for (bool everywhere : {true, false}) {
    CAPTURE(everywhere);
    expect_refused_untouched(std::make_shared<Big>(everywhere || last), [&](const std::string& msg) {
      CHECK_THAT(msg, Catch::Contains("buffer 2 ('counts' here)"));
      if (everywhere || last)
        CHECK_THAT(msg, Catch::Contains("MPI's count limit"));
      else
        CHECK_THAT(msg, Catch::Contains(fmt::format("rank {} cannot broadcast", g.size() - 1)));
    });
  }
}
