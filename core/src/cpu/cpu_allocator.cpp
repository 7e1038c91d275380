#include "cpu/cpu_allocator.h"

#include <cstdint>
#include <cstdlib>

#include "wick/core/error.h"

namespace wick::cpu {

CpuAllocator::CpuAllocator() : counters_(std::make_unique<Counters[]>(32768)) {}

namespace {
// Note [CPU block cache]
// Blocks of 64 KiB and more (rounded up to 64 KiB steps) are kept after they are freed and
// handed out again for the same rounded size, so that steady-state loops (a training step,
// replicate every step) reuse warm pages instead of faulting fresh ones in: a freshly mapped
// block costs about as much as copying into it. The threshold was 1 MiB; DataParallel halves
// every activation, which put the demo CNN's batch-64 activations (0.2-0.8 MiB) under it, and
// page faults then took 17% of a training step (perf); at 64 KiB a step of the demo CNN at batch
// 128 runs about 1.4x faster on one device as well. At most 2 GiB (all CPU devices together) is cached; empty_cache(device) frees a
// device's blocks; reserved = in_use + cached. The cache is off under AddressSanitizer, which
// must see every free to catch use-after-free.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif
constexpr size_t kLargeBlock = size_t{1} << 16;
constexpr int64_t kCacheLimit = int64_t{2} << 30;
size_t round_large(size_t bytes) { return (bytes + 65535) & ~size_t{65535}; }

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
  const bool large = kCacheEnabled && bytes >= kLargeBlock;
  const size_t block = large ? round_large(bytes) : bytes;  // Note [CPU block cache]
  void* p = large ? take_cached(block, device) : nullptr;
  void* raw = p ? nullptr : std::malloc(block + 63 + sizeof(void*));
  if (raw) {
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + 63) & ~uintptr_t{63};
    p = reinterpret_cast<void*>(aligned);
    static_cast<void**>(p)[-1] = raw;
  }
  auto& c = counters_[device.index];
  WICK_CHECK_T(OutOfMemoryError, p != nullptr, "allocate: out of memory on {} asking for {} bytes ({} bytes in use there)", device,
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
  const bool large = kCacheEnabled && bytes >= kLargeBlock;
  if (!large || !give_to_cache(p, round_large(bytes), device)) {
    std::free(static_cast<void**>(p)[-1]);  // the malloc'ed pointer (Note [CPU allocation])
  }
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
  s.reserved = s.in_use + c.cached.load();
  s.allocations = c.allocations.load();
  s.total_allocations = c.total.load();
  return s;
}

void CpuAllocator::reset_peak(Device device) {
  check_index(device);
  auto& c = counters_[device.index];
  c.peak.store(c.in_use.load());
}

void* CpuAllocator::take_cached(size_t rounded, Device device) {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto dev = cache_.find(device.index);
  if (dev == cache_.end()) return nullptr;
  auto it = dev->second.find(rounded);
  if (it == dev->second.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  cached_total_ -= static_cast<int64_t>(rounded);
  counters_[device.index].cached.fetch_sub(static_cast<int64_t>(rounded), std::memory_order_relaxed);
  return p;
}

bool CpuAllocator::give_to_cache(void* p, size_t rounded, Device device) {
  try {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cached_total_ + static_cast<int64_t>(rounded) > kCacheLimit) return false;
    cache_[device.index][rounded].push_back(p);
    cached_total_ += static_cast<int64_t>(rounded);
  } catch (...) {  // bad_alloc growing the table: free the block instead
    return false;
  }
  counters_[device.index].cached.fetch_add(static_cast<int64_t>(rounded), std::memory_order_relaxed);
  return true;
}

void CpuAllocator::empty_cache(Device device) {
  check_index(device);
  std::lock_guard<std::mutex> lock(cache_mutex_);
  auto dev = cache_.find(device.index);
  if (dev == cache_.end()) return;
  for (auto& [rounded, blocks] : dev->second) {
    for (void* p : blocks) std::free(static_cast<void**>(p)[-1]);
    cached_total_ -= static_cast<int64_t>(rounded * blocks.size());
    counters_[device.index].cached.fetch_sub(static_cast<int64_t>(rounded * blocks.size()), std::memory_order_relaxed);
  }
  cache_.erase(dev);
}

}  // namespace wick::cpu
