#pragma once
// Helpers for the multi-process tests (tagged [mpi]; ctest runs them under mpirun with 2 and 3
// ranks, tests/CMakeLists.txt). Every rank runs the same cases in the same order, so their
// collectives line up; a failed REQUIRE on one rank leaves the others waiting until the
// group's timeout (30 s here) aborts the job, never a hang.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>

#include "support/allclose.h"
#include "wick/distributed/distributed.h"

namespace wick::test {

/// The default group, started on first use and kept for the whole test run (MPI starts once
/// per process); destroyed at exit. Its timeout is 30 s, or WICK_TEST_DIST_TIMEOUT_MS (the fault
/// tests shorten it).
inline distributed::ProcessGroup& world() {
  static struct Holder {
    Holder() {
      distributed::InitOptions o;
      o.timeout = std::chrono::seconds(30);
      if (const char* ms = std::getenv("WICK_TEST_DIST_TIMEOUT_MS"))
        o.timeout = std::chrono::milliseconds(std::atoll(ms));
      distributed::init_process_group(o);
    }
    ~Holder() { distributed::destroy_process_group(); }
  } holder;
  return distributed::default_group();
}

/// A float64 vector.
inline Tensor vec(const std::vector<double>& v) {
  return from_blob(v.data(), {static_cast<int64_t>(v.size())}, kFloat64);
}

/// True when `t` is bitwise the same on every rank (all_gather and compare with rank 0's).
inline bool same_on_every_rank(const Tensor& t) {
  auto& g = world();
  std::vector<Tensor> all;
  for (int r = 0; r < g.size(); ++r) all.push_back(wick::empty(t.sizes(), t.dtype()));
  g.all_gather(all, t.contiguous())->wait();
  const Tensor bytes0 = all[0];
  for (int r = 1; r < g.size(); ++r)
    if (std::memcmp(all[r].data_ptr(), bytes0.data_ptr(), t.nbytes()) != 0) return false;
  return true;
}

}  // namespace wick::test
