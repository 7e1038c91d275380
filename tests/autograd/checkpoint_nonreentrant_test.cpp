// The non-reentrant activation checkpoint (checkpoint(..., {.use_reentrant = false}),
// wick/autograd/activation_checkpoint.h), on every test device. Truths: the same computation
// without checkpoint (same ops on the same values: outputs, gradients, autograd::grad's results
// and second derivatives equal bit for bit), the calls of the function counted, the
// intermediate's lifetime seen through a weak reference, and the typed refusals. The generator's
// draws: activation_checkpoint_test.cpp, for both kinds.
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

namespace {

const autograd::CheckpointOptions kNonReentrant{.use_reentrant = false};

Tensor scalar(double v, Device d) { return scalar_tensor(v, kFloat64).to(d); }

void check_same(const std::vector<Tensor>& got, const std::vector<Tensor>& truth) {
  REQUIRE(got.size() == truth.size());
  for (size_t k = 0; k < got.size(); ++k) {
    INFO("tensor " << k);
    REQUIRE(got[k].defined());
    CHECK_ALLCLOSE(got[k], truth[k], 0.0, 0.0);
  }
}

}  // namespace

TEST_CASE("non-reentrant checkpoint: backward, autograd::grad and double backward equal the plain run bit for bit") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    const Tensor g0 = seeded({4, 5}, 11, d), g1 = seeded({4}, 12, d);
    Segment plain{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x0 = leaf({4, 3}, 1, d), y0 = leaf({4, 5}, 2, d);
    const Tensor l0 = loss(plain({x0, y0}), g0, g1);
    CHECK_FALSE(plain.inner.expired());

    Segment seg{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x = leaf({4, 3}, 1, d), y = leaf({4, 5}, 2, d);
    auto run = [&seg](const std::vector<Tensor>& xs) { return seg(xs); };
    const Tensor l = loss(checkpoint(run, {x, y}, kNonReentrant), g0, g1);
    CHECK(seg.calls == 1);
    CHECK(seg.inner.expired());  // no saved tensor of the segment kept it
    CHECK_ALLCLOSE(l, l0, 0.0, 0.0);

    // autograd::grad (which the reentrant kind refuses), keeping the graph.
    const std::vector<Tensor> wrt0 = {x0, y0, plain.w, plain.b}, wrt = {x, y, seg.w, seg.b};
    check_same(autograd::grad({l}, wrt, {}, true), autograd::grad({l0}, wrt0, {}, true));
    CHECK(seg.calls == 2);
    // The recomputed tensors stay with the graph: a second backward recomputes nothing.
    l.backward();
    l0.backward();
    CHECK(seg.calls == 2);
    check_same({x.grad(), y.grad(), seg.w.grad(), seg.b.grad()},
               {x0.grad(), y0.grad(), plain.w.grad(), plain.b.grad()});

    // create_graph: the recomputed tensors are re-attached to the forward's graph, so a second
    // derivative reaches the inputs and parameters as without checkpoint.
    Segment seg2{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x2 = leaf({4, 3}, 1, d), y2 = leaf({4, 5}, 2, d);
    const Tensor l2 =
        loss(checkpoint([&seg2](const std::vector<Tensor>& xs) { return seg2(xs); }, {x2, y2}, kNonReentrant), g0, g1);
    Segment plain2{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor x20 = leaf({4, 3}, 1, d), y20 = leaf({4, 5}, 2, d);
    const Tensor l20 = loss(plain2({x20, y20}), g0, g1);
    const std::vector<Tensor> first0 = autograd::grad({l20}, {x20, plain2.w}, {}, std::nullopt, true);
    const std::vector<Tensor> first = autograd::grad({l2}, {x2, seg2.w}, {}, std::nullopt, true);
    check_same(first, first0);
    const Tensor u = seeded({4, 3}, 30, d), v = seeded({3, 5}, 31, d);
    const Tensor second0 = add(sum(mul(first0[0], u)), sum(mul(first0[1], v)));
    const Tensor second = add(sum(mul(first[0], u)), sum(mul(first[1], v)));
    check_same(autograd::grad({second}, {x2, y2, seg2.w, seg2.b}),
               autograd::grad({second0}, {x20, y20, plain2.w, plain2.b}));

    // Inputs that do not require grad: the parameters inside still get theirs.
    Segment seg3{leaf({3, 5}, 3, d), leaf({5}, 4, d)}, plain3{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
    const Tensor cx = seeded({4, 3}, 1, d), cy = seeded({4, 5}, 2, d);
    loss(checkpoint([&seg3](const std::vector<Tensor>& xs) { return seg3(xs); }, {cx, cy}, kNonReentrant), g0, g1)
        .backward();
    loss(plain3({cx, cy}), g0, g1).backward();
    check_same({seg3.w.grad(), seg3.b.grad()}, {plain3.w.grad(), plain3.b.grad()});

    // Nested: a non-reentrant checkpoint inside another, and a reentrant one inside.
    for (bool inner_reentrant : {false, true}) {
      INFO("inner use_reentrant " << inner_reentrant);
      Segment a{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
      const Tensor xn = leaf({4, 3}, 1, d), yn = leaf({4, 5}, 2, d);
      auto outer = [&](const std::vector<Tensor>& xs) {
        auto inner = [&a](const std::vector<Tensor>& ys) { return a(ys); };
        std::vector<Tensor> o = checkpoint(inner, xs, {.use_reentrant = inner_reentrant});
        return std::vector<Tensor>{mul(o[0], scalar(3.0, xs[0].device())), o[1]};
      };
      Segment p{leaf({3, 5}, 3, d), leaf({5}, 4, d)};
      const Tensor xp = leaf({4, 3}, 1, d), yp = leaf({4, 5}, 2, d);
      std::vector<Tensor> po = p({xp, yp});
      loss({mul(po[0], scalar(3.0, d)), po[1]}, g0, g1).backward();
      loss(checkpoint(outer, {xn, yn}, kNonReentrant), g0, g1).backward();
      check_same({xn.grad(), yn.grad(), a.w.grad(), a.b.grad()}, {xp.grad(), yp.grad(), p.w.grad(), p.b.grad()});
    }
  }
}

TEST_CASE("non-reentrant checkpoint: refusals are typed and name what to do") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    const Tensor x = leaf({3}, 1, d);
    auto square = [](const Tensor& t) { return mul(t, t); };
    // Grad mode off: fn just runs.
    {
      NoGradGuard no_grad;
      const Tensor r = checkpoint(square, x, kNonReentrant);
      CHECK_FALSE(r.requires_grad());
    }
    // An input modified in place before backward.
    {
      Tensor z = mul(x, scalar(1.0, d));
      const Tensor out = sum(checkpoint([](const Tensor& t) { return exp(t); }, z, kNonReentrant));
      {
        NoGradGuard no_grad;
        z.add_(scalar(1.0, d));
      }
      test::expect_error<StateError>([&] { out.backward(); },
                                     {"use_reentrant=false", "input 0", "in-place", "clone()"});
    }
    // A function that saves a different number of tensors, or tensors of other shapes, when
    // recomputed.
    {
      int calls = 0;
      auto unstable = [&calls](const Tensor& t) { return ++calls == 1 ? exp(t) : exp(exp(t)); };
      test::expect_error<StateError>([&] { sum(checkpoint(unstable, x, kNonReentrant)).backward(); },
                                     {"use_reentrant=false", "saved 2", "1 in the forward", "same computation"});
    }
    {
      int calls = 0;
      const Tensor m = leaf({3, 3}, 2, d);
      auto reshaped = [&calls, &m](const Tensor& t) {
        return ++calls == 1 ? exp(t) : sum(exp(matmul(m, t.reshape({3, 1}))), {1});
      };
      test::expect_error<StateError>([&] { sum(checkpoint(reshaped, x, kNonReentrant)).backward(); },
                                     {"use_reentrant=false", "[3]", "same computation"});
    }
    // A backward inside the function.
    {
      auto inner_grad = [](const Tensor& t) {
        Tensor e = exp(t);
        return mul(e, autograd::grad({sum(e)}, {t}, {}, true, false)[0].detach());
      };
      test::expect_error<StateError>([&] { sum(checkpoint(inner_grad, x, kNonReentrant)).backward(); },
                                     {"use_reentrant=false", "backward"});
    }
    test::expect_error<ValueError>([&] { checkpoint(autograd::CheckpointFn(), {x}, kNonReentrant); },
                                   {"checkpoint", "empty"});
  }
}
