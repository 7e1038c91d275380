// MPI on the communication thread (mpi_world.h, Note [The communication thread]).
#include "mpi_world.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "wick/core/error.h"

namespace wick::distributed::detail {

namespace {
// How long a request is polled back to back (yielding the core between polls) before the polls
// are spaced out (Note [The communication thread]).
constexpr auto kSpinFor = std::chrono::milliseconds(100);
}  // namespace

void start_mpi(MpiWorld& world) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (initialized) {
    MPI_Query_thread(&provided);
    WICK_CHECK_T(BackendError, provided >= MPI_THREAD_SERIALIZED,
                 "init_process_group: MPI was initialized by the program with thread level {}, but wick's "
                 "communication thread needs MPI_THREAD_SERIALIZED or more; let init_process_group initialize MPI",
                 provided);
  } else {
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    WICK_CHECK_T(BackendError, rc == MPI_SUCCESS, "init_process_group: MPI_Init_thread failed with code {}", rc);
    // MPI may grant less than asked. MPI_THREAD_SINGLE promises a process with one thread only,
    // and this process has at least two (the caller's and this one), so MPI's internal state would
    // not be guarded: refuse it rather than risk silent corruption. Every rank runs the same MPI
    // library and gets the same level, so every rank refuses alike.
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      WICK_FAIL_T(BackendError,
                  "init_process_group: this MPI library grants thread level {} (MPI_THREAD_SINGLE) where wick's "
                  "communication thread needs MPI_THREAD_FUNNELED ({}) or more: every MPI call runs on that thread, "
                  "while the program runs others. Use an MPI built with thread support (Open MPI's default)",
                  provided, MPI_THREAD_FUNNELED);
    }
    world.owns_mpi = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
}

void finish_mpi(const MpiWorld& world) {
  if (world.owns_mpi) MPI_Finalize();
}

void wait_mpi_request(void* request, const std::string& what, std::chrono::milliseconds timeout,
                      const OnTimeout& on_timeout) {
  auto* req = static_cast<MPI_Request*>(request);
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return;
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > timeout) {
      on_timeout(what, std::chrono::duration<double>(waited).count());
      std::_Exit(3);  // never continue past a timeout
    }
    if (waited < kSpinFor) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
}

std::string exchange_fingerprints(const Fingerprint& mine, int size, std::chrono::milliseconds timeout,
                                  const OnTimeout& on_timeout, bool* all_callers_waiting) {
  constexpr int kWords = sizeof(Fingerprint) / sizeof(int64_t);
  std::vector<Fingerprint> all(static_cast<size_t>(size));
  MPI_Request request;
  MPI_Iallgather(&mine, kWords, MPI_INT64_T, all.data(), kWords, MPI_INT64_T, MPI_COMM_WORLD, &request);
  wait_mpi_request(&request, describe(mine) + " (the fingerprint exchange before it)", timeout, on_timeout);
  if (all_callers_waiting)
    *all_callers_waiting = std::all_of(all.begin(), all.end(), [](const Fingerprint& f) { return f.caller_waiting; });
  return compare_fingerprints(all);
}

}  // namespace wick::distributed::detail
