// ZeroRedundancyOptimizer (Note [Sharded optimizer state]): the partition rule by hand, and on
// 2 and 3 ranks (mpirun) training, state dicts and refusals against the plain optimizer over
// every parameter, the independent truth: bit for bit, since each element is updated by the
// same arithmetic on one rank and copied to the others.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ddp_test_util.h"
#include "support/expect_error.h"
#include "support/temp_dir.h"
#include "wick/nn/checkpoint.h"

using namespace wick;
using namespace wick::test::ddp;
using distributed::DistributedDataParallel;
using distributed::ZeroRedundancyOptimizer;

namespace {

/// make_mlp()'s parameters in two groups: the weights with the defaults, the biases with their
/// own learning rate and weight decay.
std::vector<optim::ParamGroup> two_groups(nn::Module& m) {
  std::vector<Tensor> weights, biases;
  for (const auto& [name, p] : m.named_parameters())
    (name.find("weight") != std::string::npos ? weights : biases).push_back(p);
  std::vector<optim::ParamGroup> groups;
  groups.emplace_back(weights);
  groups.emplace_back(biases, std::make_unique<optim::AdamOptions>(optim::AdamOptions(0.05).weight_decay(0.01)));
  return groups;
}

const optim::AdamOptions kDefaults = optim::AdamOptions(0.01).amsgrad(true);

/// One training step of DDP + the plain optimizer and of DDP + ZeRO on the same rows; then every
/// parameter of the ZeRO model equals the plain one's bit for bit, on every rank.
void step_both(DistributedDataParallel& plain_ddp, optim::Optimizer& plain, DistributedDataParallel& zero_ddp,
               ZeroRedundancyOptimizer& zero, const Tensor& x, const Tensor& y) {
  plain.zero_grad();
  zero.zero_grad();
  nn::F::mse_loss(plain_ddp.forward(x), y).backward();
  nn::F::mse_loss(zero_ddp.forward(x), y).backward();
  plain.step();
  zero.step();
  const auto pp = plain_ddp.module().parameters(), pz = zero_ddp.module().parameters();
  for (size_t i = 0; i < pp.size(); ++i) {
    CHECK_ALLCLOSE(pz[i], pp[i], 0.0, 0.0);
    CHECK(test::same_on_every_rank(pz[i]));
  }
}

}  // namespace

TEST_CASE("zero: zero_partition gives each parameter, largest first, to the rank with the fewest elements", "[zero]") {
  using Partition = std::vector<std::vector<std::vector<size_t>>>;
  const std::vector<std::vector<int64_t>> numels{{10, 3, 7, 7}, {5, 1}};
  // By hand. Two ranks: 10 -> r0, 7 (i2) -> r1, 7 (i3) -> r1 (7 < 10), 3 -> r0 (10 < 14); then the
  // second group: 5 -> r0 (13 < 14), 1 -> r1 (14 < 18).
  CHECK(distributed::zero_partition(numels, 2) == Partition{{{0, 1}, {0}}, {{2, 3}, {1}}});
  // Three ranks: 10 -> r0, 7 -> r1, 7 -> r2, 3 -> r1 (the lowest of the two 7s); 5 -> r2 (7 is
  // the least), 1 -> r0 (10, 10, 12: the lowest rank).
  CHECK(distributed::zero_partition(numels, 3) == Partition{{{0}, {1}}, {{2, 1}, {}}, {{3}, {0}}});
  CHECK(distributed::zero_partition(numels, 1) == Partition{{{0, 2, 3, 1}, {0, 1}}});
  test::expect_error<ValueError>([&] { distributed::zero_partition(numels, 0); }, {"world_size", "0"});
}

TEST_CASE("zero: DDP with ZeroRedundancyOptimizer trains as with the plain optimizer, each rank keeping its shard",
          "[mpi]") {
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(500);
  const Tensor x = randn({4, global, 5}, kFloat64), y = randn({4, global, 3}, kFloat64);
  std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
  for (int k = 0; k < 2; ++k) {
    manual_seed(501);
    nets.push_back(make_mlp());
  }
  DistributedDataParallel plain_ddp(nets[0], tiny_buckets()), zero_ddp(nets[1], tiny_buckets());
  optim::Adam plain(two_groups(*nets[0]), kDefaults);
  ZeroRedundancyOptimizer zero(two_groups(*nets[1]), distributed::optimizer_factory<optim::Adam>(kDefaults));
  const auto pp = nets[0]->parameters(), pz = nets[1]->parameters();
  for (int64_t k = 0; k < 4; ++k) {
    INFO("step " << k);
    step_both(plain_ddp, plain, zero_ddp, zero, mine(x[k], local), mine(y[k], local));
  }
  // Each parameter's state lives on its owner only, and every parameter has one owner.
  int64_t mine_count = 0;
  for (const Tensor& p : pz) {
    const bool owned = zero.owner(p) == g.rank();
    CHECK((zero.optim().state(p) != nullptr) == owned);
    mine_count += owned ? 1 : 0;
  }
  CHECK(zero.optim().size() == static_cast<size_t>(mine_count));
  Tensor total = full({1}, static_cast<double>(mine_count), kFloat64);
  g.all_reduce(total)->wait();
  CHECK(total.item<double>() == static_cast<double>(pz.size()));
}

TEST_CASE("zero: consolidate_state_dict gives the plain optimizer's state dict, load_state_dict takes one", "[mpi]") {
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  const int to = g.size() - 1;
  manual_seed(510);
  const Tensor x = randn({6, global, 5}, kFloat64), y = randn({6, global, 3}, kFloat64);
  std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
  for (int k = 0; k < 3; ++k) {
    manual_seed(511);
    nets.push_back(make_mlp());
  }
  DistributedDataParallel plain_ddp(nets[0], tiny_buckets()), zero_ddp(nets[1], tiny_buckets());
  optim::Adam plain(two_groups(*nets[0]), kDefaults);
  ZeroRedundancyOptimizer zero(two_groups(*nets[1]), distributed::optimizer_factory<optim::Adam>(kDefaults));
  auto train = [&](DistributedDataParallel& ddp, auto& opt, int64_t k) {
    opt.zero_grad();
    nn::F::mse_loss(ddp.forward(mine(x[k], local)), mine(y[k], local)).backward();
    opt.step();
  };
  for (int64_t k = 0; k < 3; ++k) {
    train(plain_ddp, plain, k);
    train(zero_ddp, zero, k);
  }
  zero.consolidate_state_dict(to);
  const optim::OptimizerStateDict expected = plain.state_dict();
  if (g.rank() == to) {
    const optim::OptimizerStateDict& got = zero.state_dict();
    CHECK(got.optimizer == expected.optimizer);
    CHECK(got.groups_json() == expected.groups_json());
    REQUIRE(got.state.keys() == expected.state.keys());  // the same entries in the same order
    for (const auto& [key, t] : expected.state) {
      INFO(key);
      CHECK_ALLCLOSE(got.state[key], t, 0.0, 0.0);
    }
    // Saved as a checkpoint, it loads into the plain optimizer.
    test::TempDir dir("wick-zero-test");
    nn::save(got, dir.file("zero.safetensors"));
    optim::Adam reader(two_groups(*nets[2]), kDefaults);
    nn::load(reader, dir.file("zero.safetensors"));
    CHECK(reader.state_dict().groups_json() == expected.groups_json());
    CHECK(reader.state_dict().state.keys() == expected.state.keys());
  } else {
    test::expect_error<StateError>([&] { zero.state_dict(); }, {"consolidate_state_dict"});
  }

  // A fresh model and optimizer load the plain optimizer's dict and train on with it.
  {
    NoGradGuard no_grad;
    const auto src = nets[0]->parameters(), dst = nets[2]->parameters();
    for (size_t i = 0; i < src.size(); ++i) Tensor(dst[i]).copy_(src[i]);
  }
  DistributedDataParallel loaded_ddp(nets[2], tiny_buckets());
  ZeroRedundancyOptimizer loaded(two_groups(*nets[2]), distributed::optimizer_factory<optim::Adam>(kDefaults));
  // Refused first: a state tensor of the wrong shape for parameter number 2, which one rank owns. Every
  // rank raises, and nothing is loaded anywhere.
  optim::OptimizerStateDict bad = expected;
  bad.state["state.2.exp_avg"] = zeros({3}, kF64);
  const bool owns_2 = loaded.owner(nets[2]->parameters()[4]) == g.rank();  // number 2: the third weight
  test::expect_error<ValueError>([&] { loaded.load_state_dict(bad); },
                                 owns_2 ? std::vector<std::string>{"exp_avg"}
                                        : std::vector<std::string>{"refused their part", "nothing was loaded"});
  for (const Tensor& p : nets[2]->parameters()) CHECK(loaded.optim().state(p) == nullptr);
  loaded.load_state_dict(expected);
  for (int64_t k = 3; k < 6; ++k) {
    INFO("step " << k);
    train(plain_ddp, plain, k);
    train(loaded_ddp, loaded, k);
    const auto pp = nets[0]->parameters(), pl = nets[2]->parameters();
    for (size_t i = 0; i < pp.size(); ++i) CHECK_ALLCLOSE(pl[i], pp[i], 0.0, 0.0);
  }
  // A step makes the consolidated state stale.
  train(zero_ddp, zero, 3);
  test::expect_error<StateError>([&] { zero.state_dict(); }, {"consolidate_state_dict"});
}

TEST_CASE("zero: refusals leave every rank as it was", "[mpi]") {
  auto& g = test::world();
  {  // fewer parameters than ranks: every rank refuses, the same way
    auto one = std::make_shared<nn::LinearImpl>(nn::LinearOptions(4, 2).bias(false), kF64);
    test::expect_error<ValueError>(
        [&] {
          ZeroRedundancyOptimizer z(one->parameters(),
                                    distributed::optimizer_factory<optim::SGD>(optim::SGDOptions(0.1)));
        },
        {"would own no parameter", "1 parameters"});
  }
  manual_seed(520);
  auto net = make_mlp();
  const auto params = net->parameters();
  test::expect_error<ValueError>(
      [&] {
        ZeroRedundancyOptimizer z(std::vector<Tensor>{params[0], params[1], params[2], params[3], params[0]},
                                  distributed::optimizer_factory<optim::SGD>(optim::SGDOptions(0.1)));
      },
      {"appears more than once"});
  {  // a share one rank's optimizer refuses (a non-leaf): that rank says why, every rank raises
    const Tensor doubled = params[0] * 2.0;
    const std::vector<Tensor> with_non_leaf{doubled, params[1], params[2], params[3], params[4], params[5]};
    std::vector<int64_t> numels;
    for (const Tensor& p : with_non_leaf) numels.push_back(p.numel());
    const auto partition = distributed::zero_partition({numels}, g.size());
    const auto& share = partition[static_cast<size_t>(g.rank())][0];
    const bool mine = std::find(share.begin(), share.end(), size_t{0}) != share.end();  // the non-leaf is here
    test::expect_error<ValueError>(
        [&] {
          ZeroRedundancyOptimizer z(with_non_leaf, distributed::optimizer_factory<optim::SGD>(optim::SGDOptions(0.1)));
        },
        mine ? std::vector<std::string>{"not a leaf"} : std::vector<std::string>{"refused their share"});
  }
  ZeroRedundancyOptimizer zero(params, distributed::optimizer_factory<optim::SGD>(optim::SGDOptions(0.1)));
  test::expect_error<ValueError>([&] { zero.consolidate_state_dict(g.size()); }, {"consolidate_state_dict"});
  // One rank's parameter gets data of another shape (set_data keeps the old gradient): its
  // rank cannot update it, so no rank updates anything.
  for (const Tensor& p : params) Tensor(p).set_grad(full(p.sizes(), 1.0, kFloat64));
  std::vector<Tensor> before;
  for (const Tensor& p : params) before.push_back(p.detach().clone());
  Tensor odd = params[0];
  for (const Tensor& p : params)
    if (zero.owner(p) == g.size() - 1) odd = p;
  const Tensor original = odd.detach();
  if (g.rank() == g.size() - 1) odd.set_data(zeros({1}, kFloat64));
  test::expect_error<StateError>([&] { zero.step(); }, {"cannot update", "nothing was updated"});
  if (g.rank() == g.size() - 1) odd.set_data(original);
  for (size_t i = 0; i < params.size(); ++i) CHECK_ALLCLOSE(params[i], before[i], 0.0, 0.0);
  zero.step();  // and the next step works: SGD moves every parameter by -0.1 on every rank
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK_ALLCLOSE(params[i], before[i] - 0.1, 0.0, 0.0);
    CHECK(test::same_on_every_rank(params[i]));
  }
}

namespace {

/// Whether `params` lie back to back in memory, in some order (one flat tensor's slots).
bool packed(const std::vector<Tensor>& params) {
  if (params.empty()) return true;
  auto lo = reinterpret_cast<uintptr_t>(params[0].data_ptr()), hi = lo;
  size_t bytes = 0;
  for (const Tensor& p : params) {
    const auto at = reinterpret_cast<uintptr_t>(p.data_ptr());
    lo = std::min(lo, at);
    hi = std::max(hi, at + p.nbytes());
    bytes += p.nbytes();
  }
  return hi - lo == bytes;
}

}  // namespace

TEST_CASE("zero: parameters_as_bucket_view packs each rank's parameters and trains as the plain optimizer", "[mpi]") {
  // Note [Parameters as bucket views]: the same training as without the option, bit for bit,
  // against DDP + plain Adam; each owner's parameters share one flat tensor; a parameter given
  // new data of its own shape is packed again at the next step (else the broadcasts would miss
  // it on the other ranks); one given another shape fails every rank's step, nothing updated.
  auto& g = test::world();
  const int64_t local = 3, global = local * g.size();
  manual_seed(520);
  const Tensor x = randn({6, global, 5}, kFloat64), y = randn({6, global, 3}, kFloat64);
  std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
  for (int k = 0; k < 2; ++k) {
    manual_seed(521);
    nets.push_back(make_mlp());
  }
  DistributedDataParallel plain_ddp(nets[0], tiny_buckets()), zero_ddp(nets[1], tiny_buckets());
  optim::Adam plain(two_groups(*nets[0]), kDefaults);
  distributed::ZeroRedundancyOptimizerOptions options;
  options.parameters_as_bucket_view = true;
  ZeroRedundancyOptimizer zero(two_groups(*nets[1]), distributed::optimizer_factory<optim::Adam>(kDefaults), options);
  const auto pp = nets[0]->parameters(), pz = nets[1]->parameters();
  auto by_owner = [&] {
    std::vector<std::vector<Tensor>> out(static_cast<size_t>(g.size()));
    for (const Tensor& p : pz) out[static_cast<size_t>(zero.owner(p))].push_back(p);
    return out;
  };
  for (const auto& params : by_owner()) CHECK(packed(params));
  for (size_t i = 0; i < pp.size(); ++i) CHECK_ALLCLOSE(pz[i], pp[i], 0.0, 0.0);  // the values kept
  for (int64_t k = 0; k < 6; ++k) {
    INFO("step " << k);
    if (k == 3) {  // every rank gives the last parameter a copy of its own data
      NoGradGuard no_grad;
      Tensor p = pz.back();
      p.set_data(p.detach().clone());
      CHECK_FALSE(packed(by_owner()[static_cast<size_t>(zero.owner(p))]));
    }
    step_both(plain_ddp, plain, zero_ddp, zero, mine(x[k], local), mine(y[k], local));
    for (const auto& params : by_owner()) CHECK(packed(params));
  }
  // Another shape on one rank: every rank refuses, nothing moves.
  std::vector<Tensor> before;
  for (const Tensor& p : pz) before.push_back(p.detach().clone());
  Tensor odd = pz.front();
  const Tensor original = odd.detach();
  if (g.rank() == 0) odd.set_data(zeros({2}, kFloat64));
  test::expect_error<StateError>([&] { zero.step(); },
                                 g.rank() == 0 ? std::vector<std::string>{"parameters_as_bucket_view packed it"}
                                               : std::vector<std::string>{"rank(s) 0 cannot update"});
  if (g.rank() == 0) odd.set_data(original);
  for (size_t i = 0; i < pz.size(); ++i) CHECK_ALLCLOSE(pz[i], before[i], 0.0, 0.0);
}

TEST_CASE("zero: add_param_group partitions the new group and trains on as the plain optimizer", "[mpi]") {
  // PyTorch's add_param_group: the weights first, the biases (with their own options) added
  // after 2 steps, on ZeRO (with and without parameters_as_bucket_view) and on plain Adam at the
  // same point: bit for bit after every step, every parameter with one owner, the consolidated
  // state the plain one's. Refusals on every rank, with nothing added.
  auto& g = test::world();
  const int64_t local = 2, global = local * g.size();
  manual_seed(530);
  const Tensor x = randn({5, global, 5}, kFloat64), y = randn({5, global, 3}, kFloat64);
  for (const bool views : {false, true}) {
    INFO("parameters_as_bucket_view " << views);
    std::vector<std::shared_ptr<nn::SequentialImpl>> nets;
    for (int k = 0; k < 2; ++k) {
      manual_seed(531);
      nets.push_back(make_mlp());
    }
    auto split = [](nn::Module& m) {
      std::vector<Tensor> weights, biases;
      for (const auto& [name, p] : m.named_parameters())
        (name.find("weight") != std::string::npos ? weights : biases).push_back(p);
      return std::make_pair(weights, biases);
    };
    // Plain variables: clang 14 does not capture structured bindings in lambdas.
    const auto split0 = split(*nets[0]), split1 = split(*nets[1]);
    const std::vector<Tensor>& w0 = split0.first;
    const std::vector<Tensor>& b0 = split0.second;
    const std::vector<Tensor>& w1 = split1.first;
    const std::vector<Tensor>& b1 = split1.second;
    DistributedDataParallel plain_ddp(nets[0], tiny_buckets()), zero_ddp(nets[1], tiny_buckets());
    optim::Adam plain(w0, kDefaults);
    distributed::ZeroRedundancyOptimizerOptions options;
    options.parameters_as_bucket_view = views;
    ZeroRedundancyOptimizer zero(w1, distributed::optimizer_factory<optim::Adam>(kDefaults), options);
    const auto pp = nets[0]->parameters(), pz = nets[1]->parameters();
    for (int64_t k = 0; k < 5; ++k) {
      INFO("step " << k);
      if (k == 2) {
        const auto bias_options = optim::AdamOptions(0.05).weight_decay(0.01);
        // Refused on every rank alike, nothing added: a parameter already here, and options of
        // another optimizer class.
        test::expect_error<ValueError>(
            [&] {
              zero.add_param_group(optim::ParamGroup({b1[0], w1[0]}));
            },
            {"already in this optimizer"});
        test::expect_error<TypeError>(
            [&] {
              zero.add_param_group(optim::ParamGroup(b1, std::make_unique<optim::SGDOptions>(optim::SGDOptions(0.1))));
            },
            {"SGDOptions"});
        CHECK(zero.param_groups().size() == 1);
        CHECK(zero.optim().param_groups().size() == 1);
        plain.add_param_group(optim::ParamGroup(b0, std::make_unique<optim::AdamOptions>(bias_options)));
        zero.add_param_group(optim::ParamGroup(b1, std::make_unique<optim::AdamOptions>(bias_options)));
        CHECK(zero.param_groups().size() == 2);
        CHECK(zero.optim().param_groups().size() == 2);
      }
      step_both(plain_ddp, plain, zero_ddp, zero, mine(x[k], local), mine(y[k], local));
    }
    // Every parameter has one owner, each owner's state is the plain optimizer's.
    int64_t owned = 0;
    for (const Tensor& p : pz) owned += zero.owner(p) == g.rank() ? 1 : 0;
    CHECK(zero.optim().size() == static_cast<size_t>(owned));
    Tensor total = full({1}, static_cast<double>(owned), kFloat64);
    g.all_reduce(total)->wait();
    CHECK(total.item<double>() == static_cast<double>(pz.size()));
    if (views) {
      std::vector<std::vector<Tensor>> by_owner(static_cast<size_t>(g.size()));
      for (const Tensor& p : pz) by_owner[static_cast<size_t>(zero.owner(p))].push_back(p);
      for (const auto& params : by_owner) CHECK(packed(params));
    }
    zero.consolidate_state_dict(0);
    if (g.rank() == 0) {
      const optim::OptimizerStateDict want = plain.state_dict();
      const optim::OptimizerStateDict& got = zero.state_dict();
      CHECK(got.groups_json() == want.groups_json());
      REQUIRE(got.state.keys() == want.state.keys());
      for (const auto& [key, t] : want.state) {
        INFO(key);
        CHECK_ALLCLOSE(got.state[key], t, 0.0, 0.0);
      }
    }
  }
}
