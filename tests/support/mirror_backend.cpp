#include "support/mirror_backend.h"

#include <atomic>
#include <cstdlib>

#include "support/cpu_kernels_backend.h"
#include "wick/core/backend.h"
#include "wick/core/error.h"

namespace wick::test {

namespace {

// Host memory, 64-byte aligned, counted per mirror device.
class MirrorAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, Device device) override {
    Counters& c = counters(device);
    if (bytes == 0) return nullptr;
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    WICK_CHECK_T(OutOfMemoryError, p != nullptr, "mirror allocate: out of memory asking for {} bytes on {}", bytes,
                 device);
    const int64_t now = c.in_use.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
    int64_t peak = c.peak.load();
    while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
    }
    c.allocations.fetch_add(1);
    c.total.fetch_add(1);
    return p;
  }
  void deallocate(void* p, size_t bytes, Device device) noexcept override {
    if (!p) return;
    std::free(p);
    Counters& c = counters_[device.index];
    c.in_use.fetch_sub(static_cast<int64_t>(bytes));
    c.allocations.fetch_sub(1);
  }
  MemoryStats stats(Device device) const override {
    const Counters& c = const_cast<MirrorAllocator*>(this)->counters(device);
    MemoryStats s;
    s.in_use = c.in_use.load();
    s.reserved = s.in_use;
    s.peak = c.peak.load();
    s.allocations = c.allocations.load();
    s.total_allocations = c.total.load();
    return s;
  }
  void reset_peak(Device device) override {
    Counters& c = counters(device);
    c.peak.store(c.in_use.load());
  }

 private:
  struct Counters {
    std::atomic<int64_t> in_use{0}, peak{0}, allocations{0}, total{0};
  };
  Counters& counters(Device device) {
    WICK_CHECK(device.index < kMirrorDevices, "mirror: {} does not exist (mirror:0 .. mirror:{})", device,
               kMirrorDevices - 1);
    return counters_[device.index];
  }
  Counters counters_[kMirrorDevices];
};

// Every kernel is the CPU's (CpuKernelsBackend); only the allocator and the device bookkeeping
// are the mirror's.
class MirrorBackend final : public CpuKernelsBackend {
 public:
  Allocator& allocator() override { return allocator_; }
  int device_count() override { return kMirrorDevices; }
  void set_device(Device d) override { current_ = d; }
  Device current_device() override {
    return current_.type == mirror_device_type() ? current_ : Device(mirror_device_type(), 0);
  }
  void synchronize(Device) override {}
  // A stream is only a number here, current per thread and device, so that tests can check that
  // code moving work to other threads carries the caller's (Note [Backward streams]).
  uintptr_t current_stream(Device d) override { return streams_[index_of(d)]; }
  void set_current_stream(Device d, uintptr_t stream) override { streams_[index_of(d)] = stream; }

 private:
  static size_t index_of(Device d) {
    WICK_CHECK(d.index >= 0 && d.index < kMirrorDevices, "mirror: {} does not exist (mirror:0 .. mirror:{})", d,
               kMirrorDevices - 1);
    return static_cast<size_t>(d.index);
  }
  MirrorAllocator allocator_;
  static thread_local Device current_;
  static thread_local uintptr_t streams_[kMirrorDevices];
};

thread_local Device MirrorBackend::current_{};
thread_local uintptr_t MirrorBackend::streams_[kMirrorDevices] = {};

}  // namespace

DeviceType mirror_device_type() {
  static MirrorBackend* mirror = new MirrorBackend;  // lives until the process ends, as the registry asks
  static const DeviceType type = register_device_type("mirror", *mirror);
  return type;
}

}  // namespace wick::test
