// The intra-op helper pool (Note [Intra-op threads] in parallel_for.h).
#include "cpu/parallel_for.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/trace.h"

namespace wick::cpu {

namespace {

thread_local bool t_is_helper = false;
std::atomic<bool> g_helpers_gone{false};  // set at exit: later kernels run inline

// One parallel_for: its pieces are claimed one at a time, by the caller and by helpers.
struct Job {
  const RangeBody* body = nullptr;
  int64_t n = 0;
  int pieces = 0;
  bool flush_denormal = false;  // the caller's mode: every piece runs under it
  int next = 0;                 // the next piece to claim (guarded by the pool's mutex)
  std::mutex mutex;             // guards done, error
  std::condition_variable finished;
  int done = 0;
  std::exception_ptr error;

  void run_piece(int p) {
    const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
    std::exception_ptr e;
    const bool prev = wick::flush_denormal();
    if (prev != flush_denormal) set_flush_denormal(flush_denormal);
    try {
      (*body)(begin, end);
    } catch (...) {
      e = std::current_exception();
    }
    if (prev != flush_denormal) set_flush_denormal(prev);
    std::lock_guard<std::mutex> lock(mutex);
    if (e && !error) error = e;
    if (++done == pieces) finished.notify_all();
  }
};

class HelperPool {
 public:
  ~HelperPool() {
    g_helpers_gone = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Queues the job's pieces for the helpers, growing the pool to pieces - 1 threads.
  void submit(const std::shared_ptr<Job>& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(threads_.size()) < job->pieces - 1) {
        const size_t id = threads_.size();
        threads_.emplace_back([this, id] { run(id); });
      }
      jobs_.push_back(job);
    }
    for (int i = 1; i < job->pieces; ++i) wake_.notify_one();
  }

  int size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(threads_.size());
  }

  // Claims the job's next piece, or returns -1 when every piece is claimed.
  int claim(Job& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    return claim_locked(job);
  }

 private:
  int claim_locked(Job& job) {
    if (job.next >= job.pieces) return -1;
    const int p = job.next++;
    if (job.next == job.pieces) {
      auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& j) { return j.get() == &job; });
      if (it != jobs_.end()) jobs_.erase(it);
    }
    return p;
  }

  void run(size_t id) {
    t_is_helper = true;
    profiler::set_thread_name(fmt::format("intra-op helper {}", id));  // Note [Tracer]
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      std::shared_ptr<Job> job = jobs_.front();
      const int p = claim_locked(*job);
      lock.unlock();
      if (p >= 0) job->run_piece(p);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;  // jobs with unclaimed pieces, oldest first
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

HelperPool& helpers() {
  static HelperPool pool;  // joined at exit, after main returns
  return pool;
}

constexpr int kMaxPieces = 256;

}  // namespace

int parallel_pieces(int64_t n, int64_t grain) {
  grain = std::max<int64_t>(grain, 1);
  // Small kernels return before reading the budget (a mutex and a map).
  if (n < 2 * grain || t_is_helper || g_helpers_gone) return 1;
  const int budget = intra_op_threads(current_cpu_device());
  if (budget <= 1) return 1;
  const int64_t by_size = n / grain;
  return static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(by_size, budget), 1, kMaxPieces));
}

void parallel_for_body(int64_t n, int64_t grain, const RangeBody& body) {
  const int pieces = parallel_pieces(n, grain);
  if (pieces <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->n = n;
  job->pieces = pieces;
  job->flush_denormal = wick::flush_denormal();
  HelperPool& pool = helpers();
  pool.submit(job);
  // The caller takes pieces too; it then waits only for pieces a helper has started.
  for (int p; (p = pool.claim(*job)) >= 0;) job->run_piece(p);
  std::unique_lock<std::mutex> lock(job->mutex);
  job->finished.wait(lock, [&] { return job->done == job->pieces; });
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace wick::cpu

namespace wick {
int intra_op_helper_threads() { return cpu::helpers().size(); }
}  // namespace wick
