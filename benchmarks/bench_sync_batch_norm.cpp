// What synchronising BatchNorm across processes costs (convert_sync_batchnorm, docs/distributed.md),
// in one run under mpirun:
//
//   mpirun -np 2 bench_sync_batch_norm [--rounds N] [--steps N] [--batch N] [--json PATH]
//   (defaults 5 rounds, 20 steps, 32 images per rank)
//
// Two models with two BatchNorm layers each, trained with DDP (forward, cross-entropy, backward,
// Adam), one thread per process:
//   CNN   conv16-BN-ReLU-pool, conv32-BN-ReLU-pool, fc10 (28x28 inputs)
//   MLP   784-512-BN-ReLU-512-BN-ReLU-10
// in two configurations, alternating in rounds (median round reported):
//   per-rank BatchNorm        each rank normalizes with its own rows' statistics
//   synchronised BatchNorm    statistics over every rank's rows: one all_gather per layer in
//                             forward and one all_reduce in backward (Note [SyncBatchNorm's
//                             collectives]), both blocking the step
// The difference per step, divided by the synchronised layers, is what one layer's pair of
// collectives and its composed (not fused) normalization cost on this machine. Small per-rank
// batches are where synchronisation matters, and where its fixed cost weighs most.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "rank_max.h"
#include "round_stats.h"
#include "wick/autograd/functions.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/distributed/distributed.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kLayers = 2;  // BatchNorm layers per model

std::shared_ptr<nn::Module> make_cnn() {
  using namespace nn;
  return Sequential(Conv2d(Conv2dOptions(1, 16, 3).padding(1)), BatchNorm2d(16), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(16, 32, 3).padding(1)), BatchNorm2d(32), ReLU(), MaxPool2d(2), Flatten(),
                    Linear(32 * 7 * 7, 10))
      .ptr();
}

std::shared_ptr<nn::Module> make_mlp() {
  using namespace nn;
  return Sequential(Flatten(), Linear(784, 512), BatchNorm1d(512), ReLU(), Linear(512, 512), BatchNorm1d(512), ReLU(),
                    Linear(512, 10))
      .ptr();
}

// One configuration of one model under DDP, ready to step.
class Trainer {
 public:
  Trainer(const std::function<std::shared_ptr<nn::Module>()>& make, bool synchronised, int64_t batch) {
    manual_seed(0);
    net_ = make();
    if (synchronised) distributed::convert_sync_batchnorm(net_);
    ddp_ = std::make_shared<distributed::DistributedDataParallel>(net_);
    opt_ = std::make_unique<optim::Adam>(net_->parameters(), optim::AdamOptions(1e-3));
    manual_seed(1 + distributed::get_rank());
    x_ = randn({batch, 1, 28, 28});
    y_ = randint(0, 10, {batch});
  }
  // Seconds per step over `steps` steps.
  double run(int steps) {
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) {
      opt_->zero_grad();
      Tensor loss = nn::F::cross_entropy(ddp_->forward_tensor(x_), y_);
      loss.backward();
      opt_->step();
      (void)loss.item<float>();
    }
    return std::chrono::duration<double>(Clock::now() - t0).count() / steps;
  }

 private:
  std::shared_ptr<nn::Module> net_;
  std::shared_ptr<distributed::DistributedDataParallel> ddp_;
  std::unique_ptr<optim::Optimizer> opt_;
  Tensor x_, y_;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, steps = 20;
  int64_t batch = 32;
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--steps"))
      steps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--batch"))
      batch = std::max(2, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--json"))
      json = argv[i + 1];
  }
  auto group = distributed::init_process_group();
  const int world = group->size();
  const bool lead = group->rank() == 0;
  if (world < 2) {
    std::fprintf(stderr, "bench_sync_batch_norm: run it with at least 2 processes: mpirun -np 2 %s\n", argv[0]);
    return 2;
  }
  set_flush_denormal(true);
  set_intra_op_threads(Device("cpu:0"), 1);
  struct Model {
    const char* name;
    std::function<std::shared_ptr<nn::Module>()> make;
  };
  if (lead)
    std::printf(
        "%d processes, %lld images per rank per step, DDP + Adam, %d rounds of %d steps (median round), "
        "load average %s at start\n",
        world, static_cast<long long>(batch), rounds, steps, wick_bench::loadavg().c_str());
  std::string out =
      "{\"world\": " + std::to_string(world) + ", \"batch_per_rank\": " + std::to_string(batch) + ", \"models\": [";
  bool first = true;
  for (const Model& m :
       {Model{"CNN (conv16-BN-conv32-BN-fc10)", make_cnn}, Model{"MLP (784-512-BN-512-BN-10)", make_mlp}}) {
    Trainer plain(m.make, false, batch), synced(m.make, true, batch);
    plain.run(3);  // warm-up: allocator caches, the communication thread
    synced.run(3);
    std::vector<double> t_plain, t_synced;
    for (int r = 0; r < rounds; ++r) {
      group->barrier()->wait();
      t_plain.push_back(wick_bench::max_over_ranks(*group, plain.run(steps)));
      t_synced.push_back(wick_bench::max_over_ranks(*group, synced.run(steps)));
    }
    const double a = wick_bench::median(t_plain), b = wick_bench::median(t_synced);
    if (lead) {
      std::printf("\n%s\n", m.name);
      std::printf("  %-32s %8.3f ms per step  %8.0f images/s\n", "per-rank BatchNorm", 1e3 * a, batch * world / a);
      std::printf("  %-32s %8.3f ms per step  %8.0f images/s  (%.2fx the step time)\n", "synchronised BatchNorm",
                  1e3 * b, batch * world / b, b / a);
      std::printf("  synchronising costs %.3f ms per step, %.3f ms per layer (one all_gather + one all_reduce)\n",
                  1e3 * (b - a), 1e3 * (b - a) / kLayers);
      out += std::string(first ? "" : ", ") + "{\"name\": \"" + m.name + "\", \"plain_step_s\": " + std::to_string(a) +
             ", \"synchronised_step_s\": " + std::to_string(b) + ", \"ratio\": " + std::to_string(b / a) +
             ", \"per_layer_s\": " + std::to_string((b - a) / kLayers) + "}";
      first = false;
    }
  }
  out += "]}\n";
  if (lead) {
    std::printf("\nload average %s at the end\n", wick_bench::loadavg().c_str());
    if (!json.empty()) std::ofstream(json) << out;
  }
  distributed::destroy_process_group();
  return 0;
}
