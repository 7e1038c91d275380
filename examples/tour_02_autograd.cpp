// Tour page 2 (docs/tour/02-autograd.md): the backward graph of an MLP loss, with parameter
// names, saved tensors and a dashed view edge; then anomaly mode on a NaN.
//
//   tour_02_autograd [output dir]   writes mlp_loss.dot there (default: .)
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "wick/wick.h"

using namespace wick;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);
  nn::Sequential net({{"fc1", nn::Linear(3, 4)}, {"act", nn::ReLU()}, {"fc2", nn::Linear(4, 2)}});

  Tensor x = ones({5, 3});
  Tensor y = net(x).view({10});
  Tensor loss = nn::F::mse_loss(y, zeros({10}));

  autograd::DotOptions o = nn::dot_options(*net);  // leaves named fc1.weight, ...
  o.root_names = {"loss"};
  std::ofstream(dir + "/mlp_loss.dot") << autograd::to_dot({loss}, o);
  std::printf("wrote %s/mlp_loss.dot\n", dir.c_str());

  // Anomaly mode: sqrt(0) * 0 is a clean 0 forward, but its backward is 0 / 0.
  Tensor z = zeros({1}, TensorOptions().requires_grad(true));
  try {
    autograd::detect_anomaly guard;
    mul(sqrt(z), zeros({1})).sum().backward();
  } catch (const Error& e) {
    std::printf("anomaly mode caught it:\n%s\n", e.what());
  }
  return 0;
}
