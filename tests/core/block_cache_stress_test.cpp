// The caching allocator's bookkeeping (Note [Block cache]) under stress, against a fake device
// (support/fake_device_memory.h): a device that fails midway through empty_cache, a randomised run
// over two streams checked against a reference model of what must be live, and two threads on
// their own streams. The hand-computed cases: block_cache_test.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "support/fake_device_memory.h"
#include "wick/core/block_cache.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::addr;
using wick::test::FakeDevice;
using wick::test::MiB;

TEST_CASE("block cache: a device failing midway through empty_cache leaves no freed memory in the cache",
          "[core][block_cache]") {
  FakeDevice dev(256 * MiB);
  BlockCache cache(dev);
  std::vector<void*> ps;
  for (size_t mib : {12, 14, 16, 18}) ps.push_back(cache.allocate(mib * MiB, 1));
  for (void* p : ps) cache.free(p);
  dev.fail_release_countdown = 3;  // the third release throws
  CHECK_THROWS_AS(cache.empty_cache(), BackendError);
  CHECK(dev.releases == 2);
  CHECK(cache.segment_count() == dev.segment_count());
  CHECK(cache.stats().reserved == static_cast<int64_t>(dev.reserved()));
  // Every later allocation lies in memory the device still holds for the cache.
  for (size_t mib : {12, 14, 16, 18}) {
    void* p = cache.allocate(mib * MiB, 1);
    REQUIRE(p);
    CHECK(dev.segment_of(p, mib * MiB) != 0);
    cache.free(p);
  }
  cache.empty_cache();
  CHECK(dev.reserved() == 0);
  CHECK(dev.bad_releases == 0);
}

TEST_CASE("block cache: randomised allocations and frees on two streams match a reference model",
          "[core][block_cache]") {
  FakeDevice dev(160 * MiB);
  BlockCache cache(dev);
  std::mt19937_64 rng(20261201);
  struct Live {
    size_t bytes;
    DeviceMemory::StreamId stream;
  };
  std::map<uintptr_t, Live> live;                     // the model: what must be live
  std::map<uintptr_t, DeviceMemory::StreamId> owner;  // segment -> the only stream that may use it
  // Freed regions another stream may still read: [begin, end) -> that stream.
  std::vector<std::tuple<uintptr_t, uintptr_t, DeviceMemory::StreamId>> in_flight;
  std::map<uintptr_t, std::vector<DeviceMemory::StreamId>> recorded;
  int ooms = 0, allocations = 0;
  auto random_size = [&] {
    const double lg = std::uniform_real_distribution<double>(0, 25)(rng);  // 1 byte .. 32 MiB
    return static_cast<size_t>(std::exp2(lg)) + 1;
  };
  for (int step = 0; step < 6000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    if (op < 50 || live.empty()) {
      const size_t bytes = random_size();
      const DeviceMemory::StreamId stream = 1 + rng() % 2;
      const int syncs = dev.syncs;
      void* p = cache.allocate(bytes, stream);
      if (dev.syncs != syncs) in_flight.clear();  // the device was drained
      if (!p) {
        ++ooms;
        continue;
      }
      ++allocations;
      const uintptr_t a = addr(p);
      const uintptr_t seg = dev.segment_of(p, bytes);
      REQUIRE(seg != 0);  // inside memory the device holds
      auto [it, fresh] = owner.emplace(seg, stream);
      REQUIRE(it->second == stream);  // a segment serves one stream only
      auto next = live.lower_bound(a);
      if (next != live.end()) REQUIRE(a + bytes <= next->first);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        REQUIRE(prev->first + prev->second.bytes <= a);
      }
      for (auto& [b, e, s] : in_flight) REQUIRE((a + bytes <= b || e <= a));
      live[a] = {bytes, stream};
    } else if (op < 85) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      for (DeviceMemory::StreamId s : recorded[it->first])
        in_flight.emplace_back(it->first, it->first + it->second.bytes, s);
      recorded.erase(it->first);
      cache.free(reinterpret_cast<void*>(it->first));
      live.erase(it);
    } else if (op < 93) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      const DeviceMemory::StreamId other = it->second.stream == 1 ? 2 : 1;
      REQUIRE(cache.record_stream(reinterpret_cast<void*>(it->first), other));
      recorded[it->first].push_back(other);
    } else if (op < 99) {
      const DeviceMemory::StreamId s = 1 + rng() % 2;
      dev.complete(s);
      std::erase_if(in_flight, [&](const auto& r) { return std::get<2>(r) == s; });
    } else {
      cache.empty_cache();
      in_flight.clear();
      for (auto it = owner.begin(); it != owner.end();)  // released segments may come back to any stream
        it = dev.segment_of(reinterpret_cast<void*>(it->first), 1) == it->first ? std::next(it) : owner.erase(it);
    }
    // Forget owners of segments the device no longer holds (released in OOM recovery).
    for (auto it = owner.begin(); it != owner.end();)
      it = dev.segment_of(reinterpret_cast<void*>(it->first), 1) == it->first ? std::next(it) : owner.erase(it);
    const MemoryStats st = cache.stats();
    int64_t in_use = 0;
    for (auto& [a, l] : live) in_use += static_cast<int64_t>(l.bytes);
    REQUIRE(st.in_use == in_use);
    REQUIRE(st.allocations == static_cast<int64_t>(live.size()));
    REQUIRE(st.reserved == static_cast<int64_t>(dev.reserved()));
    REQUIRE(st.peak >= st.in_use);
    REQUIRE(cache.segment_count() == dev.segment_count());
  }
  CHECK(allocations > 2000);
  CHECK(ooms > 0);  // the out-of-memory paths ran
  for (auto& [a, l] : live) cache.free(reinterpret_cast<void*>(a));
  cache.empty_cache();
  CHECK(dev.reserved() == 0);
  CHECK(dev.bad_releases == 0);
  CHECK(dev.live_events() == 0);
  CHECK(cache.stats().total_allocations == allocations);
}

TEST_CASE("block cache: two threads allocating on their own streams keep the books", "[core][block_cache]") {
  FakeDevice dev(1024 * MiB);
  BlockCache cache(dev);
  auto work = [&](DeviceMemory::StreamId stream) {
    std::mt19937 rng(static_cast<unsigned>(stream));
    std::vector<void*> mine;
    for (int i = 0; i < 5000; ++i) {
      if (mine.size() < 8 && (rng() % 2 || mine.empty())) {
        mine.push_back(cache.allocate(1 + rng() % (2 * MiB), stream));
      } else {
        cache.free(mine.back());
        mine.pop_back();
      }
    }
    for (void* p : mine) cache.free(p);
  };
  std::thread t1(work, 1), t2(work, 2);
  t1.join();
  t2.join();
  CHECK(cache.stats().in_use == 0);
  CHECK(cache.stats().allocations == 0);
  cache.empty_cache();
  CHECK(dev.reserved() == 0);
}
