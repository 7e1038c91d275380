// One SGD training step of an MLP 784-256-256-10 (ReLU) on a batch of random inputs: forward,
// cross-entropy, backward, SGD step with momentum 0.9. Next to it, in the same run, its bound:
// the eight GEMMs such a step must do (three forward, three weight gradients, two input
// gradients; the first layer's input needs none), called straight on OpenBLAS with the layouts
// a framework that copies nothing would use. Read wick's step as a ratio to that bound.
// BM_MlpGemmSgdBound adds what any step that updates after backward must also do: one pass of
// SGD with momentum over the parameters (p, momentum and gradient: 3.2 MB at 784-256-256-10,
// past a core's L2 here, so the pass runs at the cache's bandwidth, not the ALUs' speed).
// benchmarks/libtorch/baseline_libtorch.cpp and benchmarks/train_step_pytorch.py time the same step.
//
// Threads: OpenBLAS and wick's kernels get WICK_BENCH_THREADS (default 1) threads.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>
#include <vector>

#include "bench_threads.h"
#include "wick/autograd/functions.h"
#include "wick/core/cpu_multiversion.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"

namespace {

using wick_bench::threads;
using wick_bench::use_threads;

constexpr int kIn = 784, kHidden = 256, kOut = 10;

wick::nn::Sequential make_mlp() {
  using namespace wick::nn;
  return Sequential(Linear(kIn, kHidden), ReLU(), Linear(kHidden, kHidden), ReLU(), Linear(kHidden, kOut));
}

void BM_MlpStepSGD(benchmark::State& state) {
  use_threads();
  wick::manual_seed(0);
  const int64_t batch = state.range(0);
  auto net = make_mlp();
  wick::optim::SGD opt(net->parameters(), wick::optim::SGDOptions(0.01).momentum(0.9));
  wick::Tensor x = wick::randn({batch, kIn});
  wick::Tensor y = wick::randint(0, kOut, {batch});
  for (auto _ : state) {
    opt.zero_grad();
    wick::Tensor loss = wick::nn::F::cross_entropy(net(x), y);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

// buf = 0.9 buf + g; p -= 0.01 buf: built as wick's own kernels are (-O3, AVX2 and SSE2 clones).
WICK_CPU_MULTIVERSION void momentum_pass(float* __restrict p, float* __restrict m, const float* __restrict g,
                                         size_t n) {
  for (size_t i = 0; i < n; ++i) {
    m[i] = 0.9f * m[i] + g[i];
    p[i] = p[i] - 0.01f * m[i];
  }
}

// The bound: C = A * W^T forward (W stored [out, in] as Linear's), dW = G^T * A, dA = G * W.
// With `sgd`, the momentum update of every weight follows (the biases are 0.2% of the parameters).
void mlp_bound(benchmark::State& state, bool sgd) {
  use_threads();
  const int b = static_cast<int>(state.range(0));
  const int dims[4] = {kIn, kHidden, kHidden, kOut};
  std::vector<std::vector<float>> act(4), grad_act(4), w(3), grad_w(3), momentum(3);
  for (int i = 0; i < 4; ++i) {
    act[i].assign(static_cast<size_t>(b) * dims[i], 0.5f);
    grad_act[i].assign(static_cast<size_t>(b) * dims[i], 0.25f);
  }
  for (int l = 0; l < 3; ++l) {
    w[l].assign(static_cast<size_t>(dims[l + 1]) * dims[l], 0.01f);
    grad_w[l].assign(w[l].size(), 0.f);
    momentum[l].assign(w[l].size(), 0.f);
  }
  for (auto _ : state) {
    for (int l = 0; l < 3; ++l)  // act[l+1] = act[l] * w[l]^T
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, b, dims[l + 1], dims[l], 1.f, act[l].data(), dims[l],
                  w[l].data(), dims[l], 0.f, act[l + 1].data(), dims[l + 1]);
    for (int l = 2; l >= 0; --l) {
      // grad_w[l] = grad_act[l+1]^T * act[l]
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dims[l + 1], dims[l], b, 1.f, grad_act[l + 1].data(),
                  dims[l + 1], act[l].data(), dims[l], 0.f, grad_w[l].data(), dims[l]);
      if (l > 0)  // grad_act[l] = grad_act[l+1] * w[l]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, b, dims[l], dims[l + 1], 1.f, grad_act[l + 1].data(),
                    dims[l + 1], w[l].data(), dims[l], 0.f, grad_act[l].data(), dims[l]);
    }
    if (sgd)
      for (int l = 0; l < 3; ++l) momentum_pass(w[l].data(), momentum[l].data(), grad_w[l].data(), w[l].size());
    benchmark::DoNotOptimize(grad_w[0].data());
    benchmark::DoNotOptimize(w[0].data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * b);
}

void BM_MlpGemmBound(benchmark::State& state) { mlp_bound(state, false); }
void BM_MlpGemmSgdBound(benchmark::State& state) { mlp_bound(state, true); }

}  // namespace

BENCHMARK(BM_MlpGemmBound)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MlpGemmSgdBound)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MlpStepSGD)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
