#pragma once
// Checks for CUDA runtime, cuBLAS and NCCL calls (private to cuda/: includes CUDA headers).
//
//   WICK_CUDA_CHECK(cudaMalloc(&p, n));
//
// A failed call raises wick::BackendError (wick::OutOfMemoryError when memory ran out,
// wick::DeviceUnavailable when there is no device or driver) naming the call, the source file and
// line, the library's error name and message, and a hint for the common cases.
#include <cuda_runtime_api.h>

#include <string>

namespace wick::cuda::detail {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(int result, const char* call, const char* file, int line);

/// "cudaErrorMemoryAllocation: out of memory".
std::string cuda_error_text(cudaError_t err);

/// True for the errors that mean "there is no GPU to use" (no device, no driver or only its stub,
/// a driver too old for the runtime, a device index that does not exist): they raise
/// wick::DeviceUnavailable, every other CUDA error wick::BackendError (Note [Typed errors]).
bool means_no_device(cudaError_t err);

}  // namespace wick::cuda::detail

#define WICK_CUDA_CHECK(call)                                                            \
  do {                                                                                   \
    const cudaError_t wick_cuda_err_ = (call);                                           \
    if (wick_cuda_err_ != cudaSuccess)                                                   \
      ::wick::cuda::detail::throw_cuda_error(wick_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// Checks the launch of the kernel just queued (bad configuration, missing architecture).
#define WICK_CUDA_CHECK_LAUNCH(kernel_name) WICK_CUDA_CHECK(cudaGetLastError())

#define WICK_CUBLAS_CHECK(call)                                                                                     \
  do {                                                                                                              \
    const int wick_cublas_st_ = static_cast<int>(call);                                                             \
    if (wick_cublas_st_ != 0) ::wick::cuda::detail::throw_cublas_error(wick_cublas_st_, #call, __FILE__, __LINE__); \
  } while (0)

#define WICK_NCCL_CHECK(call)                                                                                   \
  do {                                                                                                          \
    const int wick_nccl_res_ = static_cast<int>(call);                                                          \
    if (wick_nccl_res_ != 0) ::wick::cuda::detail::throw_nccl_error(wick_nccl_res_, #call, __FILE__, __LINE__); \
  } while (0)
