// Idle device threads lend a hand (Note [Idle device threads lend a hand], core/src/cpu/
// parallel_for.h): a parallel_for on the caller's thread for a budgeted CPU device hands pieces to
// the idle workers of the other budgeted CPU devices, and to no other thread. Runs under
// ThreadSanitizer in CI (.ci/run's tsan pass runs test_core).
#include <wick/wick.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "cpu/parallel_for.h"
#include "support/idle_worker.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"

using namespace wick;
using wick::test::ResetBudgets;
using wick::test::wait_until_idle;

namespace {

const Device kCpu1("cpu:1"), kCpu2("cpu:2");
constexpr int64_t kGrain = 1000;
constexpr int64_t kItems = 64 * kGrain;

// The threads that ran pieces of one parallel_for, and the devices current in them.
struct Seen {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::set<Device> devices;
  void add() {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    devices.insert(current_cpu_device());
  }
};

// Waits (at most 10 s) until pieces have run on two threads. Each thread's first piece waits so,
// so neither the caller nor the lender can take every piece before the other starts.
bool wait_for_two_threads(Seen& seen) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(seen.mutex);
      if (seen.threads.size() >= 2) return true;
    }
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
}

}  // namespace

TEST_CASE("lent threads: an idle budgeted device's worker runs pieces of the caller's kernel as the caller's device") {
  ResetBudgets reset;
  REQUIRE(wick::test::budget_with_lender(1, true));
  const auto caller = std::this_thread::get_id();
  Seen seen;
  std::vector<int> hits(kItems, 0);
  std::atomic<bool> lent{false};
  std::atomic<int> nested_pieces{0};
  cpu::parallel_for(kItems, kGrain, [&](int64_t b, int64_t e) {
    seen.add();
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
    // The first pieces hold on until two threads have run one: a broken loan fails here.
    if (!lent) lent = wait_for_two_threads(seen);
    // A lent piece does not fan out again, as a helper's does not.
    if (std::this_thread::get_id() != caller) nested_pieces = cpu::parallel_pieces(kItems, kGrain);
  });
  CHECK(nested_pieces == 1);
  CHECK(lent);
  CHECK(seen.threads.size() == 2);
  CHECK(seen.devices == std::set<Device>{kCPU});             // the lent pieces ran as cpu:0
  CHECK(std::count(hits.begin(), hits.end(), 1) == kItems);  // every item exactly once
}

TEST_CASE("lent threads: a device without a budget neither borrows nor lends") {
  ResetBudgets reset;
  REQUIRE(wait_until_idle(kCpu1));
  SECTION("the idle worker's device has no budget") { set_intra_op_threads(kCPU, 1); }
  SECTION("the caller's device has no budget") { set_intra_op_threads(kCpu1, 1); }
  CHECK(cpu::parallel_pieces(kItems, kGrain) == 1);
  Seen seen;
  cpu::parallel_for(kItems, kGrain, [&](int64_t, int64_t) { seen.add(); });
  CHECK(seen.threads == std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_CASE("lent threads: a device worker's own kernels do not borrow") {
  ResetBudgets reset;
  set_intra_op_threads(kCpu1, 1);
  set_intra_op_threads(kCpu2, 1);
  REQUIRE(wait_until_idle(kCpu1));
  REQUIRE(wait_until_idle(kCpu2));
  std::set<std::thread::id> threads;
  std::atomic<bool> done{false};
  device_threads::queue(kCpu2)->push({1, [&] {
                                        DeviceGuard guard(kCpu2);
                                        Seen seen;
                                        cpu::parallel_for(kItems, kGrain, [&](int64_t, int64_t) { seen.add(); });
                                        threads = seen.threads;
                                        done = true;
                                      }});
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done && std::chrono::steady_clock::now() < limit) std::this_thread::yield();
  REQUIRE(done);
  CHECK(threads.size() == 1);
}

TEST_CASE("lent threads: an exception in a lent piece reaches the caller, and the lender keeps working") {
  ResetBudgets reset;
  REQUIRE(wick::test::budget_with_lender(1, true));
  const auto caller = std::this_thread::get_id();
  Seen seen;
  std::atomic<bool> lent{false};
  auto run = [&] {
    cpu::parallel_for(kItems, kGrain, [&](int64_t, int64_t) {
      seen.add();
      if (!lent) lent = wait_for_two_threads(seen);
      if (std::this_thread::get_id() != caller) throw std::runtime_error("a lent piece failed");
    });
  };
  CHECK_THROWS_WITH(run(), "a lent piece failed");
  CHECK(lent);
  REQUIRE(wait_until_idle(kCpu1));  // the worker survived and is back to waiting
  std::atomic<int64_t> items{0};
  cpu::parallel_for(kItems, kGrain, [&](int64_t b, int64_t e) { items += e - b; });
  CHECK(items == kItems);
}
