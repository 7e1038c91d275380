// Device count, properties, the current device, synchronization.
#include "wick/cuda/runtime.h"

#include <memory>
#include <mutex>
#include <vector>

#include "cuda_check.h"
#include "wick/core/error.h"

namespace wick::cuda {

namespace {
struct DeviceCensus {
  int count = 0;
  cudaError_t failure = cudaSuccess;  // cudaGetDeviceCount's error when it is not "no device"
  std::string reason;
};

// Counted once. Without a GPU or a driver cudaGetDeviceCount fails (cudaErrorNoDevice,
// cudaErrorInsufficientDriver, cudaErrorStubLibrary) and leaves its output untouched, hence the 0
// start; nothing is printed. Any other error is a driver that is there but fails: device_count()
// raises it as a BackendError rather than reporting 0 GPUs.
const DeviceCensus& census() {
  static const DeviceCensus c = [] {
    DeviceCensus r;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      r.reason = detail::cuda_error_text(err);
      if (!detail::means_no_device(err)) r.failure = err;
    } else {
      r.count = n;
      if (n == 0) r.reason = "the CUDA runtime found no device";
    }
    return r;
  }();
  return c;
}
}  // namespace

int device_count() {
  const DeviceCensus& c = census();
  if (c.failure != cudaSuccess) [[unlikely]]
    detail::throw_cuda_error(c.failure, "cudaGetDeviceCount(&n)", __FILE__, __LINE__);
  return c.count;
}

bool is_available() { return device_count() > 0; }

std::string unavailable_reason() { return census().reason; }

void check_device_index(int index) {
  const int n = device_count();
  if (index >= 0 && index < n) [[likely]]
    return;
  if (n == 0) {
    throw DeviceUnavailable(
        fmt::format("cuda:{} is not available: this machine has 0 CUDA devices ({}). Use a CPU device, "
                    "or check the GPU and driver with nvidia-smi.",
                    index, unavailable_reason()));
  }
  throw DeviceUnavailable(
      fmt::format("cuda:{} is not available: this machine has {} CUDA device{} (cuda:0 to cuda:{}).", index, n,
                  n == 1 ? "" : "s", n - 1));
}

const DeviceProperties& get_device_properties(int index) {
  check_device_index(index);
  static std::once_flag once;
  static std::vector<std::unique_ptr<DeviceProperties>> props;
  std::call_once(once, [] { props.resize(static_cast<size_t>(device_count())); });
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  auto& slot = props[static_cast<size_t>(index)];
  if (!slot) {
    cudaDeviceProp p{};
    WICK_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    auto d = std::make_unique<DeviceProperties>();
    d->name = p.name;
    d->total_memory = static_cast<int64_t>(p.totalGlobalMem);
    d->multi_processor_count = p.multiProcessorCount;
    d->major = p.major;
    d->minor = p.minor;
    d->shared_memory_per_block = static_cast<int64_t>(p.sharedMemPerBlock);
    d->max_threads_per_block = p.maxThreadsPerBlock;
    d->warp_size = p.warpSize;
    slot = std::move(d);
  }
  return *slot;
}

int current_device() {
  if (device_count() == 0) return 0;
  int d = 0;
  WICK_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int index) {
  check_device_index(index);
  WICK_CUDA_CHECK(cudaSetDevice(index));
}

void synchronize(int index) {
  if (index < 0) index = current_device();
  check_device_index(index);
  CUDAGuard guard(index);
  WICK_CUDA_CHECK(cudaDeviceSynchronize());
}

MemoryInfo mem_get_info(int index) {
  check_device_index(index);
  CUDAGuard guard(index);
  size_t free_b = 0, total_b = 0;
  WICK_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return {static_cast<int64_t>(free_b), static_cast<int64_t>(total_b)};
}

CUDAGuard::CUDAGuard(int index) {
  if (index < 0) return;
  const int cur = current_device();
  if (cur != index) {
    set_device(index);
    prev_ = cur;
  }
}

CUDAGuard::~CUDAGuard() {
  if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

}  // namespace wick::cuda
