// The reentrant activation checkpoint (wick/autograd/activation_checkpoint.h), on every test
// device; the RNG case runs the non-reentrant kind too (its other cases:
// checkpoint_nonreentrant_test.cpp). Truths: the same computation run without checkpoint (same
// ops, so gradients equal bit for bit), a float64 check of directional derivatives against
// central differences, the calls of the function counted, the intermediate's lifetime seen
// through a weak reference, the generator's draws compared with a run without checkpoint, and
// the typed refusals. Not a row of the every-device table: that table differentiates with
// autograd::grad, which a reentrant checkpoint refuses (as PyTorch's does); each case loops over
// the devices instead.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <memory>

#include "checkpoint_segment.h"
#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"

using namespace wick;
using wick::autograd::checkpoint;
using namespace wick::test::checkpointing;

TEST_CASE("activation checkpoint: gradients equal the uncheckpointed run bit for bit, fn recomputed, nothing kept") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    const Tensor g0 = seeded({4, 5}, 11, d), g1 = seeded({4}, 12, d);
    // The truth: the same segment, recorded as usual.
    Segment plain{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x0 = leaf({4, 3}, 1, d), y0 = leaf({4, 5}, 2, d);
    std::vector<Tensor> plain_outs = plain({x0, y0});
    CHECK_FALSE(plain.inner.expired());  // without checkpoint, sin's node keeps h
    loss(plain_outs, g0, g1).backward();

    Segment seg{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x = leaf({4, 3}, 1, d), y = leaf({4, 5}, 2, d);
    std::vector<Tensor> outs = checkpoint([&seg](const std::vector<Tensor>& xs) { return seg(xs); }, {x, y});
    CHECK(seg.calls == 1);
    CHECK(seg.inner.expired());  // forward kept no activation
    REQUIRE(outs.size() == 2);
    CHECK(outs[0].requires_grad());
    CHECK(outs[0].device() == d);
    CHECK_ALLCLOSE(outs[0], plain_outs[0], 0.0, 0.0);
    CHECK_ALLCLOSE(outs[1], plain_outs[1], 0.0, 0.0);
    loss(outs, g0, g1).backward();
    CHECK(seg.calls == 2);                                   // recomputed once, in backward
    CHECK(seg.grad_mode == std::vector<bool>{false, true});  // recorded only when recomputed
    CHECK_ALLCLOSE(x.grad(), x0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(y.grad(), y0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(seg.w.grad(), plain.w.grad(), 0.0, 0.0);  // parameters used inside accumulate
    CHECK_ALLCLOSE(seg.b.grad(), plain.b.grad(), 0.0, 0.0);

    // float64 gradcheck: the directional derivative along random directions from backward
    // against central differences (autograd::gradcheck differentiates with autograd::grad).
    Segment f{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const std::vector<Tensor> in = {leaf({4, 3}, 1, d), leaf({4, 5}, 2, d)};
    const std::vector<Tensor> wrt = {in[0], in[1], f.w, f.b};
    auto value = [&](const std::vector<Tensor>& at) {
      NoGradGuard no_grad;
      Segment s{at[2], at[3]};
      return loss(s({at[0], at[1]}), g0, g1).item<double>();
    };
    loss(checkpoint([&f](const std::vector<Tensor>& xs) { return f(xs); }, in), g0, g1).backward();
    const double eps = 1e-6;
    for (uint64_t k = 0; k < 3; ++k) {
      std::vector<Tensor> plus, minus;
      double analytic = 0.0;
      for (size_t j = 0; j < wrt.size(); ++j) {
        const Tensor v = seeded(wrt[j].sizes(), 100 + 10 * k + j, d);
        plus.push_back(add(wrt[j].detach(), mul(v, scalar_tensor(eps, kFloat64).to(d))));
        minus.push_back(sub(wrt[j].detach(), mul(v, scalar_tensor(eps, kFloat64).to(d))));
        analytic += sum(mul(wrt[j].grad(), v)).item<double>();
      }
      const double numeric = (value(plus) - value(minus)) / (2 * eps);
      INFO("direction " << k << ": analytic " << analytic << ", numeric " << numeric);
      CHECK(std::abs(analytic - numeric) <= 1e-6 + 1e-5 * std::abs(numeric));
    }
  }
}

TEST_CASE("activation checkpoint, both kinds: random draws inside are recomputed from the forward's state") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    // A hand-made dropout: the mask comes from the global generator.
    auto segment = [](const Tensor& x) {
      Tensor h = exp(x);
      Tensor keep = lt(rand_like(h), full_like(h, 0.5)).to(kFloat64);
      return mul(mul(h, keep), scalar_tensor(2.0, kFloat64).to(h.device()));
    };
    const Tensor g = seeded({6, 7}, 21, d);
    // Without checkpoint: forward, one draw in between, backward, the next draw.
    const Tensor x0 = leaf({6, 7}, 20, d);
    manual_seed(5);
    const Tensor out0 = segment(x0);
    const Tensor between0 = rand({4}, kFloat64);
    sum(mul(out0, g)).backward();
    const Tensor next0 = rand({4}, kFloat64);

    for (auto [reentrant, preserve] : {std::pair{true, true}, {true, false}, {false, true}, {false, false}}) {
      INFO("use_reentrant " << reentrant << ", preserve_rng_state " << preserve);
      const Tensor x = leaf({6, 7}, 20, d);
      manual_seed(5);
      const Tensor out = checkpoint(segment, x, {.use_reentrant = reentrant, .preserve_rng_state = preserve});
      CHECK_ALLCLOSE(out, out0, 0.0, 0.0);
      CHECK_ALLCLOSE(rand({4}, kFloat64), between0, 0.0, 0.0);
      sum(mul(out, g)).backward();
      const Tensor next = rand({4}, kFloat64);
      if (preserve) {
        CHECK_ALLCLOSE(x.grad(), x0.grad(), 0.0, 0.0);  // the forward's mask, recomputed
        CHECK_ALLCLOSE(next, next0, 0.0, 0.0);          // the caller's stream as without checkpoint
      } else {
        // The recomputation draws a new mask (the reentrant kind's recomputed graph, and the
        // non-reentrant kind's saved tensors, hold it): where the gradient is zero differs from
        // the forward's mask, and the caller's stream has moved on by those draws.
        const Tensor mask0 = ne(x0.grad(), zeros_like(x0.grad()));
        const Tensor mask = ne(x.grad(), zeros_like(x.grad()));
        CHECK_FALSE(mask.equal(mask0));
        CHECK_FALSE(next.equal(next0));
      }
    }
  }
}

TEST_CASE("activation checkpoint: refusals are typed and name what to do") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    auto square = [](const Tensor& t) { return mul(t, t); };
    const Tensor x = leaf({3}, 1, d);
    // autograd::grad (and so autograd::gradcheck) through a checkpoint, as PyTorch's.
    test::expect_error<StateError>([&] { autograd::grad({sum(checkpoint(square, x))}, {x}); },
                                   {"checkpoint", "autograd::grad", "autograd::backward"});
    auto fn = [&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{sum(checkpoint(square, xs[0]))}; };
    CHECK_THROWS_AS(autograd::gradcheck(fn, {leaf({3}, 1, d)}), StateError);
    // Double backward: the recomputed graph starts from detached inputs.
    test::expect_error<NotImplementedError>(
        [&] { autograd::backward({sum(checkpoint(square, x))}, {}, std::nullopt, true); },
        {"checkpoint", "create_graph"});
    // No input requires grad with grad mode on: PyTorch warns and drops the gradient.
    const Tensor c = seeded({3}, 1, d);
    test::expect_error<ValueError>([&] { checkpoint(square, c); }, {"checkpoint", "requires_grad_()", "NoGradGuard"});
    {
      NoGradGuard no_grad;
      const Tensor r = checkpoint(square, x);
      CHECK_FALSE(r.requires_grad());
      CHECK_ALLCLOSE(r, mul(x, x), 0.0, 0.0);
    }
    // An input changed in place between forward and backward: the saved input's version check.
    const Tensor base = leaf({3}, 2, d);
    Tensor z = mul(base, scalar_tensor(1.0, kFloat64).to(d));
    const Tensor out = sum(checkpoint(square, z));
    {
      NoGradGuard no_grad;
      z.add_(scalar_tensor(1.0, kFloat64).to(d));
    }
    CHECK_THROWS_AS(out.backward(), StateError);
    // A function that computes something else when recomputed.
    int calls = 0;
    auto unstable = [&calls](const std::vector<Tensor>& xs) {
      ++calls;
      return calls == 1 ? std::vector<Tensor>{xs[0]} : std::vector<Tensor>{xs[0], xs[0]};
    };
    test::expect_error<ValueError>([&] { sum(checkpoint(unstable, {x})[0]).backward(); }, {"checkpoint", "same"});
    // Returned unchanged, an input comes back as an alias: the input keeps its own history.
    const Tensor same = checkpoint([](const Tensor& t) { return t; }, x);
    CHECK(x.is_leaf());
    sum(mul(same, same)).backward();
    CHECK_ALLCLOSE(x.grad(), mul(x.detach(), scalar_tensor(2.0, kFloat64).to(d)), 0.0, 0.0);
  }
}
