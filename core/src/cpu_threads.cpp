// Intra-op thread budgets (Note [CPU thread budgets] in cpu_threads.h).
#include "wick/core/cpu_threads.h"

#include <cblas.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "wick/core/error.h"

namespace wick {

namespace {

struct Budgets {
  std::mutex mutex;
  int cores = 0;  // 0: hardware_concurrency
  std::map<int64_t, int> explicit_, shared;
};

Budgets& budgets() {
  static Budgets* b = new Budgets;  // never destroyed: GEMMs may run during static destruction
  return *b;
}

thread_local Device t_cpu_device = kCPU;
std::mutex g_blas_mutex;

}  // namespace

int cpu_core_count() {
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  return b.cores > 0 ? b.cores : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void set_cpu_core_count(int n) {
  WICK_CHECK(n >= 0, "set_cpu_core_count: expected a count >= 0 (0 = every core), got {}", n);
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.cores = n;
}

void set_intra_op_threads(Device d, int n) {
  WICK_CHECK(d.is_cpu(), "set_intra_op_threads: expected a CPU device, got {}", d);
  WICK_CHECK(n >= 0, "set_intra_op_threads: expected a thread count >= 0 for {} (0 = not set), got {}", d, n);
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (n == 0)
    b.explicit_.erase(d.index);
  else
    b.explicit_[d.index] = n;
}

int intra_op_threads(Device d) {
  if (!d.is_cpu()) return 0;
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (auto it = b.explicit_.find(d.index); it != b.explicit_.end()) return it->second;
  if (auto it = b.shared.find(d.index); it != b.shared.end()) return it->second;
  return 0;
}

void share_cpu_cores(const std::vector<Device>& devices) {
  std::set<int64_t> cpus;
  for (const Device& d : devices)
    if (d.is_cpu()) cpus.insert(d.index);
  if (cpus.empty()) return;
  const int cores = cpu_core_count();
  const int each = std::max(1, cores / static_cast<int>(cpus.size()));
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  for (int64_t i : cpus) b.shared[i] = each;
}

void reset_intra_op_threads() {
  Budgets& b = budgets();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.explicit_.clear();
  b.shared.clear();
}

Device current_cpu_device() { return t_cpu_device; }

int blas_on_budget() {
  const int n = intra_op_threads(t_cpu_device);
  if (n <= 0 || openblas_get_num_threads() == 1) return n;
  std::lock_guard<std::mutex> lock(g_blas_mutex);
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
  return n;
}

namespace detail {
Device exchange_current_cpu_device(Device d) { return std::exchange(t_cpu_device, d); }
}  // namespace detail

}  // namespace wick
