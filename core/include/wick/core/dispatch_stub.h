#pragma once
// DispatchStub: one entry point per fused kernel, filled per device type by the backends that
// have one (Note [Dispatch stubs]).
//
// Note [Dispatch stubs]
// Backend (backend.h) holds the primitives every backend must provide. A fused kernel that only
// some backends have (log_softmax along rows today) is a DispatchStub instead: a table from
// DeviceType to a plain function pointer. Adding one costs a stub declaration (core/include/
// wick/core/stubs.h), the kernel, and one `set` line where the backend registers itself
// (cpu_backend() for the CPU, wick_cuda_register_backend() for CUDA); no Backend method, no
// forwarding in the tracer, no "return false" in the backends without it. The kernel's math is
// a shared functor (Note [Math written once]), so a backend's entry is only its loop or launch.
// A front-end asks `find(type)`: nullptr means "no fused kernel here", and it takes its
// composite path (the reference the fused kernel is tested against). Every tensor on a device
// type exists only after backend(type) set that backend up, so its entries are in place by then.
// Under a trace (Note [Tracer]) a call through operator() is an "op" event named "stub:<name>".
#include <array>
#include <atomic>
#include <utility>

#include "wick/core/device.h"
#include "wick/core/error.h"
#include "wick/core/trace.h"

namespace wick {

/// One slot per possible device type, registered ones included (Note [Device registry]).
inline constexpr size_t kDeviceTypeCount = kMaxDeviceTypes;

template <typename Fn>
class DispatchStub;

template <typename R, typename... Args>
class DispatchStub<R (*)(Args...)> {
 public:
  using Fn = R (*)(Args...);
  explicit constexpr DispatchStub(const char* name) : name_(name) {}
  DispatchStub(const DispatchStub&) = delete;
  DispatchStub& operator=(const DispatchStub&) = delete;

  /// The op's name ("log_softmax_rows").
  const char* name() const { return name_; }
  /// Installs (or replaces) `type`'s kernel. Thread-safe.
  void set(DeviceType type, Fn fn) {
    WICK_CHECK(slot(type) < kDeviceTypeCount, "{}: device type {} has no stub slot", name_, static_cast<int>(type));
    table_[slot(type)].store(fn, std::memory_order_release);
  }
  /// `type`'s kernel, or nullptr when that backend has none.
  Fn find(DeviceType type) const {
    return slot(type) < kDeviceTypeCount ? table_[slot(type)].load(std::memory_order_acquire) : nullptr;
  }
  /// Calls `type`'s kernel; NotImplementedError naming the op and the device type when there is
  /// none (callers with a composite path use find() instead).
  R operator()(DeviceType type, Args... args) const {
    const Fn fn = find(type);
    WICK_CHECK_T(NotImplementedError, fn != nullptr,
                 "{}: no {} kernel is registered; use a device type that has one or the op's composite path", name_,
                 device_type_name(type));
    profiler::RecordScope scope = profiler::RecordScope::named("op", [&] { return std::string("stub:") + name_; });
    return fn(std::forward<Args>(args)...);
  }

 private:
  static size_t slot(DeviceType type) { return static_cast<size_t>(static_cast<uint8_t>(type)); }
  const char* name_;
  std::array<std::atomic<Fn>, kDeviceTypeCount> table_{};
};

}  // namespace wick
