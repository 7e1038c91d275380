#include "cpu/cpu_allocator.h"

#include <bit>
#include <cstdint>
#include <cstdlib>

#include "wick/core/error.h"

namespace wick::cpu {

namespace {
// Note [CPU block cache]
// Every freed block goes back to its device's cache, in one of SizeClass's classes (64-byte steps
// to 512 bytes, then four classes per power of two, so a block is at most 25% larger than
// asked for), and the next request of that class on that device takes it back. A steady-state
// loop (a training step, replicate every step) then reuses warm pages and calls neither malloc nor
// free: a freshly mapped page costs about as much as copying into it, and glibc maps blocks of
// 128 KiB and up afresh on every malloc and returns its heap's top to the system on free. The
// cache used to keep only blocks of 64 KiB and up (1 MiB before that); an MLP step at batch 64
// still faulted in pages on every step (15% of its time in perf), because glibc trimmed the
// smaller blocks' heap.
// Each device's cache has its own mutex: the device threads of a backward, the replicas of
// DataParallel and the optimizer free from several threads at once. At most 2 GiB (all CPU
// devices together) is cached; past it blocks go back to malloc. empty_cache(device) frees a
// device's blocks; reserved = in_use + cached. The cache changes no result: a block is
// uninitialised memory either way. It is off under AddressSanitizer, which must see every free
// to catch use-after-free and leaks.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheEnabled = false;
#else
constexpr bool kCacheEnabled = true;
#endif
constexpr int64_t kCacheLimit = int64_t{2} << 30;
constexpr size_t kLargestCached = size_t{1} << 60;  // larger requests fail in malloc anyway
constexpr size_t kHeader = 63 + sizeof(void*);      // alignment slack and the malloc pointer

// Device::index is an int16 and may be negative when built from an int (Device(kCPU-type, -1));
// it indexes the counters, so it must be checked before any use.
void check_index(Device device) {
  WICK_CHECK(device.index >= 0, "allocate: invalid CPU device {}: the index must be in [0, 32767]", device);
}

void free_block(void* p) { std::free(static_cast<void**>(p)[-1]); }  // the malloc'ed pointer

// Note [CPU thread caches]
// In front of each device's cache (and its mutex) every thread keeps a few small blocks of its
// own: up to kThreadDepth blocks of each class up to 16 KiB, for cpu:0 to cpu:3. A small op (a
// 1-element add, a 64x64 one) frees its previous output and allocates the next one on the same
// thread, so it reuses a block without a lock; perf put the mutex and the shared lists at over a
// third of a 1-element add. Blocks held by a thread count as cached in the device's statistics,
// as the shared ones do. A thread's blocks go to the shared cache when the thread exits, and
// empty_cache frees the calling thread's blocks with the shared ones; other live threads keep
// theirs (at most about 0.4 MiB per thread and device). The storage is a trivially destructible
// thread_local, so a free that comes after the thread's flush (another thread_local's
// destructor) still finds it, sees it closed, and uses the shared cache.
// The same thread also keeps its share of the device's statistics: the bytes of the blocks it
// holds, and how many allocations and frees it made. Only it writes them (plain loads and
// stores, not locked read-modify-writes: an allocate/free pair used to make seven of those,
// a fifth of a 1-element add); stats() adds up every open thread's figures under the list's
// mutex, and a thread that exits folds its figures into the device's shared counters under the
// same mutex, so no allocation is counted twice or missed. in_use stays one shared counter:
// peak is its maximum over time, which no per-thread figure can give.
constexpr int kThreadDevices = 4;
constexpr int kThreadClasses = 28;  // SizeClass::index(16384) == 27
constexpr int kThreadDepth = 4;

}  // namespace

// One thread's share of a device's statistics (Note [CPU thread caches]). Only the owning thread
// writes; stats() reads from other threads, hence atomics, updated without read-modify-writes.
struct ThreadCounters {
  std::atomic<int64_t> held{0};       // bytes of the blocks the thread holds (cached)
  std::atomic<int64_t> allocated{0};  // allocations made by the thread
  std::atomic<int64_t> freed{0};      // frees made by the thread
};

struct ThreadBlocks {
  enum State : uint8_t { kUnused, kOpen, kClosed };
  State state = kUnused;
  CpuAllocator* owner = nullptr;  // the allocator whose blocks these are (the first to use this thread)
  ThreadBlocks* prev = nullptr;   // the owner's list of open threads
  ThreadBlocks* next = nullptr;
  ThreadCounters counters[kThreadDevices];
  uint8_t count[kThreadDevices][kThreadClasses] = {};
  void* blocks[kThreadDevices][kThreadClasses][kThreadDepth] = {};
};

// Hands the thread's blocks to the shared cache when the thread finishes (Note [CPU thread
// caches]); it only returns memory and folds counts, whatever happens.
struct ThreadBlocksFlusher {
  ~ThreadBlocksFlusher() noexcept;  // retire_thread never throws: the process never ends here
};

namespace {
// Constant-initialised and trivially destructible: reached without a TLS init call, and still
// readable after the flusher ran.
thread_local ThreadBlocks t_blocks;
thread_local ThreadBlocksFlusher t_flusher;

// Adds `delta` to a counter that only the calling thread writes.
void bump(std::atomic<int64_t>& counter, int64_t delta) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}
}  // namespace

// The thread's blocks and counters for this allocator, or nullptr when this thread cannot keep
// any (exiting, or already serving another allocator).
ThreadBlocks* CpuAllocator::thread_blocks() noexcept {
  ThreadBlocks& t = t_blocks;
  if (t.state == ThreadBlocks::kUnused) {
    (void)&t_flusher;  // constructs the flusher: its destructor runs at thread exit
    t.owner = this;
    std::lock_guard<std::mutex> lock(threads_mutex_);
    t.next = threads_;
    if (threads_) threads_->prev = &t;
    threads_ = &t;
    t.state = ThreadBlocks::kOpen;
  }
  return t.state == ThreadBlocks::kOpen && t.owner == this ? &t : nullptr;
}

ThreadBlocksFlusher::~ThreadBlocksFlusher() noexcept {
  ThreadBlocks& t = t_blocks;
  if (t.state == ThreadBlocks::kOpen) t.owner->retire_thread(t);
  t.state = ThreadBlocks::kClosed;
}

void CpuAllocator::retire_thread(ThreadBlocks& t) noexcept {
  for (int d = 0; d < kThreadDevices; ++d) drain_thread_blocks(t, d, true);
  std::lock_guard<std::mutex> lock(threads_mutex_);
  t.state = ThreadBlocks::kClosed;
  (t.prev ? t.prev->next : threads_) = t.next;
  if (t.next) t.next->prev = t.prev;
  for (int d = 0; d < kThreadDevices; ++d) {
    ThreadCounters& tc = t.counters[d];
    const int64_t allocated = tc.allocated.load(std::memory_order_relaxed);
    const int64_t freed = tc.freed.load(std::memory_order_relaxed);
    counters_[d].total.fetch_add(allocated, std::memory_order_relaxed);
    counters_[d].allocations.fetch_add(allocated - freed, std::memory_order_relaxed);
    tc.allocated.store(0, std::memory_order_relaxed);
    tc.freed.store(0, std::memory_order_relaxed);
  }
}

int SizeClass::index(size_t bytes) {
  if (bytes <= 512) return static_cast<int>((bytes + 63) / 64) - 1;
  const int k = static_cast<int>(std::bit_width(bytes - 1)) - 1;  // 2^k < bytes <= 2^(k+1), k >= 9
  const size_t step = size_t{1} << (k - 2);
  const size_t j = (bytes - (size_t{1} << k) + step - 1) / step;  // 1..4
  return 8 + (k - 9) * 4 + static_cast<int>(j) - 1;
}

size_t SizeClass::bytes(int i) {
  if (i < 8) return static_cast<size_t>(i + 1) * 64;
  const int k = 9 + (i - 8) / 4;
  const size_t j = static_cast<size_t>((i - 8) % 4 + 1);
  return (size_t{1} << k) + j * (size_t{1} << (k - 2));
}

CpuAllocator::CpuAllocator()
    : counters_(std::make_unique<Counters[]>(32768)), caches_(std::make_unique<std::atomic<DeviceCache*>[]>(32768)) {}

CpuAllocator::~CpuAllocator() {
  for (int i = 0; i < 32768; ++i) {
    DeviceCache* c = caches_[i].load();
    if (!c) continue;
    for (auto& blocks : c->blocks)
      for (void* p : blocks) free_block(p);
    delete c;
  }
}

CpuAllocator::DeviceCache* CpuAllocator::cache_for(int index, bool create) {
  DeviceCache* c = caches_[index].load(std::memory_order_acquire);
  if (c || !create) return c;
  auto fresh = std::make_unique<DeviceCache>();
  if (caches_[index].compare_exchange_strong(c, fresh.get(), std::memory_order_acq_rel)) return fresh.release();
  return c;  // another thread created it first
}

void* CpuAllocator::allocate(size_t bytes, Device device) {
  check_index(device);
  if (bytes == 0) return nullptr;
  const int index = device.index;
  WICK_CHECK_T(OutOfMemoryError, bytes <= kLargestCached, "allocate: out of memory on {} asking for {} bytes", device,
               bytes);
  ThreadBlocks* t = index < kThreadDevices ? thread_blocks() : nullptr;
  // Note [CPU allocation]: aligned_alloc/memalign bypass glibc's per-thread cache (tcache) and
  // cost ~500 instructions per call, more than the rest of a small op. So over-allocate with
  // malloc, align by hand to 64 bytes, and keep malloc's pointer just below the block.
  const int cls = kCacheEnabled ? SizeClass::index(bytes) : -1;
  void* p = nullptr;
  if (cls >= 0) {
    if (t) p = take_from_thread(*t, cls, index);
    if (!p) p = take_cached(cls, index);
  }
  if (!p) {
    const size_t block = cls >= 0 ? SizeClass::bytes(cls) : bytes;  // Note [CPU block cache]
    void* raw = std::malloc(block + kHeader);
    if (raw) {
      const uintptr_t aligned = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + 63) & ~uintptr_t{63};
      p = reinterpret_cast<void*>(aligned);
      static_cast<void**>(p)[-1] = raw;
    }
  }
  auto& c = counters_[index];
  WICK_CHECK_T(OutOfMemoryError, p != nullptr,
               "allocate: out of memory on {} asking for {} bytes ({} bytes in use there)", device, bytes,
               c.in_use.load());
  int64_t now =
      c.in_use.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) + static_cast<int64_t>(bytes);
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (now > peak && !c.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  if (t) {
    bump(t->counters[index].allocated, 1);  // Note [CPU thread caches]
  } else {
    c.allocations.fetch_add(1, std::memory_order_relaxed);
    c.total.fetch_add(1, std::memory_order_relaxed);
  }
  return p;
}

void CpuAllocator::deallocate(void* p, size_t bytes, Device device) noexcept {
  if (!p) return;
  const int index = device.index;
  ThreadBlocks* t = index < kThreadDevices ? thread_blocks() : nullptr;
  if (kCacheEnabled) {
    const int cls = SizeClass::index(bytes);
    if (!(t && give_to_thread(*t, p, cls, index)) && !give_to_cache(p, cls, index)) free_block(p);
  } else {
    free_block(p);
  }
  auto& c = counters_[index];
  c.in_use.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (t)
    bump(t->counters[index].freed, 1);
  else
    c.allocations.fetch_sub(1, std::memory_order_relaxed);
}

MemoryStats CpuAllocator::stats(Device device) const {
  check_index(device);
  auto& c = counters_[device.index];
  MemoryStats s;
  // Under the mutex, so that a thread folding its figures in at exit is counted exactly once.
  std::lock_guard<std::mutex> lock(threads_mutex_);
  s.in_use = c.in_use.load();
  s.peak = c.peak.load();
  int64_t cached = c.cached.load();
  s.allocations = c.allocations.load();
  s.total_allocations = c.total.load();
  if (device.index < kThreadDevices) {
    for (const ThreadBlocks* t = threads_; t; t = t->next) {
      const ThreadCounters& tc = t->counters[device.index];
      const int64_t allocated = tc.allocated.load(std::memory_order_relaxed);
      cached += tc.held.load(std::memory_order_relaxed);
      s.allocations += allocated - tc.freed.load(std::memory_order_relaxed);
      s.total_allocations += allocated;
    }
  }
  s.reserved = s.in_use + cached;
  return s;
}

void CpuAllocator::reset_peak(Device device) {
  check_index(device);
  auto& c = counters_[device.index];
  c.peak.store(c.in_use.load());
}

void* CpuAllocator::take_cached(int cls, int index) {
  DeviceCache* cache = cache_for(index, false);
  if (!cache) return nullptr;
  const int64_t size = static_cast<int64_t>(SizeClass::bytes(cls));
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache->mutex);
    auto& blocks = cache->blocks[cls];
    if (blocks.empty()) return nullptr;
    p = blocks.back();
    blocks.pop_back();
  }
  cached_total_.fetch_sub(size, std::memory_order_relaxed);
  counters_[index].cached.fetch_sub(size, std::memory_order_relaxed);
  return p;
}

bool CpuAllocator::give_to_cache(void* p, int cls, int index) noexcept {
  const int64_t size = static_cast<int64_t>(SizeClass::bytes(cls));
  if (cached_total_.fetch_add(size, std::memory_order_relaxed) + size > kCacheLimit) {
    cached_total_.fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  try {
    DeviceCache* cache = cache_for(index, true);
    std::lock_guard<std::mutex> lock(cache->mutex);
    cache->blocks[cls].push_back(p);
  } catch (...) {  // bad_alloc growing the list: free the block instead
    cached_total_.fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  counters_[index].cached.fetch_add(size, std::memory_order_relaxed);
  return true;
}

void* CpuAllocator::take_from_thread(ThreadBlocks& t, int cls, int index) noexcept {
  if (cls >= kThreadClasses) return nullptr;
  uint8_t& n = t.count[index][cls];
  if (n == 0) return nullptr;
  bump(t.counters[index].held, -static_cast<int64_t>(SizeClass::bytes(cls)));
  return t.blocks[index][cls][--n];
}

bool CpuAllocator::give_to_thread(ThreadBlocks& t, void* p, int cls, int index) noexcept {
  if (cls >= kThreadClasses) return false;
  uint8_t& n = t.count[index][cls];
  if (n == kThreadDepth) return false;
  t.blocks[index][cls][n++] = p;
  bump(t.counters[index].held, static_cast<int64_t>(SizeClass::bytes(cls)));
  return true;
}

void CpuAllocator::drain_thread_blocks(ThreadBlocks& t, int index, bool to_shared_cache) noexcept {
  for (int cls = 0; cls < kThreadClasses; ++cls)
    for (uint8_t& n = t.count[index][cls]; n > 0;) {
      void* p = t.blocks[index][cls][--n];
      bump(t.counters[index].held, -static_cast<int64_t>(SizeClass::bytes(cls)));
      if (!to_shared_cache || !give_to_cache(p, cls, index)) free_block(p);
    }
}

void CpuAllocator::empty_cache(Device device) {
  check_index(device);
  // The calling thread's own blocks first (Note [CPU thread caches]).
  if (ThreadBlocks& t = t_blocks; t.state == ThreadBlocks::kOpen && t.owner == this && device.index < kThreadDevices)
    drain_thread_blocks(t, device.index, false);
  DeviceCache* cache = cache_for(device.index, false);
  if (!cache) return;
  int64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(cache->mutex);
    for (int cls = 0; cls < SizeClass::kCount; ++cls) {
      auto& blocks = cache->blocks[cls];
      bytes += static_cast<int64_t>(SizeClass::bytes(cls) * blocks.size());
      for (void* p : blocks) free_block(p);
      std::vector<void*>().swap(blocks);
    }
  }
  cached_total_.fetch_sub(bytes, std::memory_order_relaxed);
  counters_[device.index].cached.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace wick::cpu
