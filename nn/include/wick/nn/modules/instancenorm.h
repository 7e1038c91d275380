#pragma once
// InstanceNorm1d, InstanceNorm2d and InstanceNorm3d (torch.nn's), on F::instance_norm.
#include "wick/core/tensor_options.h"
#include "wick/nn/arg.h"
#include "wick/nn/modules/norm_base.h"

namespace wick::nn {

/// InstanceNorm's options, as LibTorch: `InstanceNorm2dOptions(32).affine(true)`. Unlike
/// BatchNorm's, affine and track_running_stats default to false, and momentum is a number
/// (PyTorch's instance_norm refuses momentum None).
struct InstanceNormOptions {
  /* implicit */ InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  WICK_ARG(int64_t, num_features);
  WICK_ARG(double, eps) = 1e-5;
  WICK_ARG(double, momentum) = 0.1;
  /// Whether to learn weight and bias.
  WICK_ARG(bool, affine) = false;
  /// Whether to keep running_mean, running_var and num_batches_tracked.
  WICK_ARG(bool, track_running_stats) = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

/// The shared implementation; the parameters and buffers are NormBase's. forward normalizes with
/// each instance's own statistics in training mode or when not tracking running statistics, and
/// then (when tracking, in training) moves the running statistics by the batch mean of the
/// instances' statistics; in eval mode with track_running_stats it normalizes with the running
/// statistics. As PyTorch 1.13, num_batches_tracked is kept but never counted. An unbatched input
/// (one rank less) is normalized as a batch of one. An input whose channels differ from
/// num_features is refused when affine or track_running_stats (ValueError), and normalized as it
/// is otherwise (PyTorch 1.13 takes it; PyTorch 2 warns).
template <class Derived>
class InstanceNormBase : public NormBase<Derived, InstanceNormOptions> {
 public:
  /// `tensor_options`: the parameters' and buffers' dtype and device (see LinearImpl).
  explicit InstanceNormBase(const InstanceNormOptions& options, TensorOptions tensor_options = {})
      : NormBase<Derived, InstanceNormOptions>(options, tensor_options) {}
  Tensor forward(const Tensor& input);

 protected:
  /// The rank of an unbatched input ([C, L]: 2, [C, H, W]: 3, [C, D, H, W]: 4); a batched one has
  /// one more. Another rank is a ValueError with PyTorch's words ("expected 4D or 5D input (got
  /// 3D input)") and the layouts.
  virtual int64_t unbatched_dim() const = 0;
  void check_input(const Tensor& input) const override;
};

/// Input [N, C, L] or unbatched [C, L]. `InstanceNorm1d(n)` or
/// `InstanceNorm1d(InstanceNorm1dOptions(n).affine(true))`.
class InstanceNorm1dImpl : public InstanceNormBase<InstanceNorm1dImpl> {
 public:
  explicit InstanceNorm1dImpl(const InstanceNorm1dOptions& options, TensorOptions tensor_options = {})
      : InstanceNormBase(options, tensor_options) {}

 protected:
  int64_t unbatched_dim() const override { return 2; }
};

/// Input [N, C, H, W] or unbatched [C, H, W]. `InstanceNorm2d(n)` or
/// `InstanceNorm2d(InstanceNorm2dOptions(n).track_running_stats(true))`.
class InstanceNorm2dImpl : public InstanceNormBase<InstanceNorm2dImpl> {
 public:
  explicit InstanceNorm2dImpl(const InstanceNorm2dOptions& options, TensorOptions tensor_options = {})
      : InstanceNormBase(options, tensor_options) {}

 protected:
  int64_t unbatched_dim() const override { return 3; }
};

/// Input [N, C, D, H, W] or unbatched [C, D, H, W]. `InstanceNorm3d(n)` or
/// `InstanceNorm3d(InstanceNorm3dOptions(n).affine(true))`.
class InstanceNorm3dImpl : public InstanceNormBase<InstanceNorm3dImpl> {
 public:
  explicit InstanceNorm3dImpl(const InstanceNorm3dOptions& options, TensorOptions tensor_options = {})
      : InstanceNormBase(options, tensor_options) {}

 protected:
  int64_t unbatched_dim() const override { return 4; }
};

WICK_MODULE(InstanceNorm1d);
WICK_MODULE(InstanceNorm2d);
WICK_MODULE(InstanceNorm3d);

extern template class NormBase<InstanceNorm1dImpl, InstanceNormOptions>;
extern template class NormBase<InstanceNorm2dImpl, InstanceNormOptions>;
extern template class NormBase<InstanceNorm3dImpl, InstanceNormOptions>;
extern template class InstanceNormBase<InstanceNorm1dImpl>;
extern template class InstanceNormBase<InstanceNorm2dImpl>;
extern template class InstanceNormBase<InstanceNorm3dImpl>;

}  // namespace wick::nn
