// DistributedDataParallel's join (Note [Join]) combined with no_sync() intervals and with
// find_unused_parameters, on 2 and 3 ranks (mpirun), with uneven inputs per rank, against one
// process in float64. PyTorch's _run_uneven_inputs_test with sync_interval > 1 and its
// UnusedParamModule cases; the final model is the one PyTorch's _sync_final_model picks: the
// highest of the last joiners, the ranks that ran the most forwards.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

namespace {

/// One forward of a rank under join: a synchronised training step, a training step inside
/// no_sync() (the optimizer steps on the rank's own gradient, as PyTorch's test does, so the
/// ranks' models part), or a forward without grad (an evaluation).
enum class Step { Synced, Local, Eval };

/// Each rank's steps; step k of every rank runs in round k, on that rank's rows of batch k.
using Schedule = std::vector<std::vector<Step>>;

/// The rank whose model every rank holds after join: PyTorch's _sync_final_model takes
/// _find_common_rank over the last joiners (the ranks that ran the most forwards, with or
/// without grad, so that their join found no rank active), ties going to the highest.
int last_joiner(const Schedule& s) {
  int best = 0;
  for (int r = 0; r < static_cast<int>(s.size()); ++r)
    if (s[r].size() >= s[static_cast<size_t>(best)].size()) best = r;
  return best;
}

std::vector<Tensor> snapshot(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const Tensor& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

/// True when every parameter of `a` is close to `b`'s (the models have not parted).
bool same_model(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!test::allclose(a[i], b[i], 1e-9, 0.0).ok) return false;
  return true;
}

/// Runs `schedule` under enable_join()/join() with plain SGD, checking this rank's parameters
/// after each of its steps and every rank's after join against one process that simulates each
/// rank's own model: a synchronised step applies the sum of the synchronising ranks' gradients
/// (each at its own rank's parameters) divided by the world size (joined ranks add zeros) or,
/// with divide_by_initial_world_size false, by the number of ranks still training in that
/// round; a local step the rank's own gradient.
void run_schedule(const Schedule& schedule, uint64_t seed, bool divide_by_initial_world_size = true) {
  auto& g = test::world();
  const int world = g.size();
  REQUIRE(schedule.size() == static_cast<size_t>(world));
  const int64_t local = 2;
  const double lr = 0.1;
  size_t rounds = 0;
  for (const auto& s : schedule) rounds = std::max(rounds, s.size());
  manual_seed(seed);
  const Tensor x = randn({static_cast<int64_t>(rounds), local * world, 5}, kFloat64),
               y = randn({static_cast<int64_t>(rounds), local * world, 3}, kFloat64);

  // The truth: every rank's model, in this process.
  std::vector<std::shared_ptr<nn::SequentialImpl>> models;
  std::vector<std::unique_ptr<optim::SGD>> opts;
  for (int r = 0; r < world; ++r) {
    manual_seed(seed + 1);
    models.push_back(make_mlp());
    opts.push_back(std::make_unique<optim::SGD>(models.back()->parameters(), optim::SGDOptions(lr)));
  }
  std::vector<std::vector<Tensor>> mine_after;  // this rank's parameters after each of its steps
  for (size_t k = 0; k < rounds; ++k) {
    auto step_of = [&](int r) { return k < schedule[r].size() ? std::optional<Step>(schedule[r][k]) : std::nullopt; };
    std::vector<Tensor> sum;  // of the synchronising ranks' gradients
    int64_t active = 0;       // ranks still training in this round
    for (int r = 0; r < world; ++r) active += step_of(r) ? 1 : 0;
    const int64_t divisor = divide_by_initial_world_size ? world : active;
    for (int r = 0; r < world; ++r) {
      const auto step = step_of(r);
      if (!step || *step == Step::Eval) continue;
      opts[r]->zero_grad();
      const auto kk = static_cast<int64_t>(k);
      nn::F::mse_loss(models[r]->forward_tensor(rows_of(x[kk], local, r)), rows_of(y[kk], local, r)).backward();
      if (*step != Step::Synced) continue;
      const auto params = models[r]->parameters();
      for (size_t i = 0; i < params.size(); ++i) {
        if (i < sum.size())
          sum[i] = sum[i] + params[i].grad();
        else
          sum.push_back(params[i].grad().clone());
      }
    }
    for (int r = 0; r < world; ++r) {
      const auto step = step_of(r);
      if (!step || *step == Step::Eval) continue;
      if (*step == Step::Synced) {
        const auto params = models[r]->parameters();
        for (size_t i = 0; i < params.size(); ++i) Tensor(params[i]).set_grad(sum[i].div(divisor));
      }
      opts[r]->step();
    }
    if (k < schedule[g.rank()].size()) mine_after.push_back(snapshot(*models[g.rank()]));
  }
  const int source = last_joiner(schedule);
  const std::vector<Tensor> expected = snapshot(*models[source]);
  for (int r = 0; r < world; ++r) {  // the schedule tells the candidates apart
    INFO("rank " << r << "'s model against rank " << source << "'s");
    if (r != source) CHECK_FALSE(same_model(snapshot(*models[r]), expected));
  }

  manual_seed(seed + 1);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  optim::SGD opt(net->parameters(), optim::SGDOptions(lr));
  const auto params = net->parameters();
  ddp.enable_join(divide_by_initial_world_size);
  const auto& steps = schedule[g.rank()];
  for (size_t k = 0; k < steps.size(); ++k) {
    const auto kk = static_cast<int64_t>(k);
    if (steps[k] == Step::Eval) {
      NoGradGuard no_grad;
      ddp.forward(mine(x[kk], local));
    } else {
      opt.zero_grad();
      if (steps[k] == Step::Local) {
        auto guard = ddp.no_sync();
        nn::F::mse_loss(ddp.forward(mine(x[kk], local)), mine(y[kk], local)).backward();
      } else {
        nn::F::mse_loss(ddp.forward(mine(x[kk], local)), mine(y[kk], local)).backward();
      }
      opt.step();
    }
    INFO("rank " << g.rank() << " after its step " << k);
    for (size_t i = 0; i < params.size(); ++i) CHECK_ALLCLOSE(params[i], mine_after[k][i], 1e-12, 0.0);
  }
  ddp.join();
  INFO("after join: rank " << source << "'s model");
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK_ALLCLOSE(params[i], expected[i], 1e-12, 0.0);
    CHECK(test::same_on_every_rank(params[i]));
  }
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == world);
}

}  // namespace

TEST_CASE(
    "ddp: join with no_sync intervals, each rank steps on its own gradients in between, the final model is "
    "the highest last joiner's",
    "[mpi]") {
  // PyTorch's _run_uneven_inputs_test with sync_interval 2: rounds 0, 2, 4 synchronise, 1 and 3
  // run inside no_sync, and every round ends with an optimizer step, so the ranks' models part
  // at each local step. Every rank but the last runs 5 rounds, the last 3: the last joiners are
  // ranks 0 .. W-2, and the final model is rank W-2's (with 3 ranks: rank 1's, not rank 0's,
  // although both trained as long).
  const int world = test::world().size();
  Schedule s;
  for (int r = 0; r < world; ++r) {
    s.push_back({Step::Synced, Step::Local, Step::Synced});
    if (r < world - 1) s.back().insert(s.back().end(), {Step::Local, Step::Synced});
  }
  run_schedule(s, 201);
}

TEST_CASE(
    "ddp: join with divide_by_initial_world_size false averages each step over the ranks still training, "
    "with divide true over the world",
    "[mpi]") {
  // PyTorch's join(divide_by_initial_world_size=False): rank r trains 2 + r synchronised rounds
  // (one no_sync round in the middle), so the ranks join one after another and the divisor goes
  // W, W - 1, ..., 1. The same schedule divided by the world size ends elsewhere (the last
  // round has one rank active), so a divisor that ignored the flag fails one of the two runs.
  const int world = test::world().size();
  Schedule s;
  for (int r = 0; r < world; ++r) {
    s.push_back({Step::Synced, Step::Local});
    for (int k = 0; k < r + 1; ++k) s.back().push_back(Step::Synced);
  }
  run_schedule(s, 221, /*divide_by_initial_world_size=*/false);
  run_schedule(s, 221, /*divide_by_initial_world_size=*/true);
}

TEST_CASE("ddp: under join a forward without grad counts toward the last joiner, as every forward in PyTorch",
          "[mpi]") {
  // Rank 0 trains 4 rounds (synced, local, synced, local) and then evaluates once more without
  // grad; the last rank trains the same 4 rounds; any rank in between stops after 3. Every
  // forward notifies PyTorch's join context, so rank 0 alone joins last and its model is the
  // final one. wick used to count forwards with grad only: rank 0 and the last rank tied at 4,
  // and the last rank's model (another local step) was taken.
  const int world = test::world().size();
  Schedule s;
  for (int r = 0; r < world; ++r) {
    s.push_back({Step::Synced, Step::Local, Step::Synced});
    if (r == 0 || r == world - 1) s.back().push_back(Step::Local);
    if (r == 0) s.back().push_back(Step::Eval);
  }
  REQUIRE(last_joiner(s) == 0);
  run_schedule(s, 211);
}

TEST_CASE("ddp: join with find_unused_parameters, a branch that each rank uses in some rounds only", "[mpi]") {
  // Rank r trains 2 + 2r rounds; it uses fc2 in round k when k + r is even, fc3 never. So fc2 is
  // locally unused on some ranks, and globally unused in rounds where every rank still training
  // skips it (with 2 ranks: round 2, rank 0 having joined), while the joined ranks shadow the
  // buckets and the used-parameter map. Every rank still training holds the same model: the
  // truth is one model stepping on the active ranks' losses, summed and divided by the world
  // size.
  auto& g = test::world();
  const int world = g.size();
  const int64_t local = 2;
  auto iters = [](int r) { return int64_t{2} + 2 * r; };
  auto uses_fc2 = [](int64_t k, int r) { return (k + r) % 2 == 0; };
  const int64_t rounds = iters(world - 1);
  manual_seed(221);
  auto reference = std::make_shared<Branchy>();
  manual_seed(221);
  auto net = std::make_shared<Branchy>();
  DistributedDataParallel ddp(net, tiny_buckets_find_unused());
  optim::SGD opt_ref(reference->parameters(), optim::SGDOptions(0.1));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  manual_seed(222);
  const Tensor x = randn({rounds, local * world, 4}, kFloat64), y = randn({rounds, local * world, 3}, kFloat64);
  std::vector<std::vector<Tensor>> after;  // the reference's parameters after each round
  for (int64_t k = 0; k < rounds; ++k) {
    opt_ref.zero_grad();
    Tensor total;
    for (int r = 0; r < world; ++r) {
      if (k >= iters(r)) continue;
      Tensor l = nn::F::mse_loss(call(*reference, rows_of(x[k], local, r), uses_fc2(k, r)), rows_of(y[k], local, r));
      total = total.defined() ? total + l : l;
    }
    total.div(world).backward();
    opt_ref.step();
    after.push_back(snapshot(*reference));
  }
  ddp.enable_join();
  for (int64_t k = 0; k < iters(g.rank()); ++k) {
    opt.zero_grad();
    nn::F::mse_loss(call(ddp, mine(x[k], local), uses_fc2(k, g.rank())), mine(y[k], local)).backward();
    opt.step();
    INFO("round " << k);
    const auto p = net->parameters();
    for (size_t i = 0; i < p.size(); ++i) CHECK_ALLCLOSE(p[i], after[k][i], 1e-12, 0.0);
  }
  ddp.join();
  for (const auto& [name, p] : net->named_parameters()) {
    INFO(name);
    CHECK_ALLCLOSE(p, reference->get_parameter(name), 1e-12, 0.0);
    CHECK(test::same_on_every_rank(p));
    if (name.rfind("fc3", 0) == 0) CHECK_FALSE(p.grad().defined());
  }
  Tensor one = ones({1}, kFloat64);  // the group is still in step
  g.all_reduce(one)->wait();
  CHECK(one.item<double>() == world);
}

TEST_CASE("ddp: a rank with no batches joins before the first backward and shadows the bucket rebuild", "[mpi]") {
  // Rank 0 joins at once, so the active ranks' first synchronised backward, whose end rebuilds
  // the buckets (Note [Bucket rebuild]), is shadowed by a rank that never saw a gradient; it
  // must take part in the rebuild's all-reduce and adopt the same layout, or the next round's
  // bucket collectives no longer pair.
  const int world = test::world().size();
  Schedule s(static_cast<size_t>(world), {Step::Synced, Step::Local, Step::Synced});
  s[0].clear();
  run_schedule(s, 231);
}
