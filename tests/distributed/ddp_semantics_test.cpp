// PyTorch DDP behaviours that no other test covered, on 2 and 3 ranks (mpirun), against one
// process in float64: tied parameters, frozen parameters, the wrapper's state_dict, no_grad
// inside no_sync, two forwards before one backward, backward with create_graph, and a buffer
// reassigned on rank 0.
#include <optional>
#include <set>
#include <string>

#include "ddp_test_util.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;

namespace {

// PyTorch's ToyModel of test_ddp_shared_grad_acc_unused_params: net1's bias is the module's own
// `bias` (one tensor under two names, `self.net1.bias = self.bias`); net1 is used only when
// asked, net2 always.
class Tied : public nn::Cloneable<Tied> {
 public:
  Tied() {
    net1_ = register_module("net1", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    bias_ = register_parameter("bias", randn({3}, kFloat64));
    net2_ = register_module("net2", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    nn::LinearImpl& net1 = child(net1_);
    for (size_t i = 0; i < net1.parameter_table().size(); ++i)
      if (net1.parameter_table()[i].name == "bias") net1.set_parameter_entry(i, param(bias_));
  }
  Tensor forward(const Tensor& x, bool use_net1) {
    Tensor out = child(net2_).forward(x);
    return use_net1 ? out + child(net1_).forward(x).tanh() : out;
  }

 private:
  nn::ChildSlot<nn::LinearImpl> net1_, net2_;
  nn::ParamSlot bias_;
};

// fc, then a frozen per-feature scale (requires_grad false).
class Frozen : public nn::Cloneable<Frozen> {
 public:
  Frozen() {
    fc_ = register_module("fc", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    scale_ = register_parameter("scale", randn({3}, kFloat64), /*requires_grad=*/false);
  }
  Tensor forward(const Tensor& x) { return child(fc_).forward(x) * param(scale_); }

 private:
  nn::ChildSlot<nn::LinearImpl> fc_;
  nn::ParamSlot scale_;
};

// PyTorch's test_ddp_create_graph model, a 0-dim parameter squared, here scaling a Linear's
// output so that each rank's gradient depends on its own rows.
class Squared : public nn::Cloneable<Squared> {
 public:
  Squared() {
    fc_ = register_module("fc", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    p_ = register_parameter("p", scalar_tensor(1.5, kFloat64));
  }
  Tensor forward(const Tensor& x) { return child(fc_).forward(x).tanh() * param(p_).pow(2); }

 private:
  nn::ChildSlot<nn::LinearImpl> fc_;
  nn::ParamSlot p_;
};

// PyTorch's NetWithBuffers (test_ddp_broadcast_buffer), whose forward also reads the buffer.
class WithBuffer : public nn::Cloneable<WithBuffer> {
 public:
  WithBuffer() {
    fc_ = register_module("fc", std::make_shared<nn::LinearImpl>(4, 3, kF64));
    scale_ = register_buffer("scale", randn({3}, kFloat64));
  }
  Tensor forward(const Tensor& x) { return child(fc_).forward(x) * buffer(scale_); }
  const Tensor& scale() const { return buffer(scale_); }
  /// PyTorch's `module.scale = t`: a new tensor in the buffer's slot, not a write into the old one.
  void reassign(const Tensor& t) { set_buffer_entry(static_cast<size_t>(scale_.index), t); }

 private:
  nn::ChildSlot<nn::LinearImpl> fc_;
  nn::BufferSlot scale_;
};

}  // namespace

TEST_CASE("ddp: a tied parameter is reduced once, with find_unused_parameters, over 6 iterations", "[mpi]") {
  // PyTorch's test_ddp_shared_grad_acc_unused_params (issue #41324): two names, one gradient
  // accumulator. Rank k uses net1 (and so the tied bias) in iterations where (it + k) is even.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(131);
  auto reference = std::make_shared<Tied>();
  manual_seed(131);
  auto net = std::make_shared<Tied>();
  DistributedDataParallel ddp(net, tiny_buckets_find_unused());
  const auto params = net->parameters();
  REQUIRE(params.size() == 4);  // net1.weight, the tied bias, net2.weight, net2.bias
  std::multiset<size_t> bucketed;
  for (const auto& b : ddp.bucket_indices()) bucketed.insert(b.begin(), b.end());
  CHECK(bucketed == std::multiset<size_t>{0, 1, 2, 3});
  auto uses_net1 = [](int64_t it, int k) { return (it + k) % 2 == 0; };
  manual_seed(132);
  const Tensor x = randn({6, global, 4}, kFloat64), y = randn({6, global, 3}, kFloat64);
  for (int64_t it = 0; it < 6; ++it) {
    INFO("iteration " << it);
    reference->zero_grad();
    net->zero_grad();
    Tensor total;
    for (int k = 0; k < g.size(); ++k) {
      Tensor l =
          nn::F::mse_loss(call(*reference, rows_of(x[it], local, k), uses_net1(it, k)), rows_of(y[it], local, k));
      total = total.defined() ? total + l : l;
    }
    total.div(g.size()).backward();
    nn::F::mse_loss(call(ddp, mine(x[it], local), uses_net1(it, g.rank())), mine(y[it], local)).backward();
    for (const auto& [name, p] : net->named_parameters()) {
      INFO(name);
      const Tensor expected = reference->get_parameter(name).grad();
      REQUIRE(p.grad().defined() == expected.defined());
      if (!expected.defined()) continue;
      CHECK_ALLCLOSE(p.grad(), expected, 1e-12, 0.0);
      CHECK(test::same_on_every_rank(p.grad()));
    }
  }
}

TEST_CASE("ddp: a frozen parameter is broadcast at construction but never bucketed, its grad stays undefined",
          "[mpi]") {
  auto& g = test::world();
  manual_seed(141 + g.rank());  // every rank starts elsewhere
  auto net = std::make_shared<Frozen>();
  DistributedDataParallel ddp(net, tiny_buckets());
  const Tensor scale = net->get_parameter("scale");
  CHECK(test::same_on_every_rank(scale));  // rank 0's, as every parameter and buffer
  std::multiset<size_t> bucketed;
  for (const auto& b : ddp.bucket_indices()) bucketed.insert(b.begin(), b.end());
  CHECK(bucketed == std::multiset<size_t>{0, 1});  // fc.weight and fc.bias only
  manual_seed(142);
  const Tensor x = randn({2 * g.size(), 4}, kFloat64);
  for (int it = 0; it < 2; ++it) ddp.forward(mine(x, 2)).square().sum().backward();
  CHECK_FALSE(scale.grad().defined());
  for (const char* name : {"fc.weight", "fc.bias"}) {
    INFO(name);
    CHECK(test::same_on_every_rank(net->get_parameter(name).grad()));
  }
}

TEST_CASE("ddp: the wrapper's state_dict has module.-prefixed keys a plain module loads once stripped", "[mpi]") {
  auto& g = test::world();
  manual_seed(151 + g.rank());
  auto net = make_bn_model();
  DistributedDataParallel ddp(net);
  const auto wrapped = ddp.state_dict();
  const auto plain = net->state_dict();
  nn::StateDict stripped;
  for (const auto& [key, value] : wrapped) {
    INFO(key);
    REQUIRE(key.rfind("module.", 0) == 0);
    stripped.insert(key.substr(7), value);
  }
  CHECK(stripped.size() == plain.size());
  manual_seed(999);
  auto other = make_bn_model();  // elsewhere, until it loads
  other->load_state_dict(stripped);
  for (const auto& [key, value] : plain) {
    INFO(key);
    CHECK_ALLCLOSE(other->state_dict().at(key), value, 0.0, 0.0);
  }
}

TEST_CASE("ddp: a forward without grad inside no_sync accumulates nothing, then no_sync and synced steps alternate",
          "[mpi]") {
  // PyTorch's _test_accumulate_gradients_no_sync: first a training-mode forward under no_grad
  // inside no_sync (no gradient at all), then 4 iterations without zero_grad, even ones inside
  // no_sync (each rank's own accumulation differs from the whole batch), odd ones synced (the
  // whole batch's accumulated gradients, everything accumulated included).
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(161);
  auto reference = make_mlp();
  manual_seed(161);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(162);
  const Tensor x = randn({4, global, 5}, kFloat64), y = randn({4, global, 3}, kFloat64);
  {
    NoGradGuard no_grad;
    auto guard = ddp.no_sync();
    ddp.train();
    ddp.forward(mine(x[0], local));
  }
  for (const Tensor& p : net->parameters()) CHECK_FALSE(p.grad().defined());
  for (int64_t it = 0; it < 4; ++it) {
    INFO("iteration " << it);
    nn::F::mse_loss(reference->forward_tensor(x[it]), y[it]).backward();
    const bool local_only = it % 2 == 0;
    if (local_only) {
      auto guard = ddp.no_sync();
      nn::F::mse_loss(ddp.forward(mine(x[it], local)), mine(y[it], local)).backward();
    } else {
      nn::F::mse_loss(ddp.forward(mine(x[it], local)), mine(y[it], local)).backward();
    }
    const auto p = net->parameters(), ref = reference->parameters();
    for (size_t i = 0; i < p.size(); ++i) {
      if (local_only) {
        if (g.size() > 1) CHECK_FALSE(test::allclose(p[i].grad(), ref[i].grad(), 1e-6, 0.0).ok);
      } else {
        CHECK_ALLCLOSE(p[i].grad(), ref[i].grad(), 1e-12, 0.0);
        CHECK(test::same_on_every_rank(p[i].grad()));
      }
    }
  }
}

TEST_CASE("ddp: two forwards then one backward of their sum averages both", "[mpi]") {
  // Without find_unused_parameters: each parameter gets one gradient (the engine sums both
  // uses before its accumulator), so one reduction covers both forwards.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(171);
  auto reference = make_mlp();
  manual_seed(171);
  auto net = make_mlp();
  DistributedDataParallel ddp(net, tiny_buckets());
  manual_seed(172);
  const Tensor x = randn({2, global, 5}, kFloat64), y = randn({2, global, 3}, kFloat64);
  (nn::F::mse_loss(reference->forward_tensor(x[0]), y[0]) + nn::F::mse_loss(reference->forward_tensor(x[1]), y[1]))
      .backward();
  Tensor a = nn::F::mse_loss(ddp.forward(mine(x[0], local)), mine(y[0], local));
  Tensor b = nn::F::mse_loss(ddp.forward(mine(x[1], local)), mine(y[1], local));
  (a + b).backward();
  const auto p = net->parameters(), ref = reference->parameters();
  for (size_t i = 0; i < p.size(); ++i) {
    CHECK_ALLCLOSE(p[i].grad(), ref[i].grad(), 1e-12, 0.0);
    CHECK(test::same_on_every_rank(p[i].grad()));
  }
  CHECK(ddp.comm_stats().backwards == 1);
  // The next step is an ordinary one.
  net->zero_grad();
  reference->zero_grad();
  nn::F::mse_loss(reference->forward_tensor(x[1]), y[1]).backward();
  nn::F::mse_loss(ddp.forward(mine(x[1], local)), mine(y[1], local)).backward();
  for (size_t i = 0; i < p.size(); ++i) CHECK_ALLCLOSE(p[i].grad(), ref[i].grad(), 1e-12, 0.0);
}

TEST_CASE("ddp: backward with create_graph averages the gradients, 6 times without zero_grad, in both modes", "[mpi]") {
  // PyTorch's test_ddp_create_graph: 6 backwards with create_graph through DDP, .grad accumulating
  // (no zero_grad). Here each rank has its own rows, so after each backward .grad must be the
  // whole batch's accumulated gradient; the model has a 0-dim parameter, as PyTorch's.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  for (const bool bucket_view : {false, true}) {
    INFO("gradient_as_bucket_view: " << bucket_view);
    manual_seed(181);
    auto reference = std::make_shared<Squared>();
    manual_seed(181);
    auto net = std::make_shared<Squared>();
    auto o = tiny_buckets();
    o.gradient_as_bucket_view = bucket_view;
    DistributedDataParallel ddp(net, o);
    manual_seed(182);
    const Tensor x = randn({6, global, 4}, kFloat64), y = randn({6, global, 3}, kFloat64);
    for (int64_t it = 0; it < 6; ++it) {
      nn::F::mse_loss(reference->forward(x[it]), y[it]).backward();
      nn::F::mse_loss(ddp.forward(mine(x[it], local)), mine(y[it], local))
          .backward(Tensor(), std::nullopt, /*create_graph=*/true);
      for (const auto& [name, p] : net->named_parameters()) {
        INFO(name << " after backward " << it);
        CHECK(p.requires_grad());
        REQUIRE(p.grad().defined());
        const Tensor grad = p.grad().detach();
        CHECK_ALLCLOSE(grad, reference->get_parameter(name).grad(), 1e-12, 0.0);
        CHECK(test::same_on_every_rank(grad));
      }
    }
    CHECK(ddp.comm_stats().backwards == 6);
    // A create_graph .grad's history saved the parameter p (pow's input): p -> .grad -> p, a
    // cycle (PyTorch warns of the same). Dropping .grad breaks it; LeakSanitizer would report it.
    net->zero_grad();
  }
}

TEST_CASE("ddp: a buffer rank 0 reassigns between steps is what the next forward broadcasts", "[mpi]") {
  // PyTorch's test_ddp_broadcast_buffer (DDP re-reads the module's buffers at each sync, issue
  // #63916): before each forward rank 0 puts a new tensor, its buffer + 1, in the buffer's slot;
  // the others keep their tensor, into which the broadcast writes rank 0's values. The forward
  // reads the buffer, so the averaged gradients equal one process's with rank 0's values too.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(191);
  auto reference = std::make_shared<WithBuffer>();  // rank 0's start
  manual_seed(191 + g.rank());                      // the others start elsewhere, buffer included
  auto net = std::make_shared<WithBuffer>();
  DistributedDataParallel ddp(net, tiny_buckets());
  CHECK_ALLCLOSE(net->scale(), reference->scale(), 0.0, 0.0);
  manual_seed(192);
  const Tensor x = randn({3, global, 4}, kFloat64), y = randn({3, global, 3}, kFloat64);
  for (int64_t it = 0; it < 3; ++it) {
    INFO("step " << it);
    reference->reassign(reference->scale() + 1.0);
    if (g.rank() == 0) net->reassign(net->scale() + 1.0);
    const Tensor in_slot = net->scale();
    reference->zero_grad();
    net->zero_grad();
    nn::F::mse_loss(reference->forward(x[it]), y[it]).backward();
    nn::F::mse_loss(ddp.forward(mine(x[it], local)), mine(y[it], local)).backward();
    CHECK(net->scale().is_same(in_slot));  // written into, not replaced
    CHECK_ALLCLOSE(net->scale(), reference->scale(), 0.0, 0.0);
    CHECK(test::same_on_every_rank(net->scale()));
    for (const auto& [name, p] : net->named_parameters()) {
      INFO(name);
      CHECK_ALLCLOSE(p.grad(), reference->get_parameter(name).grad(), 1e-12, 0.0);
      CHECK(test::same_on_every_rank(p.grad()));
    }
  }
}
