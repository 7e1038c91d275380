#pragma once
// Device: where a tensor's memory lives. A value type, printed and parsed as "cpu:0", "cuda:1".
//
// Any number of CPU devices is legal; each has its own allocator accounting. This is what lets
// the parallel layer run, and be tested, on a machine without a GPU (see docs/tensors.md).
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "wick/core/error.h"

namespace wick {

// Note [Device registry]
// CPU and CUDA are built in. Other device types are registered at run time by
// register_device_type (backend.h), which hands out the values 2 .. kMaxDeviceTypes - 1 and
// the name that Device parses and prints ("name:N"). Code above the backends never switches on
// a device type except to ask "is it the CPU?": everything else goes through backend(type).
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

/// How many device types can exist: CPU, CUDA and up to six registered ones.
inline constexpr int kMaxDeviceTypes = 8;

/// "cpu", "cuda", a registered type's name, or "unregistered" for any other value.
const char* device_type_name(DeviceType t);

struct Device {
  DeviceType type = DeviceType::CPU;
  int16_t index = 0;

  constexpr Device() = default;
  /// Throws wick::ValueError unless 0 <= idx <= 32767 (never wraps into another device).
  constexpr Device(DeviceType t, int idx = 0) : type(t), index(static_cast<int16_t>(idx)) {
    if (idx < 0 || idx > 32767) [[unlikely]]
      detail::throw_error<ValueError>(
          __FILE__, __LINE__,
          fmt::format("Device: index {} is out of range for a {} device (expected 0..32767)", idx,
                      device_type_name(t)));
  }
  /// Parses "cpu", "cpu:3", "cuda", "cuda:1", and "name" / "name:N" for a registered device
  /// type (Note [Device registry]). Throws wick::ValueError on anything else.
  Device(std::string_view spec);  // NOLINT(google-explicit-constructor): LibTorch allows it
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;

  friend constexpr bool operator==(Device a, Device b) { return a.type == b.type && a.index == b.index; }
  friend constexpr bool operator!=(Device a, Device b) { return !(a == b); }
  friend constexpr bool operator<(Device a, Device b) { return a.type != b.type ? a.type < b.type : a.index < b.index; }
};

inline constexpr Device kCPU{DeviceType::CPU, 0};

}  // namespace wick

template <>
struct std::hash<wick::Device> {
  size_t operator()(wick::Device d) const noexcept {
    return std::hash<int>()(static_cast<int>(d.type) * 65536 + d.index);
  }
};

template <>
struct fmt::formatter<wick::Device> : fmt::formatter<std::string_view> {
  auto format(wick::Device d, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(d.str(), ctx);
  }
};
