#pragma once
// Waiting for another thread without falling asleep at once.
//
// Note [Spin before sleeping]
// Waking a thread that sleeps on a condition variable costs tens of microseconds (measured here:
// about 50 us from notify to the worker running, on a 2-core VM), and a DataParallel step hands
// work between the caller and the device threads several times: to start the replicas, to collect
// their outputs, at every backward node that crosses devices, and for each collective. So a device
// worker that finds its queue empty, a thread waiting for a WaitGroup and a collective waiting for
// its parts first poll for up to kSpinWait, as OpenMP's and OpenBLAS's workers do, and only then
// sleep. The poll pauses the core between checks and yields it every few checks, so a thread that
// spins on an oversubscribed machine (ctest -j, mpirun --oversubscribe) gives way to those that have
// work. It changes no result, only when a waiting thread notices that it may go on.
#include <chrono>
#include <thread>

namespace wick {

/// How long a waiting thread polls before it sleeps (Note [Spin before sleeping]).
inline constexpr std::chrono::microseconds kSpinWait{200};

/// Polls `ready` until it returns true (then true) or `limit` has passed (then false).
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::microseconds limit = kSpinWait) {
  if (ready()) return true;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (int i = 1;; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (ready()) return true;
    if (i % 16 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::yield();
    }
  }
}

}  // namespace wick
