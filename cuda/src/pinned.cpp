// Pinned host memory: a cache of cudaHostAlloc buffers, recycled once the copies that read
// them have finished (Note [Copies] in docs/cuda.md). Sizes are rounded up to powers of two, and
// the cache keeps at most kMaxCachedBytes of free buffers; cuda::empty_cache() releases them all.
#include <mutex>
#include <unordered_map>
#include <vector>

#include "caching_allocator.h"
#include "cuda_check.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
constexpr size_t kMaxCachedBytes = size_t{256} << 20;

size_t round_pinned(size_t bytes) {
  size_t size = 4096;
  while (size < bytes) size *= 2;
  return size;
}

struct Pending {
  void* ptr;
  size_t size;
  cudaEvent_t event;
};

struct PinnedCache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> free;
  size_t free_bytes = 0;  // bytes in `free`
  std::vector<Pending> pending;

  // Keeps a buffer for reuse, or gives it back when the cache is full (caller holds the mutex).
  void keep(void* p, size_t size) noexcept {
    if (free_bytes + size > kMaxCachedBytes) {
      (void)cudaFreeHost(p);
      (void)cudaGetLastError();
      return;
    }
    try {
      free[size].push_back(p);
      free_bytes += size;
    } catch (...) {
      (void)cudaFreeHost(p);
    }
  }

  // Moves buffers whose copies finished back to the free lists (caller holds the mutex).
  void collect() {
    for (size_t i = 0; i < pending.size();) {
      const cudaError_t q = cudaEventQuery(pending[i].event);
      if (q == cudaErrorNotReady) {
        (void)cudaGetLastError();
        ++i;
        continue;
      }
      (void)cudaGetLastError();
      (void)cudaEventDestroy(pending[i].event);
      keep(pending[i].ptr, pending[i].size);
      pending[i] = pending.back();
      pending.pop_back();
    }
  }
};

PinnedCache& pinned_cache() {
  static PinnedCache* c = new PinnedCache();  // never destroyed (see the_caching_allocator)
  return *c;
}
}  // namespace

PinnedBuffer::PinnedBuffer(size_t bytes) {
  if (bytes == 0) return;
  WICK_CHECK_T(DeviceUnavailable, device_count() > 0,
               "PinnedBuffer: pinned host memory needs a CUDA device, and this machine has none ({})",
               unavailable_reason());
  const size_t size = round_pinned(bytes);
  PinnedCache& c = pinned_cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.collect();
    auto it = c.free.find(size);
    if (it != c.free.end() && !it->second.empty()) {
      data_ = it->second.back();
      it->second.pop_back();
      c.free_bytes -= size;
      size_ = size;
      return;
    }
  }
  void* p = nullptr;
  WICK_CUDA_CHECK(cudaHostAlloc(&p, size, cudaHostAllocPortable));
  data_ = p;
  size_ = size;
}

PinnedBuffer::~PinnedBuffer() {
  if (!data_) return;
  PinnedCache& c = pinned_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.keep(data_, size_);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    PinnedBuffer tmp(std::move(*this));
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void PinnedBuffer::release_after(Stream s) {
  if (!data_) return;
  CUDAGuard g(s.device());
  cudaEvent_t e = nullptr;
  WICK_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  const cudaError_t err = cudaEventRecord(e, static_cast<cudaStream_t>(s.handle()));
  if (err != cudaSuccess) {
    (void)cudaEventDestroy(e);
    WICK_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(s.handle())));
    return;  // the destructor recycles the buffer: the stream is idle now
  }
  PinnedCache& c = pinned_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.pending.push_back({data_, size_, e});
  data_ = nullptr;
  size_ = 0;
}

void release_pinned_cache() {
  PinnedCache& c = pinned_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.collect();
  for (auto& [size, buffers] : c.free) {
    while (!buffers.empty()) {
      WICK_CUDA_CHECK(cudaFreeHost(buffers.back()));  // throws: the rest stays cached and counted
      buffers.pop_back();
      c.free_bytes -= size;
    }
  }
  c.free.clear();
}

bool is_pinned(const void* host) {
  if (!host || device_count() == 0) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, host) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace wick::cuda
