#pragma once
// The "mirror" device type: a backend registered at run time (Note [Device registry]), so that
// every device-generic test body also runs on a device type that core knows only through the
// registry. Its memory is host memory with its own accounting, and its primitives are the CPU
// backend's, reached through the registry. It registers no dispatch stub, so ops take their
// composite paths there, as they would on a new backend that has not written its fused kernels.
#include "wick/core/device.h"

namespace wick::test {

/// The mirror device type, registered by the first call (thread-safe).
DeviceType mirror_device_type();

/// How many mirror devices exist (mirror:0 .. mirror:N-1).
inline constexpr int kMirrorDevices = 2;

}  // namespace wick::test
