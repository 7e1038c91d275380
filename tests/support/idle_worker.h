#pragma once
// Waiting for a CPU device's worker to sit idle, for the tests of lent threads (Note [Idle device
// threads lend a hand], core/src/cpu/parallel_for.h).
#include <atomic>
#include <chrono>
#include <thread>

#include "wick/core/device_threads.h"

namespace wick::test {

/// Starts d's worker if needed and returns once it waits, idle, for work (false after 10 s).
inline bool wait_until_idle(Device d) {
  TaskQueue* q = device_threads::queue(d);
  if (q == nullptr) return false;
  std::atomic<bool> ran{false};
  q->push({1, [&] { ran = true; }});
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(ran && q->idle())) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace wick::test
