#include "wick/distributed/init.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <string>

#include "mpi_process_group.h"
#include "wick/config.h"
#include "wick/core/error.h"
#include "wick/distributed/backend_choice.h"
#if WICK_WITH_CUDA
#include "nccl_process_group.h"
#endif

namespace wick::distributed {

namespace {

std::mutex g_mutex;
std::shared_ptr<ProcessGroup> g_group;
std::function<void()> g_shutdown;  // the backend's shutdown(): finishes its work, finalizes MPI
bool g_ever_started = false;       // MPI starts once per process
std::string g_start_failure;       // what stopped a start that got as far as MPI, if one did

// Makes the group, remembering why it failed if it did (MPI may have started by then).
template <typename Group>
std::shared_ptr<Group> start_group(std::chrono::milliseconds timeout) {
  g_ever_started = true;
  try {
    return std::make_shared<Group>(timeout);
  } catch (const std::exception& e) {
    g_start_failure = e.what();
    throw;
  }
}

}  // namespace

std::shared_ptr<ProcessGroup> init_process_group(const InitOptions& options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  WICK_CHECK_STATE(!g_group,
                   "init_process_group: the default process group is already running (rank {} of {}); "
                   "call destroy_process_group() first",
                   g_group ? g_group->rank() : 0, g_group ? g_group->size() : 0);
  WICK_CHECK_STATE(!(g_ever_started && g_start_failure.empty()),
                   "init_process_group: a process group was destroyed earlier in this process, and MPI cannot be "
                   "started twice in one process; keep one group for the life of the program");
  WICK_CHECK_STATE(!g_ever_started,
                   "init_process_group: an earlier init_process_group in this process failed once MPI was starting "
                   "({}), and MPI cannot be started twice in one process; start the job again with the backend that "
                   "fits",
                   g_start_failure);
  WICK_CHECK(options.backend == "mpi" || options.backend == "nccl",
             "init_process_group: unknown backend \"{}\"; expected \"mpi\" (CPU tensors) or \"nccl\" (CUDA tensors)",
             options.backend);
  detail::check_timeout(options.timeout);  // before anything starts
  if (options.backend == "nccl") {
    // Checked before MPI starts, so the program may still fall back to "mpi".
    const std::string why = nccl_unavailable_reason();
    WICK_CHECK_T(DeviceUnavailable, why.empty(),
                 "init_process_group: the nccl backend cannot start: {}; use backend \"mpi\" with CPU tensors "
                 "(default_backend(device) picks the backend for a device)",
                 why);
#if WICK_WITH_CUDA
    auto group = start_group<detail::NcclProcessGroup>(options.timeout);
    g_shutdown = [group] { group->shutdown(); };
    g_group = group;
    return g_group;
#endif
  }
  auto group = start_group<detail::MpiProcessGroup>(options.timeout);
  g_shutdown = [group] { group->shutdown(); };
  g_group = group;
  return g_group;
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_group != nullptr;
}

std::shared_ptr<ProcessGroup> default_group_ptr() {
  std::lock_guard<std::mutex> lock(g_mutex);
  WICK_CHECK_STATE(g_group != nullptr,
                   "wick::distributed: no process group is running; call init_process_group() first (and launch the "
                   "program with mpirun)");
  return g_group;
}

ProcessGroup& default_group() { return *default_group_ptr(); }

int get_rank() { return default_group().rank(); }
int get_world_size() { return default_group().size(); }

void destroy_process_group() {
  std::function<void()> shutdown;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_group.reset();
    shutdown = std::move(g_shutdown);
    g_shutdown = nullptr;
  }
  if (shutdown) shutdown();
}

}  // namespace wick::distributed
