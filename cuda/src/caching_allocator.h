#pragma once
// The CUDA caching allocator (Note [Caching allocator] in docs/cuda.md).
//
// cudaMalloc and cudaFree are slow and synchronise the device, so reserved memory is kept in a
// per-device cache and handed out again. The policy (size rounding, small and large pools,
// splitting and merging, per-stream reuse, record_stream events, out-of-memory recovery) is
// core's BlockCache (Note [Block cache] in wick/core/block_cache.h); this file gives it CUDA
// memory and events and turns "out of memory" into wick::OutOfMemoryError.
#include <cuda_runtime_api.h>

#include <memory>

#include "wick/core/allocator.h"
#include "wick/core/block_cache.h"

namespace wick::cuda {

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator();
  ~CachingAllocator() override;

  void* allocate(size_t bytes, Device device) override;
  void deallocate(void* p, size_t bytes, Device device) noexcept override;
  MemoryStats stats(Device device) const override;
  void reset_peak(Device device) override;
  void empty_cache(Device device) override;

  /// Marks the block holding `base` (a pointer returned by allocate) as used on `stream` too.
  void record_stream(void* base, int device, cudaStream_t stream);
  /// The rounded size actually reserved for a request of `bytes`.
  static size_t round_size(size_t bytes) { return BlockCache::round_size(bytes); }

 private:
  struct DeviceCache;
  DeviceCache& cache(int device) const;

  std::unique_ptr<std::unique_ptr<DeviceCache>[]> caches_;
  int device_count_ = 0;
};

/// The process-wide caching allocator (never destroyed: CUDA may be torn down before static
/// destructors run).
CachingAllocator& the_caching_allocator();

/// RAII scratch memory from the caching allocator (kernels' temporaries). Freed memory is
/// reused first by the same stream, so a buffer may be dropped as soon as the kernels that use
/// it are queued on the current stream.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, int device)
      : data_(the_caching_allocator().allocate(bytes, Device(DeviceType::CUDA, device))),
        bytes_(bytes),
        device_(device) {}
  ~DeviceBuffer() { the_caching_allocator().deallocate(data_, bytes_, Device(DeviceType::CUDA, device_)); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_;
  size_t bytes_;
  int device_;
};

}  // namespace wick::cuda
