// For every nn module of the library: shallow-copy it, rewire the copy's tables to fresh tensors,
// and check that the copy computes with the new tensors and the original with the old ones
// (the property replicate relies on; docs/modules.md, "Why tables and slots: replication").
#include <catch2/catch.hpp>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "wick/autograd/grad_mode.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;

namespace {
const Device kOther("cpu:1");

// Checks one module on one input:
//  1. a copy rewired to the same values on cpu:1 computes the original's output on cpu:1 (strict
//     device checks make any read of an old cpu:0 tensor an error);
//  2. a copy rewired to shifted values computes a different output, and the original's output
//     is unchanged afterwards (it still reads its own tensors).
void check_module(const std::shared_ptr<Module>& m, const std::vector<Value>& args, bool train = false) {
  INFO(m->name());
  m->train(train);
  auto on_cpu1 = [](const Value& v) { return v.map_tensors([](const Tensor& t) { return t.to(kOther); }); };
  std::vector<Value> args1;
  for (const auto& a : args) args1.push_back(on_cpu1(a));

  const StateDict before = [&] {
    StateDict s;
    for (const auto& [k, v] : m->state_dict()) s.insert(k, v.clone());
    return s;
  }();
  wick::manual_seed(11);
  const Value ref = m->forward_value(args);
  // Restore buffers a training-mode forward may have moved.
  m->load_state_dict(before);

  // 1. Same values on another device.
  auto moved = test_util::rewire_copy(m, [](const Tensor& t) { return test_util::moved(t, kOther); });
  REQUIRE(typeid(*moved) == typeid(*m));
  for (const auto& t : moved->parameters()) CHECK(t.device() == kOther);
  for (const auto& t : moved->buffers()) CHECK(t.device() == kOther);
  for (const auto& t : m->parameters()) CHECK(t.device() == kCPU);
  wick::manual_seed(11);
  const Value out1 = moved->forward_value(args1);
  out1.for_each_tensor([](const Tensor& t) { CHECK(t.device() == kOther); });
  std::vector<Tensor> r0, r1;
  ref.for_each_tensor([&](const Tensor& t) { r0.push_back(t); });
  out1.for_each_tensor([&](const Tensor& t) { r1.push_back(t); });
  REQUIRE(r0.size() == r1.size());
  for (size_t i = 0; i < r0.size(); ++i) CHECK_ALLCLOSE(r1[i], r0[i], 0, 0);  // CPU devices: the same kernels

  // 2. Different values: floating tensors shifted (integer buffers kept).
  auto shifted = test_util::rewire_copy(m, [](const Tensor& t) {
    NoGradGuard g;
    Tensor n = t.is_floating_point() ? (t.detach() + 0.25) : t.detach().clone();
    if (t.requires_grad()) n.requires_grad_(true);
    return n;
  });
  wick::manual_seed(11);
  const Value out2 = shifted->forward_value(args);
  if (!m->parameters().empty() || !m->buffers().empty()) {
    std::vector<Tensor> r2;
    out2.for_each_tensor([&](const Tensor& t) { r2.push_back(t); });
    bool differs = false;
    for (size_t i = 0; i < r0.size(); ++i) differs = differs || !wick::test::allclose(r2[i], r0[i], 1e-9, 1e-9).ok;
    CHECK(differs);
  }
  // The original's state is what it was: the copies never wrote into it...
  for (const auto& [k, v] : m->state_dict()) {
    INFO(k);
    CHECK_ALLCLOSE(v, before.at(k), 0, 0);
  }
  // ...and it still computes with its own tensors.
  wick::manual_seed(11);
  const Value again = m->forward_value(args);
  std::vector<Tensor> r3;
  again.for_each_tensor([&](const Tensor& t) { r3.push_back(t); });
  for (size_t i = 0; i < r0.size(); ++i) CHECK_ALLCLOSE(r3[i], r0[i], 0, 0);
}

Value img(int64_t n, int64_t c, int64_t h, int64_t w) { return Value(wick::randn({n, c, h, w})); }

template <class M, class... A>
std::shared_ptr<Module> mk(A&&... a) {
  return std::make_shared<M>(std::forward<A>(a)...);
}

// A user module with a tied weight and a child registered twice.
class Tied : public Cloneable<Tied> {
 public:
  Tied() {
    auto enc = std::make_shared<LinearImpl>(4, 4);
    a_ = register_module("a", enc);
    b_ = register_module("b", enc);
    head_ = register_module("head", std::make_shared<LinearImpl>(LinearOptions(4, 4).bias(false)));
    child(head_).set_parameter_entry(0, child(a_).weight());
    gain_ = register_parameter("gain", wick::ones({4}));
  }
  Tensor forward(const Tensor& x) {
    return child(head_).forward(child(b_).forward(child(a_).forward(x))) * param(gain_);
  }

 private:
  ChildSlot<LinearImpl> a_, b_, head_;
  ParamSlot gain_;
};
}  // namespace

TEST_CASE("every layer computes with its rewired tables after shallow_copy", "[nn][replicate]") {
  wick::manual_seed(5);
  check_module(mk<LinearImpl>(5, 3), {Value(wick::randn({4, 5}))});
  check_module(mk<LinearImpl>(LinearOptions(5, 3).bias(false)), {Value(wick::randn({4, 5}))});
  check_module(mk<Conv2dImpl>(Conv2dOptions(2, 3, 3).padding(1)), {img(2, 2, 5, 5)});
  check_module(mk<Conv2dImpl>(Conv2dOptions(2, 3, Int2(2, 3)).stride(2).bias(false)), {img(1, 2, 6, 6)});
  check_module(mk<Conv2dImpl>(Conv2dOptions(4, 6, 3).padding(1).groups(2)), {img(2, 4, 5, 5)});
  check_module(mk<Conv2dImpl>(Conv2dOptions(2, 3, Int2(2, 4)).padding(kSame)), {img(1, 2, 5, 5)});
  check_module(mk<MaxPool2dImpl>(2), {img(2, 2, 4, 4)});
  check_module(mk<AvgPool2dImpl>(2), {img(2, 2, 4, 4)});
  check_module(mk<AdaptiveAvgPool2dImpl>(Int2(2, 3)), {img(2, 2, 5, 7)});
  check_module(mk<BatchNorm1dImpl>(3), {Value(wick::randn({6, 3}))});
  check_module(mk<BatchNorm1dImpl>(3), {Value(wick::randn({6, 3}))}, /*train=*/true);
  check_module(mk<BatchNorm2dImpl>(2), {img(3, 2, 2, 2)});
  check_module(mk<BatchNorm2dImpl>(2), {img(3, 2, 2, 2)}, /*train=*/true);
  check_module(mk<LayerNormImpl>(std::vector<int64_t>{4}), {Value(wick::randn({3, 4}))});
  check_module(mk<EmbeddingImpl>(7, 3), {Value(wick::tensor(std::vector<int64_t>{1, 6, 0}, {3}, kInt64))});
  check_module(mk<DropoutImpl>(0.5), {Value(wick::randn({8}))}, /*train=*/true);
  check_module(mk<DropoutImpl>(0.5), {Value(wick::randn({8}))});
  check_module(mk<FlattenImpl>(), {img(2, 3, 2, 2)});
  check_module(mk<ReLUImpl>(), {Value(wick::randn({5}))});
  check_module(mk<GELUImpl>(), {Value(wick::randn({5}))});
  check_module(mk<GELUImpl>(GELUOptions().approximate("tanh")), {Value(wick::randn({5}))});
  check_module(mk<SiLUImpl>(), {Value(wick::randn({5}))});
  check_module(mk<TanhImpl>(), {Value(wick::randn({5}))});
  const Value x = Value(wick::randn({3, 2, 4})), none;
  check_module(mk<MultiheadAttentionImpl>(MultiheadAttentionOptions(4, 2).dropout(0.5)),
               {x, x, x, none, Value(true), none, Value(true), Value(false)}, /*train=*/true);
  check_module(mk<MultiheadAttentionImpl>(MultiheadAttentionOptions(4, 2).bias(false).batch_first(true)),
               {x, x, x, none, Value(true), none, Value(false), Value(true)});
  check_module(mk<TransformerEncoderLayerImpl>(TransformerEncoderLayerOptions(4, 2).dim_feedforward(6)),
               {x, none, none, Value(true)}, /*train=*/true);
  check_module(
      mk<TransformerEncoderLayerImpl>(TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).norm_first(true)),
      {x, none, none, Value(false)});
  const Value memory = Value(wick::randn({5, 2, 4}));
  check_module(mk<TransformerDecoderLayerImpl>(TransformerDecoderLayerOptions(4, 2).dim_feedforward(6)),
               {x, memory, none, none, none, none, Value(true), Value(false)}, /*train=*/true);
  check_module(
      mk<TransformerDecoderImpl>(
          TransformerDecoderOptions(TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).norm_first(true), 2)
              .norm(std::make_shared<LayerNormImpl>(LayerNormOptions({4})))),
      {x, memory, none, none, none, none, Value(false), Value(false)});
  check_module(mk<TransformerImpl>(TransformerOptions(4, 2, 1, 1).dim_feedforward(6)),
               {memory, x, none, none, none, none, none, none, Value(false), Value(true), Value(false)},
               /*train=*/true);
  const Value seq = Value(wick::randn({4, 2, 3}));
  check_module(mk<LSTMImpl>(LSTMOptions(3, 4).num_layers(2).dropout(0.5)), {seq, none}, /*train=*/true);
  check_module(mk<LSTMImpl>(LSTMOptions(3, 4).bias(false)),
               {seq, Value::tuple({Value(wick::randn({1, 2, 4})), Value(wick::randn({1, 2, 4}))})});
  check_module(mk<GRUImpl>(GRUOptions(3, 4).num_layers(2).batch_first(true)), {seq, none});
  check_module(mk<GRUImpl>(GRUOptions(3, 4)), {seq, Value(wick::randn({1, 2, 4}))});
  check_module(mk<LSTMImpl>(LSTMOptions(3, 4).num_layers(2).bidirectional(true)), {seq, none});
  check_module(mk<RNNImpl>(RNNOptions(3, 4).num_layers(2).nonlinearity(kReLU).dropout(0.5)), {seq, none},
               /*train=*/true);
  check_module(mk<RNNImpl>(RNNOptions(3, 4).bidirectional(true)), {seq, Value(wick::randn({2, 2, 4}))});
  const Value step = Value(wick::randn({2, 3})), state = Value(wick::randn({2, 4}));
  check_module(mk<RNNCellImpl>(RNNCellOptions(3, 4).nonlinearity(kReLU)), {step, state});
  check_module(mk<LSTMCellImpl>(3, 4), {step, Value::tuple({state, Value(wick::randn({2, 4}))})});
  check_module(mk<LSTMCellImpl>(LSTMCellOptions(3, 4).bias(false)), {step, none});
  check_module(mk<GRUCellImpl>(3, 4), {step, state});
  check_module(mk<SigmoidImpl>(), {Value(wick::randn({5}))});
  check_module(mk<SoftmaxImpl>(1), {Value(wick::randn({2, 5}))});
  check_module(mk<IdentityImpl>(), {Value(wick::randn({5}))});
  check_module(Sequential(mk<Conv2dImpl>(Conv2dOptions(1, 4, 3).padding(1)), mk<BatchNorm2dImpl>(4), mk<ReLUImpl>(),
                          mk<MaxPool2dImpl>(2), mk<FlattenImpl>(), mk<DropoutImpl>(0.3), mk<LinearImpl>(16, 3))
                   .ptr(),
               {img(2, 1, 4, 4)}, /*train=*/true);
  check_module(std::make_shared<Tied>(), {Value(wick::randn({2, 4}))});
}

TEST_CASE("ModuleList and ModuleDict copies hold rewired children", "[nn][replicate]") {
  auto list = ModuleList(mk<LinearImpl>(2, 2), mk<ReLUImpl>()).ptr();
  list->push_back(nullptr);
  auto copy = test_util::rewire_copy(list, [](const Tensor& t) { return test_util::moved(t, kOther); });
  auto& l = dynamic_cast<ModuleListImpl&>(*copy);
  CHECK(l.size() == 3);
  CHECK(l[0] != (*list)[0]);
  CHECK(l[2] == nullptr);
  CHECK(l.at<LinearImpl>(0)->weight().device() == kOther);
  CHECK(list->at<LinearImpl>(0)->weight().device() == kCPU);
  Tensor x = wick::randn({3, 2});
  CHECK_ALLCLOSE(l.at<LinearImpl>(0)->forward(x.to(kOther)), list->at<LinearImpl>(0)->forward(x), 0, 0);

  auto dict = std::make_shared<ModuleDictImpl>(std::vector<std::pair<std::string, std::shared_ptr<Module>>>{
      {"enc", mk<LinearImpl>(2, 2)}, {"act", mk<TanhImpl>()}});
  auto dcopy = test_util::rewire_copy(dict, [](const Tensor& t) { return test_util::moved(t, kOther); });
  auto& d = dynamic_cast<ModuleDictImpl&>(*dcopy);
  CHECK(d.keys() == std::vector<std::string>{"enc", "act"});
  CHECK(d.at<LinearImpl>("enc")->weight().device() == kOther);
  CHECK(dict->at<LinearImpl>("enc")->weight().device() == kCPU);
  CHECK(d["act"] != (*dict)["act"]);
}

TEST_CASE("gradients through a rewired copy reach the new tensors only", "[nn][replicate]") {
  auto m = Sequential(mk<LinearImpl>(3, 2)).ptr();
  auto copy = test_util::rewire_copy(m, [](const Tensor& t) { return test_util::moved(t, kOther); });
  Tensor x = wick::randn({4, 3}).to(kOther);
  wick::sum(copy->forward_value({Value(x)}).tensor()).backward();
  for (const auto& p : copy->parameters()) CHECK(p.grad().defined());
  for (const auto& p : m->parameters()) CHECK_FALSE(p.grad().defined());
}
