#pragma once
// Waiting for a CPU device's worker to sit idle, and setting budgets, for the tests of lent threads
// (Note [Idle device threads lend a hand], core/src/cpu/parallel_for.h).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "wick/core/cpu_threads.h"
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

/// Forgets every budget when it goes out of scope (a test case's first line).
struct ResetBudgets {
  ~ResetBudgets() { reset_intra_op_threads(); }
};

/// Forgets every budget, gives cpu:0 `budget` threads (0: none) and, with `lender`, gives cpu:1
/// one thread and waits until its worker is idle, so that it may take pieces of cpu:0's kernels.
/// False when cpu:1's worker did not become idle.
inline bool budget_with_lender(int budget, bool lender) {
  reset_intra_op_threads();
  if (budget > 0) set_intra_op_threads(Device("cpu:0"), budget);
  if (!lender) return true;
  set_intra_op_threads(Device("cpu:1"), 1);
  return wait_until_idle(Device("cpu:1"));
}

/// f() under budget_with_lender(budget, lender) (a failed REQUIRE when cpu:1 did not become
/// idle); every budget is forgotten again before it returns f's result.
template <class F>
auto with_budget(int budget, bool lender, F&& f) {
  REQUIRE(budget_with_lender(budget, lender));
  auto out = f();
  reset_intra_op_threads();
  return out;
}

}  // namespace wick::test
