#pragma once
// A fake DeviceMemory for the block cache's tests (tests/core/block_cache*_test.cpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "wick/core/block_cache.h"
#include "wick/core/error.h"

namespace wick::test {

inline constexpr size_t MiB = size_t{1} << 20;

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

inline uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace wick::test
