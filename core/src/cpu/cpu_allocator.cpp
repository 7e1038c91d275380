#include "cpu/cpu_allocator.h"

#include <cstdlib>

#include "wick/core/error.h"

namespace wick::cpu {

CpuAllocator::CpuAllocator() : counters_(std::make_unique<Counters[]>(32768)) {}

namespace {
// Device::index is an int16 and may be negative when built from an int (Device(kCPU-type, -1));
// it indexes the counters, so it must be checked before any use.
void check_index(Device device) {
  WICK_CHECK(device.index >= 0, "allocate: invalid CPU device {}: the index must be in [0, 32767]", device);
}
}  // namespace

void* CpuAllocator::allocate(size_t bytes, Device device) {
  check_index(device);
  if (bytes == 0) return nullptr;
  size_t rounded = (bytes + 63) & ~size_t{63};
  void* p = std::aligned_alloc(64, rounded);
  auto& c = counters_[device.index];
  WICK_CHECK(p != nullptr, "allocate: out of memory on {} asking for {} bytes ({} bytes in use there)", device,
             bytes, c.in_use.load());
  int64_t now = c.in_use.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) + static_cast<int64_t>(bytes);
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (now > peak && !c.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  c.allocations.fetch_add(1, std::memory_order_relaxed);
  c.total.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void CpuAllocator::deallocate(void* p, size_t bytes, Device device) noexcept {
  if (!p) return;
  std::free(p);
  auto& c = counters_[device.index];
  c.in_use.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  c.allocations.fetch_sub(1, std::memory_order_relaxed);
}

MemoryStats CpuAllocator::stats(Device device) const {
  check_index(device);
  auto& c = counters_[device.index];
  MemoryStats s;
  s.in_use = c.in_use.load();
  s.peak = c.peak.load();
  s.reserved = s.in_use;
  s.allocations = c.allocations.load();
  s.total_allocations = c.total.load();
  return s;
}

void CpuAllocator::reset_peak(Device device) {
  check_index(device);
  auto& c = counters_[device.index];
  c.peak.store(c.in_use.load());
}

}  // namespace wick::cpu
