// set_flush_denormal: a product that is denormal in float32 (1e-30 * 1e-10 = 1e-40) comes out
// as itself normally and as zero when flushing, in the CPU kernels, on the calling thread and on
// a thread it starts afterwards; turning it off restores denormals.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <thread>

using namespace wick;

namespace {
float denormal_product() {
  Tensor a = tensor({1e-30}, kFloat32), b = tensor({1e-10}, kFloat32);
  return (a * b).item<float>();
}

// Restores the caller's mode whatever the test does.
struct ModeGuard {
  bool was = flush_denormal();
  ~ModeGuard() { set_flush_denormal(was); }
};
}  // namespace

TEST_CASE("set_flush_denormal flushes denormal results in CPU kernels", "[core][denormal]") {
  ModeGuard guard;
#if defined(__x86_64__) || defined(__aarch64__)
  REQUIRE(set_flush_denormal(false));  // every CPU of these targets has the mode
#else
  if (!set_flush_denormal(false)) return;  // no such mode on this CPU: nothing to check
#endif
  const float kept = denormal_product();
  CHECK(kept > 0.0f);
  CHECK(kept < 1.2e-38f);  // denormal, as IEEE arithmetic gives it
  CHECK(!flush_denormal());

  REQUIRE(set_flush_denormal(true));
  CHECK(flush_denormal());
  CHECK(denormal_product() == 0.0f);
  float in_thread = -1;
  std::thread t([&] { in_thread = denormal_product(); });
  t.join();
  CHECK(in_thread == 0.0f);  // a thread started afterwards inherits the mode

  set_flush_denormal(false);
  CHECK(denormal_product() == kept);
}
