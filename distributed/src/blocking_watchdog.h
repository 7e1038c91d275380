#pragma once
// A watch over blocking MPI calls, so that a call that never returns still ends the job.
//
// Note [Blocking data transfers]
// At the sizes of DDP's buckets (0.25-25 MiB), Open MPI's blocking MPI_Allreduce runs 1.4-1.6x
// faster than its nonblocking MPI_Iallreduce driven by MPI_Test (two processes of one machine:
// 0.16 against 0.23 ms for 1 MiB of float32, 0.52 against 0.81 ms for 2.6 MiB). But a blocking
// call spins while a peer is late, taking a core from the compute threads, and cannot be polled
// for the timeout. So the MPI backend's all_reduce takes the blocking call only when it cannot
// cost compute: when, at the start of its fingerprint exchange (Note [Collective fingerprints]),
// the caller of every rank was waiting in Work::wait() (DDP's end of backward waiting for its
// buckets). Each rank's record carries that flag, so every rank reaches the same choice: MPI
// never matches a blocking collective with a nonblocking one. Otherwise the data moves through
// MPI_Iallreduce and the polled wait of Note [The communication thread]. By the time the
// blocking call starts, the exchange has shown that every rank has reached this collective with
// matching arguments, so a stalled or missing rank times out there, polled. What is left, a rank
// that stops in the middle of the transfer (killed: mpirun ends the job; stopped or stuck:
// nothing would), is this watchdog's: a thread that wakes every tenth of the timeout (at most
// once a second) and, when one blocking call has run past the timeout, prints the timeout
// message and ends the process, so that mpirun ends the job. It cannot call MPI_Abort (only the
// communication thread calls MPI), so it exits with status 3, as the polled path does after
// MPI_Abort.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "fingerprint.h"

namespace wick::distributed::detail {

class BlockingCallWatchdog {
 public:
  /// on_timeout(collective, seconds waited) runs on the watchdog's thread and must not return.
  using OnTimeout = std::function<void(const Fingerprint&, double)>;

  BlockingCallWatchdog(std::chrono::milliseconds timeout, OnTimeout on_timeout)
      : timeout_(timeout), on_timeout_(std::move(on_timeout)) {}
  ~BlockingCallWatchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  BlockingCallWatchdog(const BlockingCallWatchdog&) = delete;
  BlockingCallWatchdog& operator=(const BlockingCallWatchdog&) = delete;

  /// Runs call() (the blocking MPI call of `collective`) under watch. Called from one thread
  /// only (the communication thread); the watchdog's thread starts at the first call.
  template <class Call>
  void run(const Fingerprint& collective, Call&& call) {
    if (!thread_.joinable()) thread_ = std::thread(&BlockingCallWatchdog::main, this);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      collective_ = collective;
      since_ = std::chrono::steady_clock::now();
    }
    armed_.store(true, std::memory_order_release);
    struct Disarm {
      std::atomic<bool>& armed;
      ~Disarm() { armed.store(false, std::memory_order_release); }
    } disarm{armed_};
    call();
  }

 private:
  void main() {
    const auto period = std::clamp<std::chrono::milliseconds>(timeout_ / 10, std::chrono::milliseconds(1),
                                                              std::chrono::milliseconds(1000));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!cv_.wait_for(lock, period, [&] { return stopping_; })) {
      if (!armed_.load(std::memory_order_acquire)) continue;
      const auto waited = std::chrono::steady_clock::now() - since_;
      if (waited <= timeout_) continue;
      const Fingerprint collective = collective_;
      lock.unlock();
      on_timeout_(collective, std::chrono::duration<double>(waited).count());
      lock.lock();  // on_timeout_ does not return; keeps the loop well-formed if it did
    }
  }

  const std::chrono::milliseconds timeout_;
  const OnTimeout on_timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Fingerprint collective_{};                       // the call under watch (under mutex_)
  std::chrono::steady_clock::time_point since_{};  // when it started (under mutex_)
  std::atomic<bool> armed_{false};
  std::thread thread_;
};

}  // namespace wick::distributed::detail
