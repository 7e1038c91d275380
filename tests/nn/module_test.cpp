// Module: tables, slots, registration errors, recursive views with PyTorch's deduplication,
// tree operations, printing, Value and forward_value.
#include <catch2/catch.hpp>
#include <sstream>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;

namespace {

// A module with all kinds of entries, including None ones and a tied weight.
class Block : public Cloneable<Block> {
 public:
  Block() {
    fc_ = register_module("fc", std::make_shared<LinearImpl>(3, 3));
    scale_ = register_parameter("scale", wick::ones({3}));
    none_param_ = register_parameter("none_param", Tensor());
    stat_ = register_buffer("stat", wick::zeros({3}));
    scratch_ = register_buffer("scratch", wick::zeros({1}), /*persistent=*/false);
    none_child_ = register_module("none_child", std::shared_ptr<LinearImpl>());
  }
  Tensor forward(const Tensor& x) { return child(fc_).forward(x) * param(scale_) + buffer(stat_); }
  ChildSlot<LinearImpl> fc_;
  ChildSlot<LinearImpl> none_child_;
  ParamSlot scale_, none_param_;
  BufferSlot stat_, scratch_;
};

// Two paths through one shared child, and a weight tied between two Linears.
class Net : public Cloneable<Net> {
 public:
  Net() {
    auto shared = std::make_shared<Block>();
    a_ = register_module("a", shared);
    b_ = register_module("b", shared);  // the same child twice
    l1_ = register_module("l1", std::make_shared<LinearImpl>(LinearOptions(3, 3).bias(false)));
    l2_ = register_module("l2", std::make_shared<LinearImpl>(LinearOptions(3, 3).bias(false)));
    l2_ptr()->set_parameter_entry(0, child(l1_).weight());  // tie l2.weight to l1.weight
  }
  std::shared_ptr<LinearImpl> l2_ptr() { return child_ptr(l2_); }
  Tensor forward(const Tensor& x) {
    return child(l2_).forward(child(l1_).forward(child(b_).forward(child(a_).forward(x))));
  }
  ChildSlot<Block> a_, b_;
  ChildSlot<LinearImpl> l1_, l2_;
};

std::vector<std::string> keys_of(const OrderedDict<Tensor>& d) { return d.keys(); }

}  // namespace

TEST_CASE("module tables keep registration order and None entries", "[nn][module]") {
  auto b = std::make_shared<Block>();
  REQUIRE(b->parameter_table().size() == 2);
  CHECK(b->parameter_table()[0].name == "scale");
  CHECK(b->parameter_table()[1].name == "none_param");
  CHECK_FALSE(b->parameter_table()[1].value.defined());
  REQUIRE(b->buffer_table().size() == 2);
  CHECK(b->buffer_table()[0].persistent);
  CHECK_FALSE(b->buffer_table()[1].persistent);
  REQUIRE(b->child_table().size() == 2);
  CHECK(b->child_table()[1].value == nullptr);
  CHECK(b->has(b->scale_));
  CHECK_FALSE(b->has(b->none_param_));
  CHECK_FALSE(b->has(b->none_child_));
  CHECK(b->param(b->scale_).requires_grad());
  CHECK_FALSE(b->buffer(b->stat_).requires_grad());
  CHECK_THROWS_WITH(b->child(b->none_child_), Catch::Contains("none_child") && Catch::Contains("None"));
}

TEST_CASE("registration rejects dotted, empty, duplicate names and non-leaf parameters", "[nn][module]") {
  auto b = std::make_shared<Block>();
  CHECK_THROWS_WITH(b->register_parameter("a.b", wick::ones({1})), Catch::Contains("contains '.'"));
  CHECK_THROWS_WITH(b->register_buffer("", wick::ones({1})), Catch::Contains("must not be empty"));
  CHECK_THROWS_WITH(b->register_buffer("scale", wick::ones({1})), Catch::Contains("already used"));
  CHECK_THROWS_WITH(b->register_module("stat", std::make_shared<ReLUImpl>()), Catch::Contains("already used"));
  Tensor leaf = wick::ones({2}, TensorOptions().requires_grad());
  CHECK_THROWS_WITH(b->register_parameter("nonleaf", leaf * 2.0), Catch::Contains("not a leaf"));
  CHECK_THROWS_WITH(b->register_parameter("idx", wick::zeros({2}, kInt64)), Catch::Contains("cannot require grad"));
  CHECK_NOTHROW(b->register_parameter("idx", wick::zeros({2}, kInt64), false));
  // A cycle.
  auto s = std::make_shared<SequentialImpl>();
  s->push_back(std::make_shared<ReLUImpl>());
  CHECK_THROWS_WITH(s->push_back(s), Catch::Contains("own child"));
  auto outer = std::make_shared<SequentialImpl>(s);
  CHECK_THROWS_WITH(s->push_back(outer), Catch::Contains("cycle"));
}

TEST_CASE("slots are checked against the module's tables", "[nn][module]") {
  auto l = std::make_shared<LinearImpl>(2, 2);
  CHECK_THROWS_WITH(l->param(ParamSlot{5}), Catch::Contains("slot 5 does not exist"));
  CHECK_THROWS_WITH(l->buffer(BufferSlot{0}), Catch::Contains("buffer slot 0"));
  CHECK_THROWS(l->param(ParamSlot{}));
}

TEST_CASE("named_* are recursive, dotted, pre-order and deduplicated as PyTorch's", "[nn][module]") {
  auto net = std::make_shared<Net>();
  // The shared Block appears once (under "a"), the tied weight once (under "l1.weight").
  CHECK(keys_of(net->named_parameters()) ==
        std::vector<std::string>{"a.scale", "a.fc.weight", "a.fc.bias", "l1.weight"});
  CHECK(keys_of(net->named_buffers()) == std::vector<std::string>{"a.stat", "a.scratch"});
  CHECK(net->named_modules().keys() == std::vector<std::string>{"", "a", "a.fc", "l1", "l2"});
  CHECK(net->named_modules("net", false).keys() == std::vector<std::string>{"net.a", "net.a.fc", "net.l1", "net.l2"});
  CHECK(net->named_children().keys() == std::vector<std::string>{"a", "l1", "l2"});
  CHECK(net->parameters().size() == 4);
  CHECK(net->modules().size() == 5);
  CHECK(net->children().size() == 3);
  CHECK(net->named_parameters(false).empty());
  CHECK(keys_of(net->child(net->a_).named_parameters(false)) == std::vector<std::string>{"scale"});
  CHECK(net->get_parameter("b.fc.bias").is_same(net->child(net->a_).child(net->child(net->a_).fc_).bias()));
  CHECK(net->get_submodule("a.fc")->name() == "Linear");
  CHECK_THROWS_WITH(net->get_submodule("a.nope"), Catch::Contains("no child named 'nope'"));
  CHECK_THROWS_WITH(net->get_parameter("a.fc.nope"), Catch::Contains("no parameter named 'nope'"));
  CHECK_THROWS_WITH(net->get_submodule("a.none_child.x"), Catch::Contains("is None"));
  CHECK(net->get_buffer("a.stat").is_same(net->child(net->a_).buffer(net->child(net->a_).stat_)));
}

TEST_CASE("state_dict is not deduplicated and skips None and non-persistent entries", "[nn][module]") {
  auto net = std::make_shared<Net>();
  const auto sd = net->state_dict();
  // Own parameters, own buffers, then children (PyTorch's order).
  CHECK(sd.keys() == std::vector<std::string>{"a.scale", "a.stat", "a.fc.weight", "a.fc.bias", "b.scale", "b.stat",
                                              "b.fc.weight", "b.fc.bias", "l1.weight", "l2.weight"});
  CHECK_FALSE(sd.at("a.scale").requires_grad());
  CHECK(sd.at("a.scale").data_ptr() == net->get_parameter("a.scale").data_ptr());
}

TEST_CASE("structure version changes with registration and entry rewiring", "[nn][module]") {
  auto net = std::make_shared<Net>();
  const uint64_t fp = net->structure_fingerprint();
  CHECK(net->structure_fingerprint() == fp);
  auto& block = net->child(net->a_);
  const uint64_t v = block.structure_version();
  block.register_buffer("extra", wick::zeros({1}));
  CHECK(block.structure_version() != v);
  CHECK(net->structure_fingerprint() != fp);
  const uint64_t fp2 = net->structure_fingerprint();
  net->l2_ptr()->set_parameter_entry(0, wick::zeros({3, 3}));
  CHECK(net->structure_fingerprint() != fp2);
  // A copy has the same structure as its original at copy time.
  auto copy = net->shallow_copy();
  CHECK(copy->structure_version() == net->structure_version());
}

TEST_CASE("shallow_copy shares tables, rewiring the copy leaves the original alone", "[nn][module]") {
  auto net = std::make_shared<Net>();
  auto copy = std::dynamic_pointer_cast<Net>(net->shallow_copy());
  REQUIRE(copy);
  CHECK(copy.get() != net.get());
  CHECK(copy->child_ptr(copy->a_) == net->child_ptr(net->a_));
  CHECK_FALSE(copy->is_replica());
  auto rep = test_util::rewire_copy(net, [](const Tensor& t) { return test_util::moved(t, Device("cpu:1")); });
  CHECK(rep->is_replica());
  CHECK_FALSE(net->is_replica());
  // The shared child maps to one copy; the tied weight to one tensor.
  auto r = std::dynamic_pointer_cast<Net>(rep);
  CHECK(r->child_ptr(r->a_) == r->child_ptr(r->b_));
  CHECK(r->child_ptr(r->a_) != net->child_ptr(net->a_));
  CHECK(r->child(r->l1_).weight().is_same(r->child(r->l2_).weight()));
  for (const auto& p : rep->parameters()) CHECK(p.device() == Device("cpu:1"));
  CHECK(rep->parameters().size() == net->parameters().size());
  Tensor x = wick::randn({2, 3});
  Tensor y0 = net->forward(x);
  Tensor y1 = r->forward(x.to(Device("cpu:1")));
  CHECK(y1.device() == Device("cpu:1"));
  CHECK_ALLCLOSE(y1, y0, 0, 0);
  CHECK_THROWS_WITH(rep->zero_grad(), Catch::Contains("replica"));
  // Rewiring a child entry with a module of another type is refused.
  CHECK_THROWS_WITH(r->set_child_entry(2, std::make_shared<ReLUImpl>()), Catch::Contains("same type"));
}

namespace {
class Derived : public LinearImpl {
 public:
  Derived() : LinearImpl(2, 2) {}
};
}  // namespace

TEST_CASE("shallow_copy refuses a subclass of a module that is not Cloneable of itself", "[nn][module]") {
  auto d = std::make_shared<Derived>();
  CHECK_THROWS_WITH(d->shallow_copy(), Catch::Contains("Derive") && Catch::Contains("Cloneable"));
}

TEST_CASE("train/eval, apply, zero_grad", "[nn][module]") {
  auto net = std::make_shared<Net>();
  CHECK(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) CHECK_FALSE(m->is_training());
  net->train();
  for (const auto& m : net->modules()) CHECK(m->is_training());
  std::vector<std::string> order;
  net->apply([&](Module& m) { order.push_back(m.name()); });
  // Children first, then self; children() is deduplicated, so the shared Block is visited once.
  CHECK(order == std::vector<std::string>{"Linear", "Block", "Linear", "Linear", "Net"});

  Tensor x = wick::randn({2, 3});
  wick::sum(net->forward(x)).backward();
  for (const auto& p : net->parameters()) CHECK(p.grad().defined());
  net->zero_grad(false);
  for (const auto& p : net->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(wick::test::values(p.grad()) == std::vector<double>(static_cast<size_t>(p.numel()), 0.0));
  }
  net->zero_grad();
  for (const auto& p : net->parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("to(device) and to(dtype) keep the tensors, ties and requires_grad", "[nn][module]") {
  auto net = std::make_shared<Net>();
  auto& bn_owner = *net;
  Tensor x = wick::randn({2, 3});
  Tensor y0 = net->forward(x);
  wick::sum(y0).backward();
  const uint64_t fp = net->structure_fingerprint();
  const auto before = net->parameters();
  net->to(Device("cpu:1"));
  CHECK(net->structure_fingerprint() == fp);  // the same tensors: no structure change
  REQUIRE(net->parameters().size() == before.size());
  for (size_t i = 0; i < before.size(); ++i) CHECK(net->parameters()[i].is_same(before[i]));
  for (const auto& p : net->parameters()) {
    CHECK(p.device() == Device("cpu:1"));
    CHECK(p.requires_grad());
    CHECK(p.is_leaf());
    REQUIRE(p.grad().defined());
    CHECK(p.grad().device() == Device("cpu:1"));
  }
  CHECK(net->child(net->l1_).weight().is_same(net->child(net->l2_).weight()));
  CHECK_ALLCLOSE(net->forward(x.to(Device("cpu:1"))), y0, 0, 0);
  bn_owner.to(kFloat64);
  for (const auto& p : net->parameters()) CHECK(p.dtype() == kFloat64);
  auto bn = std::make_shared<BatchNorm1dImpl>(3);
  bn->to(kFloat64);
  CHECK(bn->running_mean().dtype() == kFloat64);
  CHECK(bn->num_batches_tracked().dtype() == kInt64);
  CHECK_THROWS_WITH(bn->to(kInt64), Catch::Contains("floating-point"));
}

TEST_CASE("printing follows PyTorch's repr", "[nn][module]") {
  auto seq = Sequential(std::make_shared<Conv2dImpl>(Conv2dOptions(1, 32, 3).padding(1)),
                        std::make_shared<BatchNorm2dImpl>(32), std::make_shared<ReLUImpl>(),
                        std::make_shared<MaxPool2dImpl>(2), std::make_shared<FlattenImpl>(),
                        std::make_shared<DropoutImpl>(0.25), std::make_shared<LinearImpl>(784, 10))
                 .ptr();
  const std::string expected =
      "Sequential(\n"
      "  (0): Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
      "  (1): BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
      "  (2): ReLU()\n"
      "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
      "  (4): Flatten(start_dim=1, end_dim=-1)\n"
      "  (5): Dropout(p=0.25, inplace=False)\n"
      "  (6): Linear(in_features=784, out_features=10, bias=True)\n"
      ")";
  CHECK(seq->to_string() == expected);
  std::ostringstream os;
  os << *seq;
  CHECK(os.str() == expected);
  auto nested = std::make_shared<Block>();
  CHECK(nested->to_string() ==
        "Block(\n  (fc): Linear(in_features=3, out_features=3, bias=True)\n  (none_child): None\n)");
  auto inner = std::make_shared<SequentialImpl>(Sequential(Tanh()).ptr());
  CHECK(inner->to_string() == "Sequential(\n  (0): Sequential(\n    (0): Tanh()\n  )\n)");
  CHECK(LayerNorm(LayerNormOptions({6}))->to_string() == "LayerNorm((6,), eps=1e-05, elementwise_affine=True)");
  CHECK(Embedding(EmbeddingOptions(10, 5).padding_idx(0))->to_string() == "Embedding(10, 5, padding_idx=0)");
  CHECK(BatchNorm1d(BatchNorm1dOptions(4).eps(1e-3).momentum(std::nullopt))->to_string() ==
        "BatchNorm1d(4, eps=0.001, momentum=None, affine=True, track_running_stats=True)");
  CHECK(GELU()->to_string() == "GELU(approximate='none')");
  CHECK(Softmax(1)->to_string() == "Softmax(dim=1)");
  CHECK(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({1, 1}))->to_string() == "AdaptiveAvgPool2d(output_size=1)");
  CHECK(AvgPool2d(2)->to_string() == "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  CHECK(Linear(LinearOptions(3, 2).bias(false))->to_string() == "Linear(in_features=3, out_features=2, bias=False)");
}

TEST_CASE("Value holds nested data and describes it", "[nn][value]") {
  Value v = Value::tuple({Value(wick::ones({2, 3})), Value::list({Value(1), Value(2.5), Value("s")}), Value()});
  CHECK(v.is_tuple());
  CHECK(v.items().size() == 3);
  CHECK(v.items()[0].describe() == "Tensor[2, 3] float32 cpu:0");
  CHECK(v.items()[1].items()[0].to_int() == 1);
  CHECK(v.items()[1].items()[0].to_double() == 1.0);
  CHECK(v.items()[1].items()[1].to_double() == 2.5);
  CHECK(v.items()[1].items()[2].str() == "s");
  CHECK(v.items()[2].is_none());
  CHECK_THROWS_WITH(v.items()[1].tensor(), Catch::Contains("expected a Tensor but got List(3)"));
  int count = 0;
  v.for_each_tensor([&](const Tensor&) { ++count; });
  CHECK(count == 1);
  Value m = v.map_tensors([](const Tensor& t) { return t * 2.0; });
  CHECK(m.is_tuple());
  CHECK(wick::test::values(m.items()[0].tensor())[0] == 2.0);
  CHECK(m.items()[1].items()[2].str() == "s");
  Value d = Value::dict({"x", "y"}, {Value(1), Value(wick::zeros({1}))});
  CHECK(d.dict().keys[1] == "y");
  CHECK_THROWS_WITH(Value::dict({"x", "x"}, {Value(1), Value(2)}), Catch::Contains("twice"));
  CHECK(Value(std::vector<Tensor>{wick::ones({1}), wick::ones({2})}).tensors().size() == 2);
}

namespace {
class TwoIn : public Cloneable<TwoIn> {
 public:
  std::tuple<Tensor, Tensor> forward(const Tensor& a, const Tensor& b, double s) { return {a * s, a + b}; }
};
class Overloaded : public Cloneable<Overloaded> {
 public:
  Tensor forward(const Tensor& a) { return a; }
  Tensor forward(const Tensor& a, const Tensor& b) { return a + b; }
};
class NoForward : public Cloneable<NoForward> {};
}  // namespace

TEST_CASE("forward_value adapts typed forward signatures", "[nn][value]") {
  TwoIn m;
  Value r = m.forward_value({Value(wick::ones({2})), Value(wick::ones({2})), Value(3.0)});
  REQUIRE(r.is_tuple());
  CHECK(wick::test::values(r.items()[0].tensor()) == std::vector<double>{3, 3});
  CHECK(wick::test::values(r.items()[1].tensor()) == std::vector<double>{2, 2});
  // An Int converts to a double parameter.
  CHECK_NOTHROW(m.forward_value({Value(wick::ones({2})), Value(wick::ones({2})), Value(2)}));
  CHECK_THROWS_WITH(m.forward_value({Value(wick::ones({2}))}),
                    Catch::Contains("TwoIn.forward_value: forward takes 3 arguments, but 1 was given"));
  CHECK_THROWS_WITH(m.forward_value({Value(1), Value(wick::ones({2})), Value(2.0)}), Catch::Contains("argument 0"));
  Overloaded o;
  CHECK_THROWS_WITH(o.forward_value({Value(wick::ones({1}))}), Catch::Contains("Override"));
  NoForward n;
  CHECK_THROWS_WITH(n.forward_value({}), Catch::Contains("NoForward"));
  Linear l(2, 3);
  CHECK(l->forward_tensor(wick::ones({4, 2})).sizes() == IntArrayRef({4, 3}));
  CHECK_THROWS_WITH(TwoIn().forward_tensor(wick::ones({1})), Catch::Contains("takes 3 arguments"));
}

TEST_CASE("containers", "[nn][module]") {
  auto seq =
      Sequential(std::make_shared<LinearImpl>(4, 3), std::make_shared<ReLUImpl>(), std::make_shared<LinearImpl>(3, 2))
          .ptr();
  CHECK(seq->size() == 3);
  CHECK(seq->at<LinearImpl>(-1)->out_features() == 2);
  CHECK_THROWS_WITH(seq->at<LinearImpl>(1), Catch::Contains("not the requested type"));
  CHECK_THROWS_WITH((*seq)[3], Catch::Contains("out of range"));
  Tensor x = wick::randn({5, 4});
  Tensor y = seq->forward(x);
  CHECK(y.sizes() == IntArrayRef({5, 2}));
  CHECK_ALLCLOSE(seq->forward_value({Value(x)}).tensor(), y, 0, 0);
  CHECK(keys_of(seq->named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  auto named = std::make_shared<SequentialImpl>(std::vector<std::pair<std::string, std::shared_ptr<Module>>>{
      {"fc", std::make_shared<LinearImpl>(2, 2)}, {"act", std::make_shared<TanhImpl>()}});
  CHECK(named->named_children().keys() == std::vector<std::string>{"fc", "act"});

  ModuleList list{std::make_shared<LinearImpl>(1, 1), std::make_shared<ReLUImpl>()};
  list->push_back(nullptr);
  CHECK(list->size() == 3);
  CHECK(list->items()[2] == nullptr);
  CHECK(list->modules().size() == 3);  // self + two (None skipped)
  CHECK_THROWS_WITH(list->forward_value({}), Catch::Contains("ModuleList"));

  ModuleDict dict({{"enc", std::make_shared<LinearImpl>(2, 2)}});
  dict->insert("act", std::make_shared<ReLUImpl>());
  CHECK(dict->keys() == std::vector<std::string>{"enc", "act"});
  CHECK(dict->contains("act"));
  CHECK(dict->at<LinearImpl>("enc")->in_features() == 2);
  CHECK_THROWS_WITH(dict["dec"], Catch::Contains("no key 'dec'") && Catch::Contains("enc, act"));
  CHECK_THROWS_WITH(dict->insert("act", std::make_shared<ReLUImpl>()), Catch::Contains("already used"));
}
