// What DistributedDataParallel's gradient communication costs, hook by hook, in one run under
// mpirun (Note [Communication hooks]):
//
//   mpirun -np 2 bench_comm_hooks [--rounds N] [--steps N] [--model mlp|wide] [--json PATH]
//   (defaults 3 rounds, 10 steps, both models)
//
// Every rank trains the same model under DDP with 128 images per rank (forward, cross-entropy,
// backward, Adam), one thread per process, once per communication hook:
//
//   noop_hook        no communication at all: the baseline, what the ranks' compute alone costs
//   DDP's own        the built-in averaging all-reduce
//   allreduce_hook   the same through a hook (what the hook path adds)
//   PowerSGD rank r  low-rank compression from the first step (powerSGD_hook, r = 1 and 4)
//   batched PowerSGD each bucket one square matrix (batched_powerSGD_hook, Note [Batched
//                    PowerSGD], r = 4)
//
// Configurations alternate in rounds, so load from other processes hits them alike; each line
// gives the median round's images per second (the slowest rank's), its ratio to noop_hook, the
// time per step from each hook's call to the end of its wait, and the bytes all-reduced per step
// per rank: every gradient, or for PowerSGD the gradients divided by its compression rate
// (PowerSGDState::compression_stats(): its P and Q, and whole the gradients it leaves
// uncompressed).
#include <wick/wick.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "rank_max.h"
#include "round_stats.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/distributed/distributed.h"
#include "wick/distributed/powersgd_hook.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using Clock = std::chrono::steady_clock;
namespace hooks = distributed::ddp_comm_hooks;

namespace {

constexpr int64_t kBatch = 128;  // per rank

struct Config {
  std::string name;
  std::function<distributed::CommHook()> hook;  // empty: DDP's own all-reduce (or PowerSGD's)
  int64_t rank = 0;                             // PowerSGD's rank; 0 for the others
  bool batched = false;                         // batched_powerSGD_hook
};

// One DDP of one model with one hook, ready to step.
class Trainer {
 public:
  Trainer(const std::function<std::shared_ptr<nn::Module>()>& make, const Config& c) {
    manual_seed(0);
    net_ = make();
    ddp_ = std::make_shared<distributed::DistributedDataParallel>(net_);
    if (c.rank > 0) {
      powersgd_ = std::make_shared<hooks::PowerSGDState>();
      powersgd_->matrix_approximation_rank = c.rank;
      powersgd_->start_powerSGD_iter = 2;  // compressed from the second step on
      powersgd_->use_error_feedback = true;
      powersgd_->warm_start = true;
      ddp_->register_comm_hook(c.batched ? hooks::batched_powerSGD_hook(powersgd_) : hooks::powerSGD_hook(powersgd_));
    } else if (c.hook) {
      ddp_->register_comm_hook(c.hook());
    }
    opt_ = std::make_unique<optim::Adam>(net_->parameters(), optim::AdamOptions(1e-3));
    x_ = randn({kBatch, 784});
    y_ = randint(0, 10, {kBatch});
  }
  // Seconds per step over `steps` steps.
  double run(int steps) {
    reset_intra_op_threads();
    set_intra_op_threads(Device("cpu:0"), 1);
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) {
      opt_->zero_grad();
      Tensor loss = nn::F::cross_entropy(ddp_->forward(x_), y_);
      loss.backward();
      opt_->step();
      (void)loss.item<float>();
    }
    return std::chrono::duration<double>(Clock::now() - t0).count() / steps;
  }
  distributed::DistributedDataParallel& ddp() const { return *ddp_; }
  nn::Module& net() const { return *net_; }
  /// PowerSGD's compression rate so far (elements before / after); 1 without PowerSGD.
  double compression_rate() const { return powersgd_ ? std::get<0>(powersgd_->compression_stats()) : 1.0; }

 private:
  std::shared_ptr<nn::Module> net_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
  std::unique_ptr<optim::Optimizer> opt_;
  std::shared_ptr<hooks::PowerSGDState> powersgd_;
  Tensor x_, y_;
};

// Bytes of every gradient (float32).
double gradient_bytes(const nn::Module& net) {
  double elements = 0;
  for (const Tensor& p : net.parameters()) elements += static_cast<double>(p.numel());
  return elements * 4;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3, steps = 10;
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
  const int world = group->size();
  const bool lead = group->rank() == 0;
  if (world < 2) {
    std::fprintf(stderr, "bench_comm_hooks: run it with at least 2 processes: mpirun -np 2 bench_comm_hooks\n");
    return 2;
  }
  set_flush_denormal(true);
  struct Model {
    const char* key;
    const char* name;
    int64_t width;
  };
  const std::vector<Config> configs = {{"noop_hook (no communication)", [] { return hooks::noop_hook(); }, 0},
                                       {"DDP's own all-reduce", nullptr, 0},
                                       {"allreduce_hook", [] { return hooks::allreduce_hook(); }, 0},
                                       {"PowerSGD rank 1", nullptr, 1},
                                       {"PowerSGD rank 4", nullptr, 4},
                                       {"batched PowerSGD rank 4", nullptr, 4, true}};
  if (lead)
    std::printf("%d processes, %lld images per rank per step, Adam, one thread each, %d rounds of %d steps (median)\n",
                world, static_cast<long long>(kBatch), rounds, steps);
  std::string out = "{\"world\": " + std::to_string(world) + ", \"models\": [";
  bool first_model = true;
  for (const Model& m : {Model{"mlp", "MLP 784-512-512-10", 512}, Model{"wide", "MLP 784-2048-2048-10", 2048}}) {
    if (!only.empty() && only != m.key) continue;
    const int64_t w = m.width;
    auto make = [w] {
      return std::static_pointer_cast<nn::Module>(
          nn::Sequential(nn::Linear(784, w), nn::ReLU(), nn::Linear(w, w), nn::ReLU(), nn::Linear(w, 10)).ptr());
    };
    std::vector<std::unique_ptr<Trainer>> trainers;
    for (const Config& c : configs) {
      trainers.push_back(std::make_unique<Trainer>(make, c));
      trainers.back()->run(3);  // warm-up; PowerSGD compresses from here on
      trainers.back()->ddp().reset_comm_stats();
    }
    std::vector<std::vector<double>> t(configs.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t c = 0; c < configs.size(); ++c)
        t[c].push_back(wick_bench::max_over_ranks(*group, trainers[c]->run(steps)));
    if (!lead) continue;
    std::printf("\n%s (%lld parameters)\n", m.name, static_cast<long long>(gradient_bytes(trainers[0]->net()) / 4));
    const double base = kBatch * world / wick_bench::median(t[0]);
    out += std::string(first_model ? "" : ", ") + "{\"name\": \"" + m.name + "\", \"configs\": [";
    first_model = false;
    for (size_t c = 0; c < configs.size(); ++c) {
      const double ips = kBatch * world / wick_bench::median(t[c]);
      const auto s = trainers[c]->ddp().comm_stats();
      const double per = std::max<int64_t>(s.backwards, 1);
      const double bytes = c == 0 ? 0 : gradient_bytes(trainers[c]->net()) / trainers[c]->compression_rate();
      std::printf(
          "  %-30s %8.0f images/s  %5.2fx of noop   %6.2f ms/step communicating, %6.2f ms waited, %8.0f KiB "
          "all-reduced\n",
          configs[c].name.c_str(), ips, ips / base, 1e3 * s.allreduce_seconds / per, 1e3 * s.exposed_wait_seconds / per,
          bytes / 1024);
      out += std::string(c ? ", " : "") + "{\"name\": \"" + configs[c].name + "\", \"ips\": " + std::to_string(ips) +
             ", \"vs_noop\": " + std::to_string(ips / base) + ", \"bytes_per_step\": " + std::to_string(bytes) + "}";
    }
    out += "]}";
  }
  out += "]}\n";
  if (lead && !json.empty()) std::ofstream(json) << out;
  reset_intra_op_threads();
  distributed::destroy_process_group();
  return 0;
}
