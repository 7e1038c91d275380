#pragma once
// BatchNormSync: how a BatchNorm layer normalizes with the statistics of a batch that is spread
// over several processes (PyTorch's SyncBatchNorm). nn defines the interface; the distributed
// layer implements it over a process group (wick/distributed/sync_batch_norm.h) and installs it
// with convert_sync_batchnorm.
//
// Note [Synchronised batch statistics]
// PyTorch replaces each BatchNorm*d by a SyncBatchNorm module. wick's modules are reached
// through typed slots (ChildSlot<BatchNorm2dImpl>), so a child cannot change its type; instead
// BatchNorm1d/2d/3d carry an optional BatchNormSync (BatchNormBase::set_sync) and keep their type,
// parameters, buffers, state_dict keys and print. While one is installed, a training-mode
// forward whose sync reports a world size above 1 calls BatchNormSync::forward instead of
// F::batch_norm (PyTorch's need_sync: training and more than one process); eval mode, and a
// world of one process, are plain BatchNorm. The statistics then cover every process's rows, so
// DistributedDataParallel with synchronised BatchNorm trains as one process would on the whole
// batch. Mirrored in docs/distributed.md.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "wick/core/tensor.h"

namespace wick::nn {

/// What BatchNormBase hands to BatchNormSync::forward for one training-mode forward.
struct BatchNormSyncCall {
  /// The layer's name ("BatchNorm2d"), for messages.
  std::string layer;
  /// The layer's input check (rank of the input); the sync runs it so that a refusal on one
  /// process reaches every process instead of leaving them waiting.
  std::function<void(const Tensor&)> check_input;
  int64_t num_features = 0;
  /// Undefined when the layer keeps no running statistics.
  Tensor running_mean, running_var;
  /// Undefined when the layer is not affine.
  Tensor weight, bias;
  /// The running statistics' update factor (momentum, or 1 / batches counted).
  double momentum = 0.1;
  double eps = 1e-5;
};

/// Normalization over the union of several processes' batches.
class BatchNormSync {
 public:
  virtual ~BatchNormSync() = default;
  /// How many processes' batches one forward normalizes together; 1 or less means plain
  /// BatchNorm. May throw (no process group running).
  virtual int world_size() const = 0;
  /// Normalizes `input` ([N, C, *]) with the mean and biased variance of every process's input,
  /// per channel, then * weight + bias, and updates the running statistics (running_var with the
  /// unbiased variance over all processes' values), as F::batch_norm in training mode would over
  /// the concatenated batch. Collective: every process calls it at the same point. A refusal on
  /// any process (its input check, a dtype or shape mismatch) throws a wick::Error on every
  /// process, with no state changed.
  virtual Tensor forward(const Tensor& input, const BatchNormSyncCall& call) = 0;
  /// A short description for messages ("mpi, 2 processes").
  virtual std::string describe() const = 0;
};

}  // namespace wick::nn
