#pragma once
// For tests only: makes device_threads::queue() fail as it does when the system cannot start a
// thread, so that the fallbacks of its callers (parallel_apply, the backward engine, the split
// collectives run the work on the calling thread) can be tested.
namespace wick::device_threads::testing {

/// The next `n` calls to device_threads::queue() throw std::system_error
/// (resource_unavailable_try_again), as std::thread's constructor does at the thread limit.
/// n = 0 cancels the ones left.
void fail_next_queue_calls(int n);
/// How many of those failures are left (0 once each has been thrown).
int failing_queue_calls_left();

}  // namespace wick::device_threads::testing
