// Gradient hooks (Note [Gradient hooks] in wick/autograd/hooks.h): Tensor::register_hook,
// register_post_accumulate_grad_hook and their handles. The first cases follow PyTorch's
// test_autograd.py (test_hooks, test_hook_none, test_tensor_hooks_inplace, the remove handle).
#include "wick/autograd/hooks.h"

#include <atomic>
#include <catch2/catch.hpp>

#include "wick/autograd/engine.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad.h"
#include "wick/core/generator.h"

using namespace wick;

namespace {
Device cpu(int i) { return Device(DeviceType::CPU, i); }
std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
}  // namespace

TEST_CASE("hooks: run on leaves and non-leaves, can be removed, and may replace the gradient (test_hooks)") {
  Tensor x = ones({5, 5}).requires_grad_();
  Tensor y = (ones({5, 5}) * 4.0).requires_grad_();
  int counter = 0;
  auto bw_hook = [&counter](int inc) {
    return [&counter, inc](const Tensor& grad) {
      CHECK(grad.defined());
      counter += inc;
    };
  };
  Tensor z = x.pow(2.0) + x * 2.0 + x * y + y;
  x.register_hook(bw_hook(0));
  RemovableHandle test = z.register_hook(bw_hook(1));
  z.backward(ones({5, 5}), /*retain_graph=*/true);
  CHECK(counter == 1);

  RemovableHandle test2 = z.register_hook(bw_hook(2));
  z.backward(ones({5, 5}), true);
  CHECK(counter == 4);

  test2.remove();
  z.backward(ones({5, 5}), true);
  CHECK(counter == 5);
  test2.remove();  // twice: nothing happens
  z.backward(ones({5, 5}), true);
  CHECK(counter == 6);

  auto bw_hook_modify = [](const Tensor& grad) { return grad * 2.0; };
  test.remove();
  z.register_hook(bw_hook_modify);
  y.mutable_grad().zero_();
  z.backward(ones({5, 5}), true);
  CHECK(values(y.grad()) == values((x.detach() + 1.0) * 2.0));

  y.register_hook(bw_hook_modify);
  y.mutable_grad().zero_();
  z.backward(ones({5, 5}));
  CHECK(values(y.grad()) == values((x.detach() + 1.0) * 4.0));
}

TEST_CASE("hooks: never see a missing gradient (test_hook_none)") {
  Tensor x = randn({4}).requires_grad_();
  auto parts = x.split(2);  // one node, two outputs
  int called0 = 0, called1 = 0;
  parts[0].register_hook([&](const Tensor& g) {
    CHECK(g.defined());
    ++called0;
  });
  parts[1].register_hook([&](const Tensor&) { ++called1; });  // parts[1] gets no gradient
  (parts[0] * 3.0).sum().backward();
  CHECK(called0 == 1);
  CHECK(called1 == 0);
  CHECK(values(x.grad()) == std::vector<double>{3, 3, 0, 0});
}

TEST_CASE("hooks: a hook registered after an in-place op belongs to the new value (test_tensor_hooks_inplace)") {
  int count1 = 0, count2 = 0;
  Tensor a = tensor({1.0}).requires_grad_();
  Tensor b = a.clone();
  b.register_hook([&](const Tensor& grad) {
    ++count1;
    CHECK(values(grad) == std::vector<double>{4.0});  // x2 from mul, x2 from the second hook
    return grad * 2.0;
  });
  b.mul_(2.0);
  b.register_hook([&](const Tensor& grad) {
    ++count2;
    CHECK(values(grad) == std::vector<double>{1.0});
    return grad * 2.0;
  });
  b.sum().backward();
  CHECK(count1 == 1);
  CHECK(count2 == 1);
  CHECK(values(a.grad()) == std::vector<double>{8.0});
}

TEST_CASE("hooks: several hooks chain in registration order, retain_grad and autograd::grad see the result") {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 3.0;
  y.retain_grad();
  std::vector<std::string> order;
  y.register_hook([&](const Tensor& g) {
    order.push_back("first");
    return g + 1.0;
  });
  y.register_hook([&](const Tensor& g) {
    order.push_back("second");
    CHECK(values(g) == std::vector<double>{2, 2});
    return g * 10.0;
  });
  y.sum().backward({}, true);
  CHECK(order == std::vector<std::string>{"first", "second"});
  CHECK(values(y.grad()) == std::vector<double>{20, 20});
  CHECK(values(x.grad()) == std::vector<double>{60, 60});

  // a leaf hook changes what autograd::grad returns, and leaves .grad alone
  Tensor w = tensor({2.0}).requires_grad_();
  RemovableHandle h = w.register_hook([](const Tensor& g) { return -g; });
  auto g = autograd::grad({(w * 5.0).sum()}, {w});
  CHECK(values(g[0]) == std::vector<double>{-5});
  CHECK(!w.grad().defined());
  h.remove();
  (w * 5.0).sum().backward();
  CHECK(values(w.grad()) == std::vector<double>{5});
}

TEST_CASE("hooks: removing after the tensor is gone is harmless, hooks need a tensor that requires grad") {
  RemovableHandle h, hl;
  {
    Tensor x = ones({2}).requires_grad_();
    Tensor y = x * 2.0;
    h = y.register_hook([](const Tensor& g) { return g; });
    hl = x.register_hook([](const Tensor& g) { return g; });
  }
  h.remove();
  hl.remove();
  Tensor plain = ones({2});
  CHECK_THROWS_AS(plain.register_hook([](const Tensor& g) { return g; }), StateError);
  CHECK_THROWS_WITH(plain.register_hook([](const Tensor& g) { return g; }),
                    Catch::Contains("cannot register a hook on a tensor that doesn't require gradient"));
  Tensor x = ones({2}).requires_grad_();
  CHECK_THROWS_AS(plain.register_post_accumulate_grad_hook([](const Tensor&) {}), StateError);
  CHECK_THROWS_WITH((x * 2.0).register_post_accumulate_grad_hook([](const Tensor&) {}),
                    Catch::Contains("post accumulate grad hooks cannot be registered on non-leaf tensors"));
}

TEST_CASE("post-accumulate-grad hooks: once per backward on a tied parameter, after .grad is complete") {
  // w is used twice (as a tied encoder/decoder weight) and on two devices
  manual_seed(3);
  Tensor w = randn({3, 3}, TensorOptions(kFloat64)).requires_grad_();
  Tensor x = randn({4, 3}, TensorOptions(kFloat64));
  auto loss_of = [&] {
    Tensor h = matmul(x, w.t()).tanh();
    Tensor h1 = matmul(h.to(cpu(1)), w.to(cpu(1)));  // the same weight, used on cpu:1
    return h1.pow(2.0).sum().to(cpu(0));
  };
  Tensor expected = autograd::grad({loss_of()}, {w})[0];
  int calls = 0;
  std::vector<double> seen;
  RemovableHandle handle = w.register_post_accumulate_grad_hook([&](const Tensor& p) {
    ++calls;
    CHECK(p.is_same(w));
    seen = values(p.grad());
  });
  loss_of().backward();
  CHECK(calls == 1);
  CHECK(seen == values(w.grad()));
  auto got = values(w.grad()), want = values(expected);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-12));
  // not under autograd::grad, and not after remove()
  autograd::grad({loss_of()}, {w});
  CHECK(calls == 1);
  loss_of().backward();
  CHECK(calls == 2);
  handle.remove();
  loss_of().backward();
  CHECK(calls == 2);
}
