#pragma once
// Synchronised BatchNorm: BatchNorm1d/2d/3d layers whose training-mode statistics cover every
// rank's batch (PyTorch's SyncBatchNorm and SyncBatchNorm.convert_sync_batchnorm). The layers
// keep their type; a BatchNormSync is installed in them (Note [Synchronised batch statistics],
// wick/nn/modules/batch_norm_sync.h).
//
// Note [SyncBatchNorm's collectives]
// One training-mode forward makes one all_gather of a float64 row per rank: [mean (C), sum of
// squared deviations from that mean (C), count, refused]. Every rank merges the rows in rank
// order (Chan's parallel variance), so the statistics are bitwise the same everywhere, and a
// rank whose input was refused sends refused = 1 and zeros, so that every rank raises instead of
// waiting for it. The rows are made from differentiable ops and the all_gather is itself
// differentiable (its backward is one all_reduce of the gathered rows' gradient, each rank
// keeping its own row), so backward makes exactly one all_reduce per layer, in the engine's
// node order, and the input's gradient carries every rank's term, as PyTorch's
// batch_norm_backward_reduce + all_reduce do. A rank with an empty batch takes part with count 0
// (its rows still have history, so its backward makes the same all_reduce). Weight and bias
// gradients stay local: DistributedDataParallel averages them like any parameter's.
// Mirrored in docs/distributed.md.
#include <memory>
#include <string>

#include "wick/distributed/process_group.h"
#include "wick/nn/module.h"
#include "wick/nn/modules/batch_norm_sync.h"

namespace wick::distributed {

/// BatchNormSync over a process group.
class ProcessGroupBatchNormSync final : public nn::BatchNormSync {
 public:
  /// `group`: null means the default group, looked up at each forward (StateError then when
  /// none is running), as PyTorch's process_group=None.
  explicit ProcessGroupBatchNormSync(std::shared_ptr<ProcessGroup> group = nullptr) : group_(std::move(group)) {}
  int world_size() const override;
  Tensor forward(const Tensor& input, const nn::BatchNormSyncCall& call) override;
  std::string describe() const override;
  /// The group given at construction (null: the default group).
  const std::shared_ptr<ProcessGroup>& group() const { return group_; }

 private:
  std::shared_ptr<ProcessGroup> resolve() const;
  std::shared_ptr<ProcessGroup> group_;
};

/// Makes every BatchNorm1d, BatchNorm2d and BatchNorm3d in `module` (itself included) compute its
/// training-mode statistics over every rank of `group` (null: the default group at each
/// forward), PyTorch's SyncBatchNorm.convert_sync_batchnorm. The layers keep their type,
/// parameters, buffers and state_dict keys (PyTorch builds SyncBatchNorm modules that share
/// them); eval mode and a world of one process behave as plain BatchNorm. Returns `module`.
/// Every rank must convert the same layers: each synchronised training forward is a collective.
/// Not for DataParallel replicas (they raise): synchronise processes with
/// DistributedDataParallel.
std::shared_ptr<nn::Module> convert_sync_batchnorm(std::shared_ptr<nn::Module> module,
                                                   std::shared_ptr<ProcessGroup> group = nullptr);

/// True when `m` is a BatchNorm1d, BatchNorm2d or BatchNorm3d with a synchronisation installed.
bool synchronises_batch_norm(const nn::Module& m);

/// all_gather as a differentiable op: returns [size(), *input.shape], row r being rank r's
/// `input`. Its backward all-reduces (sums) the gradient of the whole result and keeps this
/// rank's row, itself differentiably. Collective, in forward and (when input requires grad) in
/// backward.
Tensor all_gather_rows(const Tensor& input, const std::shared_ptr<ProcessGroup>& group);

}  // namespace wick::distributed
