// split_over_cpu_devices (Note [Local collectives use every device's thread]).
#include "split_over_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "wick/core/claimed_parts.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"
#include "wick/core/trace.h"

namespace wick::parallel::detail {

void split_over_cpu_devices(const std::vector<Device>& devices, int64_t n, int64_t align,
                            const std::function<void(int64_t, int64_t)>& fn, int64_t parts_per_device) {
  if (n <= 0) return;
  // The calling thread stands in for its own device: a worker's, else the current CPU device.
  const Device* worker = device_threads::current_worker_device();
  const Device self = worker ? *worker : current_cpu_device();
  std::vector<Device> others;
  for (const Device& d : devices)
    if (d.is_cpu() && d != self && std::find(others.begin(), others.end(), d) == others.end()) others.push_back(d);
  const int64_t count = std::min<int64_t>(
      (static_cast<int64_t>(others.size()) + 1) * std::max<int64_t>(parts_per_device, 1), n / kMinPartElements);
  if (count <= 1) {
    fn(0, n);
    return;
  }
  align = std::max<int64_t>(align, 1);
  const int64_t step = ((n + count - 1) / count + align - 1) / align * align;
  const std::function<void(int64_t)> run = [&](int64_t k) {
    const int64_t begin = k * step, end = std::min(n, (k + 1) * step);
    profiler::RecordScope trace_event("comm", "collective part",
                                      [&] { return fmt::format("\"elements\": \"[{}, {})\"", begin, end); });
    fn(begin, end);
  };
  auto parts = std::make_shared<ClaimedParts>((n + step - 1) / step, run);  // Note [Claimed parts]
  for (size_t k = 0; k < others.size() && static_cast<int64_t>(k) + 1 < parts->count(); ++k) {
    TaskQueue* q = device_threads::queue(others[k]);
    if (!q) break;  // no thread for that device, or the pool has shut down: the caller runs the parts left
    q->push({std::numeric_limits<uint64_t>::max(), [parts] {
               while (parts->run_one(ClaimedParts::End::Back)) {
               }
             }});
  }
  parts->finish();
}

}  // namespace wick::parallel::detail
