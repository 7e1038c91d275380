// Tour page 10 (docs/tour/10-checkpoint.md): what backward keeps from forward, seen through
// saved-tensor hooks, and activation checkpointing, which keeps less and computes again. The
// same MLP step three ways: as usual, every block under a non-reentrant checkpoint, and
// checkpoint_sequential in 2 segments; memory after forward, peak memory, the blocks' forward
// calls, and the gradients compared bit for bit with the plain step (exit status 1 if they
// differ).
//
//   tour_10_checkpoint [output dir]   writes checkpoint.dot there (default: .)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "wick/wick.h"

using namespace wick;

namespace {

constexpr int64_t kWidth = 256, kHidden = 1024, kBatch = 1024, kBlocks = 6;

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

int g_block_calls = 0;  // every Block::forward, to count the recomputations

// A transformer's MLP block: up to 4x the width, tanh, back down, tanh. Its inner activation
// (kBatch x kHidden) is what a checkpoint does not keep.
class Block : public nn::Cloneable<Block> {
 public:
  Block() {
    up_ = register_module("up", std::make_shared<nn::LinearImpl>(kWidth, kHidden));
    down_ = register_module("down", std::make_shared<nn::LinearImpl>(kHidden, kWidth));
  }
  Tensor forward(const Tensor& x) {
    ++g_block_calls;
    return child(down_).forward(child(up_).forward(x).tanh()).tanh();
  }

 private:
  nn::ChildSlot<nn::LinearImpl> up_, down_;
};

// kBlocks blocks, the same weights every time (seed 1).
nn::Sequential make_mlp() {
  manual_seed(1);
  nn::Sequential mlp;
  for (int64_t i = 0; i < kBlocks; ++i) mlp->push_back(std::make_shared<Block>());
  return mlp;
}

struct Step {
  double kept_mib = 0, peak_mib = 0;
  int forward_calls = 0;
  std::vector<Tensor> grads;
};

enum class Mode { kPlain, kEveryBlock, kTwoSegments };

Step run(Mode mode, const Tensor& x) {
  nn::Sequential mlp = make_mlp();
  Step s;
  g_block_calls = 0;
  const int64_t before = memory_stats(kCPU).in_use;
  reset_peak_memory(kCPU);
  Tensor y;
  if (mode == Mode::kPlain) {
    y = mlp->forward(x);
  } else if (mode == Mode::kEveryBlock) {
    y = x;
    for (int64_t i = 0; i < static_cast<int64_t>(mlp->size()); ++i) {
      std::shared_ptr<nn::Module> block = (*mlp)[i];
      y = autograd::checkpoint([block](const Tensor& in) { return block->forward_tensor(in); }, y,
                               {.use_reentrant = false});
    }
  } else {
    y = nn::checkpoint_sequential(mlp, 2, x, {.use_reentrant = false});
  }
  Tensor loss = y.square().mean();
  s.kept_mib = mib(memory_stats(kCPU).in_use - before);
  loss.backward();
  s.peak_mib = mib(memory_stats(kCPU).peak - before);
  s.forward_calls = g_block_calls;
  for (const Tensor& p : mlp->parameters()) s.grads.push_back(p.grad());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);
  manual_seed(2);
  const Tensor x = randn({kBatch, kWidth});

  // 1. What backward keeps: every tensor an op saves goes through the pack hook.
  {
    nn::Sequential mlp = make_mlp();
    int64_t count = 0, bytes = 0;
    Tensor loss;
    {
      autograd::graph::saved_tensors_hooks count_them(
          [&](const Tensor& t) {
            ++count;
            bytes += t.numel() * static_cast<int64_t>(element_size(t.dtype()));
            return t;  // kept as it is: nothing changes
          },
          [](const Tensor& t) { return t; });
      loss = mlp->forward(x).square().mean();
    }
    std::printf("saved for backward: %lld tensors, %.1f MiB (%lld blocks %lld-%lld-%lld, batch %lld)\n",
                static_cast<long long>(count), mib(bytes), static_cast<long long>(kBlocks),
                static_cast<long long>(kWidth), static_cast<long long>(kHidden), static_cast<long long>(kWidth),
                static_cast<long long>(kBatch));
  }

  // 2. The same step three ways.
  const Step plain = run(Mode::kPlain, x);
  bool same = true;
  std::printf("%-36s %14s %12s %14s %s\n", "", "after forward", "peak", "forward calls", "gradients");
  for (Mode mode : {Mode::kPlain, Mode::kEveryBlock, Mode::kTwoSegments}) {
    const Step s = mode == Mode::kPlain ? plain : run(mode, x);
    bool equal = s.grads.size() == plain.grads.size();
    for (size_t i = 0; equal && i < s.grads.size(); ++i) equal = s.grads[i].equal(plain.grads[i]);
    same = same && equal;
    const char* name = mode == Mode::kPlain        ? "plain"
                       : mode == Mode::kEveryBlock ? "every block checkpointed"
                                                   : "checkpoint_sequential, 2 segments";
    std::printf("%-36s %10.1f MiB %8.1f MiB %14d %s\n", name, s.kept_mib, s.peak_mib, s.forward_calls,
                equal ? "equal, bit for bit" : "DIFFER");
  }

  // 3. The graph of a checkpointed block: its nodes are there, their saved tensors are holders.
  {
    nn::Sequential mlp = make_mlp();
    const Tensor small = randn({2, kWidth});
    std::shared_ptr<nn::Module> block = (*mlp)[0];
    const Tensor out = autograd::checkpoint([block](const Tensor& in) { return block->forward_tensor(in); }, small,
                                            {.use_reentrant = false});
    std::ofstream(dir + "/checkpoint.dot") << autograd::to_dot({out.sum()}, nn::dot_options(*mlp));
    std::printf("wrote %s/checkpoint.dot\n", dir.c_str());
  }
  return same ? 0 : 1;
}
