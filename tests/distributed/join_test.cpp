// Join over several joinables (Note [Join context], join.h): a Joinable of the test's own whose
// all-reduce counts the ranks still training (PyTorch's test_join.py idea, counts by hand),
// throw_on_early_termination, DistributedDataParallel with ZeroRedundancyOptimizer under one
// Join against DDP with the plain optimizer under join (bit for bit), and the refusals on a
// fake one-rank group (no MPI).
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::Join;
using distributed::Joinable;
using distributed::JoinNotification;
using distributed::JoinOptions;
using distributed::ProcessGroup;
using distributed::ZeroRedundancyOptimizer;

namespace {

/// Each iteration all-reduces a 1 (a rank still training) or, in its join hook, a 0: the sum is
/// the number of ranks still training. Its notification carries this rank's number + 1.
class Counter : public Joinable {
 public:
  explicit Counter(ProcessGroup& group) : group_(group) {}

  /// One iteration on a rank still training: returns the all-reduced count.
  double iteration() {
    const int64_t me = group_.rank() + 1;
    const JoinNotification n = notify_join_context(std::span<const int64_t>(&me, 1));
    notified_active.push_back(n.active);
    notified_payload.push_back(n.payload.at(0));
    Tensor one = ones({1}, kFloat64);
    group_.all_reduce(one)->wait();
    return one.item<double>();
  }

  ProcessGroup& join_process_group() const override { return group_; }
  std::string join_name() const override { return "Counter"; }
  size_t join_payload_size() const override { return 1; }
  void join_main_hook(const JoinNotification& n) override {
    shadowed_active.push_back(n.active);
    shadowed_payload.push_back(n.payload.at(0));
    Tensor zero = zeros({1}, kFloat64);
    group_.all_reduce(zero)->wait();
  }
  void join_post_hook(int last_joiner) override { post_hook_source = last_joiner; }
  void join_started(const JoinOptions&) override { ++started; }
  void join_ended() override { ++ended; }

  std::vector<int64_t> notified_active, notified_payload, shadowed_active, shadowed_payload;
  int post_hook_source = -1, started = 0, ended = 0;

 private:
  ProcessGroup& group_;
};

}  // namespace

TEST_CASE("join: a Joinable of one's own: the joined ranks shadow its all-reduce, counts by hand", "[mpi]") {
  auto& g = test::world();
  const int world = g.size(), rank = g.rank();
  // Rank r trains 2 + r iterations: in iteration k, the ranks r with 2 + r > k are active.
  auto iters = [](int r) { return int64_t{2} + r; };
  auto active_in = [&](int64_t k) {
    int64_t n = 0;
    for (int r = 0; r < world; ++r) n += iters(r) > k ? 1 : 0;
    return n;
  };
  auto payload_in = [&](int64_t k) {  // the sum of (r + 1) over the active ranks
    int64_t s = 0;
    for (int r = 0; r < world; ++r) s += iters(r) > k ? r + 1 : 0;
    return s;
  };
  Counter c(g);
  {
    Join join({&c});
    CHECK(c.started == 1);
    for (int64_t k = 0; k < iters(rank); ++k) {
      INFO("iteration " << k);
      CHECK(c.iteration() == static_cast<double>(active_in(k)));
    }
    join.join();
    CHECK(c.ended == 1);
    test::expect_error<StateError>([&] { join.join(); }, {"Join::join", "ended"});
  }
  CHECK(c.ended == 1);  // the destructor does not end it twice
  REQUIRE(c.notified_active.size() == static_cast<size_t>(iters(rank)));
  for (int64_t k = 0; k < iters(rank); ++k) {
    CHECK(c.notified_active[static_cast<size_t>(k)] == active_in(k));
    CHECK(c.notified_payload[static_cast<size_t>(k)] == payload_in(k));
  }
  // The iterations after this rank joined, each shadowed once, with the active ranks' sums.
  const int64_t after = iters(world - 1) - iters(rank);
  REQUIRE(c.shadowed_active.size() == static_cast<size_t>(after));
  for (int64_t j = 0; j < after; ++j) {
    CHECK(c.shadowed_active[static_cast<size_t>(j)] == active_in(iters(rank) + j));
    CHECK(c.shadowed_payload[static_cast<size_t>(j)] == payload_in(iters(rank) + j));
  }
  CHECK(c.post_hook_source == world - 1);  // the last joiner
  // Without a Join the notification communicates nothing: the world size and this rank's payload.
  c.notified_active.clear();
  c.notified_payload.clear();
  CHECK(c.iteration() == static_cast<double>(world));
  CHECK(c.notified_active == std::vector<int64_t>{world});
  CHECK(c.notified_payload == std::vector<int64_t>{rank + 1});
  // All ranks ending together: every rank is a last joiner, the highest is the source.
  {
    Join join({&c});
    for (int k = 0; k < 2; ++k) c.iteration();
    join.join();
  }
  CHECK(c.post_hook_source == world - 1);
}

TEST_CASE("join: throw_on_early_termination stops every rank at the same collective", "[mpi]") {
  auto& g = test::world();
  const int rank = g.rank();
  Counter c(g);
  int64_t done = 0;  // iterations completed
  bool raised = false;
  {
    Join join({&c}, {.throw_on_early_termination = true});
    try {
      for (int64_t k = 0; k < 2 + rank; ++k) {
        c.iteration();
        ++done;
      }
      join.join();
    } catch (const StateError& e) {
      raised = true;
      const std::string msg = e.what();
      if (rank == 0)
        CHECK(msg.find("ran out of data while") != std::string::npos);
      else
        CHECK(msg.find("throw_on_early_termination, so every rank stops here") != std::string::npos);
    }
  }
  // Rank 0 runs out after 2 iterations; the others raise at their third notification.
  CHECK(done == 2);
  CHECK(raised);
  CHECK(c.ended == 1);
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == g.size());
}

TEST_CASE(
    "join: DDP and ZeroRedundancyOptimizer under one Join train with uneven inputs as DDP with the plain "
    "optimizer under join",
    "[mpi]") {
  // Rank r trains 2 + r rounds (rank 0 joins first and still owns its shard), Adam with
  // amsgrad. The truth: the same data through DDP + plain Adam under enable_join()/join().
  // Bit for bit after every round on every rank still training: a joined rank's shard is
  // updated with the synchronised gradient (Note [A joined rank's shard]); and after join on
  // every rank, with the last joiner's optimizer state consolidated.
  auto& g = test::world();
  const int world = g.size(), rank = g.rank();
  const int64_t local = 2, rounds = 2 + world - 1;
  const optim::AdamOptions defaults = optim::AdamOptions(0.01).amsgrad(true);
  manual_seed(601);
  const Tensor x = randn({rounds, local * world, 5}, kFloat64), y = randn({rounds, local * world, 3}, kFloat64);
  for (const bool divide : {true, false}) {
    INFO("divide_by_initial_world_size " << divide);
    std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
    for (int k = 0; k < 2; ++k) {
      manual_seed(602);
      nets.push_back(make_mlp());
    }
    const auto pp = nets[0]->parameters(), pz = nets[1]->parameters();
    // The truth, run first: this rank's parameters after each of its rounds.
    std::vector<std::vector<Tensor>> expected;
    DistributedDataParallel plain_ddp(nets[0], tiny_buckets());
    optim::Adam plain(pp, defaults);
    plain_ddp.enable_join(divide);
    for (int64_t k = 0; k < 2 + rank; ++k) {
      plain.zero_grad();
      nn::F::mse_loss(plain_ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      plain.step();
      std::vector<Tensor> now;
      for (const Tensor& p : pp) now.push_back(p.detach().clone());
      expected.push_back(now);
    }
    plain_ddp.join();

    DistributedDataParallel zero_ddp(nets[1], tiny_buckets());
    ZeroRedundancyOptimizer zero(pz, distributed::optimizer_factory<optim::Adam>(defaults));
    {
      Join join({&zero_ddp, &zero}, {.divide_by_initial_world_size = divide});
      for (int64_t k = 0; k < 2 + rank; ++k) {
        INFO("round " << k);
        zero.zero_grad();
        nn::F::mse_loss(zero_ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
        zero.step();
        for (size_t i = 0; i < pz.size(); ++i) CHECK_ALLCLOSE(pz[i], expected[static_cast<size_t>(k)][i], 0.0, 0.0);
      }
      join.join();
    }
    for (size_t i = 0; i < pz.size(); ++i) {
      CHECK_ALLCLOSE(pz[i], pp[i], 0.0, 0.0);
      CHECK(test::same_on_every_rank(pz[i]));
    }
    // Every shard stepped in every round, so the consolidated state is the last joiner's Adam's.
    zero.consolidate_state_dict(world - 1);
    if (rank == world - 1) {
      const optim::OptimizerStateDict want = plain.state_dict();
      const optim::OptimizerStateDict& got = zero.state_dict();
      REQUIRE(got.state.keys() == want.state.keys());
      for (const auto& [key, t] : want.state) {
        INFO(key);
        CHECK_ALLCLOSE(got.state[key], t, 0.0, 0.0);
      }
    }
  }
}

namespace {

/// A one-rank group that runs nothing (the sum over one rank is the rank's own tensor).
class FakeGroup : public ProcessGroup {
 public:
  struct Done : distributed::Work {
    void wait() override {}
    bool is_completed() const override { return true; }
    double seconds() const override { return 0; }
  };
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend_name() const override { return "fake"; }
  std::chrono::milliseconds timeout() const override { return std::chrono::seconds(1); }
  Device device() const override { return Device(kCPU); }
  std::shared_ptr<distributed::Work> all_reduce(const Tensor&, distributed::ReduceOp,
                                                const distributed::CollectiveTag&) override {
    return std::make_shared<Done>();
  }
  std::shared_ptr<distributed::Work> broadcast(const Tensor&, int) override { return std::make_shared<Done>(); }
  std::shared_ptr<distributed::Work> all_gather(const std::vector<Tensor>& outputs, const Tensor& input) override {
    Tensor out = outputs.at(0);
    out.copy_(input);
    return std::make_shared<Done>();
  }
  std::shared_ptr<distributed::Work> barrier() override { return std::make_shared<Done>(); }
};

/// A Joinable on a given group that refuses throw_on_early_termination.
class Picky : public Joinable {
 public:
  explicit Picky(ProcessGroup& group) : group_(group) {}
  ProcessGroup& join_process_group() const override { return group_; }
  std::string join_name() const override { return "Picky"; }
  void join_check(const JoinOptions& o) const override {
    WICK_CHECK(!o.throw_on_early_termination, "Picky: no throw_on_early_termination");
  }
  void join_main_hook(const JoinNotification&) override {}
  void join_started(const JoinOptions&) override { ++started; }
  int started = 0;

 private:
  ProcessGroup& group_;
};

}  // namespace

TEST_CASE("join: refusals leave every joinable out of join", "[join]") {
  FakeGroup g1, g2;
  Picky a(g1), b(g1), other(g2);
  test::expect_error<ValueError>([&] { Join({}); }, {"Join: no joinables"});
  test::expect_error<ValueError>([&] { Join({&a, nullptr}); }, {"joinable 1 of 2 is null"});
  test::expect_error<ValueError>([&] { Join({&a, &b, &a}); }, {"Picky at position 2 is also at position 0"});
  test::expect_error<ValueError>([&] { Join({&a, &other}); }, {"position 1 runs on another process group"});
  test::expect_error<ValueError>(
      [&] {
        Join({&a, &b}, {.throw_on_early_termination = true});
      },
      {"Picky: no throw_on_early_termination"});
  CHECK(a.started == 0);
  CHECK(b.started == 0);
  {
    Join first({&a});
    CHECK(a.started == 1);
    test::expect_error<StateError>([&] { Join({&b, &a}); }, {"Picky at position 1 is already in a Join"});
    CHECK(b.started == 0);
  }
  Join again({&a, &b});  // the first one ended with its destructor
  CHECK(a.started == 2);
  // A joinable destroyed before its Join leaves it.
  auto gone = std::make_unique<Picky>(g1);
  Picky& gone_ref = *gone;
  Join with_gone({&gone_ref});
  gone.reset();
  with_gone.join();  // one rank: nobody to shadow; the post hooks run on what is left
  // enable false: nothing is exchanged, join() returns at once.
  Picky c(g1);
  Join off({&c}, {.enable = false});
  off.join();
}
