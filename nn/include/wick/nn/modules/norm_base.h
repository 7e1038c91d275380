#pragma once
// NormBase: the parameters and running statistics BatchNorm and InstanceNorm share (PyTorch's
// _NormBase, LibTorch's NormImplBase).
#include <string>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// `Options` has num_features, eps, momentum, affine and track_running_stats (BatchNormOptions,
/// InstanceNormOptions). Tables: parameters weight (ones), bias (zeros) when affine, else None;
/// buffers running_mean (zeros), running_var (ones), num_batches_tracked (int64 0) when
/// track_running_stats, else None. Derived classes supply forward and check_input.
template <class Derived, class Options>
class NormBase : public Cloneable<Derived> {
 public:
  /// `tensor_options`: the parameters' and buffers' dtype and device (see LinearImpl).
  explicit NormBase(const Options& options, TensorOptions tensor_options = {});
  /// running_mean <- 0, running_var <- 1, num_batches_tracked <- 0.
  void reset_running_stats();
  /// reset_running_stats(), weight <- 1, bias <- 0.
  void reset_parameters();
  /// "3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True", as PyTorch.
  std::string extra_repr() const override;

  const Tensor& weight() const { return this->param(weight_); }
  const Tensor& bias() const { return this->param(bias_); }
  const Tensor& running_mean() const { return this->buffer(running_mean_); }
  const Tensor& running_var() const { return this->buffer(running_var_); }
  const Tensor& num_batches_tracked() const { return this->buffer(num_batches_tracked_); }
  int64_t num_features() const { return options_.num_features(); }
  const Options& options() const { return options_; }

 protected:
  /// Refuses an input of the wrong rank (ValueError naming the layer).
  virtual void check_input(const Tensor& input) const = 0;

 private:
  Options options_;
  ParamSlot weight_, bias_;
  BufferSlot running_mean_, running_var_, num_batches_tracked_;
};

}  // namespace wick::nn
