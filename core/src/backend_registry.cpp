#include <atomic>
#include <mutex>

#include "device_registry.h"
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

// Note [Device registry]: slots 2 .. g_type_count - 1 are registered types. A slot is written
// once, under g_register_mutex, before g_type_count publishes it (release), so readers that
// load the count (acquire) read its name and backend without a lock.
constexpr size_t kMaxTypeName = 15;
struct RegisteredType {
  char name[kMaxTypeName + 1] = {};
  Backend* backend = nullptr;
};
RegisteredType g_types[kMaxDeviceTypes];
std::atomic<int> g_type_count{2};
std::mutex g_register_mutex;

const RegisteredType* registered(int slot) {
  return slot >= 2 && slot < g_type_count.load(std::memory_order_acquire) ? &g_types[slot] : nullptr;
}
}  // namespace

void register_backend(DeviceType type, Backend* b) {
  WICK_CHECK(type == DeviceType::CUDA,
             "register_backend: only the CUDA backend is installed this way; register a new device type with "
             "register_device_type");
  g_cuda.store(b);
}

DeviceType register_device_type(std::string_view name, Backend& b) {
  bool valid = !name.empty() && name.size() <= kMaxTypeName && name[0] >= 'a' && name[0] <= 'z';
  for (char c : name) valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  WICK_CHECK(valid,
             "register_device_type: \"{}\" is not a valid device type name; use 1 to {} characters from a-z, 0-9 "
             "and '_', starting with a letter",
             name, kMaxTypeName);
  WICK_CHECK(name != "cpu" && name != "cuda", "register_device_type: \"{}\" is built in; choose another name", name);
  std::lock_guard<std::mutex> lock(g_register_mutex);
  const int count = g_type_count.load(std::memory_order_relaxed);
  for (int i = 2; i < count; ++i)
    WICK_CHECK(name != g_types[i].name,
               "register_device_type: \"{}\" is already registered (device type {}); a name is registered once "
               "per process",
               name, i);
  WICK_CHECK_T(StateError, count < kMaxDeviceTypes,
               "register_device_type: cannot register \"{}\": all {} device type slots are taken (cpu, cuda and {} "
               "registered)",
               name, kMaxDeviceTypes, kMaxDeviceTypes - 2);
  RegisteredType& slot = g_types[count];
  name.copy(slot.name, name.size());
  slot.backend = &b;
  g_type_count.store(count + 1, std::memory_order_release);
  return static_cast<DeviceType>(count);
}

const char* device_type_name(DeviceType t) {
  if (t == DeviceType::CPU) return "cpu";
  if (t == DeviceType::CUDA) return "cuda";
  const RegisteredType* r = registered(static_cast<int>(t));
  return r ? r->name : "unregistered";
}

namespace detail {
std::optional<DeviceType> find_device_type(std::string_view name) {
  const int count = g_type_count.load(std::memory_order_acquire);
  for (int i = 2; i < count; ++i)
    if (name == g_types[i].name) return static_cast<DeviceType>(i);
  return std::nullopt;
}
}  // namespace detail

namespace {
Backend& untraced_backend(DeviceType type) {
  if (type == DeviceType::CPU) [[likely]]
    return cpu::cpu_backend();
  if (type != DeviceType::CUDA) {
    const RegisteredType* r = registered(static_cast<int>(type));
    WICK_CHECK_T(DeviceUnavailable, r != nullptr,
                 "backend: device type {} is neither cpu, cuda nor registered; register it with "
                 "register_device_type first",
                 static_cast<int>(type));
    return *r->backend;
  }
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
