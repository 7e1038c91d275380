// The caching allocator's bookkeeping (Note [Block cache] in wick/core/block_cache.h).
#include "wick/core/block_cache.h"

#include <algorithm>
#include <tuple>

namespace wick {

bool BlockCache::ByStreamSize::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

BlockCache::~BlockCache() {
  for (Block* b : all_) delete b;
  for (const PendingEvent& e : events_) memory_.free_event(e.event);
}

size_t BlockCache::round_size(size_t bytes) {
  if (bytes < kMinBlock) return kMinBlock;
  return kMinBlock * ((bytes + kMinBlock - 1) / kMinBlock);
}

size_t BlockCache::segment_size(size_t size) {
  if (size <= kSmallRequest) return kSmallSegment;
  if (size < kMidRequest) return kMidSegment;
  return kLargeRound * ((size + kLargeRound - 1) / kLargeRound);
}

BlockCache::Block* BlockCache::find_free(Pool& pool, size_t size, StreamId stream) {
  Block key;
  key.stream = stream;
  key.size = size;
  key.ptr = nullptr;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

// Cuts `b` (free, out of its pool) to `size` when the rest is worth keeping; the rest goes back
// to the pool. Returns b.
BlockCache::Block* BlockCache::split(Block* b, size_t size) {
  const size_t rest = b->size - size;
  const bool worth = b->small ? rest >= kMinBlock : rest > kSmallRequest;
  if (!worth) return b;
  auto* r = new Block();
  all_.insert(r);
  r->ptr = b->ptr + size;
  r->size = rest;
  r->stream = b->stream;
  r->small = b->small;
  r->prev = b;
  r->next = b->next;
  if (r->next) r->next->prev = r;
  b->next = r;
  b->size = size;
  pool_of(r).insert(r);
  return b;
}

// A freed block with no pending events: merge with free neighbours, back into its pool.
void BlockCache::return_to_pool(Block* b) {
  Pool& pool = pool_of(b);
  auto mergeable = [](const Block* n) { return n && !n->allocated && n->pending_events == 0; };
  if (mergeable(b->prev)) {
    Block* p = b->prev;
    pool.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (p->next) p->next->prev = p;
    all_.erase(b);
    delete b;
    b = p;
  }
  if (mergeable(b->next)) {
    Block* n = b->next;
    pool.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (b->next) b->next->prev = b;
    all_.erase(n);
    delete n;
  }
  pool.insert(b);
}

void BlockCache::process_events() {
  for (size_t i = 0; i < events_.size();) {
    if (!memory_.event_done(events_[i].event)) {
      ++i;
      continue;
    }
    memory_.free_event(events_[i].event);
    Block* b = events_[i].block;
    events_[i] = events_.back();
    events_.pop_back();
    if (--b->pending_events == 0) return_to_pool(b);
  }
}

// After memory_.synchronize(): every event has completed.
void BlockCache::wait_all_events() {
  std::vector<PendingEvent> done;
  done.swap(events_);
  for (const PendingEvent& e : done) {
    memory_.free_event(e.event);
    if (--e.block->pending_events == 0) return_to_pool(e.block);
  }
}

// The free blocks of `pool` that span a whole segment (the only ones that can go back).
std::vector<BlockCache::Block*> BlockCache::whole_segments(const Pool& pool) {
  std::vector<Block*> whole;
  for (Block* b : pool)
    if (!b->prev && !b->next) whole.push_back(b);
  return whole;
}

void BlockCache::release_segment(Block* b) {
  memory_.release(b->ptr, b->size);  // throws: b stays cached and counted
  pool_of(b).erase(b);
  stats_.reserved -= static_cast<int64_t>(b->size);
  --segments_;
  all_.erase(b);
  delete b;
}

// Releases cached whole segments of `pool` totalling at least `size`: the smallest single
// segment that is large enough, else the largest ones until enough. False if not possible.
bool BlockCache::release_for(Pool& pool, size_t size) {
  std::vector<Block*> whole = whole_segments(pool);
  std::sort(whole.begin(), whole.end(), [](const Block* a, const Block* b) { return a->size < b->size; });
  auto fit = std::find_if(whole.begin(), whole.end(), [&](const Block* b) { return b->size >= size; });
  if (fit != whole.end()) {
    release_segment(*fit);
    return true;
  }
  size_t total = 0;
  for (Block* b : whole) total += b->size;
  if (total < size) return false;
  size_t freed = 0;
  while (freed < size) {
    Block* b = whole.back();
    whole.pop_back();
    freed += b->size;
    release_segment(b);
  }
  return true;
}

void BlockCache::release_all() {
  for (Pool* pool : {&small_, &large_})
    for (Block* b : whole_segments(*pool)) release_segment(b);
}

BlockCache::Block* BlockCache::reserve_segment(size_t size, StreamId stream, bool small) {
  const size_t seg = segment_size(size);
  void* p = memory_.reserve(seg);
  if (!p) {
    // Release just enough of the cache, then everything, retrying after each.
    if (release_for(small ? small_ : large_, seg)) p = memory_.reserve(seg);
    if (!p) {
      memory_.synchronize();
      wait_all_events();
      release_all();
      p = memory_.reserve(seg);
    }
    if (!p) return nullptr;
  }
  auto* b = new Block();
  all_.insert(b);
  b->ptr = static_cast<char*>(p);
  b->size = seg;
  b->stream = stream;
  b->small = small;
  stats_.reserved += static_cast<int64_t>(seg);
  ++segments_;
  return b;
}

void BlockCache::count_allocation(size_t requested) {
  stats_.in_use += static_cast<int64_t>(requested);
  stats_.peak = std::max(stats_.peak, stats_.in_use);
  stats_.allocations += 1;
  stats_.total_allocations += 1;
}

void BlockCache::count_free(size_t requested) {
  stats_.in_use -= static_cast<int64_t>(requested);
  stats_.allocations -= 1;
}

void* BlockCache::allocate_exact(size_t bytes, StreamId stream) {
  void* p = memory_.reserve(bytes);
  if (!p) return nullptr;
  Block* b = nullptr;
  try {
    b = new Block();
    all_.insert(b);
    live_.emplace(p, b);
  } catch (...) {  // out of host memory: give the device memory back and report it
    if (b) all_.erase(b);
    delete b;
    try {
      memory_.release(p, bytes);
    } catch (...) {
    }
    throw;
  }
  b->ptr = static_cast<char*>(p);
  b->size = bytes;
  b->requested = bytes;
  b->stream = stream;
  b->allocated = true;
  stats_.reserved += static_cast<int64_t>(bytes);
  ++segments_;
  count_allocation(bytes);
  return p;
}

void BlockCache::free_exact(Block* b) noexcept {
  b->allocated = false;
  count_free(b->requested);
  try {
    memory_.release(b->ptr, b->size);
  } catch (...) {
    return;  // the device kept it: it stays reserved and is never handed out again
  }
  stats_.reserved -= static_cast<int64_t>(b->size);
  --segments_;
  all_.erase(b);
  delete b;
}

void* BlockCache::allocate(size_t bytes, StreamId stream) {
  if (bytes == 0) return nullptr;
  if (!caching_) {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocate_exact(bytes, stream);
  }
  const size_t size = round_size(bytes);
  const bool small = size <= kSmallRequest;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!events_.empty()) process_events();
  Block* b = find_free(small ? small_ : large_, size, stream);
  if (!b) b = reserve_segment(size, stream, small);
  if (!b) return nullptr;
  b = split(b, size);
  b->allocated = true;
  b->requested = bytes;
  b->used_on.clear();
  live_.emplace(b->ptr, b);
  count_allocation(bytes);
  return b->ptr;
}

void BlockCache::free(void* p) noexcept {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(p);
  if (it == live_.end()) return;
  Block* b = it->second;
  live_.erase(it);
  if (!caching_) {
    free_exact(b);
    return;
  }
  b->allocated = false;
  count_free(b->requested);
  b->requested = 0;
  for (StreamId s : b->used_on) {
    const DeviceMemory::EventId e = memory_.record_event(s);
    if (e == 0) {
      // Cannot tell when `s` is done with the block: wait for the whole device instead. If even
      // that fails the block stays out of the cache for good (held, never handed out again).
      try {
        memory_.synchronize();
      } catch (...) {
        b->pending_events += 1;  // never completes
        return;
      }
      continue;
    }
    try {
      events_.push_back({e, b});
    } catch (...) {  // out of host memory: the block stays out of the cache
      memory_.free_event(e);
      b->pending_events += 1;
      return;
    }
    b->pending_events += 1;
  }
  b->used_on.clear();
  if (b->pending_events == 0) return_to_pool(b);
}

bool BlockCache::record_stream(void* p, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(p);
  if (it == live_.end()) return false;
  Block* b = it->second;
  if (stream != b->stream && std::find(b->used_on.begin(), b->used_on.end(), stream) == b->used_on.end())
    b->used_on.push_back(stream);
  return true;
}

void BlockCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!events_.empty()) {
    memory_.synchronize();
    wait_all_events();
  }
  release_all();
}

MemoryStats BlockCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BlockCache::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak = stats_.in_use;
}

size_t BlockCache::segment_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return segments_;
}

}  // namespace wick
