// nn::ParameterList and nn::ParameterDict: their names ("0", "1", ... or the keys) in the
// parameter table and in named_parameters / state_dict, append / extend / insert / update,
// indexing and iteration, PyTorch 1.13's print strings, bad input as typed errors, and
// replication: a model holding both, replicated onto cpu:0 and cpu:1, reads each replica's own
// tensors and sends the replicas' gradients back to the original parameters; clone() copies them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/allclose.h"
#include "wick/autograd/grad.h"
#include "wick/nn/nn.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::nn;
using Catch::Matchers::Contains;

namespace {
const TensorOptions kF64(kFloat64);

// y = (x * list[0] + list[1]) * dict["scale"] + dict["shift"], everything of size 3.
class HoldsImpl : public Cloneable<HoldsImpl> {
 public:
  HoldsImpl()
      : list(register_module("list", ParameterList(leaf(), leaf()))),
        dict(register_module("dict", ParameterDict({{"scale", leaf()}, {"shift", leaf()}}))) {}
  static Tensor leaf() { return wick::randn({3}, kF64).requires_grad_(true); }
  Tensor forward(const Tensor& x) { return (x * (*list)[0] + (*list)[1]) * (*dict)["scale"] + dict->get("shift"); }
  ParameterList list;
  ParameterDict dict;
};
WICK_MODULE(Holds);

std::vector<std::string> names(const Module& m) { return m.named_parameters().keys(); }
}  // namespace

TEST_CASE("ParameterList: append, extend, insert, indexing and names", "[nn][parameter_containers]") {
  const Tensor a = wick::randn({2, 3}, kF64).requires_grad_(true), b = wick::zeros({4});
  ParameterList list(a, b);
  REQUIRE(list->size() == 2);
  CHECK(list->parameter_table()[0].name == "0");
  CHECK((*list)[0].is_same(a));
  CHECK((*list)[-1].is_same(b));
  CHECK(list->at(1).is_same(b));
  CHECK_FALSE(b.requires_grad());  // kept as given, as LibTorch's append
  CHECK_THROWS_AS((*list)[2], IndexError);
  CHECK_THROWS_AS((*list)[-3], IndexError);
  // extend from tensors, from named parameters (the names are not kept) and from another list.
  list->extend(std::vector<Tensor>{wick::ones({1})});
  Linear fc(2, 3);
  list->extend(fc->named_parameters());
  *list += *ParameterList(wick::full({2}, 7.0));
  REQUIRE(list->size() == 6);
  CHECK((*list)[3].is_same(fc->weight()));
  CHECK((*list)[4].is_same(fc->bias()));
  CHECK(names(*list) == std::vector<std::string>{"0", "1", "2", "3", "4", "5"});
  // insert moves the later ones up one name.
  const Tensor c = wick::full({5}, 3.0);
  list->insert(1, c);
  list->insert(-1, wick::full({6}, 1.0));
  list->insert(static_cast<int64_t>(list->size()), wick::full({8}, 2.0));
  REQUIRE(list->size() == 9);
  CHECK((*list)[0].is_same(a));
  CHECK((*list)[1].is_same(c));
  CHECK((*list)[2].is_same(b));
  CHECK((*list)[6].size(0) == 6);
  CHECK((*list)[8].size(0) == 8);
  CHECK(names(*list).back() == "8");
  std::vector<std::string> seen;
  for (const auto& e : *list) seen.push_back(e.name);
  CHECK(seen == names(*list));
  CHECK_THROWS_AS(list->insert(11, c), IndexError);
  // Not a leaf: refused by register_parameter, the list unchanged.
  CHECK_THROWS_AS(list->append(a * 2.0), ValueError);
  CHECK(list->size() == 9);
  CHECK(ParameterList()->is_empty());
}

TEST_CASE("ParameterDict: insert, update, lookup and names", "[nn][parameter_containers]") {
  const Tensor w = wick::randn({2}, kF64).requires_grad_(true);
  ParameterDict dict({{"w", w}, {"b", wick::zeros({2})}});
  CHECK(dict->keys() == std::vector<std::string>{"w", "b"});
  CHECK(dict->contains("b"));
  CHECK_FALSE(dict->contains("c"));
  CHECK((*dict)["w"].is_same(w));
  CHECK(dict->get("b").sizes() == IntArrayRef({2}));
  CHECK(dict->values().size() == 2);
  CHECK_THROWS_AS((*dict)["c"], IndexError);
  CHECK_THROWS_WITH((*dict)["c"], Contains("'c'") && Contains("w, b"));
  CHECK_THROWS_AS(dict->insert("w", wick::ones({1})), ValueError);
  CHECK_THROWS_AS(dict->insert("a.b", wick::ones({1})), ValueError);
  const Tensor v = dict->insert("v", wick::ones({3}));
  CHECK(v.is_same((*dict)["v"]));
  // update replaces in place (same position) and appends new keys.
  const Tensor b2 = wick::full({2}, 5.0);
  dict->update({{"b", b2}, {"z", wick::ones({1})}});
  CHECK(dict->keys() == std::vector<std::string>{"w", "b", "v", "z"});
  CHECK((*dict)["b"].is_same(b2));
  CHECK_THROWS_AS(dict->update({{"w", w * 2.0}}), ValueError);
  CHECK((*dict)["w"].is_same(w));
  // From another module's parameters; nested names are "<child>.<key>".
  Linear fc(2, 3);
  ParameterDict copy(fc->named_parameters());
  CHECK(copy->keys() == std::vector<std::string>{"weight", "bias"});
  Holds net;
  CHECK(names(*net) == std::vector<std::string>{"list.0", "list.1", "dict.scale", "dict.shift"});
  CHECK(net->state_dict().keys() == names(*net));
}

TEST_CASE("ParameterList and ParameterDict print as PyTorch 1.13", "[nn][parameter_containers]") {
  ParameterList list(wick::zeros({2, 3}, kF64), wick::zeros({4}));
  CHECK(list->to_string() ==
        "ParameterList(\n"
        "    (0): Parameter containing: [torch.float64 of size 2x3]\n"
        "    (1): Parameter containing: [torch.float32 of size 4]\n"
        ")");
  ParameterDict dict({{"a", wick::zeros({2})}});
  CHECK(dict->to_string() == "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2])");
  CHECK(ParameterList()->to_string() == "ParameterList()");
}

TEST_CASE("ParameterList and ParameterDict replicate and clone", "[nn][parameter_containers][replicate]") {
  Holds net;
  const Device cpu0("cpu:0"), cpu1("cpu:1");
  const Tensor x = wick::randn({4, 3}, kF64);
  const Tensor expected = net(x).detach();
  auto replicas = parallel::replicate(net.ptr(), {cpu0, cpu1});
  REQUIRE(replicas.size() == 2);
  Tensor total;
  for (size_t i = 0; i < 2; ++i) {
    const Device dev = i == 0 ? cpu0 : cpu1;
    auto& r = static_cast<HoldsImpl&>(*replicas[i]);
    CHECK(r.is_replica());
    // The containers read the replica's tensors: on the replica's device, not the original's.
    for (const auto& e : *r.list) CHECK(e.value.device() == dev);
    CHECK((*r.dict)["scale"].device() == dev);
    CHECK_FALSE((*r.list)[0].is_same((*net->list)[0]));
    CHECK(names(r) == names(*net));
    const Tensor y = r.forward(x.to(dev));
    CHECK(y.device() == dev);
    CHECK_ALLCLOSE(y.to(cpu0), expected, 0, 0);
    total = total.defined() ? total + sum(y).to(cpu0) : sum(y).to(cpu0);
  }
  // The gradient of both replicas' outputs reaches the original parameters: twice one copy's.
  total.backward();
  const Tensor once = wick::autograd::grad({sum(net(x))}, {(*net->list)[0]})[0];
  CHECK_ALLCLOSE((*net->list)[0].grad(), once * 2.0, 1e-14, 1e-14);
  CHECK((*net->dict)["shift"].grad().defined());
  // clone(): fresh storage, the same values, leaves that require grad.
  auto copy = std::static_pointer_cast<HoldsImpl>(net->clone());
  CHECK_FALSE((*copy->list)[1].is_same((*net->list)[1]));
  CHECK((*copy->dict)["scale"].data_ptr() != (*net->dict)["scale"].data_ptr());
  CHECK_ALLCLOSE((*copy->dict)["scale"], (*net->dict)["scale"], 0, 0);
  CHECK((*copy->list)[0].requires_grad());
  CHECK_ALLCLOSE(copy->forward(x), expected, 0, 0);
}

TEST_CASE("ParameterList extended by itself appends a copy of its entries", "[nn][parameter_containers]") {
  const Tensor a = wick::randn({2}, kF64).requires_grad_(true), b = wick::zeros({3});
  ParameterList list(a, b);
  list->extend(*list);  // iterating the table while appending to it read freed entries
  REQUIRE(list->size() == 4);
  std::vector<std::string> entry_names;  // named_parameters() lists a shared tensor once: read the entries
  for (const auto& e : *list) entry_names.push_back(e.name);
  CHECK(entry_names == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK((*list)[2].is_same(a));
  CHECK((*list)[3].is_same(b));
  *list += *list;
  REQUIRE(list->size() == 8);
  for (int64_t i = 0; i < 8; ++i) CHECK((*list)[i].is_same(i % 2 == 0 ? a : b));
}
