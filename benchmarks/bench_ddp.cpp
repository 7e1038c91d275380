// DistributedDataParallel throughput on CPU processes, in one run under mpirun:
//
//   mpirun -np 2 bench_ddp [--rounds N] [--steps N] [--model cnn|mlp] [--json PATH]
//   (defaults 5 rounds, 20 steps, both models)
//
// For the Fashion-MNIST demo's CNN (examples/fashion_mnist_net.h) and an MLP 784-512-512-10, a
// training step (forward, cross-entropy, backward, Adam) with 128 images per worker, in these
// configurations:
//
//   1 process, 1 thread     rank 0 alone on cpu:0, one OpenBLAS thread: the baseline
//   DataParallel            rank 0 alone, cpu:0..cpu:N-1 with one thread each, batch 128 * N
//   DDP                     every rank, cpu:0 with one thread, 128 images per rank
//   DDP, bucket views       the same with gradient_as_bucket_view (Note [Gradients as bucket
//                           views]): no copy of the gradients back out of the buckets
//   DDP, sharded Adam       DDP with ZeroRedundancyOptimizer(Adam) (Note [Sharded optimizer
//                           state]): each rank keeps the Adam state of its share of the
//                           parameters and broadcasts them after its step; it also prints the
//                           state each rank holds against plain Adam's
//   ..., parameter buckets  the same with parameters_as_bucket_view (Note [Parameters as bucket
//                           views]): one broadcast per rank instead of one per parameter
//   DDP, under join         DDP after enable_join() (Note [Join context]): what support for
//                           uneven inputs costs, one small all-reduce before every forward
//   separate processes      DDP's ceiling: every rank trains a model of its own on 128 images,
//                           at the same time, with no communication; DDP's rate as a share of
//                           this one is what its buckets and all-reduces cost on the machine
//
// While rank 0 runs the single-process configurations the other ranks wait in a barrier whose
// communication thread sleeps between polls after its first 100 ms of polling with yields (Note
// [The communication thread]); rank 0 starts them 0.2 s after the barrier, once the others
// sleep, so they leave the cores to rank 0 (without the pause, DataParallel's first steps of
// each round ran at 6.5 ms instead of 4). Configurations alternate in rounds, so load from
// other processes hits them alike; the median round is reported with its ratio to the baseline. For DDP it also
// reports how much of the all-reduce time was hidden behind backward: 1 - (time the end of
// backward waited for the buckets) / (time the buckets' all-reduces took), clamped to [0, 1].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../examples/fashion_mnist_net.h"
#include "rank_max.h"
#include "round_stats.h"
#include "wick/autograd/functions.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/core/openblas.h"
#include "wick/distributed/distributed.h"
#include "wick/nn/optim/optim.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int64_t kBatch = 128;  // per worker

std::shared_ptr<nn::Module> make_mlp() {
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 512), nn::ReLU(),
                        nn::Linear(512, 10));
}

enum class Kind { Single, DataParallel, Ddp, DdpBucketView, DdpZero, DdpZeroBuckets, DdpJoin };

// Bytes of optimizer state `opt` holds for `params` (those it has state for).
int64_t state_bytes(const optim::Optimizer& opt, const std::vector<Tensor>& params) {
  int64_t bytes = 0;
  for (const Tensor& p : params)
    if (const optim::ParamState* s = opt.state(p))
      for (const auto& [name, t] : s->buffers) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

// One configuration of one model, ready to step.
class Trainer {
 public:
  Trainer(const std::function<std::shared_ptr<nn::Module>()>& make, Kind kind, int world) : kind_(kind) {
    manual_seed(0);
    net_ = make();
    model_ = net_;
    int64_t batch = kBatch;
    if (kind == Kind::DataParallel) {
      for (int d = 0; d < world; ++d) devices_.emplace_back(DeviceType::CPU, d);
      model_ = std::make_shared<parallel::DataParallel>(net_, devices_);
      batch = kBatch * world;
    } else {
      devices_ = {Device("cpu:0")};
    }
    const bool zero = kind == Kind::DdpZero || kind == Kind::DdpZeroBuckets;
    if (kind == Kind::Ddp || kind == Kind::DdpBucketView || kind == Kind::DdpJoin || zero) {
      distributed::DistributedDataParallelOptions o;
      o.gradient_as_bucket_view = kind == Kind::DdpBucketView;
      ddp_ = std::make_shared<distributed::DistributedDataParallel>(net_, o);
      model_ = ddp_;
      // Every rank runs as many steps: the Join ends with the Trainer, without its loop.
      if (kind == Kind::DdpJoin) ddp_->enable_join();
    }
    if (zero) {
      distributed::ZeroRedundancyOptimizerOptions o;
      o.parameters_as_bucket_view = kind == Kind::DdpZeroBuckets;
      zero_ = std::make_unique<distributed::ZeroRedundancyOptimizer>(
          net_->parameters(), distributed::optimizer_factory<optim::Adam>(optim::AdamOptions(1e-3)), o);
    } else
      opt_ = std::make_unique<optim::Adam>(net_->parameters(), optim::AdamOptions(1e-3));
    x_ = randn({batch, 1, 28, 28});
    y_ = randint(0, 10, {batch});
  }
  // Seconds per step over `steps` steps.
  double run(int steps) {
    // Only the devices in use get a budget: after the DataParallel configuration, cpu:1's idle
    // worker would otherwise lend itself to this process's one-device configurations (Note [Idle
    // device threads lend a hand]), a second core beside the other ranks'.
    reset_intra_op_threads();
    for (const auto& d : devices_) set_intra_op_threads(d, 1);
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) {
      if (zero_)
        zero_->zero_grad();
      else
        opt_->zero_grad();
      Tensor loss = nn::F::cross_entropy(model_->forward_tensor(x_), y_);
      loss.backward();
      if (zero_)
        zero_->step();
      else
        opt_->step();
      (void)loss.item<float>();
    }
    return std::chrono::duration<double>(Clock::now() - t0).count() / steps;
  }
  distributed::DistributedDataParallel* ddp() const { return ddp_.get(); }
  /// Bytes of Adam state this rank holds.
  int64_t optimizer_state_bytes() const {
    return zero_ ? state_bytes(zero_->optim(), net_->parameters()) : state_bytes(*opt_, net_->parameters());
  }

 private:
  Kind kind_;
  std::vector<Device> devices_;
  std::shared_ptr<nn::Module> net_, model_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
  std::unique_ptr<optim::Optimizer> opt_;
  std::unique_ptr<distributed::ZeroRedundancyOptimizer> zero_;
  Tensor x_, y_;
};

using wick_bench::loadavg;
using wick_bench::max_over_ranks;
using wick_bench::median;

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, steps = 20;
  std::string json, only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--steps"))
      steps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--json"))
      json = argv[i + 1];
    else if (!std::strcmp(argv[i], "--model"))
      only = argv[i + 1];
  }
  auto group = distributed::init_process_group();
  const int world = group->size(), rank = group->rank();
  const bool lead = rank == 0;
  if (world < 2) {
    std::fprintf(stderr, "bench_ddp: run it with at least 2 processes: mpirun -np 2 bench_ddp\n");
    return 2;
  }
  set_flush_denormal(true);  // as the demo (Note [Denormals])
  struct Model {
    const char* key;  // --model's value
    const char* name;
    std::function<std::shared_ptr<nn::Module>()> make;
  };
  std::vector<Model> models;
  for (Model m : {Model{"cnn", "CNN (conv16-conv32-fc128)", [] { return fashion::make_net(); }},
                  Model{"mlp", "MLP (784-512-512-10)", make_mlp}})
    if (only.empty() || only == m.key) models.push_back(m);
  if (lead)
    std::printf(
        "%d processes, %lld images per worker per step, Adam, %d rounds of %d steps (median round), load "
        "average %s at start\n",
        world, static_cast<long long>(kBatch), rounds, steps, loadavg().c_str());
  if (lead) std::printf("%s\n", wick::openblas_summary().c_str());  // Note [OpenBLAS's kernels]
  std::string out = "{\"world\": " + std::to_string(world) + ", \"models\": [";
  for (size_t mi = 0; mi < models.size(); ++mi) {
    const Model& m = models[mi];
    std::unique_ptr<Trainer> single, dp;
    if (lead) {
      single = std::make_unique<Trainer>(m.make, Kind::Single, world);
      dp = std::make_unique<Trainer>(m.make, Kind::DataParallel, world);
      single->run(3);  // warm-up: threads, allocator caches
      dp->run(3);
    }
    // The separate processes: every rank trains a single-process model of its own, at once.
    Trainer ddp(m.make, Kind::Ddp, world), ddp_view(m.make, Kind::DdpBucketView, world),
        ddp_zero(m.make, Kind::DdpZero, world), ddp_zero_buckets(m.make, Kind::DdpZeroBuckets, world),
        ddp_join(m.make, Kind::DdpJoin, world), separate(m.make, Kind::Single, world);
    ddp.run(3);
    ddp_view.run(3);
    ddp_zero.run(3);
    ddp_zero_buckets.run(3);
    ddp_join.run(3);
    separate.run(3);
    ddp.ddp()->reset_comm_stats();
    std::vector<double> t_single, t_dp, t_ddp, t_view, t_zero, t_zero_buckets, t_join, t_sep;
    for (int r = 0; r < rounds; ++r) {
      group->barrier()->wait();
      if (lead) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        t_single.push_back(single->run(steps));
        t_dp.push_back(dp->run(steps));
      }
      group->barrier()->wait();
      t_ddp.push_back(max_over_ranks(*group, ddp.run(steps)));
      t_view.push_back(max_over_ranks(*group, ddp_view.run(steps)));
      t_zero.push_back(max_over_ranks(*group, ddp_zero.run(steps)));
      t_zero_buckets.push_back(max_over_ranks(*group, ddp_zero_buckets.run(steps)));
      t_join.push_back(max_over_ranks(*group, ddp_join.run(steps)));
      t_sep.push_back(max_over_ranks(*group, separate.run(steps)));
    }
    const auto stats = ddp.ddp()->comm_stats();
    // The largest share of the sharded state any rank holds (the partition is not exact).
    const double zero_state = max_over_ranks(*group, static_cast<double>(ddp_zero.optimizer_state_bytes()));
    // The wait after backward also covers a slower rank still computing (an all-reduce cannot end
    // before every rank has posted it), so it can exceed the all-reduce time: hidden is then 0.
    const double hidden = stats.allreduce_seconds > 0
                              ? std::clamp(1 - stats.exposed_wait_seconds / stats.allreduce_seconds, 0.0, 1.0)
                              : 0;
    if (lead) {
      const double ips_single = kBatch / median(t_single), ips_dp = kBatch * world / median(t_dp),
                   ips_ddp = kBatch * world / median(t_ddp), ips_view = kBatch * world / median(t_view),
                   ips_zero = kBatch * world / median(t_zero),
                   ips_zero_buckets = kBatch * world / median(t_zero_buckets),
                   ips_join = kBatch * world / median(t_join), ips_sep = kBatch * world / median(t_sep);
      const double plain_state = static_cast<double>(ddp.optimizer_state_bytes());
      std::printf("\n%s\n", m.name);
      auto line = [&](const char* name, double ips, const std::vector<double>& t, int per) {
        std::printf("  %-40s %8.0f images/s  %5.2fx   (rounds, images/s:", name, ips, ips / ips_single);
        for (double s : t) std::printf(" %.0f", kBatch * per / s);
        std::printf(")\n");
      };
      line("1 process, 1 thread", ips_single, t_single, 1);
      line(("DataParallel, " + std::to_string(world) + " CPU devices x 1 thread").c_str(), ips_dp, t_dp, world);
      line(("DDP, " + std::to_string(world) + " processes x 1 thread").c_str(), ips_ddp, t_ddp, world);
      line("  the same, gradient_as_bucket_view", ips_view, t_view, world);
      line("  the same, ZeRO-sharded Adam", ips_zero, t_zero, world);
      line("  ..., parameters_as_bucket_view", ips_zero_buckets, t_zero_buckets, world);
      line("  the same, under join (enable_join)", ips_join, t_join, world);
      line((std::to_string(world) + " separate processes, no communication").c_str(), ips_sep, t_sep, world);
      std::printf("  DDP vs DataParallel: %.2fx\n", ips_ddp / ips_dp);
      std::printf(
          "  Adam state per rank: %.2f MiB plain, %.2f MiB sharded (the largest share, %.0f%%); the sharded step "
          "runs at %.0f%% of DDP's rate\n",
          plain_state / (1 << 20), zero_state / (1 << 20), 100 * zero_state / plain_state, 100 * ips_zero / ips_ddp);
      std::printf(
          "  DDP runs at %.0f%% (bucket views: %.0f%%) of the separate processes: its buckets and all-reduces cost "
          "the rest\n",
          100 * ips_ddp / ips_sep, 100 * ips_view / ips_sep);
      std::printf(
          "  DDP all-reduce (rank 0): %lld buckets per step, %.1f ms per step in all-reduces, %.1f ms waited "
          "after backward (slower ranks included): %.0f%% hidden behind backward\n",
          static_cast<long long>(stats.buckets / std::max<int64_t>(stats.backwards, 1)),
          1e3 * stats.allreduce_seconds / std::max<int64_t>(stats.backwards, 1),
          1e3 * stats.exposed_wait_seconds / std::max<int64_t>(stats.backwards, 1), 100 * hidden);
      out += std::string(mi ? ", " : "") + "{\"name\": \"" + m.name +
             "\", \"single_ips\": " + std::to_string(ips_single) +
             ", \"data_parallel_ips\": " + std::to_string(ips_dp) + ", \"ddp_ips\": " + std::to_string(ips_ddp) +
             ", \"ddp_speedup\": " + std::to_string(ips_ddp / ips_single) +
             ", \"ddp_bucket_view_ips\": " + std::to_string(ips_view) +
             ", \"ddp_bucket_view_speedup\": " + std::to_string(ips_view / ips_single) +
             ", \"ddp_zero_ips\": " + std::to_string(ips_zero) +
             ", \"ddp_zero_bucket_view_ips\": " + std::to_string(ips_zero_buckets) +
             ", \"ddp_join_ips\": " + std::to_string(ips_join) +
             ", \"zero_state_fraction\": " + std::to_string(zero_state / plain_state) +
             ", \"ddp_vs_data_parallel\": " + std::to_string(ips_ddp / ips_dp) +
             ", \"separate_ips\": " + std::to_string(ips_sep) +
             ", \"ddp_vs_separate\": " + std::to_string(ips_ddp / ips_sep) +
             ", \"allreduce_hidden_fraction\": " + std::to_string(hidden) + "}";
    }
  }
  out += "]}\n";
  if (lead) {
    std::printf("\nload average %s at the end\n", loadavg().c_str());
    if (!json.empty()) std::ofstream(json) << out;
  }
  reset_intra_op_threads();
  distributed::destroy_process_group();
  return 0;
}
