// One training step of two sequence models, the workloads a small-model user
// trains first:
//
//   BM_TransformerStep/B: a causal pre-norm transformer, [B, 64, 128] -> 2 x
//     TransformerEncoderLayer(d_model 128, 4 heads, feed-forward 512, GELU,
//     dropout 0)
//     -> Linear(128, 96) -> cross-entropy over every position; AdamW.
//   BM_LstmStep/B: [B, 32, 64] -> LSTM(64, 128, 2 layers, batch_first) ->
//   Linear(128, 10) on the
//     last step -> cross-entropy; Adam.
//
// benchmarks/train_step_pytorch.py builds the same models (PyTorch 1.13, same
// names in --json), and scripts/compare-train-step.sh prints wick / PyTorch at
// the same thread count.
//
// Threads: OpenBLAS and wick's kernels get WICK_BENCH_THREADS (default 1)
// threads; set OMP_NUM_THREADS and OPENBLAS_NUM_THREADS to the same value for a
// fair comparison.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdlib>

#include "bench_threads.h"
#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"

namespace {

using wick_bench::threads;
using wick_bench::use_threads;

constexpr int64_t kSeq = 64, kModel = 128, kHeads = 4, kFeedForward = 512, kClasses = 96;
constexpr int64_t kLstmSeq = 32, kLstmIn = 64, kLstmHidden = 128;

struct TransformerNetImpl : wick::nn::Module {
  TransformerNetImpl() {
    using namespace wick::nn;
    auto block = [] {
      return TransformerEncoderLayer(TransformerEncoderLayerOptions(kModel, kHeads)
                                         .dim_feedforward(kFeedForward)
                                         .dropout(0.0)
                                         .activation("gelu")
                                         .batch_first(true)
                                         .norm_first(true));
    };
    block1 = register_module("block1", block());
    block2 = register_module("block2", block());
    head = register_module("head", Linear(kModel, kClasses));
  }
  wick::Tensor forward(const wick::Tensor& x) {
    wick::Tensor h = block1->forward(x, {}, {}, /*is_causal=*/true);
    h = block2->forward(h, {}, {}, /*is_causal=*/true);
    return head(h);
  }
  wick::nn::TransformerEncoderLayer block1{nullptr}, block2{nullptr};
  wick::nn::Linear head{nullptr};
};
WICK_MODULE(TransformerNet);

struct LstmNetImpl : wick::nn::Module {
  LstmNetImpl() {
    using namespace wick::nn;
    lstm = register_module("lstm", LSTM(LSTMOptions(kLstmIn, kLstmHidden).num_layers(2).batch_first(true)));
    head = register_module("head", Linear(kLstmHidden, 10));
  }
  wick::Tensor forward(const wick::Tensor& x) {
    wick::Tensor out = std::get<0>(lstm(x));
    return head(out.select(1, kLstmSeq - 1));
  }
  wick::nn::LSTM lstm{nullptr};
  wick::nn::Linear head{nullptr};
};
WICK_MODULE(LstmNet);

void BM_TransformerStep(benchmark::State& state) {
  use_threads();
  wick::manual_seed(0);
  const int64_t batch = state.range(0);
  TransformerNet net;
  wick::optim::AdamW opt(net->parameters(), wick::optim::AdamWOptions(1e-3));
  wick::Tensor x = wick::randn({batch, kSeq, kModel});
  wick::Tensor y = wick::randint(0, kClasses, {batch * kSeq});
  for (auto _ : state) {
    opt.zero_grad();
    wick::Tensor loss = wick::nn::F::cross_entropy(net(x).reshape({batch * kSeq, kClasses}), y);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * batch * kSeq);
  state.counters["threads"] = threads();
}

void BM_LstmStep(benchmark::State& state) {
  use_threads();
  wick::manual_seed(0);
  const int64_t batch = state.range(0);
  LstmNet net;
  wick::optim::Adam opt(net->parameters(), wick::optim::AdamOptions(1e-3));
  wick::Tensor x = wick::randn({batch, kLstmSeq, kLstmIn});
  wick::Tensor y = wick::randint(0, 10, {batch});
  for (auto _ : state) {
    opt.zero_grad();
    wick::Tensor loss = wick::nn::F::cross_entropy(net(x), y);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["threads"] = threads();
}

}  // namespace

BENCHMARK(BM_TransformerStep)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LstmStep)->Arg(16)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
