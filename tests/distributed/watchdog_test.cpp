// The watchdog over the MPI backend's blocking calls (Note [Blocking data transfers]), in one
// process: a call that runs past the timeout is reported with its collective, a quick one never.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>

#include "blocking_watchdog.h"

using namespace std::chrono_literals;
using wick::distributed::detail::BlockingCallWatchdog;
using wick::distributed::detail::Fingerprint;

TEST_CASE("blocking watchdog: only a call past the timeout is reported, with its collective", "[watchdog]") {
  std::atomic<int> fired{0};
  std::atomic<double> waited_s{0};
  std::mutex m;
  Fingerprint seen;
  {
    // In the backend on_timeout ends the process; here it records what it was told.
    BlockingCallWatchdog dog(50ms, [&](const Fingerprint& f, double waited) {
      {
        std::lock_guard<std::mutex> lock(m);
        seen = f;
      }
      waited_s = waited;
      fired.fetch_add(1);
    });
    Fingerprint quick;
    quick.sequence = 7;
    for (int i = 0; i < 5; ++i) dog.run(quick, [] { std::this_thread::sleep_for(10ms); });
    std::this_thread::sleep_for(150ms);  // three times the timeout with nothing running
    CHECK(fired.load() == 0);

    Fingerprint slow;
    slow.sequence = 8;
    slow.numel = 12345;
    const auto start = std::chrono::steady_clock::now();
    dog.run(slow, [&] {
      while (fired.load() == 0 && std::chrono::steady_clock::now() - start < 5s) std::this_thread::sleep_for(1ms);
    });
    CHECK(fired.load() >= 1);
    CHECK(waited_s.load() > 0.05);
    std::lock_guard<std::mutex> lock(m);
    CHECK(seen.sequence == 8);
    CHECK(seen.numel == 12345);
  }  // the watchdog's thread ends with it
}
