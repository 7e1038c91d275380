// The local communicator's collectives split over the devices' threads (Note [Local collectives
// use every device's thread]): the parts cover the range once, results are the same bits as one
// thread's, and a worker that calls a collective does not deadlock.
#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "../../parallel/src/split_over_devices.h"
#include "parallel/parallel_test_util.h"
#include "wick/core/device_threads.h"
#include "wick/core/spin_wait.h"
#include "wick/parallel/comm.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
namespace pd = wick::parallel::detail;

namespace {

struct Recorded {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;
  void add(int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(b, e);
    threads.insert(std::this_thread::get_id());
  }
  // The ranges, sorted, tile [0, n) exactly, every range but the last `align` long multiples.
  void check_tiles(int64_t n, int64_t align) {
    std::sort(ranges.begin(), ranges.end());
    int64_t at = 0;
    for (size_t k = 0; k < ranges.size(); ++k) {
      CHECK(ranges[k].first == at);
      CHECK(ranges[k].second > ranges[k].first);
      if (k + 1 < ranges.size()) CHECK((ranges[k].second - ranges[k].first) % align == 0);
      at = ranges[k].second;
    }
    CHECK(at == n);
  }
};

// Pieces that straddle the parts' boundaries, in one dtype.
std::vector<Tensor> pieces(Device d, DType dtype) {
  TensorOptions o = TensorOptions().device(d).dtype(dtype);
  return {randn({70001}, o), randn({3}, o), randn({200, 200}, o), randn({65541}, o), randn({1}, o)};
}

}  // namespace

TEST_CASE("split_over_cpu_devices: one part per distinct CPU device, covering the range once") {
  const int64_t n = 3 * pd::kMinPartElements + 5;
  Recorded r;
  pd::split_over_cpu_devices({cpu(0), cpu(1), cpu(2), cpu(1)}, n, 16, [&](int64_t b, int64_t e) { r.add(b, e); });
  CHECK(r.ranges.size() == 3);  // cpu:1 counted once
  r.check_tiles(n, 16);

  // Several parts per device (the broadcast's), claimed from both ends: they tile the range, and
  // the calling thread's parts (if it claims any before the worker takes them all) come before the
  // worker's (Note [Claimed parts]).
  Recorded fine;
  std::vector<std::pair<int64_t, bool>> starts;  // (begin, run by the caller)
  const int64_t big = 9 * pd::kMinPartElements;
  const std::thread::id caller = std::this_thread::get_id();
  pd::split_over_cpu_devices(
      {cpu(0), cpu(1)}, big, 16,
      [&](int64_t b, int64_t e) {
        fine.add(b, e);
        std::lock_guard<std::mutex> lock(fine.mutex);
        starts.emplace_back(b, std::this_thread::get_id() == caller);
      },
      4);
  CHECK(fine.ranges.size() == 8);
  fine.check_tiles(big, 16);
  std::sort(starts.begin(), starts.end());
  for (size_t k = 1; k < starts.size(); ++k) CHECK_FALSE((starts[k].second && !starts[k - 1].second));

  // Too small to be worth a hand-off: one call, on the calling thread.
  Recorded small;
  pd::split_over_cpu_devices({cpu(0), cpu(1)}, pd::kMinPartElements + 7, 16,
                             [&](int64_t b, int64_t e) { small.add(b, e); });
  CHECK(small.ranges.size() == 1);
  CHECK(small.threads == std::set<std::thread::id>{std::this_thread::get_id()});
  small.check_tiles(pd::kMinPartElements + 7, 16);

  // Only CPU devices other than the caller's lend threads: a list of one device runs alone.
  Recorded alone;
  pd::split_over_cpu_devices({cpu(0)}, n, 16, [&](int64_t b, int64_t e) { alone.add(b, e); });
  CHECK(alone.ranges.size() == 1);
}

TEST_CASE("split_over_cpu_devices: a part's exception reaches the caller after every part ended") {
  const int64_t n = 2 * pd::kMinPartElements;
  Recorded r;
  CHECK_THROWS_WITH(pd::split_over_cpu_devices({cpu(0), cpu(1)}, n, 1,
                                               [&](int64_t b, int64_t e) {
                                                 r.add(b, e);
                                                 if (b > 0) throw Error("part failed");
                                               }),
                    Catch::Contains("part failed"));
  r.check_tiles(n, 1);
  // The threads are fine afterwards.
  Recorded again;
  pd::split_over_cpu_devices({cpu(0), cpu(1)}, n, 1, [&](int64_t b, int64_t e) { again.add(b, e); });
  again.check_tiles(n, 1);
}

TEST_CASE("split_over_cpu_devices called from a device thread, over that device, does not deadlock") {
  const int64_t n = 2 * pd::kMinPartElements;
  Recorded r;
  WaitGroup done;
  done.add();
  device_threads::queue(cpu(1))->push(
      {0, [&] {
         pd::split_over_cpu_devices({cpu(0), cpu(1)}, n, 8, [&](int64_t b, int64_t e) { r.add(b, e); });
         done.done();
       }});
  done.wait();
  r.check_tiles(n, 8);
}

TEST_CASE("local collectives split over device threads give the bits of per-element sums and copies") {
  for (DType dtype : {kFloat32, kFloat64}) {
    std::vector<Tensor> a = pieces(cpu(0), dtype), b, c;
    for (const Tensor& t : pieces(cpu(0), dtype)) b.push_back(t.to(cpu(1)));
    for (const Tensor& t : pieces(cpu(0), dtype)) c.push_back(t.to(cpu(2)));

    auto copies = comm::broadcast_coalesced(a, {cpu(0), cpu(1), cpu(2)});
    for (size_t d = 1; d < 3; ++d)
      for (size_t i = 0; i < a.size(); ++i) {
        CHECK(copies[d][i].device() == cpu(static_cast<int>(d)));
        CHECK_VALUES_EQUAL(copies[d][i], a[i]);
      }

    auto sums = comm::reduce_add_coalesced({a, b, c}, cpu(0));
    for (size_t i = 0; i < a.size(); ++i) {
      // (a + b) + c, element by element, as one thread adds them
      Tensor expected = (a[i] + b[i].to(cpu(0))) + c[i].to(cpu(0));
      CHECK_VALUES_EQUAL(sums[i], expected);
      // Each sum owns its memory (Note [Coalesced outputs and version counters]): its storage is
      // held by it alone (and by its version counter), so AccumulateGrad can take it as .grad.
      CHECK(sums[i].impl()->storage.use_count() <= 2);
    }
    CHECK(comm::reduce_add({a[0], b[0], c[0]}, cpu(0)).equal(sums[0]));
  }
}

TEST_CASE("spin_until: true once ready, false after the limit") {
  std::atomic<bool> flag{false};
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    flag = true;
  });
  CHECK(spin_until([&] { return flag.load(); }, std::chrono::seconds(10)));
  setter.join();
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(spin_until([] { return false; }, std::chrono::microseconds(300)));
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::microseconds(300));
}
