// GPU benchmarks (docs/cuda.md, "Benchmarks"). Each result is a ratio to a baseline measured in
// the same run, so the numbers travel between machines:
//   - elementwise add of 2^26 float32 as a fraction of the device's copy bandwidth
//     (cudaMemcpyAsync device-to-device of the same size);
//   - wick's matmul of 8192^3 float32 as a fraction of a direct cuBLAS call on the same buffers;
//   - the host time per launched op (wick add on tiny tensors), next to a bare runtime call;
//   - the kernels a review singled out, each against the device copy of the same bytes: a sum
//     over the outer dim (non-inner rows, the columns kernel) and the inner dim of an 8192x8192
//     float32 (a block per row) and over the inner dim of 2^20 rows of 64 (a warp per row), a
//     broadcast add of a row and of a column vector (the strided kernel in 32-bit index math, and
//     the column add again with 64-bit math forced, Note [32-bit index math]), and a
//     tensor-scalar multiply (the scalar as a kernel argument, one launch);
//   - conv2d forward and forward+backward at batch 64 (64->64 channels, 3x3, 56x56, float32)
//     against a direct cuBLAS GEMM of the same implicit-GEMM shape (forward) or three of them
//     (forward and both gradients).
// GPU times come from CUDA events. Without a GPU (or without the CUDA backend) the program prints
// a skip message and exits 0. The last lines are "SUMMARY <name> <ratio> (...)" for scripts.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "wick/config.h"

#if WICK_WITH_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/cuda/runtime.h"
#include "wick/cuda/stream.h"
// The index-width override of the CUDA kernels (plain C++, no CUDA header): the 64-bit baseline.
#include "../cuda/src/launch_plan.h"
#include "wick/nn/functional.h"

namespace {
using namespace wick;
namespace nat = wick::native;

const Device kGpu(DeviceType::CUDA, 0);
std::map<std::string, double> g_best;  // name -> best rate seen (higher is better)

void keep_best(const std::string& name, double rate) {
  auto it = g_best.find(name);
  if (it == g_best.end() || rate > it->second) g_best[name] = rate;
}

#define BENCH_CHECK(call)                   \
  do {                                      \
    if ((call) != 0) {                      \
      state.SkipWithError(#call " failed"); \
      return;                               \
    }                                       \
  } while (0)

// Times `body` on the default stream with events; sets the manual time.
template <typename F>
double time_gpu(F&& body) {
  cuda::Event start(true), stop(true);
  start.record();
  body();
  stop.record();
  stop.synchronize();
  return static_cast<double>(start.elapsed_ms(stop)) / 1e3;
}

constexpr int64_t kElems = int64_t{1} << 26;

void BM_DeviceCopy(benchmark::State& state) {
  Tensor a = nat::ones({kElems}, kFloat32, kGpu);
  Tensor b = nat::empty({kElems}, kFloat32, kGpu);
  const size_t bytes = static_cast<size_t>(kElems) * 4;
  for (auto _ : state) {
    const double s =
        time_gpu([&] { cudaMemcpyAsync(b.data_ptr(), a.data_ptr(), bytes, cudaMemcpyDeviceToDevice, nullptr); });
    state.SetIterationTime(s);
    keep_best("copy_GBps", 2.0 * static_cast<double>(bytes) / s / 1e9);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_DeviceCopy)->UseManualTime()->Iterations(50)->Unit(benchmark::kMicrosecond);

void BM_AddFloat32(benchmark::State& state) {
  Tensor a = nat::ones({kElems}, kFloat32, kGpu);
  Tensor b = nat::ones({kElems}, kFloat32, kGpu);
  { Tensor warm = nat::binary(BinaryOp::Add, a, b); }
  cuda::synchronize(0);
  const double bytes = 3.0 * static_cast<double>(kElems) * 4;
  for (auto _ : state) {
    Tensor c;
    const double s = time_gpu([&] { c = nat::binary(BinaryOp::Add, a, b); });
    state.SetIterationTime(s);
    keep_best("add_GBps", bytes / s / 1e9);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_AddFloat32)->UseManualTime()->Iterations(50)->Unit(benchmark::kMicrosecond);

// ---- kernels from the review (docs/cuda.md, "Benchmarks"): bytes moved per second ----
constexpr int64_t kRows = 8192;

// Times `op` and records its effective bandwidth (bytes read + written) under `name`.
template <typename F>
void bandwidth_case(benchmark::State& state, const char* name, double bytes, F&& op) {
  { Tensor warm = op(); }
  cuda::synchronize(0);
  for (auto _ : state) {
    Tensor out;
    const double s = time_gpu([&] { out = op(); });
    state.SetIterationTime(s);
    keep_best(name, bytes / s / 1e9);
  }
  state.SetBytesProcessed(static_cast<int64_t>(static_cast<double>(state.iterations()) * bytes));
}

void BM_SumOuterDim(benchmark::State& state) {  // non-inner rows: out[j] = sum_i x[i, j]
  Tensor x = nat::ones({kRows, kRows}, kFloat32, kGpu);
  bandwidth_case(state, "sum_outer_GBps", 4.0 * kRows * (kRows + 1), [&] { return nat::sum(x, {0}, false); });
}
BENCHMARK(BM_SumOuterDim)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_SumInnerDim(benchmark::State& state) {
  Tensor x = nat::ones({kRows, kRows}, kFloat32, kGpu);
  bandwidth_case(state, "sum_inner_GBps", 4.0 * kRows * (kRows + 1), [&] { return nat::sum(x, {1}, false); });
}
BENCHMARK(BM_SumInnerDim)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_SumInnerManyRows(benchmark::State& state) {  // 2^20 rows of 64: a warp per row
  constexpr int64_t kShortRows = int64_t{1} << 20, kCols = 64;
  Tensor x = nat::ones({kShortRows, kCols}, kFloat32, kGpu);
  bandwidth_case(state, "sum_rows64_GBps", 4.0 * kShortRows * (kCols + 1), [&] { return nat::sum(x, {1}, false); });
}
BENCHMARK(BM_SumInnerManyRows)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_BroadcastAddRow(benchmark::State& state) {  // [R, C] + [C]
  Tensor x = nat::ones({kRows, kRows}, kFloat32, kGpu), row = nat::ones({kRows}, kFloat32, kGpu);
  bandwidth_case(state, "badd_row_GBps", 4.0 * (2.0 * kRows * kRows + kRows),
                 [&] { return nat::binary(BinaryOp::Add, x, row); });
}
BENCHMARK(BM_BroadcastAddRow)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_BroadcastAddColumn(benchmark::State& state) {  // [R, C] + [R, 1]
  Tensor x = nat::ones({kRows, kRows}, kFloat32, kGpu), col = nat::ones({kRows, 1}, kFloat32, kGpu);
  bandwidth_case(state, "badd_col_GBps", 4.0 * (2.0 * kRows * kRows + kRows),
                 [&] { return nat::binary(BinaryOp::Add, x, col); });
}
BENCHMARK(BM_BroadcastAddColumn)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_BroadcastAddColumnIndex64(benchmark::State& state) {  // the same add in 64-bit index math
  Tensor x = nat::ones({kRows, kRows}, kFloat32, kGpu), col = nat::ones({kRows, 1}, kFloat32, kGpu);
  cuda::plan::forced_index_width() = cuda::plan::IndexWidth::Force64;
  bandwidth_case(state, "badd_col_index64_GBps", 4.0 * (2.0 * kRows * kRows + kRows),
                 [&] { return nat::binary(BinaryOp::Add, x, col); });
  cuda::plan::forced_index_width() = cuda::plan::IndexWidth::Auto;
}
BENCHMARK(BM_BroadcastAddColumnIndex64)->UseManualTime()->Iterations(30)->Unit(benchmark::kMicrosecond);

void BM_ScalarMul(benchmark::State& state) {
  Tensor x = nat::ones({kElems}, kFloat32, kGpu);
  bandwidth_case(state, "scalar_mul_GBps", 2.0 * static_cast<double>(kElems) * 4,
                 [&] { return nat::binary(BinaryOp::Mul, x, Scalar(2.5)); });
}
BENCHMARK(BM_ScalarMul)->UseManualTime()->Iterations(50)->Unit(benchmark::kMicrosecond);

// ---- conv2d at batch 64 against cuBLAS on the implicit-GEMM shape ----
constexpr int64_t kConvN = 64, kConvC = 64, kConvHW = 56;
// Implicit GEMM: [N*H*W, C*9] x [C*9, C].
constexpr int64_t kConvM = kConvN * kConvHW * kConvHW, kConvK = kConvC * 9;
const double kConvFlop = 2.0 * static_cast<double>(kConvM) * kConvK * kConvC;

void BM_ConvForward(benchmark::State& state) {
  Tensor x = nat::randn({kConvN, kConvC, kConvHW, kConvHW}, kFloat32, kGpu);
  Tensor w = nat::randn({kConvC, kConvC, 3, 3}, kFloat32, kGpu);
  Tensor b = nat::zeros({kConvC}, kFloat32, kGpu);
  NoGradGuard no_grad;
  { Tensor warm = nn::functional::conv2d(x, w, b, 1, 1); }
  cuda::synchronize(0);
  for (auto _ : state) {
    Tensor y;
    const double s = time_gpu([&] { y = nn::functional::conv2d(x, w, b, 1, 1); });
    state.SetIterationTime(s);
    keep_best("conv_fwd_TFLOPs", kConvFlop / s / 1e12);
  }
}
BENCHMARK(BM_ConvForward)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

void BM_ConvForwardBackward(benchmark::State& state) {
  Tensor x = nat::randn({kConvN, kConvC, kConvHW, kConvHW}, kFloat32, kGpu).set_requires_grad(true);
  Tensor w = nat::randn({kConvC, kConvC, 3, 3}, kFloat32, kGpu).set_requires_grad(true);
  Tensor b = nat::zeros({kConvC}, kFloat32, kGpu).set_requires_grad(true);
  auto step = [&] {
    Tensor y = nn::functional::conv2d(x, w, b, 1, 1);
    y.sum().backward();
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
  };
  step();
  cuda::synchronize(0);
  for (auto _ : state) {
    const double s = time_gpu(step);
    state.SetIterationTime(s);
    keep_best("conv_fwdbwd_TFLOPs", 3.0 * kConvFlop / s / 1e12);
  }
}
BENCHMARK(BM_ConvForwardBackward)->UseManualTime()->Iterations(10)->Unit(benchmark::kMillisecond);

void BM_ConvGemmCublas(benchmark::State& state) {  // the implicit-GEMM bound: [M, K] x [K, C]
  Tensor a = nat::rand({kConvM, kConvK}, kFloat32, kGpu), bm = nat::rand({kConvK, kConvC}, kFloat32, kGpu);
  Tensor c = nat::empty({kConvM, kConvC}, kFloat32, kGpu);
  cublasHandle_t h = nullptr;
  BENCH_CHECK(cublasCreate(&h));
  const float alpha = 1.0f, beta = 0.0f;
  auto call = [&] {
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kConvC, kConvM, kConvK, &alpha, static_cast<const float*>(bm.data_ptr()),
                kConvC, static_cast<const float*>(a.data_ptr()), kConvK, &beta, static_cast<float*>(c.data_ptr()),
                kConvC);
  };
  call();
  cuda::synchronize(0);
  for (auto _ : state) {
    const double s = time_gpu(call);
    state.SetIterationTime(s);
    keep_best("conv_gemm_cublas_TFLOPs", kConvFlop / s / 1e12);
  }
  cublasDestroy(h);
}
BENCHMARK(BM_ConvGemmCublas)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

constexpr int64_t kN = 8192;

struct MatmulBuffers {
  Tensor a = nat::rand({kN, kN}, kFloat32, kGpu);
  Tensor b = nat::rand({kN, kN}, kFloat32, kGpu);
  Tensor c = nat::empty({kN, kN}, kFloat32, kGpu);
};
MatmulBuffers& matmul_buffers() {
  static MatmulBuffers* m = new MatmulBuffers();
  return *m;
}

void BM_MatmulWick(benchmark::State& state) {
  auto& m = matmul_buffers();
  { Tensor warm = nat::matmul(m.a, m.b); }
  cuda::synchronize(0);
  const double flop = 2.0 * kN * kN * kN;
  for (auto _ : state) {
    Tensor c;
    const double s = time_gpu([&] { c = nat::matmul(m.a, m.b); });
    state.SetIterationTime(s);
    keep_best("wick_matmul_TFLOPs", flop / s / 1e12);
  }
  state.counters["TFLOP/s"] =
      benchmark::Counter(flop * static_cast<double>(state.iterations()) / 1e12, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatmulWick)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

void BM_MatmulCublas(benchmark::State& state) {
  auto& m = matmul_buffers();
  cublasHandle_t h = nullptr;
  BENCH_CHECK(cublasCreate(&h));
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T: the same call wick makes.
  auto call = [&] {
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, static_cast<const float*>(m.b.data_ptr()), kN,
                static_cast<const float*>(m.a.data_ptr()), kN, &beta, static_cast<float*>(m.c.data_ptr()), kN);
  };
  call();
  cuda::synchronize(0);
  const double flop = 2.0 * kN * kN * kN;
  for (auto _ : state) {
    const double s = time_gpu(call);
    state.SetIterationTime(s);
    keep_best("cublas_matmul_TFLOPs", flop / s / 1e12);
  }
  state.counters["TFLOP/s"] =
      benchmark::Counter(flop * static_cast<double>(state.iterations()) / 1e12, benchmark::Counter::kIsRate);
  cublasDestroy(h);
}
BENCHMARK(BM_MatmulCublas)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

// Host time to issue one small op (allocation from the cache, dtype/shape checks, launch).
void BM_HostTimePerOp(benchmark::State& state) {
  Tensor a = nat::ones({256}, kFloat32, kGpu), b = nat::ones({256}, kFloat32, kGpu);
  for (auto _ : state) {
    Tensor c = nat::binary(BinaryOp::Add, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  cuda::synchronize(0);
}
BENCHMARK(BM_HostTimePerOp)->Iterations(20000)->Unit(benchmark::kMicrosecond);

// The floor: one bare asynchronous runtime call per iteration.
void BM_HostTimeRawRuntimeCall(benchmark::State& state) {
  Tensor a = nat::ones({256}, kFloat32, kGpu);
  for (auto _ : state) cudaMemsetAsync(a.data_ptr(), 0, 1024, nullptr);
  cuda::synchronize(0);
}
BENCHMARK(BM_HostTimeRawRuntimeCall)->Iterations(20000)->Unit(benchmark::kMicrosecond);

// Captures each benchmark's host time per iteration for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_name.function_name.rfind("BM_HostTime", 0) == 0)
        host_us[r.run_name.function_name] = r.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> host_us;
};

void print_summary(const SummaryReporter& rep) {
  auto get = [](const char* k) { return g_best.count(k) ? g_best.at(k) : 0.0; };
  const double copy = get("copy_GBps"), add = get("add_GBps");
  const double wick_mm = get("wick_matmul_TFLOPs"), cublas_mm = get("cublas_matmul_TFLOPs");
  std::printf("SUMMARY add_vs_copy_bandwidth %.3f (add %.0f GB/s effective, device copy %.0f GB/s)\n",
              copy > 0 ? add / copy : 0.0, add, copy);
  std::printf("SUMMARY matmul_vs_cublas %.3f (wick %.1f TFLOP/s, direct cuBLAS %.1f TFLOP/s, 8192^3 float32)\n",
              cublas_mm > 0 ? wick_mm / cublas_mm : 0.0, wick_mm, cublas_mm);
  auto vs_copy = [&](const char* key, const char* what) {
    const double v = get(key);
    std::printf("SUMMARY %s_vs_copy_bandwidth %.3f (%s: %.0f GB/s effective, device copy %.0f GB/s)\n", key,
                copy > 0 ? v / copy : 0.0, what, v, copy);
  };
  vs_copy("sum_outer_GBps", "sum over dim 0 of 8192x8192 float32 (non-inner rows)");
  vs_copy("sum_inner_GBps", "sum over dim 1 of 8192x8192 float32");
  vs_copy("sum_rows64_GBps", "sum over dim 1 of 2^20x64 float32 (a warp per row)");
  vs_copy("badd_row_GBps", "8192x8192 + [8192] float32");
  vs_copy("badd_col_GBps", "8192x8192 + [8192, 1] float32");
  vs_copy("badd_col_index64_GBps", "8192x8192 + [8192, 1] float32, 64-bit index math forced");
  vs_copy("scalar_mul_GBps", "2^26 float32 * 2.5");
  const double gemm = get("conv_gemm_cublas_TFLOPs");
  std::printf(
      "SUMMARY conv_fwd_vs_cublas %.3f (conv2d 64x64x56x56, 3x3: %.2f TFLOP/s; cuBLAS on its implicit GEMM %.2f)\n",
      gemm > 0 ? get("conv_fwd_TFLOPs") / gemm : 0.0, get("conv_fwd_TFLOPs"), gemm);
  std::printf("SUMMARY conv_fwdbwd_vs_cublas %.3f (forward and both gradients: %.2f TFLOP/s; cuBLAS %.2f)\n",
              gemm > 0 ? get("conv_fwdbwd_TFLOPs") / gemm : 0.0, get("conv_fwdbwd_TFLOPs"), gemm);
  auto h = [&](const char* k) { return rep.host_us.count(k) ? rep.host_us.at(k) : 0.0; };
  std::printf("SUMMARY host_us_per_op %.2f (wick add of 256 floats; a bare cudaMemsetAsync takes %.2f us)\n",
              h("BM_HostTimePerOp"), h("BM_HostTimeRawRuntimeCall"));
}
}  // namespace

int main(int argc, char** argv) {
  if (wick::cuda::device_count() == 0) {
    std::printf("bench_cuda: SKIPPED: no CUDA device (%s)\n", wick::cuda::unavailable_reason().c_str());
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_summary(reporter);
  return 0;
}

#else  // !WICK_WITH_CUDA

int main() {
  std::printf("bench_cuda: SKIPPED: wick was built without CUDA support\n");
  return 0;
}

#endif
