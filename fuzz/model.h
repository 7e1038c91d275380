#pragma once
// The model and optimizers the checkpoint harness loads into, and its seeds are saved from.
#include <wick/wick.h>

#include <memory>
#include <vector>

namespace wick::fuzz {

struct Model {
  nn::Sequential net{
      {"fc1", nn::Linear(3, 4)}, {"bn", nn::BatchNorm1d(4)}, {"fc2", nn::Linear(nn::LinearOptions(4, 2).bias(false))}};
  /// How many optimizers optimizer() makes: every optimizer of wick::optim, with the options
  /// that give each its full state (so a hostile file meets every state name and option value).
  static constexpr int kOptimizers = 10;
  /// 0: SGD with momentum and Nesterov; 1: Adam with amsgrad; 2: AdamW with amsgrad; 3: RMSprop
  /// with momentum, centered; 4: plain RMSprop (no optional state); 5: Adagrad with lr_decay and
  /// an initial accumulator value; 6: Adamax with weight decay and maximize; 7: NAdam (its scalar
  /// mu_product); 8: RAdam; 9: Rprop with maximize.
  std::unique_ptr<optim::Optimizer> optimizer(int kind) const {
    const std::vector<Tensor> p = net->parameters();
    switch (kind) {
      case 0:
        return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
      case 1:
        return std::make_unique<optim::Adam>(p, optim::AdamOptions(0.01).amsgrad(true));
      case 2:
        return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(0.01).amsgrad(true));
      case 3:
        return std::make_unique<optim::RMSprop>(p, optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
      case 4:
        return std::make_unique<optim::RMSprop>(p, optim::RMSpropOptions(0.01));
      case 6:
        return std::make_unique<optim::Adamax>(p, optim::AdamaxOptions(0.01).weight_decay(0.1).maximize(true));
      case 7:
        return std::make_unique<optim::NAdam>(p, optim::NAdamOptions(0.01).weight_decay(0.1));
      case 8:
        return std::make_unique<optim::RAdam>(p, optim::RAdamOptions(0.01));
      case 9:
        return std::make_unique<optim::Rprop>(p, optim::RpropOptions(0.01).maximize(true));
      default:
        return std::make_unique<optim::Adagrad>(
            p, optim::AdagradOptions(0.1).lr_decay(0.01).initial_accumulator_value(0.1));
    }
  }
};

}  // namespace wick::fuzz
