// The fault cases, driven by tests/scripts/ddp_faults_test.sh (hidden tags: they end the job on
// purpose, so no plain run selects them).
//   [.fault-stall]   the last rank stalls past the timeout before an all_reduce: the job must
//                    end with the timeout message, not hang.
//   [.fault-kill]    DDP training where rank 0 checkpoints every step and the last rank kills
//                    itself with SIGKILL at step 3: the job must end non-zero, quickly.
//   [.fault-resume]  one process: the last checkpoint of the killed job loads (model and
//                    optimizer) and holds step 3's state.
// WICK_TEST_FAULT_DIR names the checkpoint folder.
#include <signal.h>
#include <unistd.h>

#include <thread>

#include "dist_test_util.h"

using namespace wick;

namespace {

std::string checkpoint_path() {
  const char* dir = std::getenv("WICK_TEST_FAULT_DIR");
  return std::string(dir ? dir : ".") + "/fault.ckpt.safetensors";
}

std::shared_ptr<nn::SequentialImpl> small_net() {
  return nn::Sequential(std::make_shared<nn::LinearImpl>(6, 16), std::make_shared<nn::TanhImpl>(),
                        std::make_shared<nn::LinearImpl>(16, 2))
      .ptr();
}

}  // namespace

TEST_CASE("fault: a stalled rank ends the job with the timeout message", "[.fault-stall]") {
  auto& g = test::world();
  Tensor t = ones({1000});
  g.all_reduce(t)->wait();  // everyone is up
  if (g.rank() == g.size() - 1) std::this_thread::sleep_for(g.timeout() * 3);
  g.all_reduce(t)->wait();  // the others time out here and abort the job
  FAIL("the job should have been aborted");
}

TEST_CASE("fault: a rank killed mid-training ends the job", "[.fault-kill]") {
  auto& g = test::world();
  manual_seed(1);
  auto net = small_net();
  distributed::DistributedDataParallel ddp(net);
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  manual_seed(2);
  const Tensor x = randn({8, 6}), y = randint(0, 2, {8});
  for (int64_t step = 1; step <= 1000; ++step) {
    if (step == 4 && g.rank() == g.size() - 1) ::kill(::getpid(), SIGKILL);
    opt.zero_grad();
    nn::F::cross_entropy(ddp.forward(x), y).backward();
    opt.step();
    if (g.rank() == 0 && step <= 3) nn::save_checkpoint(checkpoint_path(), *net, opt, step);
  }
  FAIL("the job should have ended when a rank died");
}

TEST_CASE("fault: the killed job's last checkpoint is intact and resumable", "[.fault-resume]") {
  manual_seed(7);
  auto net = small_net();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  const auto info = nn::load_checkpoint(checkpoint_path(), *net, opt);
  CHECK(info.epoch == 3);
  // The independent truth: every rank trained the same model on the same batch, so DDP's average
  // is the one-process gradient, and the checkpoint holds three one-process SGD steps.
  manual_seed(1);
  auto reference = small_net();
  optim::SGD reference_opt(reference->parameters(), optim::SGDOptions(0.1));
  manual_seed(2);
  const Tensor x = randn({8, 6}), y = randint(0, 2, {8});
  auto step = [&](nn::Module& m, optim::Optimizer& o) {
    o.zero_grad();
    nn::F::cross_entropy(m.forward_tensor(x), y).backward();
    o.step();
  };
  auto check_same = [&] {
    const auto got = net->parameters(), want = reference->parameters();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK_ALLCLOSE(got[i], want[i], 1e-6, 1e-7);
  };
  for (int k = 0; k < 3; ++k) step(*reference, reference_opt);
  check_same();
  // Resumable: one more step from the checkpoint equals a fourth step of the reference.
  step(*net, opt);
  step(*reference, reference_opt);
  check_same();
}
