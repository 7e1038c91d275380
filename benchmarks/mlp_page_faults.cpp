// mlp_page_faults WARMUP STEPS: runs WARMUP SGD steps of bench_mlp_step's MLP 784-256-256-10 at
// batch 64, then STEPS more, and prints the minor page faults (getrusage) of each phase. Run
// under `perf stat -e page-faults` with STEPS = 1000 and 2000 (scripts/check-page-faults.sh):
// when the allocator serves a steady-state step from its cache (Note [CPU block cache]), both
// runs fault the same pages, all of them in the warm-up.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"

namespace {
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}
}  // namespace

int main(int argc, char** argv) {
  const int warmup = argc > 1 ? std::atoi(argv[1]) : 50;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 1000;
  using namespace wick::nn;
  wick::manual_seed(0);
  Sequential net(Linear(784, 256), ReLU(), Linear(256, 256), ReLU(), Linear(256, 10));
  wick::optim::SGD opt(net->parameters(), wick::optim::SGDOptions(0.01).momentum(0.9));
  const wick::Tensor x = wick::randn({64, 784});
  const wick::Tensor y = wick::randint(0, 10, {64});
  auto step = [&] {
    opt.zero_grad();
    wick::Tensor loss = F::cross_entropy(net(x), y);
    loss.backward();
    opt.step();
    return loss.item<float>();
  };
  const long f0 = minor_faults();
  for (int i = 0; i < warmup; ++i) step();
  const long f1 = minor_faults();
  float last = 0;
  for (int i = 0; i < steps; ++i) last = step();
  const long f2 = minor_faults();
  std::printf("warm-up steps %d: %ld minor faults; then %d steps: %ld minor faults (loss %.4f)\n", warmup, f1 - f0,
              steps, f2 - f1, last);
  return 0;
}
