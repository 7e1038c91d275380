#pragma once
// MPI as the communication thread of either backend uses it (Note [The communication thread],
// comm_thread.h). Every function here runs on that thread only; no header of MPI's is included,
// so an MPI_Request travels as a void*.
#include <chrono>
#include <functional>
#include <string>

#include "fingerprint.h"

namespace wick::distributed::detail {

/// This process's place in MPI_COMM_WORLD, and whether wick initialized MPI.
struct MpiWorld {
  int rank = 0;
  int size = 1;
  bool owns_mpi = false;  // start_mpi initialized MPI, so finish_mpi finalizes it
};

/// Initializes MPI with MPI_THREAD_FUNNELED unless the program already did (then it must have
/// asked for MPI_THREAD_SERIALIZED or more) and reads this rank and the world size into `world`.
/// BackendError when MPI_Init_thread fails, grants less than MPI_THREAD_FUNNELED (MPI is then
/// finalized again), or the program's thread level is too low.
void start_mpi(MpiWorld& world);

/// MPI_Finalize when start_mpi initialized MPI.
void finish_mpi(const MpiWorld& world);

/// Ends the job because `what` did not finish within the group's timeout (it waited
/// `waited_seconds`). Must not return.
using OnTimeout = std::function<void(const std::string& what, double waited_seconds)>;

/// Polls `request` (an MPI_Request*) until it completes: back to back, yielding the core after
/// each poll, for the first 100 ms, then spaced out by sleeps growing to 1 ms. Past `timeout` it
/// calls on_timeout(what, waited); should that return, the process exits with code 3.
void wait_mpi_request(void* request, const std::string& what, std::chrono::milliseconds timeout,
                      const OnTimeout& on_timeout);

/// The fingerprint exchange (Note [Collective fingerprints]): all-gathers `mine` from the `size`
/// ranks of MPI_COMM_WORLD, waited for as wait_mpi_request (what: "<describe(mine)> (the
/// fingerprint exchange before it)"), and returns compare_fingerprints' verdict: "" when every
/// rank proceeds, else the message every rank raises. With `all_callers_waiting`, also whether
/// every rank's record has caller_waiting set (the same answer on every rank).
std::string exchange_fingerprints(const Fingerprint& mine, int size, std::chrono::milliseconds timeout,
                                  const OnTimeout& on_timeout, bool* all_callers_waiting = nullptr);

}  // namespace wick::distributed::detail
