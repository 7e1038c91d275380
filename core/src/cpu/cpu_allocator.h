#pragma once
// The CPU devices' allocator: 64-byte aligned blocks from malloc, with per-device statistics,
// and a per-device cache of freed blocks in size classes (Note [CPU block cache] in
// cpu_allocator.cpp).
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "wick/core/allocator.h"

namespace wick::cpu {

struct ThreadBlocks;
struct ThreadBlocksFlusher;

/// Size classes of the CPU block cache: 64-byte steps up to 512 bytes, then four classes per
/// power of two (a block is at most 25% larger than asked for).
struct SizeClass {
  static constexpr int kCount = 8 + 4 * 55;  ///< up to 2^64 bytes
  /// The class index of a request of `bytes` > 0 bytes.
  static int index(size_t bytes);
  /// The block size of class `i` (>= every request that maps to it).
  static size_t bytes(int i);
};

class CpuAllocator final : public Allocator {
 public:
  CpuAllocator();
  ~CpuAllocator() override;
  void* allocate(size_t bytes, Device device) override;
  void deallocate(void* p, size_t bytes, Device device) noexcept override;
  MemoryStats stats(Device device) const override;
  void reset_peak(Device device) override;
  /// Frees the device's cached blocks.
  void empty_cache(Device device) override;

 private:
  struct Counters {
    std::atomic<int64_t> in_use{0}, peak{0}, allocations{0}, total{0}, cached{0};
  };
  // One device's free blocks, by size class; created on the device's first free.
  struct DeviceCache {
    std::mutex mutex;
    std::vector<void*> blocks[SizeClass::kCount];
  };
  DeviceCache* cache_for(int index, bool create);
  // The shared cache of CPU device `index`.
  void* take_cached(int cls, int index);
  bool give_to_cache(void* p, int cls, int index) noexcept;
  // The calling thread's small blocks and statistics (Note [CPU thread caches] in
  // cpu_allocator.cpp): nullptr when the thread cannot keep any. The first call registers the
  // thread in threads_; retire_thread, at its exit, folds its figures into counters_.
  ThreadBlocks* thread_blocks() noexcept;
  void retire_thread(ThreadBlocks& t) noexcept;
  void* take_from_thread(ThreadBlocks& t, int cls, int index) noexcept;
  bool give_to_thread(ThreadBlocks& t, void* p, int cls, int index) noexcept;
  // Empties t's blocks of device `index`: into the shared cache (the thread is exiting), else
  // back to malloc (empty_cache).
  void drain_thread_blocks(ThreadBlocks& t, int index, bool to_shared_cache) noexcept;
  friend struct ThreadBlocksFlusher;
  std::atomic<int64_t> cached_total_{0};
  mutable std::mutex threads_mutex_;  // guards threads_ and the folding of a thread's figures
  ThreadBlocks* threads_ = nullptr;   // the open threads' blocks, a list through prev/next
  // One slot per possible CPU device index (Device::index is int16).
  std::unique_ptr<Counters[]> counters_;
  std::unique_ptr<std::atomic<DeviceCache*>[]> caches_;
};

}  // namespace wick::cpu
