// DistributedDataParallel's construction checks on 2 and 3 ranks (mpirun): every rank raises the
// same ValueError, and nothing is copied.
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

namespace {

// A group still in step: one all_reduce that every rank reaches.
void check_group_in_step() {
  auto& g = test::world();
  Tensor one = ones({1}, kFloat64);
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}

}  // namespace

TEST_CASE("ddp: a parameter whose trailing dims differ across ranks is a ValueError naming both full shapes", "[mpi]") {
  // ndim, numel and the first four dims agree; only dims 5 and 6 are swapped on the last rank.
  // The check used to compare the first four dims only, and the broadcast then copied rank 0's
  // bytes into the other layout.
  struct Deep : nn::Module {
    explicit Deep(bool swapped) {
      const std::vector<int64_t> shape =
          swapped ? std::vector<int64_t>{1, 1, 1, 1, 3, 2} : std::vector<int64_t>{1, 1, 1, 1, 2, 3};
      (void)register_parameter("w", zeros(shape, kF64));
    }
  };
  auto& g = test::world();
  const bool last = g.rank() == g.size() - 1;
  expect_refused_untouched(std::make_shared<Deep>(last), [&](const std::string& msg) {
    CHECK_THAT(msg, Catch::Contains("'w'"));
    CHECK_THAT(msg, Catch::Contains("float64 [1, 1, 1, 1, 3, 2] on rank " + std::to_string(g.size() - 1)));
    CHECK_THAT(msg, Catch::Contains("float64 [1, 1, 1, 1, 2, 3] on rank 0"));
  });
  check_group_in_step();
}

TEST_CASE("ddp: a parameter that requires grad on some ranks only is a ValueError on every rank", "[mpi]") {
  // requires_grad decides which parameters are bucketed: ranks that differ would reduce
  // different buckets (PyTorch's check counts the parameters that require grad).
  auto& g = test::world();
  const bool last = g.rank() == g.size() - 1;
  auto lin = std::make_shared<nn::LinearImpl>(4, 2, kF64);
  if (last) lin->parameters().back().requires_grad_(false);  // the bias
  expect_refused_untouched(lin, [&](const std::string& msg) {
    CHECK_THAT(msg, Catch::Contains("'bias'"));
    CHECK_THAT(msg, Catch::Contains("not requiring grad on rank " + std::to_string(g.size() - 1)));
    CHECK_THAT(msg, Catch::Contains("but float64 [2] requiring grad on rank 0"));
  });
  check_group_in_step();
}

TEST_CASE("ddp: a module without a parameter that requires grad is a ValueError on every rank", "[mpi]") {
  // PyTorch: "DistributedDataParallel is not needed when a module doesn't have any parameter
  // that requires a gradient." (test_DistributedDataParallel_requires_grad). wick used to build
  // a reducer with no bucket.
  struct Empty : nn::Module {};
  auto frozen = std::make_shared<nn::LinearImpl>(4, 2, kF64);
  for (Tensor p : frozen->parameters()) p.requires_grad_(false);
  const std::vector<std::shared_ptr<nn::Module>> modules{std::make_shared<Empty>(), frozen};
  for (const auto& m : modules) {
    try {
      DistributedDataParallel ddp(m);
      FAIL("expected a ValueError");
    } catch (const ValueError& e) {
      CHECK_THAT(e.what(), Catch::Contains("DistributedDataParallel is not needed when a module doesn't have any "
                                           "parameter that requires a gradient"));
    }
  }
  check_group_in_step();
}
