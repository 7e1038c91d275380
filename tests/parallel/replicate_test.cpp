// replicate on CPU devices: ports of PyTorch's test_replicate, test_replicate_buffers and
// test_save_replica_module (test_data_parallel.py) and LibTorch's Replicate (ParallelTest), plus the index-map
// properties (tied weights, shared children, None entries), storage and device placement,
// replica marks, the index-map cache.
#include "wick/parallel/replicate.h"

#include <wick/nn/nn.h>
#include <wick/nn/optim/optim.h>

#include <catch2/catch.hpp>
#include <set>

#include "parallel/parallel_test_util.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::cpus;
using wick::test::f64;

namespace {

// Every defined tensor of a module tree, by walking the tables (replicas' parameters() work
// too: they live in the tables).
std::vector<Tensor> all_tensors(const nn::Module& m) {
  std::vector<Tensor> out;
  for (const auto& mod : m.modules()) {
    for (const auto& e : mod->parameter_table())
      if (e.value.defined()) out.push_back(e.value);
    for (const auto& e : mod->buffer_table())
      if (e.value.defined()) out.push_back(e.value);
  }
  return out;
}

// Two linears sharing one weight, a child registered twice, a None parameter, a None child.
class Tied : public nn::Cloneable<Tied> {
 public:
  Tied() {
    auto a = std::make_shared<nn::LinearImpl>(4, 4, f64());
    a_ = register_module("a", a);
    b_ = register_module("b", std::make_shared<nn::LinearImpl>(nn::LinearOptions(4, 4).bias(false), f64()));
    again_ = register_module("again", a);  // the same child twice
    none_ = register_module("none", std::shared_ptr<nn::LinearImpl>());
    shared_ = register_parameter("shared", child(a_).param(nn::ParamSlot{0}));  // a.weight, tied
    nothing_ = register_parameter("nothing", Tensor());
  }
  Tensor forward(const Tensor& x) {
    Tensor h = child(a_).forward(x);
    h = child(again_).forward(h);
    return nn::F::linear(child(b_).forward(h), param(shared_));
  }
  nn::ChildSlot<nn::LinearImpl> a_, b_, again_, none_;
  nn::ParamSlot shared_, nothing_;
};

class Counting : public nn::Cloneable<Counting> {
 public:
  Counting() { w_ = register_parameter("w", ones({2}, f64())); }
  Tensor forward(const Tensor& x) { return x * param(w_); }
  void on_replicated() override { ++calls; }
  nn::ParamSlot w_;
  int calls = 0;
};

}  // namespace

TEST_CASE("replicate: replica i lives on device i and computes the same output (test_replicate)") {
  manual_seed(0);
  auto module = std::make_shared<nn::LinearImpl>(10, 5, f64());
  Tensor input = randn({2, 10}, f64());
  Tensor expected = module->forward(input);
  auto replicas = replicate(module, {cpu(0), cpu(1)});
  REQUIRE(replicas.size() == 2);
  for (int i = 0; i < 2; ++i) {
    for (const auto& e : replicas[i]->parameter_table()) CHECK(e.value.device() == cpu(i));
    CHECK(replicas[i]->weight().device() == cpu(i));
    CHECK_ALLCLOSE(replicas[i]->forward(input.to(cpu(i))), expected, 0, 0);
    CHECK(replicas[i]->is_replica());
  }
  CHECK_FALSE(module->is_replica());
  CHECK(replicate(module, {}).empty());
}

TEST_CASE("replicate: buffers land on each replica's device (test_replicate_buffers)") {
  auto net = std::make_shared<nn::SequentialImpl>();
  net->push_back("bn", std::make_shared<nn::BatchNorm2dImpl>(nn::BatchNorm2dOptions(10), f64()));
  auto replicas = replicate(net, {cpu(0), cpu(1)});
  for (int i = 0; i < 2; ++i) {
    auto bn = std::static_pointer_cast<nn::SequentialImpl>(replicas[i])->at<nn::BatchNorm2dImpl>(0);
    CHECK(bn->running_mean().device() == cpu(i));
    CHECK(bn->running_var().device() == cpu(i));
    CHECK(bn->num_batches_tracked().device() == cpu(i));
    CHECK(bn->num_batches_tracked().dtype() == kInt64);
  }
}

TEST_CASE("replicate: copies equal the original, only the source replica shares its storage (Replicate_MultiCUDA)") {
  auto module = std::make_shared<nn::LinearImpl>(3, 4, f64());
  auto replicas = replicate(module, {cpu(0), cpu(1), cpu(2)});
  auto originals = all_tensors(*module);
  std::set<void*> seen;
  for (size_t j = 0; j < replicas.size(); ++j) {
    auto copies = all_tensors(*replicas[j]);
    REQUIRE(copies.size() == originals.size());
    for (size_t k = 0; k < copies.size(); ++k) {
      CHECK(copies[k].device() == cpu(static_cast<int>(j)));
      CHECK_ALLCLOSE(copies[k].to(cpu(0)), originals[k], 0, 0);
      CHECK((copies[k].data_ptr() == originals[k].data_ptr()) == (j == 0));
      CHECK(seen.insert(copies[k].data_ptr()).second);  // no two replicas share storage
    }
  }
}

TEST_CASE("replicate: tied parameters and a child registered twice stay shared in each replica, None stays None") {
  auto m = std::make_shared<Tied>();
  auto replicas = replicate(m, {cpu(0), cpu(1)});
  Tensor x = randn({3, 4}, f64());
  Tensor expected = m->forward(x);
  for (int i = 0; i < 2; ++i) {
    auto& r = static_cast<Tied&>(*replicas[i]);
    CHECK(r.child_ptr(r.a_) == r.child_ptr(r.again_));
    CHECK(r.child_ptr(r.a_) != m->child_ptr(m->a_));
    CHECK(r.param(r.shared_).is_same(r.child(r.a_).weight()));
    CHECK_FALSE(r.param(r.nothing_).defined());
    CHECK_FALSE(r.has(r.none_));
    CHECK_FALSE(r.child(r.b_).bias().defined());
    CHECK(r.child(r.a_).is_replica());
    CHECK_ALLCLOSE(r.forward(x.to(cpu(i))), expected, 1e-14, 0);
  }
  // the tied weight gets one gradient: the sum over its uses, from both replicas
  Tensor loss = replicas[0]->forward_tensor(x).sum() + replicas[1]->forward_tensor(x.to(cpu(1))).sum().to(cpu(0));
  loss.backward();
  Tensor w = m->child(m->a_).weight();
  Tensor g = w.grad().clone();
  w.set_grad(Tensor());
  Tensor(m->child(m->a_).bias()).set_grad(Tensor());
  Tensor(m->child(m->b_).weight()).set_grad(Tensor());
  (m->forward(x).sum() * 2.0).backward();
  CHECK_ALLCLOSE(g, w.grad(), 1e-12, 1e-14);
}

TEST_CASE("replicate: gradients of every replica accumulate on the original leaves") {
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64());
  Tensor x = randn({4, 3}, f64());
  auto replicas = replicate(module, {cpu(0), cpu(1), cpu(2)});
  Tensor loss = zeros({}, f64());
  for (int i = 0; i < 3; ++i) loss = loss + replicas[i]->forward_tensor(x.to(cpu(i))).sum().to(cpu(0)) * (i + 1.0);
  loss.backward();
  Tensor gw = module->weight().grad().clone(), gb = module->bias().grad().clone();
  module->zero_grad();
  (module->forward(x).sum() * 6.0).backward();
  CHECK_ALLCLOSE(gw, module->weight().grad(), 1e-13, 0);
  CHECK_ALLCLOSE(gb, module->bias().grad(), 1e-13, 0);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(replicas[i]->weight().is_leaf());
}

TEST_CASE("replicate: replicas are marked, zero_grad and optimizers refuse them") {
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64());
  auto replicas = replicate(module, {cpu(0), cpu(1)});
  for (auto& r : replicas) {
    CHECK(r->is_replica());
    CHECK_THROWS_WITH(r->zero_grad(), Catch::Contains("replica"));
    CHECK_THROWS_WITH(optim::SGD(r->parameters(), optim::SGDOptions(0.1)), Catch::Contains("not a leaf"));
  }
  CHECK_NOTHROW(optim::SGD(module->parameters(), optim::SGDOptions(0.1)));
}

TEST_CASE("replicate(detach = true): no graph, replica 0 holds the original tensors") {
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64());
  auto replicas = replicate(module, {cpu(0), cpu(1)}, /*detach=*/true);
  CHECK(replicas[0]->weight().is_same(module->weight()));
  CHECK_FALSE(replicas[1]->weight().requires_grad());
  CHECK_FALSE(replicas[1]->weight().grad_fn());
  CHECK(replicas[1]->weight().device() == cpu(1));
  // under no-grad with detach = false nothing requires grad either, and replica 0 aliases
  NoGradGuard ng;
  auto r2 = replicate(module, {cpu(0), cpu(1)});
  CHECK_FALSE(r2[0]->weight().requires_grad());
  CHECK(r2[0]->weight().data_ptr() == module->weight().data_ptr());
}

TEST_CASE("replicate: frozen parameters give non-differentiable copies, buffers requiring grad are differentiable") {
  auto net = std::make_shared<nn::LinearImpl>(3, 2, f64());
  Tensor(net->bias()).requires_grad_(false);
  auto replicas = replicate(net, {cpu(0), cpu(1)});
  CHECK(replicas[1]->weight().requires_grad());
  CHECK_FALSE(replicas[1]->bias().requires_grad());
  CHECK(replicas[0]->bias().is_same(net->bias()));

  auto seq = std::make_shared<nn::SequentialImpl>();
  auto bn = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), f64());
  seq->push_back(bn);
  Tensor(bn->running_mean()).requires_grad_(true);
  auto r = replicate(seq, {cpu(0), cpu(1)});
  auto rb = std::static_pointer_cast<nn::SequentialImpl>(r[1])->at<nn::BatchNorm1dImpl>(0);
  CHECK(rb->running_mean().requires_grad());
  CHECK(rb->running_mean().grad_fn() != nullptr);
  CHECK_FALSE(rb->running_var().requires_grad());
  // the buffer that does not require grad is the original object on replica 0
  auto rb0 = std::static_pointer_cast<nn::SequentialImpl>(r[0])->at<nn::BatchNorm1dImpl>(0);
  CHECK(rb0->running_var().is_same(bn->running_var()));
  // detach = true: even the buffer requiring grad is broadcast detached
  auto rd = replicate(seq, {cpu(0), cpu(1)}, true);
  CHECK_FALSE(
      std::static_pointer_cast<nn::SequentialImpl>(rd[1])->at<nn::BatchNorm1dImpl>(0)->running_mean().requires_grad());
}

TEST_CASE("replicate: duplicate devices get their own copies") {
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64());
  auto replicas = replicate(module, {cpu(0), cpu(0)});
  CHECK(replicas[1]->weight().device() == cpu(0));
  CHECK(replicas[1]->weight().data_ptr() != module->weight().data_ptr());
  CHECK(replicas[0]->weight().data_ptr() == module->weight().data_ptr());
}

TEST_CASE("replicate: the module must be on devices[0]") {
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64(cpu(1)));
  CHECK_THROWS_WITH(replicate(module, {cpu(0), cpu(1)}), Catch::Contains("must be on devices[0] (cpu:0)") &&
                                                             Catch::Contains("'weight'") &&
                                                             Catch::Contains("is on cpu:1"));
}

TEST_CASE("replicate: training flags follow the original, on_replicated runs on every replica") {
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back(std::make_shared<nn::LinearImpl>(2, 2, f64()));
  seq->push_back(std::make_shared<nn::DropoutImpl>(0.5));
  seq->eval();
  auto r = replicate(seq, {cpu(0), cpu(1)});
  for (auto& m : r[1]->modules()) CHECK_FALSE(m->is_training());
  r.clear();
  seq->train();
  std::static_pointer_cast<nn::SequentialImpl>(seq)->at<nn::DropoutImpl>(1)->eval();
  r = replicate(seq, {cpu(0), cpu(1)});
  CHECK(r[1]->is_training());
  CHECK(std::static_pointer_cast<nn::SequentialImpl>(r[1])->at<nn::LinearImpl>(0)->is_training());
  CHECK_FALSE(std::static_pointer_cast<nn::SequentialImpl>(r[1])->at<nn::DropoutImpl>(1)->is_training());

  auto c = std::make_shared<Counting>();
  auto rc = replicate(c, {cpu(0), cpu(1)});
  CHECK(rc[0]->calls == 1);
  CHECK(rc[1]->calls == 1);
  CHECK(c->calls == 0);
}

TEST_CASE("replicate: index maps are cached while the structure is unchanged, and every call returns fresh modules") {
  clear_replicate_cache();
  auto module = std::make_shared<nn::LinearImpl>(3, 2, f64());
  ReplicateProfile p;
  auto r1 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK_FALSE(p.cache_hit);
  auto r2 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK(p.cache_hit);
  CHECK(r2[0].get() != r1[0].get());
  CHECK(r2[1].get() != r1[1].get());
  r1.clear();
  // dropping replicas leaves the others alone, and a later call never hands back old modules
  CHECK(r2[1]->parameter_table()[0].value.device() == cpu(1));
  std::shared_ptr<nn::Module> kept = r2[1];
  r2.clear();
  auto r3 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK(p.cache_hit);
  CHECK(r3[0].get() != kept.get());
  CHECK(r3[1].get() != kept.get());
  CHECK(kept->parameter_table()[0].value.device() == cpu(1));  // a kept replica keeps its tensors
  CHECK(r3[0]->parameter_table()[0].value.device() == cpu(0));
  CHECK(r3[1]->parameter_table()[0].value.device() == cpu(1));

  // a structure change is detected: the new buffer reaches the replicas
  module->register_buffer("extra", ones({2}, f64()));
  auto r4 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK_FALSE(p.cache_hit);
  REQUIRE(r4[1]->buffer_table().size() == 1);
  CHECK(r4[1]->buffer_table()[0].value.device() == cpu(1));
  // replacing a parameter of the original is a structure change too
  module->set_parameter_entry(1, zeros({2}, f64()).requires_grad_());
  auto r5 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK_FALSE(p.cache_hit);
  CHECK_VALUES(r5[1]->bias(), {0.0, 0.0});
  // moving the original with to() keeps its tensors, so the maps stay valid
  module->to(kFloat32);
  auto r6 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK(p.cache_hit);
  CHECK(r6[1]->weight().dtype() == kFloat32);
  // clearing the cache only costs a rebuild
  clear_replicate_cache();
  auto r7 = replicate(module, {cpu(0), cpu(1)}, false, &p);
  CHECK_FALSE(p.cache_hit);
  CHECK_VALUES_EQUAL(r7[1]->weight().to(cpu(0)), r6[1]->weight().to(cpu(0)));
}

TEST_CASE("replicate: a child kept from an old replica is never reused or changed") {
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back(std::make_shared<nn::LinearImpl>(2, 2, f64()));
  auto r = replicate(seq, {cpu(0), cpu(1)});
  std::shared_ptr<nn::Module> kept = r[1]->children()[0];
  r.clear();
  auto again = replicate(seq, {cpu(0), cpu(1)});
  auto again2 = replicate(seq, {cpu(0), cpu(1)});
  for (auto* set : {&again, &again2})
    for (auto& m : *set) CHECK(m->children()[0] != kept);
  CHECK(std::static_pointer_cast<nn::LinearImpl>(kept)->weight().device() == cpu(1));
}
