// replicate: graph cloning versus data movement, on CPU devices.
//
// Trees: a Sequential of 10, 100 or 1000 Linear(64, 64) layers, and a ResNet-50-shaped tree
// (Bottleneck blocks [3, 4, 6, 3], 161 modules, 25.6 M float32 parameters). Each is replicated
// to 1, 2, 4 and 8 CPU devices with detach = false (one differentiable Broadcast for all
// parameters), and the replicas are dropped again, as DataParallel does every step.
//
// Reported per run (counters):
//   clone_us_per_module_replica  (end-to-end time - broadcast time) / (modules x replicas):
//                                index maps, shells, rewiring, training flags, release
//                                (target < 0.2 us)
//   data_vs_memcpy               broadcast time / memcpy time of the same bytes (warm buffers)
//   e2e_vs_memcpy                end-to-end time / memcpy time of the same bytes (target < 1.3)
//   e2e_vs_memcpy_fresh          end-to-end time / (allocate every bucket + memcpy + free them all),
//                                the baseline that pays for first-touch page faults as replicate does
//   release_us_per_module_replica  dropping the replicas (freeing the copies and the graph, returning
//                                the shells), per module and replica
// Times are CPU time of the calling thread (replicate is single-threaded), so that a loaded
// machine does not distort them.
//   memcpy_GBps                  the memcpy bandwidth measured in the same run
// The memcpy baselines copy exactly the bytes replicate moves (every parameter and buffer to
// every device but the first), from the same source tensors.
#include <benchmark/benchmark.h>
#include <wick/nn/nn.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;

namespace {

// Thread CPU time: replicate and the baselines are single-threaded, and CPU time stays
// meaningful on a loaded machine (wall time is reported by Google Benchmark alongside).
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};

std::shared_ptr<nn::Module> linear_tree(int n) {
  auto seq = nn::Sequential();
  for (int i = 0; i < n; ++i) seq->push_back(nn::Linear(64, 64));
  return seq;
}

std::shared_ptr<nn::Module> conv_bn(int64_t in, int64_t out, int64_t k, int64_t stride,
                                    std::shared_ptr<nn::SequentialImpl> s) {
  s->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false)));
  s->push_back(nn::BatchNorm2d(out));
  return s;
}

// A Bottleneck: conv1x1-bn-conv3x3-bn-conv1x1-bn (+ downsample conv1x1-bn) + relu.
std::shared_ptr<nn::Module> bottleneck(int64_t in, int64_t width, int64_t stride, bool downsample) {
  auto block = nn::Sequential();
  block->push_back("conv1", nn::Conv2d(nn::Conv2dOptions(in, width, 1).bias(false)));
  block->push_back("bn1", nn::BatchNorm2d(width));
  block->push_back("conv2", nn::Conv2d(nn::Conv2dOptions(width, width, 3).stride(stride).padding(1).bias(false)));
  block->push_back("bn2", nn::BatchNorm2d(width));
  block->push_back("conv3", nn::Conv2d(nn::Conv2dOptions(width, width * 4, 1).bias(false)));
  block->push_back("bn3", nn::BatchNorm2d(width * 4));
  block->push_back("relu", nn::ReLU());
  if (downsample) block->push_back("downsample", conv_bn(in, width * 4, 1, stride, nn::Sequential()));
  return block;
}

std::shared_ptr<nn::Module> resnet50() {
  auto net = nn::Sequential();
  net->push_back("conv1", nn::Conv2d(nn::Conv2dOptions(3, 64, 7).stride(2).padding(3).bias(false)));
  net->push_back("bn1", nn::BatchNorm2d(64));
  net->push_back("relu", nn::ReLU());
  net->push_back("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t in = 64;
  const int64_t blocks[4] = {3, 4, 6, 3}, widths[4] = {64, 128, 256, 512};
  for (int l = 0; l < 4; ++l) {
    auto layer = nn::Sequential();
    for (int64_t b = 0; b < blocks[l]; ++b) {
      layer->push_back(bottleneck(in, widths[l], b == 0 && l > 0 ? 2 : 1, b == 0));
      in = widths[l] * 4;
    }
    net->push_back("layer" + std::to_string(l + 1), layer);
  }
  net->push_back("avgpool", nn::AdaptiveAvgPool2d(1));
  net->push_back("flatten", nn::Flatten());
  net->push_back("fc", nn::Linear(2048, 1000));
  return net;
}

std::shared_ptr<nn::Module> tree(int id) {
  // Never destroyed: the modules must not outlive the CPU allocator at exit.
  static auto* cache = new std::shared_ptr<nn::Module>[4];
  if (!cache[id]) cache[id] = id == 3 ? resnet50() : linear_tree(id == 0 ? 10 : id == 1 ? 100 : 1000);
  return cache[id];
}

std::vector<Device> cpu_devices(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i) d.emplace_back(DeviceType::CPU, i);
  return d;
}

double seconds(double a, double b) { return b - a; }

// The memcpy baselines: the same source tensors copied to (devices - 1) destinations, in
// 10 MiB-bucket-sized destination buffers (warm: allocated once and reused; fresh: allocated,
// filled and freed each repetition).
struct Baseline {
  double warm = 0, fresh = 0;
  size_t bytes = 0;
};

Baseline memcpy_baseline(const std::vector<Tensor>& tensors, int devices) {
  Baseline b;
  if (devices < 2) return b;
  std::vector<std::vector<const Tensor*>> buckets{{}};
  size_t open = 0;
  for (const Tensor& t : tensors) {
    if (!buckets.back().empty() && open + t.nbytes() > (size_t{10} << 20)) {
      buckets.emplace_back();
      open = 0;
    }
    buckets.back().push_back(&t);
    open += t.nbytes();
  }
  auto bucket_bytes = [](const std::vector<const Tensor*>& bk) {
    size_t n = 0;
    for (auto* t : bk) n += t->nbytes();
    return n;
  };
  auto fill = [&](char* dst, const std::vector<const Tensor*>& bk) {
    for (auto* t : bk) {
      std::memcpy(dst, t->data_ptr(), t->nbytes());
      dst += t->nbytes();
    }
  };
  std::vector<std::vector<char*>> warm(static_cast<size_t>(devices - 1));
  for (auto& per : warm)
    for (auto& bk : buckets) {
      char* p = static_cast<char*>(std::aligned_alloc(64, (bucket_bytes(bk) + 63) & ~size_t{63}));
      std::memset(p, 0, bucket_bytes(bk));
      per.push_back(p);
    }
  double best_warm = 1e9, best_fresh = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
    for (auto& per : warm)
      for (size_t k = 0; k < buckets.size(); ++k) fill(per[k], buckets[k]);
    auto t1 = Clock::now();
    // fresh: every bucket of every destination allocated, filled, and all freed at the end, the
    // allocation pattern of replicate followed by dropping the replicas
    std::vector<char*> fresh;
    for (int d = 1; d < devices; ++d)
      for (auto& bk : buckets) {
        char* p = static_cast<char*>(std::aligned_alloc(64, (bucket_bytes(bk) + 63) & ~size_t{63}));
        fill(p, bk);
        fresh.push_back(p);
      }
    benchmark::DoNotOptimize(fresh.data());
    for (char* p : fresh) std::free(p);
    auto t2 = Clock::now();
    best_warm = std::min(best_warm, seconds(t0, t1));
    best_fresh = std::min(best_fresh, seconds(t1, t2));
  }
  for (auto& per : warm)
    for (char* p : per) std::free(p);
  b.warm = best_warm;
  b.fresh = best_fresh;
  for (auto& bk : buckets) b.bytes += bucket_bytes(bk);
  b.bytes *= static_cast<size_t>(devices - 1);
  return b;
}

void BM_replicate(benchmark::State& state) {
  auto module = tree(static_cast<int>(state.range(0)));
  const int n = static_cast<int>(state.range(1));
  const auto devices = cpu_devices(n);
  std::vector<Tensor> tensors = module->parameters();
  for (auto& b : module->buffers()) tensors.push_back(b);
  const Baseline base = memcpy_baseline(tensors, n);

  ReplicateProfile p;
  { auto warmup = replicate(module, devices, false, &p); }  // builds the index maps and shells
  double total = 0, broadcast = 0, release = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    double t1;
    {
      auto replicas = replicate(module, devices, false, &p);
      benchmark::DoNotOptimize(replicas.data());
      t1 = Clock::now();
    }  // dropping the replicas: the shells go back to the cache, the copies and the graph are freed
    auto t2 = Clock::now();
    total += seconds(t0, t2);
    release += seconds(t1, t2);
    broadcast += p.broadcast_seconds;
    state.SetIterationTime(seconds(t0, t2));
  }
  const double iters = static_cast<double>(state.iterations());
  const double e2e = total / iters, data = broadcast / iters, rel = release / iters;
  const double per = 1e6 / (static_cast<double>(p.num_modules) * n);
  state.counters["modules"] = static_cast<double>(p.num_modules);
  state.counters["MB_moved"] = static_cast<double>(p.bytes_moved) / 1e6;
  state.counters["clone_us_per_module_replica"] = (e2e - data - rel) * per;
  state.counters["release_us_per_module_replica"] = rel * per;
  state.counters["broadcast_ms"] = data * 1e3;
  if (n > 1) {
    state.counters["memcpy_GBps"] = static_cast<double>(base.bytes) / base.warm / 1e9;
    state.counters["data_vs_memcpy"] = data / base.warm;
    state.counters["e2e_vs_memcpy"] = e2e / base.warm;
    state.counters["e2e_vs_memcpy_fresh"] = e2e / base.fresh;
  }
}

}  // namespace

BENCHMARK(BM_replicate)
    ->ArgNames({"tree", "devices"})
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2, 4, 8}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
