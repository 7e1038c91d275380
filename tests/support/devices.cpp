#include "support/devices.h"

#include "support/mirror_backend.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"

namespace wick::test {

std::vector<Device> test_devices() {
  std::vector<Device> out{Device("cpu:0"), Device("cpu:1"), Device(mirror_device_type(), 0)};
  try {
    Backend& cuda = backend(DeviceType::CUDA);
    for (int i = 0; i < cuda.device_count(); ++i) out.emplace_back(DeviceType::CUDA, i);
  } catch (const DeviceUnavailable&) {
    // built without CUDA: CPU devices only
  }
  return out;
}

}  // namespace wick::test
