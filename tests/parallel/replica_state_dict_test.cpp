// A replica's state_dict (PyTorch's test_save_replica_module, gh-37182: saving replicas made with
// detach false and true works). replicate_test.cpp's header names that port, but no case took a
// replica's state_dict (helper29 review, T7). Checked against the original module: the same keys
// in the same order, the same values, every tensor on the replica's device and detached; a
// replica saved to a file loads into a fresh module as the original's state; and the same inside
// forward under DataParallel.
#include <wick/nn/checkpoint.h>
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <utility>

#include "parallel/parallel_test_util.h"
#include "support/temp_dir.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;

namespace {

// Linear then BatchNorm1d: parameters, float buffers and an int64 buffer.
std::shared_ptr<nn::SequentialImpl> make_net() {
  auto net = std::make_shared<nn::SequentialImpl>();
  net->push_back(std::make_shared<nn::LinearImpl>(3, 4, f64()));
  net->push_back(std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(4), f64()));
  return net;
}

// `got` against `want` (the original's state_dict): keys, order, values, dtypes, and every
// tensor on `device`, detached.
void check_state_dict(const nn::StateDict& got, const nn::StateDict& want, Device device) {
  REQUIRE(got.keys() == want.keys());
  for (const std::string& key : want.keys()) {
    INFO(key);
    const Tensor& t = got[key];
    CHECK(t.device() == device);
    CHECK(t.dtype() == want[key].dtype());
    CHECK_VALUES_EQUAL(t, want[key]);
    CHECK_FALSE(t.requires_grad());
    CHECK(t.grad_fn() == nullptr);
  }
}

// Records its own state_dict, and the device it ran on, in forward.
class RecordsStateDict : public nn::Cloneable<RecordsStateDict> {
 public:
  struct Log {
    std::mutex mutex;
    std::vector<std::pair<Device, nn::StateDict>> seen;
  };
  RecordsStateDict() {
    fc_ = register_module("fc", std::make_shared<nn::LinearImpl>(3, 2, f64()));
    scale_ = register_parameter("scale", full({1}, 2.0, f64()));
    steps_ = register_buffer("steps", tensor({4.0}, f64()));
  }
  Tensor forward(const Tensor& x) {
    nn::StateDict mine = state_dict();
    {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->seen.emplace_back(x.device(), std::move(mine));
    }
    return child(fc_).forward(x) * param(scale_) + buffer(steps_);
  }
  nn::ChildSlot<nn::LinearImpl> fc_;
  nn::ParamSlot scale_;
  nn::BufferSlot steps_;
  std::shared_ptr<Log> log = std::make_shared<Log>();
};

}  // namespace

TEST_CASE(
    "replicate: a replica's state_dict is the original's, on the replica's device, and saves "
    "(test_save_replica_module)") {
  manual_seed(0);
  auto net = make_net();
  net->forward_tensor(randn({5, 3}, f64()));  // running statistics away from their initial values
  const nn::StateDict want = net->state_dict();
  REQUIRE(want.size() ==
          7);  // 0.weight, 0.bias, 1.weight, 1.bias, 1.running_mean, 1.running_var, 1.num_batches_tracked
  wick::test::TempDir dir("wick-replica-state");
  for (bool detach : {false, true}) {
    auto replicas = replicate(net, cpus(3), detach);
    REQUIRE(replicas.size() == 3);
    for (size_t i = 0; i < replicas.size(); ++i) {
      INFO("detach " << detach << ", replica " << i);
      check_state_dict(replicas[i]->state_dict(), want, cpu(static_cast<int>(i)));
      // Saved and loaded into a fresh module, it gives the original's state.
      const std::string path = dir.file("replica" + std::to_string(i) + (detach ? "d" : "") + ".safetensors");
      nn::save(*replicas[i], path);
      auto fresh = make_net();
      CHECK_FALSE(wick::test::same_values(fresh->state_dict()["0.weight"], want["0.weight"]));
      nn::load(*fresh, path);
      check_state_dict(fresh->state_dict(), want, cpu(0));
    }
  }
  // The original is unchanged by all this.
  check_state_dict(net->state_dict(), want, cpu(0));
}

TEST_CASE("DataParallel: inside forward each replica's state_dict is the original's, on the replica's device") {
  manual_seed(0);
  auto m = std::make_shared<RecordsStateDict>();
  const nn::StateDict want = m->state_dict();
  REQUIRE(want.keys() == std::vector<std::string>{"scale", "steps", "fc.weight", "fc.bias"});
  const Tensor x = randn({4, 3}, f64());
  const Tensor expected = m->child(m->fc_).forward(x) * 2.0 + 4.0;  // scale 2, steps 4; forward not called
  CHECK_ALLCLOSE(DataParallel(m, cpus(2)).forward(x), expected, 1e-12, 1e-13);
  std::lock_guard<std::mutex> lock(m->log->mutex);
  REQUIRE(m->log->seen.size() == 2);
  std::vector<Device> devices;
  for (const auto& [device, dict] : m->log->seen) {
    INFO("replica on " << device);
    devices.push_back(device);
    check_state_dict(dict, want, device);
  }
  CHECK(((devices[0] == cpu(0) && devices[1] == cpu(1)) || (devices[0] == cpu(1) && devices[1] == cpu(0))));
}
