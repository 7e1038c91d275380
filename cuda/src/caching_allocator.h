#pragma once
// The CUDA caching allocator (Note [Caching allocator] in docs/cuda.md).
//
// cudaMalloc and cudaFree are slow and synchronise the device, so freed blocks are kept in a
// per-device cache and reused. Sizes are rounded up to buckets (512-byte steps below 1 MiB,
// 8 steps per power of two above), and a free block is reused only for its exact bucket.
//
// Streams: a block belongs to the stream that was current when it was allocated. Freed, it can
// be reused at once by that stream (stream order makes that safe) but by another stream only
// after its stream has passed the free, which an event recorded at the free tells. Events are
// recorded only once a device has seen allocations from two streams (or after record_stream),
// so the common single-stream program never pays for them.
#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wick/core/allocator.h"

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
  static size_t round_size(size_t bytes);

 private:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;       // bucket size, as reserved from the driver
    size_t requested = 0;  // bytes asked for (0 while free)
    cudaStream_t stream = nullptr;
    std::vector<cudaStream_t> used_on;  // extra streams (record_stream)
    // Events recorded at the free, one per stream that may still use the block.
    std::vector<std::pair<cudaStream_t, cudaEvent_t>> events;
  };
  struct DeviceCache {
    mutable std::mutex mutex;
    std::unordered_map<void*, std::unique_ptr<Block>> live;
    std::unordered_map<size_t, std::vector<std::unique_ptr<Block>>> free;
    std::vector<cudaEvent_t> event_pool;
    std::vector<cudaStream_t> streams_seen;  // up to 2 distinct streams, then multi_stream
    bool multi_stream = false;
    MemoryStats stats;
  };

  DeviceCache& cache(int device) const;
  std::unique_ptr<Block> take_free_block(DeviceCache& c, size_t size, cudaStream_t stream);
  bool usable_by(DeviceCache& c, Block& b, cudaStream_t stream);
  void note_stream(DeviceCache& c, cudaStream_t stream);
  cudaEvent_t get_event(DeviceCache& c);
  void release_events(DeviceCache& c, Block& b);
  // Frees every cached block of one device (the caller holds c.mutex and made it current).
  void release_cached(DeviceCache& c);

  std::unique_ptr<DeviceCache[]> caches_;
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
