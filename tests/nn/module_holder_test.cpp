// Module holders (WICK_MODULE, LibTorch's TORCH_MODULE), operator() on modules, register_module
// with holders, and Sequential built from holders.
#include <catch2/catch.hpp>
#include <sstream>

#include "nn_test_util.h"
#include "support/allclose.h"
#include "support/temp_dir.h"
#include "wick/nn/checkpoint.h"
#include "wick/nn/nn.h"

using namespace wick;
using namespace wick::nn;

namespace {

TensorOptions f64() { return TensorOptions(kFloat64); }
// Equal values and shapes (bit for bit: the same computation on the same data).
bool same_values(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && wick::test::values(a) == wick::test::values(b);
}

// A custom module in LibTorch's style (the README's and docs/modules.md's example).
struct NetImpl : Module {
  NetImpl() : fc1(register_module("fc1", Linear(4, 8, f64()))), fc2(register_module("fc2", Linear(8, 3, f64()))) {}
  Tensor forward(Tensor x) { return fc2(relu(fc1(x))); }
  Linear fc1, fc2;
};
WICK_MODULE(Net);

// The same, with the members assigned in the constructor body (LibTorch's other common form).
struct BodyNetImpl : Cloneable<BodyNetImpl> {
  BodyNetImpl() {
    fc = register_module("fc", Linear(3, 2, f64()));
    act = register_module("act", Tanh());
  }
  Tensor forward(const Tensor& x) { return act(fc(x)); }
  Linear fc{nullptr};
  Tanh act{nullptr};
};
WICK_MODULE(BodyNet);

}  // namespace

TEST_CASE("WICK_MODULE: the holder shares its module, constructs from arguments, shared_ptr or nullptr") {
  Linear a(3, 2);
  Linear b = a;  // shared ownership, as a shared_ptr
  CHECK(a.get() == b.get());
  CHECK(a.ptr().use_count() >= 2);
  CHECK(a->in_features() == 3);
  CHECK((*a).out_features() == 2);
  auto impl = std::make_shared<LinearImpl>(5, 1);
  Linear c(impl);
  CHECK(c.get() == impl.get());
  CHECK(c.ptr() == impl);
  std::shared_ptr<Module> as_module = c;  // a holder converts to a shared_ptr of a base
  CHECK(as_module.get() == impl.get());
  Linear empty{nullptr};
  CHECK(empty.is_empty());
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK_FALSE(a.is_empty());
  ReLU r;  // a module with a default constructor is constructed by the holder's
  CHECK_FALSE(r.is_empty());
  std::ostringstream os;
  os << a << " " << empty;
  CHECK(os.str() == "Linear(in_features=3, out_features=2, bias=True) (empty Linear)");
}

TEST_CASE("WICK_MODULE: using an empty holder raises StateError naming the module type") {
  Linear empty{nullptr};
  Tensor x = randn({2, 3});
  CHECK_THROWS_AS(empty(x), StateError);
  CHECK_THROWS_WITH(empty(x), Catch::Contains("Linear") && Catch::Contains("empty"));
  CHECK_THROWS_AS(empty->weight(), StateError);
  CHECK_THROWS_AS(*empty, StateError);
  CHECK_THROWS_WITH(empty.ptr(), Catch::Contains("Linear holder: ptr()"));
  Net net{nullptr};
  CHECK_THROWS_WITH(net->parameters(), Catch::Contains("Net holder"));
  // A holder bound to a None entry is empty too.
  struct WithNone : Cloneable<WithNone> {
    WithNone() : fc(register_module("fc", Linear(nullptr))) {}
    Linear fc;
  } m;
  CHECK(m.fc.is_empty());
  CHECK(m.named_children().size() == 0);
  CHECK_THROWS_AS(m.fc(x), StateError);
}

TEST_CASE("operator() on modules and holders equals forward") {
  manual_seed(3);
  Linear fc(4, 3, f64());
  Tensor x = randn({5, 4}, f64());
  CHECK(same_values(fc(x), fc->forward(x)));
  CHECK(same_values((*fc)(x), fc->forward(x)));
  Net net;
  Tensor y = net(x);
  CHECK(y.sizes() == std::vector<int64_t>{5, 3});
  // Hand-computed: fc2(relu(fc1(x))).
  Tensor h = relu(x.matmul(net->fc1->weight().t()) + net->fc1->bias());
  CHECK(same_values(y, h.matmul(net->fc2->weight().t()) + net->fc2->bias()));
  CHECK(same_values(y, net->forward(x)));
}

TEST_CASE("register_module with a holder: the returned holder is the registered child") {
  Net net;
  CHECK(net->name() == "Net");  // NetImpl prints as Net, as LibTorch
  CHECK(net->named_children().keys() == std::vector<std::string>{"fc1", "fc2"});
  CHECK(net->named_children()["fc1"].get() == net->fc1.get());
  CHECK(net->named_parameters().keys() == std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"});
  CHECK(net->fc1->weight().dtype() == kFloat64);
  // The member reads the table: replacing the entry changes what the member reaches.
  auto other = std::make_shared<LinearImpl>(4, 8, f64());
  net->set_child_entry(0, other);
  CHECK(net->fc1.get() == other.get());
  // A copy taken out of the module holds the child it held then (not the table).
  Linear taken = net->fc2;
  auto fresh = std::make_shared<LinearImpl>(8, 3, f64());
  net->set_child_entry(1, fresh);
  CHECK(net->fc2.get() == fresh.get());
  CHECK(taken.get() != fresh.get());
  CHECK_FALSE(taken.is_empty());

  BodyNet body;
  CHECK(body->named_children().keys() == std::vector<std::string>{"fc", "act"});
  CHECK(body->fc.get() == body->named_children()["fc"].get());
  Tensor x = randn({2, 3}, f64());
  CHECK(same_values(body(x), tanh(x.matmul(body->fc->weight().t()) + body->fc->bias())));
}

TEST_CASE("holders follow shallow copies and clones: a copy's members read the copy's rewired table") {
  manual_seed(5);
  Net net;
  Tensor x = randn({3, 4}, f64());
  // A replicate-like rewiring: copy every module, set every entry of the copies.
  auto copy = std::static_pointer_cast<NetImpl>(
      test_util::rewire_copy(net.ptr(), [](const Tensor& t) { return (t * 2.0).detach(); }));
  CHECK(copy->fc1.get() == copy->child_table()[0].value.get());
  CHECK(copy->fc1.get() != net->fc1.get());
  CHECK(same_values(copy->fc1->weight(), net->fc1->weight() * 2.0));
  CHECK(same_values(copy->forward(x), copy->forward(x)));
  CHECK_FALSE(same_values(copy->forward(x), net(x)));
  // The original is untouched.
  CHECK(net->fc1.get() == net->child_table()[0].value.get());
  // clone(): a deep copy whose members are the clone's children.
  auto deep = std::static_pointer_cast<NetImpl>(net->clone());
  CHECK(deep->fc2.get() == deep->child_table()[1].value.get());
  CHECK(deep->fc2.get() != net->fc2.get());
  CHECK(same_values(deep->forward(x), net(x)));
  // assign_from (replicate's reuse of a replica) rebinds to the assigned module.
  BodyNet a, b;
  CHECK(a->assign_from(*b));
  CHECK(a->fc.get() == a->child_table()[0].value.get());
  CHECK(a->fc.get() == b->fc.get());  // the tables were copied, so the same child
}

TEST_CASE("Sequential from holders: construction, push_back, indexing, iteration") {
  manual_seed(1);
  Sequential seq(Linear(3, 4, f64()), ReLU(), Linear(4, 2, f64()));
  CHECK(seq->size() == 3);
  CHECK(seq->named_children().keys() == std::vector<std::string>{"0", "1", "2"});
  CHECK(seq[0]->name() == "Linear");
  CHECK(seq[-1].get() == seq->at<LinearImpl>(2).get());
  std::vector<std::string> names;
  for (const auto& m : *seq) names.push_back(m->name());
  CHECK(names == std::vector<std::string>{"Linear", "ReLU", "Linear"});
  Tensor x = randn({5, 3}, f64());
  auto l0 = seq->at<LinearImpl>(0), l2 = seq->at<LinearImpl>(2);
  CHECK(same_values(seq(x), (*l2)(relu((*l0)(x)))));
  seq->push_back(Tanh());
  seq->push_back("out", Sigmoid());
  CHECK(seq->named_children().keys() == std::vector<std::string>{"0", "1", "2", "3", "out"});
  CHECK(same_values(seq(x), sigmoid(tanh((*l2)(relu((*l0)(x)))))));
  CHECK_THROWS_AS(seq->push_back(Linear(nullptr)), ValueError);  // Sequential holds modules only
  // Named children, from holders.
  Sequential named({{"fc", Linear(3, 2)}, {"act", ReLU()}});
  CHECK(named->named_children().keys() == std::vector<std::string>{"fc", "act"});
  // A Sequential inside a Sequential, and inside a custom module.
  Sequential outer(Sequential(Linear(2, 2)), ReLU());
  CHECK(outer->named_parameters().keys() == std::vector<std::string>{"0.0.weight", "0.0.bias"});
  ModuleList list(Linear(1, 1), ReLU());
  CHECK(list->size() == 2);
  ModuleDict dict({{"enc", Linear(2, 2)}});
  CHECK(dict->at<LinearImpl>("enc")->in_features() == 2);
}

TEST_CASE("a LibTorch-style module round-trips a checkpoint through holders") {
  manual_seed(7);
  Net a, b;
  Tensor x = randn({2, 4}, f64());
  CHECK_FALSE(same_values(a(x), b(x)));
  wick::test::TempDir dir;
  const std::string path = dir.file("net.safetensors");
  save(a, path);
  load(b, path);
  CHECK(same_values(a(x), b(x)));
  CHECK(b->state_dict().keys() == a->state_dict().keys());
}
