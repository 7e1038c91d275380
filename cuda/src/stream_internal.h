#pragma once
// Raw access to the current stream for code inside cuda/ (kernels, cuBLAS, NCCL, copies).
#include <cuda_runtime_api.h>

namespace wick::cuda::detail {

/// The calling thread's current stream on `device` (no index check: callers validated it).
cudaStream_t current_raw_stream(int device);
/// The calling thread's current stream on its current device.
cudaStream_t current_raw_stream();
/// The current device without an index check (0 when there are no devices).
int current_device_fast();

}  // namespace wick::cuda::detail
