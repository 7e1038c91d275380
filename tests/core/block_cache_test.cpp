// The caching allocator's bookkeeping (Note [Block cache]) against a fake device
// (support/fake_device_memory.h): hand-computed cases for rounding, splitting, merging, streams,
// record_stream and out-of-memory recovery. A failing device, a randomised run and two threads:
// block_cache_stress_test.cpp.
#include "wick/core/block_cache.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "support/fake_device_memory.h"
#include "wick/core/error.h"

using namespace wick;
using wick::test::addr;
using wick::test::FakeDevice;
using wick::test::MiB;

TEST_CASE("block cache: rounding and segment sizes follow PyTorch's caching allocator", "[core][block_cache]") {
  CHECK(BlockCache::round_size(1) == 512);
  CHECK(BlockCache::round_size(512) == 512);
  CHECK(BlockCache::round_size(513) == 1024);
  CHECK(BlockCache::round_size(MiB + 1) == MiB + 512);
  CHECK(BlockCache::segment_size(512) == 2 * MiB);
  CHECK(BlockCache::segment_size(MiB) == 2 * MiB);
  CHECK(BlockCache::segment_size(MiB + 512) == 20 * MiB);
  CHECK(BlockCache::segment_size(10 * MiB - 512) == 20 * MiB);
  CHECK(BlockCache::segment_size(10 * MiB) == 10 * MiB);
  CHECK(BlockCache::segment_size(10 * MiB + 512) == 12 * MiB);
}

TEST_CASE("block cache: small requests split one segment and merge back when freed", "[core][block_cache]") {
  FakeDevice dev(64 * MiB);
  BlockCache cache(dev);
  void* a = cache.allocate(1000, 1);
  void* b = cache.allocate(1000, 1);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(addr(b) == addr(a) + 1024);  // the rest of a's segment, right after it
  CHECK(dev.reserves == 1);
  CHECK(cache.stats().reserved == static_cast<int64_t>(2 * MiB));
  CHECK(cache.stats().in_use == 2000);
  CHECK(cache.stats().allocations == 2);
  void* c = cache.allocate(MiB, 1);  // fits in the rest of the segment too
  CHECK(dev.reserves == 1);
  CHECK(addr(c) == addr(a) + 2048);
  cache.free(a);
  cache.free(c);
  cache.empty_cache();  // b still lives in the segment: nothing can go back
  CHECK(dev.releases == 0);
  cache.free(b);
  CHECK(cache.stats().in_use == 0);
  void* whole = cache.allocate(MiB, 1);  // the merged segment serves it from its start
  CHECK(whole == a);
  cache.free(whole);
  cache.empty_cache();
  CHECK(dev.releases == 1);
  CHECK(dev.reserved() == 0);
  CHECK(cache.stats().reserved == 0);
  CHECK(cache.segment_count() == 0);
}

TEST_CASE("block cache: pass-through reserves exactly each request and gives it back at its free",
          "[core][block_cache]") {
  FakeDevice dev(4 * MiB);
  BlockCache cache(dev, /*caching=*/false);
  CHECK_FALSE(cache.caching());
  void* a = cache.allocate(1000, 1);  // no rounding to 512, no 2 MiB segment
  void* b = cache.allocate(3 * MiB, 2);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(dev.reserves == 2);
  CHECK(dev.segment_of(a, 1000) == addr(a));
  CHECK(dev.segment_of(a, 1001) == 0);  // a's bounds are the request's own
  CHECK(dev.segment_of(b, 3 * MiB) == addr(b));
  CHECK(cache.stats().reserved == static_cast<int64_t>(3 * MiB + 1000));
  CHECK(cache.stats().in_use == cache.stats().reserved);
  CHECK(cache.stats().allocations == 2);
  CHECK(cache.segment_count() == 2);
  CHECK(cache.record_stream(a, 3));
  CHECK(cache.allocate(2 * MiB, 1) == nullptr);  // 1000 bytes over the device's 4 MiB: nothing to release
  cache.free(a);  // back to the device at once, record_stream or not (its release waits for the device)
  CHECK(dev.releases == 1);
  CHECK(dev.live_events() == 0);
  CHECK(dev.reserved() == 3 * MiB);
  void* c = cache.allocate(1000, 1);  // a fresh reservation, not a's block from a cache
  CHECK(dev.reserves == 3);
  CHECK(addr(c) != addr(a));
  CHECK(cache.stats().peak == static_cast<int64_t>(3 * MiB + 1000));
  CHECK(cache.stats().total_allocations == 3);
  dev.fail_release_countdown = 1;  // the device refuses to take c back: it stays reserved, never handed out
  cache.free(c);
  CHECK(cache.stats().in_use == static_cast<int64_t>(3 * MiB));
  CHECK(cache.stats().reserved == static_cast<int64_t>(3 * MiB + 1000));
  CHECK(cache.record_stream(c, 1) == false);  // no longer a live block
  cache.free(b);
  cache.empty_cache();
  CHECK(dev.releases == 2);
  CHECK(cache.stats().in_use == 0);
  CHECK(cache.stats().allocations == 0);
  CHECK(cache.stats().reserved == 1000);
  CHECK(dev.bad_releases == 0);
}

TEST_CASE("block cache: large requests take the best fit, split only when more than 1 MiB remains",
          "[core][block_cache]") {
  FakeDevice dev(256 * MiB);
  BlockCache cache(dev);
  void* a = cache.allocate(3 * MiB, 1);  // a 20 MiB segment, 17 MiB left as a free block
  CHECK(dev.reserves == 1);
  void* b = cache.allocate(16 * MiB + 512, 1);  // 17 MiB - 16 MiB - 512 < 1 MiB: takes the whole rest
  CHECK(addr(b) == addr(a) + 3 * MiB);
  CHECK(dev.reserves == 1);
  cache.free(b);
  void* c = cache.allocate(2 * MiB, 1);  // best fit: the 17 MiB block, split (15 MiB remain)
  CHECK(c == b);
  void* d = cache.allocate(15 * MiB, 1);
  CHECK(addr(d) == addr(c) + 2 * MiB);
  CHECK(dev.reserves == 1);
  for (void* p : {a, c, d}) cache.free(p);
  cache.empty_cache();
  CHECK(dev.reserved() == 0);
}

TEST_CASE("block cache: a block is reused only by the stream it was allocated on", "[core][block_cache]") {
  FakeDevice dev(64 * MiB);
  BlockCache cache(dev);
  void* a = cache.allocate(4096, /*stream=*/1);
  cache.free(a);
  void* b = cache.allocate(4096, /*stream=*/2);
  CHECK(dev.segment_of(b, 4096) != dev.segment_of(a, 4096));
  CHECK(dev.reserves == 2);
  void* c = cache.allocate(4096, 1);
  CHECK(c == a);
  cache.free(b);
  cache.free(c);
}

TEST_CASE("block cache: record_stream keeps a freed block out until the other stream passes the free",
          "[core][block_cache]") {
  FakeDevice dev(64 * MiB);
  BlockCache cache(dev);
  void* a = cache.allocate(4096, 1);
  CHECK(cache.record_stream(a, 2));
  CHECK_FALSE(cache.record_stream(reinterpret_cast<void*>(0x42), 2));
  cache.free(a);
  CHECK(dev.live_events() == 1);
  void* b = cache.allocate(4096, 1);
  CHECK(b != a);  // stream 2 may still read a
  dev.complete(2);
  void* c = cache.allocate(4096, 1);
  CHECK(c == a);
  CHECK(dev.live_events() == 0);
  cache.free(b);
  cache.free(c);
  // An event that cannot be recorded: the cache waits for the device instead.
  void* d = cache.allocate(4096, 1);
  cache.record_stream(d, 2);
  dev.fail_events = true;
  const int syncs = dev.syncs;
  cache.free(d);
  CHECK(dev.syncs == syncs + 1);
  CHECK(cache.allocate(4096, 1) == d);
}

TEST_CASE("block cache: out of memory releases only the cached segments the request needs", "[core][block_cache]") {
  FakeDevice dev(32 * MiB);
  BlockCache cache(dev);
  void* a = cache.allocate(12 * MiB, 1);  // a 12 MiB segment
  void* b = cache.allocate(16 * MiB, 1);  // a 16 MiB segment: 4 MiB of the device left
  cache.free(a);
  cache.free(b);
  // 10 MiB + 512 needs a 12 MiB segment: not from the cache (the 12 MiB block belongs to stream
  // 1), not from the device (4 MiB left). The smallest cached segment that frees enough is a's.
  void* c = cache.allocate(10 * MiB + 512, 2);
  REQUIRE(c);
  CHECK(dev.releases == 1);
  CHECK(dev.segment_of(b, 16 * MiB) != 0);  // b's segment is still cached
  CHECK(cache.segment_count() == 2);
  CHECK(cache.stats().reserved == static_cast<int64_t>(28 * MiB));
  // More than the device has: everything cached is released, then nullptr, books intact.
  CHECK(cache.allocate(40 * MiB, 1) == nullptr);
  CHECK(dev.segment_of(b, 16 * MiB) == 0);
  CHECK(cache.stats().reserved == static_cast<int64_t>(12 * MiB));
  CHECK(cache.stats().in_use == static_cast<int64_t>(10 * MiB + 512));
  cache.free(c);
  cache.empty_cache();
  CHECK(dev.reserved() == 0);
  CHECK(dev.bad_releases == 0);
}
