#include "wick/distributed/init.h"

#include <mutex>

#include "mpi_process_group.h"
#include "wick/core/error.h"

namespace wick::distributed {

namespace {

std::mutex g_mutex;
std::shared_ptr<detail::MpiProcessGroup> g_group;
bool g_ever_started = false;  // MPI starts once per process

}  // namespace

std::shared_ptr<ProcessGroup> init_process_group(const InitOptions& options) {
  std::lock_guard<std::mutex> lock(g_mutex);
  WICK_CHECK_STATE(!g_group,
                   "init_process_group: the default process group is already running (rank {} of {}); "
                   "call destroy_process_group() first",
                   g_group ? g_group->rank() : 0, g_group ? g_group->size() : 0);
  WICK_CHECK_STATE(!g_ever_started,
                   "init_process_group: a process group was destroyed earlier in this process, and MPI cannot be "
                   "started twice in one process; keep one group for the life of the program");
  WICK_CHECK_NOT_IMPLEMENTED(options.backend != "nccl",
                             "init_process_group: the nccl backend is not built yet (docs/distributed.md); use \"mpi\" "
                             "with CPU tensors");
  WICK_CHECK(options.backend == "mpi", "init_process_group: unknown backend \"{}\"; expected \"mpi\"", options.backend);
  g_ever_started = true;
  g_group = std::make_shared<detail::MpiProcessGroup>(options.timeout);
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
  std::shared_ptr<detail::MpiProcessGroup> group;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    group = std::move(g_group);
    g_group.reset();
  }
  if (group) group->shutdown();
}

}  // namespace wick::distributed
