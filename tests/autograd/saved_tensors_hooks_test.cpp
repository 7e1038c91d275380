// Saved-tensor hooks (wick/autograd/saved_tensors_hooks.h), on every test device. Truths: the
// graph's own count of saved tensors (walked through next_edges) against the pack and unpack
// calls, the same computation without hooks (identity hooks change no bit), PyTorch's
// test_autograd cases for default hooks (values by hand: exp's saved result doubled, a custom
// function's saved input doubled, the inner of two nested pairs, a saved leaf's identity through
// double backward), equality between
// devices for the hooks a backward carries to its worker threads, and the typed refusals.
#include <wick/wick.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "support/allclose.h"
#include "support/devices.h"
#include "support/expect_error.h"

using namespace wick;
using wick::autograd::graph::save_on_cpu;
using wick::autograd::graph::saved_tensors_hooks;

namespace {

Tensor seeded(IntArrayRef shape, uint64_t seed, Device d) {
  manual_seed(seed);
  return randn(shape, kFloat64).to(d);
}
Tensor leaf(IntArrayRef shape, uint64_t seed, Device d) { return seeded(shape, seed, d).requires_grad_(true); }
Tensor scalar(double v, Device d) { return scalar_tensor(v, kFloat64).to(d); }

// A small network: a linear layer, tanh, a product with a second input and a reduction.
Tensor net(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b) {
  Tensor h = tanh(add(matmul(x, w), b));
  return sum(mul(exp(h), y));
}

// The tensors the graph behind `root` holds for backward, found by walking it.
size_t saved_in_graph(const Tensor& root, bool* all_packed) {
  std::set<const autograd::Node*> seen;
  std::vector<std::shared_ptr<autograd::Node>> todo = {root.grad_fn()};
  size_t n = 0;
  *all_packed = true;
  while (!todo.empty()) {
    std::shared_ptr<autograd::Node> node = todo.back();
    todo.pop_back();
    if (!node || !seen.insert(node.get()).second) continue;
    for (const autograd::SavedTensor* s : node->saved_tensors()) {
      if (!s->defined()) continue;
      ++n;
      *all_packed = *all_packed && s->packed() && !s->peek().defined();
    }
    for (const autograd::Edge& e : node->next_edges()) todo.push_back(e.function);
  }
  return n;
}

// x^2, written as a custom function that saves its input.
struct Square : autograd::Function<Square> {
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return mul(x, x);
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    const Tensor x = ctx->get_saved_variables()[0];
    return {mul(g[0], mul(x, scalar(2.0, x.device())))};
  }
};

}  // namespace

TEST_CASE("saved tensor hooks: every saved tensor goes through pack and unpack, and identity hooks change no bit") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    const Tensor x0 = leaf({4, 3}, 1, d), y0 = leaf({4, 5}, 2, d), w0 = leaf({3, 5}, 3, d), b0 = leaf({5}, 4, d);
    net(x0, y0, w0, b0).backward();

    const Tensor x = leaf({4, 3}, 1, d), y = leaf({4, 5}, 2, d), w = leaf({3, 5}, 3, d), b = leaf({5}, 4, d);
    std::atomic<int> packs{0}, unpacks{0};
    Tensor out;
    {
      saved_tensors_hooks hooks(
          [&packs](const Tensor& t) {
            ++packs;
            CHECK_FALSE(t.requires_grad());  // pack sees no history
            CHECK_FALSE(GradMode::is_enabled());
            return t;
          },
          [&unpacks](const Tensor& t) {
            ++unpacks;
            return t;
          });
      out = net(x, y, w, b);
    }
    bool all_packed = false;
    const size_t saved = saved_in_graph(out, &all_packed);
    CHECK(saved >= 4);  // matmul's two inputs, tanh's and exp's results, mul's inputs
    CHECK(packs == static_cast<int>(saved));
    CHECK(all_packed);
    CHECK(unpacks == 0);
    CHECK_THAT(autograd::to_dot({out}), Catch::Matchers::Contains("packed by a saved-tensor hook"));
    out.backward();
    CHECK(unpacks == packs);
    CHECK_ALLCLOSE(x.grad(), x0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(y.grad(), y0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(w.grad(), w0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(b.grad(), b0.grad(), 0.0, 0.0);
    // Released as without hooks.
    test::expect_error<StateError>([&] { out.backward(); }, {"second time", "retain_graph"});
    // Outside the scope nothing is packed.
    const int before = packs;
    net(x, y, w, b).backward();
    CHECK(packs == before);
  }
}

TEST_CASE("saved tensor hooks: PyTorch's cases by hand, and the hooks a backward carries to its threads") {
  std::vector<int> packs_in_backward;
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    auto twice = [](const Tensor& t) { return mul(t, scalar(2.0, t.device())); };
    auto same = [](const Tensor& t) { return t; };
    // exp saves its result: packed doubled, the gradient g * result doubles.
    {
      const Tensor a = leaf({5}, 1, d);
      Tensor y;
      {
        saved_tensors_hooks hooks(twice, same);
        y = exp(a);
      }
      sum(y).backward();
      CHECK_ALLCLOSE(a.grad(), mul(y.detach(), scalar(2.0, d)), 0.0, 0.0);
    }
    // A custom function's save_for_backward goes through the hooks too: 2 (2a) = 4a.
    {
      const Tensor a = leaf({5}, 6, d);
      Tensor y;
      {
        saved_tensors_hooks hooks(twice, same);
        y = Square::apply(a);
      }
      sum(y).backward();
      CHECK_ALLCLOSE(a.grad(), mul(a.detach(), scalar(4.0, d)), 1e-15, 0.0);
    }
    // Nested pairs: the inner one applies. a * a saves a twice: grad = 2 * (5 * 5) a.
    {
      const Tensor a = leaf({5}, 2, d), b = leaf({5}, 3, d);
      auto times = [](double k) { return [k](const Tensor& t) { return mul(t, scalar(k, t.device())); }; };
      Tensor ya, yb;
      {
        saved_tensors_hooks outer(times(3.0), times(3.0));
        {
          saved_tensors_hooks inner(times(5.0), times(5.0));
          ya = mul(a, a);
        }
        yb = mul(b, b);
      }
      sum(ya).backward();
      sum(yb).backward();
      CHECK_ALLCLOSE(a.grad(), mul(a.detach(), scalar(50.0, d)), 1e-15, 0.0);
      CHECK_ALLCLOSE(b.grad(), mul(b.detach(), scalar(18.0, d)), 1e-15, 0.0);
    }
    // Double backward: a ** 3 saves a once, packed doubled; the unpacked tensor keeps a's
    // identity, so the second derivative reaches a: d/da sum(3 (2a)^2) = 6 * 2 * a.
    for (bool doubled : {false, true}) {
      const Tensor a = leaf({5}, 4, d);
      Tensor s;
      {
        saved_tensors_hooks hooks(doubled ? std::function<Tensor(const Tensor&)>(twice) : same, same);
        s = sum(pow(a, 3.0));
      }
      Tensor g = autograd::grad({s}, {a}, {}, std::nullopt, true)[0];
      sum(g).backward();
      CHECK_ALLCLOSE(a.grad(), mul(a.detach(), scalar(doubled ? 12.0 : 6.0, d)), 1e-15, 0.0);
    }
    // Hooks in effect where backward is called apply to what a create_graph backward saves, on
    // whichever thread runs the node: the root is on cpu:0, so the caller works for cpu:0 and
    // the nodes on another device run on that device's worker thread. Counted per device, below.
    {
      const Tensor a = leaf({5}, 5, d);
      const Tensor s = sum(mul(exp(a), a)).to(kCPU);
      std::atomic<int> packs{0};
      Tensor g;
      {
        saved_tensors_hooks hooks(
            [&packs](const Tensor& t) {
              ++packs;
              return t;
            },
            same);
        g = autograd::grad({s}, {a}, {}, std::nullopt, true)[0];
      }
      CHECK(packs > 0);
      packs_in_backward.push_back(packs);
      sum(g).backward();
      const Tensor e = exp(a.detach());  // d2/da2 sum(a e^a) = e^a (a + 2)
      CHECK_ALLCLOSE(a.grad(), mul(e, add(a.detach(), scalar(2.0, d))), 1e-14, 0.0);
    }
  }
  for (size_t i = 1; i < packs_in_backward.size(); ++i) CHECK(packs_in_backward[i] == packs_in_backward[0]);
}

TEST_CASE("saved tensor hooks: save_on_cpu, and refusals that are typed and name what to do") {
  for (const Device& d : test::test_devices()) {
    INFO("device " << d);
    // save_on_cpu changes no bit.
    const Tensor x0 = leaf({4, 3}, 1, d), y0 = leaf({4, 5}, 2, d), w0 = leaf({3, 5}, 3, d), b0 = leaf({5}, 4, d);
    net(x0, y0, w0, b0).backward();
    const Tensor x = leaf({4, 3}, 1, d), y = leaf({4, 5}, 2, d), w = leaf({3, 5}, 3, d), b = leaf({5}, 4, d);
    Tensor out;
    {
      save_on_cpu offload;
      out = net(x, y, w, b);
    }
    out.backward();
    CHECK_ALLCLOSE(x.grad(), x0.grad(), 0.0, 0.0);
    CHECK_ALLCLOSE(w.grad(), w0.grad(), 0.0, 0.0);
    // A tensor on a CPU device is kept as it is, and an in-place change before backward is
    // caught; one on another device was copied at save time, so the change does not reach
    // backward (PyTorch's save_on_cpu on a GPU).
    const Tensor p = leaf({3}, 5, d);
    Tensor q = leaf({3}, 6, d);
    Tensor r;
    {
      save_on_cpu offload;
      r = sum(mul(p, q));
    }
    const Tensor q_then = q.detach().clone();
    {
      NoGradGuard no_grad;
      q.add_(scalar(1.0, d));
    }
    if (d.is_cpu()) {
      test::expect_error<StateError>([&] { r.backward(); }, {"save_on_cpu", "in-place", "clone()"});
    } else {
      r.backward();
      CHECK_ALLCLOSE(p.grad(), q_then, 0.0, 0.0);
    }

    // A pack hook that modifies its input in place.
    const Tensor a = leaf({4}, 7, d);
    test::expect_error<StateError>(
        [&] {
          saved_tensors_hooks hooks(
              [](const Tensor& t) {
                Tensor m = t;
                m.mul_(scalar(2.0, t.device()));
                return t;
              },
              [](const Tensor& t) { return t; });
          exp(a);
        },
        {"pack hook", "in place", "copy"});
    // An unpack hook that returns another shape, or nothing.
    for (bool undefined : {false, true}) {
      Tensor e;
      {
        saved_tensors_hooks hooks([](const Tensor& t) { return t; },
                                  [undefined](const Tensor& t) { return undefined ? Tensor() : sum(t); });
        e = exp(a);
      }
      test::expect_error<ValueError>([&] { sum(e).backward(); },
                                     {"ExpBackward", "unpack hook", "[4]", undefined ? "undefined" : "[]"});
    }
    // Empty hooks.
    test::expect_error<ValueError>(
        [] {
          saved_tensors_hooks hooks(autograd::SavedTensorHooks{{}, [](const std::any&) { return Tensor(); }});
        },
        {"saved_tensors_hooks", "pack", "empty"});
  }
}

TEST_CASE(
    "saved tensor hooks: disable_saved_tensors_hooks refuses new hooks with its message, nests, and is per "
    "thread") {
  using wick::autograd::graph::disable_saved_tensors_hooks;
  auto identity = [](const Tensor& t) { return t; };
  const Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  {
    disable_saved_tensors_hooks off("this feature does not work with saved tensor hooks");
    test::expect_error<StateError>(
        [&] { saved_tensors_hooks h(identity, identity); },
        {"saved_tensors_hooks: this feature does not work with saved tensor hooks", "disable_saved_tensors_hooks"});
    test::expect_error<StateError>([&] { save_on_cpu h; }, {"this feature does not work"});
    {
      disable_saved_tensors_hooks inner("inner message");
      test::expect_error<StateError>([&] { saved_tensors_hooks h(identity, identity); }, {"inner message"});
    }
    test::expect_error<StateError>([&] { saved_tensors_hooks h(identity, identity); }, {"does not work"});
    // Another thread is not disabled.
    bool other_ok = false;
    std::thread([&] {
      saved_tensors_hooks h(identity, identity);
      other_ok = true;
    }).join();
    CHECK(other_ok);
    // Ops and backward run as usual, with no hooks.
    exp(x).sum().backward();
    CHECK_ALLCLOSE(x.grad(), exp(x.detach()), 0.0, 0.0);
  }
  // Enabled again: hooks install and run.
  int packs = 0;
  {
    saved_tensors_hooks h(
        [&](const Tensor& t) {
          ++packs;
          return t;
        },
        identity);
    // Made while hooks are in effect: refused at once, nothing disabled.
    test::expect_error<StateError>([&] { disable_saved_tensors_hooks off("not now"); }, {"not now"});
    saved_tensors_hooks nested(identity, identity);  // still allowed
    (void)exp(x);
  }
  CHECK(packs == 0);  // the nested pair was the innermost
  {
    saved_tensors_hooks h(
        [&](const Tensor& t) {
          ++packs;
          return t;
        },
        identity);
    (void)exp(x);
  }
  CHECK(packs == 1);  // exp saves its result once
}
