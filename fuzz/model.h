#pragma once
// The model and optimizers the checkpoint harness loads into, and its seeds are saved from.
#include <wick/wick.h>

#include <memory>

namespace wick::fuzz {

struct Model {
  nn::Sequential net{
      {"fc1", nn::Linear(3, 4)}, {"bn", nn::BatchNorm1d(4)}, {"fc2", nn::Linear(nn::LinearOptions(4, 2).bias(false))}};
  /// kind 0: SGD with momentum and Nesterov; kind 1: Adam with amsgrad.
  std::unique_ptr<optim::Optimizer> optimizer(int kind) const {
    if (kind == 0)
      return std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
    return std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  }
};

}  // namespace wick::fuzz
