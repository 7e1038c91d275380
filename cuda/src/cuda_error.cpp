// Turning CUDA, cuBLAS and NCCL status codes into typed wick errors (Note [Typed errors]).
#include <nccl.h>

#include <cstring>

#include "cublas_api.h"
#include "cuda_check.h"
#include "wick/core/error.h"

namespace wick::cuda::detail {

namespace {
// "/work/main/cuda/src/x.cpp" -> "cuda/src/x.cpp": short, and the same on every machine.
const char* short_path(const char* file) {
  const char* p = std::strstr(file, "cuda/src/");
  return p ? p : file;
}

const char* cuda_hint(cudaError_t err) {
  switch (err) {
    case cudaErrorInsufficientDriver:
      return " The NVIDIA driver is missing or older than this CUDA runtime; install a newer driver or "
             "use CPU devices.";
    case cudaErrorNoDevice:
      return " No CUDA device is visible; check nvidia-smi and CUDA_VISIBLE_DEVICES.";
    case cudaErrorMemoryAllocation:
      return " The device is out of memory; free tensors you no longer need, call wick::cuda::empty_cache(), "
             "or use smaller batches.";
    case cudaErrorInvalidDevice:
      return " The device index is out of range; wick::cuda::device_count() says how many devices there are.";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return " wick was not compiled for this GPU's architecture; rebuild with "
             "-DCMAKE_CUDA_ARCHITECTURES=<its compute capability, e.g. 90>.";
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
      return " A kernel faulted (often an out-of-range index); the CUDA context is now unusable. Rerun with "
             "CUDA_LAUNCH_BLOCKING=1 to find the op.";
    default:
      return "";
  }
}
}  // namespace

bool means_no_device(cudaError_t err) {
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary ||
         err == cudaErrorInvalidDevice;
}

std::string cuda_error_text(cudaError_t err) {
  return fmt::format("{}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
}

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  // Clear a non-sticky error so that the next unrelated call does not report it again.
  (void)cudaGetLastError();
  const std::string msg = fmt::format("CUDA error {} in {} at {}:{}.{}", cuda_error_text(err), call, short_path(file),
                                      line, cuda_hint(err));
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  if (means_no_device(err)) throw DeviceUnavailable(msg);
  throw BackendError(msg);
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  const auto st = static_cast<cublasStatus_t>(status);
  const char* hint = st == CUBLAS_STATUS_ALLOC_FAILED      ? " The device is out of memory."
                     : st == CUBLAS_STATUS_NOT_INITIALIZED ? " cuBLAS could not initialise; check the driver."
                                                           : "";
  // A status comes from a call through the table, so cuBLAS is loaded (Note [cuBLAS loaded on first use]).
  const CublasApi& api = cublas_api();
  const std::string msg = fmt::format("cuBLAS error {}: {} in {} at {}:{}.{}", api.get_status_name(st),
                                      api.get_status_string(st), call, short_path(file), line, hint);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemoryError(msg);
  throw BackendError(msg);
}

void throw_nccl_error(int result, const char* call, const char* file, int line) {
  const auto r = static_cast<ncclResult_t>(result);
  throw BackendError(fmt::format("NCCL error {} ({}) in {} at {}:{}. Set NCCL_DEBUG=INFO for details.", result,
                                 ncclGetErrorString(r), call, short_path(file), line));
}

}  // namespace wick::cuda::detail
