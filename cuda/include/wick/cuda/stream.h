#pragma once
// Streams and events (Note [Streams] in docs/cuda.md).
//
// Every device has a *current stream* per thread; kernels, copies, cuBLAS calls and NCCL
// collectives that wick issues for a device go to that device's current stream. It starts as
// the device's default (legacy NULL) stream; StreamGuard switches it for a scope. The caching
// allocator remembers the stream a block was allocated on, so memory freed on one stream is not
// handed to work on another stream before the first stream has passed the free.
#include <cstdint>

namespace wick::cuda {

/// A handle to a CUDA stream on one device. Cheap to copy; streams from the pool live for the
/// whole process (as in LibTorch), so a Stream never dangles.
class Stream {
 public:
  /// The default stream of device 0.
  Stream() = default;
  Stream(int device, void* handle) : device_(device), handle_(handle) {}

  int device() const { return device_; }
  /// The cudaStream_t, as an opaque pointer (nullptr for the default stream).
  void* handle() const { return handle_; }
  bool is_default() const { return handle_ == nullptr; }
  /// True when all work queued on the stream so far has finished.
  bool query() const;
  /// Waits until all work queued on the stream so far has finished.
  void synchronize() const;

  friend bool operator==(const Stream& a, const Stream& b) { return a.device_ == b.device_ && a.handle_ == b.handle_; }
  friend bool operator!=(const Stream& a, const Stream& b) { return !(a == b); }

 private:
  int device_ = 0;
  void* handle_ = nullptr;
};

/// The default (NULL) stream of device `device` (-1: the current device).
Stream get_default_stream(int device = -1);
/// A stream from the device's pool (round robin over 32 non-blocking streams per device).
Stream get_stream_from_pool(int device = -1);
/// The calling thread's current stream on `device` (-1: the current device).
Stream get_current_stream(int device = -1);
/// Makes `s` the calling thread's current stream on s.device() (the current device is unchanged).
void set_current_stream(Stream s);

/// RAII: makes s.device() the current device and `s` its current stream; restores both.
class StreamGuard {
 public:
  explicit StreamGuard(Stream s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream prev_stream_;
  int prev_device_ = 0;
};

/// A CUDA event (created lazily on the device of the first stream it is recorded on).
/// Use it to order work across streams and devices without blocking the host.
class Event {
 public:
  /// `timing`: whether elapsed_ms() can be used (timing events are slightly slower to record).
  explicit Event(bool timing = false) : timing_(timing) {}
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Captures the work queued on `s` so far (default: the current stream of the current device).
  void record(Stream s);
  void record();
  /// Makes future work on `s` wait until the recorded work finished (does not block the host).
  void block(Stream s) const;
  /// True when the recorded work finished (or nothing was recorded).
  bool query() const;
  /// Blocks the host until the recorded work finished.
  void synchronize() const;
  /// Milliseconds between this event and `end` (both recorded, both timing events).
  float elapsed_ms(const Event& end) const;
  bool recorded() const { return handle_ != nullptr && recorded_; }
  int device() const { return device_; }

 private:
  void* handle_ = nullptr;  // cudaEvent_t
  int device_ = -1;
  bool timing_ = false;
  bool recorded_ = false;
};

/// Queues a kernel on `s` that keeps the GPU busy for about `microseconds` (for tests and
/// benchmarks that need a stream to be busy, e.g. to check stream-aware memory reuse).
void busy_wait(Stream s, int64_t microseconds);

}  // namespace wick::cuda
