// The intra-op helper pool (Note [Intra-op threads] in parallel_for.h).
#include "cpu/parallel_for.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "wick/core/claimed_parts.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/intra_op_parallel.h"
#include "wick/core/trace.h"

namespace wick::cpu {

namespace {

thread_local bool t_is_helper = false;

// While alive, the calling thread runs pieces as a helper (nested splits inline) under `device`,
// as the caller of the split would: a lent worker and the body of a wick::parallel_for.
class HelperScope {
 public:
  explicit HelperScope(Device device)
      : was_helper_(std::exchange(t_is_helper, true)), prev_(detail::exchange_current_cpu_device(device)) {}
  ~HelperScope() {
    detail::exchange_current_cpu_device(prev_);
    t_is_helper = was_helper_;
  }
  HelperScope(const HelperScope&) = delete;
  HelperScope& operator=(const HelperScope&) = delete;

 private:
  bool was_helper_;
  Device prev_;
};
std::atomic<bool> g_helpers_gone{false};  // set at exit: later kernels run inline

// One parallel_for: its pieces, claimed one at a time by the caller, by helpers and by lent
// device workers (Note [Claimed parts]).
struct Job {
  Job(const RangeBody& body, int64_t n, int pieces)
      : run([&body, n, pieces, mode = wick::flush_denormal()](int64_t p) {
          FlushDenormalScope scope(mode);  // the caller's mode, on whichever thread claims the piece
          body(n * p / pieces, n * (p + 1) / pieces);
        }),
        parts(pieces, run) {}

  Device device = current_cpu_device();  // lent workers run its pieces under it
  std::function<void(int64_t)> run;      // reached only through claimed pieces
  ClaimedParts parts;
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

  // Queues the job's pieces for `helpers` helpers, growing the pool to that many threads.
  void submit(const std::shared_ptr<Job>& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(threads_.size()) < helpers) {
        const size_t id = threads_.size();
        threads_.emplace_back([this, id] { run(id); });
      }
      jobs_.push_back(job);
    }
    for (int i = 0; i < helpers; ++i) wake_.notify_one();
  }

  int size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(threads_.size());
  }

 private:
  void run(size_t id) {
    t_is_helper = true;
    profiler::set_thread_name(fmt::format("intra-op helper {}", id));  // Note [Tracer]
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      std::shared_ptr<Job> job = jobs_.front();
      if (job->parts.all_claimed()) {  // every piece taken: the job leaves the queue
        jobs_.pop_front();
        continue;
      }
      lock.unlock();
      job->parts.run_one(ClaimedParts::End::Back);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;  // jobs that may have unclaimed pieces, oldest first
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

HelperPool& helpers() {
  static HelperPool pool;  // joined at exit, after main returns
  return pool;
}

constexpr int kMaxPieces = 256;

// How a parallel_for of n items at `grain` runs: `pieces` pieces, `helpers` threads of the pool,
// and the idle device workers in `lenders` (Note [Idle device threads lend a hand]).
struct Plan {
  int pieces = 1;
  int helpers = 0;
  std::vector<std::pair<Device, TaskQueue*>> lenders;
};

// The budget of the caller's device, or 0 when nothing may be split (small, nested, at exit).
int splittable_budget(int64_t n, int64_t grain) {
  // Small kernels return before reading the budget (a mutex and a map).
  if (n < 2 * grain || t_is_helper || g_helpers_gone) return 0;
  return intra_op_threads(current_cpu_device());
}

// The idle workers of the other CPU devices that have a budget, when the caller is not a device
// worker itself (Note [Idle device threads lend a hand]).
std::vector<std::pair<Device, TaskQueue*>> idle_lenders() {
  std::vector<std::pair<Device, TaskQueue*>> out;
  if (device_threads::current_worker_queue() != nullptr) return out;
  out = device_threads::idle_cpu_workers(current_cpu_device());
  std::erase_if(out, [](const auto& w) { return intra_op_threads(w.first) <= 0; });
  return out;
}

Plan plan(int64_t n, int64_t grain) {
  Plan p;
  const int budget = splittable_budget(n, grain);
  if (budget <= 0) return p;
  const int64_t by_size = std::min<int64_t>(n / grain, kMaxPieces);
  p.lenders = idle_lenders();
  // With lenders, pieces are as small as the grain allows, so a worker that starts late takes
  // only what is left; without, one piece per thread of the budget.
  const int64_t pieces = p.lenders.empty() ? std::min<int64_t>(by_size, budget) : by_size;
  p.pieces = static_cast<int>(std::max<int64_t>(pieces, 1));
  if (p.pieces <= 1) {
    p.lenders.clear();
    return p;
  }
  p.helpers = std::min(budget - 1, p.pieces - 1);
  const size_t room = static_cast<size_t>(p.pieces - 1 - p.helpers);
  if (p.lenders.size() > room) p.lenders.resize(room);
  return p;
}

// A lent worker's task: claims and runs the job's pieces as its device, like a helper (no nested
// fan-out), until none is left.
void run_lent(const std::shared_ptr<Job>& job) {
  HelperScope scope(job->device);
  for (int64_t p; (p = job->parts.claim(ClaimedParts::End::Back)) >= 0;) {
    profiler::RecordScope trace_event("op", "lent piece");  // Note [Tracer]
    job->parts.run(p);
  }
}

}  // namespace

int parallel_pieces(int64_t n, int64_t grain) { return plan(n, std::max<int64_t>(grain, 1)).pieces; }

void parallel_for_body(int64_t n, int64_t grain, const RangeBody& body) {
  Plan pl = plan(n, std::max<int64_t>(grain, 1));
  if (pl.pieces <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  auto job = std::make_shared<Job>(body, n, pl.pieces);
  if (pl.helpers > 0) helpers().submit(job, pl.helpers);
  // Lowest priority: a lent worker runs its own device's queued work first. A loan that cannot
  // be queued (out of memory) is only a loan less: the caller runs what nobody claims.
  for (const auto& [_, queue] : pl.lenders) {
    try {
      queue->push({0, [job] { run_lent(job); }});
    } catch (...) {
    }
  }
  job->parts.finish();
}

}  // namespace wick::cpu

namespace wick {
int intra_op_helper_threads() { return cpu::helpers().size(); }

bool in_parallel_region() { return cpu::t_is_helper; }

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (end <= begin) return;
  // The body runs in a region on every thread, the caller's included, even when nothing splits
  // (Note [Parallel regions]), and under the caller's CPU device, as a lent piece runs (its budget
  // decides how OpenBLAS is set up for a GEMM in the body).
  const Device device = current_cpu_device();
  const auto in_region = [&](int64_t b, int64_t e) {
    cpu::HelperScope scope(device);
    f(begin + b, begin + e);
  };
  if (cpu::t_is_helper) {  // nested: inline
    in_region(0, end - begin);
    return;
  }
  cpu::parallel_for(end - begin, std::max<int64_t>(grain, 1), in_region);
}
}  // namespace wick
