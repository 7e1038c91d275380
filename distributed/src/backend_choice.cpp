#include "wick/distributed/backend_choice.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "wick/config.h"
#include "wick/core/error.h"
#if WICK_WITH_CUDA
#include "wick/cuda/runtime.h"
#endif

namespace wick::distributed {

std::string default_backend(Device device) { return device.is_cuda() ? "nccl" : "mpi"; }

std::string nccl_unavailable_reason() {
#if WICK_WITH_CUDA
  if (cuda::device_count() > 0) return "";
  return fmt::format("this machine has no CUDA device ({})", cuda::unavailable_reason());
#else
  return "wick was built without CUDA (CMake found no CUDA toolkit, or WICK_CUDA=OFF)";
#endif
}

int local_rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v < '0' || *v > '9') continue;  // unset, empty, a sign or a space first
    // Only a whole decimal number in [0, INT_MAX] counts; anything else (garbage, a sign, a value
    // that would truncate: 4294967296 used to become local rank 0) is passed over, and the nccl
    // backend then counts the node's ranks through MPI itself, which is always right.
    char* end = nullptr;
    errno = 0;
    const long r = std::strtol(v, &end, 10);
    if (errno == 0 && end != nullptr && *end == '\0' && r >= 0 && r <= INT_MAX) return static_cast<int>(r);
  }
  return -1;
}

Device nccl_device_for_local_rank(int local_rank, int device_count) {
  WICK_CHECK(device_count >= 1, "nccl backend: {} CUDA devices; the nccl backend needs at least one", device_count);
  WICK_CHECK(local_rank >= 0, "nccl backend: local rank {} is negative", local_rank);
  return Device(DeviceType::CUDA, local_rank % device_count);
}

std::string collective_device_problem(std::string_view op, DType dtype, const std::vector<int64_t>& sizes,
                                      Device tensor_device, Device group_device, std::string_view backend) {
  if (tensor_device == group_device) return "";
  const std::string what = fmt::format("{} [{}]", dtype, fmt::join(sizes, ", "));
  if (group_device.is_cuda() && !tensor_device.is_cuda())
    return fmt::format(
        "{}: the {} backend moves CUDA tensors, but the tensor ({}) is on {}; this rank's device is {}: move it "
        "with .to(\"{}\"), or use the mpi backend for CPU tensors",
        op, backend, what, tensor_device, group_device, group_device);
  if (!group_device.is_cuda())
    return fmt::format(
        "{}: the {} backend moves CPU tensors, but the tensor ({}) is on {}; use the nccl backend for CUDA tensors "
        "or move it with .to(kCPU)",
        op, backend, what, tensor_device);
  return fmt::format(
      "{}: the tensor ({}) is on {}, but this rank's device is {} (one device per process: local rank r uses "
      "cuda:(r % device count)); move it with .to(\"{}\")",
      op, what, tensor_device, group_device, group_device);
}

void check_collective_device(std::string_view op, const Tensor& t, Device group_device, std::string_view backend) {
  WICK_CHECK(t.defined(), "{}: the tensor is undefined; pass a tensor on {} (the {} backend's device on this rank)", op,
             group_device, backend);
  const std::string problem =
      collective_device_problem(op, t.dtype(), t.sizes().vec(), t.device(), group_device, backend);
  WICK_CHECK(problem.empty(), "{}", problem);
}

}  // namespace wick::distributed
