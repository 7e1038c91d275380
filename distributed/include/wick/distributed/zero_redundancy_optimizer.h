#pragma once
// ZeroRedundancyOptimizer: an optimizer whose state is sharded across the ranks
// (torch.distributed.optim.ZeroRedundancyOptimizer, PyTorch 1.13).
//
// Note [Sharded optimizer state]
// Data parallelism keeps a full copy of the optimizer's state on every rank: Adam's exp_avg and
// exp_avg_sq are twice the parameters, on each of W ranks. ZeroRedundancyOptimizer gives each
// parameter one owner rank (zero_partition: largest first, each to the rank with the fewest
// elements so far, as PyTorch's _partition_parameters) and builds on every rank a local
// optimizer (the one the factory makes) over the parameters it owns, group by group, so each
// rank holds about 1/W of the state. step() runs the local optimizer, which updates the owned
// parameters from their (already averaged: DistributedDataParallel) gradients, then every rank
// broadcasts the parameters it owns, so that every rank ends with every updated parameter. The
// result equals the plain optimizer's over all the parameters, bit for bit: each element is
// updated by the same arithmetic on exactly one rank and copied to the others.
// State dicts keep the plain optimizer's layout: consolidate_state_dict(to) (a collective)
// sends every rank's shard to rank `to`, whose state_dict() then numbers the parameters over the
// full groups, as the plain optimizer would (loadable by it, and the other way round);
// load_state_dict(dict) takes such a full dict on every rank, and each rank keeps its shard.
// A dict that any rank refuses changes nothing on any rank.
// Learning-rate schedulers drive optim(), the local optimizer: every rank schedules its own
// shard alike (the groups are the same on every rank, some possibly empty).
// Where the API differs from PyTorch's, and why: PyTorch's constructor takes the optimizer class
// and its keyword arguments; C++ has neither, so a factory makes the local optimizer
// (optimizer_factory<Opt>(defaults) is the usual one). PyTorch's ZeroRedundancyOptimizer is an
// Optimizer itself, driven by schedulers; wick's Optimizer keeps its state and state dict for the
// parameters it updates, so this class wraps one rather than being one, and schedulers drive
// optim().
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "wick/distributed/join.h"
#include "wick/distributed/process_group.h"
#include "wick/nn/optim/optimizer.h"

namespace wick::distributed {

/// Makes the local optimizer over the given groups (each group keeps its own options).
using OptimizerFactory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<optim::ParamGroup>)>;

/// An OptimizerFactory for `Opt` with `defaults` (optimizer_factory<optim::Adam>(AdamOptions(1e-3))).
template <class Opt, class Options>
OptimizerFactory optimizer_factory(Options defaults) {
  return [defaults](std::vector<optim::ParamGroup> groups) -> std::unique_ptr<optim::Optimizer> {
    return std::make_unique<Opt>(std::move(groups), defaults);
  };
}

/// The owner of each parameter: result[rank][group] lists indices into that group's parameters.
/// Within each group, parameters largest first (ties in their order) each go to the rank with
/// the fewest elements so far over all groups (ties: the lowest rank), as PyTorch 1.13's
/// _partition_parameters. ValueError when world_size < 1.
std::vector<std::vector<std::vector<size_t>>> zero_partition(const std::vector<std::vector<int64_t>>& group_numels,
                                                             int world_size);

struct ZeroRedundancyOptimizerOptions {
  /// The group to shard over; null: the default group (init_process_group()).
  std::shared_ptr<ProcessGroup> process_group;
  /// Pack each rank's parameters (per dtype and device) into one flat tensor and make the
  /// parameters views of it, so that step() broadcasts one tensor per rank instead of one per
  /// parameter (PyTorch's parameters_as_bucket_view; Note [Parameters as bucket views]).
  bool parameters_as_bucket_view = false;
};

class ZeroRedundancyOptimizer : public Joinable {
 public:
  /// Collective: shards `groups` over the group's ranks and makes the local optimizer with
  /// `make` over this rank's share, every group kept (empty where this rank owns none of it).
  /// Every rank must construct it with the same groups (the partition is computed, not
  /// communicated). ValueError, on every rank, when a parameter is given twice or is not on the
  /// process group's device type, when a rank would own no parameter (fewer parameters than
  /// ranks), or when any rank's local optimizer refuses its share (that rank raises the
  /// optimizer's own error); StateError when no process group is running.
  ZeroRedundancyOptimizer(std::vector<optim::ParamGroup> groups, const OptimizerFactory& make,
                          ZeroRedundancyOptimizerOptions options = {});
  /// One group.
  ZeroRedundancyOptimizer(std::vector<Tensor> params, const OptimizerFactory& make,
                          ZeroRedundancyOptimizerOptions options = {});

  /// Collective: the local optimizer's step, then every rank's parameters broadcast from their
  /// owners (Note [Sharded optimizer state]). Under a Join (join.h) it first notifies the Join,
  /// and a joined rank runs the same step on its shard (Note [A joined rank's shard]). StateError
  /// on every rank, with nothing updated, when a rank's gradient does not fit its parameter or,
  /// with parameters_as_bucket_view, a parameter changed dtype, device or shape since
  /// construction.
  void step();
  /// Clears the gradients of every parameter (not only this rank's): to None or to zeros.
  void zero_grad(bool set_to_none = true);
  /// Adds a group (PyTorch's add_param_group): its parameters are partitioned as the
  /// constructor's would have been with the group there (the earlier groups keep their owners)
  /// and this rank's share joins the local optimizer as a new group (empty when it owns none).
  /// Every rank must add the same group at the same point; nothing is communicated. ValueError
  /// on every rank, with nothing added, for a parameter already here or given twice, one the
  /// group cannot carry, or a group the optimizer refuses (the factory's optimizer checks the
  /// whole group on every rank). With parameters_as_bucket_view the buckets are packed anew.
  void add_param_group(optim::ParamGroup group);

  /// The local optimizer: this rank's parameters and state (attach learning-rate schedulers here).
  optim::Optimizer& optim() { return *local_; }
  const optim::Optimizer& optim() const { return *local_; }
  /// The groups as given, over every rank's parameters.
  const std::vector<optim::ParamGroup>& param_groups() const { return groups_; }
  /// The rank that owns `p` (PyTorch's _param_to_rank); ValueError when `p` is not a parameter here.
  int owner(const Tensor& p) const;

  /// Collective: sends every rank's state to rank `to`, whose state_dict() then returns it all.
  /// ValueError (on every rank) when `to` is not a rank of the group.
  void consolidate_state_dict(int to = 0);
  /// On the rank of the last consolidate_state_dict(), the whole state in the plain optimizer's
  /// layout (Note [Optimizer state dicts]); StateError elsewhere, or before one, or after a
  /// step() since (the consolidated state would be stale).
  const optim::OptimizerStateDict& state_dict() const;
  /// Collective: loads a whole state dict (the plain optimizer's layout) on every rank, each
  /// keeping its shard. Every rank checks its part first; when any rank refuses, every rank
  /// raises (a ValueError naming the ranks) and nothing changes anywhere.
  void load_state_dict(const optim::OptimizerStateDict& dict);

  // Joinable (Note [A joined rank's shard], zero_redundancy_optimizer.cpp).
  ProcessGroup& join_process_group() const override { return *group_; }
  std::string join_name() const override { return "ZeroRedundancyOptimizer"; }
  void join_main_hook(const JoinNotification& n) override;

 private:
  /// step() after the notification: the agreement, the local step, the broadcasts.
  void step_shard();

  std::vector<optim::ParamGroup> groups_;
  OptimizerFactory make_;
  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<optim::Optimizer> local_;
  std::vector<std::vector<Tensor>> owned_;  // per rank: its parameters, in the order it broadcasts them
  std::vector<int64_t> local_numbers_;      // the local optimizer's parameters, in its order: their global numbers
  std::vector<int> owner_by_number_;        // global number -> owner rank
  std::optional<optim::OptimizerStateDict> consolidated_;
  /// parameters_as_bucket_view: one flat tensor per rank, dtype and device, its parameters
  /// views of consecutive slots (Note [Parameters as bucket views]).
  struct ParamBucket {
    int owner = 0;
    Tensor flat;
    std::vector<Tensor> params;
    std::vector<Tensor> slots;  // each parameter's view of flat, in its shape when packed
  };
  std::vector<ParamBucket> param_buckets_;
  void build_param_buckets();
  /// Makes every parameter a view of its slot again (after a set_data or Module::to() that kept
  /// dtype, device and shape); a description of the first parameter that no longer fits, or "".
  std::string restore_param_views();
};

}  // namespace wick::distributed
