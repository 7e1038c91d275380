#pragma once
// Which backend and which device a process of a distributed job uses. None of this needs CUDA
// or MPI to be running, so it is tested on machines without a GPU.
//
// Note [One device per process]
// A distributed job runs one process per device, as torch.distributed's DDP. A CPU job uses
// the mpi backend and cpu:0 in every process. A GPU job uses the nccl backend; mpirun starts
// the processes of each machine with consecutive local ranks (OMPI_COMM_WORLD_LOCAL_RANK), and
// local rank r uses cuda:(r % device count), so `mpirun -np <GPUs per machine>` gives each
// process its own GPU. More processes than GPUs share GPUs round robin (NCCL 2.x refuses two
// ranks of one communicator on one GPU, so such a job fails at start-up with NCCL's message).
#include <string>
#include <string_view>
#include <vector>

#include "wick/core/device.h"
#include "wick/core/tensor.h"

namespace wick::distributed {

/// The backend for tensors on `device`: "nccl" for a CUDA device, "mpi" for the CPU (as
/// torch.distributed picks NCCL for CUDA tensors and Gloo for CPU ones).
std::string default_backend(Device device);

/// Why the nccl backend cannot start in this process ("" when it can): wick was built without
/// CUDA, or this machine has no CUDA device (the CUDA runtime's reason is quoted).
std::string nccl_unavailable_reason();

/// This process's rank among the processes of its machine, from the launcher's environment
/// (OMPI_COMM_WORLD_LOCAL_RANK, then MPI_LOCALRANKID, then SLURM_LOCALID); -1 when none is set
/// to a whole number in [0, INT_MAX] (a variable holding anything else is passed over).
int local_rank_from_environment();

/// The device rank `local_rank` of a machine with `device_count` GPUs uses: cuda:(local_rank %
/// device_count). ValueError when device_count < 1 or local_rank < 0.
Device nccl_device_for_local_rank(int local_rank, int device_count);

/// Why a tensor of `dtype` and `sizes` on `tensor_device` cannot take part in collective `op`
/// of a `backend` group whose tensors live on `group_device` ("" when it can): the message
/// check_collective_device raises.
std::string collective_device_problem(std::string_view op, DType dtype, const std::vector<int64_t>& sizes,
                                      Device tensor_device, Device group_device, std::string_view backend);

/// Raises ValueError, naming `op`, `backend`, the tensor's dtype, shape and device and
/// `group_device`, when `t` is undefined or not on `group_device` (a CPU tensor handed to the
/// nccl backend, or a CUDA tensor on another rank's GPU).
void check_collective_device(std::string_view op, const Tensor& t, Device group_device, std::string_view backend);

}  // namespace wick::distributed
