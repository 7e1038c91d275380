// The CUDA caching allocator (Note [Caching allocator] in caching_allocator.h and docs/cuda.md).
#include "caching_allocator.h"

#include <algorithm>

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
}  // namespace

CachingAllocator::CachingAllocator()
    : caches_(std::make_unique<DeviceCache[]>(static_cast<size_t>(std::max(device_count(), 1)))),
      device_count_(device_count()) {}

// Never runs for the process-wide instance (see the_caching_allocator()).
CachingAllocator::~CachingAllocator() = default;

CachingAllocator& the_caching_allocator() {
  static CachingAllocator* a = new CachingAllocator();
  return *a;
}

size_t CachingAllocator::round_size(size_t bytes) {
  constexpr size_t kSmallStep = 512;
  constexpr size_t kLarge = size_t{1} << 20;
  if (bytes <= kSmallStep) return kSmallStep;
  if (bytes < kLarge) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  // 8 buckets per power of two: at most 12.5% waste.
  int k = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const size_t step = (size_t{1} << k) / 8;
  return (bytes + step - 1) / step * step;
}

CachingAllocator::DeviceCache& CachingAllocator::cache(int device) const {
  return caches_[static_cast<size_t>(device)];
}

cudaEvent_t CachingAllocator::get_event(DeviceCache& c) {
  if (!c.event_pool.empty()) {
    cudaEvent_t e = c.event_pool.back();
    c.event_pool.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return e;
}

void CachingAllocator::release_events(DeviceCache& c, Block& b) {
  for (auto& se : b.events) c.event_pool.push_back(se.second);
  b.events.clear();
}

void CachingAllocator::note_stream(DeviceCache& c, cudaStream_t stream) {
  if (c.multi_stream) return;
  if (c.streams_seen.empty()) {
    c.streams_seen.push_back(stream);
    return;
  }
  if (c.streams_seen.front() == stream) return;
  // A second stream appears: from now on every free records an event. Blocks freed before now
  // get one recorded now, which their stream reaches only after it passed their free.
  c.multi_stream = true;
  for (auto& [size, blocks] : c.free) {
    for (auto& b : blocks) {
      if (!b->events.empty()) continue;
      cudaEvent_t e = get_event(c);
      if (e && cudaEventRecord(e, b->stream) == cudaSuccess) {
        b->events.emplace_back(b->stream, e);
      } else {
        (void)cudaGetLastError();
        if (e) c.event_pool.push_back(e);
      }
    }
  }
}

bool CachingAllocator::usable_by(DeviceCache& c, Block& b, cudaStream_t stream) {
  bool own_stream_covered = b.stream == stream;
  for (auto& [s, e] : b.events) {
    if (s == b.stream) own_stream_covered = true;
    if (s == stream) continue;  // work on `stream` is ordered after the free already
    const cudaError_t q = cudaEventQuery(e);
    if (q == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    if (q != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
  }
  return own_stream_covered;
}

std::unique_ptr<CachingAllocator::Block> CachingAllocator::take_free_block(DeviceCache& c, size_t size,
                                                                           cudaStream_t stream) {
  auto it = c.free.find(size);
  if (it == c.free.end() || it->second.empty()) return nullptr;
  auto& v = it->second;
  auto take = [&](size_t i) {
    std::unique_ptr<Block> b = std::move(v[i]);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
    release_events(c, *b);
    return b;
  };
  // Newest first: its memory is the most likely to still be in the L2 cache.
  for (size_t i = v.size(); i-- > 0;)
    if (v[i]->stream == stream && usable_by(c, *v[i], stream)) return take(i);
  for (size_t i = v.size(); i-- > 0;)
    if (v[i]->stream != stream && usable_by(c, *v[i], stream)) return take(i);
  return nullptr;
}

void* CachingAllocator::allocate(size_t bytes, Device device) {
  if (bytes == 0) return nullptr;
  WICK_CHECK(device.is_cuda(), "CachingAllocator::allocate: {} is not a CUDA device", device);
  check_device_index(device.index);
  const int d = device.index;
  const size_t size = round_size(bytes);
  const cudaStream_t stream = detail::current_raw_stream(d);
  DeviceCache& c = cache(d);
  CUDAGuard guard(d);
  std::lock_guard<std::mutex> lock(c.mutex);
  note_stream(c, stream);
  std::unique_ptr<Block> b = take_free_block(c, size, stream);
  if (!b) {
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      // Give the cache back to the driver and try once more.
      (void)cudaGetLastError();
      release_cached(c);
      err = cudaMalloc(&p, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      (void)cudaGetLastError();
      throw OutOfMemoryError(fmt::format(
          "CUDA out of memory on cuda:{}: tried to allocate {} ({} bytes) while tensors hold {} there and wick's "
          "cache holds {} more; the driver reports {} free of {}. Free tensors you no longer need (or their "
          "references), or use smaller batches.",
          d, human_bytes(static_cast<int64_t>(bytes)), bytes, human_bytes(c.stats.in_use),
          human_bytes(c.stats.reserved - c.stats.in_use), human_bytes(static_cast<int64_t>(free_b)),
          human_bytes(static_cast<int64_t>(total_b))));
    }
    WICK_CUDA_CHECK(err);
    b = std::make_unique<Block>();
    b->ptr = p;
    b->size = size;
    c.stats.reserved += static_cast<int64_t>(size);
  }
  b->stream = stream;
  b->requested = bytes;
  b->used_on.clear();
  c.stats.in_use += static_cast<int64_t>(bytes);
  c.stats.peak = std::max(c.stats.peak, c.stats.in_use);
  c.stats.allocations += 1;
  c.stats.total_allocations += 1;
  void* p = b->ptr;
  c.live.emplace(p, std::move(b));
  return p;
}

void CachingAllocator::deallocate(void* p, size_t, Device device) noexcept {
  if (!p || device.index < 0 || device.index >= device_count_) return;
  DeviceCache& c = cache(device.index);
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.live.find(p);
  if (it == c.live.end()) return;
  std::unique_ptr<Block> b = std::move(it->second);
  c.live.erase(it);
  c.stats.in_use -= static_cast<int64_t>(b->requested);
  c.stats.allocations -= 1;
  b->requested = 0;
  if (c.multi_stream || !b->used_on.empty()) {
    RawDeviceScope scope(device.index);
    std::vector<cudaStream_t> streams{b->stream};
    for (cudaStream_t s : b->used_on)
      if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
    for (cudaStream_t s : streams) {
      cudaEvent_t e = get_event(c);
      if (!e || cudaEventRecord(e, s) != cudaSuccess) {
        // Cannot tell when the block is safe to reuse: keep it out of the cache (leaked until
        // the process ends) rather than risk handing out memory still in use.
        (void)cudaGetLastError();
        if (e) c.event_pool.push_back(e);
        release_events(c, *b);
        b.release();
        return;
      }
      b->events.emplace_back(s, e);
    }
  }
  const size_t size = b->size;
  c.free[size].push_back(std::move(b));
}

void CachingAllocator::release_cached(DeviceCache& c) {
  for (auto& [size, blocks] : c.free) {
    for (auto& b : blocks) {
      release_events(c, *b);
      // cudaFree waits for the device, so work still reading the block finishes first.
      WICK_CUDA_CHECK(cudaFree(b->ptr));
      c.stats.reserved -= static_cast<int64_t>(b->size);
    }
  }
  c.free.clear();
}

void CachingAllocator::record_stream(void* base, int device, cudaStream_t stream) {
  check_device_index(device);
  DeviceCache& c = cache(device);
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.live.find(base);
  WICK_CHECK(it != c.live.end(),
             "record_stream: the tensor's memory was not allocated by wick's CUDA caching allocator on cuda:{}",
             device);
  Block& b = *it->second;
  if (stream == b.stream) return;
  if (std::find(b.used_on.begin(), b.used_on.end(), stream) == b.used_on.end()) b.used_on.push_back(stream);
}

MemoryStats CachingAllocator::stats(Device device) const {
  check_device_index(device.index);
  DeviceCache& c = cache(device.index);
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.stats;
}

void CachingAllocator::reset_peak(Device device) {
  check_device_index(device.index);
  DeviceCache& c = cache(device.index);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.peak = c.stats.in_use;
}

void CachingAllocator::empty_cache(Device device) {
  check_device_index(device.index);
  DeviceCache& c = cache(device.index);
  CUDAGuard guard(device.index);
  std::lock_guard<std::mutex> lock(c.mutex);
  release_cached(c);
}

// ---- the public memory API (wick/cuda/memory.h) ----

Allocator& caching_allocator() { return the_caching_allocator(); }

MemoryStats memory_stats(int index) { return the_caching_allocator().stats(Device(DeviceType::CUDA, index)); }

void reset_peak_memory_stats(int index) { the_caching_allocator().reset_peak(Device(DeviceType::CUDA, index)); }

void empty_cache() {
  for (int d = 0; d < device_count(); ++d) the_caching_allocator().empty_cache(Device(DeviceType::CUDA, d));
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
