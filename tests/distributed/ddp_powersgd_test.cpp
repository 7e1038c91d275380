// PowerSGD's communication hook (powersgd_hook.h) on 2 and 3 ranks (mpirun), called on hand-made
// buckets of known per-rank gradients, against truths computed here: the exact average (sum
// over ranks / world size) before start_powerSGD_iter and wherever the approximation must be
// exact (full rank, rank-1 gradients with a common column space), error feedback's telescoping
// sum, and bitwise agreement between ranks. Plus option and dtype refusals without a group.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"
#include "wick/distributed/powersgd_hook.h"

using namespace wick;
using distributed::GradBucket;
using distributed::ddp_comm_hooks::batched_powerSGD_hook;
using distributed::ddp_comm_hooks::powerSGD_hook;
using distributed::ddp_comm_hooks::PowerSGDState;

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

/// Rank k's gradient element i of parameter j at step s: a fixed pseudo-random normal value.
double grad_value(int k, int64_t s, size_t j, int64_t i) {
  return math::random_normal(1000 * static_cast<uint64_t>(s) + 10 * j + static_cast<uint64_t>(k) + 1,
                             static_cast<uint64_t>(i));
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Rank k's flat bucket of `shapes` at step s (float64).
std::vector<double> grads_of(int k, int64_t s, const Shapes& shapes) {
  std::vector<double> out;
  for (size_t j = 0; j < shapes.size(); ++j)
    for (int64_t i = 0; i < numel_of(shapes[j]); ++i) out.push_back(grad_value(k, s, j, i));
  return out;
}

/// The exact average over the ranks of grads_of(k, s, shapes).
std::vector<double> average_of(int64_t s, const Shapes& shapes) {
  const int w = test::world().size();
  std::vector<double> sum = grads_of(0, s, shapes);
  for (int k = 1; k < w; ++k) {
    const std::vector<double> g = grads_of(k, s, shapes);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += g[i];
  }
  for (double& v : sum) v /= w;
  return sum;
}

/// A bucket of parameters of `shapes` holding `values` (converted to dtype).
GradBucket make_bucket(int64_t index, int64_t count, const Shapes& shapes, const std::vector<double>& values,
                       DType dtype, int64_t iteration) {
  std::vector<Tensor> params;
  std::vector<int64_t> offsets;
  int64_t at = 0;
  for (const auto& shape : shapes) {
    params.push_back(wick::zeros(shape, TensorOptions(dtype)));
    offsets.push_back(at);
    at += numel_of(shape);
  }
  return GradBucket(index, count, test::vec(values).to(dtype), params, offsets, {iteration, index});
}

/// One backward over buckets of `layout` at step s: every bucket's hook call first, in bucket
/// order, then every future waited for in order (as DDP does); returns the results as float64.
std::vector<Tensor> run_step(const distributed::CommHook& hook, const std::vector<Shapes>& layout,
                             const std::vector<std::vector<double>>& values, DType dtype, int64_t s,
                             std::vector<int64_t>* iter_after_each = nullptr, const PowerSGDState* state = nullptr) {
  const int64_t count = static_cast<int64_t>(layout.size());
  std::vector<GradBucket> buckets;
  std::vector<std::shared_ptr<distributed::Future>> futures;
  buckets.reserve(layout.size());
  for (int64_t b = 0; b < count; ++b) {
    buckets.push_back(make_bucket(b, count, layout[b], values[b], dtype, s));
    futures.push_back(hook(buckets.back()));
    if (iter_after_each) iter_after_each->push_back(state->iter);
  }
  std::vector<Tensor> out;
  for (auto& f : futures) out.push_back(f->wait().to(kFloat64));
  return out;
}

/// Every bucket's grads_of / average_of at step s.
std::vector<std::vector<double>> mine_at(int64_t s, const std::vector<Shapes>& layout) {
  std::vector<std::vector<double>> v;
  for (const auto& shapes : layout) v.push_back(grads_of(test::world().rank(), s, shapes));
  return v;
}
std::vector<Tensor> averages_at(int64_t s, const std::vector<Shapes>& layout) {
  std::vector<Tensor> v;
  for (const auto& shapes : layout) v.push_back(test::vec(average_of(s, shapes)));
  return v;
}

// Bucket 0: a matrix compressed at rank 1 and a bias; bucket 1: a 3-d gradient (a [3, 8]
// matrix) compressed at rank 1 and a [2, 2] one that would not shrink by 2 (uncompressed).
const std::vector<Shapes> kLayout = {{{6, 5}, {6}}, {{3, 4, 2}, {2, 2}}};

}  // namespace

TEST_CASE("ddp: powerSGD_hook refuses bad options and non-float buckets, changing nothing", "[comm_hook]") {
  using test::expect_error;
  expect_error<ValueError>([] { powerSGD_hook(nullptr); }, {"powerSGD_hook", "null"});
  expect_error<ValueError>([] { batched_powerSGD_hook(nullptr); }, {"batched_powerSGD_hook", "null"});
  {
    auto s = std::make_shared<PowerSGDState>();
    s->matrix_approximation_rank = 0;
    expect_error<ValueError>([&] { batched_powerSGD_hook(s); }, {"batched_powerSGD_hook: matrix_approximation_rank"});
    CHECK(s->compression_stats() == std::make_tuple(0.0, int64_t{0}, int64_t{0}));  // nothing compressed yet
  }
  auto refused = [](const std::function<void(PowerSGDState&)>& set, const std::vector<std::string>& words) {
    auto s = std::make_shared<PowerSGDState>();
    set(*s);
    expect_error<ValueError>([&] { powerSGD_hook(s); }, words);
  };
  refused([](PowerSGDState& s) { s.matrix_approximation_rank = 0; }, {"matrix_approximation_rank", "0"});
  refused([](PowerSGDState& s) { s.start_powerSGD_iter = 1; }, {"start_powerSGD_iter", "1"});
  refused(
      [](PowerSGDState& s) {
        s.start_powerSGD_iter = 1;
        s.use_error_feedback = false;  // warm start alone needs it too
      },
      {"start_powerSGD_iter"});
  refused(
      [](PowerSGDState& s) {
        s.start_powerSGD_iter = 0;
        s.warm_start = false;  // error feedback alone needs it too
      },
      {"start_powerSGD_iter"});
  refused([](PowerSGDState& s) { s.min_compression_rate = -0.5; }, {"min_compression_rate", "-0.5"});
  refused([](PowerSGDState& s) { s.min_compression_rate = std::nan(""); }, {"min_compression_rate"});
  refused([](PowerSGDState& s) { s.orthogonalization_epsilon = -1e-8; }, {"orthogonalization_epsilon"});
  refused([](PowerSGDState& s) { s.orthogonalization_epsilon = INFINITY; }, {"orthogonalization_epsilon"});

  // Accepted: no memories, so start_powerSGD_iter may be <= 1; PyTorch's 0.5 compression rate.
  auto ok = std::make_shared<PowerSGDState>();
  ok->use_error_feedback = ok->warm_start = false;
  ok->start_powerSGD_iter = 0;
  ok->min_compression_rate = 0.5;
  distributed::CommHook hook = powerSGD_hook(ok);

  // A bucket of int64 (before any communication: no group is needed), and options broken after
  // the hook was made: refused at the call, the bucket and the state untouched.
  std::vector<int64_t> ints = {1, 2, 3, 4, 5, 6};
  GradBucket int_bucket(0, 1, from_blob(ints.data(), {6}, TensorOptions(kInt64)), {wick::zeros({2, 3})}, {0}, {});
  expect_error<TypeError>([&] { hook(int_bucket); }, {"powerSGD_hook", "int64", "bucket 0"});
  CHECK(int_bucket.buffer().to_vector<int64_t>() == ints);
  ok->matrix_approximation_rank = -2;
  GradBucket f64_bucket(0, 1, test::vec({1, 2, 3, 4, 5, 6}), {wick::zeros({2, 3}, TensorOptions(kFloat64))}, {0}, {});
  expect_error<ValueError>([&] { hook(f64_bucket); }, {"matrix_approximation_rank", "-2"});
  CHECK(f64_bucket.buffer().to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(ok->iter == 0);
  CHECK(ok->p_memory_dict.empty());
}

TEST_CASE(
    "ddp: powerSGD_hook averages plainly before start_powerSGD_iter, then compresses with telescoping error "
    "feedback",
    "[mpi]") {
  auto state = std::make_shared<PowerSGDState>();
  state->start_powerSGD_iter = 2;  // rank 1, error feedback, warm start
  const distributed::CommHook hook = powerSGD_hook(state);
  const int64_t steps = 6;
  std::vector<Tensor> applied(2), exact(2), own(2);  // sums over the steps
  for (int64_t s = 1; s <= steps; ++s) {
    INFO("step " << s);
    std::vector<int64_t> iters;
    const std::vector<Tensor> out = run_step(hook, kLayout, mine_at(s, kLayout), kFloat64, s, &iters, state.get());
    const std::vector<Tensor> avg = averages_at(s, kLayout);
    // Advanced once per backward at the last bucket: in its hook call while averaging plainly,
    // in its last continuation once compressing.
    CHECK(iters == std::vector<int64_t>{s - 1, s <= 2 ? s : s - 1});
    CHECK(state->iter == s);
    for (size_t b = 0; b < 2; ++b) {
      INFO("bucket " << b);
      CHECK(test::same_on_every_rank(out[b]));
      if (s <= 2) {  // plain averaging: the exact average, up to rounding
        CHECK_ALLCLOSE(out[b], avg[b], 0.0, 1e-15);
      } else {  // rank 1 cannot reproduce these gradients: the compressed parts differ
        const int64_t compressed = b == 0 ? 30 : 24;
        CHECK((out[b].narrow(0, 0, compressed) - avg[b].narrow(0, 0, compressed)).abs().max().item<double>() > 1e-3);
      }
      if (s == 3) {  // no error yet: the uncompressed parts are the exact average
        const int64_t compressed = b == 0 ? 30 : 24, n = out[b].numel() - compressed;
        CHECK_ALLCLOSE(out[b].narrow(0, compressed, n), avg[b].narrow(0, compressed, n), 0.0, 1e-15);
      }
      const Tensor mine = test::vec(mine_at(s, kLayout)[b]);
      applied[b] = s == 1 ? out[b] : applied[b] + out[b];
      exact[b] = s == 1 ? avg[b] : exact[b] + avg[b];
      const Tensor kept = s <= 2 ? avg[b] : mine;  // what this rank fed in, error aside
      own[b] = s == 1 ? kept : own[b] + kept;
    }
  }
  CHECK(state->iter == steps);
  REQUIRE(state->error_dict.size() == 2);
  REQUIRE(state->p_memory_dict.size() == 2);  // warm start keeps them
  CHECK(state->random_draws == 2);            // one random start per bucket, at step 3
  // 4 compressed steps of 36 + 28 elements; each sends bucket 0's P 6 + Q 5 + bias 6 and bucket
  // 1's P 3 + Q 8 + the [2, 2] gradient 4: 32 elements.
  CHECK(state->compression_stats() == std::make_tuple(2.0, int64_t{256}, int64_t{128}));
  CHECK(state->p_memory_dict.at(0).numel() == 6);
  CHECK(state->q_memory_dict.at(0).numel() == 5);
  CHECK(state->p_memory_dict.at(1).numel() == 3);
  CHECK(state->q_memory_dict.at(1).numel() == 8);
  for (int64_t b = 0; b < 2; ++b) {
    INFO("bucket " << b);
    // Compressed steps: applied_k = input_k - error_k and input_k = own_k + error_(k-1), so
    // this rank's sums telescope; averaged over the ranks, to the sum of the exact averages.
    const Tensor error = state->error_dict.at(b);
    CHECK(error.abs().max().item<double>() > 1e-3);
    CHECK_ALLCLOSE(applied[b] + error, own[b], 0.0, 1e-12);
    Tensor mean_error = error.clone();
    test::world().all_reduce(mean_error)->wait();
    CHECK_ALLCLOSE(applied[b] + mean_error.div(test::world().size()), exact[b], 0.0, 1e-12);
  }
}

TEST_CASE("ddp: powerSGD_hook is exact at full rank and for rank-1 gradients with a common column space", "[mpi]") {
  auto& g = test::world();
  SECTION("full rank, float64 and float32") {
    for (DType dtype : {kFloat64, kFloat32}) {
      INFO(dtype_name(dtype));
      auto state = std::make_shared<PowerSGDState>();
      state->start_powerSGD_iter = 2;
      state->matrix_approximation_rank = 8;  // >= min(rows, cols) of every matrix
      state->min_compression_rate = 0;       // compress every matrix, even the [2, 2] one
      const distributed::CommHook hook = powerSGD_hook(state);
      const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
      for (int64_t s = 1; s <= 4; ++s) {  // 3: random start, 4: warm start
        INFO("step " << s);
        const std::vector<Tensor> out = run_step(hook, kLayout, mine_at(s, kLayout), dtype, s);
        const std::vector<Tensor> avg = averages_at(s, kLayout);
        for (size_t b = 0; b < 2; ++b) {
          CHECK_ALLCLOSE(out[b], avg[b], 0.0, tol);
          CHECK(test::same_on_every_rank(out[b]));
        }
      }
      CHECK(state->q_memory_dict.at(1).numel() == 8 * 3 + 2 * 2);  // both matrices were compressed
      // The error is this rank's input minus the exact average of the inputs: it sums to 0.
      Tensor error_sum = state->error_dict.at(0).clone();
      g.all_reduce(error_sum)->wait();
      CHECK(error_sum.abs().max().item<double>() < 10 * tol);
    }
  }
  SECTION("rank-1 gradients u v_r^T at rank 1, without memories") {
    auto state = std::make_shared<PowerSGDState>();
    state->start_powerSGD_iter = 0;
    state->use_error_feedback = state->warm_start = false;
    const distributed::CommHook hook = powerSGD_hook(state);
    const int64_t n = 8, m = 6;
    for (int64_t s = 1; s <= 2; ++s) {
      INFO("step " << s);
      auto matrix_of = [&](int k) {  // u v_k^T with u common to every rank, then a bias
        std::vector<double> out;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < m; ++j) out.push_back((1.0 + 0.5 * i) * grad_value(k, s, 0, j));
        for (int64_t i = 0; i < 3; ++i) out.push_back(grad_value(k, s, 1, i));
        return out;
      };
      std::vector<double> avg(n * m + 3, 0.0);
      for (int k = 0; k < g.size(); ++k) {
        const std::vector<double> v = matrix_of(k);
        for (size_t i = 0; i < avg.size(); ++i) avg[i] += v[i] / g.size();
      }
      const std::vector<Tensor> out = run_step(hook, {{{n, m}, {3}}}, {matrix_of(g.rank())}, kFloat64, s);
      CHECK_ALLCLOSE(out[0], test::vec(avg), 0.0, 1e-12);
      CHECK(test::same_on_every_rank(out[0]));
      CHECK(state->p_memory_dict.empty());  // without warm start nothing is kept
      CHECK(state->error_dict.empty());
    }
    CHECK(state->random_draws == 2);  // a fresh random start at every step
  }
}

TEST_CASE("ddp: DDP with powerSGD_hook at full rank trains as plain DDP, in one bucket and in many", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size(), steps = 5;
  manual_seed(62);
  const Tensor x = randn({steps, global, 5}, kFloat64), y = randn({steps, global, 3}, kFloat64);
  for (const bool batched : {false, true})
    for (bool tiny : {false, true}) {
      INFO("batched " << batched << ", one bucket per parameter " << tiny);
      manual_seed(61);
      auto plain_net = test::ddp::make_mlp();
      manual_seed(61);
      auto net = test::ddp::make_mlp();
      const distributed::DistributedDataParallelOptions o =
          tiny ? test::ddp::tiny_buckets() : distributed::DistributedDataParallelOptions();
      distributed::DistributedDataParallel plain(plain_net, o), ddp(net, o);
      auto state = std::make_shared<PowerSGDState>();
      state->start_powerSGD_iter = 2;
      // >= min(rows, cols) of every weight; batched, >= the side of the whole bucket's square (147
      // elements: 13).
      state->matrix_approximation_rank = batched ? 13 : 8;
      state->min_compression_rate = 0;  // compress every weight
      ddp.register_comm_hook(batched ? batched_powerSGD_hook(state) : powerSGD_hook(state));
      optim::SGD opt_plain(plain_net->parameters(), optim::SGDOptions(0.1).momentum(0.5));
      optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.5));
      for (int64_t k = 0; k < steps; ++k) {
        INFO("step " << k);
        for (nn::Module* m : {static_cast<nn::Module*>(&plain), static_cast<nn::Module*>(&ddp)})
          nn::F::mse_loss(m->forward_value({nn::Value(test::ddp::mine(x[k], local))}).tensor(),
                          test::ddp::mine(y[k], local))
              .backward();
        opt_plain.step();
        opt.step();
        opt_plain.zero_grad();
        opt.zero_grad();
        const auto pp = plain_net->parameters(), ps = net->parameters();
        for (size_t i = 0; i < pp.size(); ++i) {
          INFO("parameter " << i);
          CHECK_ALLCLOSE(ps[i], pp[i], 0.0, 1e-10);
          CHECK(test::same_on_every_rank(ps[i]));
        }
      }
      CHECK(state->iter == steps);
      int64_t q_numel = 0;
      for (const auto& [index, q] : state->q_memory_dict) q_numel += q.numel();
      if (!batched)  // every weight compressed: Q is [cols, min(rows, cols)] for [8, 5], [8, 8] and [3, 8]
        CHECK(q_numel == 5 * 5 + 8 * 8 + 8 * 3);
      CHECK(state->q_memory_dict.size() == ddp.bucket_indices().size());
      CHECK(state->random_draws == state->q_memory_dict.size());  // one random start per bucket
    }
}

TEST_CASE("ddp: batched_powerSGD_hook compresses each bucket as one padded square matrix", "[mpi]") {
  // Note [Batched PowerSGD]. kLayout's buckets have 36 and 28 elements: both are padded to
  // 6 x 6. At rank >= 6 the approximation is exact (the padding stays zero); at rank 1 the
  // error feedback telescopes over the bucket's own elements.
  auto& g = test::world();
  SECTION("full rank: the exact average, P and Q of 6 x 6, the statistics") {
    auto state = std::make_shared<PowerSGDState>();
    state->start_powerSGD_iter = 2;
    state->matrix_approximation_rank = 8;  // clamped to the side, 6
    const distributed::CommHook hook = batched_powerSGD_hook(state);
    for (int64_t s = 1; s <= 4; ++s) {  // 3: random start, 4: warm start
      INFO("step " << s);
      const std::vector<Tensor> out = run_step(hook, kLayout, mine_at(s, kLayout), kFloat64, s);
      const std::vector<Tensor> avg = averages_at(s, kLayout);
      for (size_t b = 0; b < 2; ++b) {
        CHECK_ALLCLOSE(out[b], avg[b], 0.0, 1e-12);
        CHECK(test::same_on_every_rank(out[b]));
      }
    }
    for (int64_t b = 0; b < 2; ++b) {
      CHECK(state->p_memory_dict.at(b).numel() == 36);
      CHECK(state->q_memory_dict.at(b).numel() == 36);
      CHECK(state->error_dict.at(b).numel() == 36);  // the padded bucket
    }
    CHECK(state->random_draws == 2);
    // 2 compressed steps of 36 + 28 elements, each bucket sending P and Q of 6 x 6.
    CHECK(state->compression_stats() == std::make_tuple(128.0 / 288.0, int64_t{128}, int64_t{288}));
  }
  SECTION("rank 1: telescoping error feedback, every rank alike") {
    auto state = std::make_shared<PowerSGDState>();
    state->start_powerSGD_iter = 2;
    const distributed::CommHook hook = batched_powerSGD_hook(state);
    std::vector<Tensor> applied(2), exact(2), own(2);
    for (int64_t s = 1; s <= 5; ++s) {
      INFO("step " << s);
      const std::vector<Tensor> out = run_step(hook, kLayout, mine_at(s, kLayout), kFloat64, s);
      const std::vector<Tensor> avg = averages_at(s, kLayout);
      for (size_t b = 0; b < 2; ++b) {
        CHECK(test::same_on_every_rank(out[b]));
        if (s > 2) CHECK((out[b] - avg[b]).abs().max().item<double>() > 1e-3);  // rank 1 of a 6 x 6
        const Tensor kept = s <= 2 ? avg[b] : test::vec(mine_at(s, kLayout)[b]);
        applied[b] = s == 1 ? out[b] : applied[b] + out[b];
        exact[b] = s == 1 ? avg[b] : exact[b] + avg[b];
        own[b] = s == 1 ? kept : own[b] + kept;
      }
    }
    CHECK(state->p_memory_dict.at(0).numel() == 6);
    for (int64_t b = 0; b < 2; ++b) {
      INFO("bucket " << b);
      const int64_t n = own[b].numel();
      const Tensor error = state->error_dict.at(b).narrow(0, 0, n);
      CHECK(error.abs().max().item<double>() > 1e-3);
      CHECK_ALLCLOSE(applied[b] + error, own[b], 0.0, 1e-12);
      Tensor mean_error = error.clone();
      g.all_reduce(mean_error)->wait();
      CHECK_ALLCLOSE(applied[b] + mean_error.div(g.size()), exact[b], 0.0, 1e-12);
    }
  }
}
