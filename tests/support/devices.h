#pragma once
// The devices every device-generic test body runs on (docs/architecture.md, "What the tests hold each layer to"): two
// CPU devices always (cpu:0 and cpu:1, so that cross-device mistakes show up without a GPU), mirror:0 (a device type
// registered at run time, support/mirror_backend.h, so that code which assumes "CPU or CUDA" shows up too), plus every
// CUDA device when the CUDA backend is linked and a GPU is present.
#include <vector>

#include "support/printers.h"
#include "wick/core/device.h"

namespace wick::test {

std::vector<Device> test_devices();

}  // namespace wick::test
