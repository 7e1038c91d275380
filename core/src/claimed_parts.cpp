// ClaimedParts (Note [Claimed parts]).
#include "wick/core/claimed_parts.h"

#include <limits>
#include <utility>

#include "wick/core/error.h"
#include "wick/core/spin_wait.h"

namespace wick {

ClaimedParts::ClaimedParts(int64_t count, const std::function<void(int64_t)>& run)
    : count_(count), run_(&run), state_(static_cast<uint64_t>(count) << 32) {
  WICK_CHECK(count >= 0 && count <= std::numeric_limits<uint32_t>::max(),
             "ClaimedParts: {} parts; a call is cut into at most 2^32 - 1 parts", count);
}

int64_t ClaimedParts::claim(End end) {
  uint64_t s = state_.load(std::memory_order_relaxed);
  for (;;) {
    const int64_t front = front_of(s), back = back_of(s);
    if (front >= back) return -1;  // no write once exhausted: late threads only read
    const uint64_t next = end == End::Front ? s + 1 : s - (uint64_t{1} << 32);
    if (state_.compare_exchange_weak(s, next, std::memory_order_relaxed)) return end == End::Front ? front : back - 1;
  }
}

void ClaimedParts::run(int64_t k) {
  std::exception_ptr e;
  try {
    (*run_)(k);
  } catch (...) {
    e = std::current_exception();
  }
  if (e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::move(e);
    // This thread's reference to the exception is gone before the part counts as ended: the
    // caller may then rethrow it and free it while a late thread drops the last shared_ptr.
    e = nullptr;
  }
  if (ended_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
    std::lock_guard<std::mutex> lock(mutex_);  // the waiter checks under it: no lost wake-up
    all_ended_.notify_all();
  }
}

bool ClaimedParts::run_one(End end) {
  const int64_t k = claim(end);
  if (k < 0) return false;
  run(k);
  return true;
}

void ClaimedParts::finish() {
  while (run_one()) {
  }
  const auto ended = [&] { return ended_.load(std::memory_order_acquire) == count_; };
  spin_until(ended);
  std::unique_lock<std::mutex> lock(mutex_);
  all_ended_.wait(lock, ended);  // at once where the poll saw every part end
  // Taken out under the lock: a thread that still holds *this must not free what the caller
  // rethrows.
  std::exception_ptr error = std::move(error_);
  lock.unlock();
  if (error) std::rethrow_exception(error);
}

}  // namespace wick
