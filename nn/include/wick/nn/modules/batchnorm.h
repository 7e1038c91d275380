#pragma once
// BatchNorm1d, BatchNorm2d and BatchNorm3d (torch.nn's), on F::batch_norm.
#include <memory>
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/modules/batch_norm_sync.h"
#include "wick/nn/modules/norm_base.h"

namespace wick::nn {

/// BatchNorm's options, as LibTorch: `BatchNorm2dOptions(32).eps(1e-3).momentum(0.01)`.
/// momentum nullopt: the cumulative average.
struct BatchNormOptions {
  /* implicit */ BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  WICK_ARG(int64_t, num_features);
  WICK_ARG(double, eps) = 1e-5;
  WICK_ARG(std::optional<double>, momentum) = 0.1;
  /// Whether to learn weight and bias.
  WICK_ARG(bool, affine) = true;
  /// Whether to keep running_mean, running_var and num_batches_tracked.
  WICK_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

/// The shared implementation; the parameters and buffers are NormBase's. In training mode each
/// forward increments num_batches_tracked and updates the running statistics with `momentum`
/// (or, when momentum is nullopt, the cumulative average 1 / num_batches_tracked), running_var
/// with the unbiased batch variance, as PyTorch. An empty batch is counted but leaves the running
/// statistics alone (F::batch_norm), as PyTorch 1.13.
template <class Derived>
class BatchNormBase : public NormBase<Derived, BatchNormOptions> {
 public:
  /// `tensor_options`: the parameters' and buffers' dtype and device (see LinearImpl).
  explicit BatchNormBase(const BatchNormOptions& options, TensorOptions tensor_options = {})
      : NormBase<Derived, BatchNormOptions>(options, tensor_options) {}
  Tensor forward(const Tensor& input);

  /// Installs (or, with null, removes) the synchronisation of Note [Synchronised batch
  /// statistics]: training-mode forwards then normalize over every process's batch. Copies of
  /// the module (clone, DataParallel's replicas) share it. Use
  /// distributed::convert_sync_batchnorm rather than calling this directly.
  void set_sync(std::shared_ptr<BatchNormSync> sync) { sync_ = std::move(sync); }
  /// The installed synchronisation, or null.
  const std::shared_ptr<BatchNormSync>& sync() const { return sync_; }

 private:
  std::shared_ptr<BatchNormSync> sync_;
};

/// Input [N, C] or [N, C, L]. `BatchNorm1d(n)` or `BatchNorm1d(BatchNorm1dOptions(n).eps(..))`.
class BatchNorm1dImpl : public BatchNormBase<BatchNorm1dImpl> {
 public:
  explicit BatchNorm1dImpl(const BatchNorm1dOptions& options, TensorOptions tensor_options = {})
      : BatchNormBase(options, tensor_options) {}

 protected:
  void check_input(const Tensor& input) const override;
};

/// Input [N, C, H, W]. `BatchNorm2d(n)` or `BatchNorm2d(BatchNorm2dOptions(n).eps(..))`.
class BatchNorm2dImpl : public BatchNormBase<BatchNorm2dImpl> {
 public:
  explicit BatchNorm2dImpl(const BatchNorm2dOptions& options, TensorOptions tensor_options = {})
      : BatchNormBase(options, tensor_options) {}

 protected:
  void check_input(const Tensor& input) const override;
};

/// Input [N, C, D, H, W]. `BatchNorm3d(n)` or `BatchNorm3d(BatchNorm3dOptions(n).momentum(std::nullopt))`.
/// Another rank is a ValueError with PyTorch's words, "expected 5D input (got 4D input)".
class BatchNorm3dImpl : public BatchNormBase<BatchNorm3dImpl> {
 public:
  explicit BatchNorm3dImpl(const BatchNorm3dOptions& options, TensorOptions tensor_options = {})
      : BatchNormBase(options, tensor_options) {}

 protected:
  void check_input(const Tensor& input) const override;
};

WICK_MODULE(BatchNorm1d);
WICK_MODULE(BatchNorm2d);
WICK_MODULE(BatchNorm3d);

extern template class NormBase<BatchNorm1dImpl, BatchNormOptions>;
extern template class NormBase<BatchNorm2dImpl, BatchNormOptions>;
extern template class NormBase<BatchNorm3dImpl, BatchNormOptions>;
extern template class BatchNormBase<BatchNorm1dImpl>;
extern template class BatchNormBase<BatchNorm2dImpl>;
extern template class BatchNormBase<BatchNorm3dImpl>;

}  // namespace wick::nn
