// libFuzzer harness: the checkpoint loaders (a model, an optimizer, a training checkpoint) through
// a real file, for every optimizer of wick::optim (fuzz::Model::optimizer); whatever loads is then
// trained for one step (Note [Fuzzing] in fuzz_util.h).
#include <wick/wick.h>

#include <cstdint>
#include <memory>

#include "fuzz_util.h"
#include "model.h"

namespace {

// One step of `m` with `opt` on a fixed batch.
void train_step(wick::fuzz::Model& m, wick::optim::Optimizer& opt) {
  opt.zero_grad();
  wick::Tensor x = wick::ones({2, 3}, wick::TensorOptions(wick::kFloat32));
  m.net->forward(x).square().sum().backward();
  opt.step();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static wick::fuzz::ScratchFile file("-checkpoint.safetensors");
  const std::string& path = file.write(data, size);
  for (int kind = 0; kind < wick::fuzz::Model::kOptimizers; ++kind) {
    wick::fuzz::Model m;
    auto opt = m.optimizer(kind);
    try {
      wick::nn::load(*m.net, path, /*strict=*/false);
      train_step(m, *opt);
    } catch (const wick::Error&) {
    }
    try {
      wick::nn::load(*opt, path);
      train_step(m, *opt);
    } catch (const wick::Error&) {
    }
    try {
      wick::nn::load_checkpoint(path, *m.net, *opt);
      train_step(m, *opt);
    } catch (const wick::Error&) {
    }
  }
  return 0;
}
