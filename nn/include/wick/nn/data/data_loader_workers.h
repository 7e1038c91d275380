#pragma once
// The worker threads of a data loader (data_loader.h): each owns a copy of the dataset, takes
// batch requests from a shared queue, and hands back batches (or the exception that get_batch
// threw) to the loader's thread.
//
// Note [Data loader threads]
// The workers are plain std::threads owned by the loader, not wick's device threads or intra-op
// pool: a worker spends its time inside the user's get_batch (reading files, decoding, waiting),
// and a device thread or pool helper held there would stall the backward passes and kernels
// that share it. Plain threads also give the loader a lifetime it controls: its destructor sets
// `stop`, wakes every worker, and joins them; a worker in the middle of a get_batch finishes that
// one call, drops its result and exits, and the queued requests are discarded. So destroying a
// loader mid-epoch neither leaks a thread nor waits for the rest of the epoch (it waits for at
// most one get_batch per worker). A new epoch (start_epoch) discards the old epoch's queued
// requests and any of its results still in flight.
//
// With `ordered`, pop(seq) returns the batch of request seq, so batches come out in the
// sampler's order whatever order the workers finish in; each batch is computed by the same code
// on the same indices as without workers, hence equal bit for bit. For that the workers also
// run under the loop thread's thread-local settings that change results: grad mode, the current
// CPU device (whose intra-op budget splits the kernels) and flush-denormal, captured when the
// epoch starts (ThreadSettings) and set on the worker before each batch.
//
// A worker never lets an exception reach std::terminate: what get_batch throws goes to the pop
// of that batch; anything else (an allocation failing while a result is handed over) stops that
// worker and is rethrown by every later pop that finds no result ready, since the batch it held
// is lost: the loader cannot go on.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "wick/autograd/grad_mode.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/flush_denormal.h"

namespace wick::data::detail {

/// The thread-local settings of the loop thread that a worker takes over (Note above).
struct ThreadSettings {
  bool grad_enabled = true;
  Device cpu_device = kCPU;
  bool flush_denormal = false;

  /// The calling thread's settings.
  static ThreadSettings current() { return {GradMode::is_enabled(), current_cpu_device(), ::wick::flush_denormal()}; }
  /// Makes them the calling thread's.
  void apply() const {
    GradMode::set_enabled(grad_enabled);
    wick::detail::exchange_current_cpu_device(cpu_device);
    if (::wick::flush_denormal() != flush_denormal) set_flush_denormal(flush_denormal);
  }
};

template <typename Batch>
class LoaderWorkers {
 public:
  using Fetch = std::function<Batch(std::span<const size_t>)>;

  /// Starts one thread per entry of `fetch`; thread w calls only fetch[w]. BackendError (after
  /// stopping the threads already started) when the system cannot start one.
  LoaderWorkers(std::vector<Fetch> fetch, bool ordered) : ordered_(ordered) {
    threads_.reserve(fetch.size());
    try {
      for (Fetch& f : fetch) threads_.emplace_back([this, f = std::move(f)]() mutable { run_guarded(f); });
    } catch (const std::system_error& e) {
      const size_t started = threads_.size();
      stop();
      WICK_FAIL_T(::wick::BackendError,
                  "make_data_loader: could not start worker thread {} of {} ({}); use fewer workers", started + 1,
                  fetch.size(), e.what());
    } catch (...) {
      stop();
      throw;
    }
  }
  LoaderWorkers(const LoaderWorkers&) = delete;
  LoaderWorkers& operator=(const LoaderWorkers&) = delete;
  /// Stops and joins every worker (Note [Data loader threads]).
  ~LoaderWorkers() { stop(); }

  /// Discards the queued requests and the results not yet popped; later results of requests
  /// pushed before this call are dropped too. The requests pushed from now on run under
  /// `settings`.
  void start_epoch(const ThreadSettings& settings = ThreadSettings::current()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++epoch_;
    settings_ = settings;
    jobs_.clear();
    results_.clear();
  }

  /// Queues request number `seq` of this epoch.
  void push(uint64_t seq, std::vector<size_t> indices) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(Job{epoch_, seq, std::move(indices), settings_});
    }
    jobs_cv_.notify_one();
  }

  /// Waits for the batch of request `seq` (ordered) or for any finished batch (unordered) and
  /// returns it, or rethrows what its get_batch threw (or what stopped a worker, Note above).
  /// The caller pops only what it pushed.
  Batch pop(uint64_t seq) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = results_.end();
    results_cv_.wait(lock, [&] {
      it = results_.begin();
      if (ordered_)
        while (it != results_.end() && it->seq != seq) ++it;
      return it != results_.end() || failure_;
    });
    if (it == results_.end()) std::rethrow_exception(failure_);
    Result r = std::move(*it);
    results_.erase(it);
    lock.unlock();
    if (r.error) std::rethrow_exception(r.error);
    return std::move(*r.batch);
  }

 private:
  struct Job {
    uint64_t epoch, seq;
    std::vector<size_t> indices;
    ThreadSettings settings;
  };
  struct Result {
    uint64_t seq;
    std::optional<Batch> batch;
    std::exception_ptr error;
  };

  // run(), with whatever escapes it kept for pop (Note above) instead of reaching std::terminate.
  void run_guarded(Fetch& fetch) noexcept {
    try {
      run(fetch);
    } catch (...) {
      try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!failure_) failure_ = std::current_exception();
      } catch (...) {  // the mutex failed too: nothing is left to tell
      }
      results_cv_.notify_all();
    }
  }

  void run(Fetch& fetch) {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        jobs_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Result r{job.seq, std::nullopt, nullptr};
      job.settings.apply();
      try {
        r.batch.emplace(fetch(job.indices));
      } catch (...) {
        r.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) return;
        if (job.epoch != epoch_) continue;  // an abandoned epoch's batch
        results_.push_back(std::move(r));
      }
      results_cv_.notify_all();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    jobs_cv_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  const bool ordered_;
  std::mutex mutex_;
  std::condition_variable jobs_cv_, results_cv_;
  std::deque<Job> jobs_;
  std::deque<Result> results_;
  uint64_t epoch_ = 0;
  ThreadSettings settings_ = ThreadSettings::current();
  std::exception_ptr failure_;  ///< what stopped a worker outside get_batch (Note above)
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace wick::data::detail
