// The CUDA caching allocator (Note [Caching allocator] in docs/cuda.md).
#include "caching_allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cuda_check.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/memory.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
std::string human_bytes(int64_t b) {
  const double v = static_cast<double>(b);
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", v / (1 << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", v / (1 << 20));
  if (b >= (int64_t{1} << 10)) return fmt::format("{:.2f} KiB", v / (1 << 10));
  return fmt::format("{} bytes", b);
}

// Makes `device` current for a scope without index checks (callers validated it); noexcept.
class RawDeviceScope {
 public:
  explicit RawDeviceScope(int device) {
    if (cudaGetDevice(&prev_) == cudaSuccess && prev_ != device) {
      if (cudaSetDevice(device) != cudaSuccess) prev_ = -1;
    } else {
      prev_ = -1;
    }
  }
  ~RawDeviceScope() {
    if (prev_ >= 0) (void)cudaSetDevice(prev_);
  }
  RawDeviceScope(const RawDeviceScope&) = delete;
  RawDeviceScope& operator=(const RawDeviceScope&) = delete;

 private:
  int prev_ = -1;
};
// CUDA memory and events for one device, as BlockCache wants them. Every call makes the device
// current for its duration.
class CudaDeviceMemory final : public DeviceMemory {
 public:
  explicit CudaDeviceMemory(int device) : device_(device) {}

  void* reserve(size_t bytes) override {
    RawDeviceScope scope(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    WICK_CUDA_CHECK(err);
    return p;
  }
  void release(void* p, size_t) override {
    RawDeviceScope scope(device_);
    // cudaFree waits for the device, so work still reading the segment finishes first.
    WICK_CUDA_CHECK(cudaFree(p));
  }
  EventId record_event(StreamId stream) override {
    RawDeviceScope scope(device_);
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    if (cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaEventDestroy(e);
      return 0;
    }
    return reinterpret_cast<EventId>(e);
  }
  bool event_done(EventId e) override {
    const cudaError_t q = cudaEventQuery(reinterpret_cast<cudaEvent_t>(e));
    if (q == cudaSuccess) return true;
    (void)cudaGetLastError();
    return false;  // not ready; an error keeps the block out of reuse until empty_cache waits
  }
  void free_event(EventId e) noexcept override { (void)cudaEventDestroy(reinterpret_cast<cudaEvent_t>(e)); }
  void synchronize() override {
    RawDeviceScope scope(device_);
    WICK_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  int device_;
};
// WICK_NO_CUDA_MEMORY_CACHING=1 turns caching off (Note [Block cache], pass-through), for
// memory checkers; read once, when the allocator is made.
bool memory_caching_enabled() {
  const char* v = std::getenv("WICK_NO_CUDA_MEMORY_CACHING");
  return v == nullptr || std::string_view(v) != "1";
}
}  // namespace

struct CachingAllocator::DeviceCache {
  DeviceCache(int device, bool caching) : memory(device), blocks(memory, caching) {}
  CudaDeviceMemory memory;
  BlockCache blocks;
};

CachingAllocator::CachingAllocator() : device_count_(device_count()) {
  caches_ = std::make_unique<std::unique_ptr<DeviceCache>[]>(static_cast<size_t>(std::max(device_count_, 1)));
  const bool caching = memory_caching_enabled();
  for (int d = 0; d < device_count_; ++d) caches_[static_cast<size_t>(d)] = std::make_unique<DeviceCache>(d, caching);
}

// Never runs for the process-wide instance (see the_caching_allocator()).
CachingAllocator::~CachingAllocator() = default;

CachingAllocator& the_caching_allocator() {
  static CachingAllocator* a = new CachingAllocator();
  return *a;
}

CachingAllocator::DeviceCache& CachingAllocator::cache(int device) const {
  return *caches_[static_cast<size_t>(device)];
}

void* CachingAllocator::allocate(size_t bytes, Device device) {
  if (bytes == 0) return nullptr;
  WICK_CHECK(device.is_cuda(), "CachingAllocator::allocate: {} is not a CUDA device", device);
  check_device_index(device.index);
  const int d = device.index;
  const cudaStream_t stream = detail::current_raw_stream(d);
  DeviceCache& c = cache(d);
  void* p = c.blocks.allocate(bytes, reinterpret_cast<BlockCache::StreamId>(stream));
  if (p) return p;
  size_t free_b = 0, total_b = 0;
  {
    RawDeviceScope scope(d);
    (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
  }
  const MemoryStats st = c.blocks.stats();
  throw OutOfMemoryError(fmt::format(
      "CUDA out of memory on cuda:{}: tried to allocate {} ({} bytes, a segment of {}) while tensors hold {} there "
      "and wick's cache holds {} more that could not be reused; the driver reports {} free of {}. Free tensors you "
      "no longer need (or their references), or use smaller batches.",
      d, human_bytes(static_cast<int64_t>(bytes)), bytes,
      human_bytes(
          static_cast<int64_t>(c.blocks.caching() ? BlockCache::segment_size(BlockCache::round_size(bytes)) : bytes)),
      human_bytes(st.in_use), human_bytes(st.reserved - st.in_use), human_bytes(static_cast<int64_t>(free_b)),
      human_bytes(static_cast<int64_t>(total_b))));
}

void CachingAllocator::deallocate(void* p, size_t, Device device) noexcept {
  if (!p || device.index < 0 || device.index >= device_count_) return;
  cache(device.index).blocks.free(p);
}

void CachingAllocator::record_stream(void* base, int device, cudaStream_t stream) {
  check_device_index(device);
  WICK_CHECK(cache(device).blocks.record_stream(base, reinterpret_cast<BlockCache::StreamId>(stream)),
             "record_stream: the tensor's memory was not allocated by wick's CUDA caching allocator on cuda:{}",
             device);
}

MemoryStats CachingAllocator::stats(Device device) const {
  check_device_index(device.index);
  return cache(device.index).blocks.stats();
}

void CachingAllocator::reset_peak(Device device) {
  check_device_index(device.index);
  cache(device.index).blocks.reset_peak();
}

void CachingAllocator::empty_cache(Device device) {
  check_device_index(device.index);
  cache(device.index).blocks.empty_cache();
}

// ---- the public memory API (wick/cuda/memory.h) ----

Allocator& caching_allocator() { return the_caching_allocator(); }

MemoryStats memory_stats(int index) { return the_caching_allocator().stats(Device(DeviceType::CUDA, index)); }

void reset_peak_memory_stats(int index) { the_caching_allocator().reset_peak(Device(DeviceType::CUDA, index)); }

void release_pinned_cache();  // pinned.cpp

void empty_cache() {
  for (int d = 0; d < device_count(); ++d) the_caching_allocator().empty_cache(Device(DeviceType::CUDA, d));
  if (device_count() > 0) release_pinned_cache();
}

void record_stream(const Tensor& t, Stream s) {
  WICK_CHECK(t.defined() && t.is_cuda(), "record_stream: expected a CUDA tensor, got {}",
             t.defined() ? t.device().str() : std::string("an undefined tensor"));
  WICK_CHECK(s.device() == t.device().index, "record_stream: the stream is on cuda:{} but the tensor is on {}",
             s.device(), t.device());
  void* base = t.impl()->storage->data();
  if (!base) return;
  the_caching_allocator().record_stream(base, s.device(), static_cast<cudaStream_t>(s.handle()));
}

}  // namespace wick::cuda
