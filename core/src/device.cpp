#include "wick/core/device.h"

#include <charconv>

#include "device_registry.h"
#include "wick/core/error.h"

namespace wick {

Device::Device(std::string_view spec) {
  auto colon = spec.find(':');
  std::string_view type = spec.substr(0, colon);
  if (type == "cpu") {
    this->type = DeviceType::CPU;
  } else if (type == "cuda") {
    this->type = DeviceType::CUDA;
  } else if (auto registered = detail::find_device_type(type)) {
    this->type = *registered;
  } else {
    WICK_FAIL(
        "Device: cannot parse \"{}\": expected \"cpu\", \"cpu:N\", \"cuda\", \"cuda:N\" or the name of a "
        "registered device type (register_device_type)",
        spec);
  }
  index = 0;
  if (colon != std::string_view::npos) {
    std::string_view num = spec.substr(colon + 1);
    int v = -1;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    WICK_CHECK(ec == std::errc() && ptr == num.data() + num.size() && v >= 0 && v <= 32767,
               "Device: cannot parse \"{}\": the index after ':' must be an integer in [0, 32767]", spec);
    index = static_cast<int16_t>(v);
  }
}

std::string Device::str() const { return fmt::format("{}:{}", device_type_name(type), index); }

}  // namespace wick
