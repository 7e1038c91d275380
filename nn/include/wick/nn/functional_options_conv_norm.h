#pragma once
// LibTorch's functional options for the convolutions, the normalizations, softmax, log_softmax
// and gelu, and the F:: overloads that take them (torch/nn/options/{conv,batchnorm,instancenorm,
// normalization,activation}.h and torch/nn/functional/*.h of LibTorch 1.13):
//
//   F::conv2d(x, w, F::Conv2dFuncOptions().stride(2).padding(1).bias(b))
//   F::batch_norm(x, rm, rv, F::BatchNormFuncOptions().weight(w).bias(b).training(true))
//   F::softmax(x, F::SoftmaxFuncOptions(1).dtype(wick::kFloat64))
//
// Each overload forwards its options to the positional function of the same name (wick/nn/
// functional.h, functional_1d.h, functional_3d.h, functional_conv_transpose.h,
// functional_lp_unpool.h), which keeps torch.nn.functional's argument order; so values,
// gradients, devices and errors are that function's (nn/src/functional_options_conv_norm.cpp).
// Included by wick/nn/functional.h at its end; the layers' options (ConvOptions<D>, BatchNormOptions,
// ...) stay in wick/nn/modules/. Where LibTorch's functional options are the layer's
// (GELUFuncOptions, LocalResponseNormFuncOptions) the layer's struct is defined here, so that the
// module headers, which include functional.h, see it too.
//
// Unlike LibTorch, the options overloads have no default argument: F::conv2d(x, w),
// F::batch_norm(x, rm, rv), F::instance_norm(x) and F::gelu(x) are the positional functions'
// calls, which mean the same as LibTorch's calls with default options.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "wick/autograd/functions.h"
#include "wick/core/dtype.h"
#include "wick/nn/arg.h"
#include "wick/nn/functional.h"  // Int2, PaddingMode; it includes this file at its end (both #pragma once)
#include "wick/nn/int3.h"
#include "wick/nn/modules/conv_size.h"  // conv_size_t<D>

namespace wick::nn {

/// GELU's options, as LibTorch: `GELUOptions().approximate("tanh")`; F::GELUFuncOptions too.
struct GELUOptions {
  /// "none" (exact, erf) or "tanh".
  WICK_ARG(std::string, approximate) = "none";
};

/// LocalResponseNorm's options, as LibTorch: `LocalResponseNormOptions(2).alpha(1e-3).k(2)`;
/// F::LocalResponseNormFuncOptions too.
struct LocalResponseNormOptions {
  /* implicit */ LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT
  WICK_ARG(int64_t, size);
  WICK_ARG(double, alpha) = 1e-4;
  WICK_ARG(double, beta) = 0.75;
  WICK_ARG(double, k) = 1.0;
};

namespace functional {

/// F::conv1d / conv2d / conv3d's options, as LibTorch's ConvFuncOptions<D>: bias (undefined: none),
/// stride, padding (sizes, or kSame / kValid as LibTorch's padding_t), dilation, groups. Sizes are
/// conv_size_t<D>; one number sets every axis.
template <size_t D>
struct ConvFuncOptions {
  using size_type = conv_size_t<D>;
  using padding_t = std::variant<size_type, PaddingMode>;

  WICK_ARG(Tensor, bias);
  WICK_ARG(size_type, stride) = 1;
  WICK_ARG(size_type, dilation) = 1;
  WICK_ARG(int64_t, groups) = 1;

 public:
  /// Zero padding on each side (sizes), or kSame / kValid.
  ConvFuncOptions& padding(size_type p) {
    padding_ = p;
    return *this;
  }
  ConvFuncOptions& padding(int64_t p) requires(D > 1) { return padding(size_type(p)); }
  ConvFuncOptions& padding(PaddingMode p) {
    padding_ = p;
    return *this;
  }
  const padding_t& padding() const noexcept { return padding_; }

 private:
  padding_t padding_ = size_type(0);
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

/// F::conv_transpose1d / 2d / 3d's options, as LibTorch's ConvTransposeFuncOptions<D>.
template <size_t D>
struct ConvTransposeFuncOptions {
  using size_type = conv_size_t<D>;
  WICK_ARG(Tensor, bias);
  WICK_ARG(size_type, stride) = 1;
  WICK_ARG(size_type, padding) = 0;
  WICK_ARG(size_type, output_padding) = 0;
  WICK_ARG(int64_t, groups) = 1;
  WICK_ARG(size_type, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

/// F::batch_norm's options, as LibTorch's BatchNormFuncOptions. momentum is optional as
/// LibTorch's, but must be set here (the cumulative average of momentum(std::nullopt) is the
/// BatchNorm layer's, which counts its batches).
struct BatchNormFuncOptions {
  WICK_ARG(Tensor, weight);
  WICK_ARG(Tensor, bias);
  WICK_ARG(bool, training) = false;
  WICK_ARG(std::optional<double>, momentum) = 0.1;
  WICK_ARG(double, eps) = 1e-5;
};

/// F::instance_norm's options, as LibTorch's InstanceNormFuncOptions.
struct InstanceNormFuncOptions {
  WICK_ARG(Tensor, running_mean);
  WICK_ARG(Tensor, running_var);
  WICK_ARG(Tensor, weight);
  WICK_ARG(Tensor, bias);
  WICK_ARG(bool, use_input_stats) = true;
  WICK_ARG(double, momentum) = 0.1;
  WICK_ARG(double, eps) = 1e-5;
};

/// F::layer_norm's options, as LibTorch's LayerNormFuncOptions({2, 2}). The constructor is explicit
/// where LibTorch's is implicit: wick's F::layer_norm(input, normalized_shape) takes the shape
/// itself, with the same meaning, and an implicit one would make that call with a std::vector
/// ambiguous.
struct LayerNormFuncOptions {
  explicit LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  WICK_ARG(std::vector<int64_t>, normalized_shape);
  WICK_ARG(Tensor, weight);
  WICK_ARG(Tensor, bias);
  WICK_ARG(double, eps) = 1e-5;
};

/// F::group_norm's options, as LibTorch's GroupNormFuncOptions(num_groups).
struct GroupNormFuncOptions {
  /* implicit */ GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  WICK_ARG(int64_t, num_groups);
  WICK_ARG(Tensor, weight);
  WICK_ARG(Tensor, bias);
  WICK_ARG(double, eps) = 1e-5;
};

using LocalResponseNormFuncOptions = LocalResponseNormOptions;
using GELUFuncOptions = GELUOptions;

/// F::softmax's options, as LibTorch's SoftmaxFuncOptions(dim).dtype(kFloat64): with dtype the
/// input is cast to it first.
struct SoftmaxFuncOptions {
  /* implicit */ SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
  WICK_ARG(std::optional<DType>, dtype) = std::nullopt;
};

/// F::log_softmax's options, as LibTorch's LogSoftmaxFuncOptions(dim).dtype(kFloat64).
struct LogSoftmaxFuncOptions {
  /* implicit */ LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
  WICK_ARG(std::optional<DType>, dtype) = std::nullopt;
};

/// conv1d(input, weight, bias, stride, padding, dilation, groups) with the options' fields
/// (padding sizes or kSame / kValid); conv1d's errors.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options);
/// conv2d with the options' fields, as conv1d's overload.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options);
/// conv3d with the options' fields, as conv1d's overload.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options);
/// conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation) with
/// the options' fields; conv_transpose1d's errors.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options);
/// conv_transpose2d with the options' fields, as conv_transpose1d's overload.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options);
/// conv_transpose3d with the options' fields, as conv_transpose1d's overload.
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options);
/// batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps), updating
/// the running statistics in place when training, as the positional one. ValueError naming
/// F::batch_norm for an unset momentum (LibTorch reads it unchecked); batch_norm's errors.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options);
/// instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps),
/// updating the running statistics given when use_input_stats; instance_norm's errors.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options);
/// layer_norm(input, normalized_shape, weight, bias, eps); layer_norm's errors.
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
/// group_norm(input, num_groups, weight, bias, eps); group_norm's errors.
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
/// local_response_norm(input, size, alpha, beta, k); local_response_norm's errors.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
/// gelu(input, approximate); gelu's errors.
Tensor gelu(const Tensor& input, const GELUFuncOptions& options);
/// softmax(input.to(dtype), dim), or softmax(input, dim) without dtype, as torch.softmax(input, dim,
/// dtype): the cast is differentiable (the input's gradient comes back in its own dtype). TypeError
/// naming F::softmax for a dtype that is not float32 or float64.
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
/// log_softmax(input.to(dtype), dim), as softmax's overload.
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);

}  // namespace functional
}  // namespace wick::nn
