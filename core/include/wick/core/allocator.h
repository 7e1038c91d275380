#pragma once
// Allocators and per-device memory accounting.
//
// Every device (cpu:0, cpu:1, ..., cuda:0, ...) keeps its own statistics, so a test can check
// that replicate put its copies where it claimed to. CUDA's caching allocator reports through
// the same API; on both, reserved = in_use + the bytes cached for reuse.
#include <cstddef>
#include <cstdint>

#include "wick/core/device.h"

namespace wick {

struct MemoryStats {
  int64_t in_use = 0;             ///< bytes held by live tensors
  int64_t peak = 0;               ///< max of in_use since the last reset_peak_memory
  int64_t reserved = 0;           ///< bytes held from the system (cache included)
  int64_t allocations = 0;        ///< live allocations
  int64_t total_allocations = 0;  ///< allocations ever made
};

/// Allocates device memory. Implementations are thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns memory for `bytes` bytes on `device` (nullptr for 0 bytes); throws wick::OutOfMemoryError.
  virtual void* allocate(size_t bytes, Device device) = 0;
  /// Returns memory obtained from allocate() with the same size and device.
  virtual void deallocate(void* p, size_t bytes, Device device) noexcept = 0;
  virtual MemoryStats stats(Device device) const = 0;
  virtual void reset_peak(Device device) = 0;
  /// Returns cached, unused memory to the system (CPU: Note [CPU block cache]).
  virtual void empty_cache(Device) {}
};

/// Statistics of one device.
MemoryStats memory_stats(Device device);
/// Sets peak = in_use for one device.
void reset_peak_memory(Device device);
/// Frees the cached blocks of one device (CPU or CUDA).
void empty_cache(Device device);

}  // namespace wick
