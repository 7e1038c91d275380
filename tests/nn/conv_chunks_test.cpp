// conv2d's image chunks on the intra-op threads (Note [Parallel regions],
// core/include/wick/core/intra_op_parallel.h; for_each_chunk in nn/src/conv_ops.cpp): the forward
// and both gradients give the same bits at every budget, with or without an idle device thread
// lending a hand, run after run; and wick::parallel_for's region rules hold on every thread. Runs
// under ThreadSanitizer in CI (.ci/run's tsan pass runs test_nn).
#include <wick/wick.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/allclose.h"
#include "support/idle_worker.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/intra_op_parallel.h"
#include "wick/nn/functional.h"

using namespace wick;
namespace F = wick::nn::F;
using wick::test::ResetBudgets;

namespace {

struct Conv {
  const char* name;
  std::vector<int64_t> x, w;  // shapes
  int64_t stride, pad, groups;
};

// Each has many chunks of images (Note [conv2d in image chunks]): 37 images, so the last chunk
// is short.
std::vector<Conv> convs() {
  return {{"3x3, padded", {37, 3, 20, 20}, {8, 3, 3, 3}, 1, 1, 1},
          {"5x5, stride 2, two groups", {37, 4, 17, 15}, {6, 2, 5, 5}, 2, 0, 2}};
}

// The output and the input gradient of one conv, in float32, with cpu:0's budget at `budget`
// and, with `lender`, cpu:1 budgeted and idle so that its worker may take chunks.
std::vector<std::vector<float>> run(const Conv& c, int budget, bool lender) {
  REQUIRE(wick::test::budget_with_lender(budget, lender));
  manual_seed(7);
  Tensor x = randn(c.x).requires_grad_(true);
  Tensor w = randn(c.w);
  Tensor b = randn({c.w[0]});
  // Without the weight's gradient each thread im2cols into its own scratch; with it the columns
  // are kept for the weight gradient's partial sums.
  Tensor y = F::conv2d(x, w, b, c.stride, c.pad, 1, c.groups);
  Tensor r = randn(y.sizes());
  wick::sum(wick::mul(y, r)).backward();
  Tensor w2 = w.detach().requires_grad_(true);
  Tensor y2 = F::conv2d(x.detach(), w2, b, c.stride, c.pad, 1, c.groups);
  wick::sum(wick::mul(y2, r)).backward();
  reset_intra_op_threads();
  return {y.to_vector<float>(), x.grad().to_vector<float>(), y2.to_vector<float>(), w2.grad().to_vector<float>()};
}

}  // namespace

TEST_CASE("conv2d chunks: the forward and both gradients have the same bits at every budget, lent or not") {
  ResetBudgets reset;
  for (const Conv& c : convs()) {
    INFO(c.name);
    const auto one = run(c, 1, false);
    for (int budget : {1, 2, 3})
      for (bool lender : {false, true})
        for (int again = 0; again < 2; ++again) {
          INFO("budget " << budget << (lender ? ", with a lender" : ""));
          const auto got = run(c, budget, lender);
          CHECK(got[0] == one[0]);
          CHECK(got[1] == one[1]);
          CHECK(got[2] == one[0]);
          CHECK(got[3] == one[3]);
        }
  }
}

TEST_CASE("conv2d chunks: float64 results match one image at a time") {
  ResetBudgets reset;
  set_intra_op_threads(kCPU, 2);
  manual_seed(3);
  Tensor x = randn({23, 3, 11, 9}, kFloat64), b = randn({5}, kFloat64);
  Tensor w = randn({5, 3, 3, 3}, kFloat64).requires_grad_(true);
  Tensor y = F::conv2d(x, w, b, 1, 1);
  Tensor r = randn(y.sizes(), kFloat64);
  wick::sum(wick::mul(y, r)).backward();
  Tensor gw_sum = wick::zeros({5, 3, 3, 3}, kFloat64);
  for (int64_t n = 0; n < 23; ++n) {
    Tensor wn = w.detach().requires_grad_(true);
    Tensor one = F::conv2d(x.narrow(0, n, 1), wn, b, 1, 1);  // a single image: one chunk, no region
    CHECK_ALLCLOSE(y.narrow(0, n, 1).detach(), one.detach(), 1e-12, 1e-12);
    wick::sum(wick::mul(one, r.narrow(0, n, 1))).backward();
    gw_sum = gw_sum + wn.grad();
  }
  CHECK_ALLCLOSE(w.grad(), gw_sum, 1e-12, 1e-12);
}

TEST_CASE("wick::parallel_for: the body runs in a region, under the caller's device, on every thread") {
  ResetBudgets reset;
  set_intra_op_threads(kCPU, 2);
  CHECK_FALSE(in_parallel_region());
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;
  std::atomic<int> outside{0}, wrong_device{0}, nested_calls{0};
  wick::parallel_for(10, 10 + 64, 4, [&](int64_t b, int64_t e) {
    if (!in_parallel_region()) ++outside;
    if (current_cpu_device() != kCPU) ++wrong_device;
    // A nested loop runs inline, on this thread, in one call.
    const std::thread::id me = std::this_thread::get_id();
    wick::parallel_for(0, 1000, 1, [&](int64_t nb, int64_t ne) {
      if (std::this_thread::get_id() != me || nb != 0 || ne != 1000) ++outside;
      ++nested_calls;
    });
    std::lock_guard<std::mutex> lock(mutex);
    ranges.emplace_back(b, e);
    threads.insert(me);
  });
  CHECK_FALSE(in_parallel_region());
  CHECK(outside == 0);
  CHECK(wrong_device == 0);
  CHECK(nested_calls == static_cast<int>(ranges.size()));
  std::sort(ranges.begin(), ranges.end());
  int64_t at = 10;
  for (const auto& [b, e] : ranges) {
    CHECK(b == at);
    CHECK(e > b);
    at = e;
  }
  CHECK(at == 74);

  // Too small to split: still one call, in a region.
  int calls = 0;
  wick::parallel_for(0, 3, 4, [&](int64_t b, int64_t e) {
    CHECK(in_parallel_region());
    CHECK((b == 0 && e == 3));
    ++calls;
  });
  CHECK(calls == 1);
  wick::parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++calls; });  // empty: no call
  CHECK(calls == 1);

  // An exception reaches the caller, and the region ends with the call.
  CHECK_THROWS_WITH(wick::parallel_for(0, 64, 1,
                                       [](int64_t b, int64_t) {
                                         if (b == 0) throw std::runtime_error("piece 0 failed");
                                       }),
                    "piece 0 failed");
  CHECK_FALSE(in_parallel_region());
}
