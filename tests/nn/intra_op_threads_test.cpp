// Intra-op threads (Note [Intra-op threads]): a CPU device's elementwise and row kernels split
// across its thread budget, and the result never depends on the split. Every case runs the same
// work at budgets 1, 2, 3 and 5 and requires identical bits; the shapes are chosen so that
// pieces start in the middle of rows and operands are transposed or broadcast. Runs under
// ThreadSanitizer in CI (.ci/run's tsan pass runs test_nn).
#include <wick/nn/nn.h>
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include "wick/core/backend.h"
#include "wick/core/cpu_threads.h"
#include "wick/core/device_threads.h"
#include "wick/core/trace.h"

using namespace wick;

namespace {

// Sets cpu:0's budget for the scope, and forgets every budget after.
struct BudgetGuard {
  explicit BudgetGuard(int n) { set_intra_op_threads(kCPU, n); }
  ~BudgetGuard() { reset_intra_op_threads(); }
};

// Runs f at each budget; every run must equal the budget-1 run exactly.
void same_bits_at_every_budget(const std::function<std::vector<Tensor>()>& f) {
  std::vector<Tensor> one;
  {
    BudgetGuard g(1);
    one = f();
  }
  for (int budget : {2, 3, 5}) {
    BudgetGuard g(budget);
    std::vector<Tensor> r = f();
    REQUIRE(r.size() == one.size());
    for (size_t i = 0; i < r.size(); ++i) {
      INFO("budget " << budget << ", result " << i);
      CHECK(equal(r[i], one[i]));
    }
  }
}

}  // namespace

TEST_CASE("intra-op threads: elementwise kernels give the same bits at every thread budget") {
  same_bits_at_every_budget([] {
    manual_seed(1);
    Tensor a = randn({301, 1009});  // 303709 elements: pieces start mid-row
    Tensor b = randn({1009, 301}).t();
    Tensor row = randn({1009});
    Tensor mask = rand({301, 1009}).gt(0.5);
    return std::vector<Tensor>{
        exp(a),
        a + b,                            // a transposed operand
        a * row,                          // a broadcast row
        where(mask, a, b),                // four operands
        b.contiguous(),                   // a strided copy
        a.to(kFloat64),                   // a cast
        full({301, 1009}, 0.25),          // fill
        arange(0, 400000, 1, kFloat64),   // arange
        rand({700001}),                   // the counter-based sampler
        nn::functional::gelu(a, "tanh"),  // a composite of unary and binary ops
    };
  });
}

TEST_CASE("intra-op threads: row kernels (log_softmax, its backward) give the same bits at every budget") {
  same_bits_at_every_budget([] {
    manual_seed(2);
    Tensor x = randn({611, 257}, kFloat64).requires_grad_(true);
    Tensor y = nn::functional::log_softmax(x, -1);
    Tensor up = randn({611, 257}, kFloat64);
    autograd::backward({y}, {up});
    return std::vector<Tensor>{y.detach(), x.grad()};
  });
}

// No GEMM here: OpenBLAS's own results change with its thread count (its partitioning changes
// the order of the k-sums), and the budget sets that count too (Note [Intra-op threads]).
TEST_CASE("intra-op threads: training steps through layer_norm, GELU and softmax give the same bits at every budget") {
  same_bits_at_every_budget([] {
    manual_seed(3);
    Tensor scale = randn({257, 300}).requires_grad_(true);
    Tensor w = randn({300}).requires_grad_(true), b = randn({300}).requires_grad_(true);
    optim::Adam opt({scale, w, b}, optim::AdamOptions(1e-2));
    Tensor x = randn({257, 300});
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      Tensor h = nn::functional::gelu(nn::functional::layer_norm(x * scale, {300}, w, b, 1e-5));
      Tensor loss = (nn::functional::softmax(h, -1) * x).sum() + nn::functional::log_softmax(h, -1).mean();
      loss.backward();
      opt.step();
    }
    return std::vector<Tensor>{scale.detach(), w.detach(), b.detach()};
  });
}

// im2col and col2im split by channel, max pooling and its backward by plane, and reductions over
// trailing dims by output row (Note [Intra-op threads]). The backend's im2col and col2im are called
// directly: a convolution would add GEMMs, whose OpenBLAS thread count the budget also sets.
TEST_CASE("intra-op threads: im2col, col2im, max pooling and reductions give the same bits at every budget") {
  same_bits_at_every_budget([] {
    manual_seed(6);
    Tensor image = randn({16, 40, 40}, kFloat64);
    const Im2ColArgs g{kFloat64, 16, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, 40, 40};
    Tensor cols = empty({16 * 9, 1600}, kFloat64);
    backend(kCPU).im2col(g, image.data_ptr(), cols.data_ptr());
    Tensor back = zeros({16, 40, 40}, kFloat64);
    backend(kCPU).col2im(g, cols.data_ptr(), back.data_ptr());
    Tensor x = randn({4, 16, 40, 40}).requires_grad_(true);
    Tensor pooled = nn::functional::max_pool2d(x, 2);
    autograd::backward({pooled}, {randn({4, 16, 20, 20})});
    Tensor r = randn({3001, 301});
    return std::vector<Tensor>{cols,
                               back,
                               pooled.detach(),
                               x.grad(),
                               sum(r, {1}),
                               mean(x.detach(), {2, 3}),
                               amax(r, {1}),
                               std::get<0>(max(r, 1)),
                               sum(r.t(), {0})};  // a strided input: the general walk
  });
}

// The fused steps (stubs::sgd_step, stubs::adam_step) split each parameter across the threads.
TEST_CASE("intra-op threads: fused SGD and AdamW steps give the same bits at every budget") {
  same_bits_at_every_budget([] {
    manual_seed(4);
    Tensor p1 = randn({70001}).requires_grad_(true), p2 = randn({311, 333}).requires_grad_(true);
    Tensor g1 = randn({70001}), g2 = randn({311, 333});
    optim::SGD sgd({p1}, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-2));
    optim::AdamWOptions adamw_options(1e-2);
    adamw_options.amsgrad(true).weight_decay(0.1);
    optim::AdamW adamw({p2}, adamw_options);
    for (int step = 0; step < 3; ++step) {
      p1.mutable_grad() = g1 * (step + 1);
      p2.mutable_grad() = g2.sin() * (step + 1);
      sgd.step();
      adamw.step();
    }
    return std::vector<Tensor>{p1.detach(), p2.detach()};
  });
}

TEST_CASE("intra-op threads: a large kernel at budget 3 starts helpers, a small one or budget 1 does not") {
  BudgetGuard g(3);
  const int before = intra_op_helper_threads();
  Tensor small = ones({1000});
  (void)(small + small);
  CHECK(intra_op_helper_threads() == before);  // under the grain: inline
  Tensor big = ones({1 << 20});
  Tensor sum = big + big;
  CHECK(intra_op_helper_threads() >= 2);  // three pieces: the caller and two helpers
  CHECK(sum.sum().item<double>() == 2.0 * (1 << 20));
}

// Note [Idle device threads lend a hand]: with cpu:1 budgeted and its worker idle, cpu:0's kernels
// on this thread hand pieces to it. The bits must equal cpu:0 alone at budget 1.
TEST_CASE("intra-op threads: kernels that an idle device's worker helps with give the one-thread bits") {
  auto work = [] {
    manual_seed(7);
    Tensor p = randn({401, 777}).requires_grad_(true), q = randn({300001}).requires_grad_(true);
    optim::Adam adam({p}, optim::AdamOptions(1e-2));
    optim::SGD sgd({q}, optim::SGDOptions(0.1).momentum(0.9));
    Tensor x = randn({401, 777});
    for (int step = 0; step < 3; ++step) {
      adam.zero_grad();
      sgd.zero_grad();
      Tensor loss = (nn::functional::gelu(p * x) - x).pow(2).sum() + q.exp().mean();
      loss.backward();
      adam.step();
      sgd.step();
    }
    return std::vector<Tensor>{p.detach(), q.detach(), nn::functional::log_softmax(x, -1)};
  };
  std::vector<Tensor> alone;
  {
    BudgetGuard g(1);
    alone = work();
  }
  BudgetGuard g(1);
  set_intra_op_threads(Device("cpu:1"), 1);
  TaskQueue* q = device_threads::queue(Device("cpu:1"));
  REQUIRE(q != nullptr);
  // The worker lends itself only while idle and awake in time, so a run may see no loan: run
  // until the tracer has seen a lent piece (each run's bits checked), at most 20 times.
  bool lent = false;
  for (int attempt = 0; attempt < 20 && !lent; ++attempt) {
    profiler::Trace trace;
    std::vector<Tensor> helped = work();
    lent = trace.stop().find("\"lent piece\"") != std::string::npos;
    REQUIRE(helped.size() == alone.size());
    for (size_t i = 0; i < helped.size(); ++i) {
      INFO("result " << i);
      CHECK(equal(helped[i], alone[i]));
    }
  }
  CHECK(lent);
}
