// DataParallel with saved tensor hooks (Note [Saved tensor hooks]) and the non-reentrant
// checkpoint built on them (Note [Non-reentrant checkpoint]), on cpu:0 and cpu:1. Truths: the
// same DataParallel step without hooks or checkpoint (gradients equal bit for bit), and the
// replicas' saves counted per device (the two replicas run the same module, so they save as
// many tensors each).
#include <wick/autograd/activation_checkpoint.h>
#include <wick/autograd/saved_tensors_hooks.h>
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;
using wick::test::grads_of;

namespace {

// Linear, Tanh, Linear; the middle under a non-reentrant checkpoint when asked.
class Block : public nn::Cloneable<Block> {
 public:
  explicit Block(bool checkpointed) : checkpointed_(checkpointed) {
    fc1_ = register_module("fc1", std::make_shared<nn::LinearImpl>(10, 8, f64()));
    fc2_ = register_module("fc2", std::make_shared<nn::LinearImpl>(8, 5, f64()));
  }
  Tensor forward(const Tensor& x) {
    // A replica is freed when forward returns; the recomputation in backward needs it, so the
    // function holds it.
    auto middle = [self = shared_from_this(), this](const Tensor& t) {
      return child(fc2_).forward(child(fc1_).forward(t).tanh());
    };
    return checkpointed_ ? autograd::checkpoint(middle, x, {.use_reentrant = false}) : middle(x);
  }

 private:
  bool checkpointed_;
  nn::ChildSlot<nn::LinearImpl> fc1_, fc2_;
};

}  // namespace

TEST_CASE(
    "data_parallel: saved tensor hooks reach every replica, and non-reentrant checkpoints inside and around it give "
    "its gradients") {
  const std::vector<Device> ids = {cpu(0), cpu(1)};
  manual_seed(3);
  const Tensor input = randn({20, 10}, f64());
  auto run = [&](bool checkpoint_inside, int mode) {
    manual_seed(4);
    auto m = std::make_shared<Block>(checkpoint_inside);
    std::mutex mutex;
    std::map<Device, int> packs;
    Tensor out;
    if (mode == 1) {  // counting hooks around the step's forward
      autograd::graph::saved_tensors_hooks hooks(
          [&](const Tensor& t) {
            std::lock_guard<std::mutex> lock(mutex);
            ++packs[t.device()];
            return t;
          },
          [](const Tensor& t) { return t; });
      out = data_parallel(m, input, ids);
    } else if (mode == 2) {  // a non-reentrant checkpoint around it
      out = autograd::checkpoint([&](const Tensor& x) { return data_parallel(m, x, ids); }, input,
                                 {.use_reentrant = false});
    } else {
      out = data_parallel(m, input, ids);
    }
    out.sum().backward();
    if (mode == 1 && checkpoint_inside) {
      CHECK(packs.empty());  // every save is inside a checkpoint, whose hooks are the innermost
    } else if (mode == 1) {
      CHECK(packs[cpu(0)] > 0);
      CHECK(packs[cpu(1)] == packs[cpu(0)]);
    }
    return grads_of(*m);
  };
  const std::vector<Tensor> truth = run(false, 0);
  for (bool inside : {false, true}) {
    for (int mode : {0, 1, 2}) {
      if (!inside && mode == 0) continue;
      INFO("checkpoint inside the replicas " << inside << ", mode " << mode);
      const std::vector<Tensor> got = run(inside, mode);
      REQUIRE(got.size() == truth.size());
      for (size_t k = 0; k < got.size(); ++k) CHECK_ALLCLOSE(got[k], truth[k], 0.0, 0.0);
    }
  }
}
