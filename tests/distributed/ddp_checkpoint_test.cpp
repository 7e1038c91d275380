// DistributedDataParallel over a model with an activation checkpoint (autograd::checkpoint,
// Note [Activation checkpoint]) on 2 and 3 ranks (mpirun): the reentrant checkpoint's backward
// fires DDP's gradient hooks from inside another backward; the non-reentrant one (Note
// [Non-reentrant checkpoint]) runs one backward, and also takes a parameter used inside and
// outside it.
#include <memory>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

namespace {

enum class Kind { kNone, kReentrant, kNonReentrant };

/// fc1, Tanh, then fc2 and Tanh inside a checkpoint of the given kind (with a dropout whose mask
/// the recomputation must draw again), then fc3 when `head` (else the checkpoint's output is the
/// model's).
class Checkpointed : public nn::Cloneable<Checkpointed> {
 public:
  Checkpointed(Kind kind, bool head) : kind_(kind), head_(head) {
    fc1_ = register_module("fc1", std::make_shared<nn::LinearImpl>(5, 8, kF64));
    fc2_ = register_module("fc2", std::make_shared<nn::LinearImpl>(8, head ? 8 : 3, kF64));
    if (head) fc3_ = register_module("fc3", std::make_shared<nn::LinearImpl>(8, 3, kF64));
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = child(fc1_).forward(x).tanh();
    auto block = [this](const Tensor& in) { return nn::F::dropout(child(fc2_).forward(in), 0.25, true).tanh(); };
    const Tensor b =
        kind_ == Kind::kNone ? block(h) : autograd::checkpoint(block, h, {.use_reentrant = kind_ == Kind::kReentrant});
    return head_ ? child(fc3_).forward(b) : b;
  }

 private:
  Kind kind_;
  bool head_;
  nn::ChildSlot<nn::LinearImpl> fc1_, fc2_, fc3_;
};

}  // namespace

TEST_CASE("ddp: a model with an activation checkpoint trains as without it, bit for bit", "[mpi]") {
  // Parameters after the checkpoint (fc3) get their gradients first, in the outer backward, so
  // DDP's end-of-backward callback belongs to it; fc2's arrive from the checkpoint's reentrant
  // backward, fc1's after it.
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(81);
  const Tensor x = randn({4, global, 5}, kFloat64), y = randn({4, global, 3}, kFloat64);
  for (Kind kind : {Kind::kReentrant, Kind::kNonReentrant}) {
    INFO("use_reentrant " << (kind == Kind::kReentrant));
    std::vector<std::shared_ptr<Checkpointed>> nets;
    for (Kind k : {Kind::kNone, kind}) {
      manual_seed(82);
      nets.push_back(std::make_shared<Checkpointed>(k, true));
    }
    DistributedDataParallel plain(nets[0], tiny_buckets()), checkpointed(nets[1], tiny_buckets());
    optim::SGD opt_plain(nets[0]->parameters(), optim::SGDOptions(0.1));
    optim::SGD opt_checkpointed(nets[1]->parameters(), optim::SGDOptions(0.1));
    for (int64_t k = 0; k < 4; ++k) {
      INFO("step " << k);
      for (int which = 0; which < 2; ++which) {
        manual_seed(90 + static_cast<uint64_t>(k));  // the same dropout masks in both runs
        auto& ddp = which ? checkpointed : plain;
        (which ? opt_checkpointed : opt_plain).zero_grad();
        nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      }
      const auto pp = nets[0]->parameters(), pc = nets[1]->parameters();
      for (size_t i = 0; i < pp.size(); ++i) {
        CHECK_ALLCLOSE(pc[i].grad(), pp[i].grad(), 0.0, 0.0);
        CHECK(test::same_on_every_rank(pc[i].grad()));
      }
      opt_plain.step();
      opt_checkpointed.step();
    }
  }
}

TEST_CASE("ddp: a model that ends in an activation checkpoint, and one that reuses a parameter inside it", "[mpi]") {
  // The checkpoint's reentrant backward delivers the first gradients (fc2's); DDP's end of
  // backward still waits for fc1's, which arrive after it (Note [Activation checkpoint]).
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(84);
  const Tensor x = randn({3, global, 5}, kFloat64), y = randn({3, global, 3}, kFloat64);
  for (Kind kind : {Kind::kReentrant, Kind::kNonReentrant}) {
    INFO("use_reentrant " << (kind == Kind::kReentrant));
    std::vector<std::shared_ptr<Checkpointed>> nets;
    for (Kind k : {Kind::kNone, kind}) {
      manual_seed(85);
      nets.push_back(std::make_shared<Checkpointed>(k, false));
    }
    DistributedDataParallel plain(nets[0], tiny_buckets()), checkpointed(nets[1], tiny_buckets());
    for (int64_t k = 0; k < 3; ++k) {
      INFO("step " << k);
      for (int which = 0; which < 2; ++which) {
        manual_seed(95 + static_cast<uint64_t>(k));
        auto& ddp = which ? checkpointed : plain;
        nets[which]->zero_grad();
        nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
      }
      const auto pp = nets[0]->parameters(), pc = nets[1]->parameters();
      for (size_t i = 0; i < pp.size(); ++i) CHECK_ALLCLOSE(pc[i].grad(), pp[i].grad(), 0.0, 0.0);
    }
  }
  // fc1 used outside and again inside a checkpoint: two gradients in one backward, refused on
  // every rank without static_graph (ddp_static_graph_test.cpp takes it with).
  manual_seed(86);
  auto fc1 = std::make_shared<nn::LinearImpl>(5, 5, kF64);
  DistributedDataParallel reused(fc1);
  auto twice = [&](const Tensor& in) {
    const Tensor h = reused.forward(in).tanh();
    return autograd::checkpoint([&fc1](const Tensor& t) { return fc1->forward(t); }, h);
  };
  test::expect_error<StateError>([&] { twice(mine(x[0], local)).sum().backward(); },
                                 {"second gradient", "re-entrant backward"});
  // The non-reentrant checkpoint runs one backward: fc1's two uses meet before its accumulator,
  // as without a checkpoint, and DDP takes it.
  std::vector<Tensor> grads;
  for (bool use : {false, true}) {
    manual_seed(87);
    auto fc = std::make_shared<nn::LinearImpl>(5, 5, kF64);
    DistributedDataParallel ddp(fc);
    const Tensor h = ddp.forward(mine(x[1], local)).tanh();
    auto again = [&fc](const Tensor& t) { return fc->forward(t); };
    const Tensor out = use ? autograd::checkpoint(again, h, {.use_reentrant = false}) : again(h);
    out.sum().backward();
    grads.push_back(fc->weight().grad());
    CHECK(test::same_on_every_rank(fc->weight().grad()));
  }
  CHECK_ALLCLOSE(grads[1], grads[0], 0.0, 0.0);
}
