// ClaimedParts (Note [Claimed parts], core/include/wick/core/claimed_parts.h): each part runs
// exactly once whoever claims it, the caller waits for parts other threads started, the first
// exception reaches the caller after every part ended, and a thread that arrives late does
// nothing. Runs under ThreadSanitizer in CI (.ci/run's tsan pass runs test_core).
#include "wick/core/claimed_parts.h"

#include <wick/wick.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace wick;

TEST_CASE("claimed parts: every part runs exactly once across the caller and three threads") {
  constexpr int64_t kParts = 200;
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> runs(kParts);
    const std::function<void(int64_t)> run = [&](int64_t k) { runs[static_cast<size_t>(k)].fetch_add(1); };
    auto parts = std::make_shared<ClaimedParts>(kParts, run);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([parts] {
        while (parts->run_one()) {
        }
      });
    parts->finish();
    // finish returned: every part has ended, whoever ran it.
    for (int64_t k = 0; k < kParts; ++k) REQUIRE(runs[static_cast<size_t>(k)].load() == 1);
    CHECK(parts->all_claimed());
    CHECK(parts->claim() == -1);
    for (auto& t : threads) t.join();
  }
}

TEST_CASE("claimed parts: the front and the back meet, each part claimed once") {
  const std::function<void(int64_t)> run = [](int64_t) {};
  ClaimedParts parts(5, run);
  CHECK(parts.claim(ClaimedParts::End::Back) == 4);
  CHECK(parts.claim() == 0);
  CHECK(parts.claim(ClaimedParts::End::Back) == 3);
  CHECK(parts.claim(ClaimedParts::End::Back) == 2);
  CHECK_FALSE(parts.all_claimed());
  CHECK(parts.claim() == 1);
  CHECK(parts.all_claimed());
  CHECK(parts.claim() == -1);
  CHECK(parts.claim(ClaimedParts::End::Back) == -1);
  ClaimedParts none(0, run);
  CHECK(none.all_claimed());
  CHECK(none.claim(ClaimedParts::End::Back) == -1);
}

TEST_CASE("claimed parts: a caller from the front and three threads from the back run each part once") {
  constexpr int64_t kParts = 301;
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> runs(kParts);
    std::vector<std::atomic<int>> by_caller(kParts);
    const std::thread::id caller = std::this_thread::get_id();
    const std::function<void(int64_t)> run = [&](int64_t k) {
      runs[static_cast<size_t>(k)].fetch_add(1);
      if (std::this_thread::get_id() == caller) by_caller[static_cast<size_t>(k)].store(1);
    };
    auto parts = std::make_shared<ClaimedParts>(kParts, run);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
      threads.emplace_back([parts] {
        while (parts->run_one(ClaimedParts::End::Back)) {
        }
      });
    parts->finish();
    for (int64_t k = 0; k < kParts; ++k) REQUIRE(runs[static_cast<size_t>(k)].load() == 1);
    // The caller's parts are a prefix: it claims from the front only.
    int64_t prefix = 0;
    while (prefix < kParts && by_caller[static_cast<size_t>(prefix)].load()) ++prefix;
    for (int64_t k = prefix; k < kParts; ++k) REQUIRE(by_caller[static_cast<size_t>(k)].load() == 0);
    for (auto& t : threads) t.join();
  }
}

TEST_CASE("claimed parts: the caller waits for a part another thread started") {
  std::atomic<bool> slow_started{false}, slow_ended{false};
  const std::function<void(int64_t)> run = [&](int64_t k) {
    if (k == 0) {
      slow_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the poll: the caller sleeps
      slow_ended = true;
    }
  };
  auto parts = std::make_shared<ClaimedParts>(4, run);
  REQUIRE(parts->claim() == 0);
  std::thread other([parts] { parts->run(0); });
  while (!slow_started) std::this_thread::yield();
  parts->finish();  // runs parts 1..3, then waits for part 0
  CHECK(slow_ended.load());
  other.join();
}

TEST_CASE("claimed parts: the first exception reaches the caller after every part ended") {
  std::atomic<int> ended{0};
  const std::function<void(int64_t)> run = [&](int64_t k) {
    ended.fetch_add(1);
    if (k == 1) throw std::runtime_error("part 1 failed");
    if (k == 3) throw std::logic_error("part 3 failed");
  };
  auto parts = std::make_shared<ClaimedParts>(6, run);
  // One thread takes parts 1 and 3 in order, so part 1's exception is the first kept.
  REQUIRE(parts->claim() == 0);
  REQUIRE(parts->claim() == 1);
  parts->run(1);
  parts->run(0);
  REQUIRE(parts->claim() == 2);
  REQUIRE(parts->claim() == 3);
  parts->run(3);
  parts->run(2);
  CHECK_THROWS_WITH(parts->finish(), "part 1 failed");
  CHECK(ended.load() == 6);  // parts 4 and 5 still ran
}

TEST_CASE("claimed parts: a thread that arrives after the call returned does nothing") {
  std::shared_ptr<ClaimedParts> kept;
  {
    int calls = 0;
    const std::function<void(int64_t)> run = [&](int64_t) { ++calls; };  // dies with this scope
    auto parts = std::make_shared<ClaimedParts>(3, run);
    parts->finish();
    CHECK(calls == 3);
    kept = parts;  // as a queued task would keep it
  }
  CHECK_FALSE(kept->run_one());  // must not reach the dead function
  CHECK(kept->claim() == -1);
}
