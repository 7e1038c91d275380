// ZeroRedundancyOptimizer (zero_redundancy_optimizer.h, Note [Sharded optimizer state]).
#include "wick/distributed/zero_redundancy_optimizer.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <string>
#include <unordered_set>

#include "host_collectives.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/distributed/init.h"
#include "wick/nn/optim/param_utils.h"
#include "wick/nn/safetensors.h"

namespace wick::distributed {

std::vector<std::vector<std::vector<size_t>>> zero_partition(const std::vector<std::vector<int64_t>>& group_numels,
                                                             int world_size) {
  WICK_CHECK(world_size >= 1, "zero_partition: world_size must be at least 1, got {}", world_size);
  const auto world = static_cast<size_t>(world_size);
  std::vector<std::vector<std::vector<size_t>>> out(world, std::vector<std::vector<size_t>>(group_numels.size()));
  std::vector<int64_t> sizes(world, 0);
  for (size_t g = 0; g < group_numels.size(); ++g) {
    std::vector<size_t> order(group_numels[g].size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return group_numels[g][a] > group_numels[g][b]; });
    for (size_t i : order) {
      size_t rank = 0;
      for (size_t r = 1; r < world; ++r)
        if (sizes[r] < sizes[rank]) rank = r;
      out[rank][g].push_back(i);
      sizes[rank] += group_numels[g][i];
    }
  }
  return out;
}

namespace {

std::vector<optim::ParamGroup> one_group(std::vector<Tensor> params) {
  std::vector<optim::ParamGroup> groups;
  groups.emplace_back(std::move(params));
  return groups;
}

/// Bytes as int64 words (the last one zero-padded) on `device`, so that any backend can
/// broadcast them.
Tensor words_of(const std::string& bytes, Device device) {
  std::vector<int64_t> words((bytes.size() + 7) / 8, 0);
  if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  return native::from_blob_copy(words.data(), {static_cast<int64_t>(words.size())}, kInt64, kCPU).to(device);
}

/// Waits for every work, then rethrows the first failure (so no tensor is still in use).
void wait_all(std::vector<std::shared_ptr<Work>>& works) {
  std::exception_ptr failure;
  for (auto& w : works) {
    try {
      w->wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

/// A group over `params` with `like`'s options (none when it has none).
optim::ParamGroup with_options_of(const optim::ParamGroup& like, std::vector<Tensor> params) {
  return like.has_options() ? optim::ParamGroup(std::move(params), like.options().clone())
                            : optim::ParamGroup(std::move(params));
}

}  // namespace

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<Tensor> params, const OptimizerFactory& make,
                                                 ZeroRedundancyOptimizerOptions options)
    : ZeroRedundancyOptimizer(one_group(std::move(params)), make, std::move(options)) {}

ZeroRedundancyOptimizer::ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups, const OptimizerFactory& make,
                                                 ZeroRedundancyOptimizerOptions options)
    : groups_(std::move(groups)),
      make_(make),
      group_(options.process_group ? std::move(options.process_group) : default_group_ptr()) {
  WICK_CHECK(make != nullptr, "ZeroRedundancyOptimizer: the optimizer factory is empty");
  const int world = group_->size(), rank = group_->rank();
  std::vector<std::vector<int64_t>> numels(groups_.size());
  std::unordered_set<const TensorImpl*> seen;
  size_t total = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t i = 0; i < groups_[g].params().size(); ++i) {
      const Tensor& p = groups_[g].params()[i];
      WICK_CHECK(p.defined(), "ZeroRedundancyOptimizer: parameter {} of group {} is undefined", i, g);
      WICK_CHECK(seen.insert(p.impl()).second,
                 "ZeroRedundancyOptimizer: parameter {} of group {} (shape [{}]) appears more than once in the groups",
                 i, g, fmt::join(p.sizes(), ", "));
      group_->check_operand("ZeroRedundancyOptimizer", p);
      numels[g].push_back(p.numel());
      ++total;
    }
  }
  const auto partition = zero_partition(numels, world);
  for (int r = 0; r < world; ++r) {
    size_t count = 0;
    for (const auto& in_group : partition[static_cast<size_t>(r)]) count += in_group.size();
    WICK_CHECK(count > 0,
               "ZeroRedundancyOptimizer: rank {} would own no parameter ({} parameters over {} ranks); every rank "
               "needs at least one: use fewer ranks, or the plain optimizer",
               r, total, world);
  }
  std::vector<int64_t> first_number(groups_.size(), 0);  // global numbering over the groups, as state dicts
  for (size_t g = 1; g < groups_.size(); ++g)
    first_number[g] = first_number[g - 1] + static_cast<int64_t>(groups_[g - 1].params().size());
  owned_.resize(static_cast<size_t>(world));
  owner_by_number_.assign(total, -1);
  for (int r = 0; r < world; ++r)
    for (size_t g = 0; g < groups_.size(); ++g)
      for (size_t i : partition[static_cast<size_t>(r)][g]) {
        owned_[static_cast<size_t>(r)].push_back(groups_[g].params()[i]);
        owner_by_number_[static_cast<size_t>(first_number[g]) + i] = r;
      }
  std::vector<optim::ParamGroup> local;
  for (size_t g = 0; g < groups_.size(); ++g) {
    std::vector<Tensor> params;
    for (size_t i : partition[static_cast<size_t>(rank)][g]) {
      params.push_back(groups_[g].params()[i]);
      local_numbers_.push_back(first_number[g] + static_cast<int64_t>(i));
    }
    local.push_back(with_options_of(groups_[g], std::move(params)));
  }
  // The local optimizer checks only this rank's share (leaves, floating point, options): the
  // ranks agree before any goes on, so that a share one rank refuses fails every rank.
  std::exception_ptr refused;
  try {
    local_ = make(std::move(local));
    WICK_CHECK(local_ != nullptr, "ZeroRedundancyOptimizer: the optimizer factory returned no optimizer");
    WICK_CHECK(local_->param_groups().size() == groups_.size(),
               "ZeroRedundancyOptimizer: the factory's optimizer has {} parameter groups for the {} it was given; it "
               "must keep the groups it is given",
               local_->param_groups().size(), groups_.size());
  } catch (const Error&) {
    refused = std::current_exception();
  }
  const auto failed = detail::flagged_ranks(*group_, refused != nullptr);
  if (refused) std::rethrow_exception(refused);
  WICK_CHECK(failed.empty(),
             "ZeroRedundancyOptimizer: rank(s) {} refused their share of the parameters (their error says why); give "
             "every rank parameters and options its optimizer accepts",
             fmt::join(failed, ", "));
  if (options.parameters_as_bucket_view) build_param_buckets();
}

// Note [Parameters as bucket views]
// With parameters_as_bucket_view (PyTorch's option), each rank's parameters are packed, in the
// order that rank owns them, into one flat tensor per dtype and device, and every parameter is
// made a view of its slot (Tensor::set_data: the parameter keeps its identity, gradient and
// hooks, so DistributedDataParallel and the local optimizer hold it as before). step() then
// broadcasts one tensor per owner instead of one per parameter: W collectives instead of P. The
// values are those of the default, bit for bit. A parameter that stopped being a view of its
// slot (a set_data, Module::to() with the same dtype) would silently miss the broadcasts, so
// step() first makes every parameter a view again (copying its values into the slot); one whose
// dtype, device or shape changed makes every rank's step() raise before anything is updated.
void ZeroRedundancyOptimizer::build_param_buckets() {
  NoGradGuard no_grad;
  for (size_t r = 0; r < owned_.size(); ++r) {
    std::vector<ParamBucket> mine;  // this owner's, one per dtype and device, in first appearance
    for (const Tensor& p : owned_[r]) {
      auto it = std::find_if(mine.begin(), mine.end(), [&](const ParamBucket& b) {
        return b.params[0].dtype() == p.dtype() && b.params[0].device() == p.device();
      });
      if (it == mine.end()) {
        mine.push_back(ParamBucket{static_cast<int>(r), Tensor(), {}, {}});
        it = std::prev(mine.end());
      }
      it->params.push_back(p);
    }
    for (ParamBucket& b : mine) {
      int64_t total = 0;
      for (const Tensor& p : b.params) total += p.numel();
      b.flat = empty({total}, TensorOptions(b.params[0].dtype()).device(b.params[0].device()));
      int64_t at = 0;
      for (Tensor& p : b.params) {
        b.slots.push_back(b.flat.narrow(0, at, p.numel()).view(p.sizes()));
        at += p.numel();
        b.slots.back().copy_(p.detach());
        p.set_data(b.slots.back());
      }
      param_buckets_.push_back(std::move(b));
    }
  }
}

std::string ZeroRedundancyOptimizer::restore_param_views() {
  NoGradGuard no_grad;
  for (ParamBucket& b : param_buckets_) {
    for (size_t k = 0; k < b.params.size(); ++k) {
      Tensor& p = b.params[k];
      Tensor& slot = b.slots[k];
      if (p.dtype() != slot.dtype() || p.device() != slot.device() || p.sizes() != slot.sizes())
        return fmt::format(
            "a parameter owned by rank {} is now {} on {} with shape [{}], but "
            "parameters_as_bucket_view packed it as {} on {} with shape [{}]",
            b.owner, p.dtype(), p.device(), fmt::join(p.sizes(), ", "), slot.dtype(), slot.device(),
            fmt::join(slot.sizes(), ", "));
      if (p.data_ptr() == slot.data_ptr() && p.is_contiguous()) continue;
      slot.copy_(p.detach());
      p.set_data(slot);
    }
  }
  return {};
}

int ZeroRedundancyOptimizer::owner(const Tensor& p) const {
  size_t number = 0;
  for (const auto& g : groups_)
    for (const auto& q : g.params()) {
      if (q.is_same(p)) return owner_by_number_[number];
      ++number;
    }
  WICK_FAIL("ZeroRedundancyOptimizer::owner: the tensor (shape [{}]) is not one of this optimizer's parameters",
            fmt::join(p.sizes(), ", "));
}

void ZeroRedundancyOptimizer::step() {
  notify_join_context({});
  step_shard();
}

// Note [A joined rank's shard]
// Under a Join, a rank that has run out of data still owns its shard: the ranks still training
// wait for its broadcasts in every step(). Its join hook (PyTorch's _ZeROJoinHook.main_hook)
// runs the same step: the agreement, the local optimizer over its shard with the .grad it
// holds, the broadcasts. With a DistributedDataParallel in the same Join, that .grad is the
// synchronised gradient of the active ranks' backward (the joined rank's shadow backward leaves
// it there, Note [Join] in distributed_data_parallel.cpp), so the shard is updated exactly as if
// its owner were still training: DDP + ZeroRedundancyOptimizer under join equal DDP + the plain
// optimizer under join on the ranks still training, bit for bit (PyTorch's DDP join hook
// discards the synchronised gradients, and its test sets the joined rank's gradients by hand).
// Without DDP, .grad is whatever the joined rank left there.
void ZeroRedundancyOptimizer::join_main_hook(const JoinNotification&) { step_shard(); }

void ZeroRedundancyOptimizer::step_shard() {
  consolidated_.reset();
  // Every rank agrees before any changes anything: a gradient that cannot update its parameter
  // on one rank would otherwise leave that rank's shard stale while the others broadcast theirs.
  std::string problem = restore_param_views();
  for (const Tensor& p : owned_[static_cast<size_t>(group_->rank())]) {
    if (!problem.empty()) break;
    const Tensor& g = p.grad();
    if (g.defined() && (g.sizes() != p.sizes() || g.dtype() != p.dtype() || g.device() != p.device())) {
      problem = fmt::format("a gradient of shape [{}], {} on {} for a parameter of shape [{}], {} on {}",
                            fmt::join(g.sizes(), ", "), g.dtype(), g.device(), fmt::join(p.sizes(), ", "), p.dtype(),
                            p.device());
      break;
    }
  }
  const auto failed = detail::flagged_ranks(*group_, !problem.empty());
  WICK_CHECK_STATE(failed.empty(),
                   "ZeroRedundancyOptimizer::step: rank(s) {} cannot update their parameters{}; nothing was updated on "
                   "any rank",
                   fmt::join(failed, ", "), problem.empty() ? std::string() : " (this rank: " + problem + ")");
  local_->step();
  NoGradGuard no_grad;
  std::vector<std::shared_ptr<Work>> works;
  if (!param_buckets_.empty()) {
    for (const ParamBucket& b : param_buckets_) works.push_back(group_->broadcast(b.flat, b.owner));
  } else {
    for (size_t r = 0; r < owned_.size(); ++r)
      for (const Tensor& p : owned_[r]) works.push_back(group_->broadcast(p, static_cast<int>(r)));
  }
  wait_all(works);
}

void ZeroRedundancyOptimizer::zero_grad(bool set_to_none) {
  for (const auto& g : groups_) optim::zero_grad_of(g.params(), set_to_none);
}

void ZeroRedundancyOptimizer::add_param_group(optim::ParamGroup group) {
  // Every check sees the whole group, so every rank decides alike without communicating: the
  // parameters against the ones here, and a throwaway optimizer from the factory over the whole
  // group for what the local optimizer would check of its share (leaves, floating point,
  // options). Only then does anything change.
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params()) seen.insert(p.impl());
  std::vector<int64_t> new_numels;
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    WICK_CHECK(p.defined(), "ZeroRedundancyOptimizer::add_param_group: parameter {} of the new group is undefined", i);
    WICK_CHECK(seen.insert(p.impl()).second,
               "ZeroRedundancyOptimizer::add_param_group: parameter {} of the new group (shape [{}]) is already in "
               "this optimizer's groups or given twice",
               i, fmt::join(p.sizes(), ", "));
    group_->check_operand("ZeroRedundancyOptimizer::add_param_group", p);
    new_numels.push_back(p.numel());
  }
  {
    std::vector<optim::ParamGroup> whole;
    whole.push_back(group);         // a copy, options cloned
    (void)make_(std::move(whole));  // raises what the local optimizer would raise for any share
  }
  std::vector<std::vector<int64_t>> numels;
  for (const auto& g : groups_) {
    numels.emplace_back();
    for (const auto& p : g.params()) numels.back().push_back(p.numel());
  }
  numels.push_back(new_numels);
  const auto partition = zero_partition(numels, group_->size());        // the earlier groups' as before
  const int64_t first = static_cast<int64_t>(owner_by_number_.size());  // the new group's global numbers follow
  owner_by_number_.resize(owner_by_number_.size() + group.params().size(), -1);
  std::vector<Tensor> share;
  for (int r = 0; r < group_->size(); ++r)
    for (size_t i : partition[static_cast<size_t>(r)].back()) {
      const Tensor& p = group.params()[i];
      owned_[static_cast<size_t>(r)].push_back(p);
      owner_by_number_[static_cast<size_t>(first) + i] = r;
      if (r == group_->rank()) {
        share.push_back(p);
        local_numbers_.push_back(first + static_cast<int64_t>(i));
      }
    }
  local_->add_param_group(with_options_of(group, std::move(share)));
  groups_.push_back(std::move(group));
  consolidated_.reset();
  if (!param_buckets_.empty()) {
    param_buckets_.clear();
    build_param_buckets();
  }
}

void ZeroRedundancyOptimizer::consolidate_state_dict(int to) {
  const int world = group_->size(), rank = group_->rank();
  WICK_CHECK(to >= 0 && to < world, "ZeroRedundancyOptimizer::consolidate_state_dict: rank {} is not in [0, {})", to,
             world);
  consolidated_.reset();
  // This rank's shard, numbered over the full groups.
  const optim::OptimizerStateDict mine = local_->state_dict();
  std::vector<serialize::NamedTensor> named;
  for (const auto& [key, t] : mine.state) {
    int64_t id = 0;
    std::string name;
    WICK_CHECK(optim::parse_state_key(key, id, name) && id < static_cast<int64_t>(local_numbers_.size()),
               "ZeroRedundancyOptimizer: the local optimizer's state dict has a key '{}' of another form", key);
    named.push_back({fmt::format("state.{}.{}", local_numbers_[static_cast<size_t>(id)], name), t});
  }
  const std::string bytes = serialize::serialize_safetensors(named);
  // Every shard's size at once, then each shard's bytes from its rank (every rank takes part;
  // only `to` keeps them).
  const int64_t my_size = static_cast<int64_t>(bytes.size());
  const std::vector<Tensor> sizes = detail::gather_on_cpu(*group_, native::from_blob_copy(&my_size, {1}, kInt64, kCPU));
  std::vector<std::vector<std::pair<std::string, Tensor>>> by_number(owner_by_number_.size());
  for (int r = 0; r < world; ++r) {
    const int64_t n = sizes[static_cast<size_t>(r)].item<int64_t>();
    Tensor words = r == rank ? words_of(bytes, group_->device())
                             : zeros({(n + 7) / 8}, TensorOptions(kInt64).device(group_->device()));
    group_->broadcast(words, r)->wait();
    if (rank != to) continue;
    const Tensor host = words.to(kCPU).contiguous();
    const auto shard = serialize::parse_safetensors(host.data_ptr(), static_cast<size_t>(n),
                                                    fmt::format("rank {}'s optimizer state", r));
    for (const auto& [key, t] : shard.tensors) {
      int64_t id = 0;
      std::string name;
      WICK_CHECK(optim::parse_state_key(key, id, name) && id < static_cast<int64_t>(by_number.size()),
                 "ZeroRedundancyOptimizer: rank {}'s optimizer state has a key '{}' of another form", r, key);
      by_number[static_cast<size_t>(id)].emplace_back(key, t);
    }
  }
  if (rank != to) return;
  optim::OptimizerStateDict all;
  all.optimizer = mine.optimizer;
  for (auto& entries : by_number)
    for (auto& [key, t] : entries) all.state.insert(key, std::move(t));
  int64_t number = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    optim::ParamGroupState gs;
    gs.options = local_->param_groups()[g].options().values();
    for (size_t i = 0; i < groups_[g].params().size(); ++i) gs.params.push_back(number++);
    all.param_groups.push_back(std::move(gs));
  }
  consolidated_ = std::move(all);
}

const optim::OptimizerStateDict& ZeroRedundancyOptimizer::state_dict() const {
  WICK_CHECK_STATE(consolidated_.has_value(),
                   "ZeroRedundancyOptimizer::state_dict: no consolidated state on rank {}; call "
                   "consolidate_state_dict(to) on every rank first, then state_dict() on rank `to` (again after "
                   "every step())",
                   group_->rank());
  return *consolidated_;
}

void ZeroRedundancyOptimizer::load_state_dict(const optim::OptimizerStateDict& dict) {
  // This rank's part, numbered as the local optimizer numbers its parameters. Everything about
  // the dict as a whole is checked alike on every rank; the local optimizer checks the rest.
  std::exception_ptr refused;  // this rank's own error, raised once every rank has answered
  optim::Optimizer::PendingLoad pending;
  try {
    WICK_CHECK(dict.param_groups.size() == groups_.size(),
               "ZeroRedundancyOptimizer::load_state_dict: the state dict has {} parameter groups, this optimizer {}",
               dict.param_groups.size(), groups_.size());
    std::vector<int64_t> global_to_local(owner_by_number_.size(), -1);
    optim::OptimizerStateDict part;
    part.optimizer = dict.optimizer;
    size_t local = 0;  // the local optimizer numbers its parameters over its groups in order
    for (size_t g = 0; g < groups_.size(); ++g) {
      WICK_CHECK(dict.param_groups[g].params.size() == groups_[g].params().size(),
                 "ZeroRedundancyOptimizer::load_state_dict: group {} of the state dict has {} parameters, this "
                 "optimizer's {}",
                 g, dict.param_groups[g].params.size(), groups_[g].params().size());
      optim::ParamGroupState gs;
      gs.options = dict.param_groups[g].options;
      for (size_t k = 0; k < local_->param_groups()[g].params().size(); ++k, ++local) {
        global_to_local[static_cast<size_t>(local_numbers_[local])] = static_cast<int64_t>(local);
        gs.params.push_back(static_cast<int64_t>(local));
      }
      part.param_groups.push_back(std::move(gs));
    }
    for (const auto& [key, t] : dict.state) {
      int64_t id = 0;
      std::string name;
      WICK_CHECK(optim::parse_state_key(key, id, name) && id < static_cast<int64_t>(global_to_local.size()),
                 "ZeroRedundancyOptimizer::load_state_dict: the state dict has a key '{}'; expected "
                 "state.<parameter number below {}>.<name>",
                 key, global_to_local.size());
      const int64_t mine = global_to_local[static_cast<size_t>(id)];
      if (mine >= 0) part.state.insert(fmt::format("state.{}.{}", mine, name), t);
    }
    pending = local_->prepare_load_state_dict(part);
  } catch (const Error&) {
    refused = std::current_exception();
  }
  const auto failed = detail::flagged_ranks(*group_, refused != nullptr);
  if (refused) std::rethrow_exception(refused);
  WICK_CHECK(failed.empty(),
             "ZeroRedundancyOptimizer::load_state_dict: rank(s) {} refused their part of the state dict (their error "
             "says why); nothing was loaded on any rank",
             fmt::join(failed, ", "));
  local_->apply_load(std::move(pending));
  consolidated_.reset();
}

}  // namespace wick::distributed
