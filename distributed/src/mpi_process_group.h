#pragma once
// The Open MPI backend of ProcessGroup (CPU tensors). Its collectives are nonblocking MPI calls
// that the group's communication thread posts and polls (Note [The communication thread],
// comm_thread.h; the MPI helpers in mpi_world.h).
#include <functional>
#include <memory>

#include "threaded_process_group.h"

namespace wick::distributed::detail {

class MpiWork;

/// One queued collective of the MPI backend.
struct MpiTask : QueuedCollective {
  std::function<void(void* request)> start;  // posts the nonblocking MPI call
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

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override;
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override;
  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override;
  std::shared_ptr<Work> barrier() override;

 private:
  std::shared_ptr<Work> enqueue(Task task);
  void run(Task& task);
  /// Prints that `what` did not finish within the timeout and aborts the MPI job; never returns.
  [[noreturn]] void abort_job(const std::string& what) const;
};

}  // namespace wick::distributed::detail
