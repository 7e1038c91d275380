// parallel_apply on CPU devices: ports of PyTorch's test_parallel_apply,
// test_parallel_apply_passes_exception and test_data_parallel_no_grad (grad mode), LibTorch's
// ParallelApply and ParallelApplyWithDifferentOutputDevice (ParallelTest), and
// the thread guarantees (no leaked thread, the first failure by replica index).
#include "wick/parallel/parallel_apply.h"

#include <dirent.h>
#include <wick/nn/nn.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <thread>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;

namespace {

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// Fails in the replicas whose index is in `fail_on` (the index is read from the input).
class Failing : public nn::Cloneable<Failing> {
 public:
  explicit Failing(std::vector<int> fail_on) : fail_on_(std::move(fail_on)) {}
  Tensor forward(const Tensor& x) {
    const int i = static_cast<int>(x.item<double>());
    for (int f : fail_on_)
      if (f == i) throw std::out_of_range(fmt::format("wonderful {}", i));
    return x;
  }

 private:
  std::vector<int> fail_on_;
};

// Returns [grad mode is on] as a one-element tensor.
class GradModeProbe : public nn::Cloneable<GradModeProbe> {
 public:
  Tensor forward(const Tensor& x) { return full({1}, GradMode::is_enabled() ? 1.0 : 0.0, x.options()); }
};

class ConstantInt : public nn::Cloneable<ConstantInt> {
 public:
  Tensor forward(const Tensor&) { return ones({5}, kInt64); }
};

}  // namespace

TEST_CASE("parallel_apply: each module on its input, results in order (test_parallel_apply)") {
  auto l1 = std::make_shared<nn::LinearImpl>(10, 5, f64(cpu(0)));
  auto l2 = std::make_shared<nn::LinearImpl>(10, 5, f64(cpu(1)));
  Tensor i1 = randn({2, 10}, f64(cpu(0))), i2 = randn({2, 10}, f64(cpu(1)));
  Tensor e1 = l1->forward(i1), e2 = l2->forward(i2);
  // inputs as argument lists, ((i1,), (i2,)) ...
  auto outs = parallel_apply({l1, l2}, std::vector<std::vector<nn::Value>>{{i1}, {i2}});
  REQUIRE(outs.size() == 2);
  CHECK_VALUES_EQUAL(outs[0].tensor(), e1);
  CHECK_VALUES_EQUAL(outs[1].tensor(), e2);
  // ... and as bare tensors, (i1, i2), never split
  auto touts = parallel_apply({l1, l2}, std::vector<Tensor>{i1, i2}, {cpu(0), cpu(1)});
  CHECK_VALUES_EQUAL(touts[0], e1);
  CHECK_VALUES_EQUAL(touts[1], e2);
  CHECK(touts[1].device() == cpu(1));
  CHECK_THROWS_WITH(parallel_apply({l1, l2}, std::vector<Tensor>{i1}),
                    Catch::Contains("The number of modules 2 is not equal to the number of inputs 1"));
  CHECK_THROWS_WITH(parallel_apply({l1, l2}, std::vector<Tensor>{i1, i2}, {cpu(0)}),
                    Catch::Contains("The number of devices 1 is not equal to the number of modules 2"));
}

TEST_CASE("parallel_apply: replicas on three devices give the same output (ParallelApply_MultiCUDA)") {
  auto a = std::make_shared<nn::LinearImpl>(3, 4, f64());
  auto replicas = replicate(a, {cpu(0), cpu(1), cpu(2)});
  std::vector<Tensor> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(ones({2, 3}, f64(cpu(i))));
  auto outs = parallel_apply(replicas, inputs, {cpu(0), cpu(1), cpu(2)});
  for (int i = 0; i < 3; ++i) {
    CHECK(outs[i].device() == cpu(i));
    CHECK_ALLCLOSE(outs[i], outs[0], 0, 0);
  }
}

TEST_CASE("parallel_apply: outputs stay where the module put them (ParallelApplyWithDifferentOutputDevice)") {
  auto m = std::make_shared<ConstantInt>();
  auto outs = parallel_apply({m, m, m}, std::vector<Tensor>{ones({1}), ones({1}), ones({1})}, {cpu(1), cpu(0), cpu(2)});
  for (auto& o : outs) {
    CHECK(o.dtype() == kInt64);
    CHECK(o.device() == kCPU);  // made on cpu:0 by the module, not moved to the replica's device
    CHECK_VALUES(o, {1, 1, 1, 1, 1});
  }
}

TEST_CASE(
    "parallel_apply: a failure is rethrown naming the replica and device (test_parallel_apply_passes_exception)") {
  auto m = std::make_shared<Failing>(std::vector<int>{0, 1});
  // the same module twice, on the same device, both failing: replica 0 is reported
  CHECK_THROWS_WITH(parallel_apply({m, m}, std::vector<Tensor>{tensor({0.0}), tensor({1.0})}, {cpu(0), cpu(0)}),
                    Catch::Matches("in replica 0 on device cpu:0: wonderful 0"));
  // only replica 2 fails
  auto m2 = std::make_shared<Failing>(std::vector<int>{2});
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) in.push_back(tensor({double(i)}, TensorOptions().device(cpu(i))));
  CHECK_THROWS_AS(parallel_apply({m2, m2, m2, m2}, in, {cpu(0), cpu(1), cpu(2), cpu(3)}), Error);
  CHECK_THROWS_WITH(parallel_apply({m2, m2, m2, m2}, in, {cpu(0), cpu(1), cpu(2), cpu(3)}),
                    "in replica 2 on device cpu:2: wonderful 2");
  // the later failures don't hide an earlier one
  auto m3 = std::make_shared<Failing>(std::vector<int>{3, 1});
  CHECK_THROWS_WITH(parallel_apply({m3, m3, m3, m3}, in), Catch::StartsWith("in replica 1 on device cpu:1"));
}

TEST_CASE("parallel_apply: workers take the caller's grad mode, calls start no threads (Note [Device threads])") {
  auto probe = std::make_shared<GradModeProbe>();
  std::vector<std::shared_ptr<nn::Module>> mods(4, probe);
  std::vector<Tensor> in;
  for (int i = 0; i < 4; ++i) in.push_back(ones({1}, TensorOptions().device(cpu(i))));
  // start the device threads of cpu:0-3 (replica 0 runs on the caller); they persist from here on
  parallel_apply(mods, in, {cpu(1), cpu(0), cpu(2), cpu(3)});
  parallel_apply(mods, in, {cpu(0), cpu(1), cpu(2), cpu(3)});
  const int before = thread_count();
  for (const Tensor& o : parallel_apply(mods, in, {cpu(0), cpu(1), cpu(2), cpu(3)})) CHECK(o.item<double>() == 1.0);
  {
    NoGradGuard ng;
    for (const Tensor& o : parallel_apply(mods, in, {cpu(0), cpu(1), cpu(2), cpu(3)})) CHECK(o.item<double>() == 0.0);
  }
  CHECK(GradMode::is_enabled());
  CHECK(thread_count() == before);
  for (int i = 0; i < 20; ++i) {
    auto m = std::make_shared<Failing>(std::vector<int>{1});
    CHECK_THROWS(parallel_apply({m, m, m}, std::vector<Tensor>{tensor({0.0}), tensor({1.0}), tensor({2.0})}));
  }
  CHECK(thread_count() == before);
}
