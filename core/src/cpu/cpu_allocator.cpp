#include "cpu/cpu_allocator.h"

#include <cstdint>
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
  // Note [CPU allocation]: aligned_alloc/memalign bypass glibc's per-thread cache (tcache) and
  // cost ~500 instructions per call, more than the rest of a small op. So over-allocate with
  // malloc (cached), align by hand to 64 bytes, and keep malloc's pointer just below the block.
  void* raw = std::malloc(bytes + 63 + sizeof(void*));
  void* p = nullptr;
  if (raw) {
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + 63) & ~uintptr_t{63};
    p = reinterpret_cast<void*>(aligned);
    static_cast<void**>(p)[-1] = raw;
  }
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
  std::free(static_cast<void**>(p)[-1]);  // the malloc'ed pointer (Note [CPU allocation])
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
