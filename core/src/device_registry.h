#pragma once
// Internal: the names of registered device types (Note [Device registry]), kept with their
// backends in backend_registry.cpp; Device's parser and printer read them here.
#include <optional>
#include <string_view>

#include "wick/core/device.h"

namespace wick::detail {

/// The registered device type called `name`, if any (never "cpu" or "cuda").
std::optional<DeviceType> find_device_type(std::string_view name);

}  // namespace wick::detail
