// Tour page 9 (docs/tour/09-comm-hook.md): DistributedDataParallel's communication hooks.
//
//   mpirun -np 2 tour_09_comm_hook
//
// Every rank trains the same float64 MLP (same seed) for 3 SGD steps on rows of its own, four
// times over, each time with another way to synchronise the gradients: DDP's own averaging
// all-reduce, ddp_comm_hooks::allreduce_hook, a hook written here that sends the gradients as
// float32 (half the bytes) and ddp_comm_hooks::noop_hook, which sends nothing. Each rank prints a
// checksum of its parameters after each run and how far they are from the first run's; rank 0
// prints what the compressing hook was given in the first step.
#include <wick/wick.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "param_checksum.h"
#include "wick/distributed/distributed.h"

using namespace wick;
namespace dist = wick::distributed;

namespace {

/// A hook written by hand: each rank sends its share of the average as float32, half of the
/// float64 bucket's bytes; the sum comes back into the float64 bucket, rounded. (PyTorch's
/// fp16_compress_hook is the same idea one size down.)
dist::CommHook float32_compress_hook(dist::ProcessGroup& group, bool& show) {
  return [&group, &show](dist::GradBucket& bucket) {
    const Tensor& buffer = bucket.buffer();  // this rank's gradients, float64, not yet divided
    if (show)
      std::printf("[rank 0] hook: bucket %lld, %zu parameters, %lld float64 values%s\n",
                  static_cast<long long>(bucket.index()), bucket.parameters().size(),
                  static_cast<long long>(buffer.numel()), bucket.is_last() ? " (the last)" : "");
    const Tensor compressed = (buffer * (1.0 / group.size())).to(kFloat32);
    auto sent = group.all_reduce(compressed, dist::ReduceOp::Sum, bucket.tag());
    return dist::Future::of(sent, compressed)->then([target = Tensor(buffer)](const Tensor& average) mutable {
      target.copy_(average);  // back to float64: what DDP then copies into .grad
      return target;
    });
  };
}

}  // namespace

int main() {
  try {
    auto group = dist::init_process_group({.timeout = std::chrono::seconds(60)});
    const int rank = group->rank();
    manual_seed(100 + rank);  // each rank's own rows
    const Tensor x = randn({3, 8, 4}, kFloat64), y = randn({3, 8, 2}, kFloat64);
    bool show = false;
    struct Run {
      const char* name;
      dist::CommHook hook;  // empty: DDP's own
    };
    const Run runs[] = {{"DDP's own all-reduce", nullptr},
                        {"allreduce_hook", dist::ddp_comm_hooks::allreduce_hook()},
                        {"float32 compression", float32_compress_hook(*group, show)},
                        {"noop_hook", dist::ddp_comm_hooks::noop_hook()}};
    std::vector<Tensor> first;  // the first run's parameters
    for (const Run& run : runs) {
      manual_seed(1);  // the same model on every rank, in every run
      auto net = nn::Sequential(nn::Linear(4, 16), nn::Tanh(), nn::Linear(16, 2));
      net->to(kFloat64);
      dist::DistributedDataParallelOptions options;
      options.first_bucket_bytes = 200;  // two buckets: fc2's gradients, then fc1's
      dist::DistributedDataParallel ddp(net.ptr(), options);
      if (run.hook) ddp.register_comm_hook(run.hook);
      optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
      for (int64_t step = 0; step < 3; ++step) {
        show = rank == 0 && step == 0;
        sgd.zero_grad();
        nn::F::mse_loss(ddp.forward(x[step]), y[step]).backward();
        sgd.step();
      }
      show = false;
      const auto params = net->parameters();
      double diff = 0;
      if (first.empty())
        for (const Tensor& p : params) first.push_back(p.detach().clone());
      for (size_t i = 0; i < params.size(); ++i)
        diff = std::max(diff, (params[i] - first[i]).abs().max().item<double>());
      std::printf("[rank %d] %-22s checksum %016llx, largest difference from the first run %.3g\n", rank, run.name,
                  static_cast<unsigned long long>(examples::param_checksum(*net)), diff);
    }
    dist::destroy_process_group();
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "tour_09_comm_hook: %s\n", e.what());
    return 1;
  }
}
