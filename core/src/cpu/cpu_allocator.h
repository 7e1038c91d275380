#pragma once
// The CPU devices' allocator: 64-byte aligned blocks from malloc, with per-device statistics.
#include <atomic>
#include <memory>

#include "wick/core/allocator.h"

namespace wick::cpu {

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator();
  void* allocate(size_t bytes, Device device) override;
  void deallocate(void* p, size_t bytes, Device device) noexcept override;
  MemoryStats stats(Device device) const override;
  void reset_peak(Device device) override;

 private:
  struct Counters {
    std::atomic<int64_t> in_use{0}, peak{0}, allocations{0}, total{0};
  };
  // One slot per possible CPU device index (Device::index is int16).
  std::unique_ptr<Counters[]> counters_;
};

}  // namespace wick::cpu
