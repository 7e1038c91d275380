#pragma once
// The thread that runs a process group's collectives, shared by the MPI and NCCL backends.
//
// Note [The communication thread]
// Nonblocking MPI collectives progress only while some MPI call runs on their process, so a
// collective started and then left alone during backward would not move until the next MPI
// call. One thread per group therefore owns MPI entirely (CommThread below, in both backends):
// it initializes it (MPI_THREAD_FUNNELED is enough, since no other thread calls MPI;
// start_mpi in mpi_world.h refuses an MPI that grants less), runs the queued collectives one
// after another in the order they were called (the order every rank agrees on), and finalizes
// MPI. While an MPI request is in flight (every fingerprint exchange, and the data of every
// collective but all_reduce's, which is a blocking call: Note [Blocking data transfers]) it
// polls MPI_Test back to back, yielding the core after each poll (wait_mpi_request), so a
// transfer that needs many progress calls (shared-memory fragments, the rounds of a ring) moves
// at full speed when the core is free, while a compute thread that wants the core gets it at
// once. After 100 ms (a slow peer, a barrier while another rank works alone) the polls are
// spaced out with sleeps growing to 1 ms, so a long wait costs no CPU. The same loop enforces
// the timeout. The MPI backend runs its collectives through this loop; the NCCL backend runs
// only the fingerprint exchange through it and queues the NCCL kernels from the same thread
// (Note [The NCCL process group]).
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <utility>

#include "fingerprint.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"

namespace wick::distributed::detail {

/// What every queued collective carries; each backend's Task derives from it.
struct QueuedCollective {
  Fingerprint fingerprint;
  std::exception_ptr refusal;  // this rank's own error, when it refused
};

/// A Task with `fingerprint`, filled by `prepare(task)` on the calling thread. A wick::Error
/// from `prepare` (this rank rejects its own arguments) becomes the task's refusal and is marked
/// in its fingerprint; the task is queued all the same, so every rank fails the collective
/// together after the fingerprint exchange (Note [Collective fingerprints]).
template <class Task, class Prepare>
Task prepare_task(const Fingerprint& fingerprint, Prepare&& prepare) {
  Task task;
  task.fingerprint = fingerprint;
  try {
    prepare(task);
  } catch (const Error&) {
    task.refusal = std::current_exception();
    task.fingerprint.refused = 1;
  }
  return task;
}

/// One thread that runs queued Tasks (QueuedCollectives) one at a time, in the order they were
/// queued (Note [The communication thread]). Its steps run with grad mode off: what they write
/// into tensors is plain data movement.
template <class Task>
class CommThread {
 public:
  struct Steps {
    std::function<void()> start_up;   // on the thread, before any task; may throw
    std::function<void(Task&)> run;   // each task, in queue order
    std::function<void()> tear_down;  // after the last task, once stop() was called
  };

  CommThread() = default;
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;
  /// stop(). An owner whose steps use its own members calls stop() in its destructor first.
  ~CommThread() { stop(); }

  /// Starts the thread and returns once steps.start_up returned. When it threw, the thread has
  /// ended (without tear_down) and its exception is rethrown here.
  void start(Steps steps) {
    steps_ = std::move(steps);
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread(&CommThread::main, this, std::move(started));
    try {
      ready.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }

  /// Gives `task` the next sequence number (in its fingerprint) and queues it. StateError after
  /// stop() (the process group was destroyed).
  void push(Task task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      WICK_CHECK_STATE(
          !stopping_, "ProcessGroup: {} was called after destroy_process_group(); start a new job to communicate again",
          describe(task.fingerprint));
      task.fingerprint.sequence = sequence_++;
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

  /// Lets the thread run every queued task and then tear_down, and joins it. Idempotent; push()
  /// raises StateError from the first call on.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void main(std::promise<void> started) {
    NoGradGuard no_grad;  // write-backs and unstaging copies are plain data movement
    try {
      steps_.start_up();
    } catch (...) {
      started.set_exception(std::current_exception());
      return;
    }
    started.set_value();
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty()) break;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      steps_.run(task);
    }
    steps_.tear_down();
  }

  Steps steps_;
  int64_t sequence_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Task> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace wick::distributed::detail
