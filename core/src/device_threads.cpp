// The persistent device threads (Note [Device threads] in device_threads.h).
#include "wick/core/device_threads.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "wick/core/backend.h"
#include "wick/core/device_threads_testing.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/spin_wait.h"
#include "wick/core/trace.h"

namespace wick {

namespace {

thread_local TaskQueue* t_own_queue = nullptr;
thread_local const Device* t_own_device = nullptr;
std::atomic<int> g_failing_queue_calls{0};  // device_threads::testing

struct Worker {
  Device device;
  TaskQueue queue;
  std::thread thread;
  bool stop = false;  // read by the worker only, after its stop task
};

class Pool {
 public:
  ~Pool() {
    std::map<Device, std::unique_ptr<Worker>> workers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shut_down_ = true;
      workers.swap(workers_);
    }
    for (auto& [_, w] : workers) {
      Worker* raw = w.get();
      w->queue.push({UINT64_MAX, [raw] { raw->stop = true; }});
    }
    for (auto& [_, w] : workers) w->thread.join();
  }

  // nullptr at shutdown, or when d's thread cannot be started (the system's thread limit, no
  // memory): nothing escapes, and every caller then runs d's work on the calling thread.
  TaskQueue* queue(Device d) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_down_) return nullptr;
    auto it = workers_.find(d);
    if (it != workers_.end()) return &it->second->queue;
    try {
      auto w = std::make_unique<Worker>();
      w->device = d;
      Worker* raw = w.get();
      it = workers_.emplace(d, std::move(w)).first;  // before the thread: a failed emplace leaves none running
      try {
        raw->thread = std::thread([raw] { run(raw); });
      } catch (...) {
        workers_.erase(it);
        throw;
      }
      return &raw->queue;
    } catch (...) {
      return nullptr;
    }
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return workers_.size();
  }

  std::vector<std::pair<Device, TaskQueue*>> idle_cpu(Device except) {
    std::vector<std::pair<Device, TaskQueue*>> out;
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_down_) return out;
    for (auto& [d, w] : workers_)
      if (d.is_cpu() && d != except && w->queue.idle()) out.emplace_back(d, &w->queue);
    return out;
  }

 private:
  static void run(Worker* w) {
    t_own_queue = &w->queue;
    t_own_device = &w->device;
    profiler::set_thread_name(fmt::format("device thread {}", w->device));  // Note [Tracer]
    std::optional<DeviceGuard> guard;
    try {
      guard.emplace(w->device);  // tasks set their device again; this only saves the switch
    } catch (...) {
    }
    while (!w->stop) w->queue.run_one();
  }

  std::mutex mutex_;
  std::map<Device, std::unique_ptr<Worker>> workers_;
  bool shut_down_ = false;
};

std::atomic<Pool*> g_pool_alive{nullptr};   // null before first use and after the pool's destruction
std::atomic<bool> g_pool_destroyed{false};  // set once at exit: pool() must not be called again

Pool& pool() {
  static struct Holder {
    Pool pool;
    Holder() { g_pool_alive = &pool; }
    ~Holder() {
      g_pool_alive = nullptr;
      g_pool_destroyed = true;
    }
  } holder;
  return holder.pool;
}

}  // namespace

void TaskQueue::push(DeviceTask task) {
  const bool ftz = flush_denormal();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push(Entry{task.priority, next_order_++, ftz, std::move(task.fn)});
    size_.store(queue_.size(), std::memory_order_release);
  }
  cv_.notify_one();
}

void TaskQueue::run_one() {
  waiting_.fetch_add(1, std::memory_order_acq_rel);
  spin_until([&] { return size_.load(std::memory_order_acquire) != 0; });  // Note [Spin before sleeping]
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return !queue_.empty(); });
  waiting_.fetch_sub(1, std::memory_order_acq_rel);
  Entry e = std::move(const_cast<Entry&>(queue_.top()));
  queue_.pop();
  size_.store(queue_.size(), std::memory_order_release);
  lock.unlock();
  if (!e.fn) return;
  FlushDenormalScope mode(e.flush_denormal);
  try {
    e.fn();
  } catch (...) {  // a task reports its own failures (DeviceTask); keep the thread alive
  }
}

WaitGroup::WaitGroup() : helper_(t_own_queue) {}

void WaitGroup::add(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  count_.fetch_add(n, std::memory_order_relaxed);
}

void WaitGroup::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    cv_.notify_all();
    if (helper_) helper_->push({UINT64_MAX, {}});  // wake the helping waiter
  }
}

void WaitGroup::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (helper_ && helper_ == t_own_queue) {
    while (count_ > 0) {
      lock.unlock();
      helper_->run_one();
      lock.lock();
    }
  } else {
    lock.unlock();
    spin_until([&] { return count_.load(std::memory_order_acquire) == 0; });  // Note [Spin before sleeping]
    lock.lock();
    cv_.wait(lock, [&] { return count_ == 0; });
  }
}

namespace device_threads {

TaskQueue* queue(Device device) {
  if (g_pool_destroyed) return nullptr;
  if (g_failing_queue_calls.load(std::memory_order_relaxed) > 0 &&
      g_failing_queue_calls.fetch_sub(1, std::memory_order_relaxed) > 0)
    return nullptr;  // as when the thread cannot be started (device_threads_testing.h)
  return pool().queue(device);
}

const Device* current_worker_device() { return t_own_device; }
TaskQueue* current_worker_queue() { return t_own_queue; }
size_t worker_count() {
  Pool* p = g_pool_alive.load();
  return p ? p->size() : 0;
}

std::vector<std::pair<Device, TaskQueue*>> idle_cpu_workers(Device except) {
  Pool* p = g_pool_alive.load();
  return p ? p->idle_cpu(except) : std::vector<std::pair<Device, TaskQueue*>>{};
}

}  // namespace device_threads

void device_threads::testing::fail_next_queue_calls(int n) {
  g_failing_queue_calls.store(n, std::memory_order_relaxed);
}
int device_threads::testing::failing_queue_calls_left() {
  return std::max(g_failing_queue_calls.load(std::memory_order_relaxed), 0);
}

}  // namespace wick
