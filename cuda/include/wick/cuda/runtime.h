#pragma once
// wick::cuda runtime: how many GPUs there are, what they are, which one is current.
//
// Everything here is safe to call on a machine without a GPU or driver: device_count() is 0
// there, and functions that need a device raise a wick::DeviceUnavailable that says so. A driver
// that is there but fails is not "no GPU": it raises wick::BackendError. This header (like
// every public header of wick::cuda) includes no CUDA header.
#include <cstdint>
#include <string>

namespace wick::cuda {

/// Number of CUDA devices visible to this process; 0 when there is no GPU, no driver (or only its
/// stub) or a driver too old for the runtime. Any other failure of the driver raises
/// wick::BackendError instead of passing for "0 GPUs". Prints nothing; the answer is computed once.
int device_count();

/// True when at least one CUDA device is usable (device_count() > 0); raises as device_count().
bool is_available();

/// Why device_count() is 0 (the CUDA runtime's message), or "" when devices were found.
std::string unavailable_reason();

/// Throws wick::DeviceUnavailable ("cuda:3 is not available: this machine has 2 CUDA devices") unless
/// 0 <= index < device_count().
void check_device_index(int index);

struct DeviceProperties {
  std::string name;               ///< e.g. "NVIDIA H200"
  int64_t total_memory = 0;       ///< bytes of device memory
  int multi_processor_count = 0;  ///< SMs
  int major = 0, minor = 0;       ///< compute capability
  int64_t shared_memory_per_block = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
};

/// Properties of device `index` (cached after the first call); throws for a bad index.
const DeviceProperties& get_device_properties(int index);

/// The calling thread's current CUDA device (0 on a machine without devices).
int current_device();

/// Makes `index` the calling thread's current CUDA device; throws for a bad index.
void set_device(int index);

/// Waits until all work queued on device `index` (-1: the current device) finished.
void synchronize(int index = -1);

/// Free and total bytes of device memory as the driver reports them.
struct MemoryInfo {
  int64_t free = 0;
  int64_t total = 0;
};
MemoryInfo mem_get_info(int index);

/// RAII: makes a CUDA device current for the calling thread and restores the previous one
/// (LibTorch's CUDAGuard). A negative index leaves the device unchanged.
class CUDAGuard {
 public:
  explicit CUDAGuard(int index);
  ~CUDAGuard();
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;

 private:
  int prev_ = -1;
};

}  // namespace wick::cuda
