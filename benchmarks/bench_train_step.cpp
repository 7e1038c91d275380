// One training step of the Fashion-MNIST demo's CNN (examples/fashion_mnist_net.h) at batch 64:
// forward, cross-entropy loss, backward, optimizer step. scripts/compare-train-step.sh runs it
// next to benchmarks/train_step_pytorch.py (PyTorch 1.13, same network, batch and threads).
//
// Threads: OpenBLAS and wick's kernels get WICK_BENCH_THREADS (default 1) threads; set OMP_NUM_THREADS and
// OPENBLAS_NUM_THREADS to the same value for a fair comparison.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>

#include "../examples/fashion_mnist_net.h"
#include "bench_threads.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/generator.h"
#include "wick/nn/optim/optim.h"

namespace {

using wick_bench::threads;
using wick_bench::use_threads;

template <class Opt, class Options>
void train_step(benchmark::State& state, Options options) {
  use_threads();
  wick::manual_seed(0);
  const int64_t batch = state.range(0);
  auto net = fashion::make_net();
  Opt opt(net->parameters(), options);
  wick::Tensor x = wick::randn({batch, 1, 28, 28});
  wick::Tensor y = wick::randint(0, 10, {batch});
  for (auto _ : state) {
    opt.zero_grad();
    wick::Tensor loss = wick::nn::F::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["threads"] = threads();
}

// Forward only (no grad), to split the step.
void forward_only(benchmark::State& state) {
  use_threads();
  wick::manual_seed(0);
  const int64_t batch = state.range(0);
  auto net = fashion::make_net();
  wick::Tensor x = wick::randn({batch, 1, 28, 28});
  wick::NoGradGuard g;
  for (auto _ : state) benchmark::DoNotOptimize(net->forward(x).data_ptr());
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_TrainStepAdam(benchmark::State& s) { train_step<wick::optim::Adam>(s, wick::optim::AdamOptions(1e-3)); }
void BM_TrainStepSGD(benchmark::State& s) {
  train_step<wick::optim::SGD>(s, wick::optim::SGDOptions(0.05).momentum(0.9));
}
void BM_Forward(benchmark::State& s) { forward_only(s); }

}  // namespace

BENCHMARK(BM_TrainStepAdam)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepSGD)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Forward)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
