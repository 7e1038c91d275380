#pragma once
// The Open MPI backend of ProcessGroup (CPU tensors).
//
// Note [The communication thread]
// Nonblocking MPI collectives progress only while some MPI call runs on their process, so a
// collective started and then left alone during backward would not move until the next MPI
// call. One thread per group therefore owns MPI entirely: it initializes it (MPI_THREAD_FUNNELED
// is enough, since no other thread calls MPI), runs the queued collectives one after another in
// the order they were called (the order every rank agrees on), and finalizes MPI. While a
// collective is in flight it polls MPI_Test back to back, yielding the core after each poll, so
// a transfer that needs many progress calls (shared-memory fragments, the rounds of a ring)
// moves at full speed when the core is free, while a compute thread that wants the core gets it
// at once. After 100 ms (a slow peer, a barrier while another rank works alone) the polls are
// spaced out with sleeps growing to 1 ms, so a long wait costs no CPU. The same loop enforces
// the timeout.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "fingerprint.h"
#include "wick/distributed/process_group.h"

namespace wick::distributed::detail {

class MpiWork;

class MpiProcessGroup final : public ProcessGroup {
 public:
  /// Starts the communication thread, which initializes MPI; BackendError when it cannot.
  explicit MpiProcessGroup(std::chrono::milliseconds timeout);
  /// shutdown().
  ~MpiProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "mpi"; }
  std::chrono::milliseconds timeout() const override { return timeout_; }
  Device device() const override { return kCPU; }

  std::shared_ptr<Work> all_reduce(const Tensor& tensor, ReduceOp op) override;
  std::shared_ptr<Work> broadcast(const Tensor& tensor, int root) override;
  std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override;
  std::shared_ptr<Work> barrier() override;

  /// Runs every queued collective, stops the thread and finalizes MPI. Idempotent; later calls
  /// of the collectives raise StateError.
  void shutdown();

  /// One queued collective (public for the .cpp's helpers).
  struct Task {
    Fingerprint fingerprint;
    std::exception_ptr refusal;                // this rank's own error, when it refused
    std::function<void(void* request)> start;  // posts the nonblocking MPI call
    std::function<void()> finish;              // after completion: unstage, average
    std::shared_ptr<MpiWork> work;
  };

 private:
  std::shared_ptr<Work> enqueue(Task task);
  void thread_main(std::promise<void> started);
  void run(Task& task);
  /// Polls `request` (an MPI_Request*) until done; past the timeout prints `what` and aborts.
  void wait_or_abort(void* request, const std::string& what);

  std::chrono::milliseconds timeout_;
  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
  int64_t sequence_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stopping_ = false, stopped_ = false;
  std::thread thread_;
};

}  // namespace wick::distributed::detail
