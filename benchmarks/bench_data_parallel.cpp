// DataParallel throughput on CPU devices, in one run: for the Fashion-MNIST demo's CNN
// (examples/fashion_mnist_net.h) and an MLP 784-512-512-10, a training step at batch 128
// (forward, cross-entropy, backward, Adam) in four configurations:
//
//   1 device, 1 thread        cpu:0, one intra-op thread: the baseline
//   DataParallel, 2 devices   cpu:0 and cpu:1, one thread each (replicas and backward nodes on
//                             each device's thread, Note [Device-parallel backward])
//   1 device, 2 threads       cpu:0, a budget of two threads (GEMMs cut into blocks, Note [GEMMs
//                             on wick's threads], and wick's own kernels split over both)
//   2 separate models         the ceiling: two independent trainings of half the batch each, one
//                             on cpu:0 and one on cpu:1, on two threads at once, each with its
//                             own parameters and optimizer, nothing shared. DataParallel does the
//                             same forward and backward work, and instead of two private
//                             optimizer steps it replicates, sums the gradients across the devices
//                             and steps one optimizer over shared state: its ratio to this row is
//                             what sharing costs on the day's machine.
//
// Configurations alternate in rounds, so load from other processes hits them alike; the median
// round is reported, with each figure's ratio to the baseline. OpenBLAS runs single-threaded in
// every configuration (a budgeted device's GEMMs run on wick's threads), so no configuration
// leaves spinning OpenBLAS workers behind to slow the next one. After the timed rounds, each
// one-thread-per-device configuration runs as many steps again under the tracer, and a table
// shows where a step's time went on each thread (step_breakdown.h): what DataParallel spends on
// replicate, transfers, the gradient sum and the shared optimizer step that the separate models
// do not, and how long each thread waited. Usage:
//   bench_data_parallel [--rounds N] [--steps N] [--model cnn|mlp] [--config K] [--batch B]
//   (defaults 5 rounds, 20 steps, both models, every configuration, batch 128; K = 1 to 4 in the
//   order above runs that one alone, for profiling; DataParallel gives each device half of B)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "../examples/fashion_mnist_net.h"
#include "cache_line_handoff.h"
#include "round_stats.h"
#include "step_breakdown.h"
#include "wick/autograd/functions.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"
#include "wick/core/flush_denormal.h"
#include "wick/core/generator.h"
#include "wick/core/openblas.h"
#include "wick/core/trace.h"
#include "wick/nn/optim/optim.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using Clock = std::chrono::steady_clock;

namespace {

int64_t g_batch = 128;  // --batch
const Device kCpu0("cpu:0"), kCpu1("cpu:1");

std::shared_ptr<nn::Module> make_mlp() {
  return nn::Sequential(nn::Flatten(), nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 512), nn::ReLU(),
                        nn::Linear(512, 10));
}

struct Config {
  const char* name;
  const char* short_name;  // the breakdown's column label
  bool data_parallel;
  int threads;            // intra-op threads per device
  bool separate = false;  // two independent half-batch trainings on cpu:0 and cpu:1 at once
};

// One model's training step on one device, or DataParallel's over cpu:0 and cpu:1.
class Step {
 public:
  Step(const std::function<std::shared_ptr<nn::Module>()>& make, bool data_parallel, Device device, int64_t batch) {
    manual_seed(0);
    net_ = make();
    net_->to(device);
    model_ = net_;
    if (data_parallel) model_ = std::make_shared<parallel::DataParallel>(net_, std::vector<Device>{kCpu0, kCpu1});
    opt_ = std::make_unique<optim::Adam>(net_->parameters(), optim::AdamOptions(1e-3));
    x_ = randn({batch, 1, 28, 28}).to(device);
    y_ = randint(0, 10, {batch}).to(device);
  }
  void operator()() {
    opt_->zero_grad();
    Tensor loss = nn::F::cross_entropy(model_->forward_tensor(x_), y_);
    loss.backward();
    opt_->step();
    (void)loss.item<float>();
  }

 private:
  std::shared_ptr<nn::Module> net_, model_;
  std::unique_ptr<optim::Optimizer> opt_;
  Tensor x_, y_;
};

// One configuration of one model, ready to step.
class Trainer {
 public:
  Trainer(const std::function<std::shared_ptr<nn::Module>()>& make, const Config& c) : config_(c) {
    if (c.separate) {
      // Two models, each with half the batch (the odd image to the first).
      steps_.push_back(std::make_unique<Step>(make, false, kCpu0, g_batch - g_batch / 2));
      steps_.push_back(std::make_unique<Step>(make, false, kCpu1, g_batch / 2));
    } else {
      steps_.push_back(std::make_unique<Step>(make, c.data_parallel, kCpu0, g_batch));
    }
  }
  // Images per second over `steps` steps.
  double run(int steps) {
    // Only the devices in use get a budget: an idle budgeted device's worker lends its thread to
    // the others (Note [Idle device threads lend a hand]), so cpu:1 has none on one device.
    reset_intra_op_threads();
    set_intra_op_threads(kCpu0, config_.threads);
    if (config_.data_parallel || config_.separate) set_intra_op_threads(kCpu1, config_.threads);
    const auto t0 = Clock::now();
    if (steps_.size() == 1) {
      for (int i = 0; i < steps; ++i) (*steps_[0])();
    } else {
      // cpu:1's model on cpu:1's worker thread, cpu:0's on this one, as DataParallel's replicas
      // run: the same two threads, and no idle worker left to lend itself to either model.
      auto done = std::make_shared<WaitGroup>();
      std::exception_ptr failure;  // the cpu:1 model's, rethrown here
      done->add();
      device_threads::queue(kCpu1)->push({0, [&, done] {
                                            try {
                                              for (int i = 0; i < steps; ++i) (*steps_[1])();
                                            } catch (...) {
                                              failure = std::current_exception();
                                            }
                                            done->done();
                                          }});
      for (int i = 0; i < steps; ++i) (*steps_[0])();
      done->wait();
      if (failure) std::rethrow_exception(failure);
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return static_cast<double>(steps * g_batch) / s;
  }

 private:
  Config config_;
  std::vector<std::unique_ptr<Step>> steps_;
};

using wick_bench::loadavg;
using wick_bench::median;

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, steps = 20;
  std::string only;     // "cnn" or "mlp"; empty: both
  int only_config = 0;  // 1-based; 0: every configuration
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--steps"))
      steps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--model"))
      only = argv[i + 1];
    else if (!std::strcmp(argv[i], "--config"))
      only_config = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch"))
      g_batch = std::max(2, std::atoi(argv[i + 1]));
  }
  set_flush_denormal(true);  // as the demo (Note [Denormals])
  std::vector<Config> configs{{"1 device, 1 thread", "1 device", false, 1},
                              {"DataParallel cpu:0,cpu:1, 1 thread each", "DataParallel", true, 1},
                              {"1 device, 2 threads", "1 device, 2 thr.", false, 2},
                              {"2 separate models, half the batch each", "2 separate models", false, 1, true}};
  if (only_config >= 1 && only_config <= static_cast<int>(configs.size()))
    configs = {configs[static_cast<size_t>(only_config - 1)]};
  struct Model {
    const char* key;  // --model's value
    const char* name;
    std::function<std::shared_ptr<nn::Module>()> make;
  };
  const std::vector<Model> models{{"cnn", "CNN (conv16-conv32-fc128)", [] { return fashion::make_net(); }},
                                  {"mlp", "MLP (784-512-512-10)", make_mlp}};
  std::printf("batch %lld, Adam, %d rounds of %d steps (median round), load average %s at start\n",
              static_cast<long long>(g_batch), rounds, steps, loadavg().c_str());
  std::printf("%s\n", wick::openblas_summary().c_str());  // Note [OpenBLAS's kernels]
  if (const double handoff = wick_bench::cache_line_handoff_ns(); handoff >= 0)
    std::printf(
        "a cache line moves between CPUs 0 and 1 in %.0f ns (tens: a shared cache; 150 or more: none, and "
        "the two-thread rows pay for every byte the threads pass each other)\n",
        handoff);
  else
    std::printf("cache-line handoff not measured: this process may not run on both CPUs 0 and 1\n");
  for (const Model& m : models) {
    if (!only.empty() && std::string(m.key) != only) continue;
    std::vector<std::unique_ptr<Trainer>> trainers;
    for (const Config& c : configs) {
      trainers.push_back(std::make_unique<Trainer>(m.make, c));
      trainers.back()->run(3);  // warm-up: threads, allocator caches
    }
    std::vector<std::vector<double>> ips(configs.size());
    for (int r = 0; r < rounds; ++r)
      for (size_t c = 0; c < configs.size(); ++c) {
        ips[c].push_back(trainers[c]->run(steps));
      }
    std::printf("\n%s\n", m.name);
    const double base = median(ips[0]);
    for (size_t c = 0; c < configs.size(); ++c) {
      const double v = median(ips[c]);
      std::printf("  %-42s %8.0f images/s  %5.2fx   (rounds:", configs[c].name, v, v / base);
      for (double x : ips[c]) std::printf(" %.0f", x);
      std::printf(")\n");
    }
    // DataParallel against its ceiling, when both ran.
    double dp = 0, ceiling = 0;
    for (size_t c = 0; c < configs.size(); ++c) {
      if (configs[c].data_parallel) dp = median(ips[c]);
      if (configs[c].separate) ceiling = median(ips[c]);
    }
    if (dp > 0 && ceiling > 0)
      std::printf(
          "  DataParallel runs at %.0f%% of the 2 separate models: the replicate, the gradient sum and the\n"
          "  optimizer step over shared state cost the rest\n",
          100.0 * dp / ceiling);
    // Where the time goes, traced after the timed rounds (a WICK_TRACE run records everything
    // already, and a second trace cannot start inside it).
    if (!std::getenv("WICK_TRACE")) {
      std::vector<std::pair<std::string, wick_bench::StepBreakdown>> breakdowns;
      for (size_t c = 0; c < configs.size(); ++c) {
        if (configs[c].threads != 1) continue;  // the 2-thread device splits ops, not phases
        std::string json;
        {
          profiler::Trace trace;
          trainers[c]->run(steps);
          json = trace.stop();
        }
        breakdowns.emplace_back(configs[c].short_name, wick_bench::breakdown(json, steps));
      }
      if (!breakdowns.empty()) {
        std::printf("\n");
        wick_bench::print_breakdowns(breakdowns, steps, "cpu:0");
      }
    }
  }
  std::printf("\nload average %s at the end\n", loadavg().c_str());
  reset_intra_op_threads();
  return 0;
}
