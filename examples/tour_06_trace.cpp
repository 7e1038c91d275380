// Tour page 6 (docs/tour/06-trace.md): a DataParallel training step, traced.
//
//   tour_06_trace [output dir]      writes trace.json there (default: .); open it in
//                                   https://ui.perfetto.dev or chrome://tracing
#include <cstdio>
#include <filesystem>

#include "every_entry_net.h"

using namespace wick;

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(dir);
  manual_seed(0);
  auto mlp = examples::small_mlp();
  parallel::DataParallel dp(mlp, {Device(DeviceType::CPU, 0), Device(DeviceType::CPU, 1)});
  optim::SGD sgd(mlp->parameters(), optim::SGDOptions(0.1));
  Tensor x = randn({8, 3});
  {
    profiler::Trace trace(dir + "/trace.json");  // written when the scope ends
    for (int step = 0; step < 2; ++step) {
      sgd.zero_grad();
      Tensor loss = nn::F::mse_loss(dp.forward(x), zeros({8, 2}));
      loss.backward();
      sgd.step();
      std::printf("step %d: loss %.6f\n", step, loss.item<double>());
    }
  }
  std::printf("wrote %s/trace.json\n", dir.c_str());
  return 0;
}
