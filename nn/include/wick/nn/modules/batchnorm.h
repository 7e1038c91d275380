#pragma once
// BatchNorm1d and BatchNorm2d (torch.nn's), on F::batch_norm.
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// The shared implementation; `kInputDims` lists the accepted input ranks.
/// Tables: parameters weight (ones), bias (zeros) when affine, else None; buffers running_mean
/// (zeros), running_var (ones), num_batches_tracked (int64 0) when track_running_stats, else
/// None. In training mode each forward increments num_batches_tracked and updates the running
/// statistics with `momentum` (or, when momentum is nullopt, the cumulative average
/// 1 / num_batches_tracked), running_var with the unbiased batch variance, as PyTorch.
template <class Derived>
class BatchNormBase : public Cloneable<Derived> {
 public:
  BatchNormBase(int64_t num_features, double eps, std::optional<double> momentum, bool affine,
                bool track_running_stats, TensorOptions options);
  Tensor forward(const Tensor& input);
  /// running_mean <- 0, running_var <- 1, num_batches_tracked <- 0.
  void reset_running_stats();
  /// reset_running_stats(), weight <- 1, bias <- 0.
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return this->param(weight_); }
  const Tensor& bias() const { return this->param(bias_); }
  const Tensor& running_mean() const { return this->buffer(running_mean_); }
  const Tensor& running_var() const { return this->buffer(running_var_); }
  const Tensor& num_batches_tracked() const { return this->buffer(num_batches_tracked_); }
  int64_t num_features() const { return num_features_; }

 protected:
  virtual void check_input(const Tensor& input) const = 0;

 private:
  int64_t num_features_;
  double eps_;
  std::optional<double> momentum_;
  bool affine_, track_running_stats_;
  ParamSlot weight_, bias_;
  BufferSlot running_mean_, running_var_, num_batches_tracked_;
};

/// Input [N, C] or [N, C, L].
class BatchNorm1d : public BatchNormBase<BatchNorm1d> {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, TensorOptions options = {})
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, options) {}

 protected:
  void check_input(const Tensor& input) const override;
};

/// Input [N, C, H, W].
class BatchNorm2d : public BatchNormBase<BatchNorm2d> {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                       bool affine = true, bool track_running_stats = true, TensorOptions options = {})
      : BatchNormBase(num_features, eps, momentum, affine, track_running_stats, options) {}

 protected:
  void check_input(const Tensor& input) const override;
};

extern template class BatchNormBase<BatchNorm1d>;
extern template class BatchNormBase<BatchNorm2d>;

}  // namespace wick::nn
