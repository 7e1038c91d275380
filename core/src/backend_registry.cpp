#include <atomic>
#include <mutex>

#include "trace_backend.h"
#include "wick/config.h"
#include "wick/core/backend.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/trace.h"

// Defined by libwick_cuda when it is linked (Note [Backend registration]).
extern "C" void wick_cuda_register_backend() __attribute__((weak));

namespace wick {
namespace cpu {
Backend& cpu_backend();
}

namespace {
std::atomic<Backend*> g_cuda{nullptr};
std::once_flag g_cuda_once;
}  // namespace

void register_backend(DeviceType type, Backend* b) {
  WICK_CHECK(type == DeviceType::CUDA, "register_backend: only the CUDA backend can be registered");
  g_cuda.store(b);
}

namespace {
Backend& untraced_backend(DeviceType type) {
  if (type == DeviceType::CPU) [[likely]]
    return cpu::cpu_backend();
  Backend* b = g_cuda.load(std::memory_order_acquire);
  if (b) return *b;
  std::call_once(g_cuda_once, [] {
    if (wick_cuda_register_backend) wick_cuda_register_backend();
  });
  b = g_cuda.load(std::memory_order_acquire);
  WICK_CHECK_T(DeviceUnavailable, b != nullptr,
               "wick was built without CUDA support: cuda devices cannot be used. Rebuild with the CUDA "
               "toolkit installed (cmake -DWICK_CUDA=ON) to use them.");
  return *b;
}
}  // namespace

Backend& backend(DeviceType type) {
  if (profiler::enabled()) [[unlikely]]  // Note [Tracer]: the one branch per primitive when off
    return profiler::detail::traced_backend(type, untraced_backend(type));
  return untraced_backend(type);
}

MemoryStats memory_stats(Device device) { return backend(device).allocator().stats(device); }
void reset_peak_memory(Device device) { backend(device).allocator().reset_peak(device); }
void empty_cache(Device device) { backend(device).allocator().empty_cache(device); }

DeviceGuard::DeviceGuard(Device d) {
  if (d.is_cpu()) {
    prev_ = detail::exchange_current_cpu_device(d);
    cpu_ = true;
    return;
  }
  Backend& b = backend(d);
  prev_ = b.current_device();
  if (prev_ != d) b.set_device(d);
  active_ = true;
}

DeviceGuard::~DeviceGuard() {
  if (cpu_) detail::exchange_current_cpu_device(prev_);
  if (active_) {
    try {
      backend(prev_).set_device(prev_);
    } catch (...) {
    }
  }
}

CurrentStreamScope::CurrentStreamScope(Device d, uintptr_t stream) : device_(d) {
  if (d.is_cpu()) return;
  Backend& b = backend(d);
  prev_ = b.current_stream(d);
  if (prev_ == stream) return;
  b.set_current_stream(d, stream);
  active_ = true;
}

CurrentStreamScope::~CurrentStreamScope() {
  if (!active_) return;
  try {
    backend(device_).set_current_stream(device_, prev_);
  } catch (...) {
  }
}

}  // namespace wick
