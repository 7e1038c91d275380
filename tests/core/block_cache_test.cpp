// The caching allocator's bookkeeping (Note [Block cache]) against a fake device: hand-computed
// cases for rounding, splitting, merging, streams, record_stream and out-of-memory recovery, a
// device that fails midway through empty_cache, and a randomised run over two streams checked
// against a reference model of what must be live.
#include "wick/core/block_cache.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "wick/core/error.h"

using namespace wick;

namespace {

constexpr size_t MiB = size_t{1} << 20;

// Device memory that never exists: addresses come from a counter and are never reused, so a
// pointer into a released segment is always detectable. Events complete when the test says so
// (complete(stream)) or at synchronize().
class FakeDevice final : public DeviceMemory {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}

  void* reserve(size_t bytes) override {
    if (reserved_ + bytes > capacity_) return nullptr;
    const uintptr_t p = next_;
    next_ += bytes + 4096;
    segments_[p] = bytes;
    reserved_ += bytes;
    ++reserves;
    return reinterpret_cast<void*>(p);
  }
  void release(void* p, size_t bytes) override {
    if (fail_release_countdown > 0 && --fail_release_countdown == 0) throw BackendError("fake device: release failed");
    auto it = segments_.find(reinterpret_cast<uintptr_t>(p));
    if (it == segments_.end() || it->second != bytes) {
      ++bad_releases;
      return;
    }
    reserved_ -= bytes;
    segments_.erase(it);
    ++releases;
  }
  EventId record_event(StreamId stream) override {
    if (fail_events) return 0;
    events_[++last_event_] = {stream, false};
    return last_event_;
  }
  bool event_done(EventId e) override { return events_.at(e).second; }
  void free_event(EventId e) noexcept override { events_.erase(e); }
  void synchronize() override {
    for (auto& [id, ev] : events_) ev.second = true;
    ++syncs;
  }
  void complete(StreamId stream) {
    for (auto& [id, ev] : events_)
      if (ev.first == stream) ev.second = true;
  }

  // The segment holding [p, p + n), or 0 when none does.
  uintptr_t segment_of(const void* p, size_t n) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = segments_.upper_bound(a);
    if (it == segments_.begin()) return 0;
    --it;
    return a + n <= it->first + it->second ? it->first : 0;
  }
  size_t reserved() const { return reserved_; }
  size_t segment_count() const { return segments_.size(); }
  size_t live_events() const { return events_.size(); }

  int reserves = 0, releases = 0, bad_releases = 0, syncs = 0;
  int fail_release_countdown = 0;  // > 0: the n-th release from now throws
  bool fail_events = false;

 private:
  size_t capacity_;
  uintptr_t next_ = 0x100000;
  size_t reserved_ = 0;
  std::map<uintptr_t, size_t> segments_;
  std::map<EventId, std::pair<StreamId, bool>> events_;
  EventId last_event_ = 0;
};

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace

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
