// Module::to keeps the identity of parameters and buffers (Note [to() keeps identity]), the
// optimizers notice state that no longer fits, and Module::clone is a deep copy that keeps ties
// and shared children (LibTorch's CloneCreatesDistinctParameters and
// ClonePreservesExternalReferences, in wick's terms).
#include <catch2/catch.hpp>

#include "support/allclose.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"
#include "wick/nn/optim/optim.h"

using namespace wick;
using namespace wick::nn;

namespace {

Device cpu(int i) { return Device(DeviceType::CPU, i); }

// A tied weight, a child registered twice, a buffer, a None entry and a plain member.
class TiedNet : public Cloneable<TiedNet> {
 public:
  TiedNet() {
    auto a = std::make_shared<LinearImpl>(3, 3);
    a_ = register_module("a", a);
    again_ = register_module("again", a);
    bn_ = register_module("bn", std::make_shared<BatchNorm1dImpl>(3));
    tied_ = register_parameter("tied", child(a_).weight());
    none_ = register_parameter("none", Tensor());
    count_ = register_buffer("count", wick::zeros({1}));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = child(bn_).forward(child(again_).forward(child(a_).forward(x)));
    return F::linear(h, param(tied_)) + buffer(count_);
  }
  ChildSlot<LinearImpl> a_, again_;
  ChildSlot<BatchNorm1dImpl> bn_;
  ParamSlot tied_, none_;
  BufferSlot count_;
  double gain = 2.0;
};

std::vector<Tensor> values_of(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(t.clone());
  return out;
}

}  // namespace

TEST_CASE("to(dtype): an optimizer built before the cast still trains the parameters") {
  manual_seed(0);
  auto lin = std::make_shared<LinearImpl>(3, 2);
  const auto params = lin->parameters();
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.5));
  lin->to(kFloat64);
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].is_same(lin->parameters()[i]));
    CHECK(params[i].dtype() == kFloat64);
    CHECK(params[i].requires_grad());
    CHECK(params[i].is_leaf());
  }
  const Tensor w0 = lin->weight().clone();
  Tensor x = wick::randn({4, 3}, kFloat64);
  lin->forward(x).sum().backward();
  REQUIRE(lin->weight().grad().dtype() == kFloat64);
  const Tensor expected = w0 - lin->weight().grad() * 0.5;
  opt.step();
  CHECK_ALLCLOSE(lin->weight(), expected, 0, 0);
}

TEST_CASE("to(device): parameters, buffers and gradients move in place, ties stay tied") {
  manual_seed(0);
  auto net = std::make_shared<TiedNet>();
  net->forward(wick::randn({4, 3})).sum().backward();
  const auto params = net->parameters();
  const auto buffers = net->buffers();
  const auto before = values_of(params);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  net->to(cpu(1));
  REQUIRE(net->parameters().size() == params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(net->parameters()[i].is_same(params[i]));
    CHECK(params[i].device() == cpu(1));
    CHECK(params[i].grad().device() == cpu(1));
    CHECK_ALLCLOSE(params[i].to(cpu(0)), before[i], 0, 0);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    CHECK(net->buffers()[i].is_same(buffers[i]));
    CHECK(buffers[i].device() == cpu(1));
  }
  CHECK(net->param(net->tied_).is_same(net->child(net->a_).weight()));
  CHECK(net->buffer(net->count_).device() == cpu(1));
  // integer buffers move too, and keep their dtype
  CHECK(net->child(net->bn_).buffer_table()[2].value.dtype() == kInt64);
  CHECK(net->child(net->bn_).buffer_table()[2].value.device() == cpu(1));
  opt.step();  // state is created on cpu:1 at the first step
  for (const Tensor& p : params) CHECK(p.device() == cpu(1));
}

TEST_CASE("to(): a graph recorded before the move refuses backward") {
  auto lin = std::make_shared<LinearImpl>(3, 2);
  Tensor y = lin->forward(wick::randn({2, 3})).sum();
  lin->to(kFloat64);
  CHECK_THROWS_AS(y.backward(), wick::StateError);
  CHECK_FALSE(lin->weight().grad().defined());
  // with the input requiring grad, the saved weight's version catches it first
  auto lin2 = std::make_shared<LinearImpl>(3, 2);
  Tensor y2 = lin2->forward(wick::randn({2, 3}).requires_grad_()).sum();
  lin2->to(cpu(1));
  CHECK_THROWS_AS(y2.backward(), wick::Error);
}

TEST_CASE("to(): a failing conversion changes nothing") {
  auto lin = std::make_shared<LinearImpl>(3, 2);
  const Tensor w = lin->weight();
  CHECK_THROWS_AS(lin->to(kInt64), wick::Error);
  CHECK(lin->weight().is_same(w));
  CHECK(w.dtype() == kFloat32);
  // the second parameter cannot be moved (not a leaf): the first one is not moved either
  lin->set_parameter_entry(1, lin->bias() * 2.0);
  CHECK_THROWS_AS(lin->to(kFloat64), wick::StateError);
  CHECK(lin->weight().is_same(w));
  CHECK(w.dtype() == kFloat32);
}

TEST_CASE("optimizers raise StateError when their state no longer fits a parameter") {
  manual_seed(0);
  SECTION("SGD momentum") {
    auto lin = std::make_shared<LinearImpl>(3, 2);
    optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    lin->forward(wick::randn({2, 3})).sum().backward();
    opt.step();
    lin->to(kFloat64);
    lin->zero_grad();
    lin->forward(wick::randn({2, 3}, kFloat64)).sum().backward();
    const Tensor w = lin->weight().clone();
    CHECK_THROWS_AS(opt.step(), wick::StateError);
    CHECK_THROWS_WITH(opt.step(), Catch::Contains("momentum_buffer") && Catch::Contains("float32") &&
                                      Catch::Contains("float64") && Catch::Contains("to()"));
    CHECK_ALLCLOSE(lin->weight(), w, 0, 0);  // nothing was applied
  }
  SECTION("Adam, moved to another device") {
    auto lin = std::make_shared<LinearImpl>(3, 2);
    optim::Adam opt(lin->parameters(), optim::AdamOptions(1e-3));
    lin->forward(wick::randn({2, 3})).sum().backward();
    opt.step();
    lin->to(cpu(1));
    CHECK_THROWS_AS(opt.step(), wick::StateError);
    CHECK_THROWS_WITH(opt.step(), Catch::Contains("exp_avg") && Catch::Contains("cpu:0") && Catch::Contains("cpu:1"));
  }
}

TEST_CASE("clone: distinct parameters with the same values, ties and shared children kept") {
  manual_seed(0);
  auto net = std::make_shared<TiedNet>();
  net->gain = 5.0;
  net->child(net->bn_).eval();
  std::shared_ptr<TiedNet> copy = net->clone();
  CHECK(copy.get() != net.get());
  CHECK(copy->gain == 5.0);
  CHECK_FALSE(copy->child(copy->bn_).is_training());
  CHECK(copy->is_training());
  // fresh tensors, same values (CloneCreatesDistinctParameters)
  const auto p1 = net->parameters(), p2 = copy->parameters();
  REQUIRE(p1.size() == p2.size());
  for (size_t i = 0; i < p1.size(); ++i) {
    CHECK_FALSE(p1[i].is_same(p2[i]));
    CHECK(p1[i].data_ptr() != p2[i].data_ptr());
    CHECK_ALLCLOSE(p1[i], p2[i], 0, 0);
    CHECK(p2[i].is_leaf());
    CHECK(p2[i].requires_grad());
  }
  const auto b1 = net->buffers(), b2 = copy->buffers();
  REQUIRE(b1.size() == b2.size());
  for (size_t i = 0; i < b1.size(); ++i) {
    CHECK(b1[i].data_ptr() != b2[i].data_ptr());
    CHECK_ALLCLOSE(b1[i], b2[i], 0, 0);
  }
  // ties and shared children inside the copy, None kept
  CHECK(copy->child_ptr(copy->a_) == copy->child_ptr(copy->again_));
  CHECK(copy->child_ptr(copy->a_) != net->child_ptr(net->a_));
  CHECK(copy->param(copy->tied_).is_same(copy->child(copy->a_).weight()));
  CHECK_FALSE(copy->param(copy->none_).defined());
  // same outputs; then edits on one side do not reach the other
  Tensor x = wick::randn({4, 3});
  CHECK_ALLCLOSE(copy->forward(x), net->forward(x), 0, 0);
  {
    NoGradGuard no_grad;
    Tensor w = net->child(net->a_).weight();
    w.add_(1.0);
  }
  CHECK_FALSE(wick::test::values(copy->child(copy->a_).weight()) == wick::test::values(net->child(net->a_).weight()));
  copy->forward(x).sum().backward();
  CHECK(copy->child(copy->a_).weight().grad().defined());
  CHECK_FALSE(net->child(net->a_).weight().grad().defined());
}

TEST_CASE("clone: slots read the copy's own tables (ClonePreservesExternalReferences)") {
  auto lin = std::make_shared<LinearImpl>(4, 4);
  {
    NoGradGuard no_grad;
    Tensor w = lin->weight();
    w.add_(1.0);
  }
  auto copy = lin->clone();
  CHECK_FALSE(copy->weight().is_same(lin->weight()));
  CHECK(copy->weight().is_same(copy->parameter_table()[0].value));
  CHECK_ALLCLOSE(copy->weight(), lin->weight(), 0, 0);
}

TEST_CASE("clone(device): the copy lives on the device, the original stays") {
  auto net = std::make_shared<TiedNet>();
  auto copy = net->clone(cpu(1));
  for (const Tensor& p : copy->parameters()) CHECK(p.device() == cpu(1));
  for (const Tensor& b : copy->buffers()) CHECK(b.device() == cpu(1));
  for (const Tensor& p : net->parameters()) CHECK(p.device() == cpu(0));
  CHECK(copy->param(copy->tied_).is_same(copy->child(copy->a_).weight()));
  Tensor x = wick::randn({4, 3});
  CHECK_ALLCLOSE(copy->forward(x.to(cpu(1))).to(cpu(0)), net->forward(x), 0, 0);
}
