#pragma once
// Storage: one allocation plus the device and allocator it came from.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "wick/core/allocator.h"
#include "wick/core/device.h"

namespace wick {

/// The version counter shared by a tensor and its views; bumped by every in-place write.
/// Autograd compares it with the version a saved tensor had when it was saved.
struct VersionCounter {
  std::atomic<uint32_t> value{0};
};

class Storage {
 public:
  /// Allocates `nbytes` on `device` through that device type's allocator.
  Storage(size_t nbytes, Device device);
  /// Wraps memory the caller owns; `deleter` (may be empty) runs when the storage dies.
  Storage(void* data, size_t nbytes, Device device, void (*deleter)(void*, void*), void* ctx);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// A counter for tensors created fresh on this storage (views share it; see
  /// Note [Version counters] in docs/tensors.md).
  VersionCounter& default_version() const { return version_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;
  void (*deleter_)(void*, void*) = nullptr;
  void* deleter_ctx_ = nullptr;
  mutable VersionCounter version_;  // counted on through const tensors' views too
};

}  // namespace wick
