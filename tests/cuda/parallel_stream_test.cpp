// parallel_apply runs each replica on the caller's current stream of its device (Note
// [parallel_apply threads]): under a StreamGuard on a pool stream, a replica queued to the
// device's worker thread sees that stream, its kernels are ordered with the caller's, and the
// worker's own stream is restored afterwards. Backward's nodes on a worker do the same (Note
// [Backward streams]).
#include <thread>

#include "cuda_test_util.h"
#include "wick/autograd/functions.h"
#include "wick/cuda/stream.h"
#include "wick/nn/module.h"
#include "wick/parallel/parallel_apply.h"

using namespace wick;
using namespace wick::cuda_test;

namespace {
// Records the current stream of its device, then adds one to its input there.
struct StreamProbe : nn::Module {
  Device device;
  void* seen = nullptr;
  explicit StreamProbe(Device d) : device(d) {}
  std::shared_ptr<nn::Module> shallow_copy() const override { return std::make_shared<StreamProbe>(*this); }
  nn::Value forward_value(const std::vector<nn::Value>& args) override {
    if (device.is_cuda()) seen = cuda::get_current_stream(device.index).handle();
    return nn::Value(nat::binary(BinaryOp::Add, args[0].tensor(), Scalar(1)));
  }
};
}  // namespace

TEST_CASE("parallel_apply: replicas run on the caller's current stream", "[cuda][parallel]") {
  cuda::Stream s = cuda::get_stream_from_pool(0);
  REQUIRE(s != cuda::get_current_stream(0));
  // cpu:0 first: replica 0 runs on the caller, the CUDA replica on cuda:0's worker thread.
  auto cpu_probe = std::make_shared<StreamProbe>(kCPU);
  auto gpu_probe = std::make_shared<StreamProbe>(gpu());
  Tensor big_cpu = random_cpu({1 << 20}, kFloat32);
  const std::vector<std::shared_ptr<nn::Module>> modules{cpu_probe, gpu_probe};
  const std::vector<Device> devices{kCPU, gpu()};
  std::vector<nn::Value> outs;
  {
    cuda::StreamGuard guard(s);
    Tensor x = to_gpu(big_cpu);  // queued on s
    const std::vector<std::vector<nn::Value>> inputs{{nn::Value(big_cpu)}, {nn::Value(x)}};
    outs = parallel::parallel_apply(modules, inputs, devices);
    // Read back on s: ordered after the replica's kernel only if the replica used s.
    CHECK(gpu_probe->seen == s.handle());
    s.synchronize();
  }
  Tensor expected = nat::binary(BinaryOp::Add, big_cpu, Scalar(1));
  Tensor got = to_cpu(outs[1].tensor());
  check_equal(got, expected);
  // The worker's stream is its own again: a plain call sees the default stream.
  gpu_probe->seen = nullptr;
  const std::vector<std::vector<nn::Value>> plain{{nn::Value(big_cpu)}, {nn::Value(to_gpu(big_cpu))}};
  parallel::parallel_apply(modules, plain, devices);
  CHECK(gpu_probe->seen == cuda::get_current_stream(0).handle());
}

TEST_CASE("backward: nodes on cuda:0's worker run on the caller's current stream", "[cuda][autograd]") {
  // Note [Backward streams]: the loss is moved to the CPU, so the caller works for the CPU and
  // cuda:0's nodes run on cuda:0's worker thread, whose own stream is the default one.
  cuda::Stream s = cuda::get_stream_from_pool(0);
  REQUIRE(s != cuda::get_current_stream(0));
  Tensor big = random_cpu({1 << 20}, kFloat64);
  void* seen = nullptr;
  std::thread::id ran_on;
  Tensor grad_cpu;
  {
    cuda::StreamGuard guard(s);
    Tensor x = to_gpu(big).requires_grad_();  // queued on s
    Tensor y = x * 3.0;
    y.register_hook([&](const Tensor& g) {
      seen = cuda::get_current_stream(0).handle();
      ran_on = std::this_thread::get_id();
      return g;
    });
    (y * y).sum().to(kCPU).backward();
    grad_cpu = to_cpu(x.grad());  // on s: ordered after the backward's kernels only if they used s
  }
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(seen == s.handle());
  check_close(grad_cpu, nat::binary(BinaryOp::Mul, big, Scalar(18.0)), 1e-12, 1e-12);  // d/dx (3x)^2
}
