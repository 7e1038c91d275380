#pragma once
// What the MPI and NCCL process groups share: the timeout, this rank's place in MPI_COMM_WORLD
// and the communication thread that runs the queued collectives (Note [The communication
// thread], comm_thread.h). Each backend adds its Task, its thread steps and its collectives.
#include <chrono>

#include "comm_thread.h"
#include "mpi_world.h"
#include "wick/core/error.h"
#include "wick/distributed/init.h"
#include "wick/distributed/process_group.h"

namespace wick::distributed::detail {

/// ValueError unless `timeout` is in (0, kMaxTimeout] (init.h). init_process_group calls it
/// before anything starts; every group's constructor calls it too.
inline void check_timeout(std::chrono::milliseconds timeout) {
  WICK_CHECK(timeout.count() > 0 && timeout <= kMaxTimeout,
             "init_process_group: the timeout must be positive and at most {} ms (100 years; kMaxTimeout), got {} ms",
             kMaxTimeout.count(), timeout.count());
}

template <class Task>
class ThreadedProcessGroup : public ProcessGroup {
 public:
  int rank() const override { return world_.rank; }
  int size() const override { return world_.size; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  /// Runs every queued collective, stops the thread and tears the backend down (finalizing MPI
  /// when the group initialized it). Idempotent; later calls of the collectives raise StateError.
  void shutdown() { thread_.stop(); }

 protected:
  /// ValueError unless `timeout` is in (0, kMaxTimeout]. The backend starts thread_ at the end of its
  /// constructor and calls shutdown() first in its destructor (the thread's steps use its
  /// members).
  explicit ThreadedProcessGroup(std::chrono::milliseconds timeout) : timeout_(timeout) { check_timeout(timeout); }

  const std::chrono::milliseconds timeout_;
  MpiWorld world_;
  CommThread<Task> thread_;
};

}  // namespace wick::distributed::detail
