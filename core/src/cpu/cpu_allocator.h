#pragma once
// The CPU devices' allocator: 64-byte aligned blocks from malloc, with per-device statistics,
// and a cache of large blocks (Note [CPU block cache] in cpu_allocator.cpp).
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wick/core/allocator.h"

namespace wick::cpu {

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator();
  void* allocate(size_t bytes, Device device) override;
  void deallocate(void* p, size_t bytes, Device device) noexcept override;
  MemoryStats stats(Device device) const override;
  void reset_peak(Device device) override;
  /// Frees the device's cached large blocks.
  void empty_cache(Device device) override;

 private:
  struct Counters {
    std::atomic<int64_t> in_use{0}, peak{0}, allocations{0}, total{0}, cached{0};
  };
  void* take_cached(size_t rounded, Device device);
  bool give_to_cache(void* p, size_t rounded, Device device);
  // Cached blocks per device index, by rounded size.
  std::mutex cache_mutex_;
  std::unordered_map<int, std::unordered_map<size_t, std::vector<void*>>> cache_;
  int64_t cached_total_ = 0;
  // One slot per possible CPU device index (Device::index is int16).
  std::unique_ptr<Counters[]> counters_;
};

}  // namespace wick::cpu
