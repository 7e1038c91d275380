#pragma once
// The Open MPI backend of ProcessGroup (CPU tensors). Its collectives are nonblocking MPI calls
// that the group's communication thread posts and polls (Note [The communication thread],
// comm_thread.h; the MPI helpers in mpi_world.h), except all_reduce's data transfer, a blocking
// call under a watchdog (Note [Blocking data transfers], blocking_watchdog.h).
#include <atomic>
#include <functional>
#include <memory>

#include "blocking_watchdog.h"
#include "threaded_process_group.h"

namespace wick::distributed::detail {

class MpiWork;

/// One queued collective of the MPI backend.
struct MpiTask : QueuedCollective {
  std::function<void(void* request)> start;  // posts the nonblocking MPI call
  std::function<void()> run_blocking;        // optional: the same as a blocking call, run instead
                                             // while the caller waits (Note [Blocking data transfers])
  std::function<void()> finish;              // after completion: unstage, average
  std::shared_ptr<MpiWork> work;
};

class MpiProcessGroup final : public ThreadedProcessGroup<MpiTask> {
 public:
  using Task = MpiTask;

  /// Starts the communication thread, which initializes MPI; BackendError when it cannot.
  explicit MpiProcessGroup(std::chrono::milliseconds timeout);
  /// shutdown(): runs every queued collective, stops the thread and finalizes MPI.
  ~MpiProcessGroup() override;

  std::string backend_name() const override { return "mpi"; }
  Device device() const override { return kCPU; }
  void check_operand(std::string_view op, const Tensor& t) const override;

  using ProcessGroup::all_reduce;  // the untagged overload
  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op, const CollectiveTag& tag) override;
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override;
  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override;
  std::shared_ptr<Work> barrier() override;

 private:
  std::shared_ptr<Work> enqueue(Task task);
  void run(Task& task);
  /// Prints that `what` did not finish within the timeout and aborts the MPI job; never returns.
  [[noreturn]] void abort_job(const std::string& what) const;
  /// Prints the same message; for the watchdog's thread, which may not call MPI.
  void print_timeout(const std::string& what) const;

  BlockingCallWatchdog watchdog_;
  // Threads inside some MpiWork::wait() of this group (shared: a Work may outlive its group).
  std::shared_ptr<std::atomic<int>> waiters_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace wick::distributed::detail
