// Tensors: per-device allocator accounting, the CPU block cache and the per-thread caches and
// counts (Note [CPU block cache], Note [CPU thread caches]). Without a cache under
// AddressSanitizer (test::asan_build()).
#include <wick/wick.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/sanitizer.h"

using namespace wick;
using Catch::Matchers::Contains;

// ---------------------------------------------------------------------------------------------
// Allocator accounting
// ---------------------------------------------------------------------------------------------

TEST_CASE("each CPU device keeps its own allocator accounting") {
  const Device d3("cpu:3"), d4("cpu:4");
  const MemoryStats s3 = memory_stats(d3), s4 = memory_stats(d4);
  {
    Tensor a = zeros({10}, TensorOptions(kFloat32).device(d3));  // 40 bytes
    MemoryStats m = memory_stats(d3);
    CHECK(m.in_use == s3.in_use + 40);
    CHECK(m.allocations == s3.allocations + 1);
    CHECK(m.total_allocations == s3.total_allocations + 1);
    CHECK(m.peak >= m.in_use);
    CHECK(m.reserved == m.in_use);
    {
      Tensor b = ones({4, 4}, TensorOptions(kFloat64).device(d3));  // 128 bytes
      Tensor v = b.t().narrow(0, 1, 2);                             // views allocate nothing
      CHECK(memory_stats(d3).in_use == s3.in_use + 168);
      CHECK(memory_stats(d3).allocations == s3.allocations + 2);
      CHECK(memory_stats(d3).peak >= s3.in_use + 168);
    }
    CHECK(memory_stats(d3).in_use == s3.in_use + 40);
    CHECK(memory_stats(d3).allocations == s3.allocations + 1);
    CHECK(memory_stats(d3).peak >= s3.in_use + 168);
    reset_peak_memory(d3);
    CHECK(memory_stats(d3).peak == s3.in_use + 40);
    Tensor c = a.to(d4);  // the copy is accounted on cpu:4
    CHECK(memory_stats(d4).in_use == s4.in_use + 40);
    CHECK(memory_stats(d3).in_use == s3.in_use + 40);
    Tensor e = zeros({0, 5}, TensorOptions(kFloat32).device(d3));  // empty: no allocation
    CHECK(memory_stats(d3).allocations == s3.allocations + 1);
  }
  CHECK(memory_stats(d3).in_use == s3.in_use);
  CHECK(memory_stats(d3).allocations == s3.allocations);
  CHECK(memory_stats(d4).in_use == s4.in_use);
  CHECK(memory_stats(d3).total_allocations == s3.total_allocations + 2);
  // A bad index never reaches the allocator: the Device itself refuses it (it used to wrap).
  CHECK_THROWS_AS(Device(DeviceType::CPU, -1), ValueError);
  CHECK_THROWS_WITH(Device(DeviceType::CPU, -1), Contains("index -1"));
  CHECK_THROWS_WITH(Device(DeviceType::CPU, 70000), Contains("index 70000"));
  CHECK(Device(DeviceType::CPU, 32767).index == 32767);
}

TEST_CASE("ops allocate their outputs on their inputs' device") {
  const Device d("cpu:5");
  const MemoryStats s = memory_stats(d);
  Tensor a = ones({8}, TensorOptions(kFloat32).device(d));
  Tensor b = (a + a).exp().sum();
  CHECK(b.device() == d);
  CHECK(memory_stats(d).allocations == s.allocations + 2);  // a and b; temporaries are gone
}

TEST_CASE("large CPU blocks are cached per device and empty_cache releases them") {
  const Device d("cpu:9");
  const MemoryStats s0 = memory_stats(d);
  void* first = nullptr;
  { first = zeros({1 << 18}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 1 MiB, freed at once
  const MemoryStats s1 = memory_stats(d);
  CHECK(s1.in_use == s0.in_use);
  Tensor again = empty({1 << 18}, TensorOptions(kFloat32).device(d));
  if (wick::test::asan_build()) {
    CHECK(s1.reserved == s1.in_use);  // no cache under AddressSanitizer (Note [CPU block cache])
  } else {
    CHECK(s1.reserved >= s1.in_use + (1 << 20));
    CHECK(again.data_ptr() == first);                                                       // the warm block is reused
    CHECK(memory_stats(Device("cpu:8")).reserved == memory_stats(Device("cpu:8")).in_use);  // per device
  }
  again = Tensor();
  empty_cache(d);
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
}

TEST_CASE("small CPU blocks are cached in size classes, per device, from many threads") {
  const Device d("cpu:10"), other("cpu:11");
  void* first = nullptr;
  { first = empty({10}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 40 bytes, freed at once
  const MemoryStats s1 = memory_stats(d);
  if (wick::test::asan_build()) {
    CHECK(s1.reserved == s1.in_use);  // no cache under AddressSanitizer (Note [CPU block cache])
  } else {
    CHECK(s1.reserved == s1.in_use + 64);  // the 64-byte class
    // Any request of the same class (33..64 bytes) on the same device takes the warm block back.
    Tensor same_class = empty({16}, TensorOptions(kFloat32).device(d));
    CHECK(same_class.data_ptr() == first);
    CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
    same_class = Tensor();
    Tensor elsewhere = empty({16}, TensorOptions(kFloat32).device(other));  // other devices keep their own
    CHECK(elsewhere.data_ptr() != first);
    // A request of another class gets another block; 1000 bytes: the 1024-byte class.
    Tensor bigger = empty({250}, TensorOptions(kFloat32).device(d));
    CHECK(bigger.data_ptr() != first);
    bigger = Tensor();
    CHECK(memory_stats(d).reserved == memory_stats(d).in_use + 64 + 1024);
  }
  // Threads allocating and freeing on one device at once leave the accounting exact.
  const MemoryStats before = memory_stats(d);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};  // Catch2's assertions are not thread-safe: count, check after
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([d, t, &mismatches] {
      for (int i = 0; i < 2000; ++i) {
        Tensor a = empty({1 + (i * 7 + t) % 3000}, TensorOptions(kFloat32).device(d));
        Tensor b = full({1 + i % 64}, static_cast<double>(t), TensorOptions(kFloat32).device(d));
        a.fill_(-1.0);
        if (b.sum().item<float>() != static_cast<float>(t * (1 + i % 64))) ++mismatches;  // no block shared
      }
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches.load() == 0);
  CHECK(memory_stats(d).in_use == before.in_use);
  CHECK(memory_stats(d).allocations == before.allocations);
  empty_cache(d);
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
  empty_cache(other);
}

// Note [CPU thread caches]: a thread keeps a few small blocks of cpu:0..cpu:3 for itself; they
// count as cached, go to the device's shared cache when the thread exits, and empty_cache frees
// the caller's.
TEST_CASE("small CPU blocks freed by a thread stay with it until it exits") {
  const Device d("cpu:2");
  empty_cache(d);
  const MemoryStats s0 = memory_stats(d);
  void* on_thread = nullptr;
  void* again_on_thread = nullptr;
  int64_t reserved_while_held = 0;
  std::thread t([&] {
    { on_thread = empty({100}, TensorOptions(kFloat32).device(d)).data_ptr(); }  // 400 bytes: the 448 class
    reserved_while_held = memory_stats(d).reserved - memory_stats(d).in_use;
    Tensor x = empty({100}, TensorOptions(kFloat32).device(d));
    again_on_thread = x.data_ptr();
  });
  t.join();
  if (wick::test::asan_build()) {
    CHECK(memory_stats(d).reserved == memory_stats(d).in_use);  // no cache under AddressSanitizer
  } else {
    CHECK(reserved_while_held == s0.reserved - s0.in_use + 448);
    CHECK(again_on_thread == on_thread);                   // the thread's own block, taken back
    CHECK(memory_stats(d).reserved == s0.reserved + 448);  // handed to the shared cache at exit
    {
      Tensor y = empty({112}, TensorOptions(kFloat32).device(d));  // 448 bytes: the same class
      CHECK(y.data_ptr() == on_thread);                            // from the shared cache
    }
    CHECK(memory_stats(d).reserved == s0.reserved + 448);  // now held by this thread
    empty_cache(d);                                        // frees this thread's blocks too
  }
  CHECK(memory_stats(d).reserved == memory_stats(d).in_use);
  CHECK(memory_stats(d).in_use == s0.in_use);
}

// Note [CPU thread caches]: each thread keeps its own allocation and free counts for cpu:0..3;
// stats() adds them up and an exiting thread folds them into the device's. Counted by hand:
// the figures stay exact while the threads live, after they exit, and when a block is freed by
// another thread than the one that allocated it.
TEST_CASE("CPU allocation counts kept per thread add up exactly, before and after the threads exit") {
  const Device d("cpu:3");
  const MemoryStats s0 = memory_stats(d);
  constexpr int kThreads = 3, kSteps = 500;
  std::vector<Tensor> handed_over(kThreads);  // allocated on a thread, freed here
  std::mutex m;
  std::condition_variable cv;
  int ready = 0;
  bool release = false;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) Tensor a = empty({1 + i % 40}, TensorOptions(kFloat32).device(d));
      Tensor kept = empty({7}, TensorOptions(kFloat32).device(d));
      handed_over[t] = empty({3}, TensorOptions(kFloat64).device(d));
      std::unique_lock<std::mutex> lock(m);
      ++ready;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready == kThreads; });
  }
  // Every thread alive, each holding `kept` and having handed one tensor over.
  const MemoryStats alive = memory_stats(d);
  CHECK(alive.allocations == s0.allocations + 2 * kThreads);
  CHECK(alive.total_allocations == s0.total_allocations + (kSteps + 2) * kThreads);
  CHECK(alive.in_use == s0.in_use + kThreads * (7 * 4 + 3 * 8));
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  cv.notify_all();
  for (auto& th : threads) th.join();
  const MemoryStats exited = memory_stats(d);
  CHECK(exited.allocations == s0.allocations + kThreads);
  CHECK(exited.total_allocations == alive.total_allocations);
  handed_over.clear();  // freed by this thread
  const MemoryStats after = memory_stats(d);
  CHECK(after.allocations == s0.allocations);
  CHECK(after.in_use == s0.in_use);
  CHECK(after.total_allocations == alive.total_allocations);
  CHECK(after.reserved >= after.in_use);
}
