// GPU benchmarks (docs/cuda.md, "Benchmarks"). Each result is a ratio to a baseline measured in
// the same run, so the numbers travel between machines:
//   - elementwise add of 2^26 float32 as a fraction of the device's copy bandwidth
//     (cudaMemcpyAsync device-to-device of the same size);
//   - wick's matmul of 8192^3 float32 as a fraction of a direct cuBLAS call on the same buffers;
//   - the host time per launched op (wick add on tiny tensors), next to a bare runtime call.
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

#include "wick/core/native.h"
#include "wick/cuda/runtime.h"
#include "wick/cuda/stream.h"

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
