// Custom autograd functions (wick/autograd/custom_function.h): the behaviour of LibTorch's
// CustomAutogradTest cases, each body on every test device, with hand-computed gradients.
#include <wick/wick.h>

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "support/devices.h"

using namespace wick;
using wick::autograd::AutogradContext;
using wick::autograd::Function;
using wick::autograd::variable_list;

namespace {

std::vector<double> values(const Tensor& t) { return t.to(kCPU).to(kFloat64).to_vector<double>(); }
TensorOptions f64(Device d) { return TensorOptions().dtype(kFloat64).device(d); }

// var1 + mul * var2 + var1 * var2, with an int between the tensors.
struct MixedArgs : Function<MixedArgs> {
  static Tensor forward(AutogradContext* ctx, Tensor var1, int mul, Tensor var2) {
    ctx->saved_data["mul"] = mul;
    ctx->save_for_backward({var1, var2});
    return var1 + var2 * static_cast<double>(mul) + var1 * var2;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    const double mul = static_cast<double>(ctx->saved_data["mul"].toInt());
    variable_list s = ctx->get_saved_variables();
    return {g[0] + g[0] * s[1], Tensor(), g[0] * mul + g[0] * s[0]};
  }
};

// Returns its input as it is; the gradient is doubled.
struct ReturnsInput : Function<ReturnsInput> {
  static std::string name() { return "ReturnsInputBackward"; }
  static Tensor forward(AutogradContext*, Tensor x) { return x; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
};

// Adds 1 in place and marks the input dirty; backward doubles.
struct AddOneInPlace : Function<AddOneInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.add_(ones_like(x));
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
};

// x += w in place, x marked dirty; the gradient passes to both.
struct AddInPlace : Function<AddInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x, Tensor w) {
    x.add_(w);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

// Marks a tensor dirty that it does not return.
struct DirtyNotReturned : Function<DirtyNotReturned> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->mark_dirty({x});
    return x * 2.0;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

// {x > 0 as a 0/1 mask (non-differentiable), 3x}; backward checks what it gets for the mask.
struct MaskAndTriple : Function<MaskAndTriple> {
  static inline bool mask_grad_was_zeros = false;
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    Tensor mask = gt(x, zeros_like(x)).to(x.dtype());
    Tensor y = x * 3.0;
    ctx->mark_non_differentiable({mask});
    return {mask, y};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    mask_grad_was_zeros = g[0].defined() && values(g[0]) == std::vector<double>(g[0].numel(), 0.0);
    return {g[1] * 3.0};
  }
};

// {2x, 3x}; records whether backward saw a defined gradient for the second output.
struct TwoOutputs : Function<TwoOutputs> {
  static inline bool materialize = true;
  static inline bool second_defined = false;
  static inline double second_sum = -1;
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    ctx->set_materialize_grads(materialize);
    return {x * 2.0, x * 3.0};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    second_defined = g[1].defined();
    second_sum = second_defined ? values(sum(g[1]))[0] : -1;
    Tensor r = g[0] * 2.0;
    return {second_defined ? r + g[1] * 3.0 : r};
  }
};

// a * b * k; records needs_input_grad in backward.
struct NeedsGrad : Function<NeedsGrad> {
  static inline bool needs[2] = {false, false};
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b, double k) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["k"] = k;
    return a * b * k;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    needs[0] = ctx->needs_input_grad(0);
    needs[1] = ctx->needs_input_grad(1);
    variable_list s = ctx->get_saved_variables();
    const double k = ctx->saved_data["k"].toDouble();
    return {needs[0] ? g[0] * s[1] * k : Tensor(), needs[1] ? g[0] * s[0] * k : Tensor(), Tensor()};
  }
};

// Returns too few gradients, or a gradient for its int argument.
struct WrongCount : Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x, int64_t) { return x * 2.0; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};
struct GradForInt : Function<GradForInt> {
  static Tensor forward(AutogradContext*, Tensor x, int64_t) { return x * 2.0; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

// exp(x), saving its input and its output.
struct SavesBoth : Function<SavesBoth> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = exp(x);
    ctx->save_for_backward({x, y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[1]};
  }
};

// Throws from backward: a std::runtime_error, or a wick::ValueError.
struct Throws : Function<Throws> {
  static inline bool wick_error = false;
  static Tensor forward(AutogradContext*, Tensor x) { return x * 1.0; }
  static variable_list backward(AutogradContext*, variable_list) {
    if (wick_error) throw ValueError("bad gradient");
    throw std::runtime_error("boom");
  }
};

}  // namespace

TEST_CASE("custom function: tensor and int arguments, saved_data and saved tensors (CustomFunction)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = arange(4.0, f64(d)).requires_grad_(), y = arange(1.0, 5.0, 1.0, f64(d)).requires_grad_();
    Tensor res = MixedArgs::apply(x, 2, y);
    REQUIRE(res.grad_fn() != nullptr);
    CHECK_THAT(res.grad_fn()->name(), Catch::EndsWith("(anonymous namespace)::MixedArgs"));
    CHECK(res.grad_fn()->device() == d);
    CHECK(values(res) == std::vector<double>{2, 7, 14, 23});  // x + 2y + xy
    res.sum().backward();
    CHECK(values(x.grad()) == std::vector<double>{2, 3, 4, 5});  // 1 + y
    CHECK(values(y.grad()) == std::vector<double>{2, 3, 4, 5});  // 2 + x
    CHECK_THROWS_WITH(res.sum().backward(), Catch::Contains("MixedArgs") && Catch::Contains("second time"));
  }
}

TEST_CASE("custom function: no node without grad mode or without an input that requires grad") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = ones({3}, f64(d)), y = ones({3}, f64(d)).requires_grad_();
    CHECK_FALSE(MixedArgs::apply(x, 3, x).requires_grad());
    NoGradGuard no_grad;
    Tensor r = MixedArgs::apply(y, 3, y);
    CHECK_FALSE(r.requires_grad());
    CHECK(r.grad_fn() == nullptr);
    CHECK(values(r) == std::vector<double>{5, 5, 5});
  }
}

TEST_CASE(
    "custom function: an input returned as it is comes back as a new tensor with the node (FunctionReturnsInput)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = full({2}, 3.0, f64(d)).requires_grad_();
    Tensor y = ReturnsInput::apply(x);
    CHECK(x.is_leaf());
    CHECK(y.impl() != x.impl());
    CHECK(y.grad_fn()->name() == "ReturnsInputBackward");  // T::name() renames the node
    (y * 1.0).sum().backward();
    CHECK(values(x.grad()) == std::vector<double>{2, 2});
  }
}

TEST_CASE("custom function: mark_dirty bumps the version and rebases the input onto the node (MarkDirty)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor leaf = ones({3}, f64(d)).requires_grad_();
    Tensor x = leaf * 1.0;  // a leaf that requires grad cannot be modified in place
    const uint32_t before = x.version();
    Tensor out = AddOneInPlace::apply(x);
    CHECK(out.impl() == x.impl());
    CHECK(x.version() >= before + 2);  // add_ in forward, then mark_dirty's bump
    CHECK_THAT(x.grad_fn()->name(), Catch::EndsWith("::AddOneInPlace"));
    CHECK(values(x) == std::vector<double>{2, 2, 2});
    out.sum().backward();
    CHECK(values(leaf.grad()) == std::vector<double>{2, 2, 2});

    Tensor fresh = ones({2}, f64(d)).requires_grad_();
    CHECK_THROWS_AS(AddOneInPlace::apply(fresh), StateError);
    CHECK_THROWS_WITH(DirtyNotReturned::apply(leaf * 1.0),
                      Catch::Contains("DirtyNotReturned") && Catch::Contains("must all be outputs"));
    Tensor base = ones({4}, f64(d)).requires_grad_() * 1.0;
    CHECK_THROWS_AS(AddOneInPlace::apply(base.narrow(0, 0, 2)), NotImplementedError);
  }
}

TEST_CASE("custom function: mark_dirty of a view made under NoGradGuard is refused as an in-place op on it is") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor leaf = ones({3}, f64(d)).requires_grad_();
    Tensor base = leaf * 1.0;
    Tensor v;
    {
      NoGradGuard no_grad;
      v = base.narrow(0, 0, 2);
    }
    Tensor w = full({2}, 10.0, f64(d)).requires_grad_();
    std::string inplace_message, dirty_message;
    try {
      v.add_(w);
    } catch (const StateError& e) {
      inplace_message = e.what();
    }
    const uint32_t before = base.version();
    try {
      AddInPlace::apply(v, w);
    } catch (const StateError& e) {
      dirty_message = e.what();
    }
    REQUIRE_FALSE(inplace_message.empty());
    REQUIRE_FALSE(dirty_message.empty());
    CHECK_THAT(dirty_message, Catch::Contains("AddInPlace: mark_dirty: the tensor is a view made under NoGradGuard"));
    // The same message as the in-place op's, after the name of the op.
    CHECK(dirty_message.substr(dirty_message.find(": the tensor")) ==
          inplace_message.substr(inplace_message.find(": the tensor")));
    CHECK(base.version() == before + 1);  // forward's own add_, no mark_dirty bump
    CHECK(values(base) == std::vector<double>{11, 11, 1});
    CHECK(base.grad_fn() != nullptr);
    CHECK_THAT(base.grad_fn()->name(), !Catch::Contains("AddInPlace"));
  }
}

TEST_CASE("custom function: the node of a mark_dirty call dies with its tensors (no reference cycle)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    std::weak_ptr<autograd::Node> node;
    {
      Tensor leaf = ones({3}, f64(d)).requires_grad_();
      Tensor x = leaf * 1.0;
      Tensor out = AddOneInPlace::apply(x);
      node = out.grad_fn();
      REQUIRE_FALSE(node.expired());
      out.sum().backward(/*gradient=*/{}, /*retain_graph=*/true);
      CHECK(values(leaf.grad()) == std::vector<double>{2, 2, 2});
    }
    CHECK(node.expired());
  }
}

TEST_CASE(
    "custom function: mark_non_differentiable outputs need no grad, their gradient is zeros (MarkNonDifferentiable)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = tensor({-1.0, 2.0, 0.5}, f64(d)).requires_grad_();
    variable_list r = MaskAndTriple::apply(x);
    CHECK_FALSE(r[0].requires_grad());
    CHECK(r[1].requires_grad());
    CHECK(values(r[0]) == std::vector<double>{0, 1, 1});
    MaskAndTriple::mask_grad_was_zeros = false;
    r[1].sum().backward();
    CHECK(MaskAndTriple::mask_grad_was_zeros);
    CHECK(values(x.grad()) == std::vector<double>{3, 3, 3});
  }
}

TEST_CASE("custom function: set_materialize_grads gives zeros or undefined for an unused output") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    for (bool materialize : {true, false}) {
      INFO("materialize " << materialize);
      TwoOutputs::materialize = materialize;
      Tensor x = ones({2}, f64(d)).requires_grad_();
      variable_list r = TwoOutputs::apply(x);
      r[0].sum().backward();  // r[1] unused
      CHECK(TwoOutputs::second_defined == materialize);
      CHECK(TwoOutputs::second_sum == (materialize ? 0.0 : -1.0));
      CHECK(values(x.grad()) == std::vector<double>{2, 2});
      (r[0] + r[1]).sum().backward();  // both used: the same either way
      CHECK(values(x.grad()) == std::vector<double>{7, 7});
    }
    TwoOutputs::materialize = true;
  }
}

TEST_CASE("custom function: needs_input_grad follows requires_grad and the inputs of autograd::grad") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor a = full({2}, 2.0, f64(d)).requires_grad_(), b = full({2}, 5.0, f64(d));
    NeedsGrad::apply(a, b, 3.0).sum().backward();
    CHECK(NeedsGrad::needs[0]);
    CHECK_FALSE(NeedsGrad::needs[1]);
    CHECK(values(a.grad()) == std::vector<double>{15, 15});
    b.requires_grad_();
    variable_list gb = autograd::grad({NeedsGrad::apply(a, b, 3.0).sum()}, {b});
    CHECK_FALSE(NeedsGrad::needs[0]);
    CHECK(NeedsGrad::needs[1]);
    CHECK(values(gb[0]) == std::vector<double>{6, 6});
  }
}

TEST_CASE("custom function: a wrong gradient count, or a gradient for a non-tensor argument, names the function") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = ones({2}, f64(d)).requires_grad_();
    CHECK_THROWS_AS(WrongCount::apply(x, 1).sum().backward(), ValueError);
    CHECK_THROWS_WITH(WrongCount::apply(x, 1).sum().backward(), Catch::Contains("WrongCount") &&
                                                                    Catch::Contains("returned 1 gradient(s)") &&
                                                                    Catch::Contains("takes 2 argument(s)"));
    CHECK_THROWS_WITH(GradForInt::apply(x, 1).sum().backward(),
                      Catch::Contains("GradForInt") && Catch::Contains("not a tensor"));
    CHECK_FALSE(x.grad().defined());
  }
}

TEST_CASE("custom function: modifying a saved input or output in place makes backward raise (InvalidSavedTensor)") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor leaf = zeros({2}, f64(d)).requires_grad_();
    Tensor x = leaf * 1.0;
    Tensor y = SavesBoth::apply(x);
    x.mul_(full({2}, 2.0, f64(d)));
    CHECK_THROWS_AS(y.sum().backward(), StateError);
    Tensor y2 = SavesBoth::apply(leaf * 1.0);
    Tensor y2_alias = y2.detach();
    y2_alias.add_(ones_like(y2_alias));  // the output shares its version counter with the alias
    CHECK_THROWS_WITH(y2.sum().backward(), Catch::Contains("SavesBoth") && Catch::Contains("in-place operation"));
    CHECK_FALSE(leaf.grad().defined());
    // Unchanged, the saved output comes back with its history: exp's gradient is exp(0) = 1.
    SavesBoth::apply(leaf * 1.0).sum().backward();
    CHECK(values(leaf.grad()) == std::vector<double>{1, 1});
  }
}

TEST_CASE("custom function: an exception from backward reaches the caller naming the function") {
  for (Device d : wick::test::test_devices()) {
    INFO(d);
    Tensor x = ones({2}, f64(d)).requires_grad_();
    Throws::wick_error = false;
    CHECK_THROWS_AS(Throws::apply(x).sum().backward(), Error);
    CHECK_THROWS_WITH(Throws::apply(x).sum().backward(),
                      Catch::Contains("Throws: backward threw std::runtime_error: boom"));
    Throws::wick_error = true;
    CHECK_THROWS_AS(Throws::apply(x).sum().backward(), ValueError);
    CHECK_THROWS_WITH(Throws::apply(x).sum().backward(),
                      Catch::Contains("bad gradient") && Catch::Contains("Throws on " + d.str()));
  }
}
