#include "support/mirror_backend.h"

#include <atomic>
#include <cstdlib>

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

// Every primitive is the CPU's; only the allocator and the device bookkeeping are the mirror's.
class MirrorBackend final : public Backend {
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
  void unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) override {
    cpu().unary(op, out, in, p0, p1);
  }
  void binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) override {
    cpu().binary(op, out, a, b);
  }
  void where(const KernelTensor& out, const KernelTensor& cond, const KernelTensor& a, const KernelTensor& b) override {
    cpu().where(out, cond, a, b);
  }
  void copy(const KernelTensor& dst, const KernelTensor& src) override { cpu().copy(dst, src); }
  void copy_bytes_host(void* dst, const void* src, size_t bytes, Device device, bool to_device) override {
    cpu().copy_bytes_host(dst, src, bytes, device, to_device);
  }
  void copy_bytes_peer(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override {
    cpu().copy_bytes_peer(dst, dst_device, src, src_device, bytes);
  }
  void fill(const KernelTensor& dst, double value) override { cpu().fill(dst, value); }
  void arange(const KernelTensor& out, double start, double step) override { cpu().arange(out, start, step); }
  void random(const KernelTensor& out, RandomKind kind, double a, double b, uint64_t seed, uint64_t offset) override {
    cpu().random(out, kind, a, b, seed, offset);
  }
  void reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) override { cpu().reduce(op, out, in); }
  void arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) override {
    cpu().arg_reduce(op, out, in, dim);
  }
  void index_select(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    cpu().index_select(out, in, dim, index);
  }
  void index_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    cpu().index_add(out, dim, index, src);
  }
  void gather(const KernelTensor& out, const KernelTensor& in, int64_t dim, const KernelTensor& index) override {
    cpu().gather(out, in, dim, index);
  }
  void scatter_add(const KernelTensor& out, int64_t dim, const KernelTensor& index, const KernelTensor& src) override {
    cpu().scatter_add(out, dim, index, src);
  }
  void sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) override {
    cpu().sort_indices(indices, in, dim, descending);
  }
  void cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) override {
    cpu().cumsum(out, in, dim, reverse);
  }
  void gemm(const GemmArgs& args) override { cpu().gemm(args); }
  void im2col(const Im2ColArgs& g, const void* image, void* columns) override { cpu().im2col(g, image, columns); }
  void col2im(const Im2ColArgs& g, const void* columns, void* image) override { cpu().col2im(g, columns, image); }
  void max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) override {
    cpu().max_pool2d(g, image, out, indices);
  }
  void max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                           void* grad_image) override {
    cpu().max_pool2d_backward(g, grad_out, indices, grad_image);
  }

 private:
  static Backend& cpu() { return backend(DeviceType::CPU); }
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
