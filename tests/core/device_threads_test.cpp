// The persistent device threads (Note [Device threads]) and the CPU intra-op thread budgets
// (Note [CPU thread budgets]).
#include "wick/core/device_threads.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/flush_denormal.h"

using namespace wick;

namespace {
Device cpu(int i) { return Device(DeviceType::CPU, i); }
}  // namespace

TEST_CASE("device threads: one persistent thread per device, tasks run there in priority order") {
  TaskQueue* q5 = device_threads::queue(cpu(5));
  REQUIRE(q5 != nullptr);
  CHECK(device_threads::queue(cpu(5)) == q5);  // the same worker every time
  const size_t workers = device_threads::worker_count();

  // Block the worker, queue tasks of mixed priority, release it: highest first, FIFO among equals.
  std::mutex gate;
  std::unique_lock<std::mutex> hold(gate);
  std::vector<int> order;
  std::thread::id ran_on;
  Device seen_device = kCPU;
  WaitGroup wg;
  wg.add(5);
  q5->push({100, [&] {
              std::lock_guard<std::mutex> wait_for_gate(gate);
              ran_on = std::this_thread::get_id();
              seen_device = current_cpu_device();
              wg.done();
            }});
  for (auto [prio, tag] : std::vector<std::pair<uint64_t, int>>{{1, 1}, {7, 2}, {1, 3}, {7, 4}}) {
    q5->push({prio, [&order, &wg, tag = tag] {
                order.push_back(tag);
                wg.done();
              }});
  }
  hold.unlock();
  wg.wait();
  CHECK(order == std::vector<int>{2, 4, 1, 3});
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(seen_device == cpu(5));
  CHECK(device_threads::worker_count() == workers);
  CHECK(device_threads::current_worker_queue() == nullptr);
}

TEST_CASE("device threads: a worker waiting on work queued to itself runs it (no deadlock)") {
  TaskQueue* q6 = device_threads::queue(cpu(6));
  std::atomic<int> inner_runs{0};
  WaitGroup outer;
  outer.add();
  q6->push({0, [&] {
              CHECK(device_threads::current_worker_queue() == q6);
              CHECK(*device_threads::current_worker_device() == cpu(6));
              WaitGroup inner;  // waits on the worker's own queue
              inner.add(3);
              for (int i = 0; i < 3; ++i)
                q6->push({0, [&] {
                            ++inner_runs;
                            inner.done();
                          }});
              inner.wait();
              outer.done();
            }});
  outer.wait();
  CHECK(inner_runs == 3);
}

TEST_CASE("device threads: a task runs with the denormal mode of the thread that queued it") {
  TaskQueue* q7 = device_threads::queue(cpu(7));
  const bool before = flush_denormal();
  for (bool mode : {true, false}) {
    if (!set_flush_denormal(mode)) break;  // no such mode on this CPU
    bool seen = !mode;
    WaitGroup wg;
    wg.add();
    q7->push({0, [&] {
                seen = flush_denormal();
                wg.done();
              }});
    wg.wait();
    CHECK(seen == mode);
  }
  set_flush_denormal(before);
}

TEST_CASE("cpu thread budgets: explicit, shared out, cleared") {
  reset_intra_op_threads();
  CHECK(intra_op_threads(cpu(0)) == 0);  // not managed
  set_cpu_core_count(8);
  share_cpu_cores({cpu(0), cpu(1), cpu(1), Device(DeviceType::CUDA, 0), cpu(2)});  // 3 distinct CPU devices
  CHECK(intra_op_threads(cpu(0)) == 2);
  CHECK(intra_op_threads(cpu(2)) == 2);
  CHECK(intra_op_threads(Device(DeviceType::CUDA, 0)) == 0);
  set_intra_op_threads(cpu(1), 5);
  CHECK(intra_op_threads(cpu(1)) == 5);  // explicit wins
  set_intra_op_threads(cpu(1), 0);
  CHECK(intra_op_threads(cpu(1)) == 2);  // back to the share
  set_cpu_core_count(2);
  share_cpu_cores({cpu(0), cpu(1), cpu(2), cpu(3)});
  CHECK(intra_op_threads(cpu(3)) == 1);  // never below one
  CHECK_THROWS_AS(set_intra_op_threads(Device(DeviceType::CUDA, 0), 2), ValueError);
  CHECK_THROWS_AS(set_intra_op_threads(cpu(0), -1), ValueError);
  CHECK_THROWS_AS(set_cpu_core_count(-3), ValueError);
  set_cpu_core_count(0);
  reset_intra_op_threads();
  CHECK(intra_op_threads(cpu(1)) == 0);
  CHECK(cpu_core_count() >= 1);
}
