// Which outputs of a custom function (wick/autograd/custom_function.h) get history, and what
// backward receives for each: outputs that alias an input, undefined outputs, integer outputs.
// The truth is PyTorch 1.13's behaviour for the same functions (torch.autograd.Function, run by
// hand; quoted at each case) and hand-computed gradients, each body on every test device.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <string>

#include "support/devices.h"

using namespace wick;
using wick::autograd::AutogradContext;
using wick::autograd::Function;
using wick::autograd::variable_list;

namespace {

std::vector<double> values(const Tensor& t) { return t.to(kCPU).to(kFloat64).to_vector<double>(); }
TensorOptions f64(Device d) { return TensorOptions().dtype(kFloat64).device(d); }

// Returns its input as it is; the gradient passes through.
struct Ident : Function<Ident> {
  static Tensor forward(AutogradContext*, Tensor x) { return x; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

// Returns the first two elements of its input, a view made in forward.
struct HeadView : Function<HeadView> {
  static Tensor forward(AutogradContext*, Tensor x) { return x.narrow(0, 0, 2); }
  static variable_list backward(AutogradContext*, variable_list g) {
    return {cat({g[0], zeros({1}, g[0].options())}, 0)};
  }
};

// Returns its input marked non-differentiable.
struct NonDiffIdent : Function<NonDiffIdent> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->mark_non_differentiable({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

// {2x, undefined} or {undefined, 2x}; records what backward receives.
struct UndefinedOutput : Function<UndefinedOutput> {
  static inline bool leading = false, materialize = true;
  static inline size_t seen = 0;
  static inline bool undefined_defined = true;
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    ctx->set_materialize_grads(materialize);
    if (leading) return {Tensor(), x * 2.0};
    return {x * 2.0, Tensor()};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    seen = g.size();
    const size_t used = leading ? 1 : 0;
    undefined_defined = g.size() == 2 && g[1 - used].defined();
    return {g[used] * 2.0};
  }
};

// {3x, argmax(x) as int64 [1], x > 0 as bool}; records the integer output's gradient.
struct IntOutputs : Function<IntOutputs> {
  static inline std::string int_grad;
  static variable_list forward(AutogradContext*, Tensor x) {
    return {x * 3.0, argmax(x, 0).reshape({1}), gt(x, zeros_like(x))};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    int_grad = g[1].defined() ? fmt::format("{} {}", g[1].dtype(), values(g[1]).at(0)) : "undefined";
    return {g[0] * 3.0};
  }
};

}  // namespace

// PyTorch: "Output 0 of I2Backward is a view and is being modified inplace. This view was created
// inside a custom Function (or because an input was returned as-is) ... You can fix this by
// cloning the output of the custom Function."
TEST_CASE("custom function: a recorded in-place op on an output that aliases an input is refused") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor leaf = ones({3}, f64(d)).requires_grad_();
    Tensor y = Ident::apply(leaf);
    CHECK_THROWS_AS(y.mul_(full({3}, 5.0, f64(d))), StateError);
    CHECK_THROWS_WITH(y.mul_(5.0), Catch::Contains("mul_: the tensor is output 0 of the custom function") &&
                                       Catch::Contains("Ident") &&
                                       Catch::Contains("clone() the output of the custom function first"));
    CHECK_THROWS_AS(y.narrow(0, 0, 2).add_(ones({2}, f64(d))), StateError);  // a view of it too
    CHECK(values(leaf) == std::vector<double>{1, 1, 1});
    Tensor c = y.clone();
    c.mul_(full({3}, 5.0, f64(d)));  // the fix the message names
    c.sum().backward();
    CHECK(values(leaf.grad()) == std::vector<double>{5, 5, 5});

    // Of a view input: the write would reach the base behind the custom backward's back.
    Tensor leaf2 = ones({3}, f64(d)).requires_grad_();
    Tensor base = leaf2 * 1.0;
    Tensor v = base.narrow(0, 0, 2);
    CHECK_THROWS_AS(Ident::apply(v).mul_(full({2}, 3.0, f64(d))), StateError);
    CHECK(values(base) == std::vector<double>{1, 1, 1});
    (base * base).sum().backward();
    CHECK(values(leaf2.grad()) == std::vector<double>{2, 2, 2});

    // A view made in forward says the same.
    CHECK_THROWS_WITH(HeadView::apply(leaf * 1.0).mul_(2.0),
                      Catch::Contains("HeadView") && Catch::Contains("clone() the output of the custom function"));
  }
}

// PyTorch: an unrecorded in-place op on such an output is accepted; a recorded one (an operand that
// requires grad) is refused even when no input required grad; a non-differentiable input that
// requires grad comes back detached, and a detached tensor may be modified ("x version 1").
TEST_CASE("custom function: unrecorded in-place ops on an aliasing output, and a detached one, are accepted") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = ones({3}, f64(d));
    Tensor y = Ident::apply(x);
    CHECK(y.grad_fn() == nullptr);
    y.mul_(5.0);
    CHECK(values(x) == std::vector<double>{5, 5, 5});
    Tensor w = ones({3}, f64(d)).requires_grad_();
    CHECK_THROWS_AS(Ident::apply(x).mul_(w), StateError);
    CHECK(values(x) == std::vector<double>{5, 5, 5});
    {
      NoGradGuard no_grad;
      Ident::apply(x).add_(w);  // not recorded
    }
    CHECK(values(x) == std::vector<double>{6, 6, 6});

    Tensor leaf = ones({3}, f64(d)).requires_grad_();
    Tensor nd = NonDiffIdent::apply(leaf);
    CHECK_FALSE(nd.requires_grad());
    const uint32_t before = leaf.version();
    nd.mul_(w);  // recorded on the detached alias
    CHECK(leaf.version() == before + 1);
    CHECK(nd.requires_grad());
  }
}

// PyTorch: backward(ctx, g0, g1) gets g1 = None for `return x * 2, None` (materialized or not),
// and g0 = None for `return None, x * 2`.
TEST_CASE("custom function: backward gets one gradient per output, undefined for an undefined output") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    for (bool leading : {false, true}) {
      for (bool materialize : {true, false}) {
        INFO("leading " << leading << " materialize " << materialize);
        UndefinedOutput::leading = leading;
        UndefinedOutput::materialize = materialize;
        UndefinedOutput::seen = 0;
        UndefinedOutput::undefined_defined = true;
        Tensor x = full({2}, 3.0, f64(d)).requires_grad_();
        variable_list r = UndefinedOutput::apply(x);
        REQUIRE(r.size() == 2);
        const Tensor& y = r[leading ? 1 : 0];
        CHECK_FALSE(r[leading ? 0 : 1].defined());
        REQUIRE(y.grad_fn() != nullptr);
        CHECK(y.grad_fn()->device() == d);  // the first defined output's device
        y.sum().backward();
        CHECK(UndefinedOutput::seen == 2);
        CHECK_FALSE(UndefinedOutput::undefined_defined);
        CHECK(values(x.grad()) == std::vector<double>{2, 2});
      }
    }
    UndefinedOutput::leading = false;
    UndefinedOutput::materialize = true;
  }
}

// PyTorch: an int64 output has requires_grad=False and grad_fn None; backward receives int64
// zeros for it (tensor([0])) with materialize_grads.
TEST_CASE("custom function: integer and bool outputs get no history") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = tensor({-1.0, 2.0, 0.5}, f64(d)).requires_grad_();
    variable_list r = IntOutputs::apply(x);
    REQUIRE(r.size() == 3);
    CHECK(r[0].requires_grad());
    for (int i : {1, 2}) {
      INFO("output " << i);
      CHECK_FALSE(r[i].requires_grad());
      CHECK(r[i].grad_fn() == nullptr);
    }
    CHECK(values(r[1]) == std::vector<double>{1});
    CHECK_THROWS_AS((r[1] * 1.0).sum().backward(), Error);  // nothing to differentiate
    IntOutputs::int_grad.clear();
    r[0].sum().backward();
    CHECK(IntOutputs::int_grad == "int64 0");
    CHECK(values(x.grad()) == std::vector<double>{3, 3, 3});
  }
}
