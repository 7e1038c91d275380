// Note [Device registry]: a device type registered at run time parses and prints by its name,
// reaches its backend through backend(), keeps its own memory accounting, moves data to and from
// the CPU and between its devices, has empty dispatch stubs (so ops take composite paths), and
// every misuse of the registry is a typed error.
#include <wick/wick.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/mirror_backend.h"
#include "wick/core/stubs.h"

using namespace wick;
using Catch::Matchers::Contains;

TEST_CASE("device registry: a registered type parses, prints and finds its backend") {
  const DeviceType mirror = test::mirror_device_type();
  CHECK(static_cast<int>(mirror) >= 2);
  CHECK(std::string(device_type_name(mirror)) == "mirror");
  CHECK(Device("mirror:1") == Device(mirror, 1));
  CHECK(Device("mirror") == Device(mirror, 0));
  CHECK(Device(mirror, 1).str() == "mirror:1");
  CHECK(!Device(mirror, 0).is_cpu());
  CHECK(!Device(mirror, 0).is_cuda());
  CHECK(backend(mirror).device_count() == test::kMirrorDevices);
  CHECK_THROWS_WITH(Device("mirrors:0"), Contains("registered device type"));
  CHECK_THROWS_WITH(Device(mirror, -1), Contains("mirror device"));
  // Every device-generic test body runs on it (support/devices.h).
  const std::vector<Device> devices = test::test_devices();
  CHECK(std::find(devices.begin(), devices.end(), Device(mirror, 0)) != devices.end());
}

TEST_CASE("device registry: bad names, a second registration and a full table are typed errors") {
  Backend& cpu = backend(DeviceType::CPU);
  test::mirror_device_type();
  for (const char* bad : {"", "Upper", "9lives", "has-dash", "has space", "sixteen_chars_xx"}) {
    INFO(bad);
    CHECK_THROWS_AS(register_device_type(bad, cpu), ValueError);
  }
  CHECK_THROWS_WITH(register_device_type("cpu", cpu), Contains("built in"));
  CHECK_THROWS_WITH(register_device_type("cuda", cpu), Contains("built in"));
  CHECK_THROWS_WITH(register_device_type("mirror", cpu), Contains("already registered"));
  // Fill the remaining slots (this test runs in its own process), then one more.
  int registered = 0;
  for (int i = 0; i < kMaxDeviceTypes; ++i) {
    try {
      const DeviceType t = register_device_type("extra" + std::to_string(i), cpu);
      CHECK(std::string(device_type_name(t)) == "extra" + std::to_string(i));
      ++registered;
    } catch (const StateError& e) {
      CHECK_THAT(e.what(), Contains("slots are taken"));
      break;
    }
  }
  CHECK(registered == kMaxDeviceTypes - 3);  // cpu, cuda and mirror hold the others
}

TEST_CASE("device registry: an unregistered type value is refused, never indexed") {
  const auto unregistered = static_cast<DeviceType>(kMaxDeviceTypes - 1);
  // Registrations last for the process: the case above fills every slot, so when both run in one
  // process (the whole binary rather than ctest's one case per process) no slot is free.
  if (std::string(device_type_name(unregistered)) != "unregistered") {
    WARN("every device type slot was registered earlier in this process; in-range checks not run");
  } else {
    CHECK_THROWS_AS(backend(unregistered), DeviceUnavailable);
    CHECK_THROWS_AS(empty({2}, TensorOptions(Device(unregistered, 0))), DeviceUnavailable);
  }
  CHECK(stubs::log_softmax_rows.find(static_cast<DeviceType>(-3)) == nullptr);
  CHECK_THROWS_AS(backend(static_cast<DeviceType>(-3)), DeviceUnavailable);
}

TEST_CASE("device registry: tensors on a registered type move, compute and are counted on their device") {
  const Device m0(test::mirror_device_type(), 0), m1(test::mirror_device_type(), 1);
  manual_seed(5);
  const Tensor a = randn({3, 4}, kFloat64), b = randn({4}, kFloat64);
  const MemoryStats before = memory_stats(m1);
  {
    Tensor am = a.to(m0), bm = b.to(m0);
    CHECK(am.device() == m0);
    Tensor sum = am + bm;  // the CPU's kernel, reached through the registry: the same bits
    CHECK_ALLCLOSE(sum.to(kCPU), a + b, 0.0, 0.0);
    Tensor moved = sum.to(m1);  // two devices of one registered type: copy_bytes_peer
    CHECK(moved.device() == m1);
    CHECK(memory_stats(m1).in_use == before.in_use + 3 * 4 * 8);
    CHECK_ALLCLOSE(moved.to(kCPU), a + b, 0.0, 0.0);
    Tensor strided = am.t().to(m1);  // a non-contiguous source
    CHECK_ALLCLOSE(strided.to(kCPU), a.t(), 0.0, 0.0);
    Tensor as_float = am.to(m1, kFloat32);  // and a dtype change on the way
    CHECK_ALLCLOSE(as_float.to(kCPU), a.to(kFloat32), 0.0, 0.0);
  }
  CHECK(memory_stats(m1).in_use == before.in_use);
}

TEST_CASE("device registry: a registered type starts with empty stubs, and ops take their composite path") {
  const Device m0(test::mirror_device_type(), 0);
  CHECK(stubs::log_softmax_rows.find(m0.type) == nullptr);
  CHECK(stubs::sgd_step.find(m0.type) == nullptr);
  manual_seed(9);
  const Tensor x = randn({5, 7}, kFloat64);
  // The composite on the mirror against the CPU's fused rows: equal to rounding.
  CHECK_ALLCLOSE(x.to(m0).log_softmax(1).to(kCPU), x.log_softmax(1), 1e-14, 1e-15);
  DispatchStub<int (*)(int)> stub("registered_op");
  stub.set(m0.type, [](int v) { return v + 1; });
  CHECK(stub(m0.type, 41) == 42);
  CHECK_THROWS_WITH(stub(DeviceType::CPU, 1), Contains("registered_op"));
}
