// split_over_cpu_devices (Note [Local collectives use every device's thread]).
#include "split_over_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>

#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"
#include "wick/core/trace.h"

namespace wick::parallel::detail {

namespace {

// One split call's parts. Tasks that reach it after every part is claimed find nothing to do;
// they hold it by shared_ptr, so it outlives the call, but fn (the caller's) is only called
// for claimed parts, all of which finish before the call returns.
struct Parts {
  int64_t count = 0, n = 0, step = 0;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  std::atomic<int64_t> next{0};
  WaitGroup finished;  // one per part; polls before it sleeps (Note [Spin before sleeping])
  std::mutex error_mutex;
  std::exception_ptr error;  // the first part's exception

  // Claims and runs one part; false when none is left.
  bool run_one() {
    const int64_t k = next.fetch_add(1, std::memory_order_relaxed);
    if (k >= count) return false;
    try {
      const int64_t begin = k * step, end = std::min(n, (k + 1) * step);
      profiler::RecordScope trace_event("comm", "collective part",
                                        [&] { return fmt::format("\"elements\": \"[{}, {})\"", begin, end); });
      (*fn)(begin, end);
    } catch (...) {
      // Kept here only: this thread holds no reference once the part counts as finished, when
      // the caller may rethrow and free it.
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    finished.done();
    return true;
  }
};

}  // namespace

void split_over_cpu_devices(const std::vector<Device>& devices, int64_t n, int64_t align,
                            const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  // The calling thread stands in for its own device: a worker's, else the current CPU device.
  const Device* worker = device_threads::current_worker_device();
  const Device self = worker ? *worker : current_cpu_device();
  std::vector<Device> others;
  for (const Device& d : devices)
    if (d.is_cpu() && d != self && std::find(others.begin(), others.end(), d) == others.end()) others.push_back(d);
  const int64_t count = std::min<int64_t>(static_cast<int64_t>(others.size()) + 1, n / kMinPartElements);
  if (count <= 1) {
    fn(0, n);
    return;
  }
  auto parts = std::make_shared<Parts>();
  parts->count = count;
  parts->n = n;
  align = std::max<int64_t>(align, 1);
  parts->step = ((n + count - 1) / count + align - 1) / align * align;
  parts->count = (n + parts->step - 1) / parts->step;
  parts->fn = &fn;
  parts->finished.add(parts->count);
  for (int64_t k = 1; k < parts->count; ++k) {
    TaskQueue* q = device_threads::queue(others[static_cast<size_t>(k - 1)]);
    if (!q) break;  // the pool has shut down (exit): the caller runs every part
    q->push({std::numeric_limits<uint64_t>::max(), [parts] {
               while (parts->run_one()) {
               }
             }});
  }
  while (parts->run_one()) {
  }
  parts->finished.wait();
  // Taken out of parts: a task still queued holds parts and may drop the last reference on a
  // worker, which must not free the exception the caller is handling.
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(parts->error_mutex);
    error = std::move(parts->error);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace wick::parallel::detail
