// Counter-based random numbers: the same seed gives the same numbers on the GPU as on the CPU.
#include "cuda_test_util.h"
#include "wick/core/generator.h"

using namespace wick;
using namespace wick::cuda_test;

namespace {
template <typename F>
std::pair<Tensor, Tensor> both(uint64_t seed, F make) {
  manual_seed(seed);
  Tensor c = make(kCPU);
  manual_seed(seed);
  Tensor g = make(gpu());
  return {g, c};
}
}  // namespace

TEST_CASE("rand, randint and bernoulli give the CPU's numbers bit for bit", "[cuda][random]") {
  for (DType dt : {kFloat32, kFloat64}) {
    for (int64_t n : {1, 255, 257, 100003}) {
      auto [g, c] = both(42 + static_cast<uint64_t>(n), [&](Device d) { return native::rand({n}, dt, d); });
      check_equal(g, c, fmt::format("rand {} n={}", dt, n));
    }
    auto [g, c] = both(7, [&](Device d) { return native::bernoulli(native::zeros({3, 1001}, dt, d), 0.3); });
    check_equal(g, c, fmt::format("bernoulli {}", dt));
  }
  auto [g, c] = both(9, [&](Device d) { return native::randint(-5, 17, {4099}, kInt64, d); });
  check_equal(g, c, "randint");
}

TEST_CASE("randn matches the CPU to the last bits of the math library", "[cuda][random]") {
  auto [g64, c64] = both(3, [&](Device d) { return native::randn({100003}, kFloat64, d); });
  check_close(g64, c64, 1e-13, 1e-14, "randn float64");
  auto [g32, c32] = both(3, [&](Device d) { return native::randn({100003}, kFloat32, d); });
  check_close(g32, c32, 1e-6, 1e-7, "randn float32");
}

TEST_CASE("the generator's counter advances the same way on both devices", "[cuda][random]") {
  manual_seed(11);
  Tensor c1 = native::rand({1000}, kFloat32, kCPU);
  Tensor c2 = native::rand({1000}, kFloat32, kCPU);
  manual_seed(11);
  Tensor g1 = native::rand({1000}, kFloat32, gpu());
  Tensor g2 = native::rand({1000}, kFloat32, gpu());
  check_equal(g1, c1);
  check_equal(g2, c2);
}
