// When a device's worker thread cannot be started (device_threads::queue returns nullptr at the
// system's thread limit; device_threads_testing.h makes it do so here), each caller runs
// that device's work on the calling thread: parallel_apply's replica, the backward engine's nodes
// and the split collectives' parts. Results equal a normal run's, and the next call uses the
// device threads again.
#include <wick/nn/nn.h>

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "../../parallel/src/split_over_devices.h"
#include "parallel/parallel_test_util.h"
#include "wick/core/device_threads_testing.h"
#include "wick/parallel/parallel_apply.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;
namespace testing = wick::device_threads::testing;

namespace {

// Doubles its input and records, by the replica index read from the input, the thread it ran on.
class ThreadProbe : public nn::Cloneable<ThreadProbe> {
 public:
  explicit ThreadProbe(std::shared_ptr<std::vector<std::thread::id>> ran_on) : ran_on_(std::move(ran_on)) {}
  Tensor forward(const Tensor& x) {
    (*ran_on_)[static_cast<size_t>(x.item<double>())] = std::this_thread::get_id();
    return x * 2.0;
  }

 private:
  std::shared_ptr<std::vector<std::thread::id>> ran_on_;
};

// d/dx sum(sin(x) * x) computed on cpu:1 for an x on cpu:0.
Tensor gradient_through_cpu1(const Tensor& x0) {
  Tensor x = x0.detach().clone().requires_grad_(true);
  Tensor a = x.to(cpu(1));
  Tensor loss = (a.sin() * a).sum().to(cpu(0));
  loss.backward();
  return x.grad();
}

}  // namespace

TEST_CASE("parallel_apply: a device whose thread cannot start runs its replica on the caller") {
  auto ran_on = std::make_shared<std::vector<std::thread::id>>(2);
  auto probe = std::make_shared<ThreadProbe>(ran_on);
  const std::vector<std::shared_ptr<nn::Module>> modules = {probe, probe};
  const std::vector<Tensor> inputs = {full({1}, 0.0, f64(cpu(0))), full({1}, 1.0, f64(cpu(1)))};
  const std::thread::id caller = std::this_thread::get_id();

  testing::fail_next_queue_calls(1);
  std::vector<Tensor> out = parallel_apply(modules, inputs, {cpu(0), cpu(1)});
  CHECK(testing::failing_queue_calls_left() == 0);  // the failure was met
  REQUIRE(out.size() == 2);
  CHECK(out[1].device() == cpu(1));
  CHECK(out[0].item<double>() == 0.0);
  CHECK(out[1].item<double>() == 2.0);
  CHECK((*ran_on)[0] == caller);
  CHECK((*ran_on)[1] == caller);

  out = parallel_apply(modules, inputs, {cpu(0), cpu(1)});  // the thread starts now
  CHECK(out[1].item<double>() == 2.0);
  CHECK((*ran_on)[1] != caller);
}

TEST_CASE("backward: nodes of a device whose thread cannot start run on the caller, with the same bits") {
  manual_seed(3);
  const Tensor x = randn({257}, f64(cpu(0)));
  testing::fail_next_queue_calls(1);
  const Tensor fallback = gradient_through_cpu1(x);
  CHECK(testing::failing_queue_calls_left() == 0);
  const Tensor threaded = gradient_through_cpu1(x);
  REQUIRE(fallback.defined());
  CHECK(fallback.device() == cpu(0));
  CHECK(test::same_values(fallback, threaded));
  // And the values: cos(x) x + sin(x), to rounding.
  CHECK_ALLCLOSE(fallback, x.cos() * x + x.sin(), 1e-15, 1e-15);
}

TEST_CASE("split_over_cpu_devices: a device whose thread cannot start leaves its parts to the caller") {
  namespace pd = wick::parallel::detail;
  const int64_t n = 4 * pd::kMinPartElements + 3;
  std::mutex mutex;
  std::vector<int> hits(static_cast<size_t>(n), 0);
  std::set<std::thread::id> threads;
  testing::fail_next_queue_calls(1);
  pd::split_over_cpu_devices({cpu(0), cpu(1), cpu(2)}, n, 1, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  });
  CHECK(testing::failing_queue_calls_left() == 0);
  int64_t wrong = 0;
  for (int h : hits) wrong += h != 1;
  CHECK(wrong == 0);  // every element once, none lost with the device that had no thread
  CHECK(threads.count(std::this_thread::get_id()) == 1);
}
