#pragma once
// One call's work, cut into parts that any thread may claim.
//
// Note [Claimed parts]
// Three things hand one call's work to other threads and wait for it: an intra-op parallel_for
// (to the helper pool, Note [Intra-op threads]), the same parallel_for lending pieces to idle
// device workers (Note [Idle device threads lend a hand]), and a local collective split over the
// devices' workers (Note [Local collectives use every device's thread]). All three follow one
// rule, kept here once:
// - Parts are claimed, not assigned: each part goes to the first thread that asks for it, once.
// - The caller claims parts too, and after the last claim waits only for parts another thread has
//   started. So a thread that is busy, asleep, or never comes only loses its share, and the call
//   cannot deadlock on a thread that waits for the caller.
// - The first exception a part throws is rethrown in the caller once every claimed part has
//   ended; the other parts still run (each writes only its own outputs).
// - The parts live in a shared_ptr that every thread handed the work holds: a thread that arrives
//   after the call has returned finds every part claimed and does nothing. The caller's function
//   is reached only through claimed parts, which all end before the call returns, so it may live
//   on the caller's stack.
// - The caller claims from the front (parts 0, 1, ...), every other thread from the back (the
//   last part, then the one before). Two threads that share a call split it at a point that
//   moves only with their speeds, so a thread touches the same end of the data call after call:
//   an optimizer's moments, a gradient the collective before wrote, stay in the cache of the core
//   that uses them. Handing parts out from one end instead scattered them over the cores at
//   random, and on cores without a shared cache every step paid for lines moving between them
//   (docs/parallel.md, "13th session").
// Who runs a part never changes what it computes; the callers decide how parts are cut and what
// each thread sets up around a part (its device, its trace event).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>

namespace wick {

class ClaimedParts {
 public:
  /// `count` parts; run(k) does part k. `run` is the caller's and must outlive finish().
  ClaimedParts(int64_t count, const std::function<void(int64_t)>& run);
  ClaimedParts(const ClaimedParts&) = delete;
  ClaimedParts& operator=(const ClaimedParts&) = delete;

  int64_t count() const { return count_; }
  /// Which end of the unclaimed parts a thread takes from: the caller's, or every other thread's.
  enum class End { Front, Back };
  /// Claims the lowest (Front) or highest (Back) unclaimed part: its index, or -1 when every part
  /// is claimed. Any thread; the caller claims from the front, the others from the back.
  int64_t claim(End end = End::Front);
  /// True when every part has been claimed (they may still be running).
  bool all_claimed() const {
    const uint64_t s = state_.load(std::memory_order_relaxed);
    return front_of(s) >= back_of(s);
  }
  /// Runs claimed part k and marks it ended; an exception is kept (the first one only), not thrown.
  void run(int64_t k);
  /// Claims (from `end`) and runs one part; false when none was left.
  bool run_one(End end = End::Front);
  /// The caller's end of the call: runs parts until none is left, waits for those that other
  /// threads started (polling first: Note [Spin before sleeping]), then rethrows the first
  /// exception any part threw.
  void finish();

 private:
  // The unclaimed parts are [front, back): front in the low 32 bits of state_, back in the high.
  static int64_t front_of(uint64_t s) { return static_cast<int64_t>(s & 0xffffffffu); }
  static int64_t back_of(uint64_t s) { return static_cast<int64_t>(s >> 32); }

  const int64_t count_;
  const std::function<void(int64_t)>* run_;
  std::atomic<uint64_t> state_;
  std::atomic<int64_t> ended_{0};
  std::mutex mutex_;  // guards error_; the last part notifies under it
  std::condition_variable all_ended_;
  std::exception_ptr error_;
};

}  // namespace wick
