// The device-parallel engine (Note [Device-parallel backward] in autograd/src/engine.cpp):
// which thread runs which node, bitwise determinism with any number of workers, failures on a
// worker, re-entrant backward, end-of-backward callbacks, and no threads or memory left behind.
#include <dirent.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "support/allclose.h"
#include "support/mirror_backend.h"
#include "wick/autograd/engine.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/autograd/grad_mode.h"
#include "wick/autograd/record.h"
#include "wick/core/backend.h"
#include "wick/core/device_threads.h"
#include "wick/core/generator.h"

using namespace wick;

namespace {

Device cpu(int i) { return Device(DeviceType::CPU, i); }

// Restores the worker limit at the end of a scope.
struct WorkerLimit {
  explicit WorkerLimit(int n) : prev(autograd::max_worker_threads()) { autograd::set_max_worker_threads(n); }
  ~WorkerLimit() { autograd::set_max_worker_threads(prev); }
  int prev;
};

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  auto av = a.to_vector<double>(), bv = b.to_vector<double>();
  return std::memcmp(av.data(), bv.data(), av.size() * sizeof(double)) == 0;
}

// y = x * w, recorded as one node whose backward notes the thread it ran on.
Tensor traced_scale(const Tensor& x, double w, std::thread::id* ran_on) {
  Tensor out = x.detach() * w;
  autograd::record_function("TracedScaleBackward", {x}, {out},
                            [w, ran_on](const autograd::variable_list& g, const autograd::variable_list&) {
                              *ran_on = std::this_thread::get_id();
                              return autograd::variable_list{g[0] * w};
                            });
  return out;
}

// A float32 loss whose gradient for x sums four device branches of very different magnitude,
// so the order of that sum shows in the low bits. With `spread` false the same formula runs on
// x's device alone, with no copies (the reference for the four-device graph).
Tensor four_device_loss(const Tensor& x, bool spread = true) {
  Tensor total;
  for (int d = 0; d < 4; ++d) {
    Tensor xd = spread ? x.to(cpu(d)) : x;
    Tensor yd = (xd * (1.0 + d * 10.0)).sin() * (xd.exp() * std::pow(10.0, d) + 1e-3 * d);
    for (int k = 0; k < 3; ++k) yd = yd.tanh() * (1.0 + 0.3 * k) + xd * 1e-4;
    Tensor back = (spread ? yd.to(cpu(0)) : yd).sum();
    total = total.defined() ? total + back : back;
  }
  return total;
}

}  // namespace

TEST_CASE(
    "engine threads: a node runs on the thread of its device, set_max_worker_threads(0) keeps all on the caller") {
  std::thread::id on0, on1;
  Tensor x = ones({3}).requires_grad_();
  Tensor a = traced_scale(x, 2.0, &on0);             // cpu:0: the caller's device
  Tensor b = traced_scale(x.to(cpu(1)), 3.0, &on1);  // cpu:1: its worker
  (a.sum() + b.to(cpu(0)).sum()).backward({}, /*retain_graph=*/true);
  CHECK(on0 == std::this_thread::get_id());
  CHECK(on1 != std::this_thread::get_id());
  CHECK(x.grad().to_vector<double>() == std::vector<double>{5, 5, 5});
  {
    WorkerLimit none(0);
    x.set_grad(Tensor());
    (a.sum() + b.to(cpu(0)).sum()).backward();
    CHECK(on0 == std::this_thread::get_id());
    CHECK(on1 == std::this_thread::get_id());
    CHECK(x.grad().to_vector<double>() == std::vector<double>{5, 5, 5});
  }
  CHECK_THROWS_AS(autograd::set_max_worker_threads(-2), ValueError);
}

TEST_CASE("engine threads: gradients are bitwise equal with 0, 1 and unlimited workers, on every run") {
  manual_seed(7);
  Tensor x = randn({257}).requires_grad_();
  Tensor loss = four_device_loss(x);
  std::vector<Tensor> grads;
  for (int limit : {0, 1, 2, -1, -1, -1, 0}) {
    WorkerLimit w(limit);
    for (int rep = 0; rep < 5; ++rep) {
      x.set_grad(Tensor());
      loss.backward({}, /*retain_graph=*/true);
      grads.push_back(x.grad().clone());
    }
  }
  for (size_t i = 1; i < grads.size(); ++i) {
    INFO("run " << i);
    CHECK(same_bits(grads[i], grads[0]));
  }
  // and the value is right: the same loss computed by a plain float64 reference
  Tensor x64 = x.detach().to(kFloat64).requires_grad_();
  four_device_loss(x64).backward();
  auto got = grads[0].to_vector<double>(), want = x64.grad().to_vector<double>();
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-3 * scale));
  // Element by element in float64: the four-device graph on every worker count against the same
  // formula on one device with no copies (each branch scaled by 10^d, so an absolute margin would
  // hide the small ones).
  Tensor xs = x.detach().to(kFloat64).requires_grad_();
  four_device_loss(xs, /*spread=*/false).backward();
  for (int limit : {0, -1}) {
    INFO("worker limit " << limit);
    WorkerLimit w(limit);
    Tensor x4 = x.detach().to(kFloat64).requires_grad_();
    four_device_loss(x4).backward();
    CHECK_ALLCLOSE(x4.grad(), xs.grad(), 1e-12, 0);
  }
}

TEST_CASE("engine threads: autograd::grad and double backward across devices") {
  for (int limit : {-1, 0}) {
    WorkerLimit w(limit);
    Tensor x = tensor({1.0, 2.0, -0.5}, TensorOptions(kFloat64)).requires_grad_();
    Tensor y = x.to(cpu(1)).pow(3.0).to(cpu(2)).sum().to(cpu(0));
    auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
    CHECK(g[0].to_vector<double>() == std::vector<double>{3.0, 12.0, 0.75});  // 3 x^2
    auto gg = autograd::grad({g[0].sum()}, {x});
    CHECK(gg[0].to_vector<double>() == std::vector<double>{6.0, 12.0, -3.0});  // 6 x
    CHECK(!x.grad().defined());
  }
}

TEST_CASE(
    "engine threads: an exception in a node on cpu:1 reaches the caller, naming the node, the next backward works") {
  std::atomic<bool> fail{true};
  std::atomic<int> later_runs{0};
  auto build = [&](const Tensor& x) {
    // a node on cpu:0 that backward can only reach through FlakyBackward
    Tensor x0 = x.detach() * 1.0;
    autograd::record_function("LaterBackward", {x}, {x0},
                              [&later_runs](const autograd::variable_list& g, const autograd::variable_list&) {
                                ++later_runs;
                                return autograd::variable_list{g[0]};
                              });
    Tensor x1 = x0.to(cpu(1));
    Tensor out = x1.detach() * 2.0;
    autograd::record_function("FlakyBackward", {x1}, {out},
                              [&fail](const autograd::variable_list& g, const autograd::variable_list&) {
                                if (fail) throw StateError("flaky node says no");
                                return autograd::variable_list{g[0] * 2.0};
                              });
    return out.to(cpu(0)).sum() + x.sum();
  };
  Tensor x = ones({4}).requires_grad_();
  try {
    build(x).backward();
    FAIL("backward did not throw");
  } catch (const StateError& e) {  // the class survives the trip between threads
    CHECK_THAT(e.what(), Catch::Contains("flaky node says no"));
    CHECK_THAT(e.what(), Catch::Contains("FlakyBackward"));
    CHECK_THAT(e.what(), Catch::Contains("cpu:1"));
  }
  CHECK(later_runs == 0);
  x.set_grad(Tensor());
  fail = false;
  build(x).backward();
  CHECK(later_runs == 1);
  CHECK(x.grad().to_vector<double>() == std::vector<double>{3, 3, 3, 3});
}

TEST_CASE(
    "engine threads: a hook that fails on a worker stops the backward, a user's own exception type passes unchanged") {
  struct Mine {};
  Tensor x = ones({2}).requires_grad_();
  Tensor y = x.to(cpu(1)) * 2.0;
  y.register_hook([](const Tensor&) { throw Mine{}; });
  CHECK_THROWS_AS(y.to(cpu(0)).sum().backward(), Mine);
  CHECK(!x.grad().defined());
}

TEST_CASE("engine threads: nodes on a worker run with the caller's current stream of their device") {
  // Note [Backward streams]. The mirror device (support/mirror_backend.h) keeps a stream number
  // per thread and device, as CUDA keeps a stream; cpu:0 is the caller's device, so mirror:1's
  // nodes run on mirror:1's worker thread.
  const Device m1(test::mirror_device_type(), 1);
  Backend& mirror = backend(m1);
  Tensor x = tensor({1.0, 2.0}, TensorOptions(kFloat64)).requires_grad_();
  Tensor y = x.to(m1) * 3.0;
  std::thread::id ran_on;
  uintptr_t stream_seen = 0;
  y.register_hook([&](const Tensor& g) {
    ran_on = std::this_thread::get_id();
    stream_seen = backend(m1).current_stream(m1);
    return g;
  });
  {
    CurrentStreamScope on(m1, 42);
    (y.to(cpu(0)) * y.to(cpu(0))).sum().backward({}, /*retain_graph=*/true);
    CHECK(mirror.current_stream(m1) == 42);
  }
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(stream_seen == 42);
  CHECK(x.grad().to_vector<double>() == std::vector<double>{18, 36});  // d/dx (3x)^2 = 18x
  // The worker's own stream is back: a plain backward sees the default one.
  x.set_grad(Tensor());
  (y.to(cpu(0)) * y.to(cpu(0))).sum().backward();
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(stream_seen == 0);
  CHECK(mirror.current_stream(m1) == 0);
}

TEST_CASE("engine threads: backward from a hook (re-entrant) on the caller and on a worker") {
  for (int limit : {-1, 0}) {
    WorkerLimit w(limit);
    Tensor a = tensor({1.0, 2.0}, TensorOptions(kFloat64)).requires_grad_();
    Tensor b = tensor({3.0}, TensorOptions(kFloat64)).requires_grad_();
    Tensor x = tensor({1.0, 1.0}, TensorOptions(kFloat64)).requires_grad_();
    // a hook on cpu:1 runs a whole backward over cpu:1 and cpu:0
    Tensor y1 = x.to(cpu(1)) * 2.0;
    y1.register_hook([&](const Tensor& g) {
      AutoGradMode enable(true);  // hooks run with grad mode = create_graph, as PyTorch's
      Tensor inner = (a.to(cpu(1)) * a.to(cpu(1))).sum().to(cpu(0));
      inner.backward();
      return g * 10.0;
    });
    // a hook on cpu:0 (the caller) does the same with autograd::grad
    Tensor y0 = x * 3.0;
    std::vector<Tensor> inner_grad;
    y0.register_hook([&](const Tensor&) {
      AutoGradMode enable(true);
      inner_grad = autograd::grad({(b.to(cpu(2)) * 5.0).sum()}, {b});
    });
    (y1.to(cpu(0)).sum() + y0.sum()).backward();
    CHECK(x.grad().to_vector<double>() == std::vector<double>{23, 23});  // 2 * 10 + 3
    CHECK(a.grad().to_vector<double>() == std::vector<double>{2, 4});
    REQUIRE(inner_grad.size() == 1);
    CHECK(inner_grad[0].to_vector<double>() == std::vector<double>{5});
  }
}

TEST_CASE("engine threads: queue_callback runs once, on the caller, after every node") {
  Tensor x = ones({3}).requires_grad_();
  Tensor y = x.to(cpu(1)) * 2.0;
  std::vector<std::string> log;
  std::mutex log_mutex;
  std::thread::id callback_thread;
  y.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] {
      std::lock_guard<std::mutex> lock(log_mutex);
      callback_thread = std::this_thread::get_id();
      // the leaf's gradient is already complete
      log.push_back("callback " + std::to_string(x.grad().to_vector<double>()[0]));
      autograd::queue_callback([&] { log.push_back("queued by a callback"); });
    });
    std::lock_guard<std::mutex> lock(log_mutex);
    log.push_back("hook");
  });
  (y.to(cpu(0)).sum() + x.sum()).backward();
  CHECK(callback_thread == std::this_thread::get_id());
  CHECK(log == std::vector<std::string>{"hook", "callback 3.000000", "queued by a callback"});
  CHECK_THROWS_AS(autograd::queue_callback([] {}), StateError);
  CHECK_THROWS_AS(autograd::queue_callback_outermost([] {}), StateError);

  // Inside a reentrant backward (started by a hook that runs on cpu:1's worker): queue_callback
  // waits for that backward, queue_callback_outermost for the one that started it.
  Tensor a = ones({2}).requires_grad_();
  Tensor z = ones({3}).requires_grad_();
  Tensor w = z.to(cpu(1)) * 2.0;
  std::vector<std::string> order;
  w.register_hook([&](const Tensor&) {
    AutoGradMode enable(true);
    Tensor t = a * 3.0;
    t.register_hook([&](const Tensor&) {
      autograd::queue_callback([&] { order.push_back("inner end"); });
      autograd::queue_callback_outermost([&] {
        callback_thread = std::this_thread::get_id();
        order.push_back("outer end, z.grad " + std::to_string(z.grad().to_vector<float>()[0]));
      });
    });
    t.sum().backward();
    order.push_back("inner backward returned");
  });
  (w.to(cpu(0)).sum() + z.sum()).backward();
  CHECK(order == std::vector<std::string>{"inner end", "inner backward returned", "outer end, z.grad 3.000000"});
  CHECK(callback_thread == std::this_thread::get_id());
}

TEST_CASE("engine threads: 10 000 backward calls leave no thread and no memory behind") {
  Tensor x = ones({16}, TensorOptions(kFloat64)).requires_grad_();
  auto step = [&] {
    Tensor h = x.to(cpu(1)).exp() * 2.0;
    Tensor g = (x * 3.0).to(cpu(2)).sin();
    (h.to(cpu(0)).sum() + g.to(cpu(0)).sum()).backward();
  };
  step();  // starts the workers and makes x.grad
  const int threads = thread_count();
  const size_t workers = device_threads::worker_count();
  std::vector<int64_t> in_use;
  for (int d = 0; d < 3; ++d) in_use.push_back(memory_stats(cpu(d)).in_use);
  for (int i = 0; i < 10000; ++i) step();
  CHECK(thread_count() == threads);
  CHECK(device_threads::worker_count() == workers);
  for (int d = 0; d < 3; ++d) {
    INFO("cpu:" << d);
    CHECK(memory_stats(cpu(d)).in_use == in_use[static_cast<size_t>(d)]);
  }
  CHECK(x.grad().to_vector<double>()[0] == Approx(10001 * (2 * std::exp(1.0) + 3 * std::cos(3.0))));
}
