// The LibTorch baseline of `make bench`: the workloads of wick's benchmarks, timed the same way
// (Google Benchmark, real time) and under the same names, against Debian's libtorch-dev, so that
// scripts/run-benchmarks.sh can put wick's time over LibTorch's in one table:
//   BM_MlpStepSGD/64     bench_mlp_step's MLP 784-256-256-10, SGD (lr 0.01, momentum 0.9) step
//   BM_TrainStepAdam/64  bench_train_step's demo CNN (examples/fashion_mnist_net.h), Adam step
//   BM_TrainStepSGD/64   the same with SGD (lr 0.05, momentum 0.9)
//   BM_add_1_nograd, BM_add_64x64_nograd, BM_add_size/n   bench_op_overhead's float32 adds
// Built only where CMake finds LibTorch (benchmarks/CMakeLists.txt); never required.
// Threads: torch::set_num_threads(WICK_BENCH_THREADS, default 1).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>

namespace {

int threads() {
  const char* t = std::getenv("WICK_BENCH_THREADS");
  return t ? std::atoi(t) : 1;
}

torch::nn::Sequential make_mlp() {
  return torch::nn::Sequential(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                               torch::nn::ReLU(), torch::nn::Linear(256, 10));
}

torch::nn::Sequential make_cnn() {
  namespace nn = torch::nn;
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::MaxPool2d(2), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::MaxPool2d(2), nn::ReLU(),
                        nn::Flatten(), nn::Linear(32 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
}

template <class Opt>
void train_step(benchmark::State& state, torch::nn::Sequential net, Opt opt, torch::Tensor x) {
  torch::Tensor y = torch::randint(0, 10, {x.size(0)});
  for (auto _ : state) {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    benchmark::DoNotOptimize(loss.item<float>());
  }
  state.SetItemsProcessed(state.iterations() * x.size(0));
}

void BM_MlpStepSGD(benchmark::State& state) {
  torch::set_num_threads(threads());
  torch::manual_seed(0);
  auto net = make_mlp();
  train_step(state, net, torch::optim::SGD(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)),
             torch::randn({state.range(0), 784}));
}

void BM_TrainStepAdam(benchmark::State& state) {
  torch::set_num_threads(threads());
  torch::manual_seed(0);
  auto net = make_cnn();
  train_step(state, net, torch::optim::Adam(net->parameters(), torch::optim::AdamOptions(1e-3)),
             torch::randn({state.range(0), 1, 28, 28}));
}

void BM_TrainStepSGD(benchmark::State& state) {
  torch::set_num_threads(threads());
  torch::manual_seed(0);
  auto net = make_cnn();
  train_step(state, net, torch::optim::SGD(net->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9)),
             torch::randn({state.range(0), 1, 28, 28}));
}

void add(benchmark::State& state, std::vector<int64_t> shape) {
  torch::set_num_threads(threads());
  torch::Tensor a = torch::ones(shape), b = torch::ones(shape);
  for (auto _ : state) {
    torch::Tensor c = torch::add(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
void BM_add_1_nograd(benchmark::State& s) { add(s, {1}); }
void BM_add_64x64_nograd(benchmark::State& s) { add(s, {64, 64}); }
void BM_add_size(benchmark::State& s) {
  add(s, {s.range(0)});
  s.SetBytesProcessed(s.iterations() * s.range(0) * 12);
}

}  // namespace

BENCHMARK(BM_MlpStepSGD)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepAdam)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepSGD)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_1_nograd);
BENCHMARK(BM_add_64x64_nograd);
BENCHMARK(BM_add_size)->RangeMultiplier(16)->Range(1, 1 << 20);

BENCHMARK_MAIN();
