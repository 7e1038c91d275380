// The device-parallel backward on DataParallel (Note [Device-parallel backward] and Note
// [Deterministic accumulation] in autograd/src/): on the models of equivalence_test.cpp, the
// gradients on the original parameters are the same bits whether backward runs every device
// on its own thread or everything on the caller, and on every run.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "parallel/parallel_test_util.h"
#include "wick/autograd/engine.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/parallel_apply.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpus;
using wick::test::f64;

namespace {

struct WorkerLimit {
  explicit WorkerLimit(int n) : prev(autograd::max_worker_threads()) { autograd::set_max_worker_threads(n); }
  ~WorkerLimit() { autograd::set_max_worker_threads(prev); }
  int prev;
};

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  return av.size() == bv.size() && std::memcmp(av.data(), bv.data(), av.size() * sizeof(double)) == 0;
}

TensorOptions f32() { return TensorOptions(kFloat32); }

std::shared_ptr<nn::Module> mlp(TensorOptions o) {
  return nn::Sequential(std::make_shared<nn::LinearImpl>(6, 16, o), std::make_shared<nn::TanhImpl>(),
                        std::make_shared<nn::LinearImpl>(16, 3, o))
      .ptr();
}

std::shared_ptr<nn::Module> cnn(TensorOptions o) {
  return nn::Sequential(std::make_shared<nn::Conv2dImpl>(nn::Conv2dOptions(2, 4, 3).padding(1), o),
                        std::make_shared<nn::BatchNorm2dImpl>(nn::BatchNorm2dOptions(4), o),
                        std::make_shared<nn::ReLUImpl>(), std::make_shared<nn::FlattenImpl>(),
                        std::make_shared<nn::LinearImpl>(4 * 5 * 5, 3, o))
      .ptr();
}

// Three Linear layers with Tanh between them.
std::shared_ptr<nn::Module> deep_mlp(TensorOptions o) {
  auto block = std::make_shared<nn::LinearImpl>(6, 3, o);
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back("a", std::make_shared<nn::LinearImpl>(6, 6, o));
  seq->push_back("act", std::make_shared<nn::TanhImpl>());
  seq->push_back("b", std::make_shared<nn::LinearImpl>(6, 6, o));
  seq->push_back("act2", std::make_shared<nn::TanhImpl>());
  seq->push_back("c", block);
  return seq;
}

std::vector<Tensor> grads(const nn::Module& m) {
  std::vector<Tensor> g;
  for (const auto& p : m.parameters()) g.push_back(p.grad().defined() ? p.grad().clone() : Tensor());
  return g;
}

}  // namespace

TEST_CASE("DataParallel backward: threaded and single-threaded gradients are bitwise equal, on every run") {
  struct Case {
    std::string name;
    std::function<std::shared_ptr<nn::Module>(TensorOptions)> make;
    std::vector<int64_t> item;
  };
  const std::vector<Case> cases{{"MLP", mlp, {6}}, {"CNN with BatchNorm", cnn, {2, 5, 5}}, {"deep MLP", deep_mlp, {6}}};
  for (const Case& c : cases) {
    for (TensorOptions o : {f32(), f64()}) {
      for (int n : {2, 3, 4}) {
        INFO(c.name << ", " << (o.dtype_ == kFloat64 ? "float64" : "float32") << ", " << n << " devices");
        manual_seed(static_cast<uint64_t>(n));
        auto model = c.make(o);
        std::vector<int64_t> shape{13};
        shape.insert(shape.end(), c.item.begin(), c.item.end());
        Tensor x = randn(shape, o);
        Tensor target = randn({13, 3}, o);
        Tensor out = data_parallel(model, x, cpus(n));
        Tensor loss = ((out - target) * (out - target)).mean();
        std::vector<std::vector<Tensor>> runs;
        for (int limit : {0, -1, 1, -1, 0, -1}) {
          WorkerLimit w(limit);
          for (auto p : model->parameters()) p.set_grad(Tensor());
          loss.backward({}, /*retain_graph=*/true);
          runs.push_back(grads(*model));
        }
        for (size_t r = 1; r < runs.size(); ++r) {
          REQUIRE(runs[r].size() == runs[0].size());
          for (size_t k = 0; k < runs[r].size(); ++k) {
            INFO("run " << r << ", parameter " << k);
            CHECK(runs[r][k].defined());
            CHECK(same_bits(runs[r][k], runs[0][k]));
          }
        }
      }
    }
  }
}

TEST_CASE("DataParallel backward: a post-accumulate-grad hook on a shared parameter fires once per backward") {
  manual_seed(5);
  auto model = mlp(f64());
  Tensor w = model->parameters()[0];
  int calls = 0;
  w.register_post_accumulate_grad_hook([&](const Tensor& p) {
    ++calls;
    CHECK(p.grad().device() == Device("cpu:0"));
  });
  Tensor x = randn({8, 6}, f64());
  for (int step = 1; step <= 3; ++step) {
    data_parallel(model, x, cpus(4)).sum().backward();
    CHECK(calls == step);
  }
}

namespace {
// A module whose forward runs parallel_apply itself (DataParallel inside a replica), then
// differentiates through its inner replicas with autograd::grad.
class Nested : public nn::Cloneable<Nested> {
 public:
  Tensor forward(const Tensor& x) {
    auto inner = std::make_shared<nn::TanhImpl>();
    std::vector<Device> devs{x.device(), Device("cpu:3"), x.device()};
    std::vector<Tensor> in{x * 1.0, x.to(devs[1]) * 2.0, x * 3.0};
    auto outs = parallel_apply(std::vector<std::shared_ptr<nn::Module>>{inner, inner, inner}, in, devs);
    return outs[0] + outs[1].to(x.device()) + outs[2];
  }
};
}  // namespace

TEST_CASE("parallel_apply inside a replica, and backward through it, on the device threads: no deadlock") {
  auto nested = std::make_shared<Nested>();
  std::vector<Tensor> in;
  std::vector<Tensor> leaves;
  for (int i = 0; i < 3; ++i) {
    leaves.push_back(tensor({0.1 * (i + 1), -0.2}, f64(Device(DeviceType::CPU, i))).requires_grad_());
    in.push_back(leaves.back());
  }
  for (int rep = 0; rep < 20; ++rep) {
    auto outs = parallel_apply(std::vector<std::shared_ptr<nn::Module>>{nested, nested, nested}, in,
                               {Device("cpu:0"), Device("cpu:1"), Device("cpu:2")});
    Tensor total = outs[0].sum() + outs[1].to(Device("cpu:0")).sum() + outs[2].to(Device("cpu:0")).sum();
    total.backward();
  }
  for (int i = 0; i < 3; ++i) {
    auto x = leaves[static_cast<size_t>(i)].detach().to_vector<double>();
    auto g = leaves[static_cast<size_t>(i)].grad().to_vector<double>();
    for (size_t k = 0; k < x.size(); ++k) {
      double want = 0;
      for (double c : {1.0, 2.0, 3.0}) want += c * (1 - std::tanh(c * x[k]) * std::tanh(c * x[k]));
      CHECK(g[k] == Approx(20 * want).epsilon(1e-12));
    }
  }
}
