// Replicas are fresh copies of the original at each call (Note [Replicas are fresh copies]):
// training flags from each original module, plain members that do not leak between calls,
// options changed on the original seen at the next call, and a module moved by DataParallel's
// constructor that its optimizer still trains.
#include <wick/nn/nn.h>
#include <wick/nn/optim/optim.h>

#include <catch2/catch.hpp>

#include "parallel/parallel_test_util.h"
#include "wick/parallel/data_parallel.h"
#include "wick/parallel/replicate.h"

using namespace wick;
using namespace wick::parallel;
using wick::test::cpu;
using wick::test::f64;

namespace {

// A BatchNorm child registered twice: directly in the root (first) and inside a block.
class SharedBn : public nn::Cloneable<SharedBn> {
 public:
  SharedBn() {
    auto bn = std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), f64());
    bn_ = register_module("bn", bn);
    auto block = std::make_shared<nn::SequentialImpl>();
    block->push_back(std::make_shared<nn::LinearImpl>(3, 3, f64()));
    block->push_back(bn);
    block_ = register_module("block", block);
  }
  Tensor forward(const Tensor& x) { return child(block_).forward(x); }
  nn::ChildSlot<nn::BatchNorm1dImpl> bn_;
  nn::ChildSlot<nn::SequentialImpl> block_;
};

// A plain member written in forward.
class Counter : public nn::Cloneable<Counter> {
 public:
  Counter() { w_ = register_parameter("w", ones({1}, f64())); }
  Tensor forward(const Tensor& x) {
    ++calls;
    return x * param(w_) * static_cast<double>(calls);
  }
  nn::ParamSlot w_;
  int calls = 0;
};

// A plain option read in forward.
class Gain : public nn::Cloneable<Gain> {
 public:
  Gain() { w_ = register_parameter("w", ones({1}, f64())); }
  Tensor forward(const Tensor& x) { return x * param(w_) * gain; }
  nn::ParamSlot w_;
  double gain = 1.0;
};

}  // namespace

TEST_CASE("replicate: a child shared by two parents keeps its own training flag") {
  manual_seed(0);
  auto root = std::make_shared<SharedBn>();
  auto& block = root->child(root->block_);
  auto& bn = root->child(root->bn_);
  block.eval();
  { auto warm = replicate(root, {cpu(0), cpu(1)}); }  // caches the index maps
  block.train();
  bn.eval();
  REQUIRE(root->is_training());
  REQUIRE(block.is_training());
  REQUIRE_FALSE(bn.is_training());

  auto replicas = replicate(root, {cpu(0), cpu(1)});
  for (const auto& r : replicas) {
    const auto originals = root->modules();
    const auto copies = r->modules();
    REQUIRE(copies.size() == originals.size());
    for (size_t i = 0; i < copies.size(); ++i) CHECK(copies[i]->is_training() == originals[i]->is_training());
  }
  replicas.clear();

  // Through data_parallel: bn in eval mode uses and keeps the running statistics.
  const Tensor mean_before = bn.running_mean().clone();
  const Tensor var_before = bn.running_var().clone();
  Tensor x = randn({4, 3}, f64());
  Tensor expected = root->forward(x);
  Tensor got = data_parallel(root, x, {cpu(0), cpu(1)});
  CHECK_VALUES_EQUAL(got, expected);
  CHECK_VALUES_EQUAL(bn.running_mean(), mean_before);
  CHECK_VALUES_EQUAL(bn.running_var(), var_before);
}

TEST_CASE("replicate: a member written in a replica's forward does not survive the call") {
  auto counter = std::make_shared<Counter>();
  Tensor x = ones({2, 1}, f64());
  for (int call = 0; call < 3; ++call) {
    Tensor y = data_parallel(counter, x, {cpu(0), cpu(1)});
    CHECK_VALUES(y, {1.0, 1.0});  // every replica starts from calls == 0
  }
  CHECK(counter->calls == 0);
  auto replicas = replicate(counter, {cpu(0), cpu(1)});
  CHECK(std::static_pointer_cast<Counter>(replicas[1])->calls == 0);
}

TEST_CASE("replicate: a plain option changed on the original reaches the next call, with no cache call") {
  auto gain = std::make_shared<Gain>();
  Tensor x = ones({2, 1}, f64());
  CHECK_VALUES(data_parallel(gain, x, {cpu(0), cpu(1)}), {1.0, 1.0});
  gain->gain = 3.0;
  CHECK_VALUES(data_parallel(gain, x, {cpu(0), cpu(1)}), {3.0, 3.0});
  auto replicas = replicate(gain, {cpu(0), cpu(1)});
  CHECK(std::static_pointer_cast<Gain>(replicas[0])->gain == 3.0);
  CHECK(std::static_pointer_cast<Gain>(replicas[1])->gain == 3.0);
  // a replica's own change stays in the replica
  std::static_pointer_cast<Gain>(replicas[1])->gain = 7.0;
  CHECK(gain->gain == 3.0);
}

TEST_CASE("replicate: a built-in option (Dropout's p) is read from the original at each call") {
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back(std::make_shared<nn::DropoutImpl>(0.5));
  auto r1 = replicate(seq, {cpu(0), cpu(1)});
  seq->eval();
  auto r2 = replicate(seq, {cpu(0), cpu(1)});
  CHECK(r1[1]->children()[0]->is_training());
  CHECK_FALSE(r2[1]->children()[0]->is_training());
  CHECK_FALSE(r2[0]->children()[0]->is_training());
}

TEST_CASE("DataParallel's constructor moves the module and keeps the user's optimizer valid") {
  manual_seed(0);
  auto lin = std::make_shared<nn::LinearImpl>(3, 2, f64());
  const Tensor weight = lin->weight();
  const Tensor w0 = weight.clone();
  optim::SGD opt(lin->parameters(), optim::SGDOptions(0.1));
  DataParallel dp(lin, {cpu(1)});  // one device: the module is moved there
  CHECK(lin->weight().is_same(weight));
  CHECK(weight.device() == cpu(1));
  Tensor x = randn({4, 3}, f64(cpu(1)));
  Tensor loss = dp.forward(x).sum();
  loss.backward();
  REQUIRE(weight.grad().defined());
  const Tensor expected = (w0.to(cpu(1)) - weight.grad() * 0.1).clone();
  opt.step();
  CHECK_VALUES_EQUAL(lin->weight(), expected);
  CHECK_FALSE(wick::test::same_values(lin->weight().to(cpu(0)), w0));
}

namespace {
// No copy assignment (a const member): replicate copies it afresh on every call.
class ConstCounter : public nn::Cloneable<ConstCounter> {
 public:
  ConstCounter() { w_ = register_parameter("w", ones({1}, f64())); }
  Tensor forward(const Tensor& x) {
    ++calls;
    return x * param(w_) * (k * calls);
  }
  nn::ParamSlot w_;
  const double k = 2.0;
  int calls = 0;
};
}  // namespace

TEST_CASE("replicate: a module without copy assignment gets fresh copies on every call") {
  static_assert(!std::is_copy_assignable_v<ConstCounter>);
  auto m = std::make_shared<ConstCounter>();
  Tensor x = ones({2, 1}, f64());
  for (int call = 0; call < 3; ++call) CHECK_VALUES(data_parallel(m, x, {cpu(0), cpu(1)}), {2.0, 2.0});
  CHECK(m->calls == 0);
}

TEST_CASE("replicate: modules reused from an earlier call equal fresh copies of the originals") {
  // Every module type of the library, replicated twice with the originals changed in between:
  // the second replicas must match the originals as they are at the second call.
  auto seq = std::make_shared<nn::SequentialImpl>();
  seq->push_back(std::make_shared<nn::LinearImpl>(3, 3, f64()));
  seq->push_back(std::make_shared<nn::BatchNorm1dImpl>(nn::BatchNorm1dOptions(3), f64()));
  seq->push_back(std::make_shared<nn::DropoutImpl>(0.5));
  seq->push_back(std::make_shared<nn::ReLUImpl>());
  auto gain = std::make_shared<Gain>();
  seq->push_back(gain);
  { auto first = replicate(seq, {cpu(0), cpu(1)}); }
  seq->eval();
  seq->children()[1]->train();
  gain->gain = 4.0;
  auto second = replicate(seq, {cpu(0), cpu(1)});
  for (const auto& r : second) {
    const auto originals = seq->modules(), copies = r->modules();
    REQUIRE(copies.size() == originals.size());
    for (size_t i = 0; i < copies.size(); ++i) {
      CHECK(copies[i]->is_training() == originals[i]->is_training());
      CHECK(copies[i]->is_replica());
      CHECK(copies[i]->name() == originals[i]->name());
    }
    CHECK(std::static_pointer_cast<Gain>(r->children()[4])->gain == 4.0);
  }
}

namespace {
// Changes its own tables in forward: fills a None parameter entry and registers a buffer.
class SelfEditing : public nn::Cloneable<SelfEditing> {
 public:
  SelfEditing() {
    w_ = register_parameter("w", ones({1}, f64()));
    extra_ = register_parameter("extra", Tensor());
  }
  Tensor forward(const Tensor& x) {
    const double seen = has(extra_) ? 10.0 : 1.0;
    const double tables = static_cast<double>(buffer_table().size());
    set_parameter_entry(static_cast<size_t>(extra_.index), ones({1}, param(w_).options()));
    register_buffer("b" + std::to_string(buffer_table().size()), ones({1}, param(w_).options()));
    return x * param(w_) * (seen + tables);
  }
  nn::ParamSlot w_, extra_;
};
}  // namespace

TEST_CASE("replicate: a replica that edits its own tables leaves no trace in later replicas") {
  auto m = std::make_shared<SelfEditing>();
  Tensor x = ones({2, 1}, f64());
  for (int call = 0; call < 3; ++call) CHECK_VALUES(data_parallel(m, x, {cpu(0), cpu(1)}), {1.0, 1.0});
  CHECK_FALSE(m->has(m->extra_));
  CHECK(m->buffer_table().empty());
}
