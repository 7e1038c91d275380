#pragma once
// Device memory: the caching allocator's statistics and controls, pinned host memory, and
// asynchronous copies (Note [Caching allocator] and Note [Copies] in docs/cuda.md).
#include <cstddef>
#include <cstdint>

#include "wick/core/allocator.h"
#include "wick/core/tensor.h"
#include "wick/cuda/stream.h"

namespace wick::cuda {

/// The allocator behind every CUDA tensor (one cache per device; thread-safe).
Allocator& caching_allocator();

/// Statistics of device `index`: in_use (bytes held by tensors), reserved (bytes held from the
/// driver, cache included), peak in_use, live and total allocations.
MemoryStats memory_stats(int index);
/// Sets peak = in_use on device `index`.
void reset_peak_memory_stats(int index);
/// Returns every cached, unused block of every device to the driver (tensors keep theirs), and
/// the free buffers of the pinned host cache.
void empty_cache();

/// Marks that `t`'s memory is used by work queued on `s` (a stream other than the one it was
/// allocated on): when `t`'s storage is freed, its block is reused only after the work queued
/// on `s` up to that moment finished (LibTorch's Tensor::record_stream).
void record_stream(const Tensor& t, Stream s);

/// Page-locked host memory, for transfers that overlap with compute. Buffers come from a cache;
/// a buffer handed back with `release_after(stream)` returns to the cache only once the work
/// queued on that stream has finished. Move-only RAII.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  /// At least `bytes` bytes of pinned host memory; throws wick::DeviceUnavailable without a GPU and
  /// wick::BackendError when the driver refuses.
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  /// Gives the buffer back once the work queued on `s` so far finished (it may still be read by
  /// an asynchronous copy on `s`). The handle becomes empty.
  void release_after(Stream s);

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

/// True when `host` points into page-locked host memory (from PinnedBuffer or cudaHostAlloc).
bool is_pinned(const void* host);

/// Copies `bytes` from host memory to device memory on `s`, without waiting for the copy. When
/// `host` is pageable, the bytes are first copied into a pinned staging buffer that is recycled
/// after the copy, so the caller may reuse `host` as soon as this returns.
void copy_to_device_async(void* device_dst, const void* host, size_t bytes, Stream s);
/// Copies `bytes` from device memory to host memory on `s`. It returns before the copy finished
/// only when `host` is pinned (wait with s.synchronize() or an Event); otherwise it waits.
void copy_to_host_async(void* host, const void* device_src, size_t bytes, Stream s);
/// Copies `bytes` between two devices: peer to peer when the devices can access each other,
/// staged through pinned host memory otherwise. Ordered after the work queued on src's current
/// stream and before later work on dst's current stream (events, no host wait on the peer path).
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t bytes);
/// True when device `device` can read and write `peer`'s memory directly.
bool can_access_peer(int device, int peer);

}  // namespace wick::cuda
