// Two or more backward() calls through one graph at once (Note [Concurrent backward] in
// autograd/src/record.cpp): losses that share a non-leaf subgraph, backpropagated from several
// threads. The truths: the same backwards run one after another on one thread, and PyTorch's
// rule that without retain_graph the second backward through a node fails cleanly.
#include <atomic>
#include <barrier>
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/core/error.h"
#include "wick/core/tensor.h"

using namespace wick;

namespace {

constexpr int kThreads = 4;

Tensor make_leaf() { return (arange(1, 65, 1, kFloat64) * 0.03125).requires_grad_(); }

// A shared non-leaf subgraph whose nodes save inputs (mul saves both sides, tanh its output) and
// non-leaf tensors.
Tensor shared_part(const Tensor& x) {
  Tensor h = x * x;
  return tanh(h) * h;
}

// Each thread's own loss on top of the shared part; every thread's is the same function, so
// every backward adds the same gradient to x and the sum does not depend on the order.
Tensor own_loss(const Tensor& shared) { return (shared * 0.5).sum(); }

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  Tensor ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.data_ptr<double>(), bc.data_ptr<double>(), sizeof(double) * ac.numel()) == 0;
}

}  // namespace

TEST_CASE("concurrent backward: retain_graph through a shared subgraph equals the same backwards in a row",
          "[autograd][threads]") {
  constexpr int kRounds = 40;
  Tensor x = make_leaf();
  Tensor shared = shared_part(x);

  // Serial truth: kThreads * kRounds backwards, one after another.
  for (int i = 0; i < kThreads * kRounds; ++i) own_loss(shared).backward({}, true);
  const Tensor serial = x.grad().clone();
  x.mutable_grad() = Tensor();

  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kRounds; ++i) {
        try {
          own_loss(shared).backward({}, true);
        } catch (...) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures.load() == 0);
  REQUIRE(bitwise_equal(x.grad(), serial));
}

TEST_CASE("concurrent backward: without retain_graph the backward that comes second fails cleanly",
          "[autograd][threads]") {
  constexpr int kRounds = 30;
  Tensor x_ref = make_leaf();
  own_loss(shared_part(x_ref)).backward();
  const Tensor one = x_ref.grad().clone();

  for (int round = 0; round < kRounds; ++round) {
    Tensor x = make_leaf();
    Tensor shared = shared_part(x);
    std::vector<Tensor> losses;
    for (int t = 0; t < kThreads; ++t) losses.push_back(own_loss(shared));

    std::barrier start(kThreads);
    std::atomic<int> ok{0}, second_time{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        try {
          losses[t].backward();
          ++ok;
        } catch (const StateError& e) {
          if (std::string(e.what()).find("backward through the graph a second time") != std::string::npos)
            ++second_time;
          else
            ++other;
        } catch (...) {
          ++other;
        }
      });
    }
    for (auto& th : threads) th.join();
    INFO("round " << round << ": " << ok.load() << " succeeded, " << second_time.load() << " got the error");
    REQUIRE(other.load() == 0);
    REQUIRE(ok.load() >= 1);
    REQUIRE(ok.load() + second_time.load() == kThreads);
    // Only the backwards that succeeded reached x, each with the whole gradient: a failed one
    // stops at the shared part, which its own loss node feeds.
    Tensor expected = one.clone();
    for (int i = 1; i < ok.load(); ++i) expected = expected + one;
    REQUIRE(bitwise_equal(x.grad(), expected));
  }
}
