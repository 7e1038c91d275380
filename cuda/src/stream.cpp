// Streams: the per-thread current stream of each device, the stream pool, events.
#include "wick/cuda/stream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "cuda_check.h"
#include "stream_internal.h"
#include "wick/core/error.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
constexpr int kPoolSize = 32;

// The current stream of each device for this thread; nullptr is the default stream.
std::vector<cudaStream_t>& thread_streams() {
  thread_local std::vector<cudaStream_t> streams(static_cast<size_t>(device_count()), nullptr);
  return streams;
}

struct StreamPool {
  std::once_flag once;
  std::array<cudaStream_t, kPoolSize> streams{};
  std::atomic<unsigned> next{0};
};

StreamPool& pool_of(int device) {
  // Pools live for the whole process and are never destroyed (streams outlive static
  // destructors, as LibTorch's do), so a Stream handle never dangles.
  static std::vector<StreamPool>* pools = new std::vector<StreamPool>(static_cast<size_t>(device_count()));
  return (*pools)[static_cast<size_t>(device)];
}

int resolve(int device) {
  if (device < 0) device = current_device();
  check_device_index(device);
  return device;
}
}  // namespace

namespace detail {
int current_device_fast() {
  if (device_count() == 0) return 0;
  int d = 0;
  (void)cudaGetDevice(&d);
  return d;
}
cudaStream_t current_raw_stream(int device) {
  auto& s = thread_streams();
  return static_cast<size_t>(device) < s.size() ? s[static_cast<size_t>(device)] : nullptr;
}
cudaStream_t current_raw_stream() { return current_raw_stream(current_device_fast()); }
}  // namespace detail

bool Stream::query() const {
  CUDAGuard g(device_);
  const cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(handle_));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  WICK_CUDA_CHECK(err);
  return true;
}

void Stream::synchronize() const {
  CUDAGuard g(device_);
  WICK_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)));
}

Stream get_default_stream(int device) { return Stream(resolve(device), nullptr); }

Stream get_stream_from_pool(int device) {
  device = resolve(device);
  StreamPool& p = pool_of(device);
  std::call_once(p.once, [&] {
    CUDAGuard g(device);
    for (auto& s : p.streams) WICK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  });
  const unsigned i = p.next.fetch_add(1, std::memory_order_relaxed) % kPoolSize;
  return Stream(device, p.streams[i]);
}

Stream get_current_stream(int device) {
  device = resolve(device);
  return Stream(device, detail::current_raw_stream(device));
}

void set_current_stream(Stream s) {
  check_device_index(s.device());
  thread_streams()[static_cast<size_t>(s.device())] = static_cast<cudaStream_t>(s.handle());
}

StreamGuard::StreamGuard(Stream s) {
  check_device_index(s.device());
  prev_device_ = current_device();
  prev_stream_ = get_current_stream(s.device());
  if (prev_device_ != s.device()) set_device(s.device());
  set_current_stream(s);
}

StreamGuard::~StreamGuard() {
  thread_streams()[static_cast<size_t>(prev_stream_.device())] = static_cast<cudaStream_t>(prev_stream_.handle());
  (void)cudaSetDevice(prev_device_);
}

Event::~Event() {
  if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
}

Event::Event(Event&& o) noexcept { *this = std::move(o); }

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (handle_) (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
    handle_ = o.handle_;
    device_ = o.device_;
    timing_ = o.timing_;
    recorded_ = o.recorded_;
    o.handle_ = nullptr;
    o.recorded_ = false;
  }
  return *this;
}

void Event::record(Stream s) {
  CUDAGuard g(s.device());
  if (handle_ && device_ != s.device()) {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
    handle_ = nullptr;
  }
  if (!handle_) {
    cudaEvent_t e = nullptr;
    WICK_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming));
    handle_ = e;
    device_ = s.device();
  }
  WICK_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(handle_), static_cast<cudaStream_t>(s.handle())));
  recorded_ = true;
}

void Event::record() { record(get_current_stream()); }

void Event::block(Stream s) const {
  if (!recorded()) return;
  CUDAGuard g(s.device());
  WICK_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(s.handle()), static_cast<cudaEvent_t>(handle_), 0));
}

bool Event::query() const {
  if (!recorded()) return true;
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(handle_));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  WICK_CUDA_CHECK(err);
  return true;
}

void Event::synchronize() const {
  if (recorded()) WICK_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)));
}

float Event::elapsed_ms(const Event& end) const {
  WICK_CHECK_STATE(recorded() && end.recorded(), "Event::elapsed_ms: both events must have been recorded");
  WICK_CHECK_STATE(timing_ && end.timing_,
                   "Event::elapsed_ms: both events must be created with Event(/*timing=*/true)");
  float ms = 0;
  WICK_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(handle_), static_cast<cudaEvent_t>(end.handle_)));
  return ms;
}

}  // namespace wick::cuda
