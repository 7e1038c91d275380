#pragma once
// For tests only: makes device_threads::queue() return nullptr as it does when the system cannot
// start a thread, so that the fallbacks of its callers (parallel_apply, the backward engine, the
// split collectives run the work on the calling thread) can be tested.
namespace wick::device_threads::testing {

/// The next `n` calls to device_threads::queue() return nullptr, as when std::thread's
/// constructor fails at the thread limit. n = 0 cancels the ones left.
void fail_next_queue_calls(int n);
/// How many of those failures are left (0 once each has been thrown).
int failing_queue_calls_left();

}  // namespace wick::device_threads::testing
