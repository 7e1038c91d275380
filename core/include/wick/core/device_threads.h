#pragma once
// One persistent worker thread per device, shared by the backward engine and parallel_apply.
//
// Note [Device threads]
// Every device (cpu:0, cpu:1, ..., cuda:0, ...) has at most one worker thread, started the first
// time work is queued for it and joined when the process exits (the pool is a function-local
// static whose destructor stops and joins every worker, so nothing is leaked and no joinable
// std::thread is destroyed). Nothing is created per call. A worker runs the tasks of its
// device's queue, highest priority first (FIFO among equals), with the submitting thread's
// denormal mode (Note [Denormals]) and the device current (DeviceGuard).
//
// A thread that must wait for other tasks while being itself a worker (a backward started from
// a hook that runs on cpu:1, parallel_apply inside a replica) never blocks: wait() runs tasks
// from its own queue until the awaited work is done, so a worker waiting on work queued to
// itself cannot deadlock. After the pool has shut down (static destruction), queue() returns
// nullptr and callers run the work on the calling thread.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <utility>
#include <vector>

#include "wick/core/device.h"

namespace wick {

/// A unit of work for a device thread. Higher priority runs first. A task reports its own
/// failures (the engine and parallel_apply keep the exception for their caller); an exception
/// that escapes a task is dropped, so that the device thread survives it.
struct DeviceTask {
  uint64_t priority = 0;
  std::function<void()> fn;  ///< empty: a wake-up that does nothing
};

/// A blocking priority queue of DeviceTasks (thread-safe).
class TaskQueue {
 public:
  /// Queues a task; it will run with the caller's denormal mode.
  void push(DeviceTask task);
  /// Waits for a task (polling a while before it sleeps: Note [Spin before sleeping]), removes the
  /// highest-priority one and runs it, with the denormal mode of the thread that queued it (the
  /// calling thread's is restored afterwards).
  void run_one();
  /// True while the queue's worker waits for work with nothing queued (Note [Idle device threads
  /// lend a hand], core/src/cpu/parallel_for.h). A hint: it may change as soon as it is read.
  bool idle() const {
    return waiting_.load(std::memory_order_acquire) != 0 && size_.load(std::memory_order_acquire) == 0;
  }

 private:
  struct Entry {
    uint64_t priority, order;
    bool flush_denormal;
    std::function<void()> fn;
    bool operator<(const Entry& o) const { return priority != o.priority ? priority < o.priority : order > o.order; }
  };
  std::mutex mutex_;
  std::condition_variable cv_;
  std::priority_queue<Entry> queue_;
  std::atomic<size_t> size_{0};  ///< queue_.size(), readable without the mutex (the poll)
  std::atomic<int> waiting_{0};  ///< threads inside run_one waiting for a task
  uint64_t next_order_ = 0;
};

/// A count of outstanding tasks that a thread can wait on; wait() helps when the waiter is a
/// device worker (Note [Device threads]). Hold it by shared_ptr when tasks may outlive the waiter's frame.
class WaitGroup {
 public:
  WaitGroup();
  void add(int64_t n = 1);
  /// Marks one task done; the last one wakes the waiter.
  void done();
  /// Blocks until every added task is done (running own-queue tasks meanwhile on a worker;
  /// polling a while before it sleeps otherwise: Note [Spin before sleeping]).
  void wait();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int64_t> count_{0};  // written under mutex_; polled without it
  TaskQueue* helper_;              ///< the waiter's own worker queue, or null
};

namespace device_threads {

/// The queue of `device`'s worker thread, starting the worker on first use; nullptr once the
/// pool has shut down at exit, or when the worker cannot be started (the system's thread limit,
/// no memory). Never throws: on nullptr every caller runs that device's work on the calling
/// thread (device_threads_testing.h makes this happen in tests).
TaskQueue* queue(Device device);
/// The device whose worker is the calling thread, if it is one.
const Device* current_worker_device();
/// The calling worker's own queue, or nullptr on a thread that is not a device worker.
TaskQueue* current_worker_queue();
/// How many worker threads have been started (they persist until exit).
size_t worker_count();
/// The queues of started CPU device workers, other than `except`'s, that are idle now
/// (TaskQueue::idle), with their devices. Starts no worker.
std::vector<std::pair<Device, TaskQueue*>> idle_cpu_workers(Device except);

}  // namespace device_threads

}  // namespace wick
