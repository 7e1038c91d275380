#pragma once
// The small network, input and state_dict snapshot of the checkpoint tests
// (tests/nn/checkpoint*_test.cpp).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/core/generator.h"
#include "wick/nn/nn.h"

namespace wick::test::checkpoint_nets {

/// Conv2d(1, 4, 3, padding 1), BatchNorm2d, ReLU, MaxPool2d(2), Flatten, Linear(64, hidden), its
/// parameters drawn after manual_seed(seed).
inline std::shared_ptr<nn::SequentialImpl> make_net(uint64_t seed, int64_t hidden = 5) {
  manual_seed(seed);
  return nn::Sequential(std::make_shared<nn::Conv2dImpl>(nn::Conv2dOptions(1, 4, 3).padding(1)),
                        std::make_shared<nn::BatchNorm2dImpl>(4), std::make_shared<nn::ReLUImpl>(),
                        std::make_shared<nn::MaxPool2dImpl>(2), std::make_shared<nn::FlattenImpl>(),
                        std::make_shared<nn::LinearImpl>(4 * 4 * 4, hidden))
      .ptr();
}

/// A batch [3, 1, 8, 8] drawn after manual_seed(99).
inline Tensor input() {
  manual_seed(99);
  return wick::randn({3, 1, 8, 8});
}

// Every value of every state_dict entry, by name (for "nothing changed" checks).
inline std::vector<std::pair<std::string, std::vector<double>>> values(const nn::Module& m) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (const auto& [k, t] : m.state_dict()) out.emplace_back(k, t.to_vector<double>());
  return out;
}

}  // namespace wick::test::checkpoint_nets
