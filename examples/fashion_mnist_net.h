#pragma once
// The Fashion-MNIST demo's CNN, shared by examples/fashion_mnist.cpp and
// benchmarks/bench_train_step.cpp (benchmarks/train_step_pytorch.py builds the same network):
//
//   [N, 1, 28, 28] -> conv 3x3 (1 -> c1, padding 1) -> max-pool 2 -> ReLU
//                  -> conv 3x3 (c1 -> c2, padding 1) -> max-pool 2 -> ReLU
//                  -> flatten (c2 * 7 * 7) -> linear (-> hidden) -> ReLU -> linear (-> 10)
//
// ReLU after the pool rather than before: max-pooling commutes with any non-decreasing function,
// so the network computes exactly what conv-ReLU-pool computes (values and gradients), with a
// quarter of the ReLU work.
#include <memory>

#include "wick/nn/nn.h"

namespace fashion {

struct NetConfig {
  int64_t c1 = 16, c2 = 32, hidden = 128;
};

inline wick::nn::Sequential make_net(const NetConfig& c = {}) {
  using namespace wick::nn;
  return Sequential(Conv2d(Conv2dOptions(1, c.c1, 3).padding(1)), MaxPool2d(2), ReLU(),
                    Conv2d(Conv2dOptions(c.c1, c.c2, 3).padding(1)), MaxPool2d(2), ReLU(), Flatten(),
                    Linear(c.c2 * 7 * 7, c.hidden), ReLU(), Linear(c.hidden, 10));
}

}  // namespace fashion
