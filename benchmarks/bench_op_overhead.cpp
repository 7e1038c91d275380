// Per-op overhead: wick::add of 1-element and 64x64 float32 tensors, with and without gradient
// recording, next to LibTorch-free baselines measured in the same run (read the results as
// ratios to them, never as absolute times):
//   BM_baseline_malloc_add_1   - what any framework must do at least: allocate, add, free
//   BM_baseline_raw_add_64x64  - a plain loop adding two 64x64 float arrays into a third
// Target (Foundation issue): a 1-element add without gradient recording under 0.15 us.
#include <benchmark/benchmark.h>
#include <wick/wick.h>

#include <cstdlib>
#include <optional>
#include <vector>

namespace {

using namespace wick;

void BM_baseline_malloc_add_1(benchmark::State& state) {
  float a = 1.f, b = 2.f;
  for (auto _ : state) {
    auto* out = static_cast<float*>(std::aligned_alloc(64, 64));
    benchmark::DoNotOptimize(out);
    *out = a + b;
    benchmark::DoNotOptimize(*out);
    std::free(out);
  }
}
BENCHMARK(BM_baseline_malloc_add_1);

void BM_baseline_raw_add_64x64(benchmark::State& state) {
  std::vector<float> a(64 * 64, 1.f), b(64 * 64, 2.f), c(64 * 64);
  for (auto _ : state) {
    float* pa = a.data();
    float* pb = b.data();
    float* pc = c.data();
    benchmark::DoNotOptimize(pa);
    benchmark::DoNotOptimize(pb);
    for (int i = 0; i < 64 * 64; ++i) pc[i] = pa[i] + pb[i];
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_baseline_raw_add_64x64);

void BM_add(benchmark::State& state, IntArrayRef shape, bool requires_grad) {
  Tensor a = ones(shape, kFloat32), b = ones(shape, kFloat32);
  if (requires_grad) a.requires_grad_(true);
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
}
// A view's cost: the native view alone, then through autograd in grad mode (a tracked view) and
// under NoGradGuard (marked as made without grad, Note [Views and in-place ops]).
void BM_view_native(benchmark::State& state) {
  Tensor a = ones({8, 8}, kFloat32);
  for (auto _ : state) {
    Tensor v = native::transpose(a, 0, 1);
    benchmark::DoNotOptimize(v.impl());
  }
}
void BM_view(benchmark::State& state, bool no_grad) {
  Tensor a = ones({8, 8}, kFloat32);
  std::optional<NoGradGuard> guard;
  if (no_grad) guard.emplace();
  for (auto _ : state) {
    Tensor v = a.t();
    benchmark::DoNotOptimize(v.impl());
  }
}
void BM_view_grad_mode(benchmark::State& s) { BM_view(s, false); }
void BM_view_no_grad_guard(benchmark::State& s) { BM_view(s, true); }
BENCHMARK(BM_view_native);
BENCHMARK(BM_view_grad_mode);
BENCHMARK(BM_view_no_grad_guard);

void BM_add_1_nograd(benchmark::State& s) { BM_add(s, {1}, false); }
void BM_add_1_grad(benchmark::State& s) { BM_add(s, {1}, true); }
void BM_add_64x64_nograd(benchmark::State& s) { BM_add(s, {64, 64}, false); }
void BM_add_64x64_grad(benchmark::State& s) { BM_add(s, {64, 64}, true); }
BENCHMARK(BM_add_1_nograd);
BENCHMARK(BM_add_1_grad);
BENCHMARK(BM_add_64x64_nograd);
BENCHMARK(BM_add_64x64_grad);

// The same through the operator and under NoGradGuard (the parameter-update pattern).
void BM_add_1_operator_no_grad_guard(benchmark::State& state) {
  Tensor a = ones({1}, TensorOptions(kFloat32).requires_grad()), b = ones({1}, kFloat32);
  NoGradGuard guard;
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_add_1_operator_no_grad_guard);

// In place, no allocation: the floor of the op machinery itself.
void BM_add_inplace_1(benchmark::State& state) {
  Tensor a = ones({1}, kFloat32), b = ones({1}, kFloat32);
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.impl());
  }
}
BENCHMARK(BM_add_inplace_1);

// With backward: forward add + sum + backward per iteration.
void BM_add_1_forward_backward(benchmark::State& state) {
  Tensor a = ones({1}, TensorOptions(kFloat32).requires_grad()), b = ones({1}, kFloat32);
  for (auto _ : state) {
    add(a, b).sum().backward();
  }
}
BENCHMARK(BM_add_1_forward_backward);

// Op time against tensor size (the report's plot): a float32 add of n elements, n = 1 .. 2^20.
void BM_add_size(benchmark::State& state) {
  Tensor a = ones({state.range(0)}, kFloat32), b = ones({state.range(0)}, kFloat32);
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 12);
}
BENCHMARK(BM_add_size)->RangeMultiplier(16)->Range(1, 1 << 20);

// The demo CNN's first pooling: 2x2 max pooling with indices of a [64, 16, 28, 28] float32
// activation (random values), next to a copy of the same input, the memory-traffic bound.
void BM_max_pool2d_64x16x28x28(benchmark::State& state) {
  manual_seed(0);
  Tensor x = randn({64, 16, 28, 28});
  for (auto _ : state) {
    auto [y, idx] = nn::functional::max_pool2d_with_indices(x, {2, 2}, {2, 2});
    benchmark::DoNotOptimize(y.impl());
  }
}
BENCHMARK(BM_max_pool2d_64x16x28x28);

// A copy of a tensor of `shape` (random values): the memory-traffic bound beside the pooling,
// the sums and the batch draw.
void BM_baseline_copy(benchmark::State& state, std::vector<int64_t> shape) {
  Tensor x = rand(shape);
  for (auto _ : state) {
    Tensor y = x.clone();
    benchmark::DoNotOptimize(y.impl());
  }
}
BENCHMARK_CAPTURE(BM_baseline_copy, 64x16x28x28, std::vector<int64_t>{64, 16, 28, 28});
BENCHMARK_CAPTURE(BM_baseline_copy, 128x16x28x28, std::vector<int64_t>{128, 16, 28, 28});
BENCHMARK_CAPTURE(BM_baseline_copy, 64x784, std::vector<int64_t>{64, 784});

// Sums over leading and outer dimensions, as gradients of broadcast biases and the partial sums
// of conv2d's weight gradient make them (one thread): [64, 32, 144] over dim 0, [128, 512] over
// dim 0 (a Linear bias), [128, 16, 28, 28] over dims 0, 2, 3 (a conv bias; against
// BM_baseline_copy/128x16x28x28).
void BM_sum(benchmark::State& state, std::vector<int64_t> shape, std::vector<int64_t> dims) {
  manual_seed(0);
  Tensor x = randn(shape);
  for (auto _ : state) {
    Tensor y = sum(x, dims);
    benchmark::DoNotOptimize(y.impl());
  }
}
BENCHMARK_CAPTURE(BM_sum, dim0_64x32x144, std::vector<int64_t>{64, 32, 144}, std::vector<int64_t>{0});
BENCHMARK_CAPTURE(BM_sum, dim0_128x512, std::vector<int64_t>{128, 512}, std::vector<int64_t>{0});
BENCHMARK_CAPTURE(BM_sum, conv_bias_128x16x28x28, std::vector<int64_t>{128, 16, 28, 28}, std::vector<int64_t>{0, 2, 3});

// A batch of 64 rows drawn at random from a [60000, 784] float32 data set (188 MB, the size of
// Fashion-MNIST's training images), as the demo draws its batches (against
// BM_baseline_copy/64x784, a copy of the same number of contiguous bytes).
void BM_index_select_batch_64_of_60000x784(benchmark::State& state) {
  manual_seed(0);
  Tensor data = rand({60000, 784});
  Tensor perm = argsort(rand({60000}));  // a random permutation
  int64_t at = 0;
  for (auto _ : state) {
    if (at + 64 > 60000) at = 0;
    Tensor batch = data.index_select(0, perm.narrow(0, at, 64));
    at += 64;
    benchmark::DoNotOptimize(batch.impl());
  }
}
BENCHMARK(BM_index_select_batch_64_of_60000x784);

}  // namespace

BENCHMARK_MAIN();
