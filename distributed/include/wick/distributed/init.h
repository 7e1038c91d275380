#pragma once
// The default process group: init_process_group() / destroy_process_group(), as
// torch.distributed's, for jobs launched by mpirun (one process per device).
#include <chrono>
#include <memory>
#include <string>

#include "wick/distributed/process_group.h"

namespace wick::distributed {

struct InitOptions {
  /// "mpi" (CPU tensors) or "nccl" (CUDA tensors, one GPU per process: cuda:(local rank %
  /// device count)). default_backend(device) (backend_choice.h) picks one for a device.
  std::string backend = "mpi";
  /// How long one collective may take before the job is aborted (Note [Collectives and their
  /// contract]). At most kMaxTimeout. PyTorch 1.13's default_pg_timeout is 30 minutes (and
  /// applies to nccl only with NCCL_BLOCKING_WAIT or NCCL_ASYNC_ERROR_HANDLING); later PyTorch
  /// gives nccl 10 minutes. wick enforces its timeout on every collective of both backends, and
  /// takes 10 minutes: a training step's collectives take milliseconds, so 10 minutes still
  /// covers a rank held up by checkpointing or a slow data loader, while a job with a dead or
  /// diverged rank ends within minutes rather than half an hour.
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
};

/// The longest timeout a group accepts: 100 years, "never" in practice. The watchdogs compare
/// waits in steady_clock's nanoseconds, where much longer ones (milliseconds::max(), say) would
/// overflow and abort the job at once; a ValueError refuses them instead.
inline constexpr std::chrono::milliseconds kMaxTimeout = std::chrono::hours(24 * 365 * 100);

/// Starts the default group. Rank and world size come from the launcher: under mpirun (or
/// srun, or any PMIx launcher) MPI_Init reads them from the environment it set up; a process
/// started without a launcher is rank 0 of 1. StateError when a group is already running, or
/// one was destroyed or failed once MPI was starting (MPI cannot start twice in one process);
/// ValueError for an unknown backend or a timeout that is not in (0, kMaxTimeout];
/// DeviceUnavailable for "nccl" when wick was built without CUDA or this machine has no GPU
/// (raised before MPI starts, so the program may fall back to "mpi"), or when another rank has
/// none (found only once MPI started: no fallback in this process then); BackendError when MPI
/// or NCCL fail to start.
std::shared_ptr<ProcessGroup> init_process_group(const InitOptions& options = {});

/// True between init_process_group() and destroy_process_group().
bool is_initialized();

/// The default group; StateError before init_process_group().
ProcessGroup& default_group();
/// The default group's shared handle; StateError before init_process_group().
std::shared_ptr<ProcessGroup> default_group_ptr();

/// default_group().rank() / size().
int get_rank();
int get_world_size();

/// Finishes every queued collective, stops the communication thread and finalizes MPI. Safe to
/// call when no group is running. Holders of the group's handle keep an object whose calls
/// raise StateError.
void destroy_process_group();

}  // namespace wick::distributed
