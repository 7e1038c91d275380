#pragma once
// LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d and LocalResponseNorm (torch.nn's),
// the layers around F::lp_pool1d / 2d, F::max_unpool1d / 2d / 3d and F::local_response_norm
// (wick/nn/functional_lp_unpool.h): the layers built from pooling.
//
// LibTorch declares the first five in torch/nn/modules/pooling.h and LocalResponseNorm in
// normalization.h; wick keeps them in a header of their own. wick/nn/nn.h includes it.
#include <optional>
#include <string>
#include <vector>

#include "wick/nn/arg.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/int3.h"
#include "wick/nn/modules/pooling_options.h"  // LPPool1dOptions, LPPool2dOptions

namespace wick::nn {

/// F::lp_pool1d with fixed geometry; prints as PyTorch's
/// "LPPool1d(norm_type=2, kernel_size=3, stride=3, ceil_mode=False)" (PyTorch prints stride=None
/// when none was given; the options hold kernel_size then).
class LPPool1dImpl : public Cloneable<LPPool1dImpl> {
 public:
  LPPool1dImpl(double norm_type, int64_t kernel_size) : LPPool1dImpl(LPPool1dOptions(norm_type, kernel_size)) {}
  /// ValueError for a norm_type of 0 or not finite, a kernel_size or stride below 1.
  explicit LPPool1dImpl(const LPPool1dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const LPPool1dOptions& options() const { return options_; }

 private:
  LPPool1dOptions options_;
};
WICK_MODULE(LPPool1d);

/// F::lp_pool2d with fixed geometry; prints as LPPool1d does.
class LPPool2dImpl : public Cloneable<LPPool2dImpl> {
 public:
  LPPool2dImpl(double norm_type, Int2 kernel_size) : LPPool2dImpl(LPPool2dOptions(norm_type, kernel_size)) {}
  /// ValueError for a norm_type of 0 or not finite, a kernel_size or stride below 1.
  explicit LPPool2dImpl(const LPPool2dOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const LPPool2dOptions& options() const { return options_; }

 private:
  LPPool2dOptions options_;
};
WICK_MODULE(LPPool2d);

/// MaxUnpool1d/2d/3d's options, as LibTorch: `MaxUnpool2dOptions(2).stride(1).padding(1)`; stride
/// defaults to kernel_size.
template <class Size>
struct MaxUnpoolOptions {
  /* implicit */ MaxUnpoolOptions(Size kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  WICK_ARG(Size, kernel_size);
  WICK_ARG(Size, stride);
  WICK_ARG(Size, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<int64_t>;
using MaxUnpool2dOptions = MaxUnpoolOptions<Int2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<Int3>;

/// F::max_unpool1d with fixed geometry: forward(input, indices[, output_size]) with the indices
/// MaxPool1d::forward_with_indices returned; prints as PyTorch's
/// "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))". forward_value takes (input,
/// indices) or (input, indices, output_size), output_size None or a list of ints.
class MaxUnpool1dImpl : public Cloneable<MaxUnpool1dImpl> {
 public:
  explicit MaxUnpool1dImpl(int64_t kernel_size) : MaxUnpool1dImpl(MaxUnpool1dOptions(kernel_size)) {}
  /// ValueError for a kernel_size or stride below 1 or a negative padding.
  explicit MaxUnpool1dImpl(const MaxUnpool1dOptions& options);
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  Value forward_value(const std::vector<Value>& args) override;
  std::string extra_repr() const override;
  const MaxUnpool1dOptions& options() const { return options_; }

 private:
  MaxUnpool1dOptions options_;
};
WICK_MODULE(MaxUnpool1d);

/// F::max_unpool2d with fixed geometry, as MaxUnpool1d ("MaxUnpool2d(kernel_size=(2, 2), ...)").
class MaxUnpool2dImpl : public Cloneable<MaxUnpool2dImpl> {
 public:
  explicit MaxUnpool2dImpl(Int2 kernel_size) : MaxUnpool2dImpl(MaxUnpool2dOptions(kernel_size)) {}
  explicit MaxUnpool2dImpl(const MaxUnpool2dOptions& options);
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  Value forward_value(const std::vector<Value>& args) override;
  std::string extra_repr() const override;
  const MaxUnpool2dOptions& options() const { return options_; }

 private:
  MaxUnpool2dOptions options_;
};
WICK_MODULE(MaxUnpool2d);

/// F::max_unpool3d with fixed geometry, as MaxUnpool1d.
class MaxUnpool3dImpl : public Cloneable<MaxUnpool3dImpl> {
 public:
  explicit MaxUnpool3dImpl(Int3 kernel_size) : MaxUnpool3dImpl(MaxUnpool3dOptions(kernel_size)) {}
  explicit MaxUnpool3dImpl(const MaxUnpool3dOptions& options);
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
  Value forward_value(const std::vector<Value>& args) override;
  std::string extra_repr() const override;
  const MaxUnpool3dOptions& options() const { return options_; }

 private:
  MaxUnpool3dOptions options_;
};
WICK_MODULE(MaxUnpool3d);

// LocalResponseNormOptions (F::LocalResponseNormFuncOptions too): wick/nn/functional_options_conv_norm.h.

/// F::local_response_norm with fixed options; prints as PyTorch's
/// "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)". No parameters.
class LocalResponseNormImpl : public Cloneable<LocalResponseNormImpl> {
 public:
  /// ValueError for a size below 1.
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;
  const LocalResponseNormOptions& options() const { return options_; }

 private:
  LocalResponseNormOptions options_;
};
WICK_MODULE(LocalResponseNorm);

}  // namespace wick::nn
