// The collectives of the MPI process group, on every rank (run by mpirun with 2 and 3 ranks).
// Expected values are hand-computed from each rank's known contribution.
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dist_test_util.h"

using namespace wick;
using RO = distributed::ReduceOp;

TEST_CASE("process group: rank and size come from the launcher", "[mpi]") {
  auto& g = test::world();
  CHECK(g.size() >= 1);
  CHECK(g.rank() >= 0);
  CHECK(g.rank() < g.size());
  CHECK(g.backend_name() == "mpi");
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) CHECK(g.size() == std::atoi(size));
  if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK")) CHECK(g.rank() == std::atoi(rank));
}

TEST_CASE("process group: all_reduce sums and averages, in place, on every rank", "[mpi]") {
  auto& g = test::world();
  const int n = g.size(), r = g.rank();
  // rank r contributes (r + 1) * [1, 2, 3]: the sum is n (n + 1) / 2 * [1, 2, 3].
  Tensor t = test::vec({1.0, 2.0, 3.0}).mul(r + 1);
  auto work = g.all_reduce(t, RO::Sum);
  work->wait();
  CHECK(work->is_completed());
  const double s = n * (n + 1) / 2.0;
  CHECK(t.to_vector<double>() == std::vector<double>{s, 2 * s, 3 * s});

  Tensor f = full({4}, static_cast<double>(r + 1), kFloat32);
  g.all_reduce(f, RO::Avg)->wait();
  CHECK(f.to_vector<float>() == std::vector<float>(4, static_cast<float>(s / n)));

  Tensor i = full({2}, static_cast<int64_t>(r), kInt64);
  g.all_reduce(i)->wait();
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>(2, static_cast<int64_t>(n * (n - 1) / 2)));

  Tensor b = full({2}, r == n - 1, kBool);  // logical or
  g.all_reduce(b)->wait();
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, true});
}

TEST_CASE("process group: a non-contiguous tensor is reduced through a staging copy", "[mpi]") {
  auto& g = test::world();
  Tensor base = arange(0, 6, 1, TensorOptions(kFloat64)).view({2, 3}).mul(g.rank() + 1);
  Tensor t = base.t();  // [3, 2], not contiguous
  REQUIRE_FALSE(t.is_contiguous());
  g.all_reduce(t)->wait();
  const double s = g.size() * (g.size() + 1) / 2.0;
  CHECK(base.to_vector<double>() == std::vector<double>{0, s, 2 * s, 3 * s, 4 * s, 5 * s});
}

TEST_CASE("process group: broadcast and all_gather", "[mpi]") {
  auto& g = test::world();
  const int n = g.size(), r = g.rank();
  const int root = n - 1;
  Tensor t = full({3}, static_cast<double>(r * 10), kFloat64);
  g.broadcast(t, root)->wait();
  CHECK(t.to_vector<double>() == std::vector<double>(3, root * 10.0));

  Tensor mine = test::vec({static_cast<double>(r), static_cast<double>(-r)});
  std::vector<Tensor> all;
  for (int k = 0; k < n; ++k) all.push_back(empty({2}, kFloat64));
  g.all_gather(all, mine)->wait();
  for (int k = 0; k < n; ++k) CHECK(all[k].to_vector<double>() == std::vector<double>{double(k), double(-k)});
  g.barrier()->wait();
}

TEST_CASE("process group: many collectives in flight complete in call order", "[mpi]") {
  auto& g = test::world();
  std::vector<Tensor> ts;
  std::vector<std::shared_ptr<distributed::Work>> works;
  for (int k = 0; k < 20; ++k) {
    ts.push_back(full({k + 1}, static_cast<double>(k), kFloat64));
    works.push_back(g.all_reduce(ts.back()));
  }
  for (int k = 0; k < 20; ++k) {
    works[k]->wait();
    CHECK(ts[k].to_vector<double>() == std::vector<double>(k + 1, static_cast<double>(k * g.size())));
  }
}

TEST_CASE("process group: mismatched shapes or dtypes fail on every rank, then the group works on", "[mpi]") {
  auto& g = test::world();
  const int r = g.rank();
  // The last rank passes one more element: every rank gets the same ValueError.
  Tensor t = zeros({r == g.size() - 1 ? 4 : 3}, kFloat64);
  try {
    g.all_reduce(t)->wait();
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("all_reduce"));
    CHECK_THAT(msg, Catch::Contains("[3]"));
    CHECK_THAT(msg, Catch::Contains(fmt::format("rank {}: all_reduce(sum) #", g.size() - 1)));
    CHECK_THAT(msg, Catch::Contains("[4]"));
  }
  CHECK(t.to_vector<double>() == std::vector<double>(t.numel(), 0.0));  // nothing was sent

  Tensor d = zeros({2}, r == 0 ? kFloat32 : kFloat64);
  CHECK_THROWS_AS(g.broadcast(d, 0)->wait(), ValueError);

  // One rank refuses its own arguments (a wrong number of outputs): it gets its own error, the
  // others an error that points at it.
  std::vector<Tensor> outs;
  for (int k = 0; k < g.size() + (r == 0 ? 1 : 0); ++k) outs.push_back(empty({1}, kFloat64));
  try {
    g.all_gather(outs, zeros({1}, kFloat64))->wait();
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    if (r == 0)
      CHECK_THAT(msg, Catch::Contains("output tensors"));
    else
      CHECK_THAT(msg, Catch::Contains("rank 0: all_gather #") && Catch::Contains("refused"));
  }
  // Still in step afterwards.
  Tensor ok = ones({2}, kFloat64);
  g.all_reduce(ok)->wait();
  CHECK(ok.to_vector<double>() == std::vector<double>(2, g.size()));
}

TEST_CASE("process group: a bad root is refused on that rank and fails everywhere", "[mpi]") {
  auto& g = test::world();
  Tensor t = zeros({1}, kFloat64);
  CHECK_THROWS_AS(g.broadcast(t, g.size())->wait(), Error);
}

TEST_CASE("process group: a collective is not completed on a rank before every rank has called it", "[mpi]") {
  // Rank 0 calls all_reduce at once and polls is_completed() without waiting; the others sleep
  // 50 ms first. On a loaded machine any rank may stall longer than that, so the test asserts
  // only what holds whatever the timing: rank 0's first poll that says completed ends after
  // every other rank began its call. Each rank reads the monotonic clock (one clock for every
  // process of a machine) right before its call, rank 0 also right after that poll; the times
  // are compared afterwards, when every rank runs on the same host.
  auto& g = test::world();
  const int r = g.rank();
  using Clock = std::chrono::steady_clock;
  auto now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  };
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  g.barrier()->wait();
  if (r != 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Tensor t = full({3}, static_cast<double>(r + 1), kFloat64);
  const int64_t called = now_ns();
  auto work = g.all_reduce(t);
  int64_t completed_seen = 0;
  if (r == 0) {
    const auto give_up = Clock::now() + std::chrono::seconds(20);  // the group's timeout ends a stuck job first
    while (!work->is_completed() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::microseconds(200));
    completed_seen = now_ns();
  }
  work->wait();
  CHECK(work->is_completed());
  const double s = g.size() * (g.size() + 1) / 2.0;
  CHECK(t.to_vector<double>() == std::vector<double>(3, s));

  const auto host_hash = static_cast<int64_t>(std::hash<std::string>{}(host));
  std::vector<int64_t> mine{host_hash, called, completed_seen};
  std::vector<Tensor> all;
  for (int k = 0; k < g.size(); ++k) all.push_back(empty({3}, kInt64));
  g.all_gather(all, from_blob(mine.data(), {3}, kInt64))->wait();
  bool one_host = true;
  for (int k = 1; k < g.size(); ++k) one_host = one_host && all[k][0].item<int64_t>() == all[0][0].item<int64_t>();
  if (!one_host) return;  // the clocks of two machines are not comparable
  const int64_t seen = all[0][2].item<int64_t>();
  for (int k = 1; k < g.size(); ++k) {
    INFO("rank " << k << " called " << (all[k][1].item<int64_t>() - all[0][1].item<int64_t>()) / 1000
                 << " us after rank 0; rank 0 saw the collective completed "
                 << (seen - all[0][1].item<int64_t>()) / 1000 << " us after its call");
    CHECK(seen >= all[k][1].item<int64_t>());
  }
}

TEST_CASE("process group: all_reduce of int64 with Avg is a TypeError, on every rank, then the group works on",
          "[mpi]") {
  // Avg is floating point only (process_group.h). Every rank refusing: each raises its own
  // TypeError. Rank 0 alone asking for Avg (the others Sum): rank 0 raises its TypeError, the
  // others the fingerprint's ValueError naming rank 0's refused call. Nothing is sent either way.
  auto& g = test::world();
  const int r = g.rank();
  Tensor i = full({2}, static_cast<int64_t>(r + 1), kInt64);
  try {
    g.all_reduce(i, RO::Avg)->wait();
    FAIL("expected a TypeError");
  } catch (const TypeError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("Avg needs a floating-point tensor"));
  }
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>(2, r + 1));

  try {
    g.all_reduce(i, r == 0 ? RO::Avg : RO::Sum)->wait();
    FAIL("expected an error");
  } catch (const TypeError& e) {
    CHECK(r == 0);
    CHECK_THAT(std::string(e.what()), Catch::Contains("Avg needs a floating-point tensor"));
  } catch (const ValueError& e) {
    CHECK(r != 0);
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("rank 0: all_reduce(avg) #"));
    CHECK_THAT(msg, Catch::Contains("refused"));
  }
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>(2, r + 1));

  g.all_reduce(i)->wait();  // Sum of int64 works
  const int64_t s = g.size() * (g.size() + 1) / 2;
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>(2, s));
  Tensor f = full({2}, static_cast<double>(r + 1), kFloat64);
  g.all_reduce(f, RO::Avg)->wait();
  CHECK(f.to_vector<double>() == std::vector<double>(2, static_cast<double>(s) / g.size()));
}

TEST_CASE("process group: ranks passing different roots to broadcast fail on every rank, then the group works on",
          "[mpi]") {
  // The root travels in the fingerprint's detail field: the last rank names root 1, the others
  // root 0, all valid roots. Every rank gets the same ValueError naming both roots; nothing is
  // sent.
  auto& g = test::world();
  const int r = g.rank(), last = g.size() - 1;
  Tensor t = full({2}, static_cast<double>(r), kFloat64);
  try {
    g.broadcast(t, r == last ? 1 : 0)->wait();
    FAIL("expected a ValueError");
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("the ranks' calls do not match"));
    CHECK_THAT(msg, Catch::Contains("rank 0: broadcast(root 0) #"));
    CHECK_THAT(msg, Catch::Contains(fmt::format("rank {}: broadcast(root 1) #", last)));
  }
  CHECK(t.to_vector<double>() == std::vector<double>(2, r));
  g.broadcast(t, last)->wait();
  CHECK(t.to_vector<double>() == std::vector<double>(2, last));
}
