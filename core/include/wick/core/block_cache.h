#pragma once
// Note [Block cache]: the bookkeeping of a caching device allocator, with no device API in it.
//
// Reserving device memory (cudaMalloc) is slow and synchronises the device, so a backend keeps
// the memory it reserved and hands it out again. This class is that cache; the device itself is
// reached only through the small DeviceMemory interface, so the whole policy is unit-tested on
// the CPU against a fake device (tests/core/block_cache_test.cpp). CUDA's caching allocator
// (cuda/src/caching_allocator.cpp) is this class over cudaMalloc, cudaFree and CUDA events.
//
// The policy follows PyTorch's CUDA caching allocator:
// - Requests are rounded up to 512-byte multiples (round_size).
// - Two pools: requests up to 1 MiB come from 2 MiB segments ("small"), larger ones from
//   segments of 20 MiB (requests under 10 MiB) or the request rounded up to 2 MiB ("large").
// - Best fit within the pool: the smallest free block of the same stream that is large enough.
//   A block larger than needed is split when the rest is worth keeping (at least 512 bytes in
//   the small pool, more than 1 MiB in the large one); a freed block merges with free neighbours
//   of its segment.
// - Streams: a segment belongs to the stream that was current when it was reserved, and its
//   blocks are reused only by that stream (stream order makes reuse right after a free safe).
//   A block also used on other streams (record_stream) returns to the pool only once events
//   recorded on those streams at its free have completed.
// - Out of memory: first release cached segments just large enough for the request (the
//   smallest single one, else the largest ones until enough), retry; then wait for the device,
//   release every cached segment, retry; then report out of memory (allocate returns nullptr and
//   the backend raises OutOfMemoryError with its own figures).
// - Releasing (empty_cache, OOM recovery) keeps the books right when the device fails midway:
//   a segment leaves the cache only after the device took it back, so nothing freed is ever
//   handed out again (issue: partial release).
// - Pass-through (caching off, as PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING=1; the CUDA backend
//   reads WICK_NO_CUDA_MEMORY_CACHING=1): every allocation reserves exactly the bytes asked for
//   and every free gives them back at once, so a memory checker (compute-sanitizer memcheck)
//   sees each tensor's own bounds instead of a larger cached segment. Slow, for debugging only;
//   it changes no result. The device's release must wait for work still queued on the memory
//   (cudaFree waits for the device), so streams need no events in this mode.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "wick/core/allocator.h"

namespace wick {

/// What a caching allocator needs from a device. Streams and events are opaque handles.
class DeviceMemory {
 public:
  using StreamId = std::uintptr_t;
  using EventId = std::uintptr_t;
  virtual ~DeviceMemory() = default;
  /// Reserves `bytes` of device memory; nullptr when the device is out of memory. Other
  /// failures throw (BackendError).
  virtual void* reserve(size_t bytes) = 0;
  /// Gives back a segment from reserve(). Throws on failure; the segment then stays reserved.
  virtual void release(void* p, size_t bytes) = 0;
  /// Records an event on `stream` now; returns 0 when it cannot.
  virtual EventId record_event(StreamId stream) = 0;
  /// Whether a recorded event has completed.
  virtual bool event_done(EventId e) = 0;
  /// Returns an event to the device once it is no longer needed.
  virtual void free_event(EventId e) noexcept = 0;
  /// Waits for all work queued on the device. Throws on failure.
  virtual void synchronize() = 0;
};

/// The caching bookkeeping of one device (Note [Block cache]). Thread-safe.
class BlockCache {
 public:
  using StreamId = DeviceMemory::StreamId;
  static constexpr size_t kMinBlock = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;  ///< up to this: the small pool
  static constexpr size_t kSmallSegment = size_t{2} << 20;
  static constexpr size_t kMidRequest = size_t{10} << 20;  ///< below this: 20 MiB segments
  static constexpr size_t kMidSegment = size_t{20} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  /// `caching` false: the pass-through mode of the Note.
  explicit BlockCache(DeviceMemory& memory, bool caching = true) : memory_(memory), caching_(caching) {}
  ~BlockCache();  ///< Releases nothing: the owner decides whether the device is still alive.
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /// Memory for `bytes` (> 0) on `stream`, or nullptr when the device is out of memory even
  /// after releasing the cache. Device failures other than out-of-memory throw.
  void* allocate(size_t bytes, StreamId stream);
  /// Returns memory from allocate(); unknown pointers are ignored. Never throws.
  void free(void* p) noexcept;
  /// Marks the block holding `p` as used on `stream` too. False when `p` is not a live block.
  bool record_stream(void* p, StreamId stream);
  /// Waits for the device and gives every fully free segment back. If the device fails midway
  /// the error propagates and the cache keeps exactly the segments not yet given back.
  void empty_cache();

  MemoryStats stats() const;
  void reset_peak();
  /// Number of segments held from the device (tests and diagnostics).
  size_t segment_count() const;
  /// False in the pass-through mode (Note [Block cache]).
  bool caching() const { return caching_; }
  /// The size actually reserved for a request of `bytes`.
  static size_t round_size(size_t bytes);
  /// The segment size reserved for a (rounded) request of `size`.
  static size_t segment_size(size_t size);

 private:
  struct Block {
    char* ptr = nullptr;
    size_t size = 0;
    size_t requested = 0;  // bytes asked for while allocated
    StreamId stream = 0;
    bool small = false;
    bool allocated = false;
    int pending_events = 0;  // > 0: freed but waiting for other streams
    Block* prev = nullptr;   // neighbours in the same segment
    Block* next = nullptr;
    std::vector<StreamId> used_on;
  };
  struct ByStreamSize {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, ByStreamSize>;
  struct PendingEvent {
    DeviceMemory::EventId event;
    Block* block;
  };

  Pool& pool_of(const Block* b) { return b->small ? small_ : large_; }
  Block* find_free(Pool& pool, size_t size, StreamId stream);
  Block* split(Block* b, size_t size);
  void return_to_pool(Block* b);
  void process_events();
  void wait_all_events();
  static std::vector<Block*> whole_segments(const Pool& pool);
  void release_segment(Block* b);  // b spans a whole segment and is free
  bool release_for(Pool& pool, size_t size);
  void release_all();
  Block* reserve_segment(size_t size, StreamId stream, bool small);
  void count_allocation(size_t requested);              // stats of a new live block; mutex_ held
  void count_free(size_t requested);                    // and of its free; mutex_ held
  void* allocate_exact(size_t bytes, StreamId stream);  // pass-through; mutex_ held
  void free_exact(Block* b) noexcept;                   // pass-through; mutex_ held

  DeviceMemory& memory_;
  const bool caching_;
  mutable std::mutex mutex_;
  Pool small_, large_;
  std::unordered_map<void*, Block*> live_;
  std::vector<PendingEvent> events_;
  std::unordered_set<Block*> all_;  // every Block struct, owned here (deleted by the destructor)
  MemoryStats stats_;
  size_t segments_ = 0;
};

}  // namespace wick
