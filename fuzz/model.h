#pragma once
// The model and optimizers the checkpoint harness loads into, and its seeds are saved from.
#include <wick/wick.h>

#include <memory>

namespace wick::fuzz {

struct Model {
  std::shared_ptr<nn::Sequential> net = std::make_shared<nn::Sequential>();
  Model() {
    const TensorOptions f32(kFloat32);
    net->push_back("fc1", std::make_shared<nn::Linear>(3, 4, true, f32));
    net->push_back("bn", std::make_shared<nn::BatchNorm1d>(4));
    net->push_back("fc2", std::make_shared<nn::Linear>(4, 2, false, f32));
  }
  /// kind 0: SGD with momentum and Nesterov; kind 1: Adam with amsgrad.
  std::unique_ptr<optim::Optimizer> optimizer(int kind) const {
    if (kind == 0) return std::make_unique<optim::SGD>(net->parameters(), optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
    return std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  }
};

}  // namespace wick::fuzz
