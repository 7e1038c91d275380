#pragma once
// How long one cache line takes to move between two cores, measured by two threads that take
// turns writing one atomic (a ping-pong). Where two cores share a last-level cache the handoff
// takes tens of nanoseconds; where they do not (two chiplets, or a VM whose virtual CPUs the host
// places on two of them) it takes 150-200 ns, and every byte one core writes and the other then
// reads or writes costs that much more. DataParallel's collectives and optimizer step move
// megabytes between the devices' threads each step, so the benchmarks print this figure next to
// their ratios (docs/parallel.md, "13th session").
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace wick_bench {

/// The median of 5 runs of `rounds` round trips between this thread and a new one, pinned to
/// CPUs 0 and 1: nanoseconds per one-way handoff. Restores the caller's CPU affinity afterwards.
/// Returns a negative value, measuring nothing, where the process may not run on both CPUs 0
/// and 1 (taskset, cgroups): two spinning threads on one CPU would hand over once per time slice.
inline double cache_line_handoff_ns(int rounds = 100000) {
  cpu_set_t saved;
  if (pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) != 0 || !CPU_ISSET(0, &saved) ||
      !CPU_ISSET(1, &saved))
    return -1.0;
  const auto pin = [&](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
  };
  double runs[5];
  for (double& ns : runs) {
    alignas(64) std::atomic<int> turn{0};
    std::thread other([&] {
      pin(1);
      for (int i = 0; i < rounds; ++i) {
        while (turn.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        turn.store(2 * i + 2, std::memory_order_release);
      }
    });
    pin(0);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < rounds; ++i) {
      turn.store(2 * i + 1, std::memory_order_release);
      while (turn.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / (2.0 * rounds);
    other.join();
  }
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  std::sort(runs, runs + 5);
  return runs[2];
}

}  // namespace wick_bench
